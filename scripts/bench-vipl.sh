#!/usr/bin/env bash
# VIPL against raw verbs + librdmacm, two processes over loopback, the same exchanges, judged
# on interleaved runs (bench/vipl/vipl_mix): one server and one client process hold a VIPL
# connection and a raw verbs connection to each other and run blocks of the same exchange
# over them in turn (VIPL, raw, VIPL, ..., BLOCKS VIPL blocks and one raw block fewer); each
# raw block is compared with the mean of the VIPL blocks around it:
#   latency   vipl-pingpong's round trip (vp_pp_exchange) against raw_lat_exchange,
#             8 B, 64 B, 4 KiB: one-way p50 per block
#   bandwidth vipl-bw's stream, window 16, 64 KiB sends (vp_bw_*) against raw_bw_*: MB/s per block
# each in two polling modes applied to both sides alike: "spin" (-p: poll without pause) and
# "yield" (-y: sched_yield() after every empty poll, the rdma_bench convention).
# Why interleaved: on a shared machine one run's p50 moves a lot from the next, in slow and
# quick periods lasting seconds. Separate process pairs run back to back would see different
# periods, and their ratios would follow them; blocks of tens of milliseconds share them.
# Prints every command, each run's ratio with its quartiles, then per test the medians of the
# REPS runs (VIPL, raw, ratio) against the goals (latency <= 1.10x, bandwidth >= 1.0x minus
# noise). Informational: exit 0 unless a run fails. Environment: BUILD (default
# build-bench-vipl, a release tree set up on first use), REL (rd: the VIPL side's reliability
# level, rd / rr / ur; raw verbs has none, so REL=rr against REL=rd gives Reliable Reception's
# cost over Reliable Delivery, each against the same raw yardstick), KINDS ("lat bw": which
# tests), REPS (5), BLOCKS (10), LAT_ITERS
# (20000) and BW_ITERS (20000) per run, split into the blocks, MODES ("spin yield"), PIN=1 to
# pin server / client with taskset -c 0 / -c 1 (off by default: pinned, a spinning raw-verbs
# process starves softrnic's progress thread on its own core). vipl-pingpong, vipl-bw and
# vipl_raw stay the programs to run each side alone. Every run's figures (VIPL as softrnic, raw
# verbs as its baseline, the run's interleaved ratio) go to BENCH_OUT/DATE-bench-vipl.csv and
# .png (scripts/bench-lib.sh: BENCH_OUT defaults to bench/results, none writes nothing).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/bench-lib.sh   # free_port, bench_csv
BUILD=${BUILD:-build-bench-vipl}
REPS=${REPS:-5}
BLOCKS=${BLOCKS:-10}
REL=${REL:-rd}
KINDS=${KINDS:-lat bw}
LAT_ITERS=${LAT_ITERS:-20000}
BW_ITERS=${BW_ITERS:-20000}
WINDOW=16

if [ ! -f "$BUILD/build.ninja" ]; then
	meson setup "$BUILD" -Dbuildtype=release >/dev/null || exit 1
fi
ninja -C "$BUILD" -j2 bench/vipl/vipl_mix >/dev/null ||
	{ echo "bench-vipl.sh: build failed" >&2; exit 1; }
