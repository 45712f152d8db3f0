#!/bin/sh
# rping-like exchange through librdmacm between two processes in two network namespaces:
#   ns A: veth 198.51.100.1/24 runs `rping_peer server`, ns B: 198.51.100.2/24 runs the client.
# Both veth ends are created inside the namespaces (ip -n, tests/lib/netns.sh); nothing is
# added to or changed in the main namespace. Cleaned up on every exit. Needs root (CI has it):
# without the permission to create namespaces the test FAILS with a clear message, it never
# passes or skips.
# Usage: netns_rping.sh /path/to/rping_peer
set -u
TEST_NAME=netns_rping
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/netns.sh"
PEER=${1:?usage: netns_rping.sh /path/to/rping_peer}
PORT=7174 # rping's port

netns_setup rcm

start_server timeout 30 ip netns exec "$NETNS_A" "$PEER" server "$NETNS_ADDR_A" "$PORT" 10
timeout 30 ip netns exec "$NETNS_B" "$PEER" client "$NETNS_ADDR_A" "$PORT" 10 ||
	fail "client exited $?"
wait_server "rping_peer server"
echo "$TEST_NAME: OK"
