#!/bin/sh
# softrnic-conform server and client as two processes on loopback (127.0.0.1).
# Fails unless both processes exit 0 and the client printed every check as PASS.
# Usage: conform_lo.sh /path/to/softrnic-conform
set -u
PROG=${1:?usage: conform_lo.sh /path/to/softrnic-conform}
T=${CONFORM_TIMEOUT:-200}
fail() { echo "conform_lo: FAIL: $*" >&2; exit 1; }
SPID=
cleanup() { [ -n "$SPID" ] && kill "$SPID" 2>/dev/null; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
PORT=$((20000 + ($$ * 7) % 20000))
n=0
while [ -n "$(ss -Hatn "( sport = :$PORT )" 2>/dev/null)" ] && [ $n -lt 200 ]; do
	PORT=$((PORT + 1)); n=$((n + 1))
done
timeout "$T" "$PROG" server 127.0.0.1 "$PORT" &
SPID=$!
i=0
until [ -n "$(ss -Hltn "sport = :$PORT" 2>/dev/null)" ]; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "server is not listening on port $PORT"
	sleep 0.1
done
timeout "$T" "$PROG" client 127.0.0.1 "$PORT"
crc=$?
wait "$SPID"
src=$?
SPID=
[ "$crc" -eq 0 ] || fail "client exited with status $crc"
[ "$src" -eq 0 ] || fail "server exited with status $src"
echo "conform_lo: OK"
