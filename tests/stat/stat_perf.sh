#!/bin/sh
# softrnic-stat reads a softrnic-perf pair while it runs: samples with rates during the run
# (the counters only grow), then exact counts once the test is over and both processes keep
# their QP (-L): N RDMA Writes of S octets, perf's control Sends, FPDUs and their octets, on
# the device and on the QP (stat_check.py); the DPDK port's figures over memif. A file of a
# live process with a bad layout is refused with a reason; files of exited processes are
# gone. Statistics files live in a folder of the test's own.
# Usage: stat_perf.sh sock|dpdk SOFTRNIC-STAT SOFTRNIC-PERF
set -u
MODE=${1:?usage: stat_perf.sh sock|dpdk STAT PERF}
STAT=${2:?}
PERF=${3:?}
TEST_NAME=stat_perf_$MODE
HERE=$(dirname "$0")
. "$HERE/../lib/common.sh"
. "$HERE/../dpdk/dpdk_lib.sh"
need_cmd python3
need_cmd flock util-linux
need_cmd pgrep procps
N=20000
S=1000
# as an operator types it (docs/stats.md shows these commands)
PATH=$(cd "$(dirname "$STAT")" && pwd):$PATH
export PATH

SOFTRNIC_STATS_DIR=$(mktemp -d /tmp/srn-stat-XXXXXX) || fail "mktemp"
export SOFTRNIC_STATS_DIR
CLIENT_PID=
HOLD_PID=
stat_cleanup() {
	[ -n "$CLIENT_PID" ] && kill "$CLIENT_PID" 2>/dev/null && wait "$CLIENT_PID" 2>/dev/null
	[ -n "$HOLD_PID" ] && kill "$HOLD_PID" 2>/dev/null && wait "$HOLD_PID" 2>/dev/null
	rm -rf "$SOFTRNIC_STATS_DIR"
}
EXIT_HOOKS="$EXIT_HOOKS stat_cleanup"
dpdk_tmpdir
LOG=$DPDK_DIR

if [ "$MODE" = dpdk ]; then
	A=198.51.100.1
	B=198.51.100.2
	PORT=7591
	set -- env SOFTRNIC_TRANSPORT=dpdk "$(dpdk_eal server "$(memif_vdev server)")" \
		SOFTRNIC_DPDK_IP=$A/24
	start_server timeout "$PROG_TIMEOUT" "$@" "$PERF" -p "$PORT" -T 20 -y -L 6 -b $A \
		>"$LOG/server.out" 2>"$LOG/server.err"
	dpdk_head_start
	dpdk_skip_if_no_eal "$LOG/server.err"
	timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal client "$(memif_vdev client)")" SOFTRNIC_DPDK_IP=$B/24 \
		"$PERF" -p "$PORT" -T 20 -y -L 6 -t write -s $S -n $N $A \
		>"$LOG/client.out" 2>"$LOG/client.err" &
	CLIENT_PID=$!
else
	pick_port
	start_server timeout "$PROG_TIMEOUT" "$PERF" -p "$PORT" -T 20 -y -L 6 \
		>"$LOG/server.out" 2>"$LOG/server.err"
	wait_listen "$PORT" || fail "server is not listening on port $PORT"
	timeout "$PROG_TIMEOUT" "$PERF" -p "$PORT" -T 20 -y -L 6 -t write -s $S -n $N \
		127.0.0.1 >"$LOG/client.out" 2>"$LOG/client.err" &
	CLIENT_PID=$!
fi

# during the run: samples every 0.2 s with rates; a counter never goes down
softrnic-stat -j -i 0.2 -c 6 >"$LOG/run.json" 2>"$LOG/run.err" ||
	{ cat "$LOG/run.err" >&2; fail "softrnic-stat -i failed during the run"; }
python3 - "$LOG/run.json" <<'PY' || fail "counters during the run"
import json, sys
prev = {}
rates = 0
for line in open(sys.argv[1]):
    for p in json.loads(line)["processes"]:
        for r in p.get("records", []):
            key = (p["pid"], r["kind"], r["label"])
            for k, v in r["counters"].items():
                if k not in ("qps_open", "rx_pool_free", "tx_pool_free", "tcp_cur_conns",
                             "link_up") and v < prev.get(key, {}).get(k, 0):
                    sys.exit(f"{key} {k} went down: {prev[key][k]} -> {v}")
            prev[key] = r["counters"]
            rates += len(r["rates"])
if not rates:
    sys.exit("no rates in any sample")
PY

# after the test, both processes linger with their QP: the final counts
i=0
until grep -q lingering "$LOG/client.out" 2>/dev/null && grep -q lingering "$LOG/server.out"; do
	i=$((i + 1))
	[ "$i" -lt 300 ] || { cat "$LOG/client.err" "$LOG/server.err" >&2; fail "no end of test"; }
	kill -0 "$CLIENT_PID" 2>/dev/null || { cat "$LOG/client.err" >&2; fail "client exited"; }
	sleep 0.1
done
# the programs themselves, not the timeout(1) that runs each
CPID=$(pgrep -P "$CLIENT_PID" softrnic-perf) || fail "no client process under $CLIENT_PID"
SPID=$(pgrep -P "$SERVER_PID" softrnic-perf) || fail "no server process under $SERVER_PID"
"$STAT" -j "$CPID" "$SPID" >"$LOG/final.json" || fail "softrnic-stat -j failed"
python3 "$HERE/stat_check.py" "$LOG/final.json" "$CPID" "$SPID" $N $S "$MODE" ||
	fail "counters are not exact"

# the text forms name both processes and the counters
softrnic-stat -l >"$LOG/list.txt" || fail "softrnic-stat -l failed"
for pid in "$CPID" "$SPID"; do
	grep -Eq "^$pid +softrnic-perf " "$LOG/list.txt" || fail "-l does not list $pid"
done
"$STAT" "$CPID" >"$LOG/text.txt" || fail "softrnic-stat PID failed"
grep -Eq "^ +tx_write +$N\$" "$LOG/text.txt" || fail "text output has no 'tx_write $N'"

# a file of a live process with another layout: refused with the reason, exit status 1
printf 'not a statistics file, but long enough to hold a header of one: %064d' 0 \
	>"$SOFTRNIC_STATS_DIR/softrnic-$$.stats"
# the lock a live owner holds, taken on fd 9 of a process that then becomes sleep(1)
(exec 9<"$SOFTRNIC_STATS_DIR/softrnic-$$.stats" && flock -s 9 && exec sleep 30) &
HOLD_PID=$!
sleep 0.2
"$STAT" "$$" >"$LOG/bad.txt" 2>&1 && fail "a bad file read as good"
grep -q "not a softrnic statistics file" "$LOG/bad.txt" || { cat "$LOG/bad.txt" >&2;
	fail "no reason given for the bad file"; }
kill "$HOLD_PID"; wait "$HOLD_PID" 2>/dev/null
HOLD_PID=
# its holder gone, the reader removes it as a dead process's
"$STAT" -l >/dev/null
[ -e "$SOFTRNIC_STATS_DIR/softrnic-$$.stats" ] && fail "a dead process's file was kept"

wait "$CLIENT_PID" || fail "client exited with status $?"
CLIENT_PID=
wait_server
left=$(ls -A "$SOFTRNIC_STATS_DIR")
[ -z "$left" ] || fail "files left after the processes exited: $left"
echo "$TEST_NAME: OK"
