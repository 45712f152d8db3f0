#!/bin/sh
# A memif client's reconnects (dpdk_port.c port_link_watch) against a stand-in memif server
# (tests/tcp/net/memif_stub.py) that accepts control connections and never answers: the
# handshake of each start stays pending, as with a server whose EAL interrupt thread is slow.
#  1. A start that connected is not restarted for 1 s, then 2 s, 4 s: a restart closes the
#     pending connection, and DPDK 22.11's memif server panics when it accepts a connection
#     its client already closed (docs/dpdk.md). In 6 s at most 4 connections (at 0, 1,
#     3 s); restarts every 250 ms made 24.
#  2. A start that failed (no server socket yet) is retried within 250 ms: the stub starts
#     1.5 s after the client and must see its first connection within 1 s.
# Usage: memif_relink.sh SOFTRNIC_PORT
TEST_NAME=tcp_net_memif_relink
. "$(dirname "$0")/../../lib/common.sh"
PORT_BIN=$1
STUB=$(dirname "$0")/memif_stub.py
[ -x "$PORT_BIN" ] || fail "no softrnic-port at '$PORT_BIN'"
command -v python3 >/dev/null || { echo "$TEST_NAME: SKIP: no python3"; exit 77; }

TMP=$(mktemp -d /tmp/srn-relink.XXXXXX)
STUB_PIDS=
cleanup() {
	for p in $STUB_PIDS; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
EXIT_HOOKS="$EXIT_HOOKS cleanup"
show_logs() {
	for f in "$TMP"/*.log; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; } >&2; done
}
client() { # SOCKET SECONDS LOG
	SOFTRNIC_DPDK_EAL="--no-huge -m 128 --vdev=net_memif0,role=client,socket=$1" \
	SOFTRNIC_DPDK_IP=198.51.100.2/24 SOFTRNIC_DPDK_LINK_WAIT_MS=0 \
		timeout 30 "$PORT_BIN" --seconds "$2" --thread >"$3" 2>&1
}
field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p" | tail -1; }

# 1. a pending handshake is left alone
python3 "$STUB" "$TMP/a.sock" 9 >"$TMP/stub-a.log" 2>&1 &
STUB_PIDS="$STUB_PIDS $!"
i=0
until grep -q "listening" "$TMP/stub-a.log" 2>/dev/null; do
	[ "$i" -lt 50 ] || { show_logs; fail "stub not listening after 5 s"; }
	sleep 0.1
	i=$((i + 1))
done
client "$TMP/a.sock" 6 "$TMP/client-a.log" || { rc=$?; show_logs; fail "client exited with status $rc"; }
n=$(grep -c "^accepted" "$TMP/stub-a.log")
restarts=$(field "$TMP/client-a.log" link_restarts)
[ "$n" -ge 2 ] || { show_logs; fail "the client connected $n times in 6 s: it does not reconnect"; }
[ "$n" -le 4 ] ||
	{ show_logs; fail "the client connected $n times in 6 s: restarts do not wait for a pending handshake"; }
[ -n "$restarts" ] && [ "$restarts" -ge 1 ] && [ "$restarts" -le 3 ] ||
	{ show_logs; fail "link_restarts=$restarts (expected 1-3)"; }

# 2. a start that found no server is retried soon
start_server client "$TMP/b.sock" 4 "$TMP/client-b.log"
sleep 1.5
python3 "$STUB" "$TMP/b.sock" 3 >"$TMP/stub-b.log" 2>&1 &
STUB_PIDS="$STUB_PIDS $!"
wait "$SERVER_PID" || { rc=$?; show_logs; fail "client exited with status $rc"; }
SERVER_PID=
first=$(sed -n 's/^accepted after \([0-9.]*\) s$/\1/p' "$TMP/stub-b.log" | head -1)
[ -n "$first" ] || { show_logs; fail "no connection after the server came up"; }
python3 -c "import sys; sys.exit(0 if float('$first') <= 1.0 else 1)" ||
	{ show_logs; fail "first connection $first s after the server came up (expected within 1 s)"; }
echo "$TEST_NAME: ok (pending: $n connections, $restarts restarts in 6 s; no server: connected $first s after it came up)"
