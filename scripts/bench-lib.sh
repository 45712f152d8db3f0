# shellcheck shell=bash disable=SC2119,SC2120
# Baselines, the build and the CSV figures the benchmarks share (sourced by every
# scripts/bench*.sh and by build-release.sh; bash). The caller defines die, B (the build tree),
# C0 / C1 (the two cores: server on C0, client on C1) and K (tests/tcp/linux/ktcp_peer), and
# calls bench_tmpdir for T and PIDS.

# bench_tmpdir NAME: a private temp dir in T and an empty PIDS; on exit every process in PIDS
# is killed and T removed
bench_tmpdir() {
	T=$(mktemp -d "/tmp/srn-$1.XXXXXX") || die "mktemp failed"
	PIDS=()
	trap bench_cleanup EXIT
	trap 'exit 1' INT TERM
}
bench_cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$T"
}

# have_memif_pmd: whether DPDK's memif PMD is installed
have_memif_pmd() { ls /usr/lib/*/dpdk/pmds-*/librte_net_memif.so* >/dev/null 2>&1; }

# need_memif_pmd SCRIPT: exit 77 (skipped), naming SCRIPT, when DPDK's memif PMD is missing
need_memif_pmd() {
	have_memif_pmd && return 0
	echo "$1: DPDK's memif PMD missing (scripts/deps.sh)" >&2
	exit 77
}

# bench_build TARGET...: the build the benchmark measures, in $B. With BUILD_DIR unset
# (B is build-release) scripts/build-release.sh makes it: LTO and PGO, trained again when the
# sources changed; BUILD_DIR names a tree of the caller's, set up as a plain release build on
# first use. Dies when a target cannot be built.
bench_build() {
	if [ -z "${BUILD_DIR:-}" ]; then
		BUILD_TARGETS="$*" bash scripts/build-release.sh "$B" ||
			die "scripts/build-release.sh $B failed"
		return
	fi
	if [ ! -f "$B/build.ninja" ]; then
		meson setup "$B" -Dbuildtype=release >/dev/null || die "meson setup $B"
	fi
	ninja -C "$B" -j2 "$@" >/dev/null || die "could not build $* in $B"
}

# field FILE PREFIX KEY: the value of KEY=... on the last line of FILE that starts with PREFIX
field() { grep "^$2" "$1" | tail -1 | tr ' ' '\n' | sed -n "s/^$3=//p"; }

# free_port [AFTER]: a TCP port no socket uses now, in any state (a listener cannot bind a port
# that a connection in TIME_WAIT still holds); above AFTER when given: the function runs in a
# subshell, so the second port of a pair must be asked for relative to the first.
free_port() {
	local p=$((${1:-$((20000 + RANDOM % 20000))} + 1))
	while [ -n "$(ss -Hatn "( sport = :$p or dport = :$p )" 2>/dev/null)" ]; do
		p=$((p + 1))
	done
	echo "$p"
}

# wait_listening PORT PID: until a socket listens on TCP PORT (20 s at most: a server pinned to
# a core a loaded machine shares can take seconds to start); fails when PID has ended first
wait_listening() {
	for _ in $(seq 400); do
		ss -Hltn "sport = :$1" | grep -q . && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# kernel_pair NAME 'SERVER ARGS' 'CLIENT ARGS': ktcp_peer over loopback; $T/NAME.srv and .cli
kernel_pair() {
	local name=$1 port
	port=$(free_port)
	# shellcheck disable=SC2086
	timeout 200 taskset -c "$C0" "$K" listen "$port" $2 --timeout 180 >"$T/$name.srv" 2>&1 &
	local sp=$!
	PIDS+=("$sp")
	wait_listening "$port" "$sp" || die "$name: server not listening: $(tail -n 2 "$T/$name.srv")"
	# shellcheck disable=SC2086
	timeout 200 taskset -c "$C1" "$K" connect "127.0.0.1:$port" $3 --timeout 180 \
		>"$T/$name.cli" 2>&1 || { tail "$T/$name.cli" >&2; die "$name: client failed"; }
	wait "$sp" || die "$name: server failed"
}

# iperf3_loopback SECS [LEN]: one iperf3 stream over loopback for SECS seconds, writes of LEN
# octets (iperf3 -l; default its 128 KiB); Gbit/s in ip_gbps (a variable, not output: in a
# command substitution die and PIDS would not reach the caller)
iperf3_loopback() {
	local port
	port=$(free_port)
	taskset -c "$C0" iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
	PIDS+=("$!")
	sleep 0.5
	timeout $(($1 + 30)) taskset -c "$C1" iperf3 -c 127.0.0.1 -p "$port" -t "$1" \
		${2:+-l "$2"} -J >"$T/iperf.json" || die "iperf3 failed"
	# shellcheck disable=SC2034 # the callers read it
	ip_gbps=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.3f" % (d["end"]["sum_received"]["bits_per_second"]/1e9))' "$T/iperf.json")
}

# Figures as CSV, one schema for every scripts/bench*.sh (bench/results/README.md):
#   bench,figure,size,unit,softrnic,baseline,ratio,run
# bench_csv_open NAME: starts BENCH_OUT/DATE-NAME.csv (BENCH_OUT: default bench/results; DATE:
# today, UTC), the header only; BENCH_CSV names it. BENCH_OUT=none writes nothing.
BENCH_CSV_HEADER=bench,figure,size,unit,softrnic,baseline,ratio,run
bench_csv_open() {
	BENCH_CSV=
	BENCH_NAME=$1
	local dir=${BENCH_OUT:-bench/results}
	[ "$dir" = none ] && return 0
	mkdir -p "$dir" || { echo "bench: cannot make $dir" >&2; return 1; }
	BENCH_CSV=$dir/$(date -u +%F)-$1.csv
	echo "$BENCH_CSV_HEADER" >"$BENCH_CSV"
}

# bench_csv FIGURE SIZE UNIT SOFTRNIC [BASELINE [RUN [RATIO]]]: one row. SIZE: message octets,
# empty for a stream; RATIO: softrnic / baseline unless the caller gives its own (an
# interleaved run's); RUN: the round or repetition (default 1).
bench_csv() {
	[ -n "${BENCH_CSV:-}" ] || return 0
	local ratio=${7:-}
	[ -n "$ratio" ] || [ -z "${5:-}" ] ||
		ratio=$(awk -v a="$4" -v b="$5" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.4g", a / b }')
	printf '%s,%s,%s,%s,%s,%s,%s,%s\n' "$BENCH_NAME" "${1//,/;}" "$2" "$3" "$4" "${5:-}" \
		"$ratio" "${6:-1}" >>"$BENCH_CSV"
}

# bench_plot: draws BENCH_CSV into the PNG of the same stem (scripts/bench-plot.sh, gnuplot).
# A plot that cannot be drawn is reported; the figures stand without it.
bench_plot() {
	[ -n "${BENCH_CSV:-}" ] || return 0
	local png=${BENCH_CSV%.csv}.png
	if bash scripts/bench-plot.sh "$BENCH_CSV" "$png"; then
		echo "figures: $BENCH_CSV, plot: $png"
	else
		echo "figures: $BENCH_CSV (no plot: scripts/bench-plot.sh failed)" >&2
	fi
}
