# Helpers of the DPDK transport tests (sourced after tests/lib/common.sh; POSIX sh).
#   dpdk_tmpdir               DPDK_DIR: a private temp dir (memif socket, logs), removed on exit
#   dpdk_eal ROLE VDEV        prints SOFTRNIC_DPDK_EAL=... for one process: --no-huge, its own
#                             main lcore (0 for ROLE server, 1 for client when there are two
#                             cores; dpdk_port.c restores the thread's CPU set after EAL
#                             start, so nothing is pinned), the vdev
#   memif_vdev ROLE           the net_memif vdev of this test's link (socket in DPDK_DIR)
#   memif_file_vdev ROLE      the same with the socket a file (socket-abstract=no): memif's
#                             default abstract socket belongs to one network namespace, a
#                             file in DPDK_DIR is seen from every one. The file outlives its
#                             server and refuses the next: remove it before starting another
#   dpdk_skip_if_no_eal FILE  exit 77 when FILE (a program's stderr) says EAL itself cannot
#                             start (any other port error is a failure)
#   dpdk_netns TAG            DPDK_NS_A / DPDK_NS_B: two namespaces (srn-TAGa-ID, srn-TAGb-ID)
#                             joined by a veth pair (veth-a in A, veth-b in B), lo and both
#                             ends up, IPv6 off, no kernel address (the DPDK ports on the veth
#                             ends own 198.51.100.x); exit 77 when namespaces cannot be made
#                             (not root). On every exit the server is killed first, then the
#                             namespaces are removed.
#   dpdk_netns_kernel_view    after dpdk_netns, for programs that find their RNIC's address
#                             among the kernel's interfaces and talk out of band over kernel
#                             TCP (libfabric's verbs provider, Open MPI's runtime): the kernel
#                             gets 198.51.100.1/32 on veth-a and .2/32 on veth-b (the DPDK
#                             ports' addresses, which it must never answer for: rp_filter
#                             drops what arrives there, as no route leads back, and
#                             arp_ignore=8 keeps it from answering ARP), and a second veth
#                             pair, ctl-a 198.51.100.129/25 and ctl-b .130/25, for the
#                             out-of-band traffic (DPDK_CTL_A / DPDK_CTL_B); its two halves
#                             are dpdk_kernel_addr NS IFACE IP and dpdk_netns_ctl
#   dpdk_kernel_peer IP       after dpdk_netns, B's end as the kernel's own TCP/IP: IP/24 on
#                             veth-b and whole TCP checksums on what it sends (a DPDK port on
#                             af_packet sees veth's segments before offload fills them in)
# Run a program over DPDK with:
#   env SOFTRNIC_TRANSPORT=dpdk "$(dpdk_eal server "$(memif_vdev server)")" \
#       SOFTRNIC_DPDK_IP=198.51.100.1/24 PROGRAM ...
DPDK_DIR=
dpdk_cleanup() {
	[ -n "$DPDK_DIR" ] && rm -rf "$DPDK_DIR"
	DPDK_DIR=
}
EXIT_HOOKS="$EXIT_HOOKS dpdk_cleanup"

dpdk_tmpdir() {
	DPDK_DIR=$(mktemp -d /tmp/srn-dpdk-XXXXXX) || fail "mktemp"
	# every DPDK listener of the processes started from here logs its port (dpdk_conn.c)
	SOFTRNIC_DPDK_LISTEN_LOG=$DPDK_DIR/listen.log
	export SOFTRNIC_DPDK_LISTEN_LOG
}

dpdk_eal() { # ROLE VDEV
	n=$(nproc 2>/dev/null || echo 1)
	lc=0
	[ "$1" = client ] && [ "$n" -gt 1 ] && lc=1
	echo "SOFTRNIC_DPDK_EAL=--no-huge -m 256 -l $lc --vdev=$2"
}

memif_vdev() { # ROLE
	echo "net_memif0,role=$1,socket=$DPDK_DIR/memif.sock"
}

memif_file_vdev() { # ROLE
	echo "$(memif_vdev "$1"),socket-abstract=no"
}

dpdk_skip_if_no_eal() { # FILE
	# Only EAL itself failing is a skip: any other port error (memory, a vdev) is a failure.
	if grep -Eq 'DPDK EAL could not start|DPDK needs hugepages|built without DPDK' "$1" \
		2>/dev/null; then
		cat "$1" >&2
		echo "${TEST_NAME:-test}: SKIP: DPDK cannot start here" >&2
		exit 77
	fi
}

