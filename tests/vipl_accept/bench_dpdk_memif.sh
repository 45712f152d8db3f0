#!/bin/sh
# Informational (not a meson test): VIPL against raw verbs + librdmacm on the DPDK transport,
# two processes over net_memif (server 198.51.100.1 = memif server, client 198.51.100.2), the
# exchanges of scripts/bench-vipl.sh:
#   latency   vipl-pingpong -p  vs  vipl_raw lat      (8 B, 64 B, 4 KiB; one-way p50, us)
#   bandwidth vipl-bw -p -w 16  vs  vipl_raw bw -w 16 (64 KiB sends; MB/s)
# Prints every run's number; REPS repetitions (default 3); MODE=yield adds -y to both sides
# (sched_yield after each empty poll, as scripts/bench-vipl.sh's yield mode). No pinning (dpdk_lib.sh's -l only
# names EAL's main lcore). Usage: bench_dpdk_memif.sh BUILD_DIR
set -u
TEST_NAME=vipl_bench_dpdk_memif
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dpdk/dpdk_lib.sh"
. "$(dirname "$0")/vipl_dpdk_lib.sh"
BUILD=${1:?usage: bench_dpdk_memif.sh BUILD_DIR}
PP=$BUILD/apps/vipl/vipl-pingpong
BW=$BUILD/apps/vipl/vipl-bw
RAW=$BUILD/bench/vipl/vipl_raw
REPS=${REPS:-3}
case ${MODE:-spin} in
spin) VF=-p RF= ;;
yield) VF=-y RF=-y ;;
*) fail "MODE is spin or yield" ;;
esac
LAT_ITERS=${LAT_ITERS:-10000}
BW_ITERS=${BW_ITERS:-5000}
PROG_TIMEOUT=120
A=198.51.100.1
B=198.51.100.2
dpdk_tmpdir

# one FIELD: runs server $SARGS and client $CARGS (word-split: no spaces inside arguments);
# prints the client's FIELD-th number of its last result line.
one() {
	# shellcheck disable=SC2086
	start_server timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal server "$(memif_vdev server)")" SOFTRNIC_DPDK_IP=$A/24 \
		$SARGS >/dev/null 2>"$DPDK_DIR/server.err"
	sleep 1
	# shellcheck disable=SC2086
	out=$(timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal client "$(memif_vdev client)")" SOFTRNIC_DPDK_IP=$B/24 \
		$CARGS 2>"$DPDK_DIR/client.err") ||
		{ cat "$DPDK_DIR/client.err" "$DPDK_DIR/server.err" >&2; fail "client: $CARGS"; }
	wait_server "$CARGS"
	echo "$out" | grep -E '^ [0-9]+ +[0-9]+ +[0-9.]+' | tail -n 1 | awk -v f="$1" '{print $f}'
}

for rep in $(seq "$REPS"); do
	for s in 8 64 4096; do
		SARGS="$PP -s $VF -n $LAT_ITERS -S $s"
		CARGS="$PP -c $A $VF -n $LAT_ITERS -S $s"
		v=$(one 5)
		SARGS="$RAW lat $RF -s -P 7471 -n $LAT_ITERS -S $s"
		CARGS="$RAW lat $RF -c $A -P 7471 -n $LAT_ITERS -S $s"
		r=$(one 3)
		echo "${MODE:-spin} rep $rep lat ${s}B: vipl $v us, raw $r us"
	done
	SARGS="$BW -s $VF -n $BW_ITERS -S 65536 -w 16"
	CARGS="$BW -c $A $VF -n $BW_ITERS -S 65536 -w 16"
	v=$(one 3)
	SARGS="$RAW bw $RF -s -P 7471 -n $BW_ITERS -S 65536 -w 16"
	CARGS="$RAW bw $RF -c $A -P 7471 -n $BW_ITERS -S 65536 -w 16"
	r=$(one 3)
	echo "${MODE:-spin} rep $rep bw 64KiB: vipl $v MB/s, raw $r MB/s"
done
