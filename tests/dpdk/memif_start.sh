#!/bin/sh
# Two processes over net_memif started in either order without a head start: the memif
# client's port keeps reconnecting until its server's interface is up (dpdk_port.c
# port_link_watch), so the client's connection never ends UNREACHABLE because the link came
# up late. A connection refused (REJECTED: the server's port is up, its application not yet
# listening) is the application's to retry, as on any network; the client retries that only.
# Scenarios: both at once (5 times); the client first, the server 1 s later.
# Usage: memif_start.sh /path/to/softrnic-perf
set -u
TEST_NAME=dpdk_memif_start
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dpdk_lib.sh"
PERF=${1:?usage: memif_start.sh /path/to/softrnic-perf}
dpdk_tmpdir
PORT=7591
A=198.51.100.1
B=198.51.100.2

# client_until_connected: the client, retried while refused; fails on anything else
client_until_connected() {
	tries=0
	while :; do
		tries=$((tries + 1))
		out=$(timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
			"$(dpdk_eal client "$(memif_vdev client)")" SOFTRNIC_DPDK_IP=$B/24 \
			"$PERF" -p "$PORT" -T 20 -y -t send -l -s 8 -n 100 $A 2>&1) && return 0
		printf '%s\n' "$out" | grep -q 'got REJECTED' && [ "$tries" -lt 20 ] || {
			printf '%s\n' "$out" >"$DPDK_DIR/client.err"
			dpdk_skip_if_no_eal "$DPDK_DIR/client.err"
			cat "$DPDK_DIR/client.err" "$DPDK_DIR/server.err" >&2
			fail "client: not connected (try $tries)"
		}
		sleep 0.2
	done
}

run() { # SERVER_DELAY
	rm -f "$DPDK_DIR/server.err"
	( sleep "$1"; exec timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal server "$(memif_vdev server)")" SOFTRNIC_DPDK_IP=$A/24 \
		"$PERF" -p "$PORT" -T 20 -y -b $A >/dev/null 2>"$DPDK_DIR/server.err" ) &
	SERVER_PID=$!
	client_until_connected
	wait_server "server delay $1"
	echo "server delay $1 s: connected after $tries tries"
	PORT=$((PORT + 1))
}

for i in 1 2 3 4 5; do
	run 0
done
run 1
echo "$TEST_NAME: OK"
