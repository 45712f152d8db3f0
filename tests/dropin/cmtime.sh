#!/bin/sh
# Debian's cmtime (rdmacm-utils), the rdma_cm connection-setup timer: one server (bound to
# side A's address) and two clients in turn, each making CONNS connections at once (default
# 100) and tearing them down: the first lets rdma_resolve_addr pick its source, the second
# binds every id to side B's address first (-b). cmtime's exit status says nothing about
# its connections (it returns the last rdma_connect's), so what it prints is checked: each
# step of its table is there and none of its own failure lines (cmtime.c: "event: ...,
# error", "RDMA_CM_EVENT_ADDR_ERROR", perror's "failure ...", "failing connection request").
# The server never ends by itself (it serves until killed): it must still be running, and
# have printed no failure, after both clients.
# Usage: cmtime.sh LIBIBVERBS_DIR LIBRDMACM_DIR loopback|netns|memif|afpacket [CONNS]
set -u
TEST_NAME=dropin_cmtime
. "$(dirname "$0")/link_common.sh"
need_debian cmtime rdmacm-utils
uses_ours cmtime
CONNS=${1:-100}
SOUT=$LINK_DIR/server.out
link_port 7881
# cmtime's own failure lines, from the start of the line (DPDK's PMDs print notices of theirs)
FAILED='^(event: |RDMA_CM_EVENT_|failure|failing|failed|out of memory|getrdmaaddr error|getaddrinfo error|bind address failed|listen request failed)'

# The server died: how (an exit status above 128 is a signal; its printf lines are lost with
# it when stdout is a file, so the status is all there is to say).
server_ended() {
	wait "$SERVER_PID"
	st=$?
	cat "$SOUT"
	if [ "$st" -gt 128 ]; then
		fail "cmtime server ended during the client run ($1) by signal $((st - 128))"
	fi
	fail "cmtime server ended during the client run ($1) with exit status $st"
}

dd_start_server "$SOUT" cmtime -b "$A" -p "$PORT"
for bind in "" "-b $B"; do
	# shellcheck disable=SC2086 # $bind is empty or two words
	dd_client cmtime -s "$A" $bind -p "$PORT" -c "$CONNS"
	out=$(cat "$LINK_DIR/client.out" "$LINK_DIR/client.err")
	printf '%s\n' "$out"
	[ "$rc" -eq 0 ] || { cat "$SOUT"; fail "cmtime client ($bind) exited with status $rc"; }
	for step in 'create id' 'resolve addr' 'resolve route' 'create qp' 'connect' \
		'disconnect' 'destroy'; do
		printf '%s\n' "$out" | grep -q "^$step *:" ||
			fail "cmtime client ($bind): no '$step' row in its table"
	done
	if [ -n "$bind" ]; then
		printf '%s\n' "$out" | grep -q '^bind addr *:' || fail "cmtime -b: no 'bind addr' row"
	fi
	printf '%s\n' "$out" | grep -Eq "$FAILED" &&
		fail "cmtime client ($bind) reported a failed connection"
	kill -0 "$SERVER_PID" 2>/dev/null || server_ended "${bind:-no -b}"
done
grep -Eq "$FAILED" "$SOUT" && { cat "$SOUT"; fail "cmtime server reported a failure"; }
echo "$TEST_NAME: OK (2 x $CONNS connections set up and torn down)"
