#!/bin/sh
# One Debian perftest program (perftest package; it links libmlx5.so.1 and libefa.so.1, which
# load against our libibverbs.so.1 through IBVERBS_PRIVATE_34) with -R (rdma_cm) on loopback.
# Usage: perftest.sh LIBIBVERBS_DIR LIBRDMACM_DIR PROGRAM [extra perftest options]
# Pass: both sides exit 0 and each prints its result line.
set -u
TEST_NAME=dropin_perftest
# perftest spins on its CQ (the _lat tests on memory) without yielding: on a small machine
# shared with other jobs, four busy threads (two programs, two progress engines) wait for
# each other's time slices, so allow more than the default 40 s per program.
PROG_TIMEOUT=${PROG_TIMEOUT:-100}
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dropin.sh"
PROG=${1:?usage: perftest.sh LIBDIR LIBDIR PROGRAM [options]}
shift
TEST_NAME="dropin_$PROG"
need_debian "$PROG" perftest
uses_ours "$PROG"
case "$PROG" in
*_bw) ITER=${ITER:-200} ;;
*) ITER=${ITER:-1000} ;;
esac
sout=$(mktemp)
cleanup_files() { rm -f "$sout"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_files"

# One server + client pair on a fresh port; sets out and rc.
run_pair() {
	pick_port
	start_server timeout "$PROG_TIMEOUT" "$PROG" -R -p "$PORT" -n "$ITER" "$@" >"$sout" 2>&1
	wait_listen "$PORT" || { cat "$sout"; fail "$PROG server is not listening on port $PORT"; }
	out=$(timeout "$PROG_TIMEOUT" "$PROG" -R -p "$PORT" -n "$ITER" "$@" 127.0.0.1 2>&1)
	rc=$?
}

# perftest's own race (docs/dropin.md "perftest's connect race"): its server listens for the
# test QPs only after the parameter exchange, and its client connects right after it, so the
# connect can be refused (RDMA_CM_EVENT_REJECTED -111: no listener yet) or reset (-104: it
# reached the exchange's listener just before the server closed it) before any test ran. Only
# those cases are run again, at most twice, and said so; every other failure counts at once.
attempt=1
while :; do
	run_pair "$@"
	refused=$(printf '%s\n' "$out" | grep -Ec 'RDMA_CM_EVENT_REJECTED; error: -1(11|04)\.')
	[ "$rc" -ne 0 ] && [ "$refused" -gt 0 ] && [ "$attempt" -lt 3 ] || break
	echo "$TEST_NAME: attempt $attempt: perftest's connect race (refused), running again" >&2
	kill_server
	attempt=$((attempt + 1))
done
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || fail "client exited with status $rc"
wait_server "$PROG server: $(cat "$sout")"
cat "$sout"
# The result line: message size, then the iteration count, then the numbers.
result="^[[:space:]]*[0-9]+[[:space:]]+$ITER[[:space:]]+[0-9]"
printf '%s\n' "$out" | grep -Eq "$result" || fail "client printed no result line"
case "$PROG" in
*_lat) ;;   # latency tests print the result on the client only
*) grep -Eq "$result" "$sout" || fail "server printed no result line" ;;
esac
echo "$TEST_NAME: OK"
