#!/bin/sh
# The VIPL acceptance scenarios (seed-via.md §5.1, tests/vipl_accept) with both peers on the DPDK
# transport, joined by net_memif: peer A is the memif server with DPDK port 198.51.100.1, peer B
# the memif client with 198.51.100.2; the driver gives each peer its own port configuration
# (--env-a / --env-b) and starts B two seconds after A (a memif client cannot start before the
# server's socket exists). All of T01-T27 and NEG run (the one-process scenarios open a port
# that never sees a peer). Exit 77 only when DPDK cannot start.
# Usage: accept_dpdk_memif.sh vipl_accept [SCENARIO...]
set -u
TEST_NAME=vipl_accept_dpdk_memif
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dpdk/dpdk_lib.sh"
. "$(dirname "$0")/vipl_dpdk_lib.sh"
ACCEPT=${1:?usage: accept_dpdk_memif.sh vipl_accept [SCENARIO...]}
shift
[ $# -gt 0 ] || set -- T01 T02 T03 T04 T05 T06 T07 T08 T09 T10 T11 T12 T13 T14 T15 T16 T17 \
	T18 T19 T20 T21 T22 T23 T24 T25 T26 T27 NEG
A=198.51.100.1
B=198.51.100.2
dpdk_tmpdir
# the driver bounds every scenario itself (va_table.c); this bounds the whole run
timeout "${VIPL_TIMEOUT:-280}" "$ACCEPT" --ip-a $A --ip-b $B --delay-b 2000 \
	--env-a SOFTRNIC_TRANSPORT=dpdk --env-b SOFTRNIC_TRANSPORT=dpdk \
	--env-a "$(dpdk_eal server "$(memif_vdev server)")" \
	--env-b "$(dpdk_eal client "$(memif_vdev client)")" \
	--env-a SOFTRNIC_DPDK_IP=$A/24 --env-b SOFTRNIC_DPDK_IP=$B/24 "$@" >"$DPDK_DIR/out" 2>&1
rc=$?
cat "$DPDK_DIR/out"
[ "$rc" -eq 0 ] && grep -q FAIL "$DPDK_DIR/out" && rc=1
if [ "$rc" -ne 0 ]; then
	vd_skip_if_no_dpdk "$DPDK_DIR/out"
	fail "scenarios failed over DPDK (status $rc): $(grep -E '^[A-Z0-9]+: FAIL' \
		"$DPDK_DIR/out" | tr '\n' ' ')"
fi
n=$(grep -Ec '^[A-Z0-9]+: PASS' "$DPDK_DIR/out")
[ "$n" -eq $# ] || fail "$n scenarios passed, expected $#"
echo "$TEST_NAME: OK ($n scenarios)"
