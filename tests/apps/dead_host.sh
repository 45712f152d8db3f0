#!/bin/sh
# A peer host that vanishes without a word (power, cable; issue 27 item 7) on the kernel-socket
# transport: softrnic-rping between two namespaces over a veth pair, the link taken down in
# the client's namespace mid-run, so no RST or FIN ever arrives. The streams' keepalive and
# user timeout (SOFTRNIC_KEEPALIVE, default 5,1,5: 10 s) must end the server's connection and
# the server exit well before rping's own wait (-t 120). Then the same with
# SOFTRNIC_KEEPALIVE=off, where the server must still be waiting when the first run was done.
# Usage: dead_host.sh /path/to/softrnic-rping
set -u
TEST_NAME=apps_dead_host
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/netns.sh"
RPING=${1:?usage: dead_host.sh /path/to/softrnic-rping}
PORT=7194
T=$(mktemp -d)
CLI_PID=
cleanup_host() {
	[ -n "$CLI_PID" ] && kill "$CLI_PID" 2>/dev/null && wait "$CLI_PID" 2>/dev/null
	rm -rf "$T"
}
EXIT_HOOKS="cleanup_host $EXIT_HOOKS"
netns_setup sdead

# run KEEPALIVE BOUND: ping for two seconds, cut the link; sets GONE (seconds from the cut to
# the server's exit, or "none" after BOUND s) and SRV_RC
run() {
	ip -n "$NETNS_B" link set veth-b up || fail "veth-b up"
	start_server timeout 200 ip netns exec "$NETNS_A" env SOFTRNIC_KEEPALIVE="$1" \
		"$RPING" -s -a "$NETNS_ADDR_A" -p "$PORT" -t 120 >"$T/server.out" 2>&1
	wait_listen "$PORT" "$NETNS_A" || fail "server is not listening in $NETNS_A"
	timeout 200 ip netns exec "$NETNS_B" env SOFTRNIC_KEEPALIVE="$1" "$RPING" -c \
		-a "$NETNS_ADDR_A" -p "$PORT" -t 120 -q >"$T/client.out" 2>&1 &
	CLI_PID=$!
	sleep 2
	kill -0 "$SERVER_PID" 2>/dev/null || { cat "$T/server.out"; fail "server ended early"; }
	ip -n "$NETNS_B" link set veth-b down || fail "veth-b down"
	wait_server_gone "$2"
	kill "$CLI_PID" 2>/dev/null
	wait "$CLI_PID" 2>/dev/null
	CLI_PID=
	PORT=$((PORT + 1))
}

run 5,1,5 25
cat "$T/server.out"
[ "$GONE" != none ] || fail "the server was still waiting 25 s after its peer vanished"
# (rping's server fails the run when a ping was in flight at the cut, else ends it as after a
# client's disconnect: status 1 or 0)
echo "$TEST_NAME: keepalive 5,1,5: the server ended ${GONE} s after the cut (status $SRV_RC)"

run off 14
[ "$GONE" = none ] || fail "with SOFTRNIC_KEEPALIVE=off the server ended ${GONE} s after the cut"
kill_server
echo "$TEST_NAME: OK (keepalive ends a vanished peer's stream; with it off the server waits)"
