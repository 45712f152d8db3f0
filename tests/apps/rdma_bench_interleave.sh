#!/bin/sh
# rdma_bench --goals-only: the interleaved goal runs (bench/rdma/interleave.c) complete, each
# goal row with one run's median block ratio and quartiles and a verdict. A smoke test of the
# machinery (the between hook on both sides, the TCP blocks, the block statistics); met or
# missed does not matter here (no timing thresholds), a failed or hung run does.
# Usage: rdma_bench_interleave.sh /path/to/rdma_bench
set -u
TEST_NAME=apps_rdma_bench_interleave
. "$(dirname "$0")/../lib/common.sh"
BENCH=${1:?usage: rdma_bench_interleave.sh /path/to/rdma_bench}

out=$(timeout 150 "$BENCH" --goals-only --iters 400 --seconds 0.2 --reps 1 --no-pin 2>&1)
rc=$?
printf '%s\n' "$out"
# 0: all goals met, 3: one missed; 1 (a failed measurement) or a timeout fail
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || fail "rdma_bench exited with status $rc"
rows=$(printf '%s\n' "$out" | grep -cE \
	'^  (Write-P|Send|Write) .* [0-9]+\.[0-9]+ \[[0-9]+\.[0-9]+-[0-9]+\.[0-9]+\] \| median x[0-9]+\.[0-9]+ .*: (met|MISSED)$')
[ "$rows" -eq 5 ] || fail "expected 5 goal rows with ratios and verdicts, found $rows"
# the quartiles bracket the median of each run
printf '%s\n' "$out" | awk '/\] \| median x/ {
	if (match($0, /[0-9.]+ \[[0-9.]+-[0-9.]+\]/)) {
		split(substr($0, RSTART, RLENGTH), f, /[ \[\]-]+/)
		if (!(f[2] + 0 <= f[1] + 0 && f[1] + 0 <= f[3] + 0 && f[2] + 0 > 0)) bad = 1
	} else bad = 1 }
	END { exit bad }' || fail "a run's ratio lies outside its quartiles"
echo "$TEST_NAME: OK"
