#!/bin/sh
# softrnic-rping between two network namespaces over a veth pair, event-driven and busy-poll:
#   ns A: veth 198.51.100.1/24 runs the server, ns B: 198.51.100.2/24 runs the client.
# Both ends are created inside the namespaces (ip -n, tests/lib/netns.sh); nothing is added
# to the main namespace. Needs root (CI has it). Without permission the test FAILS with a
# clear message.
# Usage: rping_netns.sh /path/to/softrnic-rping
set -u
TEST_NAME=apps_rping_netns
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/netns.sh"
RPING=${1:?usage: rping_netns.sh /path/to/softrnic-rping}
PORT=7174

netns_setup srping

run_pair() { # extra options for both sides
	start_server timeout "$PROG_TIMEOUT" ip netns exec "$NETNS_A" \
		"$RPING" -s -a "$NETNS_ADDR_A" -p "$PORT" -V "$@"
	wait_listen "$PORT" "$NETNS_A" || fail "server is not listening in $NETNS_A"
	out=$(timeout "$PROG_TIMEOUT" ip netns exec "$NETNS_B" "$RPING" -c -a "$NETNS_ADDR_A" \
		-p "$PORT" -C 100 -V -S 1000 "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	[ "$rc" -eq 0 ] || fail "client exited with status $rc (options: $*)"
	wait_server "$*"
	PORT=$((PORT + 1))
}

run_pair
run_pair -P
echo "$TEST_NAME: OK"
