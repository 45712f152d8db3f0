# Helpers of the VIPL-over-DPDK tests (sourced after tests/lib/common.sh and
# tests/dpdk/dpdk_lib.sh; POSIX sh).
#   vd_skip_if_no_dpdk FILE  exit 77 when FILE (a program's stderr) says that DPDK itself cannot
#                            run here (EAL start, or softrnic built without DPDK). Any other
#                            port error (memory, a vdev that does not probe) is a failure.
#   vd_netns_setup TAG       NS_A / NS_B: two namespaces joined by a veth pair (veth-a in
#                            NS_A, veth-b in NS_B), both up, no kernel address on them (the
#                            DPDK ports own 198.51.100.x there); exit 77 when namespaces
#                            cannot be made (not root). Removed on every exit.

vd_skip_if_no_dpdk() { # FILE
	if grep -Eq 'DPDK EAL could not start|built without DPDK' "$1" 2>/dev/null; then
		cat "$1" >&2
		echo "${TEST_NAME:-test}: SKIP: DPDK cannot start here" >&2
		exit 77
	fi
}

NS_A=
NS_B=
vd_ns_cleanup() {
	[ -n "$NS_A" ] && ip netns del "$NS_A" 2>/dev/null
	[ -n "$NS_B" ] && ip netns del "$NS_B" 2>/dev/null
	NS_A=
	NS_B=
}

vd_netns_setup() { # TAG
	EXIT_HOOKS="kill_server vd_ns_cleanup $EXIT_HOOKS"
	id=$$-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
	if ! ip netns add "srn-$1a-$id" 2>/dev/null; then
		echo "${TEST_NAME:-test}: SKIP: cannot create network namespaces (needs root)" >&2
		exit 77
	fi
	NS_A=srn-$1a-$id
	ip netns add "srn-$1b-$id" || fail "ip netns add"
	NS_B=srn-$1b-$id
	ip -n "$NS_A" link add veth-a type veth peer name veth-b netns "$NS_B" || fail "veth pair"
	for ns in "$NS_A" "$NS_B"; do
		ip -n "$ns" link set lo up || fail "lo up in $ns"
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
	done
	ip -n "$NS_A" link set veth-a up || fail "veth-a up"
	ip -n "$NS_B" link set veth-b up || fail "veth-b up"
}
