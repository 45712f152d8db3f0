#!/bin/sh
# vipl-pingpong and vipl-bw, unchanged, between two processes over net_memif: the server process
# is the memif server (DPDK port 198.51.100.1), the client the memif client (198.51.100.2).
# Neither is given its VIPL address (-l): each NIC's address must be its DPDK port's (docs/
# vipl.md V14): the server must listen on 198.51.100.1:7447 (binding another address fails on
# the DPDK transport) and the client's NIC on 198.51.100.2. Every run verifies a data pattern (-v); both processes must exit 0 and
# the client must print a result line per size. Exit 77 only when EAL cannot start.
# Usage: apps_dpdk_memif.sh vipl-pingpong vipl-bw
set -u
TEST_NAME=vipl_apps_dpdk_memif
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dpdk/dpdk_lib.sh"
. "$(dirname "$0")/vipl_dpdk_lib.sh"
PINGPONG=${1:?usage: apps_dpdk_memif.sh vipl-pingpong vipl-bw}
BW=${2:?missing vipl-bw}
PROG_TIMEOUT=${VIPL_TIMEOUT:-60}
A=198.51.100.1
B=198.51.100.2
dpdk_tmpdir

run_pair() {   # run_pair NAME EXPECTED_LINES PROG ARGS...
	name=$1
	lines=$2
	prog=$3
	shift 3
	start_server timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal server "$(memif_vdev server)")" SOFTRNIC_DPDK_IP=$A/24 \
		"$prog" -s "$@" 2>"$DPDK_DIR/server.err"
	# EAL start and listen; the client retries its connect request until the server is up
	sleep 1
	out=$(timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal client "$(memif_vdev client)")" SOFTRNIC_DPDK_IP=$B/24 \
		"$prog" -c "$A" "$@" 2>"$DPDK_DIR/client.err")
	rc=$?
	echo "$out"
	if [ "$rc" -ne 0 ]; then
		cat "$DPDK_DIR/client.err" "$DPDK_DIR/server.err" >&2
		vd_skip_if_no_dpdk "$DPDK_DIR/server.err"
		fail "$name: client exited with status $rc"
	fi
	wait_server "$name"
	n=$(echo "$out" | grep -Ec '^ [0-9]+ +[0-9]+ +[0-9.]+')
	[ "$n" -eq "$lines" ] || fail "$name: $n result lines, expected $lines"
}
run_pair pingpong_rd 1 "$PINGPONG" -n 500 -S 64 -v
run_pair pingpong_rd_poll 1 "$PINGPONG" -n 500 -S 4096 -p -v
run_pair pingpong_rr 1 "$PINGPONG" -n 200 -S 1024 -r rr -v
run_pair pingpong_all 16 "$PINGPONG" -n 20 -a -v
run_pair bw_rd 1 "$BW" -n 2000 -S 65536 -w 16 -v
run_pair bw_all 16 "$BW" -n 100 -a -w 8 -v
echo "$TEST_NAME: OK"
