#!/bin/sh
# A peer host that vanishes without a word (power, cable; issue 27 item 7) on the kernel-socket
# transport: softrnic-rping between two namespaces over a veth pair, the link taken down in
# the client's namespace mid-run, so no RST or FIN ever arrives. Two pairs share the link and
# the cut: one with the streams' keepalive and user timeout at their default
# (SOFTRNIC_KEEPALIVE 5,1,5: 10 s), whose server must exit well before rping's own wait
# (-t 120); one with SOFTRNIC_KEEPALIVE=off, whose server must still be waiting when the
# first has ended.
# Usage: dead_host.sh /path/to/softrnic-rping
set -u
TEST_NAME=apps_dead_host
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/netns.sh"
RPING=${1:?usage: dead_host.sh /path/to/softrnic-rping}
PORT=7194
PORT_OFF=7195
T=$(mktemp -d)
CLI_PIDS= OFF_PID=
cleanup_host() {
	for p in $CLI_PIDS $OFF_PID; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
EXIT_HOOKS="cleanup_host $EXIT_HOOKS"
netns_setup sdead

# server KEEPALIVE PORT: an rping server in A (in the background; exec: its PID is
# timeout's, which passes a TERM on to rping, so the cleanup ends the server itself)
server() {
	exec timeout 200 ip netns exec "$NETNS_A" env SOFTRNIC_KEEPALIVE="$1" \
		"$RPING" -s -a "$NETNS_ADDR_A" -p "$2" -t 120 >"$T/server-$1.out" 2>&1
}
# client KEEPALIVE PORT: its client in B (in the background)
client() {
	timeout 200 ip netns exec "$NETNS_B" env SOFTRNIC_KEEPALIVE="$1" "$RPING" -c \
		-a "$NETNS_ADDR_A" -p "$2" -t 120 -q >"$T/client-$1.out" 2>&1 &
	CLI_PIDS="$CLI_PIDS $!"
}

start_server server 5,1,5 "$PORT"
wait_listen "$PORT" "$NETNS_A" || fail "server is not listening in $NETNS_A"
server off "$PORT_OFF" &
OFF_PID=$!
wait_listen "$PORT_OFF" "$NETNS_A" || fail "the keepalive-off server is not listening"
client 5,1,5 "$PORT"
client off "$PORT_OFF"
sleep 2
kill -0 "$SERVER_PID" 2>/dev/null || { cat "$T/server-5,1,5.out"; fail "server ended early"; }
off_alive() { # what must not have happened yet
	kill -0 "$OFF_PID" 2>/dev/null || { cat "$T/server-off.out"; fail "$1"; }
}
off_alive "keepalive-off server ended early"
ip -n "$NETNS_B" link set veth-b down || fail "veth-b down"
wait_server_gone 25
cat "$T/server-5,1,5.out"
[ "$GONE" != none ] || fail "the server was still waiting 25 s after its peer vanished"
# nothing but the keepalive (5 s idle, then probes) can have ended it
[ "$GONE" -ge 4 ] || fail "the server ended ${GONE} s after the cut: not by the keepalive"
# (rping's server fails the run when a ping was in flight at the cut, else ends it as after a
# client's disconnect: status 1 or 0)
echo "$TEST_NAME: keepalive 5,1,5: the server ended ${GONE} s after the cut (status $SRV_RC)"
# the keepalive-off server: a second past the end of the other, still waiting
sleep 1
off_alive "with SOFTRNIC_KEEPALIVE=off the server ended"
echo "$TEST_NAME: OK (keepalive ends a vanished peer's stream; with it off the server waits)"
