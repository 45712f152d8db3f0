#!/usr/bin/env bash
# MPI over softrnic beside Open MPI's own TCP BTL, in the same run, between two ranks in two
# network namespaces (root): bench/mpi/mpi_bench's 8-octet ping-pong latency and 1 MiB
# streaming bandwidth, ROUNDS rounds, each round running them in turn:
#   tcp         --mca pml ob1 --mca btl tcp,self, kernel TCP on a veth pair
#   softrnic    pml cm, mtl ofi on verbs;ofi_rxm, softrnic over kernel sockets on that veth
#   memif       the same on softrnic's TCP engine, a DPDK port per rank, net_memif between
#               the ranks (a socket file both namespaces see), MTU MEMIF_MTU (default 64000,
#               the link bench-tcp.sh judges bandwidth on: the kernel's TCP on the veth moves
#               64 KiB segments through GSO/GRO whatever its MTU), memif_csum MEMIF_CSUM
#               (default off: a veth skips TCP checksums between namespaces of one host, and
#               so may a memif link, docs/decisions.md D149)
#   memif9k     memif at MTU 9000 (jumbo frames as on a datacenter link), reported
#   afpacket    the same, net_af_packet on a second veth pair (the kernel's view of the
#               ports: tests/dpdk/dpdk_lib.sh)
# Prints every run, the medians, and the median of each round's ratio to tcp (the judged
# figure). Goals (issue 26): on DPDK
# (memif: af_packet passes through the kernel as TCP does, so it is reported) latency <= 0.5x
# and bandwidth >= 1.2x the TCP BTL's; over kernel sockets, reported.
# Exit status: 0 goals met, 3 a goal missed, else a build or run failure.
# Usage: scripts/bench-mpi.sh [ROUNDS]   (BUILD_DIR: a tree of your own, set up as a plain
#   release build on first use; unset: build-release, LTO and PGO, scripts/build-release.sh,
#   the build the goals are judged on; MEMIF_MTU, MEMIF_CSUM, MPI_X; LINKS: the links to run,
#   default all five; the goals are judged only when tcp and memif are among them;
#   BENCH_ARGS: mpi_bench's arguments on the DPDK links, e.g. "1 100" to stream long enough
#   for perf; BENCH_OUT: the figures' CSV and PNG, DATE-bench-mpi.csv / .png, default
#   bench/results, none writes nothing: each link's latency and bandwidth per round beside the
#   TCP BTL's of that round)
set -uo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
LINKS=${LINKS:-tcp softrnic memif memif9k afpacket}
B=${BUILD_DIR:-build-release}
die() { echo "bench-mpi.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
command -v mpirun >/dev/null || die "no mpirun (scripts/deps.sh installs openmpi-bin)"
source scripts/bench-lib.sh # bench_build
bench_build bench/mpi/mpi_bench verbs/libibverbs.so.1.14.44 verbs/rdmacm/librdmacm.so.1.3.44
BENCH=$PWD/$B/bench/mpi/mpi_bench
[ -x "$BENCH" ] || die "$BENCH was not built (Open MPI's development files: libopenmpi-dev)"

# The tests' helpers: fail, exit hooks, the drop-in library path, namespaces and DPDK ports.
TEST_NAME=bench-mpi
. tests/lib/common.sh
set -- "$PWD/$B/verbs" "$PWD/$B/verbs/rdmacm"
. tests/dropin/dropin.sh
. tests/dpdk/dpdk_lib.sh
dpdk_tmpdir
dpdk_netns mpib
dpdk_netns_kernel_view
AGENT=$PWD/tests/mpi/nsagent.sh
MPI_NETNS="$DPDK_NS_A $DPDK_NS_B"
export MPI_NETNS

# run_mpi NAME MPIRUN-ARGS...: one run from namespace A; prints "lat bw"
run_mpi() {
	local name=$1 out=$DPDK_DIR/$1.out
	shift
	ip netns exec "$DPDK_NS_A" timeout 300 mpirun --allow-run-as-root --oversubscribe \
		--bind-to none --mca plm_rsh_agent "$AGENT" \
		--mca oob_tcp_if_include "$DPDK_CTL_A/25" -x LD_LIBRARY_PATH -x MPI_NETNS "$@" \
		>"$out" 2>&1 || { tail -20 "$out" >&2; die "$name: mpirun failed"; }
	sed -n 's/^mpi_bench: lat_us=\([0-9.]*\) bw_mib_s=\([0-9.]*\)$/\1 \2/p' "$out" | tail -1
}
# MPI_X="K=V ...": more environment for every rank of the softrnic runs (libfabric's FI_*)
extra=()
for v in ${MPI_X:-}; do extra+=(-x "$v"); done
hosts=(-np 1 -H "$DPDK_CTL_A")
hostb=(-np 1 -H "$DPDK_CTL_B")
ofi=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include 'verbs;ofi_rxm')
run_tcp() {
	run_mpi tcp --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$DPDK_CTL_A/25" \
		-np 2 -H "$DPDK_CTL_A,$DPDK_CTL_B" "$BENCH"
}
run_softrnic() { # kernel sockets on the ctl veth (the verbs provider told to use it)
	run_mpi softrnic "${ofi[@]}" "${extra[@]}" -x FI_VERBS_IFACE=ctl -np 2 -H "$DPDK_CTL_A,$DPDK_CTL_B" \
		"$BENCH"
}
# run_dpdk NAME MTU VDEV-A VDEV-B [MPIRUN-ARGS...]: rank 0 on port VDEV-A in A, rank 1 on VDEV-B in B. mpirun
# gives an app context's -x to that context's ranks only: the shared ones go in both.
run_dpdk() {
	local a b
	a=$(dpdk_eal server "$3")
	b=$(dpdk_eal client "$4")
	local both=("${extra[@]}" -x SOFTRNIC_TRANSPORT=dpdk -x "SOFTRNIC_DPDK_MTU=$2" "${@:5}")
	run_mpi "$1" "${ofi[@]}" "${both[@]}" "${hosts[@]}" -x "$a" \
		-x SOFTRNIC_DPDK_IP=198.51.100.1/25 "$BENCH" ${BENCH_ARGS:-} : \
		"${both[@]}" "${hostb[@]}" -x "$b" \
		-x SOFTRNIC_DPDK_IP=198.51.100.2/25 "$BENCH" ${BENCH_ARGS:-}
}
# run_memif_at NAME MTU: a socket file stays behind its server (memif_file_vdev) and would
# refuse the next one
run_memif_at() {
	rm -f "$DPDK_DIR/memif.sock"
	run_dpdk "$1" "$2" "$(memif_file_vdev server)" "$(memif_file_vdev client)" \
		-x "SOFTRNIC_DPDK_MEMIF_CSUM=${MEMIF_CSUM:-off}"
}
run_memif() { run_memif_at memif "${MEMIF_MTU:-64000}"; }
run_memif9k() { run_memif_at memif9k 9000; }
run_afpacket() { # the veth's MTU
	run_dpdk afpacket 1500 net_af_packet0,iface=veth-a,qdisc_bypass=1 \
		net_af_packet0,iface=veth-b,qdisc_bypass=1
}

