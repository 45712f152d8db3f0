#!/bin/sh
# libfabric's fi_pingpong (libfabric-bin), unmodified, on softrnic through the drop-in
# libraries: the verbs provider's msg endpoint, or verbs;ofi_rxm's rdm endpoint, every size
# fi_pingpong offers, every message checked (-c). Two processes on loopback, or across two
# network namespaces joined by a veth pair.
# Usage: fi_pingpong.sh LIBIBVERBS_DIR LIBRDMACM_DIR msg|rdm lo|netns
set -u
TEST_NAME=fabric_pingpong
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dropin/dropin.sh"
EP=${1:?usage: $0 LIBIBVERBS_DIR LIBRDMACM_DIR msg|rdm lo|netns}
WHERE=${2:?usage: $0 LIBIBVERBS_DIR LIBRDMACM_DIR msg|rdm lo|netns}
TEST_NAME=fabric_pingpong_${EP}_$WHERE
need_debian fi_pingpong libfabric-bin
uses_ours fi_pingpong
case $EP in
msg) PROV=verbs ;;
rdm) PROV='verbs;ofi_rxm' ;;
*) fail "unknown endpoint type '$EP' (msg or rdm)" ;;
esac

SRV_NS= CLI_NS= SRV_ADDR=127.0.0.1
if [ "$WHERE" = netns ]; then
	. "$(dirname "$0")/../lib/netns.sh"
	netns_setup fab
	SRV_NS=$NETNS_A CLI_NS=$NETNS_B SRV_ADDR=$NETNS_ADDR_A
fi
# in_ns NS CMD...: replaces the (sub)shell with CMD in namespace NS, or here when NS is
# empty, so that a background server's PID is the program's own chain
in_ns() {
	ns=$1
	shift
	if [ -n "$ns" ]; then exec ip netns exec "$ns" "$@"; else exec "$@"; fi
}

pick_port
SOUT=$(mktemp) COUT=$(mktemp)
cleanup_files() { rm -f "$SOUT" "$COUT"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_files"
start_server in_ns "$SRV_NS" timeout "$PROG_TIMEOUT" fi_pingpong -p "$PROV" -e "$EP" -c -I 20 \
	-B "$PORT" >"$SOUT" 2>&1
wait_listen "$PORT" "$SRV_NS" || { cat "$SOUT"; fail "fi_pingpong server is not listening"; }
(in_ns "$CLI_NS" timeout "$PROG_TIMEOUT" fi_pingpong -p "$PROV" -e "$EP" -c -I 20 -P "$PORT" \
	"$SRV_ADDR") >"$COUT" 2>&1
rc=$?
cat "$COUT"
[ "$rc" -eq 0 ] || { cat "$SOUT"; fail "client exited with status $rc"; }
wait_server "fi_pingpong server: $(cat "$SOUT")"
# every size -S all gives with -c (64 B, 256 B, 1 KiB, 4 KiB, 64 KiB, 1 MiB), each line
# "SIZE 20 =20 ...": 20 sent, 20 acknowledged
for out in "$COUT" "$SOUT"; do
	for size in 64 256 1k 4k 64k 1m; do
		grep -qE "^$size +20 +=20 " "$out" || { cat "$out"; fail "size $size did not complete"; }
	done
done
grep -qiE 'error|mismatch|fail' "$COUT" "$SOUT" && fail "an error or a data mismatch was reported"
echo "$TEST_NAME: OK (64 B - 1 MiB, data checked)"
