#!/bin/sh
# The Debian packages (debian/): built from the tree with dpkg-buildpackage, checked with
# lintian (no error, no warning), then installed with dpkg into a root of the test's own (an
# overlay over the machine's root, in a mount namespace, so the machine's own root never
# changes) and used from the installed files only (tests/deb/inside.sh). Root.
# Usage: tests/deb/deb.sh [OUT_DIR]   (OUT_DIR keeps the packages and logs; default: removed)
set -u
TEST_NAME=deb
. "$(dirname "$0")/../lib/common.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" -eq 0 ] || skip "needs root (a mount namespace and chroot)"
need_cmd dpkg-buildpackage dpkg-dev
need_cmd dh debhelper
need_cmd lintian lintian
need_cmd unshare util-linux

W=$(mktemp -d /tmp/softrnic-deb-XXXXXX)
OUT=${1:-}
cleanup_work() {
	[ -n "$OUT" ] && mkdir -p "$OUT" && cp "$W"/*.deb "$W"/*.log "$OUT"/ 2>/dev/null
	rm -rf "$W"
}
EXIT_HOOKS="$EXIT_HOOKS cleanup_work"

# The tree as git sees it (tracked files and new ones it does not ignore), no build folders.
version=$(sed -n '1s/^softrnic (\([^)]*\)).*/\1/p' "$SRC/debian/changelog")
mkdir "$W/softrnic-$version"
(cd "$SRC" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
	tar --null -T - -cf -) | tar -x -C "$W/softrnic-$version" || fail "cannot copy the tree"
(cd "$W/softrnic-$version" && DEB_BUILD_OPTIONS="parallel=2" nice dpkg-buildpackage -b -us -uc) \
	>"$W/build.log" 2>&1 || { tail -40 "$W/build.log"; fail "dpkg-buildpackage failed"; }
for p in softrnic libsoftrnic-dev softrnic-vipl; do
	ls "$W/${p}_${version}_"*.deb >/dev/null 2>&1 || fail "no package $p"
done
lintian --fail-on error,warning "$W"/softrnic_"$version"_*.changes >"$W/lintian.log" 2>&1 ||
	{ cat "$W/lintian.log"; fail "lintian"; }
grep -E '^[EW]: ' "$W/lintian.log" && fail "lintian: errors or warnings"

# A root of our own: the machine's root as the lower layer, the test's tmpfs above it.
R=$W/root
mkdir "$R"
unshare --mount --propagation private sh -eu -c '
	W=$1 R=$2 SRC=$3
	mount -t tmpfs tmpfs "$R"
	mkdir "$R/upper" "$R/work" "$R/m"
	mount -t overlay overlay -o "lowerdir=/,upperdir=$R/upper,workdir=$R/work" "$R/m"
	mount -t proc proc "$R/m/proc"
	mount --rbind /dev "$R/m/dev"
	mount --rbind /sys "$R/m/sys"
	mount -t tmpfs tmpfs "$R/m/tmp"
	mkdir "$R/m/tmp/debs" "$R/m/tmp/src" "$R/m/tmp/src/tests"
	cp "$W"/*.deb "$R/m/tmp/debs/"
	# the scripts and sources inside.sh uses: the tree itself may live under /tmp, which the
	# fresh tmpfs hides (a CI clone does)
	cp -r "$SRC/tests/deb" "$SRC/tests/lib" "$SRC/tests/install" "$R/m/tmp/src/tests/"
	exec chroot "$R/m" sh /tmp/src/tests/deb/inside.sh /tmp/debs /tmp/src
' sh "$W" "$R" "$SRC" >"$W/inside.log" 2>&1
rc=$?
cat "$W/inside.log"
[ "$rc" -eq 0 ] || fail "the installed packages failed (inside.sh exited $rc)"
echo "$TEST_NAME: OK (lintian: no error, no warning)"
