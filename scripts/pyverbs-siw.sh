#!/usr/bin/env bash
# Runs rdma-core's Python tests and ours (tests/pyverbs) on Linux siw, the reference iWARP
# device, in a siw-vm guest (../shared/tools/siw-vm, QEMU; root). The guest has no python3:
# a debootstrapped bookworm root with python3-pyverbs is put in a share that the guest mounts
# at /mnt/host, and the tests run there under chroot with /sys, /dev and /proc bound in.
#
#   scripts/pyverbs-siw.sh TESTS_DIR [SHARE]
# TESTS_DIR: rdma-core's tests/ (e.g. DIR/tests after scripts/rdma-core-tests.sh DIR).
# SHARE: host directory for the chroot and the results (default /var/cache/softrnic-siwshare,
# ~320 MB). Results: SHARE/root/out/siw-default.{txt,log} (rdma_core.py --record format) and
# SHARE/root/out/siw-own.log. Needs siw-vm build done; boots one guest and stops it at the end.
set -euo pipefail
tests=$(cd "${1:?usage: $0 TESTS_DIR [SHARE]}" && pwd)
share=${2:-/var/cache/softrnic-siwshare}
here=$(cd "$(dirname "$0")/.." && pwd)
siwvm=${SIWVM:-$here/../shared/tools/siw-vm}
[ -x "$siwvm" ] || siwvm=/work/shared/tools/siw-vm
root=$share/root

if [ ! -x "$root/usr/bin/python3" ]; then
	debootstrap --variant=minbase \
		--include=python3-pyverbs,rdma-core,ibverbs-providers,iproute2,ibverbs-utils \
		bookworm "$root" http://deb.debian.org/debian
fi
rm -rf "$root/rct" "$root/ours"
mkdir -p "$root/rct" "$root/ours" "$root/out"
cp -r "$tests" "$root/rct/tests"
cp "$here"/tests/pyverbs/*.py "$root/ours/"
: >"$root/ours/empty.txt"
cat >"$share/run-in-guest.sh" <<'EOF'
#!/bin/bash
R=/mnt/host/root
for m in sys dev proc; do mountpoint -q $R/$m || mount --bind /$m $R/$m; done
chroot $R /usr/bin/python3 -B /ours/rdma_core.py /rct/tests /ours/empty.txt \
	--record /out/siw-default.txt >$R/out/siw-default.log 2>&1
chroot $R /bin/sh -c 'cd /ours && PYVERBS_DEV=siw0 /usr/bin/python3 -B -m unittest discover \
	-s /ours -p "test_*.py" -v' >$R/out/siw-own.log 2>&1
echo "own tests: exit $?"
EOF
SIWVM_SHARE=$share SIWVM_MEM=2048 "$siwvm" up 1
trap '"$siwvm" down' EXIT
"$siwvm" exec -t 900 g1 'bash /mnt/host/run-in-guest.sh'
grep 'rdma-core tests:' "$root/out/siw-default.log"
tail -n 1 "$root/out/siw-own.log"
