# shellcheck shell=bash
# tests/interop/lib.sh: helpers shared by tests/interop/siw_rping.sh (short CI check), the
# other tests/interop checks and scripts/interop.sh (full matrix). softrnic on the host talks to the real Linux siw driver
# in QEMU guests booted by the siw-vm tool. Source it, then call
# ia_init BUILD_DIR OUT_DIR. Needs root (netns, taps, QEMU); callers decide what to skip.
#
# Settings (environment):
#   SIWVM            path of the siw-vm tool (default: `command -v siw-vm`, then
#                    /work/shared/tools/siw-vm)
#   SIWVM_RUN, SIWVM_NETNS   passed to siw-vm; callers pick their own so they do not fight
#                    with an interactive siw-vm session (its default is /run/siwvm, siwvm)
#   IA_TIMEOUT       per-wait timeout of softrnic-rping in seconds (default 10)
#
# Host programs run in IA_HOST_NS at IA_HOST_IP: by default siw-vm's namespace and the
# bridge's own address (.1); after ia_host_link, a namespace of their own behind a link that
# delays the frames towards the guests (docs/interop.md).

# impair_spawn, impair_stop, offloads_try (ia_host_link)
source "$(dirname "${BASH_SOURCE[0]}")/../lib/impair.sh"

IA_PORT=7174
IA_HOST_IP=
IA_NET=${SIWVM_NET:-198.51.100}

ia_log() { printf '[interop] %s\n' "$*" >&2; }

