# Shared helpers of the tests/apps scripts (sourced; POSIX sh).
PROG_TIMEOUT=${PROG_TIMEOUT:-40}

fail() {
	echo "$TEST_NAME: FAIL: $*" >&2
	exit 1
}

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

# wait_listen PORT [NETNS]: until a TCP socket listens on PORT (at most 10 s).
wait_listen() {
	i=0
	while [ "$i" -lt 100 ]; do
		if [ -n "${2:-}" ]; then
			out=$(ip netns exec "$2" ss -Hltn "sport = :$1" 2>/dev/null)
		else
			out=$(ss -Hltn "sport = :$1" 2>/dev/null)
		fi
		[ -n "$out" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# Background server bookkeeping: killed on exit if still running.
SERVER_PID=
kill_server() {
	if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
	SERVER_PID=
}

# wait_server: waits for the background server; fails unless it exited 0.
wait_server() {
	wait "$SERVER_PID"
	rc=$?
	SERVER_PID=
	[ "$rc" -eq 0 ] || fail "server exited with status $rc ($*)"
}
