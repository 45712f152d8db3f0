#!/usr/bin/env bash
# softrnic's TCP engine against Linux TCP on one impaired link, in one run (docs/tcp.md, "Loss
# recovery"): two namespaces joined through tests/tcp/linux/impair, which impairs both
# directions,
#   ns A: sink,   veth-a -- veth-ma [impair, ns M] veth-mb -- veth-b   ns B: source
# and for each profile, BENCH_ROUNDS rounds of one bulk transfer per pairing, alternating
# pair by pair (the order flips every round) under a fresh impair with the round's seed:
#   kk  ktcp_peer to ktcp_peer: Linux TCP at both ends (the kernel owns 198.51.100.1 / .2);
#   ee  softrnic-tcp to softrnic-tcp: the engine at both ends, each on DPDK's net_af_packet
#       on its veth end (the kernel then has no address there);
#   ek, ke (BENCH_PAIRS): the engine sends to Linux, Linux sends to the engine.
# Both tools run the same session code (apps/tcp/stcp_*.c): a source sends BENCH_BYTES_<profile>
# octets of a pattern, the sink verifies every one and answers, so a difference is the
# transports'. The figure is the source's (its "result:" line, gbit_s: from the connection to
# the sink's verdict). Profiles (BENCH_PROFILES):
#   clean  no impairment (impair forwards)
#   A      20 ms +- 5 ms delay (uniform, so frames overtake one another) and 1 % loss
#   B      3 % loss, 25 % reordering (a frame held until after the next), 1 % duplication
#   loss, reorder, jitter: one part of A or B alone (3 % loss; 25 % reordering; the delay and
#          jitter of A), to tell which part costs (BENCH_BYTES, 64M)
# Reported: every transfer, then per profile and pairing the median Gbit/s and the median of
# the rounds' ratios to kk (judged: ee/kk >= 1 under A and B).
# Environment: BUILD_DIR (a tree of your own, set up as a plain release build on first use;
# unset: build-release, made by scripts/build-release.sh), BENCH_ROUNDS (5), BENCH_PROFILES
# ("clean A B"), BENCH_PAIRS ("kk ee"), BENCH_BYTES_clean / _A / _B (256M, 16M, 64M),
# BENCH_KERNEL_CC, BENCH_ENGINE_CC (each end's congestion control: cubic, as Debian's kernel
# has by default; the engine has newreno, cubic and bbr; ktcp_peer sets the kernel's per socket,
# KTCP_CC), BENCH_ENGINE_SPIN_US (the engines' spin_us, default 0: below), BENCH_TIMEOUT
# (a transfer's limit, 300 s; one that fails counts 0), BENCH_LOGS (a directory to keep every
# log in), BENCH_NO_BUILD (not empty: use BUILD_DIR as it is),
# BENCH_STRICT (not empty: exit 1 when a transfer did not complete; the smoke test in
# tests/tcp/linux),
# BENCH_PCAP (not empty: each engine end captures its frames to LOG.pcap beside its log, and
# a kernel source's veth is captured by dumpcap), BENCH_OUT (the figures' CSV and PNG,
# DATE-bench-impair.csv / .png: default bench/results, none writes nothing: each pairing's
# Gbit/s per profile and round beside kk's of the same round).
# Needs root (exit 77 without) and DPDK's af_packet PMD (exit 77 without).
# Usage: BUILD_DIR=build-rel scripts/bench-impair.sh
set -u
cd "$(dirname "$0")/.."
TEST_NAME=bench-impair
. tests/lib/common.sh
. tests/dpdk/dpdk_lib.sh
. tests/lib/impair.sh
die() { fail "$@"; }
B=${BUILD_DIR:-build-release}
source scripts/bench-lib.sh # bench_build, field
ROUNDS=${BENCH_ROUNDS:-5}
PROFILES=${BENCH_PROFILES:-clean A B}
PAIRS=${BENCH_PAIRS:-kk ee}
TMO=${BENCH_TIMEOUT:-300}
KERNEL_CC=${BENCH_KERNEL_CC:-cubic}
ENGINE_CC=${BENCH_ENGINE_CC:-cubic}
# The engines' poll loops nap as soon as a pass finds nothing (the port's key spin_us here 0,
# by default 200 us): two engines spinning on a 2-core machine leave impair's forwarder no
# core, and every frame then waits for a time slice (B: 0.41 against 0.70 Gbit/s, bench/results/
# 2026-11-29-bench-impair-autotune.md). Linux's endpoints sleep between packets likewise.
ENGINE_SPIN_US=${BENCH_ENGINE_SPIN_US:-0}
A=198.51.100.1
Bip=198.51.100.2
PORT=5001
# the engine's counters shown beside each of its transfers
STATS_RE=' retrans=[0-9]*\|fast_retrans=[0-9]*\|rto_expiries=[0-9]*\|dsacks=[0-9]*\|undos=[0-9]*'

