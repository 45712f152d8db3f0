#!/bin/sh
# The VIPL commands README.md shows (section "VIA ping-pong"), run as written: every line of
# that section's sh blocks that starts with "vipl-", in order, lines ending in "&" in the
# background, with PATH leading to this build's programs (the README's own "export PATH" line
# names the tree's default build directory; this build may be another). They run in a network
# namespace of their own (root, or a user namespace), so the README's fixed port 7447 and the
# host's default address meet no other run, and with a registry directory of their own.
# Fails unless every program exits 0 and every client printed its result line.
# Usage: readme_lo.sh README.md vipl-pingpong
set -u
TEST_NAME=vipl_readme_lo
. "$(dirname "$0")/../lib/common.sh"
README=${1:?usage: readme_lo.sh README.md vipl-pingpong}
PINGPONG=${2:?missing vipl-pingpong}

if [ -z "${VIPL_README_NS:-}" ]; then
	for how in "unshare -n" "unshare -rn"; do
		if $how true 2>/dev/null; then
			VIPL_README_NS=1 exec $how sh "$0" "$README" "$PINGPONG"
		fi
	done
	skip "no network namespace of its own (unshare -n / -rn)"
fi

ip link set lo up || fail "cannot bring up lo in the test's namespace"
RUNDIR=$(mktemp -d) || fail "mktemp"
export SOFTRNIC_VIPL_RUNDIR="$RUNDIR"
PATH=$(cd "$(dirname "$PINGPONG")" && pwd):$PATH
export PATH
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	rm -rf "$RUNDIR"
}
EXIT_HOOKS="cleanup"

LINES=$(awk '/^## VIA ping-pong/ { on = 1; next } /^## / { on = 0 }
	on && /^```/ { block = !block; next } on && block && /^vipl-/' "$README")
[ -n "$LINES" ] || fail "no vipl- command in README.md's section \"VIA ping-pong\""
clients=0
OUT="$RUNDIR/client.out"
while IFS= read -r line; do
	echo "\$ $line"
	case "$line" in
	*"&")
		eval "timeout 60 $line"
		PIDS="$PIDS $!"
		;;
	*)
		eval "timeout 60 $line" >"$OUT" || fail "'$line' exited with status $?"
		cat "$OUT"
		grep -Eq '^ [0-9]+ +[0-9]+ +[0-9.]+' "$OUT" || fail "'$line' printed no result"
		clients=$((clients + 1))
		;;
	esac
done <<LINES_END
$LINES
LINES_END
for p in $PIDS; do
	wait "$p" || fail "a server of the README exited with status $?"
done
PIDS=
echo "$TEST_NAME: OK ($clients clients)"
