# A lossy link between two namespaces through tests/tcp/linux/impair (POSIX sh; sourced
# after tests/lib/common.sh, except by tests/interop/lib.sh, which uses only impair_spawn,
# impair_stop and offloads_try: they need nothing of common.sh):
#   impair_link NS_A NS_B NS_M
#     replaces the veth pair veth-a (in NS_A) / veth-b (in NS_B) with
#     NS_A -- veth-a | veth-ma [NS_M] veth-mb | veth-b -- NS_B: creates NS_M, every
#     end up with offloads off, the middle ends promiscuous.
#   offloads_off NS IF
#     tx checksum, TSO, GSO and GRO off on IF in NS (also for a direct pair); offloads_try
#     does the same and returns the status instead of failing the test.
#   impair_spawn IMPAIR NS IF_A IF_B LOG SECONDS ARGS...
#     runs IMPAIR between IF_A and IF_B in NS, output to LOG, for at most SECONDS; sets
#     IMP_PID; returns 0 once it says "ready", 1 if it has not within 5 s.
#   impair_start IMPAIR LOG SECONDS ARGS...
#     impair_spawn between veth-ma and veth-mb in IMP_NS (set by impair_link); fails the
#     test if impair does not start.
#   impair_stop
#     ends impair (its last line in LOG is the frame count: in, out, lost, ...).
# On every exit impair is stopped and NS_M deleted.
IMP_NS=
IMP_PID=
impair_stop() {
	if [ -n "$IMP_PID" ]; then
		kill "$IMP_PID" 2>/dev/null
		wait "$IMP_PID" 2>/dev/null
	fi
	IMP_PID=
}
impair_cleanup() {
	impair_stop
	[ -n "$IMP_NS" ] && ip netns del "$IMP_NS" 2>/dev/null
	IMP_NS=
}
EXIT_HOOKS="${EXIT_HOOKS-} impair_cleanup"

# Measured (docs/testing.md): with veth's tx checksum offload the kernel's segments reach the
# packet socket CHECKSUM_PARTIAL - the TCP checksum field holds only the pseudo-header sum -
# and DPDK 22.11's af_packet PMD ignores TP_STATUS_CSUMNOTREADY, so the engine sees (and
# rightly drops) bad checksums. TSO/GSO would hand it 64 KiB super-frames and GRO could merge
# frames before the socket sees them. rx checksumming does not matter: the kernel verified
# the checksums of frames we inject either way (a bad one is dropped).
offloads_try() {
	ip netns exec "$1" ethtool -K "$2" tx off tso off gso off gro off >/dev/null 2>&1
}
offloads_off() {
	offloads_try "$1" "$2" || fail "ethtool -K $2 in $1"
}

impair_link() {
	ip -n "$1" link del veth-a || fail "veth-a del"
	ip netns add "$3" || fail "ip netns add $3"
	IMP_NS=$3
	ip -n "$1" link add veth-a type veth peer name veth-ma netns "$3" || fail "veth a/ma"
	ip -n "$2" link add veth-b type veth peer name veth-mb netns "$3" || fail "veth b/mb"
	ip -n "$3" link set lo up
	ip netns exec "$3" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$3" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	for l in "$1 veth-a" "$2 veth-b" "$3 veth-ma" "$3 veth-mb"; do
		set -- $l
		ip -n "$1" link set "$2" up || fail "$2 up"
		offloads_off "$1" "$2"
	done
	ip -n "$IMP_NS" link set veth-ma promisc on
	ip -n "$IMP_NS" link set veth-mb promisc on
}

impair_spawn() {
	# prefixed: POSIX sh has no locals and the callers have an $imp of their own
	_imp_bin=$1
	_imp_ns=$2
	_imp_a=$3
	_imp_b=$4
	_imp_log=$5
	_imp_secs=$6
	shift 6
	# emptied first: a log an earlier impair left must not pass for this one's "ready"
	: >"$_imp_log"
	# `ip netns exec` execs impair, so $! is impair itself
	ip netns exec "$_imp_ns" "$_imp_bin" "$_imp_a" "$_imp_b" "$@" --seconds "$_imp_secs" \
		>"$_imp_log" 2>&1 &
	IMP_PID=$!
	_imp_i=0
	until grep -q ready "$_imp_log" 2>/dev/null; do
		[ "$_imp_i" -lt 50 ] || return 1
		sleep 0.1
		_imp_i=$((_imp_i + 1))
	done
}

impair_start() {
	_imp_log=$2
	_imp_bin=$1
	_imp_secs=$3
	shift 3
	impair_spawn "$_imp_bin" "$IMP_NS" veth-ma veth-mb "$_imp_log" "$_imp_secs" "$@" ||
		fail "impair did not start: $(cat "$_imp_log")"
}