profile_args() { # PROFILE: impair's options
	case $1 in
	clean) echo "--dir both" ;;
	A) echo "--dir both --delay-ms 20 --jitter-ms 5 --loss 1" ;;
	B) echo "--dir both --loss 3 --reorder 25 --dup 1" ;;
	loss) echo "--dir both --loss 3" ;;
	reorder) echo "--dir both --reorder 25" ;;
	jitter) echo "--dir both --delay-ms 20 --jitter-ms 5" ;;
	*) fail "unknown profile $1" ;;
	esac
}
profile_bytes() { # PROFILE
	case $1 in
	clean) echo "${BENCH_BYTES_clean:-256M}" ;;
	A) echo "${BENCH_BYTES_A:-16M}" ;;
	B) echo "${BENCH_BYTES_B:-64M}" ;;
	*) echo "${BENCH_BYTES:-64M}" ;;
	esac
}

[ "$(id -u)" = 0 ] || skip "needs root (namespaces)"
have_dpdk_pmd af_packet || skip "DPDK's af_packet PMD missing"
need_cmd ethtool ethtool
[ -n "${BENCH_NO_BUILD:-}" ] ||
	bench_build apps/tcp/softrnic-tcp tests/tcp/linux/ktcp_peer tests/tcp/linux/impair
E=$B/apps/tcp/softrnic-tcp
K=$B/tests/tcp/linux/ktcp_peer
IMPAIR=$B/tests/tcp/linux/impair
dpdk_tmpdir
LOGS=${BENCH_LOGS:-$DPDK_DIR}
mkdir -p "$LOGS" || fail "mkdir $LOGS"
dpdk_netns bimp
impair_link "$DPDK_NS_A" "$DPDK_NS_B" "$DPDK_NS_A-m"

# addrs A_KERNEL B_KERNEL (on|off): the kernel owns the address of that veth end or not
addrs() {
	ip -n "$DPDK_NS_A" addr flush dev veth-a
	ip -n "$DPDK_NS_B" addr flush dev veth-b
	[ "$1" = on ] && { ip -n "$DPDK_NS_A" addr add $A/24 dev veth-a || fail "address on veth-a"; }
	[ "$2" = on ] && { ip -n "$DPDK_NS_B" addr add $Bip/24 dev veth-b || fail "address on veth-b"; }
	return 0
}

# end KIND(k|e) SIDE(a|b) LOG ARGS...: runs one end in its namespace (exec: $! is the tool)
end() {
	local kind=$1 side=$2 log=$3 ns ip if
	shift 3
	if [ "$side" = a ]; then ns=$DPDK_NS_A ip=$A if=veth-a; else ns=$DPDK_NS_B ip=$Bip if=veth-b; fi
	if [ "$kind" = e ]; then
		local lc=0
		[ "$side" = b ] && [ "$(nproc)" -gt 1 ] && lc=1
		exec ip netns exec "$ns" env \
			SOFTRNIC_DPDK_EAL="--no-huge -m 256 -l $lc --vdev=net_af_packet0,iface=$if,qdisc_bypass=1" \
			SOFTRNIC_DPDK_IP="$ip/24" SOFTRNIC_DPDK_CC="$ENGINE_CC" \
			SOFTRNIC_DPDK_SPIN_US="$ENGINE_SPIN_US" \
			${BENCH_PCAP:+SOFTRNIC_DPDK_PCAP=$log.pcap} \
			timeout -k 3 $((TMO + 15)) "$E" "$@" --timeout "$TMO" --stats >"$log" 2>&1
	fi
	# Like for like: CUBIC at both ends unless told otherwise (a machine's own default may be
	# another, such as BBR, which does not slow down for random loss).
	exec ip netns exec "$ns" env KTCP_CC="$KERNEL_CC" timeout -k 3 $((TMO + 15)) "$K" "$@" \
		--timeout "$TMO" >"$log" 2>&1
}

