#!/bin/sh
# The VIPL NIC's address on the DPDK transport (docs/vipl.md): va_dpdk_addr in one process
# over a net_ring port (no peer needed) with SOFTRNIC_DPDK_IP=198.51.100.9/24.
# Usage: addr_dpdk.sh va_dpdk_addr
set -u
TEST_NAME=vipl_dpdk_addr
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dpdk/dpdk_lib.sh"
. "$(dirname "$0")/vipl_dpdk_lib.sh"
PROG=${1:?usage: addr_dpdk.sh va_dpdk_addr}
dpdk_tmpdir
timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
	SOFTRNIC_DPDK_EAL="--no-huge -m 256 -l 0 --vdev=net_ring0" \
	SOFTRNIC_DPDK_IP=198.51.100.9/24 "$PROG" 198.51.100.9 2>"$DPDK_DIR/err"
rc=$?
cat "$DPDK_DIR/err" >&2
[ "$rc" -eq 77 ] && vd_skip_if_no_dpdk "$DPDK_DIR/err"
[ "$rc" -eq 0 ] || fail "va_dpdk_addr exited with status $rc"
echo "$TEST_NAME: OK"
