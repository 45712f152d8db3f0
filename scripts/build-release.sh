#!/usr/bin/env bash
# The release build softrnic's data path is meant to run as: -O3 with link-time optimisation
# and profile-guided optimisation (GCC's -fprofile-generate / -fprofile-use through meson's
# b_pgo), trained on the RNIC's own traffic. The layers are separate static libraries whose
# hot path crosses a dozen files a hop; LTO lets GCC inline across them and the profile tells
# it which side of each branch the data path takes, so the hot code is laid out straight
# (docs/dpdk.md "The release build"): each of LTO and the profile removes instructions from
# the RDMA Write hop, and together they cut its latency well below the plain release build's.
#
#   scripts/build-release.sh [DIR]      (default build-release)
#
# 1. meson setup DIR (release, b_lto, b_pgo=generate), build the trainers;
# 2. train: softrnic-perf over the kernel-socket transport on loopback and, when DPDK's memif
#    PMD is there, over the engine on memif between two processes (Write, Send and Read
#    latency, Write bandwidth with and without CRC) and softrnic-tcp (bulk and ping-pong);
#    each run bounded in time, any failure stops the script (no half-trained build);
# 3. b_pgo=use, build everything. Code the training never ran is compiled as without a
#    profile (meson.build adds -fprofile-partial-training), not squeezed for size.
# DIR/profile.stamp records the sources the profile was taken from (a hash of every C file,
# header and build file): when they have not changed, the script only builds. After a change
# it trains again; ninja in DIR alone would keep the old profile, of which GCC drops (with a
# warning) what no longer matches the code.
# Environment: BUILD_TARGETS (what step 3 builds; default everything), TRAIN_CPUS "a,b"
# (0,1), RETRAIN=1 (train even when the sources match). Exit status: 0 built, 1 a step failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
B=${1:-build-release}
CPUS=${TRAIN_CPUS:-0,1}
C0=${CPUS%,*}
C1=${CPUS#*,}
P=$B/apps/verbs/softrnic-perf
E=$B/apps/tcp/softrnic-tcp

die() { echo "build-release.sh: $*" >&2; exit 1; }

source scripts/bench-lib.sh   # bench_tmpdir, have_memif_pmd
bench_tmpdir build-release

# the state of the sources (every C file, header and build file, tracked or not, and this
# script): unchanged sources give the same line; outside a git clone there is none
source_state() {
	local files
	files=$(git ls-files -co --exclude-standard -- '*.c' '*.h' '*meson.build' \
		meson_options.txt scripts/build-release.sh 2>/dev/null) && [ -n "$files" ] || return 1
	sort <<<"$files" | xargs -d '\n' sha256sum | sha256sum
}
build_optimised() {
	echo "build-release.sh: optimised build in $B"
	# shellcheck disable=SC2086
	ninja -C "$B" -j2 ${BUILD_TARGETS:-} >"$T/ninja.log" 2>&1 || { tail -20 "$T/ninja.log"; die "optimised build"; }
	echo "build-release.sh: done ($B, LTO and PGO)"
}

state=$(source_state) || state=
if [ -n "$state" ] && [ "${RETRAIN:-0}" != 1 ] && [ -f "$B/profile.stamp" ] &&
	[ "$(cat "$B/profile.stamp")" = "$state" ]; then
	echo "build-release.sh: $B was trained on these sources (RETRAIN=1 trains again)"
	build_optimised
	exit 0
fi
rm -f "$B/profile.stamp"
if [ -f "$B/build.ninja" ]; then
	meson configure "$B" -Dbuildtype=release -Db_lto=true -Db_pgo=generate >/dev/null ||
		die "meson configure $B"
else
	meson setup "$B" -Dbuildtype=release -Db_lto=true -Db_pgo=generate >/dev/null ||
		die "meson setup $B"
fi
# a profile from an earlier training would be merged into this one
find "$B" -name '*.gcda' -delete
trainers=(apps/verbs/softrnic-perf)
have_memif=0
ninja -C "$B" -t targets all >"$T/targets" 2>/dev/null
if have_memif_pmd && grep -q '^apps/tcp/softrnic-tcp:' "$T/targets"; then
	have_memif=1
	trainers+=(apps/tcp/softrnic-tcp)
fi
echo "build-release.sh: instrumented build of ${trainers[*]} in $B"
ninja -C "$B" -j2 "${trainers[@]}" >"$T/ninja.log" 2>&1 || { tail -20 "$T/ninja.log"; die "instrumented build"; }

# pair NAME SERVER-ENV... -- CLIENT-ENV... -- 'SERVER CMD' 'CLIENT CMD': one trainer on each
# core, the client once the server listens, both bounded by 90 s. softrnic-tcp says when it
# listens; softrnic-perf says "Waiting for client" before it starts EAL and opens the port,
# which comes before its listener: 3 s more, as bench-tcp.sh.
pair() {
	local name=$1 senv=() cenv=()
	shift
	while [ "$1" != -- ]; do senv+=("$1"); shift; done
	shift
	while [ "$1" != -- ]; do cenv+=("$1"); shift; done
	shift
	# shellcheck disable=SC2086
	env "${senv[@]}" timeout -k 2 90 taskset -c "$C0" $1 >"$T/$name.srv" 2>&1 &
	local sp=$!
	PIDS+=("$sp")
	local i
	for i in $(seq 300); do
		grep -q "listening on port" "$T/$name.srv" 2>/dev/null && break
		if grep -q "Waiting for client" "$T/$name.srv" 2>/dev/null; then
			sleep 3
			break
		fi
		kill -0 "$sp" 2>/dev/null || break
		sleep 0.1
	done
	# shellcheck disable=SC2086
	env "${cenv[@]}" timeout -k 2 90 taskset -c "$C1" $2 >"$T/$name.cli" 2>&1
	local crc=$?
	wait "$sp"
	local src=$?
	[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] ||
		die "training run $name failed (client $crc, server $src): $(tail -2 "$T/$name.cli" "$T/$name.srv")"
	echo "build-release.sh: trained on $name"
}

# perf_socket NAME 'ARGS': softrnic-perf over the kernel-socket transport on loopback
perf_socket() {
	local port=$((20000 + RANDOM % 20000))
	pair "$1" SOFTRNIC_TRANSPORT=sock -- SOFTRNIC_TRANSPORT=sock -- \
		"$P $2 -b 127.0.0.1 -p $port -T 60" "$P $2 -p $port -T 60 127.0.0.1"
}

# perf_memif NAME 'ARGS' [VAR=VALUE...]: softrnic-perf over the engine on memif
perf_memif() {
	local name=$1 args=$2 eal="--no-huge -m 256 --vdev=net_memif0,socket=$T/$1.sock"
	shift 2
	pair "$name" "$@" SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_EAL="$eal,role=server" \
		SOFTRNIC_DPDK_IP=198.51.100.1/24 -- \
		"$@" SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_EAL="$eal,role=client" \
		SOFTRNIC_DPDK_IP=198.51.100.2/24 -- \
		"$P $args -b 198.51.100.1 -p 7471 -T 60" "$P $args -p 7471 -T 60 198.51.100.1"
}

# tcp_memif NAME 'SERVER ARGS' 'CLIENT ARGS': softrnic-tcp over memif
tcp_memif() {
	local eal="--no-huge -m 256 --vdev=net_memif0,socket=$T/$1.sock"
	pair "$1" SOFTRNIC_DPDK_EAL="$eal,role=server" SOFTRNIC_DPDK_IP=198.51.100.1/24 -- \
		SOFTRNIC_DPDK_EAL="$eal,role=client" SOFTRNIC_DPDK_IP=198.51.100.2/24 -- \
		"$E listen 5001 $2 --timeout 60" "$E connect 198.51.100.1:5001 $3 --timeout 60"
}

perf_socket sock-write-lat "-t write -l -s 8 -n 5000"
perf_socket sock-write-bw "-t write -s 65536 -n 5000"
perf_socket sock-send-lat "-t send -l -s 8 -n 5000"
if [ "$have_memif" = 1 ]; then
	perf_memif write-lat-P "-t write -l -s 8 -P -n 20000"
	perf_memif write-lat "-t write -l -s 8 -n 5000"
	perf_memif send-lat "-t send -l -s 8 -n 10000"
	perf_memif read-lat "-t read -l -s 8 -n 10000"
	perf_memif write-bw-crc "-t write -s 65536 -n 20000" SOFTRNIC_MPA=crc SOFTRNIC_DPDK_MTU=64000 \
		SOFTRNIC_DPDK_MEMIF_CSUM=off
	perf_memif write-bw "-t write -s 65536 -n 20000"
	perf_memif send-bw "-t send -s 4096 -n 20000"
	tcp_memif tcp-bulk --sink "--source 512M"
	tcp_memif tcp-pingpong --echo "--pingpong 20000 --size 8"
else
	echo "build-release.sh: DPDK's memif PMD missing: trained on the kernel-socket transport only"
fi

meson configure "$B" -Db_pgo=use >/dev/null || die "meson configure $B -Db_pgo=use"
build_optimised
[ -n "$state" ] && printf '%s\n' "$state" >"$B/profile.stamp"
exit 0
