#!/bin/sh
# Debian's own rping (rdmacm-utils), unmodified, on our drop-in libibverbs.so.1 /
# librdmacm.so.1 over softrnic's TCP engine on net_memif (two processes): 50 verified pings.
# Usage: dropin_rping_memif.sh LIBIBVERBS_DIR LIBRDMACM_DIR
set -u
TEST_NAME=dpdk_dropin_rping_memif
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dropin/dropin.sh"
. "$(dirname "$0")/dpdk_lib.sh"
need_debian rping rdmacm-utils
dpdk_tmpdir
PORT=7811
A=198.51.100.1
B=198.51.100.2

start_server timeout "$PROG_TIMEOUT" env "$(dpdk_eal server "$(memif_vdev server)")" \
	SOFTRNIC_DPDK_IP=$A/24 rping -s -a $A -p $PORT -C 50 -V >"$DPDK_DIR/server.out" \
	2>"$DPDK_DIR/server.err"
dpdk_head_start
dpdk_skip_if_no_eal "$DPDK_DIR/server.err"
timeout "$PROG_TIMEOUT" env "$(dpdk_eal client "$(memif_vdev client)")" SOFTRNIC_DPDK_IP=$B/24 \
	rping -c -a $A -p $PORT -C 50 -V -v >"$DPDK_DIR/client.out" 2>"$DPDK_DIR/client.err"
rc=$?
if [ "$rc" -ne 0 ]; then
	cat "$DPDK_DIR/client.err" "$DPDK_DIR/server.err" >&2
	fail "client exited with status $rc"
fi
n=$(grep -c '^ping data: rdma-ping-' "$DPDK_DIR/client.out")
[ "$n" -eq 50 ] || fail "client printed $n verified pings, expected 50"
grep -q 'data mismatch' "$DPDK_DIR/client.err" && fail "rping reported a data mismatch"
wait_server "rping server"
echo "$TEST_NAME: OK"
