#!/bin/sh
# softrnic's TCP engine against Linux TCP: apps/tcp/softrnic-tcp on net_af_packet over veth-a
# in namespace A (the engine is 198.51.100.1; veth-a itself has no address, so the kernel of
# A stays out of the way), ktcp_peer on the kernel's TCP in namespace B (198.51.100.2 on
# veth-b). Usage: tcp_linux.sh CASE softrnic-tcp ktcp_peer impair
# CASE: basic bulk pingpong conns mtu abort pcap, netem-{loss1,loss5,reorder,dup,delay,ours}
# (docs/testing.md has what each runs).
# Exit 77 (skip) without root, network namespaces or DPDK's af_packet PMD.
TEST_NAME=tcp_linux_$1
. "$(dirname "$0")/../../lib/common.sh"
. "$(dirname "$0")/../../lib/impair.sh"
CASE=$1
E=$2
K=$3
IMPAIR=$4
[ -x "$E" ] && [ -x "$K" ] && [ -x "$IMPAIR" ] ||
	fail "usage: $0 CASE softrnic-tcp ktcp_peer impair"

[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, af_packet)"
have_dpdk_pmd af_packet || skip "DPDK's af_packet PMD is not installed (scripts/deps.sh)"
need_cmd ip iproute2
need_cmd tc iproute2
need_cmd ethtool ethtool
need_cmd python3 python3
need_cmd timeout coreutils

OUT=$(mktemp -d /tmp/srn-tcp-linux.XXXXXX)
NA=
NB=
ENG_PID=
KER_PID=
cleanup() {
	for p in $ENG_PID $KER_PID; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[ -n "$NA" ] && ip netns del "$NA" 2>/dev/null
	[ -n "$NB" ] && ip netns del "$NB" 2>/dev/null
	if [ -n "${KEEP_OUT:-}" ]; then echo "outputs kept in $OUT"; else rm -rf "$OUT"; fi
}
EXIT_HOOKS="$EXIT_HOOKS cleanup"

setup_ns() {
	id=$$-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
	ip netns add "srn-tcpl-a-$id" 2>/dev/null || skip "cannot create network namespaces"
	NA=srn-tcpl-a-$id
	ip netns add "srn-tcpl-b-$id" || fail "ip netns add"
	NB=srn-tcpl-b-$id
	ip -n "$NA" link add veth-a type veth peer name veth-b netns "$NB" || fail "veth pair"
	for ns in "$NA" "$NB"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
		ip -n "$ns" link set lo up
	done
	ip -n "$NB" addr add 198.51.100.2/24 dev veth-b || fail "address on veth-b"
	ip -n "$NA" link set veth-a up || fail "veth-a up"
	ip -n "$NB" link set veth-b up || fail "veth-b up"
	offloads_off "$NA" veth-a
	offloads_off "$NB" veth-b
}

# The engine's port: af_packet on veth-a. BYPASS=0 sends our frames through veth-a's qdisc
# (so netem there acts on what the engine transmits).
MTU=1500
BYPASS=1
EAL_MB=256
MBUFS=16383
PCAP=${TCP_LINUX_PCAP:-}  # capture every engine run (debugging)
# Both run as the last command of their (sub)shell with exec: a background job's PID is then
# timeout's own, and killing it reaches the tool (timeout forwards the signal).
eng() {
	name=$1
	shift
	exec_or_run ip netns exec "$NA" env \
		SOFTRNIC_DPDK_EAL="--no-huge -m $EAL_MB --vdev=net_af_packet0,iface=veth-a,qdisc_bypass=$BYPASS" \
		SOFTRNIC_DPDK_IP=198.51.100.1/24 SOFTRNIC_DPDK_MTU=$MTU SOFTRNIC_DPDK_PCAP=$PCAP \
		SOFTRNIC_DPDK_MBUFS=$MBUFS \
		timeout -k 3 $((TMO + 15)) "$E" "$@" --timeout "$TMO" --stats >"$OUT/$name.eng" 2>&1
}
ker() {
	name=$1
	shift
	exec_or_run ip netns exec "$NB" timeout -k 3 $((TMO + 15)) "$K" "$@" --timeout "$TMO" \
		>"$OUT/$name.ker" 2>&1
}

# In a background subshell (BG=1) replace it; in the foreground just run.
exec_or_run() {
	if [ "${BG:-0}" = 1 ]; then exec "$@"; else "$@"; fi
}

