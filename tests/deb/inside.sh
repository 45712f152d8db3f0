#!/bin/sh
# Run by tests/deb/deb.sh inside its own root: installs the packages with dpkg, then uses
# softrnic from the installed files only: softrnic-run with Debian's ibv_devinfo, rping and
# perftest, a VIPL ping-pong, programs built with the documented link lines, the manual pages.
# Usage: inside.sh DEB_DIR SOURCE_DIR
set -u
TEST_NAME=deb_inside
SRC=${2:?usage: inside.sh DEB_DIR SOURCE_DIR}
. "$SRC/tests/lib/common.sh"
DEBS=${1:?usage: inside.sh DEB_DIR SOURCE_DIR}
unset LD_LIBRARY_PATH SOFTRNIC_CONF
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

command -v softrnic-run >/dev/null && fail "softrnic-run is there before the packages"
dpkg -i "$DEBS"/*.deb >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; fail "dpkg -i failed"; }
for p in softrnic libsoftrnic-dev softrnic-vipl; do
	dpkg-query -W -f='${Status}\n' "$p" | grep -q 'install ok installed' || fail "$p not installed"
done

# rdma-core's libraries stay the system's; softrnic-run puts ours first.
ibv_devinfo 2>/dev/null | grep -q softrnic0 && fail "plain ibv_devinfo sees softrnic0"
out=$(timeout "$PROG_TIMEOUT" softrnic-run ibv_devinfo) || fail "softrnic-run ibv_devinfo failed"
echo "$out" | grep -q 'hca_id:[[:space:]]*softrnic0' || fail "ibv_devinfo: no softrnic0: $out"

pick_port
start_server timeout "$PROG_TIMEOUT" softrnic-run rping -s -a 127.0.0.1 -p "$PORT" -V -C 20 \
	>/tmp/rping.s 2>&1
wait_listen "$PORT" || fail "rping server is not listening: $(cat /tmp/rping.s)"
timeout "$PROG_TIMEOUT" softrnic-run rping -c -a 127.0.0.1 -p "$PORT" -v -V -C 20 >/tmp/rping.c ||
	fail "rping client failed: $(cat /tmp/rping.c)"
wait_server "rping server: $(cat /tmp/rping.s)"
[ "$(grep -c '^ping data: rdma-ping-' /tmp/rping.c)" -eq 20 ] || fail "rping: not 20 pings"

# perftest's -R pair; its connect race (docs/dropin.md) may reject the client once
perf_pair() {
	pick_port
	start_server timeout "$PROG_TIMEOUT" softrnic-run ib_write_bw -R -p "$PORT" -n 200 \
		>/tmp/perf.s 2>&1
	wait_listen "$PORT" || fail "ib_write_bw server is not listening: $(cat /tmp/perf.s)"
	timeout "$PROG_TIMEOUT" softrnic-run ib_write_bw -R -p "$PORT" -n 200 127.0.0.1 \
		>/tmp/perf.c 2>&1
	prc=$?
	[ "$prc" -eq 0 ] || { kill_server; return "$prc"; }
	wait_server "ib_write_bw server: $(cat /tmp/perf.s)"
}
if ! perf_pair; then
	grep -Eq 'RDMA_CM_EVENT_REJECTED; error: -1(11|04)\.' /tmp/perf.c ||
		fail "ib_write_bw client failed: $(cat /tmp/perf.c)"
	echo "$TEST_NAME: ib_write_bw: perftest's connect race (refused), running again" >&2
	perf_pair || fail "ib_write_bw client failed: $(cat /tmp/perf.c)"
fi
grep -Eq '^ *65536 +200 ' /tmp/perf.c || fail "ib_write_bw printed no result: $(cat /tmp/perf.c)"

pick_port
start_server timeout "$PROG_TIMEOUT" vipl-pingpong -s -l "127.0.0.1:$PORT" -n 200 -v >/tmp/pp.s 2>&1
wait_listen "$PORT" || fail "vipl-pingpong server is not listening: $(cat /tmp/pp.s)"
PS=$PORT
pick_port
out=$(timeout "$PROG_TIMEOUT" vipl-pingpong -c "127.0.0.1:$PS" -l "127.0.0.1:$PORT" -n 200 -v) ||
	fail "vipl-pingpong client failed: $out"
wait_server "vipl-pingpong server: $(cat /tmp/pp.s)"

# the link lines of README.md and docs/, against the packages' headers and libraries
mkdir /tmp/w && cp "$SRC"/tests/install/app.c "$SRC"/tests/install/via_app.c \
	"$SRC"/tests/install/via_dlopen.c /tmp/w/ && cd /tmp/w || fail "cannot copy the programs"
cc -o app app.c $(pkg-config --cflags --libs softrnic softrnic-vipl) || fail "app: link"
cc -o via_app via_app.c -lvipl || fail "via_app: link"
cc -o via_dlopen via_dlopen.c || fail "via_dlopen: link"
./app && ./via_app && ./via_dlopen || fail "a program of the link lines failed"

for page in softrnic-run softrnic.conf softrnic vipl-pingpong softrnic-port; do
	MANWIDTH=80 man "$page" 2>/dev/null | grep -q '^NAME' || fail "man $page"
done
echo "$TEST_NAME: OK"
