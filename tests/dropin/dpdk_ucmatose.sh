#!/bin/sh
# Debian's ucmatose (rdmacm-utils) over our libraries on DPDK: one connection, then 4
# connections with 20 messages of 1000 bytes each way, then 100 connections at once (issue
# 26: the client's burst of SYNs meets an unresolved ARP entry); both sides report status 0.
# Usage: dpdk_ucmatose.sh LIBIBVERBS_DIR LIBRDMACM_DIR memif|afpacket [RUNS]
# With RUNS, only `-c 100`, RUNS times in a row (the loop variant, in CI with 10: each run
# starts both processes anew, so each meets a cold ARP table).
set -u
TEST_NAME=dropin_dpdk_ucmatose
. "$(dirname "$0")/dpdk_common.sh"
need_debian ucmatose rdmacm-utils
uses_ours ucmatose
PORT=7841

run() {
	dd_start_server "$DPDK_DIR/server.out" ucmatose -b $A -p "$PORT" "$@"
	dd_client ucmatose -s $A -p "$PORT" "$@"
	out=$(cat "$DPDK_DIR/client.out" "$DPDK_DIR/client.err")
	printf '%s\n' "$out"
	[ "$rc" -eq 0 ] || { cat "$DPDK_DIR/server.out"; fail "client exited with status $rc ($*)"; }
	wait_server "ucmatose server ($*): $(cat "$DPDK_DIR/server.out")"
	cat "$DPDK_DIR/server.out"
	grep -q 'return status 0' "$DPDK_DIR/server.out" || fail "server did not return status 0 ($*)"
	printf '%s\n' "$out" | grep -q 'return status 0' || fail "client did not return status 0"
	printf '%s\n' "$out" | grep -q 'data transfers complete' || fail "client: no data transfers"
	PORT=$((PORT + 1))
}
if [ $# -gt 0 ]; then
	run_rounds "$1" run -c 100
else
	run
	run -c 4 -C 20 -S 1000
	run -c 100
fi
echo "$TEST_NAME: OK"
