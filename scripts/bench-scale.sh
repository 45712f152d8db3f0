#!/usr/bin/env bash
# Many QPs between two processes (bench/scale/qp_scale), ROUNDS rounds of NQP QPs over each
# transport: kernel sockets on loopback, and softrnic's TCP engine on net_memif. Each run
# reports the round trip of one QP alone and with all NQP open; the judged figure is the
# median over rounds of (with all open) / (alone), goal <= 1.1
# (issue 27); the connection setup rate and the resident memory per QP are reported.
# Exit status: 0 goal met on every transport, 3 missed, else a run failure.
# Usage: scripts/bench-scale.sh [ROUNDS [NQP]]   (BUILD_DIR: a tree of your own, set up as a
#   plain release build on first use; unset: build-release, scripts/build-release.sh;
#   TRANSPORTS: default "kernel memif"; BENCH_OUT: the figures' CSV and PNG,
#   DATE-bench-scale.csv / .png, default bench/results, none writes nothing: per round the
#   round trip with all open beside the one alone, the setup rate and the memory per QP)
set -uo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
NQP=${2:-10000}
TRANSPORTS=${TRANSPORTS:-kernel memif}
die() { echo "bench-scale: $*" >&2; exit 1; }
B=${BUILD_DIR:-build-release}
. scripts/bench-lib.sh
bench_tmpdir bench-scale
bench_csv_open bench-scale || exit 1
bench_build bench/scale/qp_scale
Q=$B/bench/scale/qp_scale

eal() { # ROLE LCORE
	echo "SOFTRNIC_DPDK_EAL=--no-huge -m 1024 -l $2 --vdev=net_memif0,role=$1,socket=$T/memif.sock,socket-abstract=no"
}

# A QP holds one descriptor on either transport (docs/rnic.md), a CQ's channel one per 1,024
# QPs: as many QPs as the hard open-file limit allows, NQP at most
KNQP=$(( $(ulimit -Hn) - 512 ))
[ "$KNQP" -lt "$NQP" ] || KNQP=$NQP
MNQP=$KNQP

# run TRANSPORT ROUND: one server and one client; the client's summary line to stdout
run() {
	local srv=() cli=() addr=127.0.0.1 port=$((17600 + $2)) n=$KNQP
	if [ "$1" = memif ]; then
		rm -f "$T/memif.sock"
		addr=198.51.100.1
		n=$MNQP
		srv=(env SOFTRNIC_TRANSPORT=dpdk "$(eal server 0)" SOFTRNIC_DPDK_IP=198.51.100.1/24)
		cli=(env SOFTRNIC_TRANSPORT=dpdk "$(eal client 1)" SOFTRNIC_DPDK_IP=198.51.100.2/24)
	fi
	"${srv[@]}" "$Q" -s -b "$addr" -p "$port" -n "$n" >"$T/server.out" 2>&1 &
	PIDS+=($!)
	sleep 3
	"${cli[@]}" "$Q" -c "$addr" -p "$port" -n "$n" -i 3000 >"$T/client.out" 2>&1 ||
		{ cat "$T/client.out" "$T/server.out" >&2; die "$1 round $2: client failed"; }
	wait "${PIDS[-1]}" || { cat "$T/server.out" >&2; die "$1 round $2: server failed"; }
	grep '^qp_scale:' "$T/client.out"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
num() { sed -n "s/.*$1 *\([0-9.]*\).*/\1/p"; }

status=0
echo "# scripts/bench-scale.sh $ROUNDS $NQP ($(date -u +%F), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), build $B," \
	"open-file hard limit $(ulimit -Hn): $KNQP QPs over kernel sockets, $MNQP over memif)"
for t in $TRANSPORTS; do
	: >"$T/$t.lines"
	for r in $(seq 1 "$ROUNDS"); do
		line=$(run "$t" "$r") || exit 1
		echo "$t round $r: $line"
		echo "$line" >>"$T/$t.lines"
		bench_csv "$t round trip with all QPs open vs alone" "" us \
			"$(sed -n 's/.*alone, \([0-9.]*\) us with all.*/\1/p' <<<"$line")" \
			"$(sed -n 's/.*QP 0: \([0-9.]*\) us alone.*/\1/p' <<<"$line")" "$r"
		bench_csv "$t QP setup rate" "" QPs/s "$(sed -n 's/.* s (\([0-9]*\)\/s).*/\1/p' <<<"$line")" "" "$r"
		bench_csv "$t resident memory per QP" "" KiB "$(sed -n 's/.*: \([0-9.]*\) KiB per QP.*/\1/p' <<<"$line")" "" "$r"
	done
	ratio=$(num '(ratio' <"$T/$t.lines" | median)
	rate=$(sed -n 's/.* s (\([0-9]*\)\/s).*/\1/p' "$T/$t.lines" | median)
	kib=$(sed -n 's/.*: \([0-9.]*\) KiB per QP.*/\1/p' "$T/$t.lines" | median)
	echo "$t: median ratio $ratio (goal <= 1.1), setup $rate QPs/s, $kib KiB resident per QP"
	awk -v r="$ratio" 'BEGIN { exit !(r <= 1.1) }' || status=3
done
bench_plot
exit $status
