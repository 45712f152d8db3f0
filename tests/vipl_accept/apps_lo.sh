#!/bin/sh
# vipl-pingpong and vipl-bw as two processes over loopback (127.0.0.1, two NIC ports), each
# with data verification (-v), in blocking and polling modes and at every reliability level.
# Fails unless both processes exit 0 and the client printed a result line for every size.
# Two vipl-bw servers get no test options at all (they take the test from the client).
# Usage: apps_lo.sh vipl-pingpong vipl-bw
set -u
TEST_NAME=vipl_apps_lo
. "$(dirname "$0")/../lib/common.sh"
PINGPONG=${1:?usage: apps_lo.sh vipl-pingpong vipl-bw}
BW=${2:?missing vipl-bw}
PROG_TIMEOUT=${VIPL_TIMEOUT:-60}

run_pair() {   # run_pair NAME EXPECTED_LINES PROG ARGS...  (the server gets ARGS too
	name=$1       # unless SERVER_ARGS is set: then those)
	lines=$2
	prog=$3
	shift 3
	pick_port
	ps=$PORT
	pick_port
	pc=$PORT
	if [ -n "${SERVER_ARGS+set}" ]; then
		# shellcheck disable=SC2086 # word splitting wanted: the server's own options
		start_server timeout "$PROG_TIMEOUT" "$prog" -s -l "127.0.0.1:$ps" $SERVER_ARGS
	else
		start_server timeout "$PROG_TIMEOUT" "$prog" -s -l "127.0.0.1:$ps" "$@"
	fi
	wait_listen "$ps" || fail "$name: server is not listening on $ps"
	out=$(timeout "$PROG_TIMEOUT" "$prog" -c "127.0.0.1:$ps" -l "127.0.0.1:$pc" "$@")
	rc=$?
	echo "$out"
	[ "$rc" -eq 0 ] || fail "$name: client exited with status $rc"
	wait_server "$name"
	n=$(echo "$out" | grep -Ec '^ [0-9]+ +[0-9]+ +[0-9.]+')
	[ "$n" -eq "$lines" ] || fail "$name: $n result lines, expected $lines"
}
run_pair pingpong_rd 1 "$PINGPONG" -n 500 -S 64 -v
run_pair pingpong_rd_poll 1 "$PINGPONG" -n 500 -S 4096 -p -v
run_pair pingpong_ur 1 "$PINGPONG" -n 200 -S 8 -r ur -v
run_pair pingpong_rr 1 "$PINGPONG" -n 200 -S 1024 -r rr -v
run_pair pingpong_all 16 "$PINGPONG" -n 50 -a -p -v
run_pair bw_rd 1 "$BW" -n 3000 -S 65536 -w 32 -v
run_pair bw_all 16 "$BW" -n 200 -a -w 8 -v
run_pair bw_rr 1 "$BW" -n 500 -S 8192 -w 8 -r rr -v
# servers started with -s alone: the test comes from the client, and either side's window
# (-w) may differ from the other's (the server grants its receives)
SERVER_ARGS=
run_pair bw_bare 1 "$BW" -n 3000 -S 4096 -w 200 -v
SERVER_ARGS="-w 4"
run_pair bw_small_server 16 "$BW" -n 100 -a -w 64 -r rr -v
unset SERVER_ARGS
echo "$TEST_NAME: OK"
