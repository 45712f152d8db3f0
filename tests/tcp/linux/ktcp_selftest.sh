#!/bin/sh
# ktcp_peer against itself over loopback: the session logic softrnic-tcp shares with it
# (pattern, verdict, pingpong, many connections, RST / FIN mid-transfer, refused connect, a
# corrupted stream caught). No root, no DPDK. Usage: ktcp_selftest.sh PATH/TO/ktcp_peer
TEST_NAME=ktcp_selftest
. "$(dirname "$0")/../../lib/common.sh"
K=$1
[ -x "$K" ] || fail "usage: $0 ktcp_peer"
need_cmd timeout coreutils

OUT=$(mktemp -d)
cleanup_out() { rm -rf "$OUT"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_out"

# pair NAME 'SERVER ARGS' 'CLIENT ARGS': server listens on a fresh port, client connects;
# both must exit 0 within 30 s.
pair() {
	name=$1
	pick_port
	start_server timeout 30 "$K" listen "$PORT" $2
	wait_listen "$PORT" "" 10 || fail "$name: server did not listen"
	timeout 30 "$K" connect "127.0.0.1:$PORT" $3 >"$OUT/$name.client" 2>&1
	crc=$?
	wait "$SERVER_PID"
	src=$?
	SERVER_PID=
	[ "$crc" -eq 0 ] || { cat "$OUT/$name.client" >&2; fail "$name: client exit $crc"; }
	[ "$src" -eq 0 ] || fail "$name: server exit $src"
	grep '^result:\|^latency:' "$OUT/$name.client"
}

pair bulk-up '--sink' '--source 64M'
pair bulk-down '--source 64M' '--sink'
pair pingpong '--echo' '--pingpong 2000 --size 64'
pair conns '--sink --conns 300' '--source 64K --conns 300'
pair rst-src '--sink --expect reset' '--source 64M --rst-after 1M'
pair fin-src '--sink --expect eof' '--source 64M --fin-after 1M'
pair rst-sink '--sink --rst-after 1M' '--source 64M --expect reset'

# A closed port: refused, fast.
pick_port
timeout 5 "$K" connect "127.0.0.1:$PORT" --sink --expect refused --timeout 3 >/dev/null ||
	fail "refused: connect to a closed port did not report refused"

# A wrong octet must be caught: a raw client sends a valid header and corrupt payload.
need_cmd python3
pick_port
start_server timeout 20 "$K" listen "$PORT" --sink --expect verify
wait_listen "$PORT" "" 10 || fail "verify: server did not listen"
python3 - "$PORT" <<'EOF' || fail "verify: python client"
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
# The sink aborts as soon as it sees the first wrong octet: errors from here on are expected.
try:
    s.sendall(b"STCP" + struct.pack(">IQ", 0, 4096) + bytes(4096))
    s.shutdown(socket.SHUT_WR)
    s.recv(16)
except OSError:
    pass
EOF
wait_server "corrupt payload not reported as verify"

# Usage errors: status 64.
"$K" listen 0 --sink 2>/dev/null
[ $? -eq 64 ] || fail "port 0 accepted"
"$K" connect 127.0.0.1:1 --sink --echo 2>/dev/null
[ $? -eq 64 ] || fail "two actions accepted"
echo "ktcp_selftest: all cases passed"