# dpdk_head_start [SECONDS]: wait until the just-started server listens. There is no kernel
# socket to wait for (ss), and a client whose SYN reaches a port that is up but not yet
# listening gets a RST (REJECTED), as from a kernel: the server's listeners are logged to
# SOFTRNIC_DPDK_LISTEN_LOG (dpdk_tmpdir), and the wait ends at the first line, or after
# SECONDS (DPDK_HEAD_START, 3: opening a port can take over a second under --no-huge). The
# log is emptied for the next server.
dpdk_head_start() {
	hs_n=0
	while [ ! -s "${SOFTRNIC_DPDK_LISTEN_LOG:-}" ] &&
		[ "$hs_n" -lt $((${1:-${DPDK_HEAD_START:-3}} * 20)) ]; do
		sleep 0.05
		hs_n=$((hs_n + 1))
	done
	if [ -n "${SOFTRNIC_DPDK_LISTEN_LOG:-}" ]; then : >"$SOFTRNIC_DPDK_LISTEN_LOG"; fi
}

DPDK_NS_A=
DPDK_NS_B=
DPDK_CTL_A=198.51.100.129
DPDK_CTL_B=198.51.100.130
dpdk_ns_cleanup() {
	[ -n "$DPDK_NS_A" ] && ip netns del "$DPDK_NS_A" 2>/dev/null
	[ -n "$DPDK_NS_B" ] && ip netns del "$DPDK_NS_B" 2>/dev/null
	DPDK_NS_A=
	DPDK_NS_B=
}

dpdk_netns() { # TAG
	# the server first (it holds a veth end), then the namespaces, then the rest
	EXIT_HOOKS="kill_server dpdk_ns_cleanup $EXIT_HOOKS"
	id=$$-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
	if ! ip netns add "srn-$1a-$id" 2>/dev/null; then
		echo "${TEST_NAME:-test}: SKIP: cannot create network namespaces (needs root)" >&2
		exit 77
	fi
	DPDK_NS_A=srn-$1a-$id
	ip netns add "srn-$1b-$id" || fail "ip netns add"
	DPDK_NS_B=srn-$1b-$id
	ip -n "$DPDK_NS_A" link add veth-a type veth peer name veth-b netns "$DPDK_NS_B" ||
		fail "veth pair"
	for ns in "$DPDK_NS_A" "$DPDK_NS_B"; do
		ip -n "$ns" link set lo up || fail "lo up in $ns"
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
	done
	ip -n "$DPDK_NS_A" link set veth-a up || fail "veth-a up"
	ip -n "$DPDK_NS_B" link set veth-b up || fail "veth-b up"
}

# dpdk_kernel_addr NS IFACE IP: the kernel lists IP/32 on IFACE (a DPDK port's address on
# the interface the port uses) and never answers for it
dpdk_kernel_addr() {
	ip netns exec "$1" sysctl -qw net.ipv4.conf.all.rp_filter=1 \
		"net.ipv4.conf.$2.rp_filter=1" "net.ipv4.conf.$2.arp_ignore=8" || fail "sysctl in $1"
	ip -n "$1" addr add "$3/32" dev "$2" || fail "address on $2 in $1"
}

dpdk_kernel_peer() {
	ip -n "$DPDK_NS_B" addr add "$1/24" dev veth-b || fail "address in $DPDK_NS_B"
	need_cmd ethtool ethtool
	ip netns exec "$DPDK_NS_B" ethtool -K veth-b tx off >/dev/null ||
		fail "ethtool -K veth-b tx off"
}

# dpdk_netns_ctl: the second veth pair, ctl-a DPDK_CTL_A/25 and ctl-b DPDK_CTL_B/25
dpdk_netns_ctl() {
	ip -n "$DPDK_NS_A" link add ctl-a type veth peer name ctl-b netns "$DPDK_NS_B" ||
		fail "ctl veth pair"
	ip -n "$DPDK_NS_A" addr add "$DPDK_CTL_A/25" dev ctl-a || fail "address on ctl-a"
	ip -n "$DPDK_NS_B" addr add "$DPDK_CTL_B/25" dev ctl-b || fail "address on ctl-b"
	ip -n "$DPDK_NS_A" link set ctl-a up || fail "ctl-a up"
	ip -n "$DPDK_NS_B" link set ctl-b up || fail "ctl-b up"
}

dpdk_netns_kernel_view() {
	dpdk_kernel_addr "$DPDK_NS_A" veth-a 198.51.100.1
	dpdk_kernel_addr "$DPDK_NS_B" veth-b 198.51.100.2
	dpdk_netns_ctl
}
