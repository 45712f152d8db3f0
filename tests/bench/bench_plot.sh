#!/usr/bin/env bash
# The benchmarks' figures (scripts/bench-lib.sh's CSV, scripts/bench-plot.sh's PNG):
#   1. the kept tests/bench/sample.csv (every kind of panel: by size, a ratio at one size, a
#      value without a baseline, a run that did not complete) is drawn into a valid PNG;
#   2. a CSV of another schema and a row of seven fields are refused, with no PNG;
#   3. a tiny real run of scripts/bench-rdma.sh's by-size section (two sizes, a few hundred
#      iterations, on the build tree under test) writes DATE-bench-rdma.csv with the schema's
#      columns, a row per figure and size with values, and DATE-bench-rdma.png beside it.
# The figures' values are not judged (a debug build on a shared machine); their presence is.
# Usage: bench_plot.sh SOURCE_ROOT BUILD_DIR
set -u
TEST_NAME=bench_plot
. "$(dirname "$0")/../lib/common.sh"
SRC=$(cd "${1:?usage: bench_plot.sh SOURCE_ROOT BUILD_DIR}" && pwd)
BUILD=$(cd "${2:?usage: bench_plot.sh SOURCE_ROOT BUILD_DIR}" && pwd)
need_cmd gnuplot gnuplot-nox
need_cmd file file
W=$(mktemp -d /tmp/srn-bench-plot-test.XXXXXX)
cleanup_w() { rm -rf "$W"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_w"
HEADER=bench,figure,size,unit,softrnic,baseline,ratio,run

# check_png FILE MIN_HEIGHT: a PNG (signature, IHDR), 1000 pixels wide, at least MIN_HEIGHT
# tall, and more than 20 KB (a blank or one-line image is far smaller)
check_png() {
	[ -f "$1" ] || fail "no $1"
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		fail "$1 does not start with the PNG signature"
	[ "$(head -c 16 "$1" | tail -c 4)" = IHDR ] || fail "$1: no IHDR chunk first"
	local w h size
	w=$(od -An -tu1 -j 16 -N 4 "$1" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
	h=$(od -An -tu1 -j 20 -N 4 "$1" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
	[ "$w" -eq 1000 ] || fail "$1 is $w pixels wide, not 1000"
	[ "$h" -ge "$2" ] || fail "$1 is $h pixels tall, fewer than $2"
	file "$1" | grep -q "PNG image data, $w x $h" || fail "file(1) on $1: $(file "$1")"
	size=$(stat -c %s "$1")
	[ "$size" -gt 20000 ] || fail "$1 has only $size octets"
	echo "$1: PNG $w x $h, $size octets"
}

# 1. the kept CSV: two by-size panels, the ratio bars, the values without a baseline (1318
# pixels tall: a panel missing would take 160 or more)
bash "$SRC/scripts/bench-plot.sh" "$SRC/tests/bench/sample.csv" "$W/sample.png" ||
	fail "bench-plot.sh failed on tests/bench/sample.csv"
check_png "$W/sample.png" 1300

# 2. refused: another header, a short row
{ echo "bench,figure,size,unit,value"; echo "x,y,8,us,1"; } >"$W/other.csv"
if bash "$SRC/scripts/bench-plot.sh" "$W/other.csv" "$W/other.png" 2>"$W/err"; then
	fail "bench-plot.sh drew a CSV of another schema"
fi
grep -q "not the bench CSV schema" "$W/err" || fail "no reason given: $(cat "$W/err")"
[ ! -e "$W/other.png" ] || fail "a PNG was written for a CSV of another schema"
{ echo "$HEADER"; echo "b,lat,8,us,1.0,2.0,0.5"; } >"$W/short.csv"
if bash "$SRC/scripts/bench-plot.sh" "$W/short.csv" "$W/short.png" 2>"$W/err"; then
	fail "bench-plot.sh drew a row of seven fields"
fi
grep -q "7 fields, not 8" "$W/err" || fail "no reason given: $(cat "$W/err")"

# 3. a real run, in brief: bench-rdma.sh's by-size section on this build tree
command -v iperf3 >/dev/null 2>&1 || skip "iperf3 missing (scripts/deps.sh)"
[ "$(nproc)" -ge 2 ] || skip "bench-rdma.sh's sizes need two CPUs"
for p in apps/verbs/softrnic-perf tests/tcp/linux/ktcp_peer; do
	[ -x "$BUILD/$p" ] || fail "$p not built in $BUILD"
done
mkdir -p "$W/out"
BENCH_OUT=$W/out BUILD_DIR=$BUILD BENCH_NO_BUILD=1 BENCH_RDMA_BENCH=0 BENCH_SIZES="64 8192" \
	BENCH_SWEEP_ITERS=300 BENCH_SWEEP_SECONDS=1 timeout 240 bash "$SRC/scripts/bench-rdma.sh" \
	>"$W/run.log" 2>&1 || { cat "$W/run.log"; fail "scripts/bench-rdma.sh failed"; }
cat "$W/run.log"
# DATE-bench-rdma: the date the run began, or the next when it ran over midnight
set -- "$W"/out/*-bench-rdma.csv
{ [ $# -eq 1 ] && [ -f "$1" ]; } || fail "not one DATE-bench-rdma.csv in BENCH_OUT: $(ls "$W/out")"
stem=${1%.csv}
case ${stem##*/} in
[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]-bench-rdma) ;;
*) fail "$1 is not named DATE-bench-rdma.csv" ;;
esac
[ "$(head -n 1 "$stem.csv")" = "$HEADER" ] || fail "CSV header: $(head -n 1 "$stem.csv")"
# every row: 8 fields, bench-rdma, a size of the run, a positive value and baseline, a ratio
awk -F, 'NR > 1 && !(NF == 8 && $1 == "bench-rdma" && ($3 == 64 || $3 == 8192) &&
	$5 + 0 > 0 && $6 + 0 > 0 && $7 + 0 > 0 && $8 == 1) { print "bad row " NR ": " $0; bad = 1 }
	END { exit bad }' "$stem.csv" || fail "rows not of the schema (above)"
rows=$(($(wc -l <"$stem.csv") - 1))
[ "$rows" -eq 4 ] || fail "$rows rows, expected 4 (latency and bandwidth at 2 sizes)"
for u in us Gbit/s; do
	n=$(awk -F, -v u="$u" '$4 == u' "$stem.csv" | wc -l)
	[ "$n" -eq 2 ] || fail "$n rows in $u, expected 2"
done
check_png "$stem.png" 900
echo "$TEST_NAME: OK"
