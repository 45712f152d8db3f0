#!/usr/bin/env bash
# MPI over softrnic beside Open MPI's own TCP BTL, in the same run, between two ranks in two
# network namespaces (root): bench/mpi/mpi_bench's 8-octet ping-pong latency and 1 MiB
# streaming bandwidth, ROUNDS rounds, each round running the three in turn:
#   tcp         --mca pml ob1 --mca btl tcp,self, kernel TCP on a veth pair
#   softrnic    pml cm, mtl ofi on verbs;ofi_rxm, softrnic over kernel sockets on that veth
#   memif       the same on softrnic's TCP engine, a DPDK port per rank, net_memif between
#               the ranks (a socket file both namespaces see), MTU MEMIF_MTU (default 9000,
#               jumbo frames as on a datacenter link; the kernel's TCP on the veth moves 64 KiB
#               segments through GSO/GRO whatever its MTU)
#   afpacket    the same, net_af_packet on a second veth pair (the kernel's view of the
#               ports: tests/dpdk/dpdk_lib.sh)
# Prints every run, the medians and the ratios against tcp. Goals (issue 26): on DPDK
# (memif: af_packet passes through the kernel as TCP does, so it is reported) latency <= 0.5x
# and bandwidth >= 1.2x the TCP BTL's; over kernel sockets, reported.
# Exit status: 0 goals met, 3 a goal missed, else a build or run failure.
# Usage: scripts/bench-mpi.sh [ROUNDS]   (BUILD_DIR: the tree, default build-bench, release;
#   MEMIF_MTU, MPI_X)
set -uo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
B=${BUILD_DIR:-build-bench}
die() { echo "bench-mpi.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
command -v mpirun >/dev/null || die "no mpirun (scripts/deps.sh installs openmpi-bin)"
if [ ! -f "$B/build.ninja" ]; then
	meson setup "$B" -Dbuildtype=release >/dev/null || die "meson setup $B"
fi
ninja -C "$B" bench/mpi/mpi_bench verbs/libibverbs.so.1.14.44 \
	verbs/rdmacm/librdmacm.so.1.3.44 >/dev/null || die "could not build in $B"
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
ofi=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include 'verbs;ofi_rxm' "${extra[@]}")
run_tcp() {
	run_mpi tcp --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$DPDK_CTL_A/25" \
		-np 2 -H "$DPDK_CTL_A,$DPDK_CTL_B" "$BENCH"
}
run_softrnic() { # kernel sockets on the ctl veth (the verbs provider told to use it)
	run_mpi softrnic "${ofi[@]}" -x FI_VERBS_IFACE=ctl -np 2 -H "$DPDK_CTL_A,$DPDK_CTL_B" \
		"$BENCH"
}
# run_dpdk NAME MTU VDEV-A VDEV-B: rank 0 on port VDEV-A in A, rank 1 on VDEV-B in B
run_dpdk() {
	local a b
	a=$(dpdk_eal server "$3")
	b=$(dpdk_eal client "$4")
	run_mpi "$1" "${ofi[@]}" -x SOFTRNIC_TRANSPORT=dpdk -x "SOFTRNIC_DPDK_MTU=$2" \
		"${hosts[@]}" -x "$a" -x SOFTRNIC_DPDK_IP=198.51.100.1/25 "$BENCH" : \
		"${hostb[@]}" -x "$b" -x SOFTRNIC_DPDK_IP=198.51.100.2/25 "$BENCH"
}
# a socket file stays behind its server (memif_file_vdev) and would refuse the next one
run_memif() {
	rm -f "$DPDK_DIR/memif.sock"
	run_dpdk memif "${MEMIF_MTU:-9000}" "$(memif_file_vdev server)" "$(memif_file_vdev client)"
}
run_afpacket() { # the veth's MTU
	run_dpdk afpacket 1500 net_af_packet0,iface=veth-a,qdisc_bypass=1 \
		net_af_packet0,iface=veth-b,qdisc_bypass=1
}

declare -A lat bw ml mb
echo "== scripts/bench-mpi.sh $ROUNDS ($(nproc) CPUs, $(mpirun --version | head -1)," \
	"memif MTU ${MEMIF_MTU:-9000})"
printf '%-6s %-9s %10s %12s\n' round link lat_us bw_mib_s
for r in $(seq "$ROUNDS"); do
	for t in tcp softrnic memif afpacket; do
		read -r l w < <("run_$t") || die "$t: no result line"
		[ -n "${l:-}" ] || die "$t: no result line"
		lat[$t]+="$l " bw[$t]+="$w "
		printf '%-6s %-9s %10s %12s\n' "$r" "$t" "$l" "$w"
	done
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END {
	print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo "== medians of $ROUNDS rounds, ratio against tcp"
for t in tcp softrnic memif afpacket; do
	ml[$t]=$(median <<<"${lat[$t]}")
	mb[$t]=$(median <<<"${bw[$t]}")
done
rc=0
for t in tcp softrnic memif afpacket; do
	rl=$(awk -v a="${ml[$t]}" -v b="${ml[tcp]}" 'BEGIN { printf "%.2f", a / b }')
	rb=$(awk -v a="${mb[$t]}" -v b="${mb[tcp]}" 'BEGIN { printf "%.2f", a / b }')
	printf '%-9s lat %8s us (%sx)   bw %9s MiB/s (%sx)\n' "$t" "${ml[$t]}" "$rl" "${mb[$t]}" "$rb"
	if [ "$t" = memif ]; then
		awk -v x="$rl" 'BEGIN { exit !(x <= 0.5) }' || { echo "goal missed: memif latency ${rl}x > 0.5x"; rc=3; }
		awk -v x="$rb" 'BEGIN { exit !(x >= 1.2) }' || { echo "goal missed: memif bandwidth ${rb}x < 1.2x"; rc=3; }
	fi
done
exit "$rc"
