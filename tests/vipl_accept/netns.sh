#!/bin/sh
# VIPL across two network namespaces joined by a veth pair (tests/lib/netns.sh):
#   ns A: veth-a 198.51.100.1/24, ns B: veth-b 198.51.100.2/24.
# Runs the handshake and data acceptance scenarios (T06 T08 T09 T12 T18 T21 T25) with peer A
# in ns A and peer B in ns B, then vipl-pingpong and vipl-bw (server in A, client in B) with
# data verification. Nothing is added to the main namespace; both namespaces are removed on
# every exit. Needs root / CAP_SYS_ADMIN: without it the test FAILS (never skips).
# Usage: netns.sh vipl_accept vipl-pingpong vipl-bw
set -u
TEST_NAME=vipl_accept_netns
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/netns.sh"
ACCEPT=${1:?usage: netns.sh vipl_accept vipl-pingpong vipl-bw}
PINGPONG=${2:?missing vipl-pingpong}
BW=${3:?missing vipl-bw}
PROG_TIMEOUT=${VIPL_TIMEOUT:-120}

netns_setup vipl
timeout "$PROG_TIMEOUT" "$ACCEPT" --ip-a "$NETNS_ADDR_A" --ip-b "$NETNS_ADDR_B" \
	--ns-a "$NETNS_A" --ns-b "$NETNS_B" T06 T08 T09 T12 T18 T21 T25 ||
	fail "acceptance scenarios across the namespaces failed (see above)"

PORT_S=7447
PORT_C=7448
run_pair() {   # run_pair NAME PROG ARGS...: server in A, client in B; both must exit 0
	name=$1
	prog=$2
	shift 2
	start_server timeout "$PROG_TIMEOUT" ip netns exec "$NETNS_A" "$prog" -s \
		-l "$NETNS_ADDR_A:$PORT_S" "$@"
	wait_listen "$PORT_S" "$NETNS_A" || fail "$name: server is not listening"
	out=$(timeout "$PROG_TIMEOUT" ip netns exec "$NETNS_B" "$prog" \
		-c "$NETNS_ADDR_A:$PORT_S" -l "$NETNS_ADDR_B:$PORT_C" "$@")
	rc=$?
	echo "$out"
	[ "$rc" -eq 0 ] || fail "$name: client exited with status $rc"
	wait_server "$name"
	echo "$out" | grep -Eq '^ [0-9]+ +[0-9]+ +[0-9.]+' || fail "$name: no result line"
}
run_pair pingpong "$PINGPONG" -n 200 -S 64 -v
run_pair pingpong_poll "$PINGPONG" -n 200 -S 4096 -p -v
run_pair bw "$BW" -n 2000 -S 65536 -w 16 -v
echo "$TEST_NAME: OK"