sink_ready() { # KIND LOG PID
	local i
	for i in $(seq 300); do
		if [ "$1" = e ]; then
			grep -q "listening on port" "$2" 2>/dev/null && return 0
		else
			[ -n "$(ip netns exec "$DPDK_NS_A" ss -Hltn "sport = :$PORT" 2>/dev/null)" ] &&
				return 0
		fi
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# transfer PAIR PROFILE ROUND: one bulk transfer; its Gbit/s (0: failed) into GBPS
transfer() {
	local pair=$1 snk=${1:1:1} src=${1:0:1} tag="$2.$3.$1" bytes
	bytes=$(profile_bytes "$2")
	addrs "$([ "$snk" = k ] && echo on || echo off)" "$([ "$src" = k ] && echo on || echo off)"
	PORT=$((PORT + 1))
	# shellcheck disable=SC2046
	impair_start "$IMPAIR" "$LOGS/$tag.impair" $((TMO + 60)) $(profile_args "$2") \
		--seed $((1000 * $3 + 7))
	(end "$snk" a "$LOGS/$tag.sink" listen "$PORT" --sink) &
	SERVER_PID=$!
	sink_ready "$snk" "$LOGS/$tag.sink" "$SERVER_PID" ||
		{ cat "$LOGS/$tag.sink" >&2; fail "$tag: sink"; }
	local cap=
	if [ -n "${BENCH_PCAP:-}" ] && [ "$src" = k ]; then
		ip netns exec "$DPDK_NS_B" dumpcap -q -i veth-b -s 128 -w "$LOGS/$tag.source.pcap" \
			>/dev/null 2>&1 &
		cap=$!
		sleep 1
	fi
	[ "$src" = k ] && ip netns exec "$DPDK_NS_B" nstat -n >/dev/null 2>&1
	[ "$snk" = k ] && ip netns exec "$DPDK_NS_A" nstat -n >/dev/null 2>&1
	(end "$src" b "$LOGS/$tag.source" connect "$A:$PORT" --source "$bytes")
	local crc=$? i
	[ "$src" = k ] && ip netns exec "$DPDK_NS_B" nstat >"$LOGS/$tag.nstat" 2>&1
	[ "$snk" = k ] && ip netns exec "$DPDK_NS_A" nstat >"$LOGS/$tag.sink.nstat" 2>&1
	[ -n "$cap" ] && { kill "$cap"; wait "$cap"; }
	# The sink has verified every octet once the source ends well; an engine source that has
	# gone no longer answers the sink's FIN, so the sink is given 5 s, then ended.
	for i in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
	kill_server
	impair_stop
	GBPS=$(field "$LOGS/$tag.source" result: gbit_s)
	if [ "$crc" != 0 ] || [ -z "$GBPS" ]; then
		echo "$tag: did not complete (source status $crc): $(tail -n 1 "$LOGS/$tag.source")"
		GBPS=0
		FAILED=$((FAILED + 1))
	fi
	local st=""
	[ "$src" = e ] && st=" engine: $(grep '^stats: conns' "$LOGS/$tag.source" |
		grep -o "$STATS_RE" | tr '\n' ' ')"
	echo "$tag: $GBPS Gbit/s ($bytes)$st; $(tail -n 1 "$LOGS/$tag.impair" | cut -d' ' -f2-9)"
}

echo "== bench-impair: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r), build $B, $ROUNDS rounds, pairs $PAIRS," \
	"congestion control: kernel $KERNEL_CC, engine $ENGINE_CC, engine spin_us $ENGINE_SPIN_US"
RESULTS=
FAILED=0
for prof in $PROFILES; do
	echo "-- profile $prof: impair $(profile_args "$prof"), $(profile_bytes "$prof") a transfer"
	for r in $(seq "$ROUNDS"); do
		order=$PAIRS
		[ $((r % 2)) = 0 ] && order=$(echo "$PAIRS" | tr ' ' '\n' | tac | tr '\n' ' ')
		for pair in $order; do
			transfer "$pair" "$prof" "$r"
			RESULTS+="$prof:$r:$pair:$GBPS "
		done
	done
done

# the CSV: every pairing but kk beside kk's transfer of the same profile and round
bench_csv_open bench-impair || fail "cannot write the CSV"
declare -A KK
for item in $RESULTS; do
	IFS=: read -r prof r pair g <<<"$item"
	[ "$pair" = kk ] && KK[$prof:$r]=$g
done
for item in $RESULTS; do
	IFS=: read -r prof r pair g <<<"$item"
	[ "$pair" = kk ] && continue
	bench_csv "$prof $pair vs kk" "" Gbit/s "$g" "${KK[$prof:$r]:-}" "$r"
done

echo "== summary (median of $ROUNDS rounds; ratio: median of the rounds' ratios to kk)"
python3 - "$RESULTS" "$PAIRS" <<'EOF'
import statistics, sys
res = {}
for item in sys.argv[1].split():
    prof, r, pair, g = item.split(":")
    res.setdefault(prof, {}).setdefault(pair, {})[int(r)] = float(g)
pairs = sys.argv[2].split()
for prof, by in res.items():
    kk = by.get("kk", {})
    for pair in pairs:
        runs = by.get(pair, {})
        med = statistics.median(runs.values())
        line = f"{prof:6s} {pair}  median {med:8.3f} Gbit/s  runs " + \
            " ".join(f"{runs[r]:.3f}" for r in sorted(runs))
        if pair != "kk" and kk:
            ratios = [runs[r] / kk[r] for r in sorted(runs) if kk.get(r)]
            if ratios:
                m = statistics.median(ratios)
                line += f"  {pair}/kk per round " + " ".join(f"{x:.2f}" for x in ratios)
                line += f"  median {m:.2f}x"
                if pair == "ee" and prof != "clean":
                    line += "  goal >=1: " + ("met" if m >= 1 else "MISSED")
        print(line)
EOF
bench_plot
[ -z "${BENCH_STRICT:-}" ] || [ "$FAILED" = 0 ] || fail "$FAILED transfers did not complete"
