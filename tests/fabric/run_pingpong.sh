#!/bin/sh
# The fi_pingpong pair docs/install.md shows, run as written through the build tree's
# softrnic-run (put first on PATH): libfabric's verbs provider, msg endpoint, every size, data
# checked (-c), on 127.0.0.1 in a network namespace of this test's own (root), where the veth
# pair of tests/lib/netns.sh gives the provider an interface address (it finds no device with
# loopback alone). softrnic-run alone puts the drop-in libraries in: nothing else sets
# LD_LIBRARY_PATH, and the verbs provider must list softrnic0.
# Usage: run_pingpong.sh BUILD_DIR
set -u
TEST_NAME=softrnic_run_fi_pingpong
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/netns.sh"
BUILD=$(cd "${1:?usage: run_pingpong.sh BUILD_DIR}" && pwd)
command -v fi_pingpong >/dev/null 2>&1 ||
	skip "'fi_pingpong' is not installed (apt-get install libfabric-bin)"
PATH=$BUILD/apps/run:$PATH
export PATH
[ "$(command -v softrnic-run)" = "$BUILD/apps/run/softrnic-run" ] || fail "softrnic-run not first on PATH"
unset LD_LIBRARY_PATH
# a sanitizer build's drop-in needs its runtime in Debian's programs (as tests/dropin/dropin.sh)
asan=$(ldd "$BUILD/verbs/libibverbs.so.1" | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
	LD_PRELOAD=$asan ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	export LD_PRELOAD ASAN_OPTIONS
fi
netns_setup frun
W=$(mktemp -d)
cleanup_w() { rm -rf "$W"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_w"

out=$( (in_ns "$NETNS_A" timeout "$PROG_TIMEOUT" softrnic-run fi_info -p verbs) 2>&1) ||
	fail "softrnic-run fi_info -p verbs failed: $out"
echo "$out" | grep -q 'domain: softrnic0' || fail "the verbs provider does not list softrnic0: $out"

# the server (the docs' first line), then the client once it listens: the namespace is the
# test's own, so any listening socket is the server's
start_server in_ns "$NETNS_A" timeout "$PROG_TIMEOUT" softrnic-run fi_pingpong -p verbs -e msg -c \
	>"$W/server" 2>&1
i=0
until [ -n "$(ip netns exec "$NETNS_A" ss -Hltn 2>/dev/null)" ]; do
	i=$((i + 1))
	if [ "$i" -ge 100 ] || ! kill -0 "$SERVER_PID" 2>/dev/null; then
		cat "$W/server"
		fail "the fi_pingpong server is not listening"
	fi
	sleep 0.1
done
(in_ns "$NETNS_A" timeout "$PROG_TIMEOUT" softrnic-run fi_pingpong -p verbs -e msg -c 127.0.0.1) \
	>"$W/client" 2>&1 || { cat "$W/client" "$W/server"; fail "the fi_pingpong client failed"; }
wait_server "fi_pingpong server: $(cat "$W/server")"
cat "$W/client"
# fi_pingpong's sizes with -c (64 B, 256 B, 1 KiB, 4 KiB, 64 KiB, 1 MiB), each "SIZE 10 =10 ...":
# its 10 messages sent and acknowledged, on both sides
for f in "$W/client" "$W/server"; do
	for size in 64 256 1k 4k 64k 1m; do
		grep -qE "^$size +10 +=10 " "$f" || { cat "$f"; fail "size $size did not complete"; }
	done
done
if grep -hiE 'error|mismatch|fail' "$W/client" "$W/server"; then
	fail "an error or a data mismatch was reported (above)"
fi
echo "$TEST_NAME: OK (64 B - 1 MiB, data checked)"
