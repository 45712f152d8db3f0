#!/bin/sh
# RDMA over softrnic's TCP engine across a lossy link, data verified: softrnic-rping on
# net_af_packet at both ends, 30 pings of 65000 bytes (every Send, Read and Write spans ~45
# segments), with tests/tcp/linux/impair between them dropping 2 %, reordering 5 % and
# duplicating 1 % of the frames in both directions:
#   ns A: server, DPDK port on veth-a, 198.51.100.1 -- veth-ma [impair, ns M] veth-mb --
#   ns B: client, DPDK port on veth-b, 198.51.100.2
# The engine's TCP recovery has to get every FPDU through; the RDMA layer must then see the
# stream intact (no Terminate, all data verified). The impairment must really have dropped
# frames, else the test proves nothing. Needs root (exit 77 without).
# Usage: rping_impair.sh /path/to/softrnic-rping /path/to/impair
set -u
TEST_NAME=dpdk_rping_impair
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dpdk_lib.sh"
RPING=${1:?usage: rping_impair.sh softrnic-rping impair}
IMPAIR=${2:?usage: rping_impair.sh softrnic-rping impair}
dpdk_tmpdir
PORT=7681
COUNT=30
need_cmd ethtool ethtool

# the direct pair of dpdk_netns, then the middle namespace between its ends
dpdk_netns imp
NM=$DPDK_NS_A-m
IMP_PID=
mid_cleanup() {
	[ -n "$IMP_PID" ] && kill "$IMP_PID" 2>/dev/null
	ip netns del "$NM" 2>/dev/null
}
EXIT_HOOKS="kill_server mid_cleanup $EXIT_HOOKS"
ip -n "$DPDK_NS_A" link del veth-a || fail "veth-a del"
ip netns add "$NM" || fail "ip netns add $NM"
ip -n "$DPDK_NS_A" link add veth-a type veth peer name veth-ma netns "$NM" || fail "veth a/ma"
ip -n "$DPDK_NS_B" link add veth-b type veth peer name veth-mb netns "$NM" || fail "veth b/mb"
ip -n "$NM" link set lo up
ip netns exec "$NM" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
for l in "$DPDK_NS_A veth-a" "$DPDK_NS_B veth-b" "$NM veth-ma" "$NM veth-mb"; do
	set -- $l
	ip -n "$1" link set "$2" up || fail "$2 up"
	ip netns exec "$1" ethtool -K "$2" tx off tso off gso off gro off >/dev/null 2>&1
done
ip -n "$NM" link set veth-ma promisc on
ip -n "$NM" link set veth-mb promisc on

ip netns exec "$NM" "$IMPAIR" veth-ma veth-mb --dir both --loss 2 --reorder 5 --dup 1 \
	--seed 7 --seconds $((PROG_TIMEOUT * 3)) >"$DPDK_DIR/impair.log" 2>&1 &
IMP_PID=$!
i=0
until grep -q ready "$DPDK_DIR/impair.log" 2>/dev/null; do
	[ "$i" -lt 50 ] || fail "impair did not start: $(cat "$DPDK_DIR/impair.log")"
	sleep 0.1
	i=$((i + 1))
done

start_server timeout "$PROG_TIMEOUT" ip netns exec "$DPDK_NS_A" env SOFTRNIC_TRANSPORT=dpdk \
	"$(dpdk_eal server "net_af_packet0,iface=veth-a,qdisc_bypass=1")" \
	SOFTRNIC_DPDK_IP=198.51.100.1/24 "$RPING" -s -a 198.51.100.1 -p "$PORT" -V \
	2>"$DPDK_DIR/server.err"
dpdk_head_start
dpdk_skip_if_no_eal "$DPDK_DIR/server.err"
out=$(timeout "$PROG_TIMEOUT" ip netns exec "$DPDK_NS_B" env SOFTRNIC_TRANSPORT=dpdk \
	"$(dpdk_eal client "net_af_packet0,iface=veth-b,qdisc_bypass=1")" \
	SOFTRNIC_DPDK_IP=198.51.100.2/24 "$RPING" -c -a 198.51.100.1 -p "$PORT" -C "$COUNT" \
	-S 65000 -V 2>&1)
rc=$?
printf '%s\n' "$out" | tail -n 3
if [ "$rc" -ne 0 ]; then
	cat "$DPDK_DIR/server.err" >&2
	fail "client exited with status $rc"
fi
printf '%s\n' "$out" | grep -q "$COUNT pings of 65000 bytes, verified" || fail "client summary missing"
wait_server "server"
kill "$IMP_PID"
wait "$IMP_PID" 2>/dev/null
IMP_PID=
stats=$(tail -n 1 "$DPDK_DIR/impair.log")
echo "$stats"
lost=$(printf '%s\n' "$stats" | sed -n 's/.* lost \([0-9]*\) .*/\1/p')
[ "${lost:-0}" -gt 0 ] || fail "impair dropped nothing: the link was not lossy ($stats)"
echo "$TEST_NAME: OK"
