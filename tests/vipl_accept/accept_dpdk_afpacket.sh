#!/bin/sh
# The handshake and data acceptance scenarios (those of netns.sh: T06 T08 T09 T12 T18 T21 T25)
# with both peers on the DPDK transport across two network namespaces: peer A in ns A with a
# net_af_packet port on veth-a (198.51.100.1), peer B in ns B on veth-b (198.51.100.2), the
# kernel holding no address on either end. Peers start together (no --delay-b: af_packet has
# no server/client order). Exit 77 when not root or DPDK cannot start.
# Usage: accept_dpdk_afpacket.sh vipl_accept [SCENARIO...]
set -u
TEST_NAME=vipl_accept_dpdk_afpacket
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dpdk/dpdk_lib.sh"
. "$(dirname "$0")/vipl_dpdk_lib.sh"
ACCEPT=${1:?usage: accept_dpdk_afpacket.sh vipl_accept [SCENARIO...]}
shift
[ $# -gt 0 ] || set -- T06 T08 T09 T12 T18 T21 T25
A=198.51.100.1
B=198.51.100.2
dpdk_tmpdir
vd_netns_setup va
timeout "${VIPL_TIMEOUT:-200}" "$ACCEPT" --ip-a $A --ip-b $B --ns-a "$NS_A" --ns-b "$NS_B" \
	--env-a SOFTRNIC_TRANSPORT=dpdk --env-b SOFTRNIC_TRANSPORT=dpdk \
	--env-a "$(dpdk_eal server "net_af_packet0,iface=veth-a,qdisc_bypass=1")" \
	--env-b "$(dpdk_eal client "net_af_packet0,iface=veth-b,qdisc_bypass=1")" \
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
[ "$n" -eq $# ] || fail "$n scenarios passed, expected $#"
echo "$TEST_NAME: OK ($n scenarios)"
