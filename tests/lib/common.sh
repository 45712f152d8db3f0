# Shared helpers of the test scripts (sourced; POSIX sh). Set TEST_NAME first: it prefixes
# every FAIL message. Sourcing installs the exit traps: on any exit the hooks in EXIT_HOOKS run
# (the background server is killed; tests/lib/netns.sh adds the namespace cleanup), and
# INT/TERM/HUP end the script with status 1 after the same cleanup.
PROG_TIMEOUT=${PROG_TIMEOUT:-40}

fail() {
	echo "${TEST_NAME:-test}: FAIL: $*" >&2
	exit 1
}

# skip REASON...: the test cannot run here: says why (prefixed with TEST_NAME when it is set)
# and exits with status 77, which meson and scripts/test.sh count as skipped.
skip() {
	echo "${TEST_NAME:+$TEST_NAME: }SKIP: $*"
	exit 77
}

# need_cmd CMD [PACKAGE]: fails with a clear message when CMD is not installed.
need_cmd() {
	command -v "$1" >/dev/null 2>&1 || fail "the '$1' command${2:+ ($2)} is not installed"
}

# have_dpdk_pmd NAME: DPDK's NAME poll-mode driver (librte_net_NAME, e.g. memif, af_packet)
# is installed, from the distribution or under /usr/local.
have_dpdk_pmd() {
	ls /usr/lib/*/dpdk/pmds-*/librte_net_"$1".so* >/dev/null 2>&1 ||
		ls /usr/local/lib*/dpdk/pmds-*/librte_net_"$1".so* >/dev/null 2>&1
}

EXIT_HOOKS=kill_server
run_exit_hooks() {
	for hook in $EXIT_HOOKS; do
		"$hook"
	done
}
trap run_exit_hooks EXIT
trap 'exit 1' INT TERM HUP

# pick_port: sets PORT to a TCP port below the ephemeral range that no socket uses now,
# derived from this shell's PID and a call counter, so that concurrent runs of the tests
# (other build trees) and successive servers of one script do not meet.
PORT_SEQ=0
pick_port() {
	PORT=$((10000 + ($$ * 13 + PORT_SEQ * 101) % 22000))
	PORT_SEQ=$((PORT_SEQ + 1))
	n=0
	while [ -n "$(ss -Hatn "( sport = :$PORT or dport = :$PORT )" 2>/dev/null)" ] &&
		[ "$n" -lt 500 ]; do
		PORT=$((PORT + 1))
		n=$((n + 1))
	done
}

# wait_listen PORT [NETNS [SECONDS]]: until a TCP socket listens on PORT (at most SECONDS,
# default 10), in network namespace NETNS when it is given and not empty; gives up early
# when the background server (SERVER_PID) has exited.
wait_listen() {
	i=0
	while [ "$i" -lt $((${3:-10} * 10)) ]; do
		if [ -n "${2:-}" ]; then
			out=$(ip netns exec "$2" ss -Hltn "sport = :$1" 2>/dev/null)
		else
			out=$(ss -Hltn "sport = :$1" 2>/dev/null)
		fi
		[ -n "$out" ] && return 0
		# A background server that has already exited will not listen.
		if [ -n "${SERVER_PID:-}" ] && ! kill -0 "$SERVER_PID" 2>/dev/null; then
			return 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# Background server bookkeeping: start_server CMD... runs CMD in the background and records
# its PID in SERVER_PID; the server is killed on exit if still running.
SERVER_PID=
start_server() {
	"$@" &
	SERVER_PID=$!
}

# running PID: the process exists and has not exited (an exited child stays a zombie until
# waited for, and kill -0 still finds it). Read from /proc by the shell itself: under the
# sanitizer build's LD_PRELOAD of libasan, ps hung in a futex at exit.
running() {
	local st
	[ -r "/proc/$1/stat" ] || return 1
	{ IFS= read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
	st=${st##*) }
	[ "${st%% *}" != Z ]
}

# TERM, then after 5 s KILL, to the server and to the process group a `timeout` in front of
# it made (timeout passes TERM on and waits for ever: a sanitizer's exit that hangs in its
# leak check ignores TERM, and its process would outlive the test, spinning on a core)
kill_server() {
	if [ -n "$SERVER_PID" ] && running "$SERVER_PID"; then
		kill "$SERVER_PID" 2>/dev/null
		for _ in $(seq 50); do
			running "$SERVER_PID" || break
			sleep 0.1
		done
		if running "$SERVER_PID"; then
			kill -s KILL -- "-$SERVER_PID" 2>/dev/null
			kill -KILL "$SERVER_PID" 2>/dev/null
		fi
		wait "$SERVER_PID" 2>/dev/null
	fi
	SERVER_PID=
}

# in_ns NS CMD...: replaces the (sub)shell with CMD in network namespace NS, or here when NS
# is empty, so that a background program's PID is the program's own chain (start_server
# in_ns ..., or (in_ns ...) &)
in_ns() {
	ns=$1
	shift
	if [ -n "$ns" ]; then exec ip netns exec "$ns" "$@"; else exec "$@"; fi
}

# wait_server [WHAT...]: waits for the background server; fails unless it exited 0.
wait_server() {
	wait "$SERVER_PID"
	rc=$?
	SERVER_PID=
	[ "$rc" -eq 0 ] || fail "server exited with status $rc${*:+ ($*)}"
}

# wait_server_gone SECONDS: whether the background server ends within SECONDS; sets GONE
# (whole seconds it took, or "none" when it is still running) and SRV_RC (its status, or
# "none"); an ended server is reaped
wait_server_gone() {
	GONE=none
	SRV_RC=none
	wg_i=0
	while [ "$wg_i" -lt $(($1 * 10)) ]; do
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then
			GONE=$((wg_i / 10))
			wait "$SERVER_PID"
			SRV_RC=$?
			SERVER_PID=
			return 0
		fi
		sleep 0.1
		wg_i=$((wg_i + 1))
	done
}
