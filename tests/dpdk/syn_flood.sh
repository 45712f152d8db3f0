#!/bin/sh
# A SYN flood against a listener on the DPDK engine (issue 27): softrnic-rping's server in
# namespace A (net_af_packet on veth-a, 198.51.100.1, backlog capped at 128) takes 100,000
# SYNs from 100 spoofed hosts of 198.51.100.0/24 written onto veth-b in namespace B
# (syn_flood.py), and half way through a real client (softrnic-rping on kernel sockets in
# B, 198.51.100.2) must connect and get its pings through within CLIENT_BOUND seconds. The
# half-open children fill the SYN queue within the first SYNs, so every later SYN-ACK is a
# SYN cookie: every SYN of the first half (sent while the server surely lives: the client's
# end ends it) must be answered, far more than the queue holds, and the server's memory must
# not grow with the SYNs.
# Usage: syn_flood.sh /path/to/softrnic-rping /path/to/syn_flood.py
set -u
TEST_NAME=dpdk_syn_flood
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dpdk_lib.sh"
RPING=${1:?usage: syn_flood.sh /path/to/softrnic-rping /path/to/syn_flood.py}
FLOOD=${2:?usage: syn_flood.sh /path/to/softrnic-rping /path/to/syn_flood.py}
SYNS=${SYN_FLOOD_COUNT:-100000}
RATE=${SYN_FLOOD_RATE:-40000}
CLIENT_BOUND=10
HALF_OPEN_MAX=128 # DP_LISTEN_BACKLOG_MAX (dpdk/dpdk_conn.c)
PORT=7681
A=198.51.100.1
B=198.51.100.2
need_cmd python3 python3
need_cmd ethtool ethtool
dpdk_tmpdir
dpdk_netns sf
FLOOD_PID=
stop_flood() {
	[ -n "$FLOOD_PID" ] && kill "$FLOOD_PID" 2>/dev/null && wait "$FLOOD_PID" 2>/dev/null
	FLOOD_PID=
}
EXIT_HOOKS="stop_flood $EXIT_HOOKS"

# the real client on the kernel's TCP in B
dpdk_kernel_peer "$B"

# framecnt: a receive ring of 8192 frames rather than af_packet's 512, as a server expecting
# floods would have; the flooder writes in bursts of 256 and the poll thread shares its core
start_server timeout "$PROG_TIMEOUT" ip netns exec "$DPDK_NS_A" env SOFTRNIC_TRANSPORT=dpdk \
	"$(dpdk_eal server "net_af_packet0,iface=veth-a,qdisc_bypass=1,framecnt=8192")" \
	SOFTRNIC_DPDK_IP=$A/24 "$RPING" -s -a $A -p "$PORT" -C 20 -V -S 1000 \
	2>"$DPDK_DIR/server.err"
dpdk_head_start
dpdk_skip_if_no_eal "$DPDK_DIR/server.err"
kill -0 "$SERVER_PID" 2>/dev/null || { cat "$DPDK_DIR/server.err"; fail "server did not start"; }
SRV=$(ps -o pid= --ppid "$SERVER_PID" | tr -d ' ') # timeout's child: ip netns exec'd rping
[ -n "$SRV" ] || fail "no server process"
# the server's resident memory, every 50 ms while it lives
(while awk '/^VmRSS/ { print $2 }' "/proc/$SRV/status" 2>/dev/null; do sleep 0.05; done) \
	>"$DPDK_DIR/rss.log" &
SAMPLER_PID=$!
MAC_A=$(ip -n "$DPDK_NS_A" -o link show veth-a | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
[ -n "$MAC_A" ] || fail "no MAC on veth-a"

ip netns exec "$DPDK_NS_B" python3 "$FLOOD" veth-b $A "$MAC_A" "$PORT" "$SYNS" "$RATE" 10 100 \
	>"$DPDK_DIR/flood.out" 2>&1 &
FLOOD_PID=$!
n=0
until grep -q 'flood: half' "$DPDK_DIR/flood.out" 2>/dev/null; do
	kill -0 "$FLOOD_PID" 2>/dev/null || { cat "$DPDK_DIR/flood.out"; fail "flooder ended early"; }
	[ "$n" -lt 600 ] || fail "the flood did not get half way in 30 s"
	sleep 0.05
	n=$((n + 1))
done
t0=$(date +%s.%N)
out=$(timeout "$PROG_TIMEOUT" ip netns exec "$DPDK_NS_B" env SOFTRNIC_TRANSPORT=sock \
	"$RPING" -c -a $A -p "$PORT" -C 20 -V -S 1000 2>&1)
rc=$?
took=$(echo "$(date +%s.%N) - $t0" | bc)
during=yes
kill -0 "$FLOOD_PID" 2>/dev/null || during=no
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || { cat "$DPDK_DIR/server.err" >&2; fail "the real client failed ($rc) under the flood"; }
printf '%s\n' "$out" | grep -q '20 pings of 1000 bytes, verified' || fail "client summary missing"
wait_server "under the flood"
wait "$SAMPLER_PID"
wait "$FLOOD_PID" || { cat "$DPDK_DIR/flood.out"; fail "flooder failed"; }
FLOOD_PID=
cat "$DPDK_DIR/flood.out"
line=$(grep '^flood: sent=' "$DPDK_DIR/flood.out") || fail "no flood summary"
field() { printf '%s\n' "$line" | sed "s/.* $1=\([0-9]*\).*/\1/"; }
sent=$(printf '%s\n' "$line" | sed 's/^flood: sent=\([0-9]*\).*/\1/')
first=$(field first_half_tuples)
answered=$(field answered_first_half)
[ "$sent" -eq "$SYNS" ] || fail "the flooder sent $sent SYNs, not $SYNS"
# The first half went out while the server surely lived: nearly every SYN of it answered,
# far more than half-open children fit, so with SYN cookies.
[ "$answered" -ge $((first * 9 / 10)) ] ||
	fail "only $answered of the first $first SYNs got a SYN-ACK (half-open queue: $HALF_OPEN_MAX)"
[ "$(echo "$took < $CLIENT_BOUND" | bc)" -eq 1 ] ||
	fail "the real client took ${took} s under the flood (bound ${CLIENT_BOUND} s)"
[ "$during" = yes ] || echo "$TEST_NAME: note: the flood had ended before the client was through"
rss0=$(head -n 1 "$DPDK_DIR/rss.log")
rss_max=$(sort -n "$DPDK_DIR/rss.log" | tail -n 1)
grew=$(( (rss_max - rss0) / 1024 ))
[ "$grew" -lt 32 ] || fail "the server's resident memory grew by $grew MiB during the flood"
echo "$TEST_NAME: OK (client through in ${took} s during the flood; $answered of the first" \
	"$first SYNs answered; server RSS $rss0 KiB at the start, at most $rss_max KiB)"
