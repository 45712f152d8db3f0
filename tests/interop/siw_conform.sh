#!/usr/bin/env bash
# iwarp-conform (apps/conform, docs/conform.md) against the real Linux siw driver: boots two
# QEMU guests with siw-vm (stock siw, cached image) and runs the tool's whole check table in
# three pairings at once, server device first:
#
#   softrnic/siw   softrnic's server on the host (drop-in libraries, kernel sockets, in a
#                  namespace of its own behind lib.sh's host link), siw's client in g2
#   siw/softrnic   siw's server in g1, softrnic's client on the host
#   siw/siw        siw's server in g1, siw's client in g2, across the guests' bridge
#   siw (wire)     the wire half: `iwarp-conform --wire-target` on siw in g2, driven by
#                  iwarp-conform-wire, the scripted peer, from softrnic's namespace
#
# In the guests the tool is the host's own binary, run from siw-vm's share (/mnt/host): it
# links only Debian's libibverbs, librdmacm and glibc, and the guests are bookworm like the
# host, so there it loads rdma-core's libraries and siw's provider.
#
#   tests/interop/siw_conform.sh [BUILD_DIR [OUT]]   (default: build, BUILD/interop-conform)
#
# PASS: every pairing ran the whole table (both sides' Markdown and JUnit reports hold one row
# per check of `iwarp-conform --list` and agree), and every verdict is the one
# tests/interop/siw_conform.expected records for that check and pairing. siw's known
# deviations are FAIL rows there (docs/conform.md says which clause each breaks), so a change
# on either side, for better or worse, fails the test until the file is updated. The reports,
# the programs' output and a capture of the bridge stay in OUT; OUT/conform.md has the table.
# The wire half likewise: every check run (in rounds, below) and every verdict the one
# tests/interop/siw_wire.expected records.
#
# Exit status: 0 pass, 1 fail, 77 skip (only where QEMU/siw-vm cannot run: not root, no
# siw-vm tool, no /dev/net/tun, the guest image cannot be built or the guests do not boot).
# Bounded: the whole run is killed after INTEROP_CONFORM_SECONDS (default 480) seconds.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(readlink -f "${1:-$ROOT/build}")
OUT=${2:-$BUILD/interop-conform}
LIMIT=${INTEROP_CONFORM_SECONDS:-480}
EXPECTED=${INTEROP_CONFORM_EXPECTED:-$ROOT/tests/interop/siw_conform.expected}
WIRE_EXPECTED=${INTEROP_WIRE_EXPECTED:-$ROOT/tests/interop/siw_wire.expected}
PAIRS=${INTEROP_CONFORM_PAIRS:-softrnic/siw siw/softrnic siw/siw}

# Our own run directory and namespace, so an interactive `siw-vm up` and the other interop
# checks are not disturbed.
export SIWVM_RUN=${SIWVM_RUN:-/run/siwvm-conf} SIWVM_NETNS=${SIWVM_NETNS-siwvm-cf}
source "$ROOT/tests/interop/lib.sh"
ia_bounded "$LIMIT" "interop conform check" "$0" "$@"

# skip (exit 77) and the exit traps until our own below; sourced only in the bounded run, so
# the outer `timeout` wrapper keeps the default signal handling.
source "$ROOT/tests/lib/common.sh"

ia_need_qemu
command -v dumpcap >/dev/null || skip "dumpcap not installed (tshark)"
TOOL=$BUILD/apps/conform/iwarp-conform
for f in apps/conform/iwarp-conform verbs/libibverbs.so.1 verbs/rdmacm/librdmacm.so.1 \
	tests/tcp/linux/impair apps/conform/iwarp-conform-wire; do
	[ -e "$BUILD/$f" ] || { echo "FAIL: $BUILD/$f not built"; exit 1; }
done
[ -r "$EXPECTED" ] && [ -r "$WIRE_EXPECTED" ] ||
	{ echo "FAIL: no expectations file $EXPECTED or $WIRE_EXPECTED"; exit 1; }

