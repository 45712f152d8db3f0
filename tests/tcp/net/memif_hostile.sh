#!/bin/sh
# A memif server survives clients that leave before its hello (dpdk/dpdk_memif_guard.h): the
# server is stopped (SIGSTOP) while a client connects to its socket and closes at once, then
# continued, so its EAL interrupt thread accepts a connection already closed, three times.
# DPDK 22.11 alone panics there ("Error adding fd N epoll_ctl, Bad file descriptor"). Then a
# real client must still get 3 of 3 pings through. Usage: memif_hostile.sh SOFTRNIC_PORT
TEST_NAME=tcp_net_memif_hostile
. "$(dirname "$0")/../../lib/common.sh"
PORT_BIN=$1
[ -x "$PORT_BIN" ] || fail "no softrnic-port at '$PORT_BIN'"
command -v python3 >/dev/null || skip "no python3"

TMP=$(mktemp -d /tmp/srn-hostile.XXXXXX)
cleanup() {
	[ -n "$SERVER_PID" ] && kill -CONT "$SERVER_PID" 2>/dev/null
	kill_server
	rm -rf "$TMP"
}
EXIT_HOOKS="$EXIT_HOOKS cleanup"
show_fail() {
	for f in "$TMP"/*.log; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; } >&2; done
	fail "$@"
}

SOCK=$TMP/memif.sock   # abstract (DPDK's default): the name, no file
SOFTRNIC_DPDK_EAL="--no-huge -m 128 --vdev=net_memif0,role=server,socket=$SOCK" \
SOFTRNIC_DPDK_IP=198.51.100.1/24 \
	start_server "$PORT_BIN" --thread --seconds 20 >"$TMP/server.log" 2>&1
i=0
until grep -q "softrnic-port: up" "$TMP/server.log" 2>/dev/null; do
	kill -0 "$SERVER_PID" 2>/dev/null || show_fail "server exited early"
	[ "$i" -lt 100 ] || show_fail "server not up after 10 s"
	sleep 0.1
	i=$((i + 1))
done
for n in 1 2 3; do
	kill -STOP "$SERVER_PID"
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect("\0" + sys.argv[1])
s.close()' "$SOCK" || show_fail "connect $n to the memif socket failed"
	kill -CONT "$SERVER_PID"
	sleep 0.5
	kill -0 "$SERVER_PID" 2>/dev/null || show_fail "server died after hostile connection $n"
done
grep -q "PANIC" "$TMP/server.log" && show_fail "EAL panicked"
[ "$(grep -c "left before the server's hello" "$TMP/server.log")" -eq 3 ] ||
	show_fail "the guard did not see 3 connections closed before hello"
SOFTRNIC_DPDK_EAL="--no-huge -m 128 --vdev=net_memif0,role=client,socket=$SOCK" \
SOFTRNIC_DPDK_IP=198.51.100.2/24 \
	timeout 20 "$PORT_BIN" --seconds 10 --ping 198.51.100.1 --count 3 --interval 300 \
	>"$TMP/client.log" 2>&1 || show_fail "client ping failed (status $?)"
grep -q "3 sent, 3 received" "$TMP/client.log" || show_fail "not 3 of 3 echo replies"
kill -TERM "$SERVER_PID"
wait_server
echo "$TEST_NAME: ok"
