#!/bin/sh
# iwarp-conform (apps/conform, docs/conform.md), softrnic against softrnic: both processes
# run the tool, built against the system's rdma-core, on our drop-in libibverbs.so.1 /
# librdmacm.so.1, over kernel sockets on loopback or across two network namespaces (netns:
# 198.51.100.1 and .2 on a veth pair made inside them, tests/lib/netns.sh; root), or over
# softrnic's TCP engine on a DPDK memif link. Both must exit 0 with no check FAILed, and both sides' JUnit reports must be
# well-formed, hold one testcase per check (iwarp-conform --list) and agree; both Markdown
# reports one row per check. With `fault` the server offers a region it has deregistered
# (--peer-fault dereg-mr): both sides must then exit 1 with exactly rdma_write FAILed, the
# proof that a wrong answer of a device makes the tool fail.
# Usage: conform.sh LIBIBVERBS_DIR LIBRDMACM_DIR loopback|netns|memif TOOL [fault]
set -u
TEST_NAME=conform
HERE=$(dirname "$0")
if [ "${3:-}" = memif ]; then
	. "$HERE/../dropin/dpdk_common.sh" # takes the first three arguments
else
	. "$HERE/../lib/common.sh"
	. "$HERE/../dropin/dropin.sh" # takes the first two
	LINK=${1:-}
	case "$LINK" in
	loopback) ;;
	netns) . "$HERE/../lib/netns.sh" ;;
	*) fail "unknown link '$LINK' (loopback, netns or memif)" ;;
	esac
	TEST_NAME=${TEST_NAME}_$LINK
	shift
fi
TOOL=${1:?usage: conform.sh LIBIBVERBS_DIR LIBRDMACM_DIR loopback|netns|memif TOOL [fault]}
MODE=${2:-pass}
PROG_TIMEOUT=60
need_cmd python3
ldd "$TOOL" | grep -q "$DROPIN_VERBS/libibverbs.so.1" ||
	fail "$TOOL does not load $DROPIN_VERBS/libibverbs.so.1"
N=$("$TOOL" --list | wc -l)
[ "$N" -gt 0 ] || fail "iwarp-conform --list lists no check"
OUT=$(mktemp -d /tmp/conform-XXXXXX) || fail "mktemp"
cleanup_out() { rm -rf "$OUT"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_out"
FAULT=
WANT_RC=0
WANT_FAILED=-
if [ "$MODE" = fault ]; then
	FAULT="--peer-fault dereg-mr"
	WANT_RC=1
	WANT_FAILED=rdma_write
	TEST_NAME=${TEST_NAME}_fault
fi
pick_port
RP=$PORT
pick_port
CP=$PORT
srv_args="--port $RP --ctl-port $CP --junit $OUT/server.xml --report-md $OUT/server.md $FAULT"
cli_args="--port $RP --ctl-port $CP --junit $OUT/client.xml --report-md $OUT/client.md"

# Both sides; sets crc and src (exit statuses) and leaves their output in OUT.
if [ "${DD_LINK:-}" = memif ]; then
	# the control channel runs over kernel loopback: the DPDK port's address is no kernel's
	# shellcheck disable=SC2086
	dd_start_server "$OUT/server.out" "$TOOL" --server $A --ctl-addr 127.0.0.1 $srv_args
	# shellcheck disable=SC2086
	dd_client "$TOOL" --client $A --ctl-addr 127.0.0.1 $cli_args
	crc=$rc
	cp "$DPDK_DIR/client.out" "$OUT/client.out"
	cat "$DPDK_DIR/client.err" >>"$OUT/client.out"
else
	# loopback, or two namespaces as two hosts: the control channel takes the RDMA address
	A=127.0.0.1 NS_A= NS_B=
	if [ "$LINK" = netns ]; then
		netns_setup iconf
		A=$NETNS_ADDR_A NS_A=$NETNS_A NS_B=$NETNS_B
	fi
	# shellcheck disable=SC2086
	start_server in_ns "$NS_A" timeout "$PROG_TIMEOUT" "$TOOL" --server "$A" $srv_args \
		>"$OUT/server.out" 2>&1
	# shellcheck disable=SC2086
	(in_ns "$NS_B" timeout "$PROG_TIMEOUT" "$TOOL" --client "$A" $cli_args) \
		>"$OUT/client.out" 2>&1
	crc=$?
fi
wait "$SERVER_PID"
src=$?
SERVER_PID=
echo "--- client"
cat "$OUT/client.out"
echo "--- server"
cat "$OUT/server.out"
[ "$crc" -eq "$WANT_RC" ] || fail "client exited with status $crc, expected $WANT_RC"
[ "$src" -eq "$WANT_RC" ] || fail "server exited with status $src, expected $WANT_RC"
python3 "$HERE/junit_check.py" "$N" "$WANT_FAILED" "$OUT/server.xml" "$OUT/client.xml" ||
	fail "the JUnit reports are wrong"
for side in server client; do
	rows=$(grep -cE ' \| (PASS|FAIL|NOT APPLICABLE) \| ' "$OUT/$side.md")
	[ "$rows" -eq "$N" ] || fail "$side.md has $rows rows, expected $N"
	grep -q "^$N checks: " "$OUT/$side.md" || fail "$side.md does not count $N checks"
done
echo "$TEST_NAME: OK ($N checks, failed: $WANT_FAILED)"
