#!/bin/sh
# A peer that dies without a word (issue 27 items 6, 7): softrnic-perf's server takes a 64 KiB
# RDMA Write stream over net_memif from a client that is killed with SIGKILL. No kernel
# answers for the dead process and the server only receives, so it never retransmits: the
# engine's keepalive (key keepalive, default 5,1,5: given up after 10 s) must end its stream,
# the QP reach Error and the server exit, well before perf's own wait (-T 120). A second pair
# on a memif link of its own, with keepalive = off and its client killed at the same moment,
# must still be waiting when the first server has ended.
# Usage: dead_peer.sh /path/to/softrnic-perf
set -u
TEST_NAME=dpdk_dead_peer
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dpdk_lib.sh"
PERF=${1:?usage: dead_peer.sh /path/to/softrnic-perf}
dpdk_tmpdir
A=198.51.100.1
B=198.51.100.2
CLI_PIDS= OFF_PID=
cleanup_pairs() {
	for p in $CLI_PIDS; do kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	[ -z "$OFF_PID" ] || { kill "$OFF_PID" 2>/dev/null && wait "$OFF_PID" 2>/dev/null; }
}
EXIT_HOOKS="cleanup_pairs $EXIT_HOOKS"

# vdev KEEPALIVE ROLE: each pair's own memif link (no comma in the path: devargs split there)
vdev() {
	echo "net_memif0,role=$2,socket=$DPDK_DIR/memif-$(echo "$1" | tr , _).sock"
}
# server KEEPALIVE PORT (in the background; exec: its PID is timeout's, which passes a TERM
# on to the server, so the cleanup ends it and not only the shell around it)
server() {
	exec timeout 200 env SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_KEEPALIVE="$1" \
		"$(dpdk_eal server "$(vdev "$1" server)")" SOFTRNIC_DPDK_IP=$A/24 \
		"$PERF" -p "$2" -T 120 -y -b $A >"$DPDK_DIR/server-$1.out" 2>&1
}
# client KEEPALIVE PORT: a Write stream that never ends by itself (in the background)
client() {
	env SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_KEEPALIVE="$1" \
		"$(dpdk_eal client "$(vdev "$1" client)")" SOFTRNIC_DPDK_IP=$B/24 \
		"$PERF" -p "$2" -T 120 -t write -s 65536 -n 100000000 -y $A \
		>"$DPDK_DIR/client-$1.out" 2>&1 &
	CLI_PIDS="$CLI_PIDS $!"
}

start_server server 5,1,5 7591
dpdk_head_start
dpdk_skip_if_no_eal "$DPDK_DIR/server-5,1,5.out"
server off 7592 &
OFF_PID=$!
dpdk_head_start
client 5,1,5 7591
client off 7592
sleep 2
for p in $CLI_PIDS; do
	kill -0 "$p" 2>/dev/null || { cat "$DPDK_DIR"/client-*.out; fail "a client ended early"; }
done
off_alive() { # what must not have happened yet
	kill -0 "$OFF_PID" 2>/dev/null || { cat "$DPDK_DIR/server-off.out"; fail "$1"; }
}
off_alive "keepalive-off server ended early"
kill -9 $CLI_PIDS
for p in $CLI_PIDS; do wait "$p" 2>/dev/null; done
CLI_PIDS=
wait_server_gone 25
cat "$DPDK_DIR/server-5,1,5.out"
[ "$GONE" != none ] || fail "the server was still waiting 25 s after its client died"
[ "$SRV_RC" -ne 0 ] || fail "the server exited 0 though its client died mid-stream"
# nothing but the keepalive (5 s idle, then probes) can have ended it
[ "$GONE" -ge 4 ] || fail "the server ended ${GONE} s after the kill: not by the keepalive"
echo "$TEST_NAME: keepalive 5,1,5: the server ended ${GONE} s after the kill (status $SRV_RC)"
# the keepalive-off server: a second past the end of the other, still waiting
sleep 1
off_alive "with keepalive off the server ended"
echo "$TEST_NAME: OK (keepalive ends a dead peer's stream; with it off the server still waits)"
