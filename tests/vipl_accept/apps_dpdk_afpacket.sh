#!/bin/sh
# vipl-pingpong and vipl-bw, unchanged, across two network namespaces over net_af_packet on a
# veth pair: ns A holds the server's DPDK port on veth-a (198.51.100.1), ns B the client's on
# veth-b (198.51.100.2); the kernel holds no address on either end. As in apps_dpdk_memif.sh no
# VIPL address is given: each NIC's address is its DPDK port's (docs/vipl.md V14). Data is
# verified (-v). Needs root: exit 77 without the permission for namespaces or when DPDK cannot
# start. Both namespaces are removed on every exit.
# Usage: apps_dpdk_afpacket.sh vipl-pingpong vipl-bw
set -u
TEST_NAME=vipl_apps_dpdk_afpacket
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dpdk/dpdk_lib.sh"
. "$(dirname "$0")/vipl_dpdk_lib.sh"
PINGPONG=${1:?usage: apps_dpdk_afpacket.sh vipl-pingpong vipl-bw}
BW=${2:?missing vipl-bw}
PROG_TIMEOUT=${VIPL_TIMEOUT:-60}
A=198.51.100.1
B=198.51.100.2
dpdk_tmpdir

vd_netns_setup vd

run_pair() {   # run_pair NAME EXPECTED_LINES PROG ARGS...: server in A, client in B
	name=$1
	lines=$2
	prog=$3
	shift 3
	start_server timeout "$PROG_TIMEOUT" ip netns exec "$NS_A" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal server "net_af_packet0,iface=veth-a,qdisc_bypass=1")" \
		SOFTRNIC_DPDK_IP=$A/24 "$prog" -s "$@" 2>"$DPDK_DIR/server.err"
	sleep 1 # EAL start and listen (the client also retries its connect request)
	out=$(timeout "$PROG_TIMEOUT" ip netns exec "$NS_B" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal client "net_af_packet0,iface=veth-b,qdisc_bypass=1")" \
		SOFTRNIC_DPDK_IP=$B/24 "$prog" -c "$A" "$@" 2>"$DPDK_DIR/client.err")
	rc=$?
	echo "$out"
	if [ "$rc" -ne 0 ]; then
		cat "$DPDK_DIR/client.err" "$DPDK_DIR/server.err" >&2
		vd_skip_if_no_dpdk "$DPDK_DIR/server.err"
		fail "$name: client exited with status $rc"
	fi
	wait_server "$name"
	n=$(echo "$out" | grep -Ec '^ [0-9]+ +[0-9]+ +[0-9.]+')
	[ "$n" -eq "$lines" ] || fail "$name: $n result lines, expected $lines"
}
run_pair pingpong 1 "$PINGPONG" -n 300 -S 64 -v
run_pair pingpong_poll 1 "$PINGPONG" -n 300 -S 4096 -p -v
run_pair pingpong_rr 1 "$PINGPONG" -n 100 -S 1024 -r rr -v
run_pair bw 1 "$BW" -n 2000 -S 65536 -w 16 -v
run_pair bw_all 16 "$BW" -n 50 -a -w 8 -v
echo "$TEST_NAME: OK"
