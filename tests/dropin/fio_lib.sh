# fio's rdma ioengine (Debian's fio 3.33, unmodified) on our drop-in libraries: what the
# kernel-socket test (fio.sh) and the DPDK test (dpdk_fio.sh) share (sourced after
# tests/lib/common.sh and dropin.sh; POSIX sh). docs/dropin.md "fio" says what runs and why.
#
# fio's rdma engine pairs a server job (rw=read: it registers its buffers and, for Writes and
# Reads, hands their STags to the client; for Sends, it posts them as Receives) with a client
# job (rw=write: it issues verb=write, read or send). The cases:
#   write, read  RDMA Write / RDMA Read, 256 MiB in 64 KiB blocks, iodepth 16 on both sides
#   send         Send, 256 MiB in 1 MiB blocks, iodepth 256 on both sides: the server posts a
#                Receive for every message of the run before the client sends the first
#   behind       Send where the receiver falls behind: the server keeps one Receive posted
#                and waits 200 ms (thinktime) before re-posting it, the client sends 16 at
#                once. The second Send finds no Receive: the server's RNIC answers with a
#                Terminate and both QPs go to Error, so each side gets an error completion.
need_debian fio fio
uses_ours fio
FIO_SIZE=256m
# How every fio of these tests runs (then --name, --port, the case's options and, for the
# client, --hostname). --thread: fio's default runs each job in a forked process in a session
# of its own (setsid), which neither a kill of the PID we hold nor of its process group
# reaches; as a thread, the job dies with the process. The bound (SIGKILL, a little below
# PROG_TIMEOUT so that it comes before any outer timeout's SIGTERM) ends a fio that waits on
# for ever: fio answers SIGTERM by waiting 300 s for a stuck job.
FIO_RUN="timeout -s KILL $((PROG_TIMEOUT - 5)) fio --thread --ioengine=rdma"

# fio_kill_tree PID: SIGKILL to PID and all its descendants, the deepest first (the timeout
# wrapper's fio is its child). ps runs without the ASan runtime dropin.sh preloads for the
# Debian programs: with it, ps can hang at start.
fio_kill_tree() {
	for child in $(LD_PRELOAD= ps -o pid= --ppid "$1"); do
		fio_kill_tree "$child"
	done
	kill -s KILL "$1" 2>/dev/null
}

# On every exit, before the hooks that wait for the server: a fio still running is killed.
FIO_CLIENT_PID=
fio_stop() {
	[ -n "${SERVER_PID:-}" ] && fio_kill_tree "$SERVER_PID"
	[ -n "$FIO_CLIENT_PID" ] && fio_kill_tree "$FIO_CLIENT_PID"
	FIO_CLIENT_PID=
}
EXIT_HOOKS="fio_stop $EXIT_HOOKS"

# fio_case CASE: sets FIO_SRV and FIO_CLI, the job options of the server and of the client
# (every run also has --name, --ioengine, --port and, for the client, --hostname)
fio_case() {
	case "$1" in
	write | read)
		FIO_SRV="--bs=64k --iodepth=16"
		FIO_CLI="--verb=$1 --bs=64k --iodepth=16"
		;;
	send)
		FIO_SRV="--bs=1m --iodepth=256"
		FIO_CLI="--verb=send --bs=1m --iodepth=256"
		;;
	behind)
		FIO_SRV="--bs=64k --iodepth=1 --thinktime=200ms"
		FIO_CLI="--verb=send --bs=64k --iodepth=16"
		;;
	*) fail "unknown case '$1' (write, read, send or behind)" ;;
	esac
	FIO_SRV="--rw=read --size=$FIO_SIZE $FIO_SRV"
	FIO_CLI="--rw=write --size=$FIO_SIZE $FIO_CLI"
}

# fio_check_done CASE SERVER_OUT CLIENT_OUT: the run completed: both jobs report no error,
# the client moved all 256 MiB, and for Sends the server received all of it
fio_check_done() {
	for f in "$2" "$3"; do
		grep -q 'err= 0:' "$f" || { cat "$f"; fail "$1: a job reports an error"; }
		grep -q 'fio: cq completion status' "$f" && { cat "$f"; fail "$1: an error completion"; }
	done
	grep -Eq '^ *WRITE: .* io=256MiB ' "$3" || { cat "$3"; fail "$1: the client did not move 256 MiB"; }
	if [ "$1" = send ]; then
		grep -Eq '^ *READ: .* io=256MiB ' "$2" ||
			{ cat "$2"; fail "$1: the server did not receive 256 MiB"; }
	fi
	grep -E '^ *(WRITE|READ): ' "$3" "$2"
}

# fio_behind SERVER_PID SERVER_OUT CLIENT_PID CLIENT_OUT: the 'behind' run ends in an error on
# both sides. Each fio must report the error completion ("fio: cq completion status") or
# exit with an error of its own, within PROG_TIMEOUT; a side that exits 0, reports nothing,
# or was ended by the bound of FIO_RUN (status 124, or 137 for a kill of timeout) fails. fio
# 3.33's engine does not return after an error completion (engines/rdma.c: getevents goes
# back to ibv_get_cq_event, on every device; docs/dropin.md), so a side that reported the
# error and is still running is stopped here.
fio_behind() {
	n=0
	while [ "$n" -lt $((PROG_TIMEOUT * 10)) ]; do
		s=0 c=0
		grep -q 'fio: cq completion status' "$2" || ! kill -0 "$1" 2>/dev/null || s=1
		grep -q 'fio: cq completion status' "$4" || ! kill -0 "$3" 2>/dev/null || c=1
		[ "$s" -eq 0 ] && [ "$c" -eq 0 ] && break
		sleep 0.1
		n=$((n + 1))
	done
	for p in "$1:$2:server" "$3:$4:client"; do
		pid=${p%%:*} f=${p#*:} f=${f%:*} side=${p##*:}
		if kill -0 "$pid" 2>/dev/null; then
			grep -q 'fio: cq completion status' "$f" ||
				{ cat "$f"; fail "behind: the $side reported no error in $PROG_TIMEOUT s"; }
			fio_kill_tree "$pid"
			wait "$pid" 2>/dev/null
		else
			wait "$pid"
			rc=$?
			case $rc in
			0 | 124 | 137) cat "$f"; fail "behind: the $side ended with status $rc" ;;
			esac
		fi
		grep -m1 -E 'fio: (cq completion status|.*fail)' "$f" | sed "s/^/$side: /"
	done
	grep -Eq '^ *WRITE: .* io=256MiB ' "$4" && fail "behind: the client moved all 256 MiB"
	return 0
}
