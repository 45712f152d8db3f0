#!/usr/bin/env bash
# Debian's perftest binaries on the host, unmodified, on softrnic through the drop-in
# libibverbs.so.1 / librdmacm.so.1 (docs/dropin.md), against perftest on Linux siw in a guest.
#
#   tests/interop/perftest.sh DROPIN_BUILD_DIR [OUT]
#
# DROPIN_BUILD_DIR is a build dir that has verbs/libibverbs.so.1 and
# verbs/rdmacm/librdmacm.so.1. Each case runs one perftest (-R, rdma_cm) in one direction
# with a time limit, captures the bridge and records in OUT/perftest.md (default
# DROPIN_BUILD_DIR/interop-perftest): exit statuses, the result line, how the connections
# ended (FIN or RST from the host) and the known signatures (siw's accept race, reset at
# teardown, second connection refused; docs/interop.md). Informational: exits 0 unless
# the setup fails, because those are known and recorded.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DB=$(readlink -f "${1:?usage: $0 DROPIN_BUILD_DIR [OUT]}")
OUT=${2:-$DB/interop-perftest}
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 77; }
LIBS=$OUT/dropin
command -v ib_write_bw >/dev/null || { echo "perftest is not installed on the host" >&2; exit 77; }
export SIWVM_RUN=${SIWVM_RUN:-/run/siwvm-perf} SIWVM_NETNS=${SIWVM_NETNS-siwvm-pf}
source "$ROOT/tests/interop/lib.sh"
rm -rf "$OUT"
ia_init "$ROOT/build" "$OUT" || { echo "siw-vm not found" >&2; exit 77; }
# a private copy: the drop-in build may be rebuilt while we run
mkdir -p "$LIBS"
cp -aL "$DB/verbs/libibverbs.so.1" "$DB/verbs/rdmacm/librdmacm.so.1" "$LIBS/" ||
	{ echo "no drop-in libraries in $DB" >&2; exit 1; }
PORT=18515
LIMIT=${IA_PERF_SECONDS:-90}

trap 'ia_capture_stop; ia_down' EXIT
trap 'exit 143' TERM INT
ia_sv build >"$OUT/build.log" 2>&1 || exit 1
ia_down
ia_up stock 1 || exit 1
# the host's end behind a link delaying frames to the guest (siw's accept race, docs/interop.md)
ia_host_link "${IA_DELAY_MS:-5}" "$DB/tests/tcp/linux/impair" "$IA_NET.2/24" || exit 1
GIP=$(ia_guest_ip g1)

# In OUT with core dumps on, so a crash leaves OUT/core* for the backtrace below.
host_perf() {
	(cd "$OUT" && ulimit -c unlimited &&
		LD_LIBRARY_PATH=$LIBS exec timeout "$LIMIT" ip netns exec "$IA_HOST_NS" "$@")
}

# backtrace NAME PROGRAM: the newest core in OUT, if any, as OUT/NAME.backtrace.txt
backtrace() {
	local core
	core=$(ls -t "$OUT"/core* 2>/dev/null | head -n1)
	[ -n "$core" ] || return 1
	LD_LIBRARY_PATH=$LIBS gdb -q -batch -ex 'bt 15' "$(command -v "$2")" "$core" \
		>"$OUT/$1.backtrace.txt" 2>&1
	mv "$core" "$OUT/$1.core"
}
guest_kill() { ia_sv exec -t 20 g1 'for p in $(pidof ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat ib_read_lat); do kill -9 $p; done; true' >/dev/null 2>&1; }

run() {   # NAME TEST DIR ARGS
	local name=$1 t=$2 dir=$3 args=$4 hrc grc hp res notes=""
	guest_kill
	ia_capture_start "$name" || return
	if [ "$dir" = h2g ]; then
		ia_sv exec -b g1 "$t -R -d siw0 -F -p $PORT $args >/tmp/pf.log 2>&1; echo rc=\$? >>/tmp/pf.log" >/dev/null
		for _ in $(seq 40); do ia_sv exec -t 10 g1 "ss -Hltn 'sport = :$PORT' | grep -q LISTEN" >/dev/null 2>&1 && break; sleep 0.3; done
		host_perf "$t" -R -F -p $PORT $args "$GIP" >"$OUT/$name.host.log" 2>&1
		hrc=$?
		sleep 2
		ia_sv exec -t 20 g1 'cat /tmp/pf.log' >"$OUT/$name.guest.log" 2>&1
		grc=$(sed -n 's/^rc=//p' "$OUT/$name.guest.log" | tail -n1)
	else
		host_perf "$t" -R -F -p $PORT $args >"$OUT/$name.host.log" 2>&1 &
		hp=$!
		for _ in $(seq 50); do ia_host_listening "$PORT" && break; sleep 0.1; done
		ia_sv exec -t "$LIMIT" g1 "$t -R -d siw0 -F -p $PORT $args $IA_HOST_IP" >"$OUT/$name.guest.log" 2>&1
		grc=$?
		wait "$hp"
		hrc=$?
	fi
	ia_capture_stop
	guest_kill
	res=$(grep -hE '^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+' "$OUT/$name.host.log" | head -n1 | tr -s ' ')
	[ "$hrc" = 124 ] && notes+=" host timed out;"
	[ "$hrc" -ge 128 ] 2>/dev/null && [ "$hrc" != 124 ] && notes+=" host killed by signal $((hrc - 128));"
	backtrace "$name" "$t" && notes+=" backtrace in $name.backtrace.txt;"
	ia_siw_silent "$OUT/$name.pcap" "$GIP" && notes+=" F1 (siw silent after its Reply);"
	grep -q 'REJECTED' "$OUT/$name.host.log" "$OUT/$name.guest.log" && notes+=" REJECTED (F5?);"
	grep -q 'Bad wc status' "$OUT/$name.host.log" "$OUT/$name.guest.log" && notes+=" Bad wc status on $(grep -l 'Bad wc status' "$OUT/$name.host.log" "$OUT/$name.guest.log" | sed 's/.*\.\(host\|guest\)\.log/\1/' | tr '\n' ' ');"
	local rst fin
	rst=$(ia_tshark "$OUT/$name.pcap" -Y "tcp.flags.reset==1 && ip.src==$IA_HOST_IP" | grep -c .)
	fin=$(ia_tshark "$OUT/$name.pcap" -Y "tcp.flags.fin==1 && ip.src==$IA_HOST_IP" | grep -c .)
	echo "| $name | $hrc | ${grc:-?} | ${res:-none} | FIN $fin / RST $rst |${notes} |" >>"$OUT/perftest.md"
	echo "$name: host $hrc guest ${grc:-?} ${res:-no result}${notes}"
}

{
	echo "| case | host rc | guest rc | host result line | host closes with | notes |"
	echo "|---|---|---|---|---|---|"
} >"$OUT/perftest.md"
for t in ib_write_bw ib_read_bw ib_send_bw; do
	run "$t-h2g" "$t" h2g "-n 200 -s 65536"
	run "$t-g2h" "$t" g2h "-n 200 -s 65536"
done
for t in ib_send_lat ib_write_lat ib_read_lat; do
	run "$t-h2g" "$t" h2g "-n 200 -s 64"
	run "$t-g2h" "$t" g2h "-n 200 -s 64"
done
cat "$OUT/perftest.md"
