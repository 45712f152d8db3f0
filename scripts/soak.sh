#!/bin/sh
# Soak and faults (docs/testing.md): tests/soak/soak's random mix of Send / Write / Read, every
# byte verified and every completion timed (5 s stall limit), between two namespaces joined
# through the impairment forwarder tests/tcp/linux/impair, which loses, reorders, duplicates,
# corrupts and delays frames both ways:
#   ns A: server, veth-a 198.51.100.1 -- veth-ma [impair, ns M] veth-mb -- veth-b 198.51.100.2
#   ns B: client
# Soak cases, SOAK_MINUTES (30) each, or SOAK_SECONDS: kernel sockets (the kernel owns the
# addresses) and softrnic's TCP engine on DPDK's net_af_packet on the same veth ends (then
# the kernel has no address there), each with MPA CRC off and on, the server's receives from
# an S-RQ in one case of each transport. Each case must pass in both processes (data,
# stalls, VmRSS after warm-up) and impair must really have done all five things.
# Then the killed-peer cases, on either transport: after KILL_AFTER (3) s of traffic the
# client, then the server, is killed with SIGKILL; the survivor must see its QPs end
# (async event, flush or DISCONNECTED), get every work request back and exit 0. On kernel
# sockets the survivor runs under valgrind memcheck (no error, no definite or indirect leak).
# Last, crc-catch: with the TCP checksum fixed up after each flip, MPA's CRC must end the
# run before a corrupted byte reaches the soak.
# Environment: SOAK_MINUTES, SOAK_SECONDS (overrides the minutes), SOAK_QPS (2),
#   SOAK_CASES (a space-separated subset of: ksock-crc-off ksock-crc-on dpdk-crc-off
#   dpdk-crc-on kill-ksock-client kill-ksock-server kill-dpdk-client kill-dpdk-server
#   crc-catch; all by default), SOAK_LOGS (a directory to keep every log in), SOAK_IMPAIR (impair's options),
#   SOAK_PCAP (not empty: each DPDK end captures its frames to SOAK_LOGS/CASE.ROLE.pcap),
#   SOAK_VALGRIND (1; 0: the killed-peer survivors run as they are, e.g. in a sanitizer
#   build, whose leak check then covers them), SOAK_RSS_KIB (VmRSS growth after warm-up
#   allowed, soak -r: 8192; -1 unchecked).
# Needs root (exit 77 without); the DPDK cases are skipped when EAL cannot start.
# Usage: soak.sh /path/to/soak /path/to/impair, from the source tree for instance
#   SOAK_MINUTES=30 SOAK_LOGS=soak-logs scripts/soak.sh build/tests/soak/soak build/tests/tcp/linux/impair
# (the meson test runs it as: meson test -C build soak)
set -u
TEST_NAME=soak
. "$(dirname "$0")/../tests/lib/common.sh"
. "$(dirname "$0")/../tests/dpdk/dpdk_lib.sh"
. "$(dirname "$0")/../tests/lib/impair.sh"
SOAK=${1:?usage: soak.sh /path/to/soak /path/to/impair}
IMPAIR=${2:?usage: soak.sh /path/to/soak /path/to/impair}
SECS=${SOAK_SECONDS:-$((${SOAK_MINUTES:-30} * 60))}
QPS=${SOAK_QPS:-2}
KILL_AFTER=${KILL_AFTER:-3}
RSS=${SOAK_RSS_KIB:-8192}
CASES=${SOAK_CASES:-ksock-crc-off ksock-crc-on dpdk-crc-off dpdk-crc-on kill-ksock-client \
kill-ksock-server kill-dpdk-client kill-dpdk-server crc-catch}
IMP_OPTS=${SOAK_IMPAIR:---dir both --loss 1 --reorder 2 --dup 1 --corrupt 0.5 --delay-ms 1}
A=198.51.100.1
B=198.51.100.2
PORT=7900
need_cmd ethtool ethtool
dpdk_tmpdir
LOGS=${SOAK_LOGS:-$DPDK_DIR}
mkdir -p "$LOGS" || fail "mkdir $LOGS"

CLI_PID=
kill_client() {
	if [ -n "$CLI_PID" ] && kill -0 "$CLI_PID" 2>/dev/null; then
		kill "$CLI_PID" 2>/dev/null
		wait "$CLI_PID" 2>/dev/null
	fi
	CLI_PID=
}
EXIT_HOOKS="kill_client $EXIT_HOOKS"
dpdk_netns soak
impair_link "$DPDK_NS_A" "$DPDK_NS_B" "$DPDK_NS_A-m"
KADDR=no

kernel_addrs() { # on|off: the kernel owns 198.51.100.1 / .2 on the veth ends, or nothing
	[ "$1" = "$KADDR" ] && return
	if [ "$1" = on ]; then
		ip -n "$DPDK_NS_A" addr add $A/24 dev veth-a || fail "address on veth-a"
		ip -n "$DPDK_NS_B" addr add $B/24 dev veth-b || fail "address on veth-b"
	elif [ "$KADDR" = on ]; then
		ip -n "$DPDK_NS_A" addr del $A/24 dev veth-a
		ip -n "$DPDK_NS_B" addr del $B/24 dev veth-b
	fi
	KADDR=$1
}

