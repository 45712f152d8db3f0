#!/bin/sh
# MPA connection between two network namespaces over a veth pair:
#   ns A: veth 198.51.100.1/24 runs `cm_peer listen`, ns B: 198.51.100.2/24 runs `cm_peer connect`.
# Both ends are created inside the namespaces (ip -n), nothing is added to the main namespace.
# Needs root (CI has it). If namespaces cannot be created the test FAILS with a clear message.
# Usage: netns_cm.sh /path/to/cm_peer
set -u
PEER=${1:?usage: netns_cm.sh /path/to/cm_peer}
NSA=rncm-a-$$
NSB=rncm-b-$$
PORT=7174

cleanup() {
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "netns_cm: FAIL: $*" >&2
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

run_pair() { # extra cm_peer options
	port=$PORT
	PORT=$((PORT + 1))
	timeout 25 ip netns exec "$NSA" "$PEER" listen 198.51.100.1 "$port" "$@" &
	spid=$!
	timeout 25 ip netns exec "$NSB" "$PEER" connect 198.51.100.1 "$port" "$@"
	crc=$?
	wait "$spid"
	src=$?
	[ "$crc" -eq 0 ] || fail "connector exited $crc (options: $*)"
	[ "$src" -eq 0 ] || fail "listener exited $src (options: $*)"
}

run_pair --count 8
run_pair --count 16 --crc
echo "netns_cm: OK"