declare -A lat bw ml mb rlat rbw
echo "== scripts/bench-mpi.sh $ROUNDS ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(mpirun --version | head -1)," \
	"$B, memif MTU ${MEMIF_MTU:-64000}, memif_csum ${MEMIF_CSUM:-off})"
printf '%-6s %-9s %10s %12s\n' round link lat_us bw_mib_s
bench_csv_open bench-mpi || exit 1
# ratio A B: A / B to two places
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
for r in $(seq "$ROUNDS"); do
	for t in $LINKS; do
		read -r l w < <("run_$t") || die "$t: no result line"
		[ -n "${l:-}" ] || die "$t: no result line"
		lat[$t]+="$l " bw[$t]+="$w "
		printf '%-6s %-9s %10s %12s\n' "$r" "$t" "$l" "$w"
	done
	# each link against the TCP BTL of the same round: the machine's noise drifts between
	# rounds more than within one
	if [ -n "${lat[tcp]:-}" ]; then
		tl=$(echo ${lat[tcp]} | awk '{ print $NF }')
		tb=$(echo ${bw[tcp]} | awk '{ print $NF }')
		for t in $LINKS; do
			rlat[$t]+="$(ratio "$(echo ${lat[$t]} | awk '{ print $NF }')" "$tl") "
			rbw[$t]+="$(ratio "$(echo ${bw[$t]} | awk '{ print $NF }')" "$tb") "
			[ "$t" = tcp ] && continue
			bench_csv "$t latency vs TCP BTL" 8 us "$(awk '{ print $NF }' <<<"${lat[$t]}")" "$tl" "$r"
			bench_csv "$t bandwidth vs TCP BTL" 1048576 MiB/s \
				"$(awk '{ print $NF }' <<<"${bw[$t]}")" "$tb" "$r"
		done
	fi
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END {
	print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo "== medians of $ROUNDS rounds (and of each round's ratio to tcp, when it ran)"
for t in $LINKS; do
	ml[$t]=$(median <<<"${lat[$t]}")
	mb[$t]=$(median <<<"${bw[$t]}")
done
rc=0
case " $LINKS " in
*" tcp "*) ;;
*) # no baseline: the medians alone
	for t in $LINKS; do
		printf '%-9s lat %8s us   bw %9s MiB/s\n' "$t" "${ml[$t]}" "${mb[$t]}"
		bench_csv "$t latency" 8 us "${ml[$t]}" "" median
		bench_csv "$t bandwidth" 1048576 MiB/s "${mb[$t]}" "" median
	done
	bench_plot
	exit 0 ;;
esac
for t in $LINKS; do
	rl=$(printf %.2f "$(median <<<"${rlat[$t]}")")
	rb=$(printf %.2f "$(median <<<"${rbw[$t]}")")
	printf '%-9s lat %8s us (%sx)   bw %9s MiB/s (%sx)\n' "$t" "${ml[$t]}" "$rl" "${mb[$t]}" "$rb"
	if [ "$t" = memif ]; then
		awk -v x="$rl" 'BEGIN { exit !(x <= 0.5) }' || { echo "goal missed: memif latency ${rl}x > 0.5x"; rc=3; }
		awk -v x="$rb" 'BEGIN { exit !(x >= 1.2) }' || { echo "goal missed: memif bandwidth ${rb}x < 1.2x"; rc=3; }
	fi
done
bench_plot
exit "$rc"
