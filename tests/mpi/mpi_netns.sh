#!/bin/sh
# Open MPI (openmpi-bin), unmodified, over libfabric's verbs;ofi_rxm on softrnic: mpirun in one
# network namespace starts the ranks half there and half in a second one (tests/mpi/nsagent.sh
# stands in for ssh), every rank with our drop-in libibverbs.so.1 / librdmacm.so.1. The job
# (mpi_check) checks every octet it moves. Proof that softrnic carries the traffic between the
# namespaces: Open MPI's cm PML with the ofi MTL is the only messaging path allowed (no BTL
# moves MPI messages under cm), and the wire shows the job's data as iWARP DDP segments
# (tshark). LINK:
#   kernel    kernel sockets on a veth pair between the namespaces (the default)
#   memif     softrnic's TCP engine on DPDK, net_memif between the two ranks (a socket file
#             both namespaces see; two ranks only: memif joins two ports)
#   afpacket  the engine on DPDK, every rank on its own veth into a bridge in a third
#             namespace (net_af_packet)
# On DPDK every rank gets its own port configuration from mpirun (-x in its app context), the
# kernel lists each rank's port address on that rank's veth (libfabric's verbs provider looks
# for its device's address there; dpdk_lib.sh says why the kernel never answers for it), and
# mpirun's own traffic runs over kernel TCP on a second veth pair, which must carry less than
# the job's data; each port captures what it moves (SOFTRNIC_DPDK_PCAP) for tshark.
# Usage: mpi_netns.sh LIBIBVERBS_DIR LIBRDMACM_DIR MPI_CHECK NRANKS [kernel|memif|afpacket]
set -u
TEST_NAME=mpi_netns
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dropin/dropin.sh"
USAGE="usage: $0 LIBIBVERBS_DIR LIBRDMACM_DIR MPI_CHECK NRANKS [kernel|memif|afpacket]"
CHECK=${1:?$USAGE}
NP=${2:?$USAGE}
LINK=${3:-kernel}
TEST_NAME=mpi_netns_$NP
[ "$LINK" = kernel ] || TEST_NAME=mpi_${LINK}_$NP
need_debian mpirun openmpi-bin
need_debian fi_info libfabric-bin
need_cmd tshark tshark
uses_ours fi_info
AGENT=$(cd "$(dirname "$0")" && pwd)/nsagent.sh
T=$(mktemp -d)
CAP_PID=
cleanup_mpi() {
	[ -n "$CAP_PID" ] && kill "$CAP_PID" 2>/dev/null && wait "$CAP_PID" 2>/dev/null
	rm -rf "$T"
}
EXIT_HOOKS="cleanup_mpi $EXIT_HOOKS"
half=$((NP / 2))

# the namespace of rank I: the first half in A (where mpirun runs), the rest in B
rank_ns() { if [ "$1" -lt "$half" ]; then echo "$NS_A"; else echo "$NS_B"; fi; }

case $LINK in
kernel)
	. "$(dirname "$0")/../lib/netns.sh"
	netns_setup mpi
	NS_A=$NETNS_A NS_B=$NETNS_B HOST_A=$NETNS_ADDR_A HOST_B=$NETNS_ADDR_B OOB=198.51.100.0/24
	# a kernel buffer larger than the job's traffic: with 2 MiB (the default) a loaded
	# machine left tshark 6 MiB of TSO-sized frames short of the job's 22
	ip netns exec "$NS_A" tshark -q -B 64 -i veth-a -w "$T/veth.pcap" 2>"$T/tshark.err" &
	CAP_PID=$!
	i=0
	while [ ! -s "$T/veth.pcap" ] && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	;;
memif | afpacket)
	. "$(dirname "$0")/../dpdk/dpdk_lib.sh"
	[ "$LINK" = afpacket ] || [ "$NP" -eq 2 ] || fail "memif joins two ranks, not $NP"
	dpdk_tmpdir
	dpdk_netns mpi
	if [ "$LINK" = memif ]; then dpdk_netns_kernel_view; else dpdk_netns_ctl; fi
	NS_A=$DPDK_NS_A NS_B=$DPDK_NS_B HOST_A=$DPDK_CTL_A HOST_B=$DPDK_CTL_B OOB=$DPDK_CTL_A/25
	;;
*) fail "unknown link '$LINK' (kernel, memif or afpacket)" ;;
esac

# afpacket: rank I's port on veth rI (198.51.100.I+1/32 for the kernel's view), its peer sI
# in the bridge of namespace S; dpdk_netns' own veth pair stays unused. rI's ifindex is
# (I+1) << 12: DPDK 22.11's af_packet names its fanout group (pid ^ ifindex) & 0xffff, and a
# group of that id on another interface in the same namespace refuses the join (EINVAL), so
# two ranks in one namespace collide when their pids differ as their ifindexes do; with these
# ifindexes that takes pids 4096 or more apart with equal low 12 bits (dpdk.md, Limits)
if [ "$LINK" = afpacket ]; then
	NS_S=$NS_A-s
	ip netns add "$NS_S" || fail "ip netns add $NS_S"
	dpdk_bridge_cleanup() { ip netns del "$NS_S" 2>/dev/null; }
	EXIT_HOOKS="$EXIT_HOOKS dpdk_bridge_cleanup"
	ip -n "$NS_S" link add br0 type bridge || fail "bridge"
	ip -n "$NS_S" link set br0 up || fail "br0 up"
	i=0
	while [ "$i" -lt "$NP" ]; do
		ns=$(rank_ns "$i")
		idx=$(((i + 1) << 12)) # the peer takes its index only when both ends name one
		ip -n "$NS_S" link add "s$i" index "$idx" type veth peer name "r$i" index "$idx" \
			netns "$ns" || fail "veth r$i"
		[ "$(ip netns exec "$ns" cat "/sys/class/net/r$i/ifindex")" = "$idx" ] ||
			fail "r$i did not take ifindex $idx"
		ip -n "$NS_S" link set "s$i" master br0 up || fail "s$i into the bridge"
		dpdk_kernel_addr "$ns" "r$i" "198.51.100.$((i + 1))"
		ip -n "$ns" link set "r$i" up || fail "r$i up"
		i=$((i + 1))
	done