# in_end TRANSPORT ROLE CRC CMD...: replaces the (sub)shell with CMD in ROLE's namespace with
# its environment (the DPDK port on its veth end, MPA CRC on or off), so that a background
# end's PID is CMD's own: `ip netns exec` and env exec in turn
in_end() {
	if [ "$2" = server ]; then ns=$DPDK_NS_A ip=$A if=veth-a; else ns=$DPDK_NS_B ip=$B if=veth-b; fi
	mpa="-u SOFTRNIC_MPA"
	[ "$3" = on ] && mpa=SOFTRNIC_MPA=crc
	t=$1 r=$2
	shift 3
	if [ "$t" = dpdk ]; then
		[ -n "${SOAK_PCAP:-}" ] && mpa="$mpa SOFTRNIC_DPDK_PCAP=$LOGS/$CASE.$r.pcap"
		# shellcheck disable=SC2086
		exec ip netns exec "$ns" env $mpa SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_IP="$ip/24" \
			"$(dpdk_eal "$r" "net_af_packet0,iface=$if,qdisc_bypass=1")" "$@"
	fi
	# shellcheck disable=SC2086
	exec ip netns exec "$ns" env -u SOFTRNIC_TRANSPORT $mpa "$@"
}

# server_up TRANSPORT LOG: the server just started listens (or has died)
server_up() {
	if [ "$1" = dpdk ]; then
		dpdk_head_start 10
		dpdk_skip_if_no_eal "$2"
	else
		wait_listen "$PORT" "$DPDK_NS_A" 60 || { cat "$2" >&2; fail "server not listening"; }
	fi
}

impair_case() { # NAME: a fresh impair for one case, its own log
	CASE=$1
	# shellcheck disable=SC2086
	impair_start "$IMPAIR" "$LOGS/$1.impair" $((SECS + 600)) $IMP_OPTS --seed "$PORT"
}

# impair_count LOG WORD: the number after WORD in impair's last line
impair_count() {
	tail -n 1 "$1" | sed -n "s/.* $2 \([0-9]*\).*/\1/p"
}

impair_check() { # NAME
	impair_stop
	line=$(tail -n 1 "$LOGS/$1.impair")
	echo "$1: $line"
	for w in lost duplicated reordered corrupted; do
		[ "$(impair_count "$LOGS/$1.impair" $w)" -gt 0 ] 2>/dev/null ||
			fail "$1: impair $w nothing ($line)"
	done
	case "$IMP_OPTS" in *--delay-ms*)
		[ "$(impair_count "$LOGS/$1.impair" delayed)" -gt 0 ] 2>/dev/null ||
			fail "$1: impair delayed nothing ($line)";;
	esac
}

summary() { # LOG: the lines worth keeping of one end
	grep -E 'totals|verified|rss start|WRs posted|QP states|peer gone|: (OK|FAIL)' "$1" |
		sed 's/^/  /'
}

# soak_case NAME TRANSPORT CRC SRQ(-S or "")
soak_case() {
	if [ "$2" = ksock ]; then kernel_addrs on; else kernel_addrs off; fi
	impair_case "$1"
	# shellcheck disable=SC2086
	start_server in_end "$2" server "$3" timeout $((SECS + 180)) \
		"$SOAK" -s -a $A -p "$PORT" -q "$QPS" -t "$SECS" -r "$RSS" $4 >"$LOGS/$1.server" 2>&1
	server_up "$2" "$LOGS/$1.server"
	(in_end "$2" client "$3" timeout $((SECS + 180)) \
		"$SOAK" -c -a $A -p "$PORT" -q "$QPS" -t "$SECS" -r "$RSS" -x "$PORT" \
		>"$LOGS/$1.client" 2>&1)
	rc=$?
	wait_server_gone 60
	echo "$1 ($2, CRC $3${4:+, S-RQ}, $SECS s):"
	summary "$LOGS/$1.client"
	summary "$LOGS/$1.server"
	if [ "$rc" -ne 0 ] || [ "$SRV_RC" != 0 ]; then
		tail -n 20 "$LOGS/$1.client" "$LOGS/$1.server" >&2
		fail "$1: client status $rc, server status $SRV_RC"
	fi
	impair_check "$1"
	PORT=$((PORT + 1))
}

VG="valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect"