show_fail() {
	for f in "$OUT/$1".*; do
		echo "---- $f" >&2
		tail -n 25 "$f" >&2
	done
	shift
	fail "$@"
}

wait_eng_listening() {
	i=0
	while [ "$i" -lt 300 ]; do
		grep -q "listening on port" "$OUT/$1.eng" 2>/dev/null && return 0
		kill -0 "$ENG_PID" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# we_accept NAME PORT 'ENGINE ARGS' 'KERNEL ARGS': engine listens, kernel connects.
we_accept() {
	name=$1 port=$2
	BG=1 eng "$name" listen "$port" $3 &
	ENG_PID=$!
	wait_eng_listening "$name" || show_fail "$name" "$name: the engine did not listen"
	ker "$name" connect "198.51.100.1:$port" $4
	krc=$?
	wait "$ENG_PID"
	erc=$?
	ENG_PID=
	check "$name" "$erc" "$krc"
}

# we_connect NAME PORT 'ENGINE ARGS' 'KERNEL ARGS': kernel listens, engine connects.
we_connect() {
	name=$1 port=$2
	BG=1 ker "$name" listen "$port" $4 &
	KER_PID=$!
	wait_listen "$port" "$NB" 10 || show_fail "$name" "$name: ktcp_peer did not listen"
	eng "$name" connect "198.51.100.2:$port" $3
	erc=$?
	wait "$KER_PID"
	krc=$?
	KER_PID=
	check "$name" "$erc" "$krc"
}

check() {
	[ "$2" -eq 0 ] && [ "$3" -eq 0 ] ||
		show_fail "$1" "$1: engine exit $2, kernel exit $3 (0 ok, 1 wrong outcome, 2 timeout, 3 port)"
	printf '%-22s engine: %s\n' "$1" "$(grep '^result:\|^latency:' "$OUT/$1.eng" | tr '\n' ' ')"
	printf '%-22s kernel: %s\n' "$1" "$(grep '^result:\|^latency:' "$OUT/$1.ker" | tr '\n' ' ')"
	grep '^stats: tcp\|^stats: conns' "$OUT/$1.eng" | sed "s/^/$1 /" | cut -c1-400
}

netem() {
	ip netns exec "$1" tc qdisc replace dev "$2" root netem $3 || fail "tc netem $3"
}
netem_off() {
	ip netns exec "$1" tc qdisc del dev "$2" root 2>/dev/null
}

case_basic() {
	TMO=20
	# ARP and ICMP echo: the kernel pings the engine.
	BG=1 eng ping listen 7 --sink &
	ENG_PID=$!
	wait_eng_listening ping || show_fail ping "the engine did not start"
	ip netns exec "$NB" python3 "$(dirname "$0")/icmp_ping.py" 198.51.100.1 >"$OUT/ping.ping" 2>&1 ||
		show_fail ping "ICMP echo to 198.51.100.1 from the kernel got no (good) reply"
	tail -1 "$OUT/ping.ping"
	# A closed port of the engine: the kernel's connect is refused (RST from the engine).
	ker refused-by-us connect 198.51.100.1:9 --sink --expect refused ||
		show_fail refused-by-us "kernel connect to a closed engine port was not refused"
	kill "$ENG_PID"
	wait "$ENG_PID" 2>/dev/null
	ENG_PID=
	# A closed port of the kernel: the engine's connect is refused, quickly.
	t0=$(date +%s%N)
	eng refused-by-linux connect 198.51.100.2:9 --sink --expect refused ||
		show_fail refused-by-linux "engine connect to a closed kernel port was not refused"
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "refused-by-linux: engine saw ECONNREFUSED, whole run ${ms} ms (EAL start included)"
	[ "$ms" -lt 10000 ] || fail "refusal took ${ms} ms"
	we_accept small-up 5001 '--sink' '--source 1M'
	we_connect small-down 5002 '--source 1M' '--sink'
}

case_bulk() {
	TMO=150
	we_accept bulk-1G-we-accept 5011 '--sink' '--source 1G'
	we_connect bulk-1G-we-connect 5012 '--source 1G' '--sink'
	# zero-copy transmit (tcp_send_zc): the kernel verifies every octet; slots are scribbled
	# when the engine returns them, so a premature release shows as a mismatch.
	we_connect bulk-zc-we-connect 5013 '--source 256M --zc' '--sink'
	grep '^stats: zc' "$OUT/bulk-zc-we-connect.eng"
}

case_pingpong() {
	TMO=90
	we_connect pingpong-we-connect 5021 '--pingpong 10000 --size 64' '--echo'
	we_accept pingpong-we-accept 5022 '--echo' '--pingpong 10000 --size 64'
}

case_conns() {
	TMO=120
	# 1000 x 64 KiB queued at once: runs with the port's defaults since the port has a
	# separate transmit pool (docs/dpdk.md), so send data cannot starve receiving.
	we_connect conns-1000-we-connect 5031 '--source 64K --conns 1000' '--sink --conns 1000'
	we_accept conns-1000-we-accept 5032 '--sink --conns 1000' '--source 64K --conns 1000'
}

# tc netem on the kernel's veth when the kernel has sch_netem; otherwise the same impairments
# from tests/tcp/linux/impair.c, a frame forwarder in a third namespace between the veths.
netem_available() {
	ip netns exec "$NB" tc qdisc add dev veth-b root netem delay 0ms 2>/dev/null || return 1
	ip netns exec "$NB" tc qdisc del dev veth-b root 2>/dev/null
	return 0
}

# A -- veth-a | veth-ma [impair] veth-mb | veth-b -- B (replaces the direct pair).
setup_middle() {
	impair_link "$NA" "$NB" "$NA-m"
	ip -n "$NB" addr add 198.51.100.2/24 dev veth-b || fail "address on veth-b"
}

# impaired 'IMPAIR ARGS' TAG DIRS: transfers through impair (DIRS: recv and/or send).
impaired() {
	impair_start "$IMPAIR" "$OUT/impair-$2.log" $((TMO * 3)) $1
	case "$3" in *recv*) we_accept "imp-$2-we-recv" 5101 '--sink' "--source $SZ" ;; esac
	case "$3" in *send*) we_connect "imp-$2-we-send" 5102 "--source $SZ" '--sink' ;; esac
	case "$3" in *zc*) we_connect "imp-$2-we-send-zc" 5103 "--source $SZ --zc" '--sink' ;; esac
	impair_stop
	echo "imp-$2: $(tail -1 "$OUT/impair-$2.log")"
}

