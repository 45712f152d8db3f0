#!/bin/sh
# Debian's ucmatose (rdmacm-utils) on loopback over our libraries: one connection, then 4
# connections with 20 messages of 1000 bytes each way, then 100 connections at once; both
# sides report status 0.
# Usage: ucmatose.sh LIBIBVERBS_DIR LIBRDMACM_DIR [RUNS]
# With RUNS, only `-c 100`, RUNS times in a row (the loop variant, in CI with 10).
set -u
TEST_NAME=dropin_ucmatose
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dropin.sh"
need_debian ucmatose rdmacm-utils
uses_ours ucmatose

run() {
	pick_port
	sout=$(mktemp)
	start_server timeout "$PROG_TIMEOUT" ucmatose -p "$PORT" "$@" >"$sout" 2>&1
	wait_listen "$PORT" || { cat "$sout"; rm -f "$sout"; fail "server not listening ($*)"; }
	out=$(timeout "$PROG_TIMEOUT" ucmatose -s 127.0.0.1 -p "$PORT" "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	[ "$rc" -eq 0 ] || { rm -f "$sout"; fail "client exited with status $rc ($*)"; }
	wait "$SERVER_PID"
	src=$?
	SERVER_PID=
	cat "$sout"
	grep -q 'return status 0' "$sout" || src=1
	rm -f "$sout"
	[ "$src" -eq 0 ] || fail "server failed ($*)"
	printf '%s\n' "$out" | grep -q 'return status 0' || fail "client did not return status 0"
	printf '%s\n' "$out" | grep -q 'data transfers complete' || fail "client: no data transfers"
}
if [ $# -gt 0 ]; then
	run_rounds "$1" run -c 100
else
	run
	run -c 4 -C 20 -S 1000
	run -c 100
fi
echo "$TEST_NAME: OK"
