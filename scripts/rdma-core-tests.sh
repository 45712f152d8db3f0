#!/usr/bin/env bash
# Puts rdma-core's Python test suite (the tests/ directory of the rdma-core source, the
# version of the installed python3-pyverbs, 44.0 on Debian 12) into DIR/tests, taken from
# Debian's source package. Nothing of it is kept in softrnic's tree.
#
#   scripts/rdma-core-tests.sh DIR
#
# The source package is fetched with apt-get source --download-only through a private apt
# configuration: its own sources list (one deb-src entry, deb.debian.org bookworm main,
# signed by the Debian archive keyring), its own lists and cache directories. The machine's
# apt setup is read, never changed. apt checks the InRelease signature and then each
# downloaded file against the hashes of the signed Sources index; the orig tarball is
# checked again here against the .dsc's Checksums-Sha256, as dpkg-source would.
#
# The download cache (bookworm's Sources index and apt's caches, ~20 MB, and the source package)
# lives in $RDMA_CORE_CACHE, default /var/cache/softrnic-rdma-core when writable, else
# ${XDG_CACHE_HOME:-~/.cache}/softrnic-rdma-core. A second run with DIR already filled does
# nothing. Exit status: 0 when DIR/tests is there; 2 when it cannot be fetched (no network
# to deb.debian.org, no apt-get, an apt-get that does not end within RDMA_CORE_FETCH_TIMEOUT
# seconds, default 60), with the reason on stderr.
set -euo pipefail

dir=${1:?usage: $0 DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# The version to fetch: the source version of the installed python3-pyverbs, so that the
# tests match the bindings they import.
want=$(dpkg-query -W -f='${source:Version}' python3-pyverbs 2>/dev/null || true)
stamp="$dir/.rdma-core-version"
if [ -f "$dir/tests/run_tests.py" ] && [ -f "$stamp" ] &&
	{ [ -z "$want" ] || [ "$(cat "$stamp")" = "$want" ]; }; then
	exit 0
fi

cant() {
	echo "rdma-core-tests: cannot fetch rdma-core's tests: $*" >&2
	exit 2
}
command -v apt-get >/dev/null || cant "apt-get is not installed"

if [ -n "${RDMA_CORE_CACHE:-}" ]; then
	cache=$RDMA_CORE_CACHE
elif mkdir -p /var/cache/softrnic-rdma-core 2>/dev/null && [ -w /var/cache/softrnic-rdma-core ]; then
	cache=/var/cache/softrnic-rdma-core
else
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/softrnic-rdma-core
fi
mkdir -p "$cache/lists/partial" "$cache/cache/archives/partial" "$cache/src"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || cant "$keyring is missing (package debian-archive-keyring)"
printf 'deb-src [signed-by=%s] http://deb.debian.org/debian bookworm main\n' "$keyring" \
	>"$cache/sources.list"
# apt downloads as the _apt user when run by root: let it write its partial directories.
if [ "$(id -u)" -eq 0 ] && id _apt >/dev/null 2>&1; then
	chown -R _apt "$cache/lists/partial" "$cache/src"
fi

apt_opts=(
	-o Dir::Etc::SourceList="$cache/sources.list"
	-o Dir::Etc::SourceParts=/dev/null
	-o Dir::State::Lists="$cache/lists"
	-o Dir::Cache="$cache/cache"
	-o Acquire::Languages=none
	-o APT::Get::List-Cleanup=false
	-q
)
# Every apt-get is bounded: on a machine's first boot apt's signature check has been seen to
# hang for minutes (apt-key's gpg), and a test waits on this script. timeout signals the
# whole process group, so apt's methods and their gpg go with it.
apt_get() {
	local rc=0
	timeout -k 10 "${RDMA_CORE_FETCH_TIMEOUT:-60}" apt-get "${apt_opts[@]}" "$@" || rc=$?
	case $rc in
	124 | 137) echo "apt-get $1: no end within ${RDMA_CORE_FETCH_TIMEOUT:-60} s" ;;
	esac
	return "$rc"
}
# Refresh the index once a day at most.
if [ -z "$(find "$cache/lists" -maxdepth 1 -name '*_Sources*' -mmin -1440 2>/dev/null)" ]; then
	apt_get update >"$cache/update.log" 2>&1 ||
		cant "apt-get update of deb.debian.org bookworm failed: $(tail -3 "$cache/update.log")"
	# A failed fetch still exits 0 from apt-get update; the index must be there.
	[ -n "$(find "$cache/lists" -maxdepth 1 -name '*_Sources*')" ] ||
		cant "no Sources index from deb.debian.org: $(grep -E '^(W|E):' "$cache/update.log" | head -3)"
fi

cd "$cache/src"
spec=rdma-core${want:+=$want}
if ! apt_get source --download-only "$spec" >"$cache/source.log" 2>&1; then
	# That exact version may have left the archive: take bookworm's current one.
	if [ -z "$want" ] || ! apt_get source --download-only rdma-core \
		>"$cache/source.log" 2>&1; then
		cant "apt-get source rdma-core failed: $(tail -3 "$cache/source.log")"
	fi
fi
dsc=$(ls -t rdma-core_*.dsc 2>/dev/null | head -1 || true)
[ -n "$dsc" ] || cant "no .dsc after apt-get source"
version=$(sed -n 's/^Version: //p' "$dsc")
upstream=${version#*:}
upstream=${upstream%-*}
orig=$(ls rdma-core_"$upstream".orig.tar.* 2>/dev/null | head -1 || true)
[ -n "$orig" ] && [ -f "$orig" ] || cant "no orig tarball for $version"

# The orig tarball's SHA-256 as the .dsc lists it (apt checked the .dsc against the signed
# index, and every file against it; this is the dpkg-source check, kept for a cached copy).
sum=$(awk -v f="$(basename "$orig")" '/^Checksums-Sha256:/ {s = 1; next}
	/^[^ ]/ {s = 0} s && $3 == f {print $1}' "$dsc")
[ -n "$sum" ] || cant "$dsc lists no SHA-256 for $orig"
echo "$sum  $orig" | sha256sum -c --quiet - || cant "$orig does not match $dsc"

# Only the orig tarball's tests/ is used: Debian's 44.0-2 patches nothing (no
# debian/patches), so it is what Debian builds python3-pyverbs' tests from.
tmp=$(mktemp -d "$dir/.extract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
top=$(tar -tf "$orig" | awk -F/ 'NR == 1 {print $1}')  # reads it all: no SIGPIPE
tar -xf "$orig" -C "$tmp" "$top/tests"
rm -rf "$dir/tests"
mv "$tmp/$top/tests" "$dir/tests"
echo "$version" >"$stamp"
echo "rdma-core-tests: rdma-core $version tests/ in $dir/tests (cache: $cache)" >&2
