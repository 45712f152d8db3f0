#!/bin/sh
# Open MPI (openmpi-bin), unmodified, over libfabric's verbs;ofi_rxm on softrnic: mpirun in one
# network namespace starts the ranks half there and half in a second one (tests/mpi/nsagent.sh
# stands in for ssh), every rank with our drop-in libibverbs.so.1 / librdmacm.so.1. The job
# (mpi_check) checks every octet it moves. Proof that softrnic carries the traffic between the
# namespaces: Open MPI's cm PML with the ofi MTL is the only messaging path allowed (no BTL
# moves MPI messages under cm), and the veth between them shows iWARP FPDUs (tshark).
# Usage: mpi_netns.sh LIBIBVERBS_DIR LIBRDMACM_DIR MPI_CHECK NRANKS
set -u
TEST_NAME=mpi_netns
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dropin/dropin.sh"
CHECK=${1:?usage: $0 LIBIBVERBS_DIR LIBRDMACM_DIR MPI_CHECK NRANKS}
NP=${2:?usage: $0 LIBIBVERBS_DIR LIBRDMACM_DIR MPI_CHECK NRANKS}
TEST_NAME=mpi_netns_$NP
need_debian mpirun openmpi-bin
need_debian fi_info libfabric-bin
need_cmd tshark tshark
uses_ours fi_info
. "$(dirname "$0")/../lib/netns.sh"
netns_setup mpi
MPI_NETNS="$NETNS_A $NETNS_B"
export MPI_NETNS
AGENT=$(cd "$(dirname "$0")" && pwd)/nsagent.sh
T=$(mktemp -d)
CAP_PID=
cleanup_mpi() {
	[ -n "$CAP_PID" ] && kill "$CAP_PID" 2>/dev/null && wait "$CAP_PID" 2>/dev/null
	rm -rf "$T"
}
EXIT_HOOKS="cleanup_mpi $EXIT_HOOKS"

ip netns exec "$NETNS_A" tshark -q -i veth-a -w "$T/veth.pcap" 2>"$T/tshark.err" &
CAP_PID=$!
i=0
while [ ! -s "$T/veth.pcap" ] && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done

half=$((NP / 2))
ip netns exec "$NETNS_A" timeout 120 mpirun --allow-run-as-root --oversubscribe \
	-H "$NETNS_ADDR_A:$half,$NETNS_ADDR_B:$((NP - half))" -np "$NP" \
	--mca plm_rsh_agent "$AGENT" --mca oob_tcp_if_include 198.51.100.0/24 \
	--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include 'verbs;ofi_rxm' \
	--mca pml_base_verbose 10 --mca mtl_base_verbose 10 \
	-x LD_LIBRARY_PATH -x MPI_NETNS "$CHECK" 2 >"$T/out" 2>&1
rc=$?
kill "$CAP_PID" 2>/dev/null
wait "$CAP_PID" 2>/dev/null
CAP_PID=
grep -v 'mca:' "$T/out" | tail -20
[ "$rc" -eq 0 ] || { cat "$T/out"; fail "mpirun exited with status $rc"; }
grep -q "mpi_check: OK: $NP ranks" "$T/out" || fail "mpi_check did not report OK"
n=$(grep -c 'select: component cm selected' "$T/out")
[ "$n" -eq "$NP" ] || fail "the cm PML was selected by $n of $NP ranks"
n=$(grep -c 'mtl:ofi:provider: softrnic0' "$T/out")
[ "$n" -eq "$NP" ] || fail "the ofi MTL chose softrnic0 in $n of $NP ranks"
# iWARP on the wire between the namespaces: the job's data in MPA-framed DDP segments (each
# rank pair ping-pongs 1 B - 4 MiB twice both ways, some 22 MiB, before the collectives)
set -- $(tshark -r "$T/veth.pcap" --enable-heuristic iwarp_mpa_tcp --disable-protocol rpcordma \
	-Y iwarp_ddp -T fields -e tcp.len 2>/dev/null | awk '{ n++; b += $1 } END { print n + 0, b + 0 }')
fpdus=$1 octets=$2
[ "$octets" -ge $((16 << 20)) ] || fail "only $octets octets of iWARP DDP segments ($fpdus) crossed the veth"
echo "$TEST_NAME: OK ($NP ranks in two namespaces, $((octets >> 20)) MiB in $fpdus iWARP segments on the veth)"
