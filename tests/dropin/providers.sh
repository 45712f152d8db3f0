#!/bin/sh
# ibverbs-providers' libmlx5.so.1 and libefa.so.1 load against our libibverbs.so.1 (their
# constructors register with verbs_register_driver_34) and are never matched: the device list
# is softrnic0 alone, and a kernel command of the provider interface fails with ENODEV.
set -u
TEST_NAME=dropin_providers
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dropin.sh"
PROBE=${1:?usage: providers.sh LIBDIR LIBDIR PROBE}
SYS=/usr/lib/x86_64-linux-gnu
for l in libmlx5.so.1 libefa.so.1; do
	if [ ! -e "$SYS/$l" ]; then
		echo "$TEST_NAME: SKIP: $SYS/$l not installed (ibverbs-providers)"
		exit 77
	fi
done
out=$(timeout "$PROG_TIMEOUT" "$PROBE" "$SYS/libmlx5.so.1" "$SYS/libefa.so.1" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || fail "probe exited with status $rc"
echo "$TEST_NAME: OK"
