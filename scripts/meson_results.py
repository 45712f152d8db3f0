#!/usr/bin/env python3
"""Reads a meson testlog.json for scripts/test.sh.

  meson_results.py count LOG      prints "OK BAD NAME..." (NAME = suite-qualified test names
                                  that failed, as `meson test` accepts them)
  meson_results.py show LOG NAME  prints the end of each named test's output, so that the one
                                  line a CI log keeps of a failure comes with its reason
"""
import json
import sys

TAIL_LINES = 40


def records(path):
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                yield json.loads(line)


def short_name(full):
    # "softrnic:verbs / verbs_imm" -> "verbs_imm" is what `meson test NAME` takes
    return full.split(" / ", 1)[-1]


def count(path):
    ok = bad = 0
    names = []
    for r in records(path):
        if r["result"] in ("OK", "EXPECTEDFAIL", "SKIP"):
            ok += 1
        else:
            bad += 1
            names.append(short_name(r["name"]))
    print(ok, bad, " ".join(names))


def show(path, wanted):
    for r in records(path):
        if short_name(r["name"]) not in wanted or r["result"] in ("OK", "EXPECTEDFAIL", "SKIP"):
            continue
        print(f"---- {r['name']}: {r['result']} (rc {r.get('returncode')}, "
              f"{r.get('duration', 0):.1f} s)")
        out = (r.get("stdout") or "") + (r.get("stderr") or "")
        for line in out.splitlines()[-TAIL_LINES:]:
            print("   ", line)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "count":
        count(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "show":
        show(sys.argv[2], set(sys.argv[3:]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
