# Shared setup of the drop-in tests (sourced after tests/lib/common.sh). Usage of every script:
#   SCRIPT.sh LIBIBVERBS_DIR LIBRDMACM_DIR [args]
# Puts our libibverbs.so.1 / librdmacm.so.1 first in LD_LIBRARY_PATH (all a user adds), and
# in a sanitizer build preloads the ASan runtime our libraries need, since Debian's binaries
# are not built with it.
DROPIN_VERBS=${1:?usage: $0 LIBIBVERBS_DIR LIBRDMACM_DIR}
DROPIN_RDMACM=${2:?usage: $0 LIBIBVERBS_DIR LIBRDMACM_DIR}
shift 2
[ -e "$DROPIN_VERBS/libibverbs.so.1" ] || fail "no libibverbs.so.1 in $DROPIN_VERBS"
[ -e "$DROPIN_RDMACM/librdmacm.so.1" ] || fail "no librdmacm.so.1 in $DROPIN_RDMACM"
LD_LIBRARY_PATH="$DROPIN_VERBS:$DROPIN_RDMACM${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
asan=$(ldd "$DROPIN_VERBS/libibverbs.so.1" | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
	LD_PRELOAD="$asan${LD_PRELOAD:+:$LD_PRELOAD}"
	export LD_PRELOAD
	# Leaks of the Debian programs themselves (never freed at exit) are not ours to report.
	# Last, because the last setting of an option wins (scripts/test.sh sets detect_leaks=1).
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	export ASAN_OPTIONS
fi

# need_debian CMD PACKAGE: skip (77) with a clear message when a Debian binary is missing.
need_debian() {
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "${TEST_NAME:-test}: SKIP: '$1' is not installed (apt-get install $2)"
		exit 77
	fi
}

# uses_ours CMD: the program resolves libibverbs.so.1 to ours (not the system's).
uses_ours() {
	ldd "$(command -v "$1")" | grep -q "$DROPIN_VERBS/libibverbs.so.1" ||
		fail "$1 does not load $DROPIN_VERBS/libibverbs.so.1: $(ldd "$(command -v "$1")")"
}

# run_rounds RUNS CMD...: CMD RUNS times in a row, each round said on stdout; CMD fails the
# test itself (fail), so the first bad round ends it. For the loop variants of the scripts
# (ucmatose.sh, dpdk_ucmatose.sh): a failure that comes once in many runs shows up there.
run_rounds() {
	rr_n=$1
	shift
	rr_i=0
	while [ "$rr_i" -lt "$rr_n" ]; do
		rr_i=$((rr_i + 1))
		"$@"
		echo "$TEST_NAME: round $rr_i of $rr_n ($*): OK"
	done
}

# spawn_on_a FILE CMD...: CMD on side A (on_a, from dpdk_common.sh or link_common.sh) in the
# background, bounded by PROG_TIMEOUT, stdout and stderr to FILE. The subshell execs the
# program's own process chain (DD_EXEC=1), so SERVER_PID is what kill_server must stop.
spawn_on_a() {
	sa_f=$1
	shift
	(
		DD_EXEC=1
		on_a timeout "$PROG_TIMEOUT" "$@"
	) >"$sa_f" 2>&1 &
	SERVER_PID=$!
}
