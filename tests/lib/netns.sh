# Two network namespaces joined by a veth pair, for the two-process tests (sourced after
# tests/lib/common.sh; POSIX sh):
#   netns_setup PREFIX
#     creates NETNS_A and NETNS_B (PREFIX-a-ID, PREFIX-b-ID, ID unique to this run), a veth
#     pair created inside them with `ip -n` (veth-a in A, veth-b in B), NETNS_ADDR_A
#     198.51.100.1/24 on veth-a and NETNS_ADDR_B 198.51.100.2/24 on veth-b, lo and both ends up.
# Nothing is added to or changed in the main namespace. Both namespaces are deleted on every
# exit of the script. Needs root / CAP_SYS_ADMIN: without the permission to create namespaces
# the test FAILS with a clear message; it never passes or skips.
NETNS_A=
NETNS_B=
NETNS_ADDR_A=198.51.100.1
NETNS_ADDR_B=198.51.100.2

netns_cleanup() {
	[ -n "$NETNS_A" ] && ip netns del "$NETNS_A" 2>/dev/null
	[ -n "$NETNS_B" ] && ip netns del "$NETNS_B" 2>/dev/null
	NETNS_A=
	NETNS_B=
}
EXIT_HOOKS="$EXIT_HOOKS netns_cleanup"

netns_setup() {
	need_cmd ip iproute2
	need_cmd timeout coreutils
	# PID + random suffix: unique among concurrent runs, and a namespace left behind by a
	# killed run (SIGKILL skips the cleanup) does not collide with a later run's PID.
	id=$$-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
	if ! err=$(ip netns add "$1-a-$id" 2>&1); then
		fail "cannot create a network namespace (ip netns add: $err); this test needs root / CAP_SYS_ADMIN"
	fi
	NETNS_A=$1-a-$id
	ip netns add "$1-b-$id" || fail "ip netns add $1-b-$id"
	NETNS_B=$1-b-$id
	ip -n "$NETNS_A" link add veth-a type veth peer name veth-b netns "$NETNS_B" ||
		fail "veth pair"
	ip -n "$NETNS_A" addr add "$NETNS_ADDR_A/24" dev veth-a || fail "address in $NETNS_A"
	ip -n "$NETNS_B" addr add "$NETNS_ADDR_B/24" dev veth-b || fail "address in $NETNS_B"
	for ns in "$NETNS_A" "$NETNS_B"; do
		ip -n "$ns" link set lo up || fail "lo up in $ns"
	done
	ip -n "$NETNS_A" link set veth-a up || fail "veth-a up"
	ip -n "$NETNS_B" link set veth-b up || fail "veth-b up"
}
