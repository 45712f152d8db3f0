#!/bin/sh
# Two softrnic-port processes over net_memif (one core each: taskset -c 0 and -c 1 when the
# machine has two): the server role answers (its poll thread drives the stack), the client
# role pings it 5 times through ARP and ICMP (inline polls). The socket lives in a temp dir of this run. Usage: memif_port.sh SOFTRNIC_PORT
TEST_NAME=tcp_net_memif
PORT_BIN=$1
[ -x "$PORT_BIN" ] || { echo "$TEST_NAME: FAIL: no softrnic-port at '$PORT_BIN'" >&2; exit 1; }

TMP=$(mktemp -d /tmp/srn-memif.XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail() {
	echo "$TEST_NAME: FAIL: $*" >&2
	for f in "$TMP"/*.log; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; } >&2; done
	exit 1
}

CPU_A=0
CPU_B=0
[ "$(nproc)" -ge 2 ] && CPU_B=1
SOCK=$TMP/memif.sock

SOFTRNIC_DPDK_EAL="--no-huge -m 128 --vdev=net_memif0,role=server,socket=$SOCK" \
SOFTRNIC_DPDK_IP=198.51.100.1/24 SOFTRNIC_DPDK_MAC=02:00:00:00:0b:01 \
	taskset -c $CPU_A "$PORT_BIN" --thread --seconds 15 >"$TMP/server.log" 2>&1 &
PID=$!
i=0
until grep -q "softrnic-port: up" "$TMP/server.log" 2>/dev/null; do
	kill -0 "$PID" 2>/dev/null || fail "server exited early"
	[ "$i" -lt 100 ] || fail "server not up after 10 s"
	sleep 0.1
	i=$((i + 1))
done
SOFTRNIC_DPDK_EAL="--no-huge -m 128 --vdev=net_memif0,role=client,socket=$SOCK" \
SOFTRNIC_DPDK_IP=198.51.100.2/24 SOFTRNIC_DPDK_MAC=02:00:00:00:0b:02 \
	timeout 20 taskset -c $CPU_B "$PORT_BIN" --seconds 10 --ping 198.51.100.1 --count 5 \
	--interval 300 >"$TMP/client.log" 2>&1 || fail "client ping failed (status $?)"
# Until the first reply (memif link and ARP coming up) the client sends one request a
# second, so none is lost: all 5 come back.
grep -q "5 sent, 5 received" "$TMP/client.log" || fail "not 5 of 5 echo replies"
kill -TERM "$PID"
wait "$PID" || fail "server exit status $?"
PID=
grep -q "icmp_echo_out=5 " "$TMP/server.log" || fail "server counted no echo replies"
grep -q "arp_replies_out=[1-9]" "$TMP/server.log" || fail "server sent no ARP reply"
echo "$TEST_NAME: ok"
