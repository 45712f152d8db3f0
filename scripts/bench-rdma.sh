#!/usr/bin/env bash
# Builds the release tree in build-bench (set up on first use; BUILD_DIR: another tree, and
# BENCH_NO_BUILD not empty: use it as it is), then, over loopback, kernel TCP
# against softrnic over the kernel-socket transport, two processes:
#   1. bench/rdma/rdma_bench: rdma_bench pins its server and client processes to one core each
#      itself (sched_setaffinity, like taskset -c); arguments go to rdma_bench (--iters N,
#      --seconds S, --reps R, --busy, --no-pin, --goals-only). BENCH_RDMA_BENCH=0 skips it.
#   2. by message size (BENCH_SIZES, default "8 64 512 4096 32768 262144"; empty: skipped):
#      softrnic-perf RDMA Write latency (-l -P -y: the target polls its CQ, both sides yield
#      the core between polls) against kernel TCP ping-pong (tests/tcp/linux/ktcp_peer,
#      TCP_NODELAY, epoll; half its round trip, as perftest reports half of its own), and
#      softrnic-perf RDMA Write bandwidth against iperf3 writing the same size (-l SIZE, one
#      stream); server on core C0, client on C1 (taskset). BENCH_SWEEP_ITERS latency
#      iterations a size (default 5000), BENCH_SWEEP_SECONDS (default 1) seconds a bandwidth
#      run (softrnic-perf's count is sized for about that), BENCH_CPUS "a,b" (default 0,1).
# The figures go to BENCH_OUT/DATE-bench-rdma.csv and .png (scripts/bench-lib.sh: BENCH_OUT
# defaults to bench/results, none writes nothing).
# Exit status: 0 goals met, 3 a goal was missed, else a build or run failure.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
B=${BUILD_DIR:-build-bench}
CPUS=${BENCH_CPUS:-0,1}
C0=${CPUS%,*}
C1=${CPUS#*,}
SIZES=${BENCH_SIZES-8 64 512 4096 32768 262144}
SW_ITERS=${BENCH_SWEEP_ITERS:-5000}
SW_SECS=${BENCH_SWEEP_SECONDS:-1}

die() { echo "bench-rdma.sh: $*" >&2; exit 1; }
source scripts/bench-lib.sh   # bench_tmpdir, kernel_pair, free_port, wait_listening, iperf3_loopback, field, bench_csv

targets=()
[ "${BENCH_RDMA_BENCH:-1}" = 1 ] && targets+=(bench/rdma/rdma_bench)
[ -n "$SIZES" ] && targets+=(apps/verbs/softrnic-perf tests/tcp/linux/ktcp_peer)
if [ -z "${BENCH_NO_BUILD:-}" ]; then
  if [ ! -f "$B/build.ninja" ]; then
    meson setup "$B" -Dbuildtype=release || exit 1
  fi
  ninja -C "$B" -j2 "${targets[@]}" || die "could not build ${targets[*]}"
fi
if [ -n "$SIZES" ]; then
  command -v iperf3 >/dev/null || { echo "bench-rdma.sh: iperf3 missing (scripts/deps.sh)" >&2; exit 77; }
  [ "$(nproc)" -ge 2 ] || die "the sizes need two CPUs"
fi
K=$B/tests/tcp/linux/ktcp_peer   # kernel_pair's
export K
P=$B/apps/verbs/softrnic-perf
bench_tmpdir bench-rdma
bench_csv_open bench-rdma || exit 1

status=0
if [ "${BENCH_RDMA_BENCH:-1}" = 1 ]; then
  echo "== $B/bench/rdma/rdma_bench $* ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
  "$B/bench/rdma/rdma_bench" "$@" | tee "$T/rdma_bench.out"
  status=${PIPESTATUS[0]}
  # its tables as CSV: the TCP ping-pong (polling, half a round trip) is each latency row's
  # baseline, a Read's whole round trip its own; the goal rows give medians of their runs
  awk '
    /^  ping-pong/ { tcp[$2] = $6 }
    /^  bulk, 64 KiB writes/ { bulk = $5 }
    /^  (Write|Write-P|Read|Send) +[0-9]+ B +p50 +[0-9.]+ +p99/ {
      k = $1 == "Read" ? 2 : 1
      r = $10; sub(/^x/, "", r)
      printf "%s lat p50|%s|us|%s|%s|1|%s\n", $1, $2, $5, tcp[$2] * k, r }
    /^  (Write|Read|Send) +[0-9.]+ MiB\/s/ {
      printf "%s bw|65536|MiB/s|%s|%s|1|\n", $1, $2, bulk }
    /^  (Write-P|Send) +[0-9]+ B p50 .*\| median/ || /^  Write 64 KiB bw .*\| median/ {
      line = $0; sub(/.*\| median x/, "", line); split(line, a, /[ (,]+/)
      # a: ratio "softrnic" value "TCP" value unit
      if ($0 ~ /KiB bw/) printf "goal Write bw (interleaved)|65536|MiB/s|%s|%s|median|%s\n", a[3], a[5], a[1]
      else printf "goal %s p50 (interleaved)|%s|us|%s|%s|median|%s\n", $1, $2, a[3], a[5], a[1] }
  ' "$T/rdma_bench.out" >"$T/rdma_bench.csv"
  while IFS='|' read -r fig size unit s b run r; do
    bench_csv "$fig" "$size" "$unit" "$s" "$b" "$run" "$r"
  done <"$T/rdma_bench.csv"
fi

# sweep_pair NAME 'PERF ARGS': softrnic-perf server (C0) and client (C1) over loopback on
# the kernel-socket transport; the client's output in $T/NAME.cli
sweep_pair() {
  local name=$1 port sp
  port=$(free_port)
  # shellcheck disable=SC2086
  timeout -k 2 120 taskset -c "$C0" "$P" $2 -y -b 127.0.0.1 -p "$port" -T 60 \
    >"$T/$name.srv" 2>&1 &
  sp=$!
  PIDS+=("$sp")
  wait_listening "$port" "$sp" || { tail -n 3 "$T/$name.srv" >&2; die "$name: server not listening"; }
  # shellcheck disable=SC2086
  timeout -k 2 120 taskset -c "$C1" "$P" $2 -y -p "$port" -T 60 127.0.0.1 \
    >"$T/$name.cli" 2>&1 || { tail -n 3 "$T/$name.cli" >&2; die "$name: client failed"; }
  wait "$sp" || { tail -n 3 "$T/$name.srv" >&2; die "$name: server failed"; }
}

if [ -n "$SIZES" ]; then
  echo "== by message size: softrnic-perf RDMA Write (kernel sockets) against kernel TCP," \
    "cores $C0/$C1, $SW_ITERS latency iterations, ~$SW_SECS s bandwidth runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%9s %12s %12s %7s | %12s %12s %7s\n' size "write us" "tcp us" ratio "write Gb/s" \
    "iperf3 Gb/s" ratio
  for s in $SIZES; do
    sweep_pair "lat$s" "-t write -l -P -s $s -n $SW_ITERS"
    # perftest columns: bytes iters t_min t_max t_typical t_avg t_stdev p99 p99.9
    wl=$(awk -v s="$s" '$1 == s && NF >= 9 { print $5 }' "$T/lat$s.cli" | tail -1)
    kernel_pair "klat$s" '--echo' "--pingpong $SW_ITERS --size $s"
    kl=$(awk -v v="$(field "$T/klat$s.cli" latency: p50_us)" 'BEGIN { printf "%.2f", v / 2 }')
    # enough Writes for about SW_SECS at 1.5 GB/s, 2000 to 300000 of them
    n=$(awk -v s="$s" -v t="$SW_SECS" 'BEGIN { n = 1.5e9 * t / s;
      n = n < 2000 ? 2000 : (n > 300000 ? 300000 : n); printf "%d", n }')
    sweep_pair "bw$s" "-t write -s $s -n $n"
    # bytes iters peak avg[MiB/s] rate
    wb=$(awk -v s="$s" '$1 == s && NF >= 5 { printf "%.3f", $4 * 1048576 * 8 / 1e9 }' \
      "$T/bw$s.cli" | tail -1)
    iperf3_loopback "$SW_SECS" "$s"
    if [ -z "$wl" ] || [ -z "$wb" ]; then die "size $s: no result line"; fi
    bench_csv "RDMA Write latency (t_typical) vs kernel TCP ping-pong (epoll) p50 / 2" "$s" us "$wl" "$kl"
    bench_csv "RDMA Write bandwidth vs iperf3 -l size" "$s" Gbit/s "$wb" "$ip_gbps"
    printf '%9s %12s %12s %7s | %12s %12s %7s\n' "$s" "$wl" "$kl" \
      "$(awk -v a="$wl" -v b="$kl" 'BEGIN { printf "%.2f", a / b }')" "$wb" "$ip_gbps" \
      "$(awk -v a="$wb" -v b="$ip_gbps" 'BEGIN { printf "%.2f", a / b }')"
  done
fi
bench_plot
exit "$status"
