#!/usr/bin/env bash
# What reading the counters costs the data path (docs/stats.md): the same softrnic-perf runs
# with softrnic-stat polling every process's statistics file 100 times a second (-i 0.01,
# JSON to a file) and with no reader, interleaved, BENCH_ROUNDS rounds:
#   1. RDMA Write 8 B latency over the DPDK engine on memif (-l -P, t_typical in us);
#   2. RDMA Write 64 KiB bandwidth over memif (MiB/s);
#   3. RDMA Write 8 B latency over kernel sockets on loopback (t_typical in us).
# Each line gives the median of the rounds without and with the reader, and their ratio
# (with / without: above 1 is slower for latency, below 1 is slower for bandwidth). A third
# mode runs the same reader on a decoy: copies of two such files, held locked, that nothing
# writes; it takes the same CPU time without touching the counters the data path writes, so
# what the real reader costs beyond the decoy is the data path's share. The reader's records
# read and its CPU time are counted, so a reader that did not read shows.
# Environment: BUILD_DIR (a tree of your own, set up as a plain release build on first use;
# unset: build-release, scripts/build-release.sh), BENCH_ROUNDS (default 3), BENCH_CPUS "a,b"
# (default 0,1: server on a, client on b; the reader is not pinned), BENCH_LAT_ITERS (20000),
# BENCH_BW_ITERS (20000 Writes of 64 KiB).
# Exit status: 0 done, 1 a run failed, 77 DPDK's memif PMD missing.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUILD_DIR:-build-release}
ROUNDS=${BENCH_ROUNDS:-3}
LAT_ITERS=${BENCH_LAT_ITERS:-20000}
BW_ITERS=${BENCH_BW_ITERS:-20000}
CPUS=${BENCH_CPUS:-0,1}
C0=${CPUS%,*}
C1=${CPUS#*,}

die() { echo "bench-stat.sh: $*" >&2; exit 1; }
source scripts/bench-lib.sh   # bench_tmpdir, bench_build, need_memif_pmd, bench_csv
need_memif_pmd bench-stat.sh
[ "$(nproc)" -ge 2 ] || die "needs two CPUs"
bench_build apps/verbs/softrnic-perf apps/stat/softrnic-stat
P=$B/apps/verbs/softrnic-perf
STAT=$B/apps/stat/softrnic-stat
bench_tmpdir bench-stat
export SOFTRNIC_STATS_DIR=$T/stats SOFTRNIC_CONF=
mkdir -p "$SOFTRNIC_STATS_DIR"

# pair TRANSPORT NAME 'PERF ARGS': a softrnic-perf server and client, the client's output in
# $T/NAME.cli. Fails when either side fails.
pair() {
	local tr=$1 name=$2 args=$3 port=$((20000 + RANDOM % 20000))
	local srv=(taskset -c "$C0" "$P" $args -p "$port" -T 50)
	local cli=(taskset -c "$C1" "$P" $args -p "$port" -T 50)
	if [ "$tr" = dpdk ]; then
		local eal="--no-huge -m 256 --vdev=net_memif0,socket=$T/$name.sock"
		env SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_EAL="$eal,role=server" \
			SOFTRNIC_DPDK_IP=198.51.100.1/24 timeout -k 2 60 "${srv[@]}" -b 198.51.100.1 \
			>"$T/$name.srv" 2>&1 &
		local sp=$!
		sleep 3   # EAL start and the port open come before the listener
		env SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_EAL="$eal,role=client" \
			SOFTRNIC_DPDK_IP=198.51.100.2/24 timeout -k 2 60 "${cli[@]}" 198.51.100.1 \
			>"$T/$name.cli" 2>&1
	else
		timeout -k 2 60 "${srv[@]}" >"$T/$name.srv" 2>&1 &
		local sp=$!
		for _ in $(seq 100); do ss -Hltn "sport = :$port" | grep -q . && break; sleep 0.05; done
		timeout -k 2 60 "${cli[@]}" 127.0.0.1 >"$T/$name.cli" 2>&1
	fi
	local crc=$?
	wait "$sp"
	local src=$?
	[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] ||
		die "$name: client $crc, server $src: $(tail -2 "$T/$name.cli")"
}

# one TRANSPORT NAME 'PERF ARGS' COLUMN READER(0|1): the run's figure (result line column)
one() {
	local rp=
	if [ "$5" != 0 ]; then
		# 1: the run's own files; decoy: copies of such files that nothing writes, so the
		# reader does the same work without touching what the data path writes
		local dir=$SOFTRNIC_STATS_DIR
		[ "$5" = decoy ] && dir=$T/decoy
		"$STAT" -j -i 0.01 -d "$dir" >"$T/$2.reader" 2>&1 &
		rp=$!
		PIDS+=("$rp")
	fi
	pair "$1" "$2" "$3"
	if [ -n "$rp" ]; then
		# the reader's own CPU time (utime + stime, in clock ticks): what reading takes from
		# the machine, beside what it takes from the data path
		awk '{ print $14 + $15 }' "/proc/$rp/stat" >>"$T/ticks-$5"
		kill "$rp"
		wait "$rp" 2>/dev/null
		[ "$5" = 1 ] && grep -c '"comm"' "$T/$2.reader" >>"$T/reads"
		[ "$5" = decoy ] && grep -c '"comm"' "$T/$2.reader" >>"$T/decoy-reads"
	fi
	awk -v c="$4" '$1 ~ /^[0-9]+$/ && NF >= 5 { v = $c } END { print v }' "$T/$2.cli"
}

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

tests=(
	"dpdk|lat-memif|-t write -l -s 8 -n $LAT_ITERS -P -y|5|RDMA Write 8 B latency, memif (us)|us|8"
	"dpdk|bw-memif|-t write -s 65536 -n $BW_ITERS -y|4|RDMA Write 64 KiB bandwidth, memif (MiB/s)|MiB/s|65536"
	"sock|lat-sock|-t write -l -s 8 -n $LAT_ITERS -y|5|RDMA Write 8 B latency, kernel sockets (us)|us|8"
)
echo "bench-stat.sh: $ROUNDS rounds, build $B, CPUs $CPUS, reader softrnic-stat -j -i 0.01"
# The decoy: the files of a kernel-socket pair taken while it runs (held by -L), renamed to
# pids that hold them locked as their owners would, so the reader reads them as live files.
decoy() {
	local port=$((20000 + RANDOM % 20000)) n=0
	mkdir -p "$T/decoy"
	timeout 30 "$P" -p "$port" -y -L 3 >"$T/decoy.srv" 2>&1 &
	PIDS+=("$!")
	for _ in $(seq 100); do ss -Hltn "sport = :$port" | grep -q . && break; sleep 0.05; done
	timeout 30 "$P" -p "$port" -y -L 3 -t write -s 8 -n 1000 127.0.0.1 >"$T/decoy.cli" 2>&1 &
	PIDS+=("$!")
	for _ in $(seq 100); do grep -q lingering "$T/decoy.cli" && break; sleep 0.05; done
	for f in "$SOFTRNIC_STATS_DIR"/softrnic-*.stats; do
		cp "$f" "$T/decoy/${f##*/}"
		(exec 9<"$T/decoy/${f##*/}" && flock -s 9 && exec sleep 100000) &
		PIDS+=("$!")
		n=$((n + 1))
	done
	[ "$n" -eq 2 ] || die "decoy: $n files, expected 2"
	wait "${PIDS[-3]}" "${PIDS[-4]}" 2>/dev/null
}
decoy
bench_csv_open bench-stat || exit 1

for t in "${tests[@]}"; do
	IFS='|' read -r tr name args col what unit size <<<"$t"
	off=() on=() dec=()
	for r in $(seq "$ROUNDS"); do
		off+=("$(one "$tr" "$name-off-$r" "$args" "$col" 0)")
		on+=("$(one "$tr" "$name-on-$r" "$args" "$col" 1)")
		dec+=("$(one "$tr" "$name-decoy-$r" "$args" "$col" decoy)")
		# softrnic: with a reader; baseline: the same round without one
		bench_csv "$tr write with softrnic-stat reading" "$size" "$unit" "${on[-1]}" \
			"${off[-1]}" "$r"
		bench_csv "$tr write with the decoy reader" "$size" "$unit" "${dec[-1]}" "${off[-1]}" "$r"
	done
	mo=$(median "${off[@]}")
	mi=$(median "${on[@]}")
	md=$(median "${dec[@]}")
	echo "$what: without reader ${off[*]} (median $mo); with reader ${on[*]} (median $mi);" \
		"with the decoy reader ${dec[*]} (median $md); ratio with/without" \
		"$(awk -v a="$mi" -v b="$mo" 'BEGIN { printf "%.3f", a / b }'), decoy/without" \
		"$(awk -v a="$md" -v b="$mo" 'BEGIN { printf "%.3f", a / b }')"
done
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ s += $1 } END { printf "%.2f", s / hz }' "$1"; }
echo "reader: $(awk '{ s += $1 } END { print s }' "$T/reads") process records read," \
	"CPU time $(cpu "$T/ticks-1") s"
echo "decoy reader: $(awk '{ s += $1 } END { print s }' "$T/decoy-reads") process records read," \
	"CPU time $(cpu "$T/ticks-decoy") s"
bench_plot