# netem_tc 'NETEM SPEC' TAG DIRS [ours]: the same with tc netem (veth-b, or veth-a for ours).
netem_tc() {
	if [ -n "${4:-}" ]; then  # the engine's frames: through veth-a's qdisc, no bypass
		BYPASS=0
		netem "$NA" veth-a "$1"
	else
		netem "$NB" veth-b "$1"
	fi
	case "$3" in *recv*) we_accept "netem-$2-we-recv" 5101 '--sink' "--source $SZ" ;; esac
	case "$3" in *send*) we_connect "netem-$2-we-send" 5102 "--source $SZ" '--sink' ;; esac
	case "$3" in *zc*) we_connect "netem-$2-we-send-zc" 5103 "--source $SZ --zc" '--sink' ;; esac
	netem_off "$NA" veth-a
	netem_off "$NB" veth-b
	BYPASS=1
}

# netem-SUB: one impairment, 32 MiB each way (we receive: the kernel sends through the
# impairment; we send: the kernel's ACKs cross it), or for "ours" the engine's own frames.
# tc netem on the veths when the kernel has sch_netem; otherwise tests/tcp/linux/impair.c, a
# frame forwarder in a third namespace between the veths, with the same parameters.
case_netem() {
	# 32 MiB takes a second or two at 5 % loss when recovery works (the kernel as sender
	# needs 0.4 s at 1 %); 60 s is generous and keeps a stuck case short.
	TMO=60
	SZ=${NETEM_SIZE:-32M}
	case "$1" in
	loss1) tc_spec="loss 1%" imp="--dir ba --loss 1" dirs=recv,send ours= ;;
	loss5) tc_spec="loss 5%" imp="--dir ba --loss 5" dirs=recv,send ours= ;;
	reorder) tc_spec="delay 1ms reorder 75% 50%" imp="--dir ba --reorder 25" dirs=recv,send ours= ;;
	dup) tc_spec="duplicate 5%" imp="--dir ba --dup 5" dirs=recv,send ours= ;;
	delay) tc_spec="delay 10ms" imp="--dir ba --delay-ms 10" dirs=recv,send ours= ;;
	# ours: also zero-copy, whose retransmissions come from the memory lent to the engine
	ours) tc_spec="loss 5%" imp="--dir ab --loss 5 --reorder 10 --dup 2" dirs=send,zc ours=1 ;;
	*) fail "unknown netem case $1" ;;
	esac
	if netem_available; then
		echo "== tc netem: $tc_spec${ours:+ (on the engine's veth-a)}"
		netem_tc "$tc_spec" "$1" "$dirs" "$ours"
	else
		echo "== no sch_netem in this kernel: impair $imp (middle namespace)"
		setup_middle
		impaired "$imp" "$1" "$dirs"
	fi
}

