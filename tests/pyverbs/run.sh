#!/bin/sh
# The pyverbs suite (docs/pyverbs.md): Debian's python3-pyverbs on our libibverbs.so.1.
#   run.sh LIBIBVERBS_DIR LIBRDMACM_DIR own                      our tests (test_*.py here)
#   run.sh LIBIBVERBS_DIR LIBRDMACM_DIR rdma-core SRC_ROOT DIR   rdma-core's tests/, fetched
#       into DIR by scripts/rdma-core-tests.sh, compared with expected.txt here.
# RDMA_CORE_TESTS=PATH (rdma-core's tests/ directory, e.g. from a git checkout of v44.0) is
# used instead of the Debian source package when it is set. Skips (77) only when that source
# cannot be fetched.
set -u
TEST_NAME=pyverbs
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/common.sh"
. "$here/../dropin/dropin.sh"
mode=${1:?usage: $0 LIBIBVERBS_DIR LIBRDMACM_DIR own|rdma-core [SRC_ROOT DIR]}
PY=/usr/bin/python3
$PY -c 'import pyverbs.device' 2>/dev/null ||
	fail "$PY cannot import pyverbs (apt-get install python3-pyverbs: scripts/deps.sh)"
# Only our device, whatever else the machine has.
PYVERBS_DEV=softrnic0
# No __pycache__ in the source tree.
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
export PYVERBS_DEV

case "$mode" in
own)
	TEST_NAME=pyverbs_own
	cd "$here" && exec $PY -m unittest discover -s "$here" -p 'test_*.py' -v
	;;
rdma-core)
	TEST_NAME=pyverbs_rdma_core
	src=${2:?SRC_ROOT}
	dir=${3:?DIR}
	if [ -n "${RDMA_CORE_TESTS:-}" ]; then
		tests=$RDMA_CORE_TESTS
		[ -f "$tests/run_tests.py" ] || fail "RDMA_CORE_TESTS=$tests has no run_tests.py"
		echo "$TEST_NAME: rdma-core's tests from RDMA_CORE_TESTS=$tests (not the Debian source)"
	else
		bash "$src/scripts/rdma-core-tests.sh" "$dir"
		rc=$?
		[ "$rc" = 2 ] && skip "rdma-core's source package could not be fetched from deb.debian.org (see above)"
		[ "$rc" = 0 ] || fail "scripts/rdma-core-tests.sh failed ($rc)"
		tests=$dir/tests
		echo "$TEST_NAME: rdma-core $(cat "$dir/.rdma-core-version")'s tests from Debian's source package"
	fi
	exec $PY "$here/rdma_core.py" "$tests" "$here/expected.txt"
	;;
*) fail "unknown mode $mode" ;;
esac