rm -rf "$OUT"
ia_init "$BUILD" "$OUT" || skip "siw-vm not found (set SIWVM=/path/to/siw-vm)"
[ -n "$IA_NS" ] || { echo "FAIL: needs siw-vm's namespace (SIWVM_NETNS not empty)"; exit 1; }
# private copies: the build may be rebuilt while we run
LIBS=$OUT/dropin
mkdir -p "$LIBS"
cp -aL "$BUILD/verbs/libibverbs.so.1" "$BUILD/verbs/rdmacm/librdmacm.so.1" "$TOOL" "$LIBS/" ||
	exit 1
WIRE=$OUT/wire-peer
mkdir -p "$WIRE"
cp -aL "$BUILD/apps/conform/iwarp-conform-wire" "$BUILD/apps/conform/iwarp.py" \
	"$BUILD/apps/conform/iwcheck.py" "$WIRE/" || exit 1
N=$("$TOOL" --list | wc -l)
[ "$N" -gt 0 ] || { echo "FAIL: iwarp-conform --list lists no check"; exit 1; }
PROG_SECONDS=${INTEROP_CONFORM_PROG_SECONDS:-150}

ia_image
# the host's halves still running (a killed run), the capture, the guests and namespaces
stop_halves() {
	local p
	for p in "$OUT"/*.pid; do [ -e "$p" ] && kill "$(cat "$p")" 2>/dev/null; done
	return 0
}
trap 'stop_halves; ia_capture_stop; ia_down' EXIT
trap 'exit 143' TERM INT
ia_down   # a stale guest of an earlier, killed run
T_BOOT=$(date +%s)
ia_boot stock 2
# softrnic at .2 in a namespace of its own, its frames to the guests 5 ms late
# (docs/interop.md): the link latency that keeps siw's accept race shut on a TCG guest
ia_host_link "${IA_DELAY_MS:-5}" "$BUILD/tests/tcp/linux/impair" "$IA_NET.2/24" ||
	{ echo "FAIL: the host link (ia_host_link)"; exit 1; }
SHARE=$(cat "$SIWVM_RUN/share.path") || { echo "FAIL: siw-vm has no share"; exit 1; }
GTOOL=/mnt/host/iwarp-conform
cp "$TOOL" "$SHARE/" || exit 1
# the guest must load rdma-core's libraries and find siw's device
if ! ia_sv exec -t 60 g1 "ldd $GTOOL && $GTOOL --list >/dev/null && ibv_devices" \
	>"$OUT/guest-ldd.log" 2>&1; then
	cat "$OUT/guest-ldd.log"
	echo "FAIL: the host's iwarp-conform does not run in the guest"; exit 1
fi

# host CMD...: CMD in softrnic's namespace on the drop-in libraries
host() { ip netns exec "$IA_HOST_NS" env LD_LIBRARY_PATH="$LIBS" "$@"; }

# side_start ROLE DEV GUEST NAME PORT ADDR: one half in the background, its output and reports
# in OUT/NAME.ROLE.{out,md,xml} and its exit status in OUT/NAME.ROLE.rc once it ends. A
# guest's half runs in the background there too (siw-vm serialises a guest's foreground
# commands, and two halves may share a guest) and writes into the share.
side_start() {
	local role=$1 dev=$2 g=$3 name=$4 port=$5 addr=$6 rep=$4.$1 args
	args="--$role $addr --port $port"
	if [ "$dev" = softrnic ]; then
		# shellcheck disable=SC2086  # args is a list of words
		host timeout "$PROG_SECONDS" "$LIBS/iwarp-conform" $args --report-md "$OUT/$rep.md" \
			--junit "$OUT/$rep.xml" >"$OUT/$rep.out" 2>&1 &
		echo $! >"$OUT/$rep.pid"   # for the exit trap: `ip netns exec` and env exec timeout
		return 0
	fi
	rm -f "$SHARE/$rep".*
	ia_sv exec -b "$g" "timeout $PROG_SECONDS $GTOOL $args --report-md /mnt/host/$rep.md \
		--junit /mnt/host/$rep.xml >/mnt/host/$rep.out 2>&1; echo \$? >/mnt/host/$rep.rc.tmp; \
		mv /mnt/host/$rep.rc.tmp /mnt/host/$rep.rc" >/dev/null
}

# side_wait DEV NAME ROLE: until the half has ended; its exit status (in the same subshell as
# its side_start)
side_wait() {
	local dev=$1 rep=$2.$3 rc
	if [ "$dev" = softrnic ]; then
		wait "$(cat "$OUT/$rep.pid")"
		rc=$?
		rm -f "$OUT/$rep.pid"
		echo $rc >"$OUT/$rep.rc"
		return $rc
	fi
	for _ in $(seq $((PROG_SECONDS * 5 + 50))); do
		[ -s "$SHARE/$rep.rc" ] && break
		sleep 0.2
	done
	cp "$SHARE/$rep".* "$OUT/" 2>/dev/null
	return "$(cat "$OUT/$rep.rc" 2>/dev/null || echo 125)"
}

# pair_run PAIR PORT: one whole run of the table, server first; OUT/NAME.run says how it went.
# Halves in softrnic's namespace reach siw at g1's address; siw's clients run in g2, so g1
# holds only servers.
pair_run() {
	local pair=$1 port=$2 name=${1/\//_} sdev=${1%/*} cdev=${1#*/} sip t0 crc src
	t0=$(date +%s)
	if [ "$sdev" = softrnic ]; then sip=$IA_HOST_IP; else sip=$(ia_guest_ip g1); fi
	side_start server "$sdev" g1 "$name" "$port" "$sip" ||
		{ echo "the server did not start" >"$OUT/$name.run"; return; }
	for _ in $(seq 100); do   # the control channel listens once the rdma_cm listener does
		if [ "$sdev" = softrnic ]; then ia_host_listening $((port + 1)) && break
		else ia_guest_listening g1 $((port + 1)) && break; fi
		sleep 0.2
	done
	side_start client "$cdev" g2 "$name" "$port" "$sip"
	side_wait "$cdev" "$name" client
	crc=$?
	side_wait "$sdev" "$name" server
	src=$?
	echo "client exit $crc, server exit $src, $(($(date +%s) - t0)) s" >"$OUT/$name.run"
}
# verdicts MD [FIELD]: "id VERDICT" per row of a Markdown report (NOT APPLICABLE as NA); the
# verdict is in '|'-separated FIELD (default 6: iwarp-conform's reports; 5: the wire half's)
verdicts() {
	awk -F'|' -v f="${2:-6}" '/^\| [a-z0-9_]+ \| / {
		id = $2; v = $f; gsub(/ /, "", id); gsub(/^ +| +$/, "", v)
		if (id == "check") next   # the header
		if (v == "NOT APPLICABLE") v = "NA"
		print id, v }' "$1"
}

