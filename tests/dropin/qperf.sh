#!/bin/sh
# Debian's qperf, unmodified, on our drop-in libibverbs.so.1 / librdmacm.so.1: every RC test
# it has, through rdma_cm (-cm1), a server (qperf -lp PORT) and a client, over loopback or
# across two network namespaces (198.51.100.1 / .2 on a veth pair).
# Usage: qperf.sh LIBIBVERBS_DIR LIBRDMACM_DIR loopback|netns
# What each test must show: qperf_lib.sh.
set -u
TEST_NAME=dropin_qperf
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dropin.sh"
need_debian qperf qperf
uses_ours qperf
MODE=${1:-loopback}
TEST_NAME="${TEST_NAME}_$MODE"
QT=${QPERF_TIME:-1}
OUT=$(mktemp) ERR=$(mktemp) SOUT=$(mktemp)
cleanup_files() { rm -f "$OUT" "$ERR" "$SOUT"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_files"

case "$MODE" in
loopback)
	HOST=127.0.0.1
	on_a() { "$@"; }
	on_b() { "$@"; }
	;;
netns)
	. "$(dirname "$0")/../lib/netns.sh"
	netns_setup srn-qp
	HOST=$NETNS_ADDR_A
	on_a() { ip netns exec "$NETNS_A" "$@"; }
	on_b() { ip netns exec "$NETNS_B" "$@"; }
	;;
*) fail "unknown mode '$MODE' (loopback or netns)" ;;
esac

pick_port
# The server runs every test in a child it waits for: one server serves the whole list, and a
# test whose server side hung would hold up every later one (the client's timeout then fails).
(
	if [ "$MODE" = netns ]; then
		exec ip netns exec "$NETNS_A" timeout 600 qperf -lp "$PORT"
	fi
	exec timeout 600 qperf -lp "$PORT"
) >"$SOUT" 2>&1 &
SERVER_PID=$!
ns=
[ "$MODE" = netns ] && ns=$NETNS_A
wait_listen "$PORT" "$ns" || fail "qperf server is not listening on port $PORT: $(cat "$SOUT")"

. "$(dirname "$0")/qperf_lib.sh"
qperf_all
echo "$TEST_NAME: OK"
