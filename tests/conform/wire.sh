#!/bin/sh
# The wire half of iwarp-conform (apps/conform/wire, docs/conform.md): iwarp-conform-wire, a
# scripted iWARP peer on the kernel's TCP, against `iwarp-conform --wire-target` on softrnic's
# drop-in libraries, over kernel sockets on loopback or over softrnic's TCP engine on DPDK
# (net_af_packet on a veth in namespace A; the peer in namespace B, the control port on a
# second veth pair). The peer must find every check PASS and write well-formed reports, one
# row per check (iwarp-conform-wire --list), and the target must end cleanly on SIGTERM. With
# `fault` the target registers its read-only region writable (--peer-fault writable-r): the
# peer must then exit 1 with exactly wire_write_read_only FAILed, the proof that a device that
# places data where it must not fails the check.
# Usage: wire.sh VERBS_DIR RDMACM_DIR IWARP_CONFORM IWARP_CONFORM_WIRE JUNIT_CHECK
#                kernel|dpdk [fault]
# Needs root for dpdk (exit 77 without).
set -u
TEST_NAME=conform_wire
HERE=$(dirname "$0")
. "$HERE/../lib/common.sh"
. "$HERE/../dpdk/dpdk_lib.sh"
. "$HERE/../dropin/dropin.sh" # takes the first two arguments
TARGET=${1:?usage: wire.sh VERBS_DIR RDMACM_DIR iwarp-conform iwarp-conform-wire junit_check.py kernel|dpdk [fault]}
PEER=${2:?usage}
JUNIT_CHECK=${3:?usage}
MODE=${4:?usage}
FAULT=${5:-}
TEST_NAME=conform_wire_$MODE${FAULT:+_$FAULT}
need_cmd python3 python3
dpdk_tmpdir
# The target keeps the sanitizer run's ASAN_OPTIONS, leaks unchecked as for every program of
# that run: LeakSanitizer's exit check hung the target at times on this kernel (its tracer
# waiting in wait4, the main thread spinning in sched_yield, TERM ignored), and the test with it
N=$(python3 "$PEER" --list | wc -l)
[ "$N" -gt 40 ] || fail "iwarp-conform-wire --list lists $N checks"

FARGS=
WANT_RC=0
WANT_FAILED=-
if [ "$FAULT" = fault ]; then
	FARGS="--peer-fault writable-r"
	WANT_RC=1
	WANT_FAILED=wire_write_read_only
fi

if [ "$MODE" = dpdk ]; then
	dpdk_netns wire
	dpdk_kernel_peer 198.51.100.2
	dpdk_netns_ctl
	ADDR=198.51.100.1
	PORT=7491
	# shellcheck disable=SC2086
	start_server timeout 300 ip netns exec "$DPDK_NS_A" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal server "net_af_packet0,iface=veth-a,qdisc_bypass=1")" \
		SOFTRNIC_DPDK_IP=198.51.100.1/24 "$TARGET" --wire-target "$ADDR" --port "$PORT" \
		--ctl-addr "$DPDK_CTL_A" --ctl-port 7492 $FARGS \
		>"$DPDK_DIR/target.log" 2>"$DPDK_DIR/target.err"
	dpdk_head_start
	dpdk_skip_if_no_eal "$DPDK_DIR/target.err"
	set -- ip netns exec "$DPDK_NS_B" python3 "$PEER" --port "$PORT" --ctl-addr "$DPDK_CTL_A" \
		--ctl-port 7492
else
	ADDR=127.0.0.1
	pick_port
	CTL_PORT=$PORT
	pick_port
	# shellcheck disable=SC2086
	start_server timeout 300 "$TARGET" --wire-target "$ADDR" \
		--port "$PORT" --ctl-port "$CTL_PORT" $FARGS \
		>"$DPDK_DIR/target.log" 2>"$DPDK_DIR/target.err"
	wait_listen "$PORT" || { cat "$DPDK_DIR/target.err"; fail "target not listening"; }
	set -- python3 "$PEER" --port "$PORT" --ctl-port "$CTL_PORT"
fi

"$@" --report-md "$DPDK_DIR/wire.md" --junit "$DPDK_DIR/wire.xml" "$ADDR" \
	>"$DPDK_DIR/peer.out" 2>&1
peer_rc=$?
cat "$DPDK_DIR/peer.out"
kill -0 "$SERVER_PID" 2>/dev/null || { cat "$DPDK_DIR/target.err"; fail "the target died"; }
kill -TERM "$SERVER_PID"
wait_server "the target did not end cleanly on SIGTERM: $(tail -20 "$DPDK_DIR/target.err")"
[ "$peer_rc" -eq "$WANT_RC" ] || fail "iwarp-conform-wire exited $peer_rc, want $WANT_RC"
python3 "$JUNIT_CHECK" "$N" "$WANT_FAILED" "$DPDK_DIR/wire.xml" || fail "JUnit report"
rows=$(grep -c '^| wire_' "$DPDK_DIR/wire.md")
[ "$rows" -eq "$N" ] || fail "the Markdown report has $rows rows, want $N"
grep -q "^# iwarp-conform-wire: softrnic0 (device under test)" "$DPDK_DIR/wire.md" ||
	fail "the Markdown report does not name the device: $(head -1 "$DPDK_DIR/wire.md")"
echo "$TEST_NAME: OK"
