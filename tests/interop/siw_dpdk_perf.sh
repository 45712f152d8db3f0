# shellcheck shell=bash
# Sourced by tests/interop/siw_dpdk.sh with IA_DPDK_PERF=1: Debian perftest -R -F, unmodified,
# on the host's DPDK port (drop-in libraries) against perftest on siw in guest g1, every
# test in both directions, short (-n 200; 64 KiB for _bw, 64 B for _lat), IA_PERF_SECONDS
# (default 60) per case. Informational like tests/interop/perftest.sh: the rows go to
# OUT/perftest.md with the known signatures (docs/interop.md), and do not change
# the exit status (the guest is emulated and those findings are known).
# IA_PERF_TESTS (the perftest programs) and IA_PERF_DIRS (default "h2g g2h") choose the cases.
PLIMIT=${IA_PERF_SECONDS:-60}
PPORT=18515
pf_guest_kill() {
	ia_sv exec -t 20 g1 'for p in $(pidof ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat ib_read_lat); do kill -9 $p; done; true' >/dev/null 2>&1
}
pf_run() {   # NAME TEST DIR ARGS
	local name=$1 t=$2 dir=$3 args=$4 hrc grc hp res notes=""
	pf_guest_kill
	ia_capture_start "$name" || return
	if [ "$dir" = h2g ]; then
		ia_sv exec -b g1 "$t -R -d siw0 -F -p $PPORT $args >/tmp/pf.log 2>&1; echo rc=\$? >>/tmp/pf.log" >/dev/null
		for _ in $(seq 40); do ia_guest_listening g1 $PPORT && break; sleep 0.3; done
		host_dpdk timeout "$PLIMIT" "$t" -R -F -p $PPORT $args "$GIP" >"$OUT/$name.host.log" 2>&1
		hrc=$?
		sleep 2
		ia_sv exec -t 20 g1 'cat /tmp/pf.log' >"$OUT/$name.guest.log" 2>&1
		grc=$(sed -n 's/^rc=//p' "$OUT/$name.guest.log" | tail -n1)
	else
		host_dpdk timeout "$PLIMIT" "$t" -R -F -p $PPORT $args >"$OUT/$name.host.log" 2>&1 &
		hp=$!
		sleep 2.5   # EAL start and rdma_listen
		ia_sv exec -t "$PLIMIT" g1 "$t -R -d siw0 -F -p $PPORT $args $DP_IP" >"$OUT/$name.guest.log" 2>&1
		grc=$?
		wait "$hp"
		hrc=$?
	fi
	ia_capture_stop
	pf_guest_kill
	res=$(grep -hE '^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+' "$OUT/$name.host.log" "$OUT/$name.guest.log" | head -n1 | tr -s ' \t' ' ')
	[ "$hrc" = 124 ] && notes+=" host timed out;"
	[ "$hrc" -ge 128 ] 2>/dev/null && notes+=" host killed by signal $((hrc - 128));"
	if ia_siw_silent "$OUT/$name.pcap" "$GIP"; then
		notes+=" F1 (siw silent after its Reply);"
		dp_after_f1 "$name"   # the guest's iw_cm may be dead; boot afresh
		grep -q 'kernel BUG' "$OUT/$name.guest-dmesg.log" && notes+=" F8 (guest iw_cm BUG, rebooted);"
	fi
	grep -q 'REJECTED' "$OUT/$name.host.log" "$OUT/$name.guest.log" && notes+=" REJECTED;"
	grep -q 'Bad wc status' "$OUT/$name.host.log" "$OUT/$name.guest.log" && notes+=" Bad wc status;"
	local rst fin
	rst=$(ia_tshark "$OUT/$name.pcap" -Y "tcp.flags.reset==1 && ip.src==$DP_IP" | grep -c .)
	fin=$(ia_tshark "$OUT/$name.pcap" -Y "tcp.flags.fin==1 && ip.src==$DP_IP" | grep -c .)
	echo "| $name | $hrc | ${grc:-?} | ${res:-none} | FIN $fin / RST $rst |${notes} |" >>"$OUT/perftest.md"
	echo "perftest $name: host $hrc guest ${grc:-?} ${res:-no result}${notes}"
	PPORT=$((PPORT + 1))
}
{
	echo "| case | host rc | guest rc | result line (host, else guest) | host closes with | notes |"
	echo "|---|---|---|---|---|---|"
} >"$OUT/perftest.md"
for t in ${IA_PERF_TESTS:-ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat ib_read_lat}; do
	case $t in *_bw) a="-n 200 -s 65536" ;; *) a="-n 200 -s 64" ;; esac
	for d in ${IA_PERF_DIRS:-h2g g2h}; do pf_run "$t-$d" "$t" $d "$a"; done
done
cat "$OUT/perftest.md"
