#!/bin/sh
# Debian's rdma_xserver / rdma_xclient (rdmacm-utils): rdma_create_ep endpoints whose client
# sends a 16-byte message with IBV_SEND_INLINE on a QP that asked for no inline data.
#   -c r (RC): the message arrives, both print "end 0".
#   -c x (XRC): fails at once, as on any iWARP device (docs/dropin.md, "What iWARP does not
#   have"): the client's rdma_create_ep with "Operation not supported"; an XRC server fails
#   in rdma_get_request the same way when an RC client arrives, and the client is refused.
# Usage: xserver.sh LIBIBVERBS_DIR LIBRDMACM_DIR loopback|netns|memif|afpacket
set -u
TEST_NAME=dropin_xserver
. "$(dirname "$0")/link_common.sh"
need_debian rdma_xserver rdmacm-utils
need_debian rdma_xclient rdmacm-utils
uses_ours rdma_xserver
SOUT=$LINK_DIR/server.out
link_port 7871

# rdma_xserver binds the wildcard (rdma_getaddrinfo(NULL, port)): no address to give it.
dd_start_server "$SOUT" rdma_xserver -p "$PORT" -c r
dd_client rdma_xclient -s "$A" -p "$PORT" -c r
out=$(cat "$LINK_DIR/client.out" "$LINK_DIR/client.err")
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || { cat "$SOUT"; fail "rdma_xclient -c r exited with status $rc"; }
printf '%s\n' "$out" | grep -q 'rdma_xclient: end 0' || fail "rdma_xclient did not end 0"
wait_server "rdma_xserver -c r: $(cat "$SOUT")"
cat "$SOUT"
grep -q 'rdma_xserver: end 0' "$SOUT" || fail "rdma_xserver did not end 0"

# XRC: the client fails before it sends anything, so it needs no server.
link_port 7872
dd_client rdma_xclient -s "$A" -p "$PORT" -c x
out=$(cat "$LINK_DIR/client.out" "$LINK_DIR/client.err")
printf '%s\n' "$out"
[ "$rc" -eq 255 ] || fail "rdma_xclient -c x exited with status $rc, not 255 (end -1)"
printf '%s\n' "$out" | grep -q '^rdma_create_ep: Operation not supported$' ||
	fail "rdma_xclient -c x: no EOPNOTSUPP from rdma_create_ep"
printf '%s\n' "$out" | grep -q 'rdma_xclient: end -1' || fail "rdma_xclient -c x did not end -1"

link_port 7873
dd_start_server "$SOUT" rdma_xserver -p "$PORT" -c x
# The refusal is the expected answer here, so dd_client must not take it for a client that
# came before the listener (on DPDK it tries again then): one try. The listener is logged
# before the client starts (H2 of docs/dropin.md); a client that still came first would
# leave the server waiting, and the test fails at its timeout.
DD_CONNECT_TRIES=1
dd_client rdma_xclient -s "$A" -p "$PORT" -c r
unset DD_CONNECT_TRIES
out=$(cat "$LINK_DIR/client.out" "$LINK_DIR/client.err")
printf '%s\n' "$out"
[ "$rc" -eq 255 ] || fail "rdma_xclient -c r against an XRC server exited with status $rc"
printf '%s\n' "$out" | grep -q '^rdma_connect: Connection refused$' ||
	fail "rdma_xclient against an XRC server: not refused"
wait "$SERVER_PID"
src=$?
SERVER_PID=
cat "$SOUT"
[ "$src" -eq 255 ] || fail "rdma_xserver -c x exited with status $src, not 255 (end -1)"
grep -q '^rdma_get_request: Operation not supported$' "$SOUT" ||
	fail "rdma_xserver -c x: no EOPNOTSUPP from rdma_get_request"
echo "$TEST_NAME: OK (RC message delivered; XRC refused on both sides)"
