#!/bin/sh
# The VIPL commands README.md shows (section "VIA ping-pong"), run as written, in order, from a
# directory whose build/ is this build tree (the README's "export PATH" line names build/;
# this build may be another directory). tests/docs/commands.sh checks that every one of them
# stands here verbatim; the servers get a timeout in front. They run in a network namespace
# of their own (root, or a user namespace), so the README's fixed port 7447 and the host's
# default address meet no other run, and with a registry directory of their own.
# Fails unless every program exits 0 and every client printed its result line.
# Usage: readme_lo.sh vipl-pingpong
set -u
TEST_NAME=vipl_readme_lo
. "$(dirname "$0")/../lib/common.sh"
PINGPONG=${1:?usage: readme_lo.sh vipl-pingpong}

if [ -z "${VIPL_README_NS:-}" ]; then
	for how in "unshare -n" "unshare -rn"; do
		if $how true 2>/dev/null; then
			VIPL_README_NS=1 exec $how sh "$0" "$PINGPONG"
		fi
	done
	skip "no network namespace of its own (unshare -n / -rn)"
fi

ip link set lo up || fail "cannot bring up lo in the test's namespace"
BUILD_ROOT=$(cd "$(dirname "$PINGPONG")/../.." && pwd)
WORK=$(mktemp -d) || fail "mktemp"
ln -s "$BUILD_ROOT" "$WORK/build"
export SOFTRNIC_VIPL_RUNDIR="$WORK/registry"
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	rm -rf "$WORK"
}
EXIT_HOOKS="cleanup"

# client CMD...: runs a client line, shows its output, fails without a result line
client() {
	out=$("$@") || fail "'$*' exited with status $?"
	echo "$out"
	echo "$out" | grep -Eq '^ [0-9]+ +[0-9]+ +[0-9.]+' || fail "'$*' printed no result"
}

servers_done() {
	for p in $PIDS; do
		wait "$p" || fail "a server of the README exited with status $?"
	done
	PIDS=
}

cd "$WORK" || fail "cd $WORK"
export PATH=$PWD/build/apps/vipl:$PATH
timeout 60 vipl-pingpong -s &
PIDS="$PIDS $!"
client vipl-pingpong -c 127.0.0.1:7447 -n 10000 -v
servers_done

timeout 60 vipl-pingpong -s -d rank0 &
PIDS="$PIDS $!"
timeout 60 vipl-pingpong -s -d rank1 &
PIDS="$PIDS $!"
client vipl-pingpong -c "$(hostname)" -d rank1 -n 1000 -v
client vipl-pingpong -c "$(hostname)" -d rank0 -n 1000 -r rr -v
servers_done
echo "$TEST_NAME: OK"