case_mtu() {
	TMO=60
	SZ=${NETEM_SIZE:-32M}
	ip -n "$NA" link set veth-a mtu 600 && ip -n "$NB" link set veth-b mtu 600 || fail "mtu"
	MTU=600
	we_accept mtu600-we-recv 5161 '--sink' "--source $SZ"
	we_connect mtu600-we-send 5162 "--source $SZ" '--sink'
	grep '^stats: conn0' "$OUT/mtu600-we-send.eng"
	# IP MTU 600: MSS at most 560, minus 12 for timestamps.
	grep -q 'snd_mss=5[0-6][0-9] ' "$OUT/mtu600-we-send.eng" || fail "mtu 600: MSS not below 570"
}

case_abort() {
	TMO=30
	# The kernel resets mid-transfer; the engine (sink / source) reports the reset.
	we_accept rst-by-linux-to-sink 5201 '--sink --expect reset' '--source 256M --rst-after 4M'
	we_connect rst-by-linux-to-source 5202 '--source 256M --expect reset' \
		'--sink --rst-after 4M'
	# The kernel's FIN mid-transfer: the engine's sink reports the early end of stream.
	we_accept fin-by-linux 5203 '--sink --expect eof' '--source 256M --fin-after 4M'
	# The engine resets / ends early; the kernel reports it.
	we_connect rst-by-us 5204 '--source 256M --rst-after 4M' '--sink --expect reset'
	we_connect fin-by-us 5205 '--source 256M --fin-after 4M' '--sink --expect eof'
	we_accept rst-by-us-sink 5206 '--sink --rst-after 4M' '--source 256M --expect reset'
}

case_pcap() {
	need_cmd tshark tshark
	TMO=30
	PCAP=$OUT/engine.pcap
	we_connect pcap-bulk 5301 '--source 4M' '--sink'
	[ -s "$PCAP" ] || fail "no capture written to $PCAP"
	mv "$PCAP" "$OUT/bulk.pcap"
	frames=$(tshark -r "$OUT/bulk.pcap" 2>"$OUT/tshark.err" | wc -l)
	# tshark's only allowed remark is its warning about running as root.
	if grep -v 'Running as user' "$OUT/tshark.err" | grep -q .; then
		cat "$OUT/tshark.err" >&2
		fail "tshark could not read the capture cleanly"
	fi
	[ "$frames" -gt 100 ] || fail "capture holds only $frames frames"
	# Wireshark calls a TCP checksum field of 0xffff bad (RFC 1624: the other zero, which
	# incremental updates produce; arithmetically it verifies). Linux's segmentation offload
	# path sends one now and then (rarely); the engine's own frames
	# are held to the strict rule.
	filt='_ws.malformed || ip.checksum.status == 0 || (tcp.checksum.status == 0 && !(tcp.checksum == 0xffff && ip.src == 198.51.100.2))'
	bad=$(tshark -r "$OUT/bulk.pcap" -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE \
		-Y "$filt" 2>/dev/null | wc -l)
	arp=$(tshark -r "$OUT/bulk.pcap" -Y arp 2>/dev/null | wc -l)
	syn=$(tshark -r "$OUT/bulk.pcap" -Y 'tcp.flags.syn == 1' 2>/dev/null | wc -l)
	echo "pcap: $frames frames, $arp ARP, $syn SYN, $bad malformed or bad checksum"
	[ "$bad" -eq 0 ] || {
		tshark -r "$OUT/bulk.pcap" -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE \
			-Y "$filt" | head >&2
		fail "bad frames in the capture"
	}
	[ "$syn" -ge 2 ] || fail "handshake not captured"
}

setup_ns
case "$CASE" in
basic | bulk | pingpong | conns | mtu | abort | pcap) "case_$CASE" ;;
netem-*) case_netem "${CASE#netem-}" ;;
*) fail "unknown case $CASE" ;;
esac
echo "$TEST_NAME: pass"
