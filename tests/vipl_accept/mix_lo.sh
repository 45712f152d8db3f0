#!/bin/sh
# bench/vipl/vipl_mix over loopback: VIPL and raw verbs blocks interleaved in one server and
# one client process, latency and bandwidth, with data verification (-v) on both connections.
# A smoke test of the machinery behind scripts/bench-vipl.sh (no timing thresholds): both
# processes exit 0 and the client prints its ratio line with the median inside its quartiles.
# Usage: mix_lo.sh vipl_mix
set -u
TEST_NAME=vipl_mix_lo
. "$(dirname "$0")/../lib/common.sh"
MIX=${1:?usage: mix_lo.sh vipl_mix}
PROG_TIMEOUT=${VIPL_TIMEOUT:-90}

run_mix() {   # run_mix KIND ARGS...
	kind=$1
	shift
	pick_port
	pr=$PORT
	pick_port
	ps=$PORT
	pick_port
	pc=$PORT
	start_server timeout "$PROG_TIMEOUT" "$MIX" "$kind" "$pr" 4 -s -l "127.0.0.1:$ps" "$@"
	wait_listen "$pr" || fail "$kind: server is not listening on $pr"
	out=$(timeout "$PROG_TIMEOUT" "$MIX" "$kind" "$pr" 4 -c "127.0.0.1:$ps" \
		-l "127.0.0.1:$pc" "$@")
	rc=$?
	echo "$out"
	[ "$rc" -eq 0 ] || fail "$kind: client exited with status $rc"
	wait_server "$kind"
	echo "$out" | awk -v k="$kind" '
		$1 == "vipl_mix" && $2 == k && $4 == "vipl/raw" && $NF == 3 {
			q = substr($5, 2) + 0; split($6, r, /[][-]/)
			if (q > 0 && r[2] + 0 <= q && q <= r[3] + 0 && $8 + 0 > 0 && $10 + 0 > 0)
				ok = 1
		}
		END { exit !ok }' || fail "$kind: no sane ratio line"
}

run_mix lat -y -v -n 200 -S 64
run_mix lat -p -v -n 100 -S 4096
run_mix bw -y -v -n 200 -S 65536 -w 16
echo "$TEST_NAME: OK"