# ia_find_siwvm: prints the siw-vm path, or fails.
ia_find_siwvm() {
	local c
	for c in "${SIWVM:-}" "$(command -v siw-vm 2>/dev/null || true)" /work/shared/tools/siw-vm; do
		[ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
	done
	return 1
}

# ia_init BUILD_DIR OUT_DIR: sets IA_SV, IA_BIN, IA_OUT and the netns name.
ia_init() {
	IA_SV=$(ia_find_siwvm) || return 1
	IA_BIN=$(readlink -f "$1")/apps/verbs
	IA_DUMP=$(readlink -f "$1")/apps/iwarp-dump
	IA_OUT=$2
	IA_NS=${SIWVM_NETNS-siwvm}
	IA_HOST_NS=$IA_NS
	IA_HOST_IP=$IA_NET.1
	IA_TIMEOUT=${IA_TIMEOUT:-10}
	mkdir -p "$IA_OUT"
	export SIWVM_RUN SIWVM_NETNS SIWVM_SMP=${SIWVM_SMP:-1}
}

# ia_bounded LIMIT WHAT SCRIPT ARGS...: a check's whole run bounded by `timeout`: runs SCRIPT
# ARGS once more under it (IA_BOUNDED marks that run) and exits with its status; in the
# bounded run it returns at once. --kill-after leaves the EXIT trap's `siw-vm down` (bounded
# at 60 s) time to finish instead of leaving a guest behind.
ia_bounded() {
	local limit=$1 what=$2 rc
	shift 2
	[ -n "${IA_BOUNDED:-}" ] && return 0
	IA_BOUNDED=1 timeout --kill-after=75 "$limit" "$@"
	rc=$?
	{ [ $rc = 124 ] || [ $rc = 137 ]; } && echo "FAIL: $what exceeded ${limit}s"
	exit $rc
}

# ia_need_qemu: skips (tests/lib/common.sh's skip, exit 77) where siw-vm cannot run guests.
ia_need_qemu() {
	[ "$(id -u)" = 0 ] || skip "needs root (siw-vm creates a netns, taps and QEMU guests)"
	[ -c /dev/net/tun ] || skip "no /dev/net/tun: QEMU guests cannot get a network"
}

# ia_image: the guest image (cached: ~4 s; from scratch ~2 min from the apt mirror); skips
# where it cannot be built. After ia_init.
ia_image() {
	timeout 240 "$IA_SV" build >"$IA_OUT/build.log" 2>&1 && return 0
	tail -n 5 "$IA_OUT/build.log"
	skip "siw-vm could not build the guest image (no apt mirror or QEMU packages?), see $IA_OUT/build.log"
}

# ia_boot VARIANTS N: ia_up, skipping where QEMU cannot boot here, failing otherwise.
ia_boot() {
	ia_up "$@" && return 0
	grep -q -i 'qemu.*failed\|died during boot\|timeout waiting' "$IA_OUT/up.log" &&
		skip "QEMU could not boot the guests here, see $IA_OUT/up.log"
	echo "FAIL: siw-vm up"
	exit 1
}

ia_sv() { "$IA_SV" "$@"; }
ia_guest_ip() { echo "$IA_NET.$((10 + ${1#g}))"; }
# Runs a command inside the test namespace (the bridge side, 198.51.100.1).
ia_hx() { if [ -n "$IA_NS" ]; then ip netns exec "$IA_NS" "$@"; else "$@"; fi; }
# Runs a host program where the host's end of the link is (IA_HOST_NS).
ia_hh() { if [ -n "$IA_HOST_NS" ]; then ip netns exec "$IA_HOST_NS" "$@"; else "$@"; fi; }

# ia_up VARIANTS N: boots N guests, VARIANTS is siw-vm's comma list (stock, crc, p2p).
ia_up() {
	SIWVM_VARIANT=$1 timeout 400 "$IA_SV" up "$2" >"$IA_OUT/up.log" 2>&1 ||
		{ tail -n 20 "$IA_OUT/up.log" >&2; return 1; }
	# The host's TCP would hand 64 KB TSO/GSO super-frames with partial checksums to the
	# bridge, and the capture would show those instead of what a wire carries: segment and
	# checksum in the host stack instead.
	ia_hx ethtool -K siwbr0 tx off tso off gso off >/dev/null 2>&1 || true
}

ia_down() {
	ia_host_unlink
	timeout 60 "$IA_SV" down >>"$IA_OUT/down.log" 2>&1 || true
}

# ia_host_link MS IMPAIR [ADDR/LEN]: after ia_up, the host's own end of the bridge: namespace
# hx-IA_NS with hx0 (holding ADDR, or no address for a DPDK port), its frames to the guests
# delayed MS ms by tests/tcp/linux/impair (IMPAIR) between veth pairs hx0 / hx-mp and
# hx-mb / hx-br (on siwbr0); MS 0 joins hx0 / hx-br directly. The guests' frames to the host
# pass undelayed. Sets IA_HOST_NS, and IA_HOST_IP when ADDR is given. Why: siw's accept race
# (docs/interop.md) stays shut when the first FPDUs after the MPA Reply take a real
# link's time to reach a TCG guest. impair's packet sockets forward frames as they are,
# so no end offloads a checksum or builds super-frames.
ia_host_link() {
	local ms=$1 bin=$2 addr=${3:-} ns i
	ns=$(ia_host_ns_name)
	[ -n "$IA_NS" ] || { ia_log "ia_host_link needs siw-vm's namespace"; return 1; }
	ip netns del "$ns" 2>/dev/null
	ip netns add "$ns" || return 1
	ip -n "$ns" link set lo up
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	if [ "$ms" = 0 ]; then
		ia_hx ip link add hx-br type veth peer name hx0 netns "$ns" || return 1
	else
		ia_hx ip link add hx-mp type veth peer name hx0 netns "$ns" || return 1
		ia_hx ip link add hx-mb type veth peer name hx-br || return 1
	fi
	ia_hx ip link set hx-br master siwbr0 || return 1
	for i in hx-br hx-mp hx-mb; do
		ia_hx ip link show "$i" >/dev/null 2>&1 || continue
		ia_hx sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"
		ia_hx ip link set "$i" up && offloads_try "$IA_NS" "$i" || return 1
	done
	ip -n "$ns" link set hx0 up && offloads_try "$ns" hx0 || return 1
	[ -z "$addr" ] || { ip -n "$ns" addr add "$addr" dev hx0 && IA_HOST_IP=${addr%/*}; } || return 1
	IA_HOST_NS=$ns
	[ "$ms" = 0 ] && return 0
	ia_hx ip link set hx-mp promisc on && ia_hx ip link set hx-mb promisc on || return 1
	# bounded, should a killed caller never reach ia_down
	impair_spawn "$bin" "$IA_NS" hx-mp hx-mb "$IA_OUT/impair.log" 3600 --dir ab --delay-ms "$ms" &&
		return 0
	ia_log "impair did not start: $(cat "$IA_OUT/impair.log")"
	return 1
}

# ia_host_ns_name: the host link's namespace. A prefix, not a suffix: siw-vm finds its own
# namespace with `grep -w "^NAME"`, which a leftover "NAME-h" would satisfy, and then it
# never creates NAME.
ia_host_ns_name() { echo "hx-$IA_NS"; }

# ia_host_unlink: ends impair (it outlives its interfaces) and the host namespace, also one
# a killed run left behind; host programs go back to siw-vm's namespace and the bridge's
# address.
ia_host_unlink() {
	impair_stop
	[ -n "${IA_NS:-}" ] && ip netns del "$(ia_host_ns_name)" 2>/dev/null
	IA_HOST_NS=$IA_NS
	IA_HOST_IP=$IA_NET.1
}

# ia_capture_start NAME / ia_capture_stop: dumpcap on the bridge (tcpdump is not installed
# on the host; dumpcap comes with tshark). pcap format so every reader takes it.
ia_capture_start() {
	IA_PCAP=$IA_OUT/$1.pcap
	rm -f "$IA_PCAP"
	# started directly, not through ia_hx: `ip netns exec` execs dumpcap, so $! is dumpcap
	# itself and ia_capture_stop ends it (a backgrounded function would be a subshell)
	if [ -n "$IA_NS" ]; then
		ip netns exec "$IA_NS" dumpcap -q -P -i siwbr0 -f ip -w "$IA_PCAP" >"$IA_OUT/$1.dumpcap.log" 2>&1 &
	else
		dumpcap -q -P -i siwbr0 -f ip -w "$IA_PCAP" >"$IA_OUT/$1.dumpcap.log" 2>&1 &
	fi
	IA_CAP_PID=$!

	for _ in $(seq 50); do   # dumpcap creates the file once the interface is open
		[ -s "$IA_PCAP" ] && return 0
		sleep 0.1
	done
	ia_log "dumpcap did not start: $(cat "$IA_OUT/$1.dumpcap.log")"
	return 1
}

ia_capture_stop() {
	[ -n "${IA_CAP_PID:-}" ] || return 0
	sleep 0.5                 # the last FIN/ACK
	kill "$IA_CAP_PID" 2>/dev/null
	wait "$IA_CAP_PID" 2>/dev/null   # dumpcap flushes and closes the file on SIGTERM
	IA_CAP_PID=
}

# ia_guest_listening GUEST [PORT]: a listener in GUEST on PORT (default IA_PORT)? siw's
# listening socket is a kernel socket: ss sees it.
ia_guest_listening() {
	ia_sv exec -t 20 "$1" "ss -Hltn 'sport = :${2:-$IA_PORT}' | grep -q LISTEN" >/dev/null 2>&1
}

ia_host_listening() {
	ia_hh ss -Hltn "sport = :${1:-$IA_PORT}" 2>/dev/null | grep -q LISTEN
}

# Kill what a case left running in the guest (a server stuck by a failed exchange).
ia_guest_cleanup() {
	ia_sv exec -t 20 "$1" 'for p in $(pidof rping); do kill -9 $p; done; true' >/dev/null 2>&1 || true
}

# ia_h2g NAME GUEST "SERVER ARGS" "CLIENT ARGS": Debian rping server in GUEST,
# softrnic-rping client on the host. Logs NAME.host.log / NAME.guest.log. Returns the
# client's exit status (the client verifies the data with -V).
ia_h2g() {
	local name=$1 g=$2 gip rc
	gip=$(ia_guest_ip "$g")
	ia_guest_cleanup "$g"
	ia_sv exec -b "$g" "rping -s -a $gip -p $IA_PORT $3 >/tmp/ia-srv.log 2>&1" >/dev/null || return 1
	for _ in $(seq 20); do ia_guest_listening "$g" && break; sleep 0.2; done
	timeout $((IA_TIMEOUT * 4 + 30)) ip netns exec "$IA_HOST_NS" \
		"$IA_BIN/softrnic-rping" -c -a "$gip" -p "$IA_PORT" -t "$IA_TIMEOUT" $4 \
		>"$IA_OUT/$name.host.log" 2>&1
	rc=$?
	sleep 0.5
	ia_sv exec -t 20 "$g" 'cat /tmp/ia-srv.log; pidof rping >/dev/null && echo "[rping server still running]"; true' \
		>"$IA_OUT/$name.guest.log" 2>&1
	ia_guest_cleanup "$g"
	return $rc
}

# ia_g2h NAME GUEST "SERVER ARGS" "CLIENT ARGS": softrnic-rping server on the host (runs
# until the client disconnects), Debian rping client in GUEST (verifies with -V). Returns
# non-zero if either side failed.
ia_g2h() {
	local name=$1 g=$2 hp rc hrc
	ia_guest_cleanup "$g"
	timeout $((IA_TIMEOUT * 4 + 60)) ip netns exec "$IA_HOST_NS" \
		"$IA_BIN/softrnic-rping" -s -a "$IA_HOST_IP" -p "$IA_PORT" -t "$IA_TIMEOUT" $3 \
		>"$IA_OUT/$name.host.log" 2>&1 &
	hp=$!
	for _ in $(seq 50); do ia_host_listening && break; sleep 0.1; done
	ia_sv exec -t $((IA_TIMEOUT * 4 + 30)) "$g" "rping -c -a $IA_HOST_IP -p $IA_PORT $4" \
		>"$IA_OUT/$name.guest.log" 2>&1
	rc=$?
	# rping's teardown race (docs/interop.md): a verified run that only lost the exit status
	# counts
	if [ $rc != 0 ] && ia_rping_teardown_race "$IA_OUT/$name.guest.log"; then
		ia_log "$name: Debian rping client exit status $rc from its teardown race (F6), data verified"
		echo "[interop: exit status $rc from rping's teardown race F6]" >>"$IA_OUT/$name.guest.log"
		rc=0
	fi
	# the server ends when the client's disconnect arrives; give it its wait timeout
	for _ in $(seq $((IA_TIMEOUT * 10))); do kill -0 "$hp" 2>/dev/null || break; sleep 0.1; done
	kill "$hp" 2>/dev/null
	wait "$hp"
	hrc=$?
	ia_guest_cleanup "$g"
	[ "$rc" = 0 ] && [ "$hrc" = 0 ]
}

# ia_rping_teardown_race LOG: Debian rping's client (rdma-core 44) runs its CM event loop in
# a thread that is never joined: when DISCONNECTED arrives while main() is destroying the
# event channel, the thread's next rdma_get_cm_event() fails with EBADF and it calls
# exit(-1) (status 255) after every ping was already verified. True only for exactly that:
# the DISCONNECT line, that error as the last line, and no verification or other error.
ia_rping_teardown_race() {
	local last
	last=$(grep -v '^ping data' "$1" | tail -n 1)
	[ "$last" = "rdma_get_cm_event: Bad file descriptor" ] &&
		grep -q 'client DISCONNECT EVENT' "$1" &&
		[ "$(grep -v -e '^ping data' -e 'client DISCONNECT EVENT' -e 'rdma_get_cm_event: Bad file descriptor' "$1" | grep -c .)" = 0 ]
}

# tshark with the MPA heuristic on and the RPC-over-RDMA heuristic off (it takes small Sends
# for RPC-over-RDMA and calls them malformed).
ia_tshark() { tshark -r "$@" --enable-heuristic iwarp_mpa_tcp --disable-protocol rpcordma 2>/dev/null; }

# ia_decode PCAP: one summary line about the capture on stdout
#   mpa=<req flags/pd>/<rep flags/pd> fpdus=N(tshark)/M(iwarp-dump) crc=good:G,bad:B malformed=K dump=rc
# and returns non-zero if tshark finds a malformed frame, an expert error or a bad CRC, or if
# iwarp-dump rejects an FPDU or counts differently than tshark.
ia_decode() {
	local p=$1 req rep nts ndump good bad malformed drc
	req=$(ia_tshark "$p" -Y iwarp_mpa.req -T fields -e iwarp_mpa.rev -e iwarp_mpa.crc_flag \
		-e iwarp_mpa.marker_flag -e iwarp_mpa.privatedata | head -n1 | tr '\t' ',')
	rep=$(ia_tshark "$p" -Y iwarp_mpa.rep -T fields -e iwarp_mpa.rev -e iwarp_mpa.crc_flag \
		-e iwarp_mpa.marker_flag -e iwarp_mpa.privatedata | head -n1 | tr '\t' ',')
	# one FPDU per occurrence of the ULPDU length field (several can share a segment)
	nts=$(ia_tshark "$p" -Y iwarp_mpa.fpdu -T fields -e iwarp_mpa.ulpdulength |
		tr ',' '\n' | grep -c .)
	good=$(ia_tshark "$p" -O iwarp_mpa -Y iwarp_mpa.fpdu | grep -c 'Good CRC32')
	bad=$(ia_tshark "$p" -O iwarp_mpa -Y iwarp_mpa.fpdu | grep -ci 'Bad CRC')
	malformed=$(ia_tshark "$p" -Y '_ws.malformed || _ws.expert.severity >= error' | grep -c .)
	ndump=$("$IA_DUMP" -t "$p" 2>/dev/null | grep -vc '^#')
	"$IA_DUMP" -q "$p" >"${p%.pcap}.iwarp-dump.txt" 2>&1
	drc=$?
	local agree=1 unseen=""
	if [ "$nts" != "$ndump" ]; then
		unseen=$(ia_tshark_unseen "$p") && agree=1 || agree=0
	fi
	echo "mpa req(rev,C,M,pd)=${req:-none} rep=${rep:-none} fpdus tshark=$nts iwarp-dump=$ndump crc good=$good bad=$bad malformed=$malformed iwarp-dump-rc=$drc${unseen:+ $unseen}"
	[ "$malformed" = 0 ] && [ "$bad" = 0 ] && [ "$drc" = 0 ] && [ "$agree" = 1 ]
}

# ia_tshark_unseen PCAP: where tshark and iwarp-dump count FPDUs differently, frame by frame
# (the frame carrying each FPDU's first octet). tshark does not hand a segment it calls out of
# order or a retransmission to MPA (so a segment whose first copy was lost before the capture
# point, or that the capture saw late, goes undecoded), while iwarp-dump reassembles each
# stream by sequence number. Prints
# "tshark-undecoded=F1,F2 (tcp: out of order/retransmitted)" and succeeds if every frame that
# differs is one of those and only tshark lacks FPDUs there; otherwise prints each differing
# frame as frame:tshark/iwarp-dump and fails.
ia_tshark_unseen() {
	local p=$1
	awk -F'\t' -v anom="$(ia_tshark "$p" -Y 'tcp.analysis.out_of_order || tcp.analysis.retransmission ||
		tcp.analysis.spurious_retransmission || tcp.analysis.fast_retransmission' \
		-T fields -e frame.number | tr '\n' ' ')" '
		BEGIN { n = split(anom, a, " "); for (i = 1; i <= n; i++) isanom[a[i]] = 1 }
		FNR == NR { ts[$1] += split($2, x, ","); next }
		/^#/ { next }
		{ dump[$NF]++ }   # the frame with the first octet of the FPDU
		END {
			for (f in ts) all[f] = 1
			for (f in dump) all[f] = 1
			ok = 1
			for (f in all) {
				if (ts[f] + 0 == dump[f] + 0) continue
				if (isanom[f] && ts[f] + 0 < dump[f] + 0) { u = u (u ? "," : "") f; continue }
				ok = 0; bad = bad (bad ? "," : "") f ":" ts[f] + 0 "/" dump[f] + 0
			}
			if (!ok) { print "fpdu-count-differs=" bad; exit 1 }
			print "tshark-undecoded=" u " (tcp: out of order/retransmitted)"
		}' <(ia_tshark "$p" -Y iwarp_mpa.fpdu -T fields -e frame.number -e iwarp_mpa.ulpdulength) \
		<("$IA_DUMP" -t "$p" 2>/dev/null)
}

# ia_siw_silent PCAP GUEST_IP: true if the guest sent no DDP segment at all (after the MPA
# exchange), the mark of the siw accept race described in docs/interop.md.
ia_siw_silent() {
	[ "$(ia_tshark "$1" -Y "iwarp_mpa.rep && ip.src==$2" | grep -c .)" -gt 0 ] &&
		[ "$(ia_tshark "$1" -Y "iwarp_ddp && ip.src==$2" | grep -c .)" = 0 ]
}

# ia_build_rev1: siw.ko built from the cached image's own siw source with mpa_version =
# MPA_REVISION_1 (siw's tunables are const globals, not module parameters), in $IA_OUT/siw-rev1.
ia_build_rev1() {
	local k src d cache=${SIWVM_CACHE:-/var/cache/siwvm}
	k=$(ls -d "$cache"/k/*/ 2>/dev/null | head -n1) || return 1
	src=$k/siw-stock
	d=$IA_OUT/siw-rev1
	[ -f "$src/siw_main.c" ] || return 1
	mkdir -p "$d"
	cp "$src"/*.[ch] "$src/Makefile" "$src/Kconfig" "$d/" 2>/dev/null
	rm -f "$d"/*.mod.c
	sed -i -E 's/^u_char mpa_version = MPA_REVISION_2;/u_char mpa_version = MPA_REVISION_1;/' "$d/siw_main.c"
	grep -q 'mpa_version = MPA_REVISION_1;' "$d/siw_main.c" || return 1
	make -s -C "$(ls -d "$k"/hdr/usr/src/linux-headers-*-amd64 | head -n1)" M="$d" CONFIG_RDMA_SIW=m \
		CONFIG_DEBUG_INFO_BTF_MODULES= modules >"$IA_OUT/siw-rev1.build.log" 2>&1 || return 1
	strip --strip-debug "$d/siw.ko"
}

# ia_load_rev1 G: swap guest G's siw for the rev 1 build (through the 9p share).
ia_load_rev1() {
	local share
	share=$(cat "$SIWVM_RUN/share.path") || return 1
	cp "$IA_OUT/siw-rev1/siw.ko" "$share/siw-rev1.ko" || return 1
	ia_sv exec -t 60 "$1" 'rdma link delete siw0 && rmmod siw && insmod /mnt/host/siw-rev1.ko &&
		rdma link add siw0 type siw netdev eth0 && rdma link show' >"$IA_OUT/rev1-load.log" 2>&1
}
