#!/bin/sh
# Debian's rping (rdmacm-utils), server and client as two processes on loopback over our
# libibverbs.so.1 / librdmacm.so.1: 100 pings, data validated by both (-V), each printed (-v).
set -u
TEST_NAME=dropin_rping
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dropin.sh"
need_debian rping rdmacm-utils
uses_ours rping
COUNT=${1:-100}
pick_port
SOUT=$(mktemp) COUT=$(mktemp) CERR=$(mktemp)
cleanup_files() { rm -f "$SOUT" "$COUT" "$CERR"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_files"

start_server timeout "$PROG_TIMEOUT" rping -s -a 127.0.0.1 -p "$PORT" -v -V -C "$COUNT" >"$SOUT"
wait_listen "$PORT" || fail "rping server is not listening on port $PORT"
timeout "$PROG_TIMEOUT" rping -c -a 127.0.0.1 -p "$PORT" -v -V -C "$COUNT" >"$COUT" 2>"$CERR"
rc=$?
cat "$CERR" >&2
[ "$rc" -eq 0 ] || fail "client exited with status $rc"
wait_server "rping server"
n=$(grep -c '^ping data: rdma-ping-' "$COUT")
[ "$n" -eq "$COUNT" ] || fail "client printed $n verified pings, expected $COUNT"
n=$(grep -c '^server ping data: rdma-ping-' "$SOUT")
[ "$n" -eq "$COUNT" ] || fail "server printed $n pings, expected $COUNT"
# rping's payload: "rdma-ping-N: " then a rotating alphabet; check the last one exactly.
last=$((COUNT - 1))
grep -q "^ping data: rdma-ping-$last: " "$COUT" || fail "ping $last missing"
grep -q 'data mismatch' "$CERR" && fail "rping reported a data mismatch"

# A client with no server fails (non-zero) and does not hang.
pick_port
if timeout "$PROG_TIMEOUT" rping -c -a 127.0.0.1 -p "$PORT" -C 1 >/dev/null 2>&1; then
	fail "client succeeded with no server"
fi
echo "$TEST_NAME: OK ($COUNT pings)"
