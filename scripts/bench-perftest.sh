#!/usr/bin/env bash
# Debian's perftest, unmodified, over softrnic on DPDK, in one run:
#   1. perftest -R over our drop-in libibverbs.so.1 / librdmacm.so.1 with
#      SOFTRNIC_TRANSPORT=dpdk, two processes over net_memif, one core each (taskset):
#      ib_write_lat 8 B, ib_send_lat 8 B, ib_write_bw 64 KiB, ib_send_bw 64 KiB;
#   2. kernel TCP on loopback, same pinning: 8-octet ping-pong (tests/tcp/linux/ktcp_peer
#      --pingpong, TCP_NODELAY) and iperf3 (one stream);
#   3. the ratios (kernel ping-pong p50 / perftest t_typical; perftest BW / iperf3);
#   4. for reference only: the same perftest on Linux siw in one QEMU guest (SIWVM_SMP=2,
#      loopback inside the guest over its eth0). The guest runs under TCG (software
#      emulation, docs/interop.md): its numbers say nothing about siw on hardware.
# Environment: BUILD_DIR (a tree of your own, set up as a plain release build on first use;
# it must hold verbs/libibverbs.so.1, verbs/rdmacm/librdmacm.so.1, tests/tcp/linux/ktcp_peer;
# unset: build-release, made by scripts/build-release.sh with LTO and PGO),
# BENCH_CPUS "a,b" (default 0,1), BENCH_LAT_ITERS (default 10000), BENCH_BW_ITERS (default
# 5000), BENCH_PINGS (kernel ping-pong, default 100000), BENCH_SECONDS (iperf3, default 5),
# BENCH_SIW=0 skips step 4 (it needs root and siw-vm; ~1-2 min), BENCH_OUT (the figures' CSV and
# PNG, DATE-bench-perftest.csv / .png: default bench/results, none writes nothing).
# Exit status: 0 done, 1 a run failed, 77 perftest, iperf3 or DPDK's memif PMD missing.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
B=${BUILD_DIR:-build-release}
CPUS=${BENCH_CPUS:-0,1}
C0=${CPUS%,*}
C1=${CPUS#*,}
LITER=${BENCH_LAT_ITERS:-10000}
BITER=${BENCH_BW_ITERS:-5000}
PINGS=${BENCH_PINGS:-100000}
SECS=${BENCH_SECONDS:-5}

die() { echo "bench-perftest.sh: $*" >&2; exit 1; }
for c in ib_write_lat ib_send_lat ib_write_bw ib_send_bw iperf3; do
	command -v $c >/dev/null || { echo "bench-perftest.sh: $c missing (scripts/deps.sh)" >&2; exit 77; }
done
source scripts/bench-lib.sh   # need_memif_pmd, bench_build, field, kernel_pair, iperf3_loopback
need_memif_pmd bench-perftest.sh
[ "$(nproc)" -ge 2 ] || die "needs two CPUs"

if [ -z "${BUILD_DIR:-}" ]; then
	bench_build   # build-release, whole: LTO and PGO (scripts/build-release.sh)
elif [ ! -f "$B/build.ninja" ]; then
	meson setup "$B" -Dbuildtype=release >/dev/null || die "meson setup $B"
fi
# the libraries' ninja targets carry the full version (verbs/libibverbs.so.1.14.44)
libs=$(ninja -C "$B" -t targets all 2>/dev/null |
	sed -nE 's/^(verbs\/(rdmacm\/)?lib(ibverbs|rdmacm)\.so\.[0-9.]+): c_LINKER$/\1/p')
[ -n "$libs" ] || die "no drop-in library targets in $B"
# shellcheck disable=SC2086
ninja -C "$B" -j2 $libs tests/tcp/linux/ktcp_peer >/dev/null ||
	die "could not build the drop-in libraries and ktcp_peer in $B"
K=$B/tests/tcp/linux/ktcp_peer

bench_tmpdir bench-perftest
bench_csv_open bench-perftest || exit 1
# a private copy of the libraries: the build tree may be rebuilt while we run
cp -aL "$B/verbs/libibverbs.so.1" "$B/verbs/rdmacm/librdmacm.so.1" "$T/" || die "copy libraries"

# perf_pair NAME PROGRAM ARGS: perftest -R server (core C0) and client (core C1) over a fresh
# memif link; the client's output in $T/NAME.cli. Fails when either side fails or overruns.
perf_pair() {
	local name=$1 prog=$2 eal="--no-huge -m 256 --vdev=net_memif0,socket=$T/$1.sock" sp crc src
	shift 2
	LD_LIBRARY_PATH=$T SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_EAL="-l $C0 $eal,role=server" \
		SOFTRNIC_DPDK_IP=198.51.100.1/24 timeout -k 2 120 taskset -c "$C0" \
		"$prog" -R -p 18515 "$@" >"$T/$name.srv" 2>&1 &
	sp=$!
	PIDS+=("$sp")
	# EAL start, the port open and rdma_listen: a DPDK listener is invisible to ss, and a
	# client arriving before it listens is refused (docs/dropin.md)
	sleep 3
	LD_LIBRARY_PATH=$T SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_EAL="-l $C1 $eal,role=client" \
		SOFTRNIC_DPDK_IP=198.51.100.2/24 timeout -k 2 120 taskset -c "$C1" \
		"$prog" -R -p 18515 "$@" 198.51.100.1 >"$T/$name.cli" 2>&1
	crc=$?
	wait "$sp"
	src=$?
	[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] && return 0
	echo "$name: client $crc server $src" >&2
	grep -v '^EAL\|^ *$' "$T/$name.cli" | tail -n 5 >&2
	return 1
}

# perftest's latency row: bytes iters t_min t_max t_typical t_avg t_stdev 99% 99.9% (usec)
lat_row() { awk -v s="$2" '$1 == s && NF >= 9 && $2 ~ /^[0-9]+$/ { print $5, $8 }' "$1" | tail -1; }
# bandwidth row with --report_gbits: bytes iters peak average[Gb/s] msgrate
bw_avg() { awk -v s="$2" '$1 == s && NF >= 5 && $2 ~ /^[0-9]+$/ { print $4 }' "$1" | tail -1; }

echo "== bench-perftest: $(nproc) CPUs, cores $C0/$C1, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), build $B ($(perftest_v=$(dpkg-query -W -f '${Version}' perftest 2>/dev/null); echo "perftest ${perftest_v:-?}"))"
fails=0
wl50=0 wl99=0 sl50=0 sl99=0 wbw=0 sbw=0
echo "-- 1. perftest over softrnic on DPDK memif (drop-in libraries)"
if perf_pair wlat ib_write_lat -s 8 -n "$LITER"; then
	read -r wl50 wl99 <<<"$(lat_row "$T/wlat.cli" 8)"
	echo "ib_write_lat 8 B: t_typical $wl50 us, p99 $wl99 us"
else fails=$((fails + 1)); fi
if perf_pair slat ib_send_lat -s 8 -n "$LITER"; then
	read -r sl50 sl99 <<<"$(lat_row "$T/slat.cli" 8)"
	echo "ib_send_lat 8 B: t_typical $sl50 us, p99 $sl99 us"
else fails=$((fails + 1)); fi
if perf_pair wbw ib_write_bw -s 65536 -n "$BITER" --report_gbits; then
	wbw=$(bw_avg "$T/wbw.cli" 65536)
	echo "ib_write_bw 64 KiB: $wbw Gbit/s"
else fails=$((fails + 1)); fi
if perf_pair sbw ib_send_bw -s 65536 -n "$BITER" --report_gbits; then
	sbw=$(bw_avg "$T/sbw.cli" 65536)
	echo "ib_send_bw 64 KiB: $sbw Gbit/s"
else fails=$((fails + 1)); fi

echo "-- 2. kernel TCP on loopback"
kernel_pair kpp '--echo' "--pingpong $PINGS --size 8"
k50=$(field "$T/kpp.cli" latency: p50_us)
k99=$(field "$T/kpp.cli" latency: p99_us)
echo "kernel TCP ping-pong 8 B: p50 $k50 us, p99 $k99 us"
iperf3_loopback "$SECS"
echo "iperf3 loopback, one stream: $ip_gbps Gbit/s"
# as the ratios below: each perftest figure beside the kernel's, as both programs report them
bench_csv "ib_write_lat t_typical vs kernel ping-pong p50" 8 us "${wl50:-0}" "$k50"
bench_csv "ib_send_lat t_typical vs kernel ping-pong p50" 8 us "${sl50:-0}" "$k50"
bench_csv "ib_write_bw vs iperf3" 65536 Gbit/s "${wbw:-0}" "$ip_gbps"
bench_csv "ib_send_bw vs iperf3" 65536 Gbit/s "${sbw:-0}" "$ip_gbps"

echo "== ratios"
python3 - "${wl50:-0}" "${wl99:-0}" "${sl50:-0}" "${sl99:-0}" "${wbw:-0}" "${sbw:-0}" "$k50" "$k99" "$ip_gbps" <<'EOF'
import sys
wl50, wl99, sl50, sl99, wbw, sbw, k50, k99, ig = (float(x or 0) for x in sys.argv[1:])
def lat(name, p50, p99):
    if p50 > 0:
        print(f"{name:22s} t_typical {p50:8.2f} us  p99 {p99:8.2f} us   kernel ping-pong p50 {k50:.2f} us -> kernel/perftest {k50 / p50:6.2f}x (p99 {k99 / p99 if p99 else 0:.2f}x)")
    else:
        print(f"{name:22s} did not complete")
def bw(name, g):
    if g > 0:
        print(f"{name:22s} {g:8.3f} Gbit/s   iperf3/lo {ig:.3f} Gbit/s -> perftest/iperf3 {g / ig:6.2f}x")
    else:
        print(f"{name:22s} did not complete")
lat("ib_write_lat 8 B", wl50, wl99)
lat("ib_send_lat 8 B", sl50, sl99)
bw("ib_write_bw 64 KiB", wbw)
bw("ib_send_bw 64 KiB", sbw)
EOF

if [ "${BENCH_SIW:-1}" = 1 ]; then
	echo "-- 4. reference only: perftest on Linux siw, loopback in one TCG guest (SIWVM_SMP=2)"
	SV=${SIWVM:-$(command -v siw-vm || echo /work/shared/tools/siw-vm)}
	if [ "$(id -u)" != 0 ] || [ ! -x "$SV" ]; then
		echo "siw: not run (needs root and siw-vm)"
	else
		export SIWVM_RUN=/run/siwvm-bench SIWVM_NETNS=siwvm-bn SIWVM_SMP=2
		siw_down() { timeout 60 "$SV" down >/dev/null 2>&1; }
		trap 'siw_down; bench_cleanup' EXIT
		siw_down
		if timeout 240 "$SV" build >"$T/siw-build.log" 2>&1 &&
			timeout 300 "$SV" up 1 >"$T/siw-up.log" 2>&1; then
			g=198.51.100.11
			siw_case() {   # TEST ARGS: server in the background, client in the foreground
				"$SV" exec -t 20 g1 "pkill -9 -x $1; true" >/dev/null 2>&1
				"$SV" exec -b g1 "$1 -R -d siw0 -F -p 18515 $2 >/tmp/b.log 2>&1" >/dev/null
				sleep 3
				"$SV" exec -t 120 g1 "$1 -R -d siw0 -F -p 18515 $2 $g" >"$T/siw-$1.cli" 2>&1 ||
					echo "siw $1: client failed: $(tail -n 2 "$T/siw-$1.cli")"
			}
			siw_case ib_write_lat "-s 8 -n 1000"
			echo "siw ib_write_lat 8 B: t_typical/p99 $(lat_row "$T/siw-ib_write_lat.cli" 8) us"
			siw_case ib_send_lat "-s 8 -n 1000"
			echo "siw ib_send_lat 8 B: t_typical/p99 $(lat_row "$T/siw-ib_send_lat.cli" 8) us"
			siw_case ib_write_bw "-s 65536 -n 500 --report_gbits"
			echo "siw ib_write_bw 64 KiB: $(bw_avg "$T/siw-ib_write_bw.cli" 65536) Gbit/s"
			siw_case ib_send_bw "-s 65536 -n 500 --report_gbits"
			echo "siw ib_send_bw 64 KiB: $(bw_avg "$T/siw-ib_send_bw.cli" 65536) Gbit/s"
		else
			echo "siw: guest did not come up: $(tail -n 3 "$T/siw-up.log" "$T/siw-build.log" 2>/dev/null | tr '\n' ' ')"
		fi
		siw_down
	fi
fi
bench_plot
[ "$fails" -eq 0 ] || { echo "bench-perftest.sh: $fails perftest run(s) over softrnic failed" >&2; exit 1; }
