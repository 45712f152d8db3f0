#!/bin/sh
# rping-like exchange through librdmacm between two processes in two network namespaces:
#   ns A: veth 198.51.100.1/24 runs `rping_peer server`, ns B: 198.51.100.2/24 runs the client.
# Both veth ends are created inside the namespaces (ip -n); nothing is added to or changed in
# the main namespace. Cleaned up on every exit. Needs root (CI has it): without the permission
# to create namespaces the test FAILS with a clear message, it never passes or skips.
# Usage: netns_rping.sh /path/to/rping_peer
set -u
PEER=${1:?usage: netns_rping.sh /path/to/rping_peer}
NSA=rcm-a-$$
NSB=rcm-b-$$
PORT=7174 # rping's port

cleanup() {
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "netns_rping: FAIL: $*" >&2
	exit 1
}

command -v ip >/dev/null 2>&1 || fail "the 'ip' command (iproute2) is not installed"
command -v timeout >/dev/null 2>&1 || fail "the 'timeout' command is not installed"
if ! err=$(ip netns add "$NSA" 2>&1); then
	fail "cannot create a network namespace (ip netns add: $err); this test needs root / CAP_SYS_ADMIN"
fi
ip netns add "$NSB" || fail "ip netns add $NSB"
ip -n "$NSA" link add veth-a type veth peer name veth-b netns "$NSB" || fail "veth pair"
ip -n "$NSA" addr add 198.51.100.1/24 dev veth-a || fail "address in $NSA"
ip -n "$NSB" addr add 198.51.100.2/24 dev veth-b || fail "address in $NSB"
for ns in "$NSA" "$NSB"; do
	ip -n "$ns" link set lo up || fail "lo up in $ns"
done
ip -n "$NSA" link set veth-a up || fail "veth-a up"
ip -n "$NSB" link set veth-b up || fail "veth-b up"

timeout 30 ip netns exec "$NSA" "$PEER" server 198.51.100.1 "$PORT" 10 &
spid=$!
timeout 30 ip netns exec "$NSB" "$PEER" client 198.51.100.1 "$PORT" 10
crc=$?
wait "$spid"
src=$?
[ "$crc" -eq 0 ] || fail "client exited $crc"
[ "$src" -eq 0 ] || fail "server exited $src"
echo "netns_rping: OK"
