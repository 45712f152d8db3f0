#!/bin/sh
# The adversary against softrnic's server (issue 27): tests/adversary/hostile.py, a raw iWARP
# peer with its own encoding, runs its catalogue of attacks against iwarp-conform's wire
# target on softrnic's drop-in libraries and after each checks the answer the RFCs name, the
# target's guard pages and protected regions, and that a real client (adv_client) is still
# served. Then the markers catalogue against a target that asks for markers
# (SOFTRNIC_MPA=markers). The target must end cleanly on SIGTERM (under ASan: without a leak).
#   adversary.sh VERBS_DIR RDMACM_DIR IWARP_CONFORM ADV_CLIENT HOSTILE_PY kernel
#       over kernel sockets on loopback
#   adversary.sh VERBS_DIR RDMACM_DIR IWARP_CONFORM ADV_CLIENT HOSTILE_PY dpdk
#       the target on softrnic's TCP engine
#       (net_af_packet on a veth in namespace A); the attacker and the real client use the
#       kernel's TCP in namespace B
# Needs root for dpdk (exit 77 without).
set -u
TEST_NAME=adversary
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dpdk/dpdk_lib.sh"
. "$(dirname "$0")/../dropin/dropin.sh" # takes the first two arguments
# the target is ours: its leaks count (dropin.sh turned them off for Debian's programs)
TARGET_ENV=${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=1}
TARGET=${1:?usage: adversary.sh VERBS_DIR RDMACM_DIR iwarp-conform adv_client hostile.py kernel|dpdk}
CLIENT=${2:?usage}
HOSTILE=${3:?usage}
MODE=${4:?usage}
TEST_NAME=adversary_$MODE
dpdk_tmpdir

if [ "$MODE" = dpdk ]; then
	dpdk_netns adv
	dpdk_kernel_peer 198.51.100.2
	ADDR=198.51.100.1
	NS_A=$DPDK_NS_A
	NS_B=$DPDK_NS_B
else
	ADDR=127.0.0.1
	NS_A=
	NS_B=
fi

# suite [ENV...]: one target, one catalogue
suite() {
	name=$1
	shift
	if [ "$MODE" = dpdk ]; then
		PORT=7491
		start_server timeout 600 ip netns exec "$NS_A" env "$@" ${TARGET_ENV:+"$TARGET_ENV"} \
			SOFTRNIC_TRANSPORT=dpdk \
			"$(dpdk_eal server "net_af_packet0,iface=veth-a,qdisc_bypass=1")" \
			SOFTRNIC_DPDK_IP=198.51.100.1/24 "$TARGET" --wire-target "$ADDR" \
			--port "$PORT" --ctl-addr 0.0.0.0 --ctl-port $((PORT + 1)) \
			>"$DPDK_DIR/$name.log" 2>"$DPDK_DIR/$name.err"
		dpdk_head_start
		dpdk_skip_if_no_eal "$DPDK_DIR/$name.err"
	else
		pick_port
		CTL_PORT=$PORT
		pick_port
		start_server timeout 600 env "$@" ${TARGET_ENV:+"$TARGET_ENV"} "$TARGET" \
			--wire-target "$ADDR" --port "$PORT" --ctl-addr 127.0.0.1 --ctl-port "$CTL_PORT" \
			>"$DPDK_DIR/$name.log" 2>"$DPDK_DIR/$name.err"
		wait_listen "$PORT" || { cat "$DPDK_DIR/$name.err"; fail "target not listening"; }
	fi
	if [ -n "$NS_B" ]; then
		ip netns exec "$NS_B" python3 "$HOSTILE" --suite "$name" "$ADDR" "$PORT" \
			"$DPDK_DIR/$name.log" "$SERVER_PID" ip netns exec "$NS_B" "$CLIENT"
	else
		python3 "$HOSTILE" --suite "$name" "$ADDR" "$PORT" "$DPDK_DIR/$name.log" \
			"$SERVER_PID" "$CLIENT"
	fi
	hrc=$?
	kill -0 "$SERVER_PID" 2>/dev/null || { tail -5 "$DPDK_DIR/$name.log";
		cat "$DPDK_DIR/$name.err"; fail "the target died ($name)"; }
	kill -TERM "$SERVER_PID"
	wait_server "$name: the target did not end cleanly on SIGTERM: $(tail -20 "$DPDK_DIR/$name.err")"
	[ "$hrc" -eq 0 ] || { tail -20 "$DPDK_DIR/$name.err"; fail "$name catalogue failed"; }
}

suite plain
suite markers SOFTRNIC_MPA=markers
echo "$TEST_NAME: OK"
