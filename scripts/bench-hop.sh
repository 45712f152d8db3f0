#!/usr/bin/env bash
# Instructions per RDMA Write hop over the engine on memif, counted by callgrind: a measure of
# the latency path that the machine's state hardly moves (docs/testing.md). The Write
# latency of scripts/bench-tcp.sh swings widely with the state of a shared host, while the
# count of instructions a hop executes barely moves on a quiet machine (a busy one adds empty
# polls, which are counted and shown), so a change to the path is judged here first, then by
# interleaved latency runs.
#
# softrnic-perf -t write -l -s 8 -P as in bench-tcp.sh section 4: the server runs under
# callgrind (one thread a file), the client natively. Each server iteration is one hop:
# the peer's Write is received and placed, then the server posts its own. Two runs, of
# BENCH_HOP_N1 and BENCH_HOP_N2 iterations; the difference of the main thread's counts over
# N2 - N1 is the cost of one hop without start-up and tear-down. Printed: the total, and the
# inclusive cost of the parts of a hop (functions that the release build keeps whole; one
# inlined shows "-"), and the CQ polls a hop: above 1 the server waited for its client (a busy
# machine), and the total, the poll's and the port's lines count the empty polls too.
# Environment: BUILD_DIR (default build-bench-tcp, a plain release build set up on first use:
# a profile-guided build would move the count with its training; BUILD_DIR=build-release counts
# the release scripts/build-release.sh makes),
# BENCH_HOP_N1 / BENCH_HOP_N2 (10000 / 40000), BENCH_CPUS "a,b" (0,1), BENCH_HOP_KEEP (a
# directory: the callgrind files are copied there, for callgrind_annotate), and any SOFTRNIC_*
# setting for both ends (SOFTRNIC_MPA=crc, SOFTRNIC_DPDK_MEMIF_CSUM=off ...), BENCH_OUT (the
# figures' CSV and PNG, DATE-bench-hop.csv / .png: default bench/results, none writes nothing:
# instructions a hop per part, no baseline, drawn as bars).
# Exit status: 0 done, 1 a run failed, 77 valgrind or DPDK's memif PMD missing.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUILD_DIR:-build-bench-tcp}
N1=${BENCH_HOP_N1:-10000}
N2=${BENCH_HOP_N2:-40000}
CPUS=${BENCH_CPUS:-0,1}
C0=${CPUS%,*}
C1=${CPUS#*,}

die() { echo "bench-hop.sh: $*" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "bench-hop.sh: valgrind missing (scripts/deps.sh)" >&2; exit 77; }
source scripts/bench-lib.sh   # need_memif_pmd
need_memif_pmd bench-hop.sh
[ "$N2" -gt "$N1" ] || die "BENCH_HOP_N2 must exceed BENCH_HOP_N1"
if [ ! -f "$B/build.ninja" ]; then
	meson setup "$B" -Dbuildtype=release >/dev/null || die "meson setup $B"
fi
ninja -C "$B" -j2 apps/verbs/softrnic-perf >/dev/null || die "could not build softrnic-perf in $B"
P=$B/apps/verbs/softrnic-perf

T=$(mktemp -d /tmp/srn-bench-hop.XXXXXX)
SP=
cleanup() {
	[ -n "$SP" ] && { kill "$SP" 2>/dev/null; wait "$SP" 2>/dev/null; }
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
bench_csv_open bench-hop || exit 1

# run N: one server under callgrind, one native client; the server's files in $T/cg.N.out-*
run() {
	local n=$1 eal="--no-huge -m 256 --vdev=net_memif0,socket=$T/m$1.sock"
	env SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_EAL="$eal,role=server" \
		SOFTRNIC_DPDK_IP=198.51.100.1/24 timeout -k 2 600 taskset -c "$C0" \
		valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$T/cg.$n.out" \
		"$P" -t write -l -s 8 -P -n "$n" -b 198.51.100.1 -p 7471 -T 120 >"$T/srv.$n" 2>&1 &
	SP=$!
	# valgrind's start-up and EAL under it take seconds; the server listens after its
	# memif link is up, which needs the client's port: wait for the banner, then a while
	local i
	for i in $(seq 100); do
		grep -q "Waiting for client" "$T/srv.$n" 2>/dev/null && break
		sleep 0.2
	done
	sleep 8
	env SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_EAL="$eal,role=client" \
		SOFTRNIC_DPDK_IP=198.51.100.2/24 timeout -k 2 600 taskset -c "$C1" \
		"$P" -t write -l -s 8 -P -n "$n" -p 7471 -T 120 198.51.100.1 >"$T/cli.$n" 2>&1
	local crc=$?
	wait "$SP"
	local src=$?
	SP=
	[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] && [ -f "$T/cg.$n.out-01" ] ||
		die "run of $n iterations failed (client $crc, server $src): $(tail -2 "$T/cli.$n" "$T/srv.$n")"
}

echo "bench-hop.sh: softrnic-perf -t write -l -s 8 -P, server under callgrind, $N1 and $N2 iterations"
run "$N1"
run "$N2"
# From $T: run in the tree, callgrind_annotate shortens a -g build's file names and leaves out
# the callers inlined from headers (sv_poll_cq's, in perf_reap), and the polls read 0.
for n in "$N1" "$N2"; do
	(cd "$T" && callgrind_annotate --inclusive=yes --auto=no --threshold=100 "cg.$n.out-01" \
		>"incl.$n" 2>/dev/null) || die "callgrind_annotate failed"
	(cd "$T" && callgrind_annotate --tree=caller --auto=no --threshold=100 "cg.$n.out-01" \
		>"tree.$n" 2>/dev/null) || die "callgrind_annotate failed"
done
if [ -n "${BENCH_HOP_KEEP:-}" ]; then
	mkdir -p "$BENCH_HOP_KEEP" && cp "$T"/cg.*.out-* "$BENCH_HOP_KEEP"/ ||
		die "could not copy the callgrind files to $BENCH_HOP_KEEP"
fi
python3 - "$T/incl.$N1" "$T/incl.$N2" "$((N2 - N1))" "$T/tree.$N1" "$T/tree.$N2" \
	"$T/rows" <<'EOF' || die "summary failed"
import re, sys
def load(path):
    costs = {}
    for line in open(path):
        m = re.match(r'^\s*([\d,]+) \([^)]*\)\s+(\S+)', line)
        if not m:
            continue
        name = m.group(2)
        name = 'TOTAL' if name == 'PROGRAM' else name.rsplit(':', 1)[-1]
        # a static function may exist in several files: keep the largest
        costs[name] = max(costs.get(name, 0), int(m.group(1).replace(',', '')))
    return costs
a, b, n = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3])
def per_hop(name):
    if name not in a or name not in b:
        return None
    return (b[name] - a[name]) / n
