#!/bin/sh
# The resident memory of a DPDK process with the port's defaults (one port, MTU 1500, the
# default pools; docs/dpdk.md "Memory"): softrnic-rping server and client exchange 64 KiB
# verified pings over net_af_packet on a veth across two namespaces (root), then over
# net_memif. Both processes' VmRSS and VmHWM (/proc/PID/status) are read every 0.1 s while
# the client runs, so the last reading is taken connected, after most of the transfer, and
# VmHWM covers everything before it; every reading of both must stay at or below RSS_MAX_KB
# (65536: 64 MiB). Needs root for the namespaces: exit 77 without.
# Usage: rss.sh /path/to/softrnic-rping
set -u
TEST_NAME=dpdk_rss
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dpdk_lib.sh"
RPING=${1:?usage: rss.sh /path/to/softrnic-rping}
RSS_MAX_KB=${RSS_MAX_KB:-65536}
PINGS=300
dpdk_tmpdir
PORT=7771
A=198.51.100.1
B=198.51.100.2

# kb PID FIELD: FIELD (VmRSS, VmHWM) of PID in kB, empty when PID is gone
kb() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null
}

# note ROLE PID: the largest VmRSS and VmHWM of ROLE seen so far (MAX_ROLE_FIELD)
note() {
	for f in VmRSS VmHWM; do
		v=$(kb "$2" "$f")
		[ -n "$v" ] || return 0
		eval "m=\${MAX_$1_$f:-0}"
		[ "$v" -gt "$m" ] && eval "MAX_$1_$f=$v"
	done
	eval "SAMPLES_$1=\$((\${SAMPLES_$1:-0} + 1))"
}

# measure WHAT SERVER_NS CLIENT_NS SERVER_VDEV CLIENT_VDEV (NS empty: this namespace)
measure() {
	MAX_server_VmRSS=0 MAX_server_VmHWM=0 MAX_client_VmRSS=0 MAX_client_VmHWM=0
	SAMPLES_server=0 SAMPLES_client=0
	start_server timeout "$PROG_TIMEOUT" ${2:+ip netns exec "$2"} env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal server "$4")" SOFTRNIC_DPDK_IP=$A/24 \
		"$RPING" -s -a $A -p "$PORT" -V -q 2>"$DPDK_DIR/server.err"
	dpdk_head_start
	dpdk_skip_if_no_eal "$DPDK_DIR/server.err"
	timeout "$PROG_TIMEOUT" ${3:+ip netns exec "$3"} env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal client "$5")" SOFTRNIC_DPDK_IP=$B/24 \
		"$RPING" -c -a $A -p "$PORT" -C $PINGS -S 65536 -V >"$DPDK_DIR/client.out" 2>&1 &
	cl=$!
	sleep 0.2
	srv=$(pgrep -P "$SERVER_PID" | head -1)
	cli=$(pgrep -P "$cl" | head -1)
	while kill -0 "$cl" 2>/dev/null; do
		[ -n "$srv" ] && note server "$srv"
		[ -n "$cli" ] && note client "$cli"
		sleep 0.1
	done
	wait "$cl"
	rc=$?
	cat "$DPDK_DIR/client.out"
	if [ "$rc" -ne 0 ]; then
		cat "$DPDK_DIR/server.err" >&2
		fail "$1: client exited with status $rc"
	fi
	grep -q "$PINGS pings of 65536 bytes, verified" "$DPDK_DIR/client.out" ||
		fail "$1: client summary missing"
	wait_server "$1"
	for r in server client; do
		eval "rss=\$MAX_${r}_VmRSS hwm=\$MAX_${r}_VmHWM n=\$SAMPLES_$r"
		echo "$TEST_NAME: $1 $r: VmRSS $rss kB, VmHWM $hwm kB ($n readings)"
		[ "$n" -ge 3 ] || fail "$1 $r: only $n readings of its memory"
		[ "$hwm" -le "$RSS_MAX_KB" ] && [ "$rss" -le "$RSS_MAX_KB" ] ||
			fail "$1 $r: resident memory above $RSS_MAX_KB kB (docs/dpdk.md, Memory)"
	done
	PORT=$((PORT + 1))
}

dpdk_netns rss
measure af_packet "$DPDK_NS_A" "$DPDK_NS_B" "net_af_packet0,iface=veth-a,qdisc_bypass=1" \
	"net_af_packet0,iface=veth-b,qdisc_bypass=1"
measure memif "" "" "$(memif_vdev server)" "$(memif_vdev client)"
echo "$TEST_NAME: OK"
