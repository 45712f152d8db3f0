#!/bin/sh
# Our libibverbs.so.1 and librdmacm.so.1 export exactly the symbol@version pairs of Debian's
# rdma-core 44 libraries (objdump -T), the IBVERBS_1.0 twins included; softrnic's own SOFTRNIC_*
# nodes are the only extra (docs/dropin.md).
set -u
TEST_NAME=dropin_symbols
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dropin.sh"
need_cmd objdump binutils
SYS=/usr/lib/x86_64-linux-gnu
for l in libibverbs.so.1 librdmacm.so.1; do
	[ -e "$SYS/$l" ] || { echo "$TEST_NAME: SKIP: $SYS/$l not installed"; exit 77; }
done
T=$(mktemp -d)
cleanup_files() { rm -rf "$T"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_files"

# "VERSION SYMBOL" per defined dynamic symbol; a non-default version shows as (VERSION).
syms() {
	objdump -T "$1" | awk '/ D[FO] / && !/\*UND\*/ {print $(NF-1), $NF}' | sort
}
check() {
	syms "$SYS/$1" >"$T/deb"
	syms "$2/$1" | grep -v '^SOFTRNIC' >"$T/ours"
	diff "$T/deb" "$T/ours" >"$T/diff" || { cat "$T/diff"; fail "$1: exports differ from Debian's"; }
	readelf -d "$2/$1" | grep -q "Library soname: \[$1\]" || fail "$1: wrong SONAME"
	echo "$1: $(wc -l <"$T/ours") symbol versions as Debian's"
}
check libibverbs.so.1 "$DROPIN_VERBS"
check librdmacm.so.1 "$DROPIN_RDMACM"
# Nothing of ours leaks out but the SOFTRNIC nodes (sv_, rcm_, rn_ internals are local;
# softrnic_transport_* is the transport selection our librdmacm calls).
ours='^(softrnic_|rn_cm_|rn_sock_transport|SOFTRNIC)'
syms "$DROPIN_VERBS/libibverbs.so.1" | awk -v ok="$ours" '$1 ~ /^SOFTRNIC/ && $2 !~ ok' >"$T/leak"
[ -s "$T/leak" ] && { cat "$T/leak"; fail "unexpected SOFTRNIC exports"; }
# Every symbol@version a Debian program or provider imports is there.
for f in ibv_devices ibv_devinfo rping ucmatose rdma_server rdma_client ib_send_bw ib_write_bw \
	ib_read_bw ib_send_lat ib_write_lat ib_read_lat "$SYS/libmlx5.so.1" "$SYS/libefa.so.1"; do
	p=$(command -v "$f" || true)
	[ -n "$p" ] || continue
	objdump -T "$p" | awk '/\*UND\*/ && $(NF-1) ~ /IBVERBS|RDMACM/ {print $(NF-1), $NF}' |
		tr -d '()'
done | sort -u >"$T/imports"
{ syms "$DROPIN_VERBS/libibverbs.so.1"; syms "$DROPIN_RDMACM/librdmacm.so.1"; } | tr -d '()' |
	sort -u >"$T/all"
missing=$(comm -23 "$T/imports" "$T/all")
[ -z "$missing" ] || fail "imported by Debian binaries but not exported: $missing"
# libfabric and Open MPI's components dlopen libibverbs.so.1. A library marked STATIC_TLS (it
# has initial-exec thread-locals: the fault guards) loads that way only while its TLS fits in
# glibc's small static surplus; a thread-local 4 KiB buffer once made every such load fail.
for lib in "$DROPIN_VERBS/libibverbs.so.1" "$DROPIN_RDMACM/librdmacm.so.1"; do
	readelf -dW "$lib" | grep -q 'FLAGS.*STATIC_TLS' || continue
	tls=$(readelf -lW "$lib" | awk '$1 == "TLS" { print $6 }')
	[ $((tls)) -le 512 ] || fail "$lib: STATIC_TLS with $((tls)) octets of TLS (dlopen needs <= 512)"
done
echo "$TEST_NAME: OK ($(wc -l <"$T/imports") imports resolved)"
