#!/bin/sh
# softrnic-rping server and client as two processes on loopback, each under valgrind memcheck:
# passes only if both exit 0, i.e. both complete their pings and valgrind finds no error (no
# invalid access, no use of uninitialised memory, no definite or indirect leak: valgrind exits
# 99 on any). One event-driven run and one busy-poll (-P) run, 5 verified pings each.
# Usage: rping_valgrind.sh /path/to/softrnic-rping
#   VG_TIMEOUT=SEC  limit for each valgrind process (default 240; valgrind is slow)
set -u
TEST_NAME=apps_rping_valgrind
. "$(dirname "$0")/../lib/common.sh"
RPING=${1:?usage: rping_valgrind.sh /path/to/softrnic-rping}
VG_TIMEOUT=${VG_TIMEOUT:-240}
need_cmd valgrind valgrind
need_cmd timeout coreutils
LOGS=$(mktemp -d) || fail "mktemp"
EXIT_HOOKS="$EXIT_HOOKS remove_logs"
remove_logs() { rm -rf "$LOGS"; }

vg() { # LOG CMD...: CMD under memcheck, its report in LOG
	log=$1
	shift
	timeout "$VG_TIMEOUT" valgrind --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --track-fds=no --log-file="$log" "$@"
}

# summary LOG: valgrind's error count and definite/indirect leak lines, PID prefix removed.
summary() {
	sed -n 's/^==[0-9]*== *//; /ERROR SUMMARY\|definitely lost\|indirectly lost/p' "$1" |
		tr '\n' ';' | sed 's/;$//; s/;/; /g'
}

run_pair() { # NAME extra options for both sides
	name=$1
	shift
	pick_port
	start_server vg "$LOGS/$name-server.log" "$RPING" -s -a 127.0.0.1 -p "$PORT" -C 5 -V "$@"
	if ! wait_listen "$PORT" "" 120; then
		cat "$LOGS/$name-server.log" >&2
		fail "server ($name) is not listening on port $PORT"
	fi
	out=$(vg "$LOGS/$name-client.log" "$RPING" -c -a 127.0.0.1 -p "$PORT" -C 5 -V -S 4096 \
		"$@" 2>&1)
	crc=$?
	wait "$SERVER_PID"
	src=$?
	SERVER_PID=
	printf '%s\n' "$out"
	if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
		for side in server client; do
			echo "---- valgrind log of the $name $side" >&2
			cat "$LOGS/$name-$side.log" >&2
		done
		fail "$name: client exited $crc, server exited $src (99: valgrind found errors;" \
			"124: timed out after ${VG_TIMEOUT}s)"
	fi
	printf '%s\n' "$out" | grep -q '5 pings of 4096 bytes, verified' ||
		fail "$name: client summary missing"
	echo "$name server: $(summary "$LOGS/$name-server.log")"
	echo "$name client: $(summary "$LOGS/$name-client.log")"
}

run_pair events
run_pair busy-poll -P
echo "$TEST_NAME: OK"
