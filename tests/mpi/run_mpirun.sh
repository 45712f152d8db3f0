#!/bin/sh
# Open MPI through the build tree's softrnic-run (put first on PATH), nothing else setting
# LD_LIBRARY_PATH; mpi_check's ranks check every octet they move, over libfabric's
# verbs;ofi_rxm with the cm PML (no BTL carries MPI messages), and each rank must name
# softrnic0 as its provider. PLACE:
#   local  the command line docs/install.md shows, as written: both ranks on this host (in a
#          network namespace of the test's own, where a veth pair gives the verbs provider an
#          interface address)
#   hosts  one rank in each of two namespaces, started through tests/mpi/nsagent.sh with an
#          empty environment as ssh would (NSAGENT_ENV=clean): the remote rank has softrnic
#          only because softrnic-run tells mpirun to forward the library path (-x)
# Usage: run_mpirun.sh BUILD_DIR MPI_CHECK local|hosts
set -u
TEST_NAME=softrnic_run_mpirun
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/netns.sh"
USAGE="usage: run_mpirun.sh BUILD_DIR MPI_CHECK local|hosts"
BUILD=$(cd "${1:?$USAGE}" && pwd)
CHECK=${2:?$USAGE}
PLACE=${3:?$USAGE}
TEST_NAME=softrnic_run_mpirun_$PLACE
command -v mpirun >/dev/null 2>&1 || skip "'mpirun' is not installed (apt-get install openmpi-bin)"
PATH=$BUILD/apps/run:$PATH
export PATH
[ "$(command -v softrnic-run)" = "$BUILD/apps/run/softrnic-run" ] || fail "softrnic-run not first on PATH"
unset LD_LIBRARY_PATH OMPI_MCA_mca_base_env_list
# as root (namespaces), Open MPI needs to be told; and each rank says which PML and provider it
# chose. Environment, so that the command line stays the documented one.
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI_MCA_pml_base_verbose=10 OMPI_MCA_mtl_base_verbose=10
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_pml_base_verbose \
	OMPI_MCA_mtl_base_verbose
netns_setup mrun
OUT=$(mktemp)
cleanup_out() { rm -f "$OUT"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_out"

case $PLACE in
local)
	# from mpi_check's folder, as the document's ./mpi_check
	cd "$(dirname "$CHECK")" || fail "cd $(dirname "$CHECK")"
	[ -x ./mpi_check ] || fail "no ./mpi_check in $(pwd)"
	(in_ns "$NETNS_A" timeout 120 softrnic-run mpirun -np 2 --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include 'verbs;ofi_rxm' ./mpi_check) \
		>"$OUT" 2>&1
	rc=$?
	;;
hosts)
	MPI_NETNS="$NETNS_A $NETNS_B" NSAGENT_ENV=clean
	export MPI_NETNS NSAGENT_ENV
	(in_ns "$NETNS_A" timeout 120 softrnic-run mpirun \
		--mca plm_rsh_agent "$(cd "$(dirname "$0")" && pwd)/nsagent.sh" \
		--mca oob_tcp_if_include 198.51.100.0/24 -H "$NETNS_ADDR_A,$NETNS_ADDR_B" -np 2 \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include 'verbs;ofi_rxm' "$CHECK") \
		>"$OUT" 2>&1
	rc=$?
	;;
*) fail "unknown place '$PLACE' (local or hosts)" ;;
esac
grep -v 'mca:' "$OUT" | tail -n 20
[ "$rc" -eq 0 ] || { cat "$OUT"; fail "mpirun exited with status $rc"; }
grep -q "mpi_check: OK: 2 ranks" "$OUT" || fail "mpi_check did not report OK"
n=$(grep -c 'select: component cm selected' "$OUT")
[ "$n" -eq 2 ] || fail "the cm PML was selected by $n of 2 ranks"
n=$(grep -c 'mtl:ofi:provider: softrnic0' "$OUT")
[ "$n" -eq 2 ] || fail "the ofi MTL chose softrnic0 in $n of 2 ranks"
echo "$TEST_NAME: OK (2 ranks, $PLACE, softrnic0 in both)"
