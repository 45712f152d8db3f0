#!/bin/sh
# MPA connection between two network namespaces over a veth pair:
#   ns A: veth 198.51.100.1/24 runs `cm_peer listen`, ns B: 198.51.100.2/24 runs `cm_peer connect`.
# Both ends are created inside the namespaces (ip -n, tests/lib/netns.sh), nothing is added to
# the main namespace. Needs root (CI has it). If namespaces cannot be created the test FAILS
# with a clear message.
# Usage: netns_cm.sh /path/to/cm_peer
set -u
TEST_NAME=netns_cm
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/netns.sh"
PEER=${1:?usage: netns_cm.sh /path/to/cm_peer}
PORT=7174

netns_setup rncm

run_pair() { # extra cm_peer options
	port=$PORT
	PORT=$((PORT + 1))
	start_server timeout 25 ip netns exec "$NETNS_A" "$PEER" listen "$NETNS_ADDR_A" "$port" "$@"
	timeout 25 ip netns exec "$NETNS_B" "$PEER" connect "$NETNS_ADDR_A" "$port" "$@" ||
		fail "connector exited $? (options: $*)"
	wait_server "listener, options: $*"
}

run_pair --count 8
run_pair --count 16 --crc
echo "$TEST_NAME: OK"
