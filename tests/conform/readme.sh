#!/bin/sh
# The commands docs/conform.md shows (both halves), run as written from a directory whose
# build/ is this build tree, with build/apps/run (softrnic-run) and build/apps/conform on
# PATH; the servers get a timeout in front. tests/docs/commands.sh checks that every one of
# them stands here verbatim. They run in a network namespace of their own (root, or a user
# namespace), so the default ports 7471 / 7472 meet no other run. Fails unless every program
# exits 0 and the reports name every check.
# Usage: readme.sh BUILD_ROOT
set -u
TEST_NAME=conform_readme
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/common.sh"
BUILD_ROOT=$(cd "${1:?usage: readme.sh BUILD_ROOT}" && pwd) || fail "no build tree $1"

if [ -z "${CONFORM_README_NS:-}" ]; then
	for how in "unshare -n" "unshare -rn"; do
		if $how true 2>/dev/null; then
			CONFORM_README_NS=1 exec $how sh "$0" "$BUILD_ROOT"
		fi
	done
	skip "no network namespace of its own (unshare -n / -rn)"
fi
ip link set lo up || fail "cannot bring up lo in the test's namespace"
need_cmd python3
WORK=$(mktemp -d) || fail "mktemp"
ln -s "$BUILD_ROOT" "$WORK/build"
cleanup() { rm -rf "$WORK"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup"
cd "$WORK" || fail "cd $WORK"
export PATH=$PWD/build/apps/run:$PWD/build/apps/conform:$PATH

n=$(iwarp-conform --list | wc -l)
[ "$n" -gt 0 ] || fail "iwarp-conform --list lists nothing"
timeout 60 softrnic-run iwarp-conform --server 127.0.0.1 &
SERVER_PID=$!
softrnic-run iwarp-conform --client 127.0.0.1 --report-md conform.md --junit conform.xml ||
	fail "the client exited with status $?"
wait_server
cat conform.md
python3 "$HERE/junit_check.py" "$n" - conform.xml || fail "conform.xml is wrong"

# the wire half: the target runs until SIGTERM
w=$(iwarp-conform-wire --list | wc -l)
[ "$w" -gt 0 ] || fail "iwarp-conform-wire --list lists nothing"
timeout 60 softrnic-run iwarp-conform --wire-target 127.0.0.1 &
SERVER_PID=$!
iwarp-conform-wire --report-md wire.md --junit wire.xml 127.0.0.1 ||
	fail "iwarp-conform-wire exited with status $?"
kill -TERM "$SERVER_PID"
wait_server "the wire target did not end cleanly on SIGTERM"
python3 "$HERE/junit_check.py" "$w" - wire.xml || fail "wire.xml is wrong"
echo "$TEST_NAME: OK ($n checks, $w wire checks)"
