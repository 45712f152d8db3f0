#!/usr/bin/env bash
# Builds a release tree in build-bench (set up on first use) and runs every benchmark program
# in build-bench/bench/. Arguments go to each benchmark (wire_bench: seconds per timed run).
# wire_bench's tables go to BENCH_OUT/DATE-bench.csv and .png (scripts/bench-lib.sh: BENCH_OUT
# defaults to bench/results, none writes nothing): CRC32c by size against DPDK's rte_hash_crc,
# each FPDU operation by size against memcpy of the same octets.
# Exit status: 0 all ran and met their goals, 3 a goal was missed, else a build/run failure.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
die() { echo "bench.sh: $*" >&2; exit 1; }
source scripts/bench-lib.sh   # bench_tmpdir, bench_csv

if [ ! -f build-bench/build.ninja ]; then
  meson setup build-bench -Dbuildtype=release || exit 1
fi
if ! ninja -C build-bench; then
  # Other layers may be mid-edit; the benchmarks only need the libraries they link.
  echo "bench.sh: full build failed, building the benchmark targets only" >&2
  targets=$(ninja -C build-bench -t targets all | sed -n 's#^\(bench/[^:.]*\): c_LINKER.*#\1#p')
  [ -n "$targets" ] && ninja -C build-bench $targets || exit 1
fi

# Pin to one core when possible: on a small shared machine a migrating benchmark is noise.
pin=()
if command -v taskset >/dev/null 2>&1; then
  pin=(taskset -c "$(($(nproc) - 1))")
fi

# wire_bench_csv OUTPUT: its tables (a) and (b) as CSV rows
wire_bench_csv() {
  awk '
    /^\(a\)/ { t = "a"; next }
    /^\(b\)/ { t = "b"; next }
    t == "b" && $1 == "FPDU" { for (i = 3; i <= NF; i++) op[i - 2] = $i; next }
    t == "a" && $1 ~ /^[0-9]+$/ && $5 == "|" {
      printf "CRC32c vs rte_hash_crc|%s|GB/s|%s|%s\n", $1, $2, $3 }
    t == "b" && $1 ~ /^[0-9]+$/ {
      for (i = 1; 3 * i <= NF - 2; i++)
        printf "FPDU %s vs memcpy|%s|GB/s|%s|%s\n", op[i], $1, $(3 * i), $2 }
  ' "$1" | while IFS='|' read -r fig size unit s b; do
    bench_csv "$fig" "$size" "$unit" "$s" "$b"
  done
}

bench_tmpdir bench
bench_csv_open bench || exit 1
status=0 ran=0
for b in build-bench/bench/*; do
  [ -f "$b" ] && [ -x "$b" ] || continue
  echo "== $b $* (${pin[*]:-unpinned}, load $(cut -d' ' -f1-3 /proc/loadavg))"
  "${pin[@]}" "$b" "$@" | tee "$T/out"
  rc=${PIPESTATUS[0]}
  [ "$(basename "$b")" = wire_bench ] && wire_bench_csv "$T/out"
  ran=$((ran + 1))
  [ "$rc" -gt "$status" ] && status=$rc
  echo
done
[ "$ran" -gt 0 ] || { echo "bench.sh: no benchmark built (wire_bench needs libdpdk)" >&2; exit 1; }
bench_plot
exit "$status"
