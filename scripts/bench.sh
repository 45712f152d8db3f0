#!/usr/bin/env bash
# Builds a release tree in build-bench (set up on first use) and runs every benchmark program
# in build-bench/bench/. Arguments go to each benchmark (wire_bench: seconds per timed run).
# Exit status: 0 all ran and met their goals, 3 a goal was missed, else a build/run failure.
set -uo pipefail
cd "$(dirname "$0")/.."

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

status=0 ran=0
for b in build-bench/bench/*; do
  [ -f "$b" ] && [ -x "$b" ] || continue
  echo "== $b $* (${pin[*]:-unpinned})"
  "${pin[@]}" "$b" "$@"
  rc=$?
  ran=$((ran + 1))
  [ "$rc" -gt "$status" ] && status=$rc
  echo
done
[ "$ran" -gt 0 ] || { echo "bench.sh: no benchmark built (wire_bench needs libdpdk)" >&2; exit 1; }
exit "$status"
