#!/bin/sh
# softrnic-conform across two network namespaces joined by a veth pair:
#   ns A: veth-a 198.51.100.1/24 runs the server, ns B: veth-b 198.51.100.2/24 the client.
# The namespaces and both veth ends are created by tests/lib/netns.sh; nothing is added to
# or changed in the main namespace, and they are removed on every exit. Needs root /
# CAP_SYS_ADMIN (CI has it): without the permission the test FAILS with a clear message.
# Usage: conform_netns.sh /path/to/softrnic-conform
set -u
TEST_NAME=conform_netns
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/netns.sh"
PROG=${1:?usage: conform_netns.sh /path/to/softrnic-conform}
PROG_TIMEOUT=${CONFORM_TIMEOUT:-240}
PORT=7471

netns_setup sconf
start_server timeout "$PROG_TIMEOUT" ip netns exec "$NETNS_A" "$PROG" server "$NETNS_ADDR_A" "$PORT"
wait_listen "$PORT" "$NETNS_A" || fail "server is not listening in $NETNS_A"
timeout "$PROG_TIMEOUT" ip netns exec "$NETNS_B" "$PROG" client "$NETNS_ADDR_A" "$PORT"
rc=$?
[ "$rc" -eq 0 ] || fail "client exited with status $rc"
wait_server ""
echo "$TEST_NAME: OK"
