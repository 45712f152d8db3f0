# Shared setup of the drop-in tests that run one program pair over any of four links
# (sourced; POSIX sh), so that one script checks a program the same way on each:
#   SCRIPT.sh LIBIBVERBS_DIR LIBRDMACM_DIR LINK [args]
# LINK is
#   loopback  kernel sockets, both processes in the main namespace on 127.0.0.1
#   netns     kernel sockets, two namespaces made here joined by a veth pair
#             (tests/lib/netns.sh: 198.51.100.1 and .2); needs root and fails without it
#   memif     softrnic's TCP engine on DPDK, two processes over net_memif (dpdk_common.sh)
#   afpacket  softrnic's TCP engine on DPDK, two namespaces over net_af_packet on a veth
# Side A (the server) has address A, side B (the client) address B. After sourcing:
#   LINK_DIR                      a private temp dir for the programs' output
#   link_port BASE                sets PORT: BASE on DPDK (each DPDK test has its own port,
#                                 H6 of docs/dropin.md), a free kernel port on loopback/netns
#   dd_start_server FILE CMD...   CMD on side A in the background (stdout and stderr to FILE),
#                                 returns when it listens on PORT
#   dd_client CMD...              CMD on side B, output to $LINK_DIR/client.out / client.err,
#                                 sets rc
# Program output is checked by the script; everything else fails or skips as in
# dpdk_common.sh (DPDK) or common.sh (kernel sockets).
case "${3:-}" in
memif | afpacket)
	. "$(dirname "$0")/dpdk_common.sh"
	LINK_DIR=$DPDK_DIR
	link_port() { PORT=$1; }
	;;
loopback | netns)
	. "$(dirname "$0")/../lib/common.sh"
	. "$(dirname "$0")/dropin.sh"
	DD_LINK=$1
	shift
	TEST_NAME="${TEST_NAME}_$DD_LINK"
	LINK_DIR=$(mktemp -d /tmp/srn-link-XXXXXX) || fail "mktemp"
	link_cleanup() { rm -rf "$LINK_DIR"; }
	EXIT_HOOKS="$EXIT_HOOKS link_cleanup"
	LINK_NS_A=
	LINK_NS_B=
	if [ "$DD_LINK" = netns ]; then
		. "$(dirname "$0")/../lib/netns.sh"
		netns_setup srn-dl
		LINK_NS_A=$NETNS_A
		LINK_NS_B=$NETNS_B
		A=$NETNS_ADDR_A
		B=$NETNS_ADDR_B
	else
		A=127.0.0.1
		B=127.0.0.1
	fi
	# on_side NS CMD...: CMD in namespace NS (none: here); with DD_EXEC=1 the shell is
	# replaced, so a background server's PID is the program's own process chain.
	on_side() {
		ns=$1
		shift
		x=
		[ "${DD_EXEC:-0}" = 1 ] && x="exec"
		if [ -n "$ns" ]; then
			$x ip netns exec "$ns" "$@"
		else
			$x "$@"
		fi
	}
	on_a() { on_side "$LINK_NS_A" "$@"; }
	on_b() { on_side "$LINK_NS_B" "$@"; }
	link_port() { pick_port; }
	# A kernel listener is visible to ss, so the client starts exactly when it exists.
	dd_start_server() {
		f=$1
		shift
		spawn_on_a "$f" "$@"
		wait_listen "$PORT" "$LINK_NS_A" ||
			{ cat "$f" >&2; fail "server not listening on port $PORT ($*)"; }
	}
	dd_client() {
		on_b timeout "$PROG_TIMEOUT" "$@" >"$LINK_DIR/client.out" 2>"$LINK_DIR/client.err"
		rc=$?
	}
	;;
*) echo "usage: $0 LIBIBVERBS_DIR LIBRDMACM_DIR loopback|netns|memif|afpacket [args]" >&2
	exit 1 ;;
esac
