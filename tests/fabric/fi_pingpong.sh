#!/bin/sh
# libfabric's fi_pingpong (libfabric-bin), unmodified, on softrnic through the drop-in
# libraries: the verbs provider's msg endpoint, or verbs;ofi_rxm's rdm endpoint, every size
# fi_pingpong offers, every message checked (-c). Two processes:
#   lo        on loopback, kernel sockets
#   netns     across two network namespaces joined by a veth pair, kernel sockets
#   memif     across two namespaces, softrnic's TCP engine on DPDK over net_memif (a socket
#             file both see)
#   afpacket  across two namespaces, the engine on DPDK over net_af_packet on a veth pair
# On DPDK the kernel holds the ports' addresses too (dpdk_netns_kernel_view): the verbs
# provider takes its device's address from the kernel's interfaces, and fi_pingpong's own
# control connection runs over kernel TCP on a second veth pair; RDMA runs on the ports.
# Usage: fi_pingpong.sh LIBIBVERBS_DIR LIBRDMACM_DIR msg|rdm lo|netns|memif|afpacket
set -u
TEST_NAME=fabric_pingpong
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dropin/dropin.sh"
USAGE="usage: $0 LIBIBVERBS_DIR LIBRDMACM_DIR msg|rdm lo|netns|memif|afpacket"
EP=${1:?$USAGE}
WHERE=${2:?$USAGE}
TEST_NAME=fabric_pingpong_${EP}_$WHERE
need_debian fi_pingpong libfabric-bin
uses_ours fi_pingpong
case $EP in
msg) PROV=verbs ;;
rdm) PROV='verbs;ofi_rxm' ;;
*) fail "unknown endpoint type '$EP' (msg or rdm)" ;;
esac

SRV_NS= CLI_NS= SRV_ADDR=127.0.0.1 SRV_EAL= CLI_EAL=
case $WHERE in
lo) ;;
netns)
	. "$(dirname "$0")/../lib/netns.sh"
	netns_setup fab
	SRV_NS=$NETNS_A CLI_NS=$NETNS_B SRV_ADDR=$NETNS_ADDR_A
	;;
memif | afpacket)
	. "$(dirname "$0")/../dpdk/dpdk_lib.sh"
	dpdk_tmpdir
	dpdk_netns fab
	dpdk_netns_kernel_view
	SRV_NS=$DPDK_NS_A CLI_NS=$DPDK_NS_B SRV_ADDR=$DPDK_CTL_A
	if [ "$WHERE" = memif ]; then
		SRV_EAL=$(dpdk_eal server "$(memif_file_vdev server)")
		CLI_EAL=$(dpdk_eal client "$(memif_file_vdev client)")
	else
		SRV_EAL=$(dpdk_eal server net_af_packet0,iface=veth-a,qdisc_bypass=1)
		CLI_EAL=$(dpdk_eal client net_af_packet0,iface=veth-b,qdisc_bypass=1)
	fi
	;;
*) fail "unknown place '$WHERE' (lo, netns, memif or afpacket)" ;;
esac
# on_side a|b CMD...: replaces the (sub)shell with CMD on the server's side (a) or the
# client's (b): in its namespace, on its DPDK port when the place is a DPDK link; so that a
# background server's PID is the program's own chain
on_side() {
	if [ "$1" = a ]; then
		ns=$SRV_NS eal=$SRV_EAL ip=198.51.100.1/25
	else
		ns=$CLI_NS eal=$CLI_EAL ip=198.51.100.2/25
	fi
	shift
	[ -n "$eal" ] && set -- env SOFTRNIC_TRANSPORT=dpdk "$eal" "SOFTRNIC_DPDK_IP=$ip" "$@"
	in_ns "$ns" "$@"
}

pick_port
SOUT=$(mktemp) COUT=$(mktemp)
cleanup_files() { rm -f "$SOUT" "$COUT"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_files"
start_server on_side a timeout "$PROG_TIMEOUT" fi_pingpong -p "$PROV" -e "$EP" -c -I 20 \
	-B "$PORT" >"$SOUT" 2>&1
wait_listen "$PORT" "$SRV_NS" || { cat "$SOUT"; fail "fi_pingpong server is not listening"; }
(on_side b timeout "$PROG_TIMEOUT" fi_pingpong -p "$PROV" -e "$EP" -c -I 20 -P "$PORT" \
	"$SRV_ADDR") >"$COUT" 2>&1
rc=$?
cat "$COUT"
if [ "$rc" -ne 0 ] && [ -n "$SRV_EAL" ]; then
	dpdk_skip_if_no_eal "$SOUT"
	dpdk_skip_if_no_eal "$COUT"
fi
[ "$rc" -eq 0 ] || { cat "$SOUT"; fail "client exited with status $rc"; }
wait_server "fi_pingpong server: $(cat "$SOUT")"
# every size -S all gives with -c (64 B, 256 B, 1 KiB, 4 KiB, 64 KiB, 1 MiB), each line
# "SIZE 20 =20 ...": 20 sent, 20 acknowledged
for out in "$COUT" "$SOUT"; do
	for size in 64 256 1k 4k 64k 1m; do
		grep -qE "^$size +20 +=20 " "$out" || { cat "$out"; fail "size $size did not complete"; }
	done
done
# (DPDK's own log lines, "rte_..." or "EAL: ...", are not fi_pingpong's)
if grep -hiE 'error|mismatch|fail' "$COUT" "$SOUT" | grep -vE '^(rte_|EAL: )'; then
	fail "an error or a data mismatch was reported (above)"
fi
# On DPDK the data went over the ports: each side received some 21 MB (20 ping-pongs of each
# size), and the kernel's control connection carried less than 1 MB of it; on af_packet the
# veth the ports use carried it.
if [ -n "$SRV_EAL" ]; then
	ctl=$(ip netns exec "$SRV_NS" cat /sys/class/net/ctl-a/statistics/rx_bytes)
	[ "$ctl" -lt 1000000 ] || fail "the kernel's control connection carried $ctl bytes"
	if [ "$WHERE" = afpacket ]; then
		port=$(ip netns exec "$SRV_NS" cat /sys/class/net/veth-a/statistics/rx_bytes)
		[ "$port" -gt 20000000 ] || fail "veth-a (the DPDK port) carried only $port bytes"
	fi
fi
echo "$TEST_NAME: OK (64 B - 1 MiB, data checked)"
