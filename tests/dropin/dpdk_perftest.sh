#!/bin/sh
# One Debian perftest program (perftest package, unmodified; it loads libmlx5.so.1 and
# libefa.so.1 against our libibverbs.so.1) with -R (rdma_cm) over our libraries on DPDK:
# server on side A, client on side B, -n ITER (default 200) iterations.
# Usage: dpdk_perftest.sh LIBIBVERBS_DIR LIBRDMACM_DIR memif|afpacket PROGRAM [options]
# Pass: both sides exit 0 and the client (and, for _bw, the server) prints its result line.
set -u
TEST_NAME=dropin_dpdk_perftest
# perftest spins on its CQ and our poll thread spins on the port: four busy threads on a
# small shared machine, so allow more than the default 40 s per program.
PROG_TIMEOUT=${PROG_TIMEOUT:-100}
. "$(dirname "$0")/dpdk_common.sh"
PROG=${1:?usage: dpdk_perftest.sh LIBDIR LIBDIR LINK PROGRAM [options]}
shift
TEST_NAME="dropin_dpdk_${PROG}_$DD_LINK"
need_debian "$PROG" perftest
uses_ours "$PROG"
ITER=${ITER:-200}
PORT=$((7900 + $$ % 50))

run_pair() {
	dd_start_server "$DPDK_DIR/server.out" "$PROG" -R -p "$PORT" -n "$ITER" "$@"
	dd_client "$PROG" -R -p "$PORT" -n "$ITER" "$@" $A
	out=$(cat "$DPDK_DIR/client.out" "$DPDK_DIR/client.err")
}

# perftest's own connect race (docs/dropin.md "perftest's connect race"): its server listens
# for the test QPs only after the parameter exchange; a connect refused (-111) or reset
# (-104) before any test ran is run again, at most twice, and said so.
attempt=1
while :; do
	run_pair "$@"
	# (a refusal of the first, parameter exchange, connection is dd_client's to retry)
	refused=$(printf '%s\n' "$out" | grep -Ec 'RDMA_CM_EVENT_REJECTED; error: -1(11|04)\.')
	[ "$rc" -ne 0 ] && [ "$refused" -gt 0 ] && [ "$attempt" -lt 3 ] || break
	echo "$TEST_NAME: attempt $attempt: perftest's connect race (refused), running again" >&2
	kill_server
	PORT=$((PORT + 1))
	attempt=$((attempt + 1))
done
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || { cat "$DPDK_DIR/server.out"; fail "client exited with status $rc"; }
wait_server "$PROG server: $(cat "$DPDK_DIR/server.out")"
cat "$DPDK_DIR/server.out"
result="^[[:space:]]*[0-9]+[[:space:]]+${ITER}[[:space:]]+[0-9]"
printf '%s\n' "$out" | grep -Eq "$result" || fail "client printed no result line"
case "$PROG" in
*_lat) ;;   # latency tests print the result on the client only
*) grep -Eq "$result" "$DPDK_DIR/server.out" || fail "server printed no result line" ;;
esac
echo "$TEST_NAME: OK"