MIX=$BUILD/bench/vipl/vipl_mix
S_PIN=()
C_PIN=()
if [ -n "${PIN:-}" ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	S_PIN=(taskset -c 0)
	C_PIN=(taskset -c 1)
fi

SPID=
cleanup() { [ -n "$SPID" ] && kill "$SPID" 2>/dev/null; }
trap cleanup EXIT

wait_port() {
	for _ in $(seq 100); do
		[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ] && return 0
		sleep 0.05
	done
	return 1
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

# MODE: "spin" or "yield": the flag of both sides.
mode_flag() { if [ "$1" = yield ]; then echo -y; else echo -p; fi; }

# mix_run lat|bw MODE SIZE: one vipl_mix pair; prints "RATIO VIPL RAW Q1-Q3" from the client.
mix_run() {
	local kind=$1 vf ps pc pr n out
	local extra=()
	vf=$(mode_flag "$2")
	ps=$(free_port); pc=$(free_port "$ps"); pr=$(free_port "$pc")
	if [ "$kind" = bw ]; then n=$((BW_ITERS / BLOCKS)); extra=(-w "$WINDOW")
	else n=$((LAT_ITERS / BLOCKS)); fi
	local scmd=("$MIX" "$kind" "$pr" "$BLOCKS" -s "$vf" -r "$REL" -l "127.0.0.1:$ps" -n "$n" -S "$3"
		    "${extra[@]}")
	local ccmd=("$MIX" "$kind" "$pr" "$BLOCKS" -c "127.0.0.1:$ps" -l "127.0.0.1:$pc" "$vf" -r "$REL"
		    -n "$n" -S "$3" "${extra[@]}")
	echo "   \$ ${scmd[*]} &  ${ccmd[*]}" >&2
	"${S_PIN[@]}" timeout 300 "${scmd[@]}" >/dev/null &
	SPID=$!
	# the raw listener comes up first (the VIPL one after the raw connection)
	wait_port "$pr" || { echo "bench-vipl.sh: server not listening" >&2; return 1; }
	out=$("${C_PIN[@]}" timeout 300 "${ccmd[@]}") || { echo "client failed" >&2; return 1; }
	wait "$SPID" || { echo "server failed" >&2; SPID=; return 1; }
	SPID=
	echo "$out" | awk '/^vipl_mix / { sub(/^x/, "", $5); gsub(/[][]/, "", $6);
		print $5, $8, $10, $6 }'
}

echo "== bench-vipl: $REPS repetitions, $(nproc) CPUs, build $BUILD, VIPL at $REL ($KINDS)" \
	"${S_PIN[*]:+(server ${S_PIN[*]}, client ${C_PIN[*]})}, load $(cut -d' ' -f1-3 /proc/loadavg)"
bench_csv_open bench-vipl || exit 1
declare -A V R Q
MODES=${MODES:-spin yield}
KEYS=""
has_kind() { case " $KINDS " in *" $1 "*) return 0 ;; esac; return 1; }
for m in $MODES; do
	has_kind lat && KEYS="$KEYS $m-lat8 $m-lat64 $m-lat4096"
	has_kind bw && KEYS="$KEYS $m-bw"
done
# record KEY SIZE LINE: a run's "RATIO VIPL RAW Q1-Q3"
record() {
	local q v r iq
	read -r q v r iq <<<"$3"
	[ -n "$iq" ] || { echo "bench-vipl.sh: no result line" >&2; return 1; }
	local fig="${1%-*} latency p50 ($REL)" unit=us
	case $1 in *-bw) fig="${1%-*} bandwidth ($REL, window $WINDOW)" unit=MB/s ;; esac
	bench_csv "$fig" "$2" "$unit" "$v" "$r" "$rep" "$q"
	Q[$1]+="$q "
	V[$1]+="$v "
	R[$1]+="$r "
	LAST="x$q [$iq]: vipl $v, raw $r"
}
for rep in $(seq "$REPS"); do
	echo "-- run $rep"
	for m in $MODES; do
		for s in 8 64 4096; do
			has_kind lat || break
			record "$m-lat$s" "$s" "$(mix_run lat "$m" "$s")" || exit 1
			echo "   $m lat ${s}B: $LAST us"
		done
		has_kind bw || continue
		record "$m-bw" 65536 "$(mix_run bw "$m" 65536)" || exit 1
		echo "   $m bw 64KiB: $LAST MB/s"
	done
done

echo "== medians of $REPS runs (latency: one-way p50 in us; bandwidth: MB/s);" \
	"ratio: the median of the $REPS runs' VIPL/raw ratios"
printf " %-18s %12s %12s %8s  %s\n" test VIPL raw ratio goal
for k in $KEYS; do
	mv=$(echo "${V[$k]}" | tr ' ' '\n' | grep . | median)
	mr=$(echo "${R[$k]}" | tr ' ' '\n' | grep . | median)
	ratio=$(echo "${Q[$k]}" | tr ' ' '\n' | grep . | median)
	ratio=$(awk -v q="$ratio" 'BEGIN { printf "%.3f", q }')
	case $k in
	*-bw)
		goal=">= 1.0 (noise ~5%)"
		ok=$(awk -v r="$ratio" 'BEGIN { print (r >= 0.95) ? "met" : "MISSED" }') ;;
	*)
		goal="<= 1.10"
		ok=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.10) ? "met" : "MISSED" }') ;;
	esac
	printf " %-18s %12s %12s %8s  %s %s\n" "$k" "$mv" "$mr" "$ratio" "$goal" "$ok"
done
bench_plot
