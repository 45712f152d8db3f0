#!/bin/sh
# The VIPL acceptance scenarios (docs/acceptance-vipl.md, tests/vipl_accept) with both peers on
# the DPDK transport, peer A with DPDK port 198.51.100.1 and peer B with 198.51.100.2; the
# driver gives each peer its own port configuration (--env-a / --env-b):
#   memif     A is the memif server, B the memif client, started once A's memif socket exists
#             (a memif client cannot start before the server's socket exists). All of T01-T27 and NEG
#             run (the one-process scenarios open a port that never sees a peer).
#   afpacket  A in one network namespace with a net_af_packet port on veth-a, B in another on
#             veth-b, the kernel holding no address on either end; the handshake and data
#             scenarios of netns.sh (T06 T08 T09 T12 T18 T21 T25). Peers start together (no
#             --b-after: af_packet has no server/client order).
# The porting scenarios (P01-P03, t_port.c) find the peer by host name: via-node-a is A's
# port, via-node-b B's, in a hosts file only this run sees (vd_with_hosts), and both peers
# listen at the same well-known port, each on its own DPDK port as two hosts of a cluster.
# Exit 77 only when DPDK cannot start (or, afpacket, namespaces cannot be made: not root).
# Usage: accept_dpdk.sh memif|afpacket vipl_accept [SCENARIO...]
set -u
LINK=${1:?usage: accept_dpdk.sh memif|afpacket vipl_accept [SCENARIO...]}
TEST_NAME=vipl_accept_dpdk_$LINK
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dpdk/dpdk_lib.sh"
. "$(dirname "$0")/vipl_dpdk_lib.sh"
ACCEPT=${2:?usage: accept_dpdk.sh memif|afpacket vipl_accept [SCENARIO...]}
shift 2
A=198.51.100.1
B=198.51.100.2
dpdk_tmpdir
case $LINK in
memif)
	[ $# -gt 0 ] || set -- T01 T02 T03 T04 T05 T06 T07 T08 T09 T10 T11 T12 T13 T14 T15 T16 \
		T17 T18 T19 T20 T21 T22 T23 T24 T25 T26 T27 NEG
	nscen=$#
	limit=${VIPL_TIMEOUT:-280}
	set -- --b-after "$DPDK_DIR/memif.sock" --env-a "$(dpdk_eal server "$(memif_vdev server)")" \
		--env-b "$(dpdk_eal client "$(memif_vdev client)")" "$@"
	;;
afpacket)
	[ $# -gt 0 ] || set -- T06 T08 T09 T12 T18 T21 T25
	nscen=$#
	limit=${VIPL_TIMEOUT:-200}
	dpdk_netns va
	set -- --ns-a "$DPDK_NS_A" --ns-b "$DPDK_NS_B" \
		--env-a "$(dpdk_eal server "net_af_packet0,iface=veth-a,qdisc_bypass=1")" \
		--env-b "$(dpdk_eal client "net_af_packet0,iface=veth-b,qdisc_bypass=1")" "$@"
	;;
*) echo "usage: accept_dpdk.sh memif|afpacket vipl_accept [SCENARIO...]" >&2; exit 2 ;;
esac
WRAP=
case " $* " in
*" P0"*)
	printf '127.0.0.1 localhost\n%s via-node-a\n%s via-node-b\n' $A $B >"$DPDK_DIR/hosts"
	set -- --env-a VA_PEER_NAME=via-node-b --env-b VA_PEER_NAME=via-node-a "$@"
	WRAP="vd_with_hosts $DPDK_DIR/hosts"
	TEST_NAME=vipl_port_dpdk_$LINK
	;;
esac
# the driver bounds every scenario itself (va_table.c); this bounds the whole run
$WRAP timeout "$limit" "$ACCEPT" --ip-a $A --ip-b $B \
	--env-a SOFTRNIC_TRANSPORT=dpdk --env-b SOFTRNIC_TRANSPORT=dpdk \
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
[ "$n" -eq "$nscen" ] || fail "$n scenarios passed, expected $nscen"
echo "$TEST_NAME: OK ($n scenarios)"