fi

# mpirun's app contexts: on kernel sockets one for all ranks; on DPDK one per rank, each with
# its own port (rank I: 198.51.100.I+1, main lcore I mod 2, memif server for rank 0)
if [ "$LINK" = kernel ]; then
	set -- -np "$NP" -H "$HOST_A:$half,$HOST_B:$((NP - half))" "$CHECK" 2
else
	set --
	i=0
	while [ "$i" -lt "$NP" ]; do
		[ "$i" -eq 0 ] || set -- "$@" :
		host=$HOST_A
		[ "$i" -lt "$half" ] || host=$HOST_B
		role=server
		[ $((i % 2)) -eq 0 ] || role=client
		vdev=net_af_packet0,iface=r$i,qdisc_bypass=1
		[ "$LINK" = memif ] && vdev=$(memif_file_vdev $role)
		set -- "$@" -np 1 -H "$host" -x SOFTRNIC_TRANSPORT=dpdk -x "$(dpdk_eal "$role" "$vdev")" \
			-x "SOFTRNIC_DPDK_IP=198.51.100.$((i + 1))/25" -x "SOFTRNIC_DPDK_PCAP=$T/rank$i.pcap" \
			"$CHECK" 2
		i=$((i + 1))
	done
fi
MPI_NETNS="$NS_A $NS_B"
export MPI_NETNS
ip netns exec "$NS_A" timeout 120 mpirun --allow-run-as-root --oversubscribe \
	--mca plm_rsh_agent "$AGENT" --mca oob_tcp_if_include "$OOB" \
	--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include 'verbs;ofi_rxm' \
	--mca pml_base_verbose 10 --mca mtl_base_verbose 10 \
	-x LD_LIBRARY_PATH -x MPI_NETNS "$@" >"$T/out" 2>&1
rc=$?
if [ -n "$CAP_PID" ]; then
	kill "$CAP_PID" 2>/dev/null
	wait "$CAP_PID" 2>/dev/null
	CAP_PID=
fi
grep -v 'mca:' "$T/out" | tail -20
if [ "$rc" -ne 0 ] && [ "$LINK" != kernel ]; then
	dpdk_skip_if_no_eal "$T/out"
fi
[ "$rc" -eq 0 ] || { cat "$T/out"; fail "mpirun exited with status $rc"; }
grep -q "mpi_check: OK: $NP ranks" "$T/out" || fail "mpi_check did not report OK"
n=$(grep -c 'select: component cm selected' "$T/out")
[ "$n" -eq "$NP" ] || fail "the cm PML was selected by $n of $NP ranks"
n=$(grep -c 'mtl:ofi:provider: softrnic0' "$T/out")
[ "$n" -eq "$NP" ] || fail "the ofi MTL chose softrnic0 in $n of $NP ranks"
# iWARP on the wire: the job's data in MPA-framed DDP segments (each rank pair ping-pongs
# 1 B - 4 MiB twice both ways, some 22 MiB, before the collectives), on the veth between the
# namespaces, or in the captures of the DPDK ports
ddp_octets() { # PCAP...: "segments octets" of iWARP DDP in the captures
	for f in "$@"; do
		tshark -r "$f" --enable-heuristic iwarp_mpa_tcp --disable-protocol rpcordma \
			-Y iwarp_ddp -T fields -e tcp.len 2>/dev/null
	done | awk '{ n++; b += $1 } END { print n + 0, b + 0 }'
}
if [ "$LINK" = kernel ]; then
	set -- $(ddp_octets "$T/veth.pcap")
	where="on the veth"
else
	set -- $(ddp_octets "$T"/rank*.pcap)
	where="in the ports' captures"
	# mpirun's own traffic (launch, PMIx) is all the kernel's second veth pair carries
	ctl=$(ip netns exec "$NS_A" cat /sys/class/net/ctl-a/statistics/rx_bytes \
		/sys/class/net/ctl-a/statistics/tx_bytes | awk '{ b += $1 } END { print b + 0 }')
	[ "$ctl" -lt $((4 << 20)) ] || fail "the kernel's veth pair carried $ctl octets"
fi
fpdus=$1 octets=$2
[ "$octets" -ge $((16 << 20)) ] ||
	fail "only $octets octets of iWARP DDP segments ($fpdus) $where ($(cat "$T/tshark.err" 2>/dev/null))"
echo "$TEST_NAME: OK ($NP ranks in two namespaces over $LINK, $((octets >> 20)) MiB in $fpdus iWARP segments $where)"
