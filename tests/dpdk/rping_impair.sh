#!/bin/sh
# RDMA over softrnic's TCP engine across a lossy link, data verified: softrnic-rping on
# net_af_packet at both ends, 30 pings of 65000 bytes (every Send, Read and Write spans ~45
# segments), with tests/tcp/linux/impair between them dropping 2 %, reordering 5 % and
# duplicating 1 % of the frames in both directions:
#   ns A: server, DPDK port on veth-a, 198.51.100.1 -- veth-ma [impair, ns M] veth-mb --
#   ns B: client, DPDK port on veth-b, 198.51.100.2
# The engine's TCP recovery has to get every FPDU through; the RDMA layer must then see the
# stream intact (no Terminate, all data verified). The impairment must really have dropped
# frames, else the test proves nothing. Twice: payload copied into the engine, then sent by
# reference from the registered buffers (key tx_refs: held until acknowledged, so every
# retransmission reads rping's memory, and rping reuses it only after the completion).
# Needs root (exit 77 without).
# Usage: rping_impair.sh /path/to/softrnic-rping /path/to/impair
set -u
TEST_NAME=dpdk_rping_impair
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dpdk_lib.sh"
. "$(dirname "$0")/../lib/impair.sh"
RPING=${1:?usage: rping_impair.sh softrnic-rping impair}
IMPAIR=${2:?usage: rping_impair.sh softrnic-rping impair}
dpdk_tmpdir
PORT=7681
COUNT=30
need_cmd ethtool ethtool

# the direct pair of dpdk_netns, then the middle namespace between its ends
dpdk_netns imp
impair_link "$DPDK_NS_A" "$DPDK_NS_B" "$DPDK_NS_A-m"
impair_start "$IMPAIR" "$DPDK_DIR/impair.log" $((PROG_TIMEOUT * 3)) \
	--dir both --loss 2 --reorder 5 --dup 1 --seed 7

run() { # tx_refs value for both ends
	start_server timeout "$PROG_TIMEOUT" ip netns exec "$DPDK_NS_A" env \
		SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_TX_REFS="$1" \
		"$(dpdk_eal server "net_af_packet0,iface=veth-a,qdisc_bypass=1")" \
		SOFTRNIC_DPDK_IP=198.51.100.1/24 "$RPING" -s -a 198.51.100.1 -p "$PORT" -V \
		2>"$DPDK_DIR/server.err"
	dpdk_head_start
	dpdk_skip_if_no_eal "$DPDK_DIR/server.err"
	out=$(timeout "$PROG_TIMEOUT" ip netns exec "$DPDK_NS_B" env \
		SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_TX_REFS="$1" \
		"$(dpdk_eal client "net_af_packet0,iface=veth-b,qdisc_bypass=1")" \
		SOFTRNIC_DPDK_IP=198.51.100.2/24 "$RPING" -c -a 198.51.100.1 -p "$PORT" \
		-C "$COUNT" -S 65000 -V 2>&1)
	rc=$?
	printf '%s\n' "$out" | tail -n 3
	if [ "$rc" -ne 0 ]; then
		cat "$DPDK_DIR/server.err" >&2
		fail "client exited with status $rc (tx_refs $1)"
	fi
	printf '%s\n' "$out" | grep -q "$COUNT pings of 65000 bytes, verified" ||
		fail "client summary missing (tx_refs $1)"
	! grep -q "tx_refs" "$DPDK_DIR/server.err" || fail "server refused tx_refs"
	wait_server "server (tx_refs $1)"
	PORT=$((PORT + 1))
}

run off
run on
impair_stop
stats=$(tail -n 1 "$DPDK_DIR/impair.log")
echo "$stats"
lost=$(printf '%s\n' "$stats" | sed -n 's/.* lost \([0-9]*\) .*/\1/p')
[ "${lost:-0}" -gt 0 ] || fail "impair dropped nothing: the link was not lossy ($stats)"
echo "$TEST_NAME: OK"