# (depth, function, what it is)
parts = [
    (0, 'TOTAL', 'one hop: receive and place the peer\'s Write, post one'),
    (1, 'sv_poll_cq', 'ibv_poll_cq with the device\'s progress (-P)'),
    (2, 'dpdk_port_pass_locked', 'a pass of the port'),
    (3, 'rx0', 'memif receive burst'),
    (3, 'tcp_stack_input', 'Ethernet, IPv4, TCP input'),
    (2, 'rx_feed_pieces', 'MPA, DDP, RDMAP receive and placement'),
    (1, 'sv_post_send', 'ibv_post_send'),
    (2, 'rn_qp_post_send', 'the QP: checks, send queue, framing'),
    (3, 'dp_sendv', 'the transport: FPDU to the engine'),
    (4, 'tcp_send', 'TCP send: queue, segment, headers'),
    (4, 'tx0', 'memif transmit burst'),
]
def calls(path, fn):
    """Calls of fn: the counts on the caller lines above its entry in a --tree=caller listing."""
    total, block = 0, []
    for line in open(path):
        if not line.strip():
            block = []
        elif re.search(r'\*\s+\S*:' + re.escape(fn) + r'(\s|$)', line):
            return sum(int(c.replace(',', '')) for c in
                       re.findall(r'<\s+\S+ \(([\d,]+)x\)', ''.join(block)))
        else:
            block.append(line)
    return total
polls = (calls(sys.argv[5], 'sv_poll_cq') - calls(sys.argv[4], 'sv_poll_cq')) / n
print(f"{'instructions':>12}  part of one hop")
rows = open(sys.argv[6], "w")
for depth, fn, what in parts:
    v = per_hop(fn)
    cost = f"{v:12.0f}" if v is not None else f"{'-':>12}"
    print(f"{cost}  {'  ' * depth}{what} ({fn})")
    if v is not None:
        rows.write(f"{fn}|{v:.0f}\n")
# Each poll beyond the first finds nothing: the server waited for the client. Those add to
# the total and to the poll's and the port's lines, not to the others.
print(f"{polls:12.2f}  CQ polls a hop (1 when the client never kept the server waiting)")
rows.write(f"CQ polls a hop|{polls:.2f}\n")
EOF
while IFS='|' read -r fig v; do
	case $fig in
	"CQ polls"*) bench_csv "$fig" 8 polls "$v" ;;
	*) bench_csv "$fig" 8 instructions "$v" ;;
	esac
done <"$T/rows"
bench_plot
