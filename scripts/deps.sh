#!/usr/bin/env bash
# Installs the Debian 12 packages softrnic builds, tests and demos with, when any is missing.
# Safe to run repeatedly: it does nothing once everything is there.
set -euo pipefail

PACKAGES=(
  gcc clang libclang-rt-14-dev pkg-config meson ninja-build python3
  libcmocka-dev libpcap-dev libbsd-dev tshark
  dpdk-dev libdpdk-dev libibverbs-dev librdmacm-dev iproute2 valgrind
  ibverbs-utils rdmacm-utils perftest qperf fio   # Debian programs the drop-in tests run (tests/dropin)
  libsodium-dev iperf3                  # TCP engine: SipHash for RFC 6528 ISNs; the iperf3 baseline
  iputils-ping                          # tests/tcp/net: the kernel pings softrnic-port
  ethtool                               # veth offloads off for af_packet (tests/tcp, tests/dpdk)
  libfabric-bin openmpi-bin libopenmpi-dev   # libfabric and Open MPI on softrnic (tests/fabric, tests/mpi)
  python3-pyverbs                       # tests/pyverbs: rdma-core's test suite and ours
  scdoc man-db                          # the manual pages (man/), checked with man -l (tests/install)
  debhelper lintian dpkg-dev            # the Debian packages (debian/, tests/deb)
  gnuplot-nox file                      # the benchmarks' plots (scripts/bench-plot.sh, tests/bench)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer it up front so nothing blocks.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
