#!/bin/sh
# Debian's rdma_server / rdma_client (rdmacm-utils): the synchronous rdma_create_ep /
# rdma_get_request / rdma_post_* path, one message each way, both print "end 0".
set -u
TEST_NAME=dropin_rdma_server
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dropin.sh"
need_debian rdma_server rdmacm-utils
need_debian rdma_client rdmacm-utils
uses_ours rdma_server
pick_port
sout=$(mktemp)
cleanup_files() { rm -f "$sout"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_files"
start_server timeout "$PROG_TIMEOUT" rdma_server -s 127.0.0.1 -p "$PORT" >"$sout" 2>&1
wait_listen "$PORT" || fail "rdma_server is not listening on port $PORT"
out=$(timeout "$PROG_TIMEOUT" rdma_client -s 127.0.0.1 -p "$PORT" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || fail "rdma_client exited with status $rc"
printf '%s\n' "$out" | grep -q 'rdma_client: end 0' || fail "rdma_client did not end 0"
wait_server "rdma_server"
cat "$sout"
grep -q 'rdma_server: end 0' "$sout" || fail "rdma_server did not end 0"
echo "$TEST_NAME: OK"
