#!/bin/sh
# softrnic's TCP engine against itself: two apps/tcp/softrnic-tcp processes joined by
# net_memif (the listener is the memif server), each pinned to its own core with taskset.
# Usage: tcp_memif.sh CASE softrnic-tcp      CASE: bulk pingpong conns abort jumbo
# The engines use 198.51.100.1 and .2 on the memif link only: nothing touches the kernel's
# network configuration. Exit 77 (skip) without DPDK's memif PMD or a second CPU.
TEST_NAME=tcp_memif_$1
. "$(dirname "$0")/../../lib/common.sh"
CASE=$1
E=$2
[ -x "$E" ] || fail "usage: $0 CASE softrnic-tcp"
have_dpdk_pmd memif || skip "DPDK's memif PMD is not installed (scripts/deps.sh)"
need_cmd taskset util-linux
need_cmd timeout coreutils
NCPU=$(nproc)
# Two busy-polling processes never share a core: without two CPUs this cannot run.
[ "$NCPU" -ge 2 ] || skip "needs two CPUs (one busy-polling engine per core)"
CPU_S=${TCP_MEMIF_CPUS%,*}
CPU_C=${TCP_MEMIF_CPUS#*,}
[ -n "${TCP_MEMIF_CPUS:-}" ] || { CPU_S=0; CPU_C=1; }

OUT=$(mktemp -d /tmp/srn-tcp-memif.XXXXXX)
SRV_PID=
cleanup() {
	if [ -n "$SRV_PID" ]; then
		kill "$SRV_PID" 2>/dev/null
		wait "$SRV_PID" 2>/dev/null
	fi
	if [ -n "${KEEP_OUT:-}" ]; then echo "outputs kept in $OUT"; else rm -rf "$OUT"; fi
}
EXIT_HOOKS="$EXIT_HOOKS cleanup"

# engine ROLE IP CPU NAME ARGS...: one engine on the memif link (own socket per test).
engine() {
	role=$1 ip=$2 cpu=$3 logf=$4
	shift 4
	export SOFTRNIC_DPDK_EAL="--no-huge -m 256 --vdev=net_memif0,role=$role,socket=$OUT/memif.sock${MEMIF_ARGS:-}"
	export SOFTRNIC_DPDK_IP=$ip/24
	# In the background job exec: its PID is then timeout's, and a kill reaches the tool.
	if [ "${BG:-0}" = 1 ]; then
		exec timeout -k 3 $((TMO + 15)) taskset -c "$cpu" "$E" "$@" --timeout "$TMO" \
			--stats >"$OUT/$logf" 2>&1
	fi
	timeout -k 3 $((TMO + 15)) taskset -c "$cpu" "$E" "$@" --timeout "$TMO" --stats \
		>"$OUT/$logf" 2>&1
}

show_fail() {
	for f in "$OUT/$1".*; do
		echo "---- $f" >&2
		tail -n 25 "$f" >&2
	done
	fail "$2"
}

# pair NAME 'SERVER ARGS' 'CLIENT ARGS'
pair() {
	name=$1
	(BG=1 engine server 198.51.100.1 "$CPU_S" "$name.srv" listen 5001 $2) &
	SRV_PID=$!
	i=0
	until grep -q "listening on port" "$OUT/$name.srv" 2>/dev/null; do
		kill -0 "$SRV_PID" 2>/dev/null || show_fail "$name" "$name: server did not start"
		[ "$i" -lt 300 ] || show_fail "$name" "$name: server did not listen in 30 s"
		sleep 0.1
		i=$((i + 1))
	done
	engine client 198.51.100.2 "$CPU_C" "$name.cli" connect 198.51.100.1:5001 $3
	crc=$?
	wait "$SRV_PID"
	src=$?
	SRV_PID=
	[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] ||
		show_fail "$name" "$name: server exit $src, client exit $crc"
	printf '%-16s server: %s\n' "$name" "$(grep '^result:\|^latency:' "$OUT/$name.srv" | tr '\n' ' ')"
	printf '%-16s client: %s\n' "$name" "$(grep '^result:\|^latency:' "$OUT/$name.cli" | tr '\n' ' ')"
	grep '^stats: tcp\|^stats: conn0' "$OUT/$name.cli" | sed "s/^/$name /" | cut -c1-300
	rm -f "$OUT/memif.sock"
}

case "$CASE" in
bulk)
	TMO=120
	# past 2^31 octets: the send queue was never freed again there (serial arithmetic
	# against the ISN) and the transfer stalled at 2 GiB + 254 KiB (a sanitizer build sets
	# MEMIF_BULK lower, tests/tcp/memif/meson.build: the plain build makes the crossing)
	pair bulk-up '--sink' "--source ${MEMIF_BULK:-2300M}"
	pair bulk-down "--source ${MEMIF_BULK:-1G}" '--sink'
	# zero-copy transmit: slots lent to the engine until acknowledged, scribbled on return
	pair bulk-zc '--sink' "--source ${MEMIF_BULK_ZC:-256M} --zc"
	grep '^stats: zc' "$OUT/bulk-zc.cli"
	;;
pingpong)
	TMO=60
	pair pingpong '--echo' '--pingpong 10000 --size 64'
	;;
conns)
	TMO=120
	pair conns '--sink --conns 1000' '--source 64K --conns 1000'
	;;
abort)
	TMO=30
	pair rst-source '--sink --expect reset' '--source 256M --rst-after 4M'
	pair fin-source '--sink --expect eof' '--source 256M --fin-after 4M'
	pair rst-sink '--source 256M --expect reset' '--sink --rst-after 4M'
	;;
jumbo)
	TMO=60
	# MTU 9000: frames longer than memif's default 2048-octet buffers. The port adds a bsize
	# that holds one (DPDK 22.11's memif corrupts chained frames: stale frames came back by
	# the million, as PAWS drops and bad IP headers, and the transfer crawled).
	export SOFTRNIC_DPDK_MTU=9000
	pair jumbo-up '--sink' '--source 512M'
	pair jumbo-down '--source 256M' '--sink'
	for f in "$OUT"/jumbo-*.srv "$OUT"/jumbo-*.cli; do
		grep -q 'snd_mss=8948' "$f" || show_fail jumbo-up "$f: MSS is not 8948 (MTU 9000)"
		for k in paws_drops ip_bad_hdr rx_not_for_us; do
			grep -q " $k=0" "$f" || show_fail jumbo-up "$f: $k is not 0 (chained memif frames?)"
		done
	done
	# bsize given too small for the MTU: refused at open, with what to do
	MEMIF_ARGS=,bsize=4096 engine server 198.51.100.1 "$CPU_S" small.srv listen 5001 --sink &&
		show_fail small "bsize=4096 with MTU 9000 was not refused"
	grep -q 'cannot hold a frame of MTU 9000.*give bsize=9014' "$OUT/small.srv" ||
		show_fail small "no clear error for bsize=4096 with MTU 9000"
	echo "jumbo            small bsize refused: $(grep -o 'memif buffers.*octets)' "$OUT/small.srv")"
	;;
*) fail "unknown case $CASE" ;;
esac
echo "$TEST_NAME: pass"
