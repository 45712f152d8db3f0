#!/bin/sh
# softrnic-run from the build tree (build/apps/run/softrnic-run): the drop-in folders first on
# the library path, each option's environment, the errors of a bad command line; then
# Debian's ibv_devinfo through it sees softrnic0.
# Usage: run_tree.sh SOFTRNIC_RUN BUILD_DIR
set -u
TEST_NAME=softrnic_run_tree
. "$(dirname "$0")/../lib/common.sh"
RUN=${1:?usage: run_tree.sh SOFTRNIC_RUN BUILD_DIR}
BUILD=$(cd "${2:?usage: run_tree.sh SOFTRNIC_RUN BUILD_DIR}" && pwd)
need_cmd ibv_devinfo ibverbs-utils
# a sanitizer build's drop-in needs its runtime in Debian's programs (as tests/dropin/dropin.sh)
asan=$(ldd "$BUILD/verbs/libibverbs.so.1" | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
	LD_PRELOAD=$asan ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	export LD_PRELOAD ASAN_OPTIONS
fi

[ "$("$RUN" --libdir)" = "$BUILD/verbs:$BUILD/verbs/rdmacm" ] ||
	fail "--libdir says '$("$RUN" --libdir)'"
path=$(LD_LIBRARY_PATH=/x "$RUN" sh -c 'echo "$LD_LIBRARY_PATH"')
[ "$path" = "$BUILD/verbs:$BUILD/verbs/rdmacm:/x" ] || fail "LD_LIBRARY_PATH '$path'"

CONF=$(mktemp)
cleanup_conf() { rm -f "$CONF"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_conf"
env=$("$RUN" --dpdk "$CONF" --mpa crc --conf "$CONF" env)
echo "$env" | grep -qx SOFTRNIC_TRANSPORT=dpdk || fail "--dpdk did not select DPDK"
echo "$env" | grep -qx "SOFTRNIC_DPDK_CONF=$(readlink -f "$CONF")" || fail "--dpdk: no CONF"
echo "$env" | grep -qx SOFTRNIC_MPA=crc || fail "--mpa did not set SOFTRNIC_MPA"
echo "$env" | grep -qx "SOFTRNIC_CONF=$(readlink -f "$CONF")" || fail "--conf: no SOFTRNIC_CONF"
env=$(SOFTRNIC_TRANSPORT=dpdk "$RUN" --kernel env)
echo "$env" | grep -qx SOFTRNIC_TRANSPORT=sock || fail "--kernel did not select kernel sockets"

# bad command lines: status 2 and a message, the program never started
for bad in "--dpdk" "--dpdk /nonexistent/conf true" "--conf /nonexistent true" "--bogus true" \
	""; do
	# shellcheck disable=SC2086
	"$RUN" $bad >/dev/null 2>&1
	rc=$?
	[ "$rc" -eq 2 ] || fail "'softrnic-run $bad' exited $rc, expected 2"
done

# Open MPI's mpirun (a stand-in that says it is one and prints its arguments): the library
# path and the options' variables forwarded with -x, or added to mca_base_env_list when the
# environment sets that; any other program's arguments stay as given
cat >"$CONF.mpirun" <<'MPIRUN'
#!/bin/sh
[ "$1" = --version ] && { echo "mpirun (Open MPI) 4.1.4"; exit 0; }
echo "args: $*"
echo "env_list: ${OMPI_MCA_mca_base_env_list:-}"
MPIRUN
chmod +x "$CONF.mpirun"
mkdir "$CONF.bin" && ln -s "$CONF.mpirun" "$CONF.bin/mpirun" || fail "the stand-in mpirun"
cleanup_mpirun() { rm -rf "$CONF.mpirun" "$CONF.bin"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_mpirun"
out=$(unset OMPI_MCA_mca_base_env_list; "$RUN" --mpa crc "$CONF.bin/mpirun" -np 2 ./app)
echo "$out" | grep -qx 'args: -x LD_LIBRARY_PATH -x SOFTRNIC_MPA -np 2 ./app' ||
	fail "mpirun was not given -x LD_LIBRARY_PATH -x SOFTRNIC_MPA first: $out"
echo "$out" | grep -qx 'env_list: ' || fail "mca_base_env_list set beside -x: $out"
out=$(OMPI_MCA_mca_base_env_list=FOO "$RUN" --kernel "$CONF.bin/mpirun" -np 2 ./app)
echo "$out" | grep -qx 'args: -np 2 ./app' || fail "-x added beside mca_base_env_list: $out"
echo "$out" | grep -qx 'env_list: FOO;LD_LIBRARY_PATH;SOFTRNIC_TRANSPORT' ||
	fail "mca_base_env_list not extended: $out"
out=$("$RUN" "$CONF.mpirun" -np 2 ./app)
echo "$out" | grep -qx 'args: -np 2 ./app' || fail "a program not named mpirun was given -x: $out"

out=$(timeout "$PROG_TIMEOUT" "$RUN" ibv_devinfo) || fail "softrnic-run ibv_devinfo failed"
echo "$out" | grep -q 'hca_id:[[:space:]]*softrnic0' || fail "ibv_devinfo: no softrnic0: $out"
echo "$TEST_NAME: OK"
