#!/bin/sh
# softrnic-rping server and client as two processes on loopback: 100 verified pings.
# Usage: rping_lo.sh /path/to/softrnic-rping [extra options for both, e.g. -P]
set -u
TEST_NAME=apps_rping
. "$(dirname "$0")/../lib/common.sh"
RPING=${1:?usage: rping_lo.sh /path/to/softrnic-rping [options]}
shift
pick_port

start_server timeout "$PROG_TIMEOUT" "$RPING" -s -a 127.0.0.1 -p "$PORT" -V "$@"
wait_listen "$PORT" || fail "server is not listening on port $PORT"
out=$(timeout "$PROG_TIMEOUT" "$RPING" -c -a 127.0.0.1 -p "$PORT" -C 100 -V -S 100 "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || fail "client exited with status $rc (options: $*)"
printf '%s\n' "$out" | grep -q '100 pings of 100 bytes, verified' || fail "client summary missing"
wait_server "$*"

# -v prints every ping's data; a 3-ping run shows 3 lines.
pick_port
start_server timeout "$PROG_TIMEOUT" "$RPING" -s -a 127.0.0.1 -p "$PORT" "$@" >/dev/null
wait_listen "$PORT" || fail "server is not listening on port $PORT (second run)"
out=$(timeout "$PROG_TIMEOUT" "$RPING" -c -a 127.0.0.1 -p "$PORT" -C 3 -v -V "$@" 2>&1)
rc=$?
[ "$rc" -eq 0 ] || fail "client (-v) exited with status $rc: $out"
n=$(printf '%s\n' "$out" | grep -c '^ping data: softrnic-ping-')
[ "$n" -eq 3 ] || fail "expected 3 'ping data' lines, got $n: $out"
wait_server "-v $*"

# A client without a server fails (non-zero), it does not hang.
pick_port
if timeout "$PROG_TIMEOUT" "$RPING" -c -a 127.0.0.1 -p "$PORT" -C 1 -t 5 "$@" >/dev/null 2>&1; then
	fail "client succeeded with no server"
fi
echo "$TEST_NAME: OK ($*)"
