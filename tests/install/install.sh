#!/bin/sh
# `meson install` into a temporary root, then softrnic used from the installed files only
# (docs/install.md): the layout (SONAMEs, symbol versions, the drop-in libraries in their
# private folder and nowhere else, no path into the build tree), programs built with the
# documented link lines, dlopen("libvipl.so"), Debian's ibv_devinfo and an rping pair, and a
# VIPL ping-pong, over loopback.
# Usage: install.sh BUILD_DIR SOURCE_DIR
set -u
TEST_NAME=install
. "$(dirname "$0")/../lib/common.sh"
BUILD=$(cd "${1:?usage: install.sh BUILD_DIR SOURCE_DIR}" && pwd)
SRC=$(cd "${2:?usage: install.sh BUILD_DIR SOURCE_DIR}" && pwd)
need_cmd ibv_devinfo ibverbs-utils
need_cmd rping rdmacm-utils
need_cmd pkg-config pkg-config
need_cmd cc gcc

D=$(mktemp -d)
cleanup_root() { rm -rf "$D"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_root"
meson install -C "$BUILD" --no-rebuild --quiet --destdir "$D" >"$D.log" 2>&1 ||
	{ cat "$D.log"; rm -f "$D.log"; fail "meson install failed"; }
rm -f "$D.log"

# Nothing of the build tree: the environment, and the installed files' run paths.
unset LD_LIBRARY_PATH
PREFIX=$(meson introspect "$BUILD" --buildoptions |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
ROOT=$D$PREFIX
LIB=$(dirname "$(find "$ROOT" -name libvipl.so.0 | head -1)")
PRIV=$LIB/softrnic
[ -d "$LIB" ] && [ -d "$PRIV" ] || fail "no libvipl.so.0 or no $PRIV under $ROOT"
for f in "$ROOT"/bin/* "$LIB"/*.so.* "$PRIV"/*.so.*; do
	[ -L "$f" ] && continue
	if objdump -p "$f" | grep -E 'R(UN)?PATH' | grep -q "$BUILD"; then
		fail "$f has a run path into the build tree"
	fi
done

# The layout: each shared library answers to its SONAME, with its own symbol versions.
soname() { objdump -p "$1" | awk '$1 == "SONAME" { print $2 }'; }
for l in libsoftrnic_verbs.so.0:SOFTRNIC_VERBS_0 libsoftrnic_rdmacm.so.0:SOFTRNIC_RDMACM_0 \
	libvipl.so.0:SOFTRNIC_VIPL_0; do
	name=${l%%:*} node=${l#*:}
	[ "$(soname "$LIB/$name")" = "$name" ] || fail "$LIB/$name: SONAME $(soname "$LIB/$name")"
	objdump -T "$LIB/$name" | grep -q " $node " || fail "$name exports nothing at $node"
	[ -L "$LIB/${name%.0}" ] || fail "no link name ${name%.0} in $LIB"
done
objdump -T "$LIB/libsoftrnic_verbs.so.0" | grep -q ' SOFTRNIC_VERBS_0 .*ibv_open_device$' ||
	fail "libsoftrnic_verbs.so.0 has no ibv_open_device@SOFTRNIC_VERBS_0"
[ "$(soname "$PRIV/libibverbs.so.1")" = libibverbs.so.1 ] || fail "no drop-in libibverbs.so.1"
[ "$(soname "$PRIV/librdmacm.so.1")" = librdmacm.so.1 ] || fail "no drop-in librdmacm.so.1"
if find "$D" -name 'libibverbs.so*' -o -name 'librdmacm.so*' | grep -v "^$PRIV/"; then
	fail "a drop-in library outside $PRIV would shadow rdma-core's"
fi
for h in include/softrnic/verbs_ext.h include/vipl.h; do
	[ -f "$ROOT/$h" ] || fail "$h is not installed"
done
for t in softrnic-devinfo softrnic-rping softrnic-perf softrnic-stat iwarp-dump iwarp-conform \
	iwarp-conform-wire vipl-pingpong vipl-bw softrnic-run; do
	[ -x "$ROOT/bin/$t" ] || fail "$t is not installed"
done
# a manual page for every installed tool, the configuration file and softrnic itself
for t in "$ROOT"/bin/*; do
	[ -f "$ROOT/share/man/man1/${t##*/}.1" ] || fail "no manual page for ${t##*/}"
done
for p in man5/softrnic.conf.5 man7/softrnic.7; do
	[ -f "$ROOT/share/man/$p" ] || fail "$p is not installed"
done

# A sanitizer build's libraries need the sanitizer runtime in every process that loads them:
# programs built here get it as the libraries did, Debian's by preloading it.
asan=$(ldd "$LIB/libsoftrnic_verbs.so.0" | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
	cc() { command cc -fsanitize=address,undefined "$@"; }
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	export ASAN_OPTIONS
fi
preload() { LD_PRELOAD="$asan${LD_PRELOAD:+:$LD_PRELOAD}" "$@"; }

# The documented link lines (README.md), against the installed headers, libraries and
# pkg-config files; then the programs run with the installed libraries only.
W=$D/work
mkdir "$W" && cp "$SRC/tests/install/app.c" "$SRC/tests/install/via_app.c" \
	"$SRC/tests/install/via_dlopen.c" "$W/" || fail "cannot copy the programs"
export PKG_CONFIG_SYSROOT_DIR="$D" PKG_CONFIG_PATH="$LIB/pkgconfig"
export CPATH="$ROOT/include" LIBRARY_PATH="$LIB"
(
	cd "$W" || exit 1
	LD_LIBRARY_PATH=$LIB
	export LD_LIBRARY_PATH
	cc -o app app.c $(pkg-config --cflags --libs softrnic softrnic-vipl) &&
	cc -o via_app via_app.c -lvipl &&
	cc -o via_dlopen via_dlopen.c &&
	./app && ./via_app && ./via_dlopen
) || fail "a program built with the documented link lines failed"

unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH CPATH LIBRARY_PATH

# Debian's rdma-core programs through the installed softrnic-run, over loopback.
PATH=$ROOT/bin:$PATH
RUN=$ROOT/bin/softrnic-run
[ "$(softrnic-run --libdir)" = "$PRIV" ] || fail "softrnic-run --libdir says '$("$RUN" --libdir)'"
out=$(preload timeout "$PROG_TIMEOUT" softrnic-run ibv_devinfo) || fail "softrnic-run ibv_devinfo failed"
echo "$out" | grep -q 'hca_id:[[:space:]]*softrnic0' || fail "ibv_devinfo: no softrnic0: $out"
echo "$out" | grep -q 'transport:[[:space:]]*iWARP' || fail "ibv_devinfo: softrnic0 is not iWARP"
pick_port
SOUT=$W/rping.s
start_server preload timeout "$PROG_TIMEOUT" "$RUN" rping -s -a 127.0.0.1 -p "$PORT" -V -C 20 \
	>"$SOUT" 2>&1
wait_listen "$PORT" || fail "rping server is not listening on port $PORT: $(cat "$SOUT")"
preload timeout "$PROG_TIMEOUT" "$RUN" rping -c -a 127.0.0.1 -p "$PORT" -v -V -C 20 >"$W/rping.c" ||
	fail "rping client failed: $(cat "$W/rping.c")"
wait_server "rping server: $(cat "$SOUT")"
n=$(grep -c '^ping data: rdma-ping-' "$W/rping.c")
[ "$n" -eq 20 ] || fail "rping client printed $n verified pings, expected 20"

# VIPL's ping-pong, installed, data checked (-v).
pick_port
start_server timeout "$PROG_TIMEOUT" "$ROOT/bin/vipl-pingpong" -s -l "127.0.0.1:$PORT" -n 200 -v \
	>"$SOUT" 2>&1
wait_listen "$PORT" || fail "vipl-pingpong server is not listening on $PORT: $(cat "$SOUT")"
PS=$PORT
pick_port
out=$(timeout "$PROG_TIMEOUT" "$ROOT/bin/vipl-pingpong" -c "127.0.0.1:$PS" -l "127.0.0.1:$PORT" \
	-n 200 -v) || fail "vipl-pingpong client failed: $out"
wait_server "vipl-pingpong server: $(cat "$SOUT")"
echo "$out" | grep -Eq '^ [0-9]+ +[0-9]+ +[0-9.]+' || fail "vipl-pingpong printed no result: $out"

# The wire half, installed: the scripted peer finds its modules beside its real path (the
# link in bin points into share/softrnic/wire) and drives the installed wire target.
pick_port
CP=$PORT
pick_port
start_server timeout "$PROG_TIMEOUT" env LD_PRELOAD="$asan${LD_PRELOAD:+:$LD_PRELOAD}" "$RUN" \
	iwarp-conform --wire-target 127.0.0.1 --port "$PORT" --ctl-port "$CP" >"$SOUT" 2>&1
out=$(timeout "$PROG_TIMEOUT" "$ROOT/bin/iwarp-conform-wire" --port "$PORT" --ctl-port "$CP" \
	--only echo,crc_error,write_past_end,read_local_only 127.0.0.1) ||
	fail "iwarp-conform-wire failed: $out"
echo "$out" | grep -q '^iwarp-conform-wire: softrnic0: 4 checks, 0 FAIL' ||
	fail "iwarp-conform-wire: $out"
kill -TERM "$SERVER_PID"
wait_server "the wire target: $(cat "$SOUT")"

echo "$TEST_NAME: OK"
