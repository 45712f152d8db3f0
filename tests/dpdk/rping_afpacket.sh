#!/bin/sh
# softrnic-rping, unchanged, across two network namespaces over net_af_packet on a veth pair:
#   ns A: the server, DPDK port on veth-a, 198.51.100.1 (softrnic's TCP engine)
#   ns B: the client, DPDK port on veth-b, 198.51.100.2
# The kernel holds no address on either end (it must not answer our ARP or TCP). Then the
# same server against a client on kernel sockets in ns B (198.51.100.2 on veth-b): the engine
# against Linux TCP, RDMA on top. Needs root: exit 77 without the permission for namespaces.
# Usage: rping_afpacket.sh /path/to/softrnic-rping
set -u
TEST_NAME=dpdk_rping_afpacket
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dpdk_lib.sh"
RPING=${1:?usage: rping_afpacket.sh /path/to/softrnic-rping}
dpdk_tmpdir
PORT=7671
A=198.51.100.1
B=198.51.100.2

dpdk_netns dp

server() { # extra rping options
	start_server timeout "$PROG_TIMEOUT" ip netns exec "$DPDK_NS_A" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal server "net_af_packet0,iface=veth-a,qdisc_bypass=1")" \
		SOFTRNIC_DPDK_IP=$A/24 "$RPING" -s -a $A -p "$PORT" -V "$@" 2>"$DPDK_DIR/server.err"
	dpdk_head_start # EAL start and listen: af_packet's link is up at once, a SYN would find no one
	dpdk_skip_if_no_eal "$DPDK_DIR/server.err"
}

check() { # rc what
	printf '%s\n' "$out"
	if [ "$1" -ne 0 ]; then
		cat "$DPDK_DIR/server.err" >&2
		fail "client ($2) exited with status $1"
	fi
	printf '%s\n' "$out" | grep -q '100 pings of 1000 bytes, verified' ||
		fail "client summary missing ($2)"
	wait_server "$2"
	PORT=$((PORT + 1))
}

# DPDK on both sides
server
out=$(timeout "$PROG_TIMEOUT" ip netns exec "$DPDK_NS_B" env SOFTRNIC_TRANSPORT=dpdk \
	"$(dpdk_eal client "net_af_packet0,iface=veth-b,qdisc_bypass=1")" SOFTRNIC_DPDK_IP=$B/24 \
	"$RPING" -c -a $A -p "$PORT" -C 100 -V -S 1000 2>&1)
check $? "dpdk to dpdk"

# the kernel's TCP on the client side
dpdk_kernel_peer "$B"
server
out=$(timeout "$PROG_TIMEOUT" ip netns exec "$DPDK_NS_B" env SOFTRNIC_TRANSPORT=sock \
	"$RPING" -c -a $A -p "$PORT" -C 100 -V -S 1000 2>&1)
check $? "kernel client to dpdk server"
echo "$TEST_NAME: OK"
