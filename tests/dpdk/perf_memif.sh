#!/bin/sh
# softrnic-perf, unchanged, between two processes over net_memif (server 198.51.100.1 is the
# memif server, the client 198.51.100.2): write, read and send; bandwidth and latency; short
# runs, each must print a sane result line (no timing thresholds); Send bandwidth over four
# QPs (-Q); RDMA Write with WRs posted in lists (-B); bandwidth again with
# zero-copy transmit (tx_refs). Both sides poll with
# sched_yield (-y): the machine's cores are shared.
# Usage: perf_memif.sh /path/to/softrnic-perf
set -u
TEST_NAME=dpdk_perf_memif
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dpdk_lib.sh"
PERF=${1:?usage: perf_memif.sh /path/to/softrnic-perf}
dpdk_tmpdir
PORT=7571
A=198.51.100.1
B=198.51.100.2

# check_line OUTPUT SIZE ITERS NFIELDS (as tests/apps/perf_lo.sh)
check_line() {
	printf '%s\n' "$1" | awk -v size="$2" -v iters="$3" -v nf="$4" '
		$1 == size && $2 == iters && NF == nf {
			for (i = 3; i <= NF; i++) if (!($i + 0 > 0)) bad = 1
			if (nf == 9 && !($3 <= $5 && $5 <= $4)) bad = 1
			found = 1
		}
		END { exit !(found && !bad) }'
}

run() { # test lat(0|1) size iters [extra client options]
	opts="-t $1 -s $3 -n $4 -y ${5:-}"
	[ "$2" -eq 1 ] && opts="$opts -l"
	start_server timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal server "$(memif_vdev server)")" SOFTRNIC_DPDK_IP=$A/24 \
		"$PERF" -p "$PORT" -T 20 -y -b $A >/dev/null 2>"$DPDK_DIR/server.err"
	dpdk_head_start
	dpdk_skip_if_no_eal "$DPDK_DIR/server.err"
	# shellcheck disable=SC2086
	out=$(timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal client "$(memif_vdev client)")" SOFTRNIC_DPDK_IP=$B/24 \
		"$PERF" -p "$PORT" -T 20 $opts $A 2>&1)
	rc=$?
	printf '%s\n' "$out"
	if [ "$rc" -ne 0 ]; then
		cat "$DPDK_DIR/server.err" >&2
		fail "client ($opts) exited with status $rc"
	fi
	wait_server "$opts"
	PORT=$((PORT + 1))
	nf=5
	[ "$2" -eq 1 ] && nf=9
	check_line "$out" "$3" "$4" "$nf" || fail "no sane result line for $opts"
}

for t in write read send; do
	run "$t" 0 65536 300
	run "$t" 1 8 300
done
run write 1 8 300 -P   # write latency with the target polling its CQ (the server takes -P)
run send 0 64 1000 "-Q 4"  # four QPs on one thread, each its own connection through the engine
run write 0 64 1001 "-B 16"  # lists of 16 WRs a post, the last one short
# payload sent by reference from the registered buffers (key tx_refs) on both ends: Writes
# and Sends complete after the ACK, Read Responses free their IRD slot when handed over
# (the requester keeps up to its ORD outstanding)
export SOFTRNIC_DPDK_TX_REFS=on
for t in write read send; do
	run "$t" 0 65536 2000
done
unset SOFTRNIC_DPDK_TX_REFS
# 2.2 GiB of Writes: past 2^31 octets in MPA record mode (the engine stalled there, and its
# record boundaries read as not yet started, so FPDUs lost their segment alignment); a
# sanitizer build sets PERF_MEMIF_LONG lower (tests/dpdk/meson.build): the plain build
# makes the crossing
PROG_TIMEOUT=120
run write 0 65536 "${PERF_MEMIF_LONG:-36000}"
echo "$TEST_NAME: OK"
