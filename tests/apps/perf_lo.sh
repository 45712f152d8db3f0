#!/bin/sh
# softrnic-perf: each test (write, read, send; bandwidth and latency) completes a short run on
# loopback and prints a result line with sane numbers (no timing thresholds); bandwidth tests
# also over several QPs (-Q), whose banner counts them, and with WRs posted in lists (-B, run
# lengths that no list divides, so the last list is a short one); -Q or -B with a latency test,
# and a list longer than 64, are usage errors.
# Usage: perf_lo.sh /path/to/softrnic-perf
set -u
TEST_NAME=apps_perf
. "$(dirname "$0")/../lib/common.sh"
PERF=${1:?usage: perf_lo.sh /path/to/softrnic-perf}

# check_line OUTPUT SIZE ITERS NFIELDS: the result line has NFIELDS numbers, the first two
# SIZE and ITERS, every other one positive, and (latency) min <= typical <= max.
check_line() {
	printf '%s\n' "$1" | awk -v size="$2" -v iters="$3" -v nf="$4" '
		$1 == size && $2 == iters && NF == nf {
			for (i = 3; i <= NF; i++) if (!($i + 0 > 0)) bad = 1
			if (nf == 9 && !($3 <= $5 && $5 <= $4)) bad = 1
			found = 1
		}
		END { exit !(found && !bad) }'
}

run() { # test lat(0|1) size iters [qps [list]]
	opts="-t $1 -s $3 -n $4${5:+ -Q $5}${6:+ -B $6}"
	[ "$2" -eq 1 ] && opts="$opts -l"
	pick_port
	start_server timeout "$PROG_TIMEOUT" "$PERF" -p "$PORT" -T 20 >/dev/null
	wait_listen "$PORT" || fail "server is not listening on port $PORT"
	# shellcheck disable=SC2086
	out=$(timeout "$PROG_TIMEOUT" "$PERF" -p "$PORT" -T 20 $opts 127.0.0.1 2>&1)
	rc=$?
	printf '%s\n' "$out"
	[ "$rc" -eq 0 ] || fail "client ($opts) exited with status $rc"
	wait_server "$opts"
	nf=5
	[ "$2" -eq 1 ] && nf=9
	check_line "$out" "$3" "$4" "$nf" || fail "no sane result line for $opts"
	printf '%s\n' "$out" | grep -Eq "Number of qps +: ${5:-1}[[:space:]]" ||
		fail "the banner does not count ${5:-1} QPs for $opts"
}

for t in write read send; do
	run "$t" 0 65536 500
	run "$t" 0 100 2000
	run "$t" 1 8 500
	run "$t" 1 4000 200
	# several QPs on one thread: every QP's iterations complete (Send: each its credits)
	run "$t" 0 64 1000 4
	# lists of WRs a post: one QP, and several (Send: lists cut short by the credits too)
	run "$t" 0 64 1001 1 16
	run "$t" 0 100 999 3 7
done
"$PERF" -Q 2 -l 127.0.0.1 >/dev/null 2>&1
[ $? -eq 2 ] || fail "-Q with a latency test is not a usage error"
"$PERF" -B 2 -l 127.0.0.1 >/dev/null 2>&1
[ $? -eq 2 ] || fail "-B with a latency test is not a usage error"
"$PERF" -B 65 127.0.0.1 >/dev/null 2>&1
[ $? -eq 2 ] || fail "-B 65 is not a usage error"
echo "$TEST_NAME: OK"
