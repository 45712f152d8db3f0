# Shared setup of the drop-in tests over softrnic's TCP engine on DPDK (suite 'dropin-dpdk';
# sourced; POSIX sh). Usage of every script:
#   dpdk_SCRIPT.sh LIBIBVERBS_DIR LIBRDMACM_DIR LINK [args]
# LINK is the DPDK link between the two sides:
#   memif     two processes in the main namespace over net_memif (a socket in a private dir)
#   afpacket  two network namespaces made here, joined by a veth pair; each side's DPDK port
#             is net_af_packet on its veth end (the kernel holds no address there)
# Side A (the server, 198.51.100.1) and side B (the client, 198.51.100.2) run a command with
#   on_a CMD...  /  on_b CMD...
# which add SOFTRNIC_TRANSPORT=dpdk, the EAL arguments and the port's address (and enter the
# namespace for afpacket). The Debian programs are unmodified: our libibverbs.so.1 and
# librdmacm.so.1 come first in LD_LIBRARY_PATH (dropin.sh), they carry the DPDK transport.
# A script exits 77 only when the Debian program is missing, the libraries were built without
# DPDK, DPDK cannot start here, or namespaces cannot be created (afpacket).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dropin/dropin.sh" # also from tests/conform
. "$(dirname "$0")/../dpdk/dpdk_lib.sh"
DD_LINK=${1:?usage: $0 LIBIBVERBS_DIR LIBRDMACM_DIR memif|afpacket [args]}
# A build without libdpdk carries no DPDK transport (it would report ENOTSUP): skip
if ! ldd "$DROPIN_VERBS/libibverbs.so.1" | grep -q 'librte_'; then
	echo "${TEST_NAME}: SKIP: $DROPIN_VERBS/libibverbs.so.1 was built without DPDK" >&2
	exit 77
fi
shift
TEST_NAME="${TEST_NAME}_$DD_LINK"
A=198.51.100.1
B=198.51.100.2
dpdk_tmpdir

case "$DD_LINK" in
memif) ;;
afpacket) dpdk_netns dd ;;
*) fail "unknown link '$DD_LINK' (memif or afpacket)" ;;
esac

# dd_vdev SIDE(a|b): the DPDK vdev of that side
dd_vdev() {
	if [ "$DD_LINK" = memif ]; then
		if [ "$1" = a ]; then memif_vdev server; else memif_vdev client; fi
	else
		echo "net_af_packet0,iface=veth-$1,qdisc_bypass=1"
	fi
}

# on_side SIDE IP CMD...: CMD with the side's DPDK environment; with DD_EXEC=1 the shell is
# replaced (exec), so a background `on_a ...` has the PID of the program's own process chain.
on_side() {
	side=$1 ip=$2
	shift 2
	x=
	[ "${DD_EXEC:-0}" = 1 ] && x="exec"
	role=server
	[ "$side" = b ] && role=client
	if [ "$DD_LINK" = afpacket ]; then
		ns=$DPDK_NS_A
		[ "$side" = b ] && ns=$DPDK_NS_B
		$x ip netns exec "$ns" env SOFTRNIC_TRANSPORT=dpdk "$(dpdk_eal $role "$(dd_vdev "$side")")" \
			SOFTRNIC_DPDK_IP="$ip/24" "$@"
	else
		$x env SOFTRNIC_TRANSPORT=dpdk "$(dpdk_eal $role "$(dd_vdev "$side")")" \
			SOFTRNIC_DPDK_IP="$ip/24" "$@"
	fi
}
on_a() { on_side a $A "$@"; }
on_b() { on_side b $B "$@"; }

# dd_start_server ERRFILE CMD...: CMD on side A in the background (stdout and stderr to
# ERRFILE). A DPDK listener is invisible to ss, and the client's SYN must find the port up
# and the listener there: wait until the server's listener is logged (dpdk_head_start), at
# most the seconds below.
dd_start_server() {
	f=$1
	shift
	spawn_on_a "$f" "$@"
	# The wait ends when the server's listener is logged (dpdk_head_start); its bound covers
	# EAL start and the port open, 3 s on memif (a port of its own per side), 3 s more under
	# ASan (EAL and the libraries' init start several times slower).
	w=2
	[ "$DD_LINK" = memif ] && w=3
	[ -n "${asan:-}" ] && w=$((w + 3))
	w=${DD_SERVER_WAIT:-$w}
	dpdk_head_start "$w"
	dpdk_skip_if_no_eal "$f"
	kill -0 "$SERVER_PID" 2>/dev/null || { cat "$f" >&2; fail "server ended at start"; }
}

# dd_client CMD...: CMD on side B (stdout to $DPDK_DIR/client.out, stderr to client.err), sets
# rc. The server's listener cannot be observed (no kernel socket), so on a loaded machine the
# client can still come too early: a connection refused with ECONNREFUSED (-111, REJECTED, or
# rdma_client's "rdma_connect: Connection refused": nobody listens yet) while the server is
# alive is tried again, at most DD_CONNECT_TRIES (5) times one second apart, and said on stderr.
# Any other failure counts at once.
dd_client() {
	t=1
	while :; do
		on_b timeout "$PROG_TIMEOUT" "$@" >"$DPDK_DIR/client.out" 2>"$DPDK_DIR/client.err"
		rc=$?
		[ "$rc" -ne 0 ] || return 0
		cat "$DPDK_DIR/client.out" "$DPDK_DIR/client.err" |
			grep -Eq 'REJECTED[,;]? error:? -111|Unexpected CM event bl blka 8$|rdma_connect: Connection refused' || return 0
		[ "$t" -lt "${DD_CONNECT_TRIES:-5}" ] && kill -0 "$SERVER_PID" 2>/dev/null || return 0
		echo "$TEST_NAME: connect $t refused (server not listening yet), again in 1 s" >&2
		t=$((t + 1))
		sleep 1
	done
}
