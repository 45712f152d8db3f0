#!/bin/sh
# vipl-pingpong and vipl-bw, unchanged, over softrnic's TCP on DPDK, between two processes:
#   memif     the server process is the memif server (DPDK port 198.51.100.1), the client the
#             memif client (198.51.100.2);
#   afpacket  two network namespaces joined by a veth pair: ns A holds the server's port on
#             veth-a (198.51.100.1), ns B the client's on veth-b (198.51.100.2); the kernel holds
#             no address on either end. Needs root (exit 77 without it); both namespaces are
#             removed on every exit.
# Neither side is given its VIPL address (-l): each NIC's address must be its DPDK port's
# (docs/vipl.md): the server must listen on 198.51.100.1:7447 (binding another address
# fails on the DPDK transport) and the client's NIC is 198.51.100.2. Every run verifies a data
# pattern (-v); both processes must exit 0 and the client must print a result line per size.
# Exit 77 only when EAL cannot start (or, afpacket, namespaces cannot be made).
# Usage: apps_dpdk.sh memif|afpacket vipl-pingpong vipl-bw
set -u
LINK=${1:?usage: apps_dpdk.sh memif|afpacket vipl-pingpong vipl-bw}
TEST_NAME=vipl_apps_dpdk_$LINK
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dpdk/dpdk_lib.sh"
. "$(dirname "$0")/vipl_dpdk_lib.sh"
PINGPONG=${2:?missing vipl-pingpong}
BW=${3:?missing vipl-bw}
PROG_TIMEOUT=${VIPL_TIMEOUT:-60}
A=198.51.100.1
B=198.51.100.2
dpdk_tmpdir
case $LINK in
memif) ;;
afpacket) dpdk_netns vd ;;
*) echo "usage: apps_dpdk.sh memif|afpacket vipl-pingpong vipl-bw" >&2; exit 2 ;;
esac

on_side() {   # on_side server|client CMD...: in that side's namespace (afpacket) or here
	side=$1
	shift
	if [ "$LINK" = memif ]; then
		"$@"
	elif [ "$side" = server ]; then
		ip netns exec "$DPDK_NS_A" "$@"
	else
		ip netns exec "$DPDK_NS_B" "$@"
	fi
}

side_vdev() {   # side_vdev server|client: the side's DPDK port
	if [ "$LINK" = memif ]; then
		memif_vdev "$1"
	elif [ "$1" = server ]; then
		echo "net_af_packet0,iface=veth-a,qdisc_bypass=1"
	else
		echo "net_af_packet0,iface=veth-b,qdisc_bypass=1"
	fi
}

run_pair() {   # run_pair NAME EXPECTED_LINES PROG ARGS...
	name=$1
	lines=$2
	prog=$3
	shift 3
	start_server on_side server timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal server "$(side_vdev server)")" SOFTRNIC_DPDK_IP=$A/24 \
		"$prog" -s "$@" 2>"$DPDK_DIR/server.err"
	# EAL start and listen; the client retries its connect request until the server is up
	sleep 1
	out=$(on_side client timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal client "$(side_vdev client)")" SOFTRNIC_DPDK_IP=$B/24 \
		"$prog" -c "$A" "$@" 2>"$DPDK_DIR/client.err")
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
if [ "$LINK" = memif ]; then
	run_pair pingpong_rd 1 "$PINGPONG" -n 500 -S 64 -v
	run_pair pingpong_rd_poll 1 "$PINGPONG" -n 500 -S 4096 -p -v
	run_pair pingpong_rr 1 "$PINGPONG" -n 200 -S 1024 -r rr -v
	run_pair pingpong_all 16 "$PINGPONG" -n 20 -a -v
	run_pair bw_rd 1 "$BW" -n 2000 -S 65536 -w 16 -v
	run_pair bw_all 16 "$BW" -n 100 -a -w 8 -v
else
	run_pair pingpong 1 "$PINGPONG" -n 300 -S 64 -v
	run_pair pingpong_poll 1 "$PINGPONG" -n 300 -S 4096 -p -v
	run_pair pingpong_rr 1 "$PINGPONG" -n 100 -S 1024 -r rr -v
	run_pair bw 1 "$BW" -n 2000 -S 65536 -w 16 -v
	run_pair bw_all 16 "$BW" -n 50 -a -w 8 -v
fi
echo "$TEST_NAME: OK"
