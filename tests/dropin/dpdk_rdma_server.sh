#!/bin/sh
# Debian's rdma_server / rdma_client (rdmacm-utils) over our libraries on DPDK: the
# synchronous rdma_create_ep / rdma_get_request / rdma_post_* path, one message each way.
# Usage: dpdk_rdma_server.sh LIBIBVERBS_DIR LIBRDMACM_DIR memif|afpacket
set -u
TEST_NAME=dropin_dpdk_rdma_server
. "$(dirname "$0")/dpdk_common.sh"
need_debian rdma_server rdmacm-utils
need_debian rdma_client rdmacm-utils
uses_ours rdma_server
PORT=7861
dd_start_server "$DPDK_DIR/server.out" rdma_server -s $A -p "$PORT"
dd_client rdma_client -s $A -p "$PORT"
out=$(cat "$DPDK_DIR/client.out" "$DPDK_DIR/client.err")
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || { cat "$DPDK_DIR/server.out"; fail "rdma_client exited with status $rc"; }
printf '%s\n' "$out" | grep -q 'rdma_client: end 0' || fail "rdma_client did not end 0"
wait_server "rdma_server: $(cat "$DPDK_DIR/server.out")"
cat "$DPDK_DIR/server.out"
grep -q 'rdma_server: end 0' "$DPDK_DIR/server.out" || fail "rdma_server did not end 0"
echo "$TEST_NAME: OK"
