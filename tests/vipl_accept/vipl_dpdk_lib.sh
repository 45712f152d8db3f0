# Helpers of the VIPL-over-DPDK tests (sourced after tests/lib/common.sh and
# tests/dpdk/dpdk_lib.sh; POSIX sh).
#   vd_skip_if_no_dpdk FILE  exit 77 when FILE (a program's stderr) says that DPDK itself cannot
#                            run here (EAL start, or softrnic built without DPDK). Any other
#                            port error (memory, a vdev that does not probe) is a failure.
# Namespaces for af_packet: dpdk_netns (tests/dpdk/dpdk_lib.sh).

vd_skip_if_no_dpdk() { # FILE
	if grep -Eq 'DPDK EAL could not start|built without DPDK' "$1" 2>/dev/null; then
		cat "$1" >&2
		echo "${TEST_NAME:-test}: SKIP: DPDK cannot start here" >&2
		exit 77
	fi
}
