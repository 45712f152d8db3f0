#!/bin/sh
# Debian's qperf, unmodified, on our drop-in libraries over softrnic's TCP engine on DPDK:
# every RC test it has, through rdma_cm (-cm1), checked as qperf_lib.sh says.
# Usage: dpdk_qperf.sh LIBIBVERBS_DIR LIBRDMACM_DIR memif|afpacket
# qperf reaches its server twice by one name: its own control connection (kernel TCP) and the
# RDMA connection (our engine). Both sides therefore run in two namespaces made here, where the
# kernel holds 198.51.100.1 / .2 on a veth pair of its own for the control connection, and the
# DPDK ports own the same addresses on their link (memif; or, for afpacket, a second veth pair
# that the kernel holds no address on, with strict reverse-path filtering so that the kernel
# drops what arrives there for its own address instead of answering it with a reset).
set -u
TEST_NAME=dropin_dpdk_qperf
. "$(dirname "$0")/dpdk_common.sh"
need_debian qperf qperf
uses_ours qperf
QT=${QPERF_TIME:-1}
# Each test's server process starts EAL and opens its port before it can send the client the
# port to connect to; under load that takes longer than qperf's 5 s for a message exchange.
QPERF_ARGS="-to 30"
PORT=7841
OUT=$DPDK_DIR/client.out
ERR=$DPDK_DIR/client.err
SOUT=$DPDK_DIR/server.out

if [ "$DD_LINK" = memif ]; then
	. "$(dirname "$0")/../lib/netns.sh"
	netns_setup srn-dqp
	CTL_A=$NETNS_A
	CTL_B=$NETNS_B
	# the sides are in two namespaces: the socket is a file (memif_file_vdev)
	dd_vdev() {
		if [ "$1" = a ]; then r=server; else r=client; fi
		memif_file_vdev $r
	}
	# The server runs each test in a new process, whose memif server creates the socket file;
	# the last one's file is still there (it is not removed at exit) and would make the
	# next one fail with EADDRINUSE. The next server process starts only when the client asks.
	memif_unlink() { rm -f "$DPDK_DIR/memif.sock"; }
	QPERF_PRE=memif_unlink
	# the DPDK environment, then the namespace (env passes it through ip netns exec)
	on_a() { on_side a $A ip netns exec "$CTL_A" "$@"; }
	on_b() { on_side b $B ip netns exec "$CTL_B" "$@"; }
else
	CTL_A=$DPDK_NS_A
	CTL_B=$DPDK_NS_B
	ip -n "$CTL_A" link add veth-ca type veth peer name veth-cb netns "$CTL_B" ||
		fail "control veth pair"
	ip -n "$CTL_A" addr add $A/24 dev veth-ca || fail "control address in A"
	ip -n "$CTL_B" addr add $B/24 dev veth-cb || fail "control address in B"
	for ns in "$CTL_A" "$CTL_B"; do
		ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=1 \
			net.ipv4.conf.all.arp_ignore=1 || fail "sysctl in $ns"
	done
	ip -n "$CTL_A" link set veth-ca up || fail "veth-ca up"
	ip -n "$CTL_B" link set veth-cb up || fail "veth-cb up"
fi
HOST=$A

(
	DD_EXEC=1
	on_a timeout 600 qperf -lp "$PORT"
) >"$SOUT" 2>&1 &
SERVER_PID=$!
wait_listen "$PORT" "$CTL_A" || fail "qperf server is not listening on port $PORT: $(cat "$SOUT")"

. "$(dirname "$0")/qperf_lib.sh"
# The server's test process starts EAL only when a test comes: skip when the first cannot
# (any other failure is qperf_all's to report)
client rc_lat
if [ "$rc" -ne 0 ]; then
	dpdk_skip_if_no_eal "$ERR"
	dpdk_skip_if_no_eal "$SOUT"
fi
qperf_all
echo "$TEST_NAME: OK"
