#!/bin/sh
# softrnic-conform across two network namespaces joined by a veth pair:
#   ns A: veth-a 198.51.100.1/24 runs the server, ns B: veth-b 198.51.100.2/24 the client.
# Both namespaces and both veth ends are created here (`ip netns add`, `ip -n`); nothing is
# added to or changed in the main namespace. Removed on every exit (trap EXIT); every
# program is bounded by `timeout`. Needs root / CAP_SYS_ADMIN (CI has it): without the
# permission the test FAILS with a clear message; it never skips.
# Usage: conform_netns.sh /path/to/softrnic-conform
set -u
PROG=${1:?usage: conform_netns.sh /path/to/softrnic-conform}
T=${CONFORM_TIMEOUT:-240}
PORT=7471
fail() { echo "conform_netns: FAIL: $*" >&2; exit 1; }
ID=$$-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
NSA=
NSB=
SPID=
cleanup() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	[ -n "$NSA" ] && ip netns del "$NSA" 2>/dev/null
	[ -n "$NSB" ] && ip netns del "$NSB" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
command -v ip >/dev/null 2>&1 || fail "the 'ip' command (iproute2) is not installed"
command -v timeout >/dev/null 2>&1 || fail "the 'timeout' command (coreutils) is not installed"
if ! err=$(ip netns add "cfa-$ID" 2>&1); then
	fail "cannot create a network namespace (ip netns add: $err); this test needs root / CAP_SYS_ADMIN"
fi
NSA=cfa-$ID
ip netns add "cfb-$ID" || fail "ip netns add cfb-$ID"
NSB=cfb-$ID
ip -n "$NSA" link add veth-a type veth peer name veth-b netns "$NSB" || fail "veth pair"
ip -n "$NSA" addr add 198.51.100.1/24 dev veth-a || fail "address in $NSA"
ip -n "$NSB" addr add 198.51.100.2/24 dev veth-b || fail "address in $NSB"
for ns in "$NSA" "$NSB"; do ip -n "$ns" link set lo up || fail "lo up in $ns"; done
ip -n "$NSA" link set veth-a up || fail "veth-a up"
ip -n "$NSB" link set veth-b up || fail "veth-b up"

timeout "$T" ip netns exec "$NSA" "$PROG" server 198.51.100.1 "$PORT" &
SPID=$!
i=0
until [ -n "$(ip netns exec "$NSA" ss -Hltn "sport = :$PORT" 2>/dev/null)" ]; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "server is not listening in $NSA"
	sleep 0.1
done
timeout "$T" ip netns exec "$NSB" "$PROG" client 198.51.100.1 "$PORT"
crc=$?
wait "$SPID"
src=$?
SPID=
[ "$crc" -eq 0 ] || fail "client exited with status $crc"
[ "$src" -eq 0 ] || fail "server exited with status $src"
echo "conform_netns: OK"