# expected PAIR [FILE]: "id VERDICT" per check from the expectations file (the header line
# names the pairings' columns)
expected() {
	awk -v pair="$1" '/^#/ || NF == 0 { next }
		$1 == "check" { for (i = 2; i <= NF; i++) if ($i == pair) col = i; next }
		col { print $1, $col }' "${2:-$EXPECTED}"
}

fails=0
ia_fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# pair_check PAIR: its reports against the expectations
pair_check() {
	local pair=$1 name=${1/\//_} side got want run id v w
	run=$(cat "$OUT/$name.run" 2>/dev/null)
	echo "$pair: ${run:-did not end}"
	# exit status 1 is a FAILed check, which the expectations judge; more is a broken run
	[[ $run =~ ^client\ exit\ [01],\ server\ exit\ [01], ]] || ia_fail "$pair: ${run:-did not end}"
	for side in server client; do
		if [ ! -s "$OUT/$name.$side.md" ] || [ ! -s "$OUT/$name.$side.xml" ]; then
			ia_fail "$pair: no $side report"
			tail -n 5 "$OUT/$name.$side.out" 2>/dev/null | sed 's/^/     /'
			return 1
		fi
		verdicts "$OUT/$name.$side.md" >"$OUT/$name.$side.verdicts"
	done
	got=$(wc -l <"$OUT/$name.client.verdicts")
	[ "$got" = "$N" ] || ia_fail "$pair: $got rows in the client's report, $N checks"
	cmp -s "$OUT/$name.server.verdicts" "$OUT/$name.client.verdicts" ||
		ia_fail "$pair: the server's and the client's reports disagree"
	want=$(expected "$pair")
	[ -n "$want" ] || { ia_fail "$pair: no column in $EXPECTED"; return 1; }
	judge "$pair" "$OUT/$name.client.verdicts" "$OUT/$name.client.md" 7 "$EXPECTED" "$want"
}

# judge LABEL VERDICTS REPORT FIELD FILE WANT: every verdict WANT (from FILE) expects against
# VERDICTS (the reason from REPORT's '|'-separated FIELD where they differ), and every check
# run has an expectation
judge() {
	local label=$1 got=$2 rep=$3 field=$4 file=$5 want=$6 id v w
	while read -r id w; do
		v=$(awk -v id="$id" '$1 == id { print $2 }' "$got")
		[[ "|$w|" == *"|$v|"* ]] && [ -n "$v" ] && continue   # w may be "FAIL|PASS"
		ia_fail "$label $id: ${v:-no row}, expected $w"
		grep "^| $id |" "$rep" | awk -F'|' -v f="$field" '{ print "     " $f }'
	done <<<"$want"
	while read -r id _; do
		grep -q "^$id " <<<"$want" || ia_fail "$label $id: not in $file"
	done <"$got"
}

# wire_run: the wire half against siw, in rounds, once the pairings have ended (its attacks
# leave siw's kernel state damaged: a broken listener, a refcount warning):
# `iwarp-conform --wire-target` in g2, the scripted peer in softrnic's namespace. A check that
# leaves siw's listener refusing connections ends a round (the peer exits 3), and the next
# round runs the checks left against a target restarted on fresh ports: the broken port stays
# taken in the guest's kernel. OUT/wire.rows collects the rounds' report rows.
wire_run() {
	local ids round=0 port=7571 rc=1 got gip t0
	gip=$(ia_guest_ip g2)
	t0=$(date +%s)
	ids=$(python3 "$WIRE/iwarp-conform-wire" --list | awk '{ sub(/^wire_/, "", $1); print $1 }' |
		paste -sd,)
	: >"$OUT/wire.rows"
	while [ -n "$ids" ] && [ $round -lt 10 ]; do
		round=$((round + 1))
		ia_sv exec -b g2 "echo \$\$ >/tmp/wire.pid; exec timeout $PROG_SECONDS $GTOOL \
			--wire-target $gip --port $port >/mnt/host/wire.$round.target 2>&1" >/dev/null
		for _ in $(seq 100); do
			ia_guest_listening g2 $((port + 1)) && break
			sleep 0.2
		done
		host timeout "$PROG_SECONDS" python3 "$WIRE/iwarp-conform-wire" --port $port \
			--only "$ids" --report-md "$OUT/wire.$round.md" --junit "$OUT/wire.$round.xml" \
			"$gip" >"$OUT/wire.$round.out" 2>&1
		rc=$?
		ia_sv exec -t 30 g2 'kill $(cat /tmp/wire.pid)' >/dev/null 2>&1
		cp "$SHARE/wire.$round.target" "$OUT/" 2>/dev/null
		grep '^| wire_' "$OUT/wire.$round.md" >>"$OUT/wire.rows" 2>/dev/null
		got=$(grep -o '^| wire_[a-z0-9_]*' "$OUT/wire.$round.md" 2>/dev/null |
			sed 's/^| wire_//')
		[ -n "$got" ] && [ $rc = 3 ] || break
		ids=$(tr , '\n' <<<"$ids" | grep -vxF "$got" | paste -sd,)
		port=$((port + 10))
	done
	echo "rounds $round, last exit $rc, $(($(date +%s) - t0)) s" >"$OUT/wire.run"
}

# wire_check: the wire half's rows against its expectations
wire_check() {
	local n
	echo "siw (wire): $(cat "$OUT/wire.run" 2>/dev/null || echo did not end)"
	grep -q 'last exit [01],' "$OUT/wire.run" 2>/dev/null ||
		ia_fail "wire: $(cat "$OUT/wire.run" 2>/dev/null || echo did not end)"
	verdicts "$OUT/wire.rows" 5 >"$OUT/wire.verdicts"
	n=$(python3 "$WIRE/iwarp-conform-wire" --list | wc -l)
	[ "$(wc -l <"$OUT/wire.verdicts")" = "$n" ] ||
		ia_fail "wire: $(wc -l <"$OUT/wire.verdicts") rows, $n checks"
	judge wire "$OUT/wire.verdicts" "$OUT/wire.rows" 6 "$WIRE_EXPECTED" \
		"$(expected siw "$WIRE_EXPECTED")"
}

# The pairings run at once, each on ports of its own: most of a run against siw is spent
# waiting out the 5 s a check gives an event siw never reports (docs/conform.md), and the
# waits overlap.
T_RUN=$(date +%s)
ia_capture_start conform || exit 1
port=7471
pids=()
for pair in $PAIRS; do
	pair_run "$pair" $port &
	pids+=($!)
	port=$((port + 10))
done
wait "${pids[@]}"
T_WIRE=$(date +%s)
wire_run
ia_capture_stop
echo "guests up and the host link in $((T_RUN - T_BOOT)) s, the pairings in $((T_WIRE - T_RUN)) s," \
	"the wire half in $(($(date +%s) - T_WIRE)) s"
# the guests' kernel logs: siw's accept race (F1) and the iw_cm BUG() after it (F8,
# docs/interop.md) show there first, and they would explain a check that hangs
for g in g1 g2; do
	ia_sv exec -t 30 $g dmesg >"$OUT/$g.dmesg" 2>&1
	grep -q 'kernel BUG\|cut here' "$OUT/$g.dmesg" &&
		echo "note: $g's kernel logged a BUG or warning, see $OUT/$g.dmesg"
done
for pair in $PAIRS; do
	pair_check "$pair"
done
wire_check
# OUT/conform.md: the verdicts side by side, then every row that is not PASS with its reason
{
	echo "# iwarp-conform against Linux siw (stock siw, Debian 6.12 guests; server/client)"
	echo
	printf '| check |'; for p in $PAIRS; do printf ' %s |' "$p"; done; echo
	printf '|---|'; for p in $PAIRS; do printf -- '---|'; done; echo
	"$TOOL" --list | while read -r id _; do
		printf '| %s |' "$id"
		for p in $PAIRS; do
			printf ' %s |' "$(awk -v id="$id" '$1 == id { print $2 }' \
				"$OUT/${p/\//_}.client.verdicts" 2>/dev/null)"
		done
		echo
	done
	echo
	for p in $PAIRS; do
		[ -s "$OUT/${p/\//_}.client.md" ] || continue
		echo "## $p (server/client)"
		echo
		grep -E '^\| [a-z0-9_]+ \| .*\| (FAIL|NOT APPLICABLE) \| ' "$OUT/${p/\//_}.client.md" |
			awk -F'|' '{ gsub(/ /, "", $2); print "- `" $2 "`" $6 ":" $7 }'
		echo
	done
	echo "## wire: siw as the device under test, the scripted peer on the host"
	echo
	echo '| check | clause | verdict | detail |'
	echo '|---|---|---|---|'
	awk -F'|' '{ print "|" $2 "|" $3 "|" $5 "|" $6 "|" }' "$OUT/wire.rows" 2>/dev/null
	echo
} >"$OUT/conform.md"
cat "$OUT/conform.md"

[ $fails = 0 ] && { echo "interop siw conform: PASS"; exit 0; }
echo "interop siw conform: $fails FAILED (reports, logs and captures in $OUT)"
exit 1
