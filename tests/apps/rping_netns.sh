#!/bin/sh
# softrnic-rping between two network namespaces over a veth pair, event-driven and busy-poll:
#   ns A: veth 198.51.100.1/24 runs the server, ns B: 198.51.100.2/24 runs the client.
# Both ends are created inside the namespaces (ip -n); nothing is added to the main namespace.
# Needs root (CI has it). Without permission the test FAILS with a clear message.
# Usage: rping_netns.sh /path/to/softrnic-rping
set -u
TEST_NAME=apps_rping_netns
. "$(dirname "$0")/lib.sh"
RPING=${1:?usage: rping_netns.sh /path/to/softrnic-rping}
NSA=srping-a-$$
NSB=srping-b-$$
PORT=7174

cleanup() {
	kill_server
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

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

run_pair() { # extra options for both sides
	timeout "$PROG_TIMEOUT" ip netns exec "$NSA" "$RPING" -s -a 198.51.100.1 -p "$PORT" -V "$@" &
	SERVER_PID=$!
	wait_listen "$PORT" "$NSA" || fail "server is not listening in $NSA"
	out=$(timeout "$PROG_TIMEOUT" ip netns exec "$NSB" "$RPING" -c -a 198.51.100.1 -p "$PORT" \
		-C 100 -V -S 1000 "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	[ "$rc" -eq 0 ] || fail "client exited with status $rc (options: $*)"
	wait_server "$*"
	PORT=$((PORT + 1))
}

run_pair
run_pair -P
echo "$TEST_NAME: OK"
