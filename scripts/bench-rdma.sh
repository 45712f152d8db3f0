#!/usr/bin/env bash
# Builds the release tree in build-bench (set up on first use) and runs bench/rdma/rdma_bench:
# kernel TCP on loopback against softrnic over the kernel-socket transport, two processes.
# rdma_bench pins its server and client processes to one core each itself
# (sched_setaffinity, like taskset -c); arguments go to rdma_bench
# (--iters N, --seconds S, --reps R, --busy, --no-pin, --goals-only).
# Exit status: 0 goals met, 3 a goal was missed, else a build or run failure.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ ! -f build-bench/build.ninja ]; then
  meson setup build-bench -Dbuildtype=release || exit 1
fi
if ! ninja -C build-bench bench/rdma/rdma_bench; then
  echo "bench-rdma.sh: could not build bench/rdma/rdma_bench" >&2
  exit 1
fi
echo "== build-bench/bench/rdma/rdma_bench $* ($(nproc) CPUs)"
exec build-bench/bench/rdma/rdma_bench "$@"
