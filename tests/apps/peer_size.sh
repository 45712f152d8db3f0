#!/bin/sh
# The example servers allocate on a client's word only up to their limit (-M): a client
# (evil_peer) that asks softrnic-rping's server for 1 GiB, or softrnic-perf's for 2 GiB
# messages, is refused with a message and the server exits 1 without allocating; a size
# under a raised -M still works with the real client.
# Usage: peer_size.sh softrnic-rping softrnic-perf evil_peer
set -u
TEST_NAME=apps_peer_size
. "$(dirname "$0")/../lib/common.sh"
RPING=${1:?usage: peer_size.sh RPING PERF EVIL_PEER}
PERF=${2:?}
EVIL=${3:?}
LOG=$(mktemp)
rm_log() { rm -f "$LOG"; }
EXIT_HOOKS="kill_server rm_log"

# refused WHAT SERVER-CMD... : the server, run against evil_peer, exits 1 with "refused".
refused() {
	what=$1
	shift
	pick_port
	timeout "$PROG_TIMEOUT" "$@" -p "$PORT" 2>"$LOG" >/dev/null &
	SERVER_PID=$!
	wait_listen "$PORT" || fail "$what: server is not listening on port $PORT"
	timeout "$PROG_TIMEOUT" "$EVIL" "$what" 127.0.0.1 "$PORT" "$SIZE" ||
		fail "$what: evil_peer failed"
	wait "$SERVER_PID"
	rc=$?
	SERVER_PID=
	cat "$LOG"
	[ "$rc" -eq 1 ] || fail "$what: server exited $rc, expected 1"
	grep -q "refused" "$LOG" || fail "$what: no refusal message: $(cat "$LOG")"
}

SIZE=$((1 << 30)); refused rping "$RPING" -s -a 127.0.0.1 -C 1
SIZE=$((16 * 1024 * 1024 + 1)); refused rping "$RPING" -s -a 127.0.0.1 -C 1
SIZE=$((4 * 1024 * 1024 + 1)); refused rping "$RPING" -s -a 127.0.0.1 -C 1 -M 4194304
SIZE=$((1 << 31)); refused perf "$PERF" -b 127.0.0.1 -q
SIZE=$((64 * 1024 * 1024 + 1)); refused perf "$PERF" -b 127.0.0.1 -q
SIZE=$((1024 * 1024 + 1)); refused perf "$PERF" -b 127.0.0.1 -q -M 1048576

# A raised limit lets a larger client in.
pick_port
start_server timeout "$PROG_TIMEOUT" "$RPING" -s -a 127.0.0.1 -p "$PORT" -C 1 -M 33554432
wait_listen "$PORT" || fail "server is not listening on port $PORT"
timeout "$PROG_TIMEOUT" "$RPING" -c -a 127.0.0.1 -p "$PORT" -C 1 -V -S 20000000 ||
	fail "20 MB ping under -M 32 MiB failed"
wait_server "-M"
echo "$TEST_NAME: OK"
