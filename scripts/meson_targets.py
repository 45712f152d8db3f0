#!/usr/bin/env python3
"""Prints the ninja targets that a selection of a build's tests needs, one per line, so that
scripts/test.sh builds only those in the builds that run part of the tests (a link-time
optimised link of every program costs minutes).

  meson_targets.py BUILD_DIR [--suite S]... [--no-suite S]... [NAME]...
      the programs the selected tests run or take as arguments, and their `depends`; a test
      is selected as `meson test` selects it: in one of the --suite suites or named (every
      test when there is neither), and in none of the --no-suite suites
  meson_targets.py BUILD_DIR --prefix P
      the executables whose name starts with P
"""
import json
import os
import subprocess
import sys


def introspect(build, what):
    out = subprocess.run(["meson", "introspect", build, what], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def suites_of(test):
    # "softrnic:dropin" -> "dropin"
    return {s.split(":", 1)[-1] for s in test["suite"]}


def parse(argv):
    want, skip, names, prefix = set(), set(), set(), None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--suite", "--no-suite", "--prefix") and i + 1 < len(argv):
            {"--suite": want, "--no-suite": skip}.get(a, set()).add(argv[i + 1])
            prefix = argv[i + 1] if a == "--prefix" else prefix
            i += 2
            continue
        names.add(a)
        i += 1
    return want, skip, names, prefix


def selected(test, want, skip, names):
    s = suites_of(test)
    chosen = test["name"] in names or bool(s & want) or not (want or names)
    return chosen and not s & skip


def rel(build, path):
    return os.path.relpath(path, os.path.abspath(build))


def main(argv):
    if not argv:
        sys.exit(__doc__)
    build = argv[0]
    want, skip, names, prefix = parse(argv[1:])
    targets = introspect(build, "--targets")
    if prefix is not None:
        for t in targets:
            if t["type"] == "executable" and t["name"].startswith(prefix):
                print(rel(build, t["filename"][0]))
        return
    by_file = {f: t for t in targets for f in t["filename"]}
    by_id = {t["id"]: t for t in targets}
    need = set()
    for test in introspect(build, "--tests"):
        if not selected(test, want, skip, names):
            continue
        need.update(d for d in test.get("depends", []) if d in by_id)
        need.update(by_file[a]["id"] for a in test["cmd"] if a in by_file)
    for i in sorted(need):
        for f in by_id[i]["filename"]:
            print(rel(build, f))


if __name__ == "__main__":
    main(sys.argv[1:])
