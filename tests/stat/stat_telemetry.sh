#!/bin/sh
# DPDK telemetry: a softrnic-perf server on a memif port with --telemetry answers the
# /softrnic/ commands on its telemetry socket while it runs: its port, device and QP, with the
# exact counts of the run (N Writes of S octets received), an unknown QP answered with null;
# asked through a v2 protocol client of our own and through Debian's dpdk-telemetry.py.
# Usage: stat_telemetry.sh SOFTRNIC-PERF
set -u
PERF=${1:?usage: stat_telemetry.sh SOFTRNIC-PERF}
TEST_NAME=stat_telemetry
HERE=$(dirname "$0")
. "$HERE/../lib/common.sh"
. "$HERE/../dpdk/dpdk_lib.sh"
need_cmd python3
need_cmd dpdk-telemetry.py dpdk
N=5000
S=1000
A=198.51.100.1
B=198.51.100.2
PORT=7611
PREFIX=srn-tel-$$
# DPDK keeps a process's runtime folder (and its socket) after the process: ours go
RUNDIR=/var/run/dpdk/$PREFIX
[ "$(id -u)" -eq 0 ] || RUNDIR=${XDG_RUNTIME_DIR:-/tmp}/dpdk/$PREFIX
SOFTRNIC_STATS_DIR=$(mktemp -d /tmp/srn-stat-XXXXXX) || fail "mktemp"
export SOFTRNIC_STATS_DIR
CLIENT_PID=
tel_cleanup() {
	[ -n "$CLIENT_PID" ] && kill "$CLIENT_PID" 2>/dev/null && wait "$CLIENT_PID" 2>/dev/null
	rm -rf "$SOFTRNIC_STATS_DIR" "$RUNDIR"
}
EXIT_HOOKS="$EXIT_HOOKS tel_cleanup"
dpdk_tmpdir

start_server timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
	"$(dpdk_eal server "$(memif_vdev server)") --telemetry --file-prefix=$PREFIX" \
	SOFTRNIC_DPDK_IP=$A/24 "$PERF" -p "$PORT" -T 20 -y -L 8 -b $A \
	>"$DPDK_DIR/server.out" 2>"$DPDK_DIR/server.err"
dpdk_head_start
dpdk_skip_if_no_eal "$DPDK_DIR/server.err"
timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk "$(dpdk_eal client "$(memif_vdev client)")" \
	SOFTRNIC_DPDK_IP=$B/24 "$PERF" -p "$PORT" -T 20 -y -L 8 -t write -s $S -n $N $A \
	>"$DPDK_DIR/client.out" 2>"$DPDK_DIR/client.err" &
CLIENT_PID=$!
i=0
until grep -q lingering "$DPDK_DIR/server.out" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -lt 300 ] || { cat "$DPDK_DIR/server.err" "$DPDK_DIR/client.err" >&2;
		fail "no end of test"; }
	sleep 0.1
done
SOCK=$RUNDIR/dpdk_telemetry.v2
[ -S "$SOCK" ] || fail "no telemetry socket at $SOCK"

python3 "$HERE/telemetry_query.py" "$SOCK" /softrnic/ports /softrnic/devices /softrnic/qps \
	>"$DPDK_DIR/lists.json" || fail "telemetry client failed"
qp=$(python3 -c 'import json,sys
l=[json.loads(x) for x in open(sys.argv[1])]
assert l[0]["/softrnic/ports"] == [0], l[0]
assert l[1]["/softrnic/devices"] == [0], l[1]
q=l[2]["/softrnic/qps"]
assert len(q) == 1, l[2]
print(q[0])' "$DPDK_DIR/lists.json") || fail "lists: $(cat "$DPDK_DIR/lists.json")"
python3 "$HERE/telemetry_query.py" "$SOCK" /softrnic/port,0 /softrnic/device,0 \
	"/softrnic/qp,$qp" /softrnic/qp,999999 /softrnic/qp,x >"$DPDK_DIR/recs.json" ||
	fail "telemetry client failed"
python3 - "$DPDK_DIR/recs.json" $N $S <<'PY' || fail "records: $(cat "$DPDK_DIR/recs.json")"
import json, sys
port, dev, qp, none, bad = [json.loads(x) for x in open(sys.argv[1])]
n, s = int(sys.argv[2]), int(sys.argv[3])
port, dev, qp = port["/softrnic/port"], dev["/softrnic/device"], qp["/softrnic/qp"]
assert port["name"] == "net_memif0" and port["rx_pkts"] >= n and port["tcp_in_segs"] >= n \
    and port["link_up"] == 1, port
assert dev["name"] == "softrnic0" and dev["qps_open"] == 1, dev
for rec in (dev, qp):
    assert rec["rx_write"] == n and rec["rx_write_octets"] == n * s, rec
    assert rec["rx_send"] == 2 and rec["tx_send"] == 2 and rec["tx_write"] == 0, rec
assert none["/softrnic/qp"] is None and bad["/softrnic/qp"] is None, (none, bad)
PY
# Debian's script, as an operator runs it
out=$(echo /softrnic/device,0 | dpdk-telemetry.py -f "$PREFIX" 2>&1) ||
	fail "dpdk-telemetry.py failed: $out"
echo "$out" | grep -q "\"rx_write\": $N" || fail "dpdk-telemetry.py shows no rx_write $N: $out"

wait "$CLIENT_PID" || fail "client exited with status $?"
CLIENT_PID=
wait_server
echo "$TEST_NAME: OK"
