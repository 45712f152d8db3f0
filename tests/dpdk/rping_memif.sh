#!/bin/sh
# softrnic-rping, unchanged, between two processes over net_memif: the server process is the
# memif server (198.51.100.1), the client process the memif client (198.51.100.2). RDMA runs on
# softrnic's TCP engine; no kernel socket carries it. 100 verified pings, then 3 with -v, then
# 30 of 64 KiB with CRC at MTU 9000, copied and sent by reference (tx_refs), and at MTU 64000.
# Usage: rping_memif.sh /path/to/softrnic-rping [extra options for both, e.g. -P]
set -u
TEST_NAME=dpdk_rping_memif
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dpdk_lib.sh"
RPING=${1:?usage: rping_memif.sh /path/to/softrnic-rping [options]}
shift
dpdk_tmpdir
PORT=7471
A=198.51.100.1
B=198.51.100.2

run() { # count, then extra options for the client
	count=$1
	shift
	start_server timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal server "$(memif_vdev server)")" SOFTRNIC_DPDK_IP=$A/24 \
		"$RPING" -s -a $A -p "$PORT" -V 2>"$DPDK_DIR/server.err"
	# The client's memif link comes up once the server's port runs and its SYN waits for
	# the link: a short head start for the server's listen is all that is needed.
	dpdk_head_start
	dpdk_skip_if_no_eal "$DPDK_DIR/server.err"
	out=$(timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal client "$(memif_vdev client)")" SOFTRNIC_DPDK_IP=$B/24 \
		"$RPING" -c -a $A -p "$PORT" -C "$count" -V "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	if [ "$rc" -ne 0 ]; then
		cat "$DPDK_DIR/server.err" >&2
		fail "client exited with status $rc ($*)"
	fi
	wait_server "$*"
	PORT=$((PORT + 1))
}

run 100 -S 100
printf '%s\n' "$out" | grep -q '100 pings of 100 bytes, verified' || fail "client summary missing"
run 3 -v
n=$(printf '%s\n' "$out" | grep -c '^ping data: softrnic-ping-')
[ "$n" -eq 3 ] || fail "expected 3 'ping data' lines, got $n"
export SOFTRNIC_DPDK_MTU=9000 SOFTRNIC_MPA=crc
run 30 -S 65536
printf '%s\n' "$out" | grep -q '30 pings of 65536 bytes, verified' || fail "jumbo summary missing"
# payload sent by reference from rping's registered buffers (key tx_refs), both ends
export SOFTRNIC_DPDK_TX_REFS=on
run 30 -S 65536
printf '%s\n' "$out" | grep -q '30 pings of 65536 bytes, verified' || fail "tx_refs summary missing"
! grep -q tx_refs "$DPDK_DIR/server.err" || fail "the server's port refused tx_refs"
# the largest MTU (a local link, as loopback's 65536): one FPDU per 64 KiB message,
# referenced in two chunks of at most 32 KiB
export SOFTRNIC_DPDK_MTU=64000
run 30 -S 65536
printf '%s\n' "$out" | grep -q '30 pings of 65536 bytes, verified' || fail "MTU 64000 summary missing"
echo "$TEST_NAME: OK"
