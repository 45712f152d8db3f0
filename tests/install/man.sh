#!/bin/sh
# Every manual page renders with man -l and no warning from man or groff (lintian's check),
# and has the sections a page needs: NAME, SYNOPSIS or DESCRIPTION, SEE ALSO.
# Usage: man.sh PAGE...
set -u
TEST_NAME=man_pages
. "$(dirname "$0")/../lib/common.sh"
need_cmd man man-db
[ $# -gt 0 ] || fail "no pages given"
for page in "$@"; do
	[ -s "$page" ] || fail "$page: missing or empty"
	err=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
		man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
	[ -z "$err" ] || fail "$page: $err"
	text=$(MANWIDTH=80 man -l "$page" 2>/dev/null) || fail "$page: man -l failed"
	for s in NAME 'SEE ALSO'; do
		echo "$text" | grep -q "^$s" || fail "$page: no section $s"
	done
	echo "$text" | grep -Eq '^(SYNOPSIS|DESCRIPTION)' || fail "$page: no SYNOPSIS or DESCRIPTION"
	name=$(basename "$page")
	echo "$text" | sed -n '/^NAME/{n;p;}' | grep -q "^ *${name%.*} - " ||
		fail "$page: NAME does not start with '${name%.*} - '"
done
echo "$TEST_NAME: OK ($# pages)"
