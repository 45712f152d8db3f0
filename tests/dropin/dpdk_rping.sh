#!/bin/sh
# Debian's rping (rdmacm-utils), unmodified, as server (side A) and client (side B) over our
# drop-in libraries on softrnic's TCP engine on DPDK: COUNT pings (default 100), data
# verified by both (-V) and printed (-v), then the same with 64 KB buffers (-S 65000).
# Usage: dpdk_rping.sh LIBIBVERBS_DIR LIBRDMACM_DIR memif|afpacket [COUNT]
set -u
TEST_NAME=dropin_dpdk_rping
. "$(dirname "$0")/dpdk_common.sh"
need_debian rping rdmacm-utils
uses_ours rping
COUNT=${1:-100}
PORT=7821

run() { # count extra-options
	c=$1
	shift
	dd_start_server "$DPDK_DIR/server.out" rping -s -a $A -p $PORT -v -V -C "$c" "$@"
	dd_client rping -c -a $A -p $PORT -v -V -C "$c" "$@"
	if [ "$rc" -ne 0 ]; then
		cat "$DPDK_DIR/client.err" "$DPDK_DIR/server.out" >&2
		fail "client exited with status $rc ($*)"
	fi
	wait_server "rping server ($*): $(cat "$DPDK_DIR/server.out")"
	n=$(grep -c '^ping data: rdma-ping-' "$DPDK_DIR/client.out")
	[ "$n" -eq "$c" ] || fail "client printed $n verified pings, expected $c ($*)"
	n=$(grep -c '^server ping data: rdma-ping-' "$DPDK_DIR/server.out")
	[ "$n" -eq "$c" ] || fail "server printed $n pings, expected $c ($*)"
	grep -q "^ping data: rdma-ping-$((c - 1)): " "$DPDK_DIR/client.out" || fail "last ping missing"
	grep -q 'data mismatch' "$DPDK_DIR/client.err" "$DPDK_DIR/server.out" &&
		fail "rping reported a data mismatch ($*)"
	PORT=$((PORT + 1))
}
run "$COUNT"
run 10 -S 65000
echo "$TEST_NAME: OK ($COUNT pings, then 10 of 65000 bytes)"
