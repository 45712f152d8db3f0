#!/bin/sh
# Transport selection errors (docs/dpdk.md): with DPDK asked for, librdmacm calls fail
# with a clear message, never fall back to kernel sockets silently, and the kernel's
# addresses are not the device's; a connect nobody answers ends, it does not hang.
# Usage: selection.sh /path/to/softrnic-rping [/path/to/softrnic-devinfo]
set -u
TEST_NAME=dpdk_selection
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dpdk_lib.sh"
RPING=${1:?usage: selection.sh /path/to/softrnic-rping}
dpdk_tmpdir

expect_fail() { # WHAT PATTERN env-and-command...
	what=$1 pat=$2
	shift 2
	if timeout "$PROG_TIMEOUT" env "$@" >"$DPDK_DIR/out" 2>&1; then
		cat "$DPDK_DIR/out"
		fail "$what: succeeded"
	fi
	grep -q -- "$pat" "$DPDK_DIR/out" || { cat "$DPDK_DIR/out"; fail "$what: no '$pat'"; }
}

expect_fail "no configuration" "no DPDK configuration" SOFTRNIC_TRANSPORT=dpdk \
	"$RPING" -s -a 198.51.100.1 -p 7901
expect_fail "bad vdev" "DPDK transport unavailable: .*net_bogus0" \
	"SOFTRNIC_DPDK_EAL=--no-huge -m 256 --vdev=net_bogus0" SOFTRNIC_DPDK_IP=198.51.100.1/24 \
	"$RPING" -s -a 198.51.100.1 -p 7901
expect_fail "bad address" "SOFTRNIC_DPDK_IP" \
	"SOFTRNIC_DPDK_EAL=--no-huge -m 256 --vdev=net_bogus0" SOFTRNIC_DPDK_IP=300.1.2.3/24 \
	"$RPING" -s -a 198.51.100.1 -p 7901
# The port opens (EAL runs), but it has no loopback: 127.0.0.1 binds (libfabric binds it to
# find the devices' addresses) and cannot listen.
expect_fail "kernel address" "rdma_listen: Cannot assign requested address" \
	"$(dpdk_eal server "$(memif_vdev server)")" SOFTRNIC_DPDK_IP=198.51.100.1/24 \
	"$RPING" -s -a 127.0.0.1 -p 7901
dpdk_skip_if_no_eal "$DPDK_DIR/out"
# Off the port's subnet with no gateway: unreachable (rdma_resolve_addr).
expect_fail "off subnet" "ADDR_ERROR (status -101)" \
	"$(dpdk_eal server "$(memif_vdev server)")" SOFTRNIC_DPDK_IP=198.51.100.2/24 \
	"$RPING" -c -a 203.0.113.9 -p 7901 -C 1 -t 3
# On the subnet but nobody answers ARP: the connect fails (EHOSTUNREACH), bounded.
expect_fail "no neighbour" "UNREACHABLE (status -113)" \
	"$(dpdk_eal server "$(memif_vdev server)")" SOFTRNIC_DPDK_IP=198.51.100.2/24 \
	"$RPING" -c -a 198.51.100.77 -p 7901 -C 1 -t 10
# The device is the port: GID 0 is the port's MAC (the configured one), not the kernel's.
if [ -n "${2:-}" ]; then
	timeout "$PROG_TIMEOUT" env "$(dpdk_eal server "$(memif_vdev server)")" \
		SOFTRNIC_DPDK_IP=198.51.100.2/24 SOFTRNIC_DPDK_MAC=02:00:00:00:00:42 "$2" \
		>"$DPDK_DIR/out" 2>&1 || { cat "$DPDK_DIR/out"; fail "devinfo over DPDK failed"; }
	grep -q 'GID\[0\]: *0200:0000:0042:0000' "$DPDK_DIR/out" ||
		{ cat "$DPDK_DIR/out"; fail "GID 0 is not the port's MAC"; }
fi
echo "$TEST_NAME: OK"
