#!/bin/sh
# A peer that dies without a word (issue 27 items 6, 7): softrnic-perf's server takes a 64 KiB
# RDMA Write stream over net_memif from a client that is killed with SIGKILL. No kernel
# answers for the dead process and the server only receives, so it never retransmits: the
# engine's keepalive (key keepalive, default 5,1,5: given up after 10 s) must end its stream,
# the QP reach Error and the server exit, well before perf's own wait (-T 120). Then the same
# with keepalive = off, which must still be waiting when the keepalive run was long done.
# Usage: dead_peer.sh /path/to/softrnic-perf
set -u
TEST_NAME=dpdk_dead_peer
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dpdk_lib.sh"
PERF=${1:?usage: dead_peer.sh /path/to/softrnic-perf}
dpdk_tmpdir
PORT=7591
A=198.51.100.1
B=198.51.100.2
# run KEEPALIVE BOUND: start both, kill the client after two seconds of traffic; sets GONE
# (seconds from the kill to the server's exit, or "none" after BOUND s) and SRV_RC
run() {
	start_server timeout 200 env SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_KEEPALIVE="$1" \
		"$(dpdk_eal server "$(memif_vdev server)")" SOFTRNIC_DPDK_IP=$A/24 \
		"$PERF" -p "$PORT" -T 120 -y -b $A >"$DPDK_DIR/server.out" 2>&1
	dpdk_head_start
	dpdk_skip_if_no_eal "$DPDK_DIR/server.out"
	env SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_KEEPALIVE="$1" \
		"$(dpdk_eal client "$(memif_vdev client)")" SOFTRNIC_DPDK_IP=$B/24 \
		"$PERF" -p "$PORT" -T 120 -t write -s 65536 -n 100000000 -y $A \
		>"$DPDK_DIR/client.out" 2>&1 &
	cli=$!
	sleep 2
	kill -0 "$cli" 2>/dev/null || { cat "$DPDK_DIR/client.out"; fail "client ended early"; }
	kill -9 "$cli"
	wait "$cli" 2>/dev/null
	wait_server_gone "$2"
	PORT=$((PORT + 1))
}

# 10 s of keepalive, the rest slack for a loaded machine
run 5,1,5 25
cat "$DPDK_DIR/server.out"
[ "$GONE" != none ] || fail "the server was still waiting 25 s after its client died"
[ "$SRV_RC" -ne 0 ] || fail "the server exited 0 though its client died mid-stream"
echo "$TEST_NAME: keepalive 5,1,5: the server ended ${GONE} s after the kill (status $SRV_RC)"

run off 14
[ "$GONE" = none ] || fail "with keepalive off the server ended ${GONE} s after the kill"
kill_server
echo "$TEST_NAME: OK (keepalive ends a dead peer's stream; with it off the server still waits)"