# kill_case NAME TRANSPORT VICTIM(client|server): the survivor (under valgrind on kernel
# sockets) must pass with -k; the victim is the program itself (ip netns exec and env exec)
kill_case() {
	if [ "$2" = ksock ]; then kernel_addrs on; else kernel_addrs off; fi
	impair_case "$1"
	vg=
	if [ "$2" = ksock ] && [ "${SOAK_VALGRIND:-1}" = 1 ]; then
		need_cmd valgrind valgrind
		vg=$VG
	fi
	if [ "$3" = client ]; then sk=-k ck=''; else sk='' ck=-k; fi
	# only the survivor is wrapped: the victim's PID must be the program's own
	sw='' cw=''
	if [ "$3" = client ]; then sw="timeout 300 $vg"; else cw="timeout 300 $vg"; fi
	# shellcheck disable=SC2086
	start_server in_end "$2" server off $sw \
		"$SOAK" -s -a $A -p "$PORT" -q "$QPS" -t 600 -i 1 $sk -r -1 >"$LOGS/$1.server" 2>&1
	server_up "$2" "$LOGS/$1.server"
	# shellcheck disable=SC2086
	(in_end "$2" client off $cw \
		"$SOAK" -c -a $A -p "$PORT" -q "$QPS" -t 600 -i 1 -x "$PORT" $ck -r -1 \
		>"$LOGS/$1.client" 2>&1) &
	CLI_PID=$!
	# traffic first: a progress line of the survivor's after the first second
	n=0
	until grep -Eq ' [1-9][0-9]* s:' "$LOGS/$1.$([ "$3" = client ] && echo server || echo client)"; do
		[ "$n" -lt 1200 ] || fail "$1: no traffic after 120 s"
		sleep 0.1
		n=$((n + 1))
	done
	sleep "$KILL_AFTER"
	if [ "$3" = client ]; then
		kill -9 "$CLI_PID"
		wait "$CLI_PID" 2>/dev/null
		CLI_PID=
		wait_server_gone 120
		rc=$SRV_RC
		surv=server
	else
		kill -9 "$SERVER_PID"
		wait "$SERVER_PID" 2>/dev/null
		SERVER_PID=
		wait "$CLI_PID"
		rc=$?
		CLI_PID=
		surv=client
	fi
	echo "$1 ($2, $3 killed after ${KILL_AFTER} s of traffic; $surv${vg:+ under valgrind}):"
	summary "$LOGS/$1.$surv"
	[ -n "$vg" ] && sed -n 's/^==[0-9]*== *//; /ERROR SUMMARY\|definitely lost\|indirectly lost/p' \
		"$LOGS/$1.$surv" | sed 's/^/  valgrind: /'
	[ "$rc" = 0 ] || { tail -n 40 "$LOGS/$1.$surv" >&2; fail "$1: the $surv exited $rc"; }
	grep -q 'peer gone (' "$LOGS/$1.$surv" || fail "$1: no report of the peer's going"
	impair_stop
	PORT=$((PORT + 1))
}

# crc_case NAME: MPA CRC on, over kernel sockets, with impair flipping bits and fixing the TCP
# checksum to match (nothing else): TCP passes the frames, so only the CRC stands between
# them and the data. The run must end, both ends must fail by the CRC's Terminate, and no
# byte may ever have been found wrong.
crc_case() {
	kernel_addrs on
	CASE=$1
	impair_start "$IMPAIR" "$LOGS/$1.impair" 300 --dir both --corrupt 1 --corrupt-csum fix \
		--seed "$PORT"
	start_server in_end ksock server on timeout 120 \
		"$SOAK" -s -a $A -p "$PORT" -q "$QPS" -t 30 -r -1 >"$LOGS/$1.server" 2>&1
	server_up ksock "$LOGS/$1.server"
	(in_end ksock client on timeout 120 \
		"$SOAK" -c -a $A -p "$PORT" -q "$QPS" -t 30 -r -1 -x "$PORT" >"$LOGS/$1.client" 2>&1)
	rc=$?
	wait_server_gone 30
	impair_stop
	echo "$1 (kernel sockets, CRC on, bits flipped under a valid TCP checksum):"
	grep -hE 'FAIL|async event|totals' "$LOGS/$1.client" "$LOGS/$1.server" | sed 's/^/  /'
	echo "$1: $(tail -n 1 "$LOGS/$1.impair")"
	[ "$(impair_count "$LOGS/$1.impair" corrupted)" -gt 0 ] 2>/dev/null ||
		fail "$1: impair corrupted nothing"
	if [ "$rc" = 0 ] || [ "$SRV_RC" = 0 ] || [ "$SRV_RC" = none ]; then
		fail "$1: client status $rc, server status $SRV_RC: the corruption went unnoticed"
	fi
	! grep -qE 'read back wrong|byte [0-9]+ is|header says|bytes, want' \
		"$LOGS/$1.client" "$LOGS/$1.server" || fail "$1: corrupted data reached the soak"
	PORT=$((PORT + 1))
}

for c in $CASES; do
	case $c in
	ksock-crc-off) soak_case "$c" ksock off -S ;;
	ksock-crc-on) soak_case "$c" ksock on "" ;;
	dpdk-crc-off) soak_case "$c" dpdk off "" ;;
	dpdk-crc-on) soak_case "$c" dpdk on -S ;;
	kill-ksock-client) kill_case "$c" ksock client ;;
	kill-ksock-server) kill_case "$c" ksock server ;;
	kill-dpdk-client) kill_case "$c" dpdk client ;;
	kill-dpdk-server) kill_case "$c" dpdk server ;;
	crc-catch) crc_case "$c" ;;
	*) fail "unknown case $c" ;;
	esac
done
echo "$TEST_NAME: OK ($CASES)"
