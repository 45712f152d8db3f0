# Helpers of the VIPL-over-DPDK tests (sourced after tests/lib/common.sh and
# tests/dpdk/dpdk_lib.sh; POSIX sh).
#   vd_skip_if_no_dpdk FILE  exit 77 when FILE (a program's stderr) says that DPDK itself cannot
#                            run here (EAL start, or softrnic built without DPDK). Any other
#                            port error (memory, a vdev that does not probe) is a failure.
#   vd_with_hosts FILE PROG  PROG with FILE as /etc/hosts, in a mount namespace of its own
# Namespaces for af_packet: dpdk_netns (tests/dpdk/dpdk_lib.sh).

vd_skip_if_no_dpdk() { # FILE
	if grep -Eq 'DPDK EAL could not start|built without DPDK' "$1" 2>/dev/null; then
		cat "$1" >&2
		echo "${TEST_NAME:-test}: SKIP: DPDK cannot start here" >&2
		exit 77
	fi
}

# vd_with_hosts FILE PROGRAM [ARG...]: PROGRAM with FILE as its /etc/hosts, in a mount
# namespace of its own (the machine's /etc/hosts is never touched; everything started from
# PROGRAM, `ip netns exec` included, sees FILE). Over DPDK a peer's name must resolve to its
# port's address, which no system resolver knows (docs/vipl.md "Name service").
vd_with_hosts() {
	vd_hosts=$1
	shift
	set -- sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$vd_hosts" "$@"
	if [ "$(id -u)" -eq 0 ]; then
		unshare --mount --propagation private "$@"
	else
		unshare --map-root-user --mount --propagation private "$@"
	fi
}
