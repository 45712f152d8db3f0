#!/usr/bin/env python3
"""Checks iwarp-conform's JUnit reports (tests/conform/conform.sh): each is well-formed XML
with one testsuite whose counts match its testcases, one testcase per check (N), each naming
its clause, exactly the checks given as FAILED with a <failure>, and every report shows the
same verdict for every check (both sides' views agree).

Usage: junit_check.py N FAILED_IDS REPORT.xml... (FAILED_IDS: comma-separated, or "-")
Exit 0 when every report holds, 1 with the reasons otherwise."""
import sys
import xml.etree.ElementTree as ET


def verdicts(path, n, failed, errors):
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        errors.append(f"{path}: not well-formed: {e}")
        return {}
    suites = root.findall("testsuite") if root.tag == "testsuites" else [root]
    if root.tag not in ("testsuites", "testsuite") or len(suites) != 1:
        errors.append(f"{path}: expected one testsuite, saw {len(suites)} under <{root.tag}>")
        return {}
    suite = suites[0]
    cases = suite.findall("testcase")
    out = {}
    for c in cases:
        name = c.get("name", "")
        clause = [p.get("value") for p in c.iter("property") if p.get("name") == "clause"]
        if not name or name in out:
            errors.append(f"{path}: testcase name '{name}' empty or repeated")
        if not clause or not clause[0]:
            errors.append(f"{path}: testcase {name} names no clause")
        kinds = [k for k in ("failure", "skipped", "error") if c.find(k) is not None]
        if len(kinds) > 1 or any(not c.find(k).get("message") for k in kinds):
            errors.append(f"{path}: testcase {name}: {kinds} without one message")
        out[name] = kinds[0] if kinds else "pass"
    counts = {"tests": len(cases),
              "failures": sum(v == "failure" for v in out.values()),
              "skipped": sum(v == "skipped" for v in out.values()),
              "errors": sum(v == "error" for v in out.values())}
    for attr, want in counts.items():
        if suite.get(attr) != str(want):
            errors.append(f"{path}: {attr}=\"{suite.get(attr)}\" but {want} testcases say so")
    if len(cases) != n:
        errors.append(f"{path}: {len(cases)} testcases, expected {n} (one per check)")
    got_failed = {k for k, v in out.items() if v == "failure"}
    if got_failed != failed:
        errors.append(f"{path}: failed {sorted(got_failed)}, expected {sorted(failed)}")
    return out


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    n = int(sys.argv[1])
    failed = set() if sys.argv[2] == "-" else set(sys.argv[2].split(","))
    errors = []
    views = [(p, verdicts(p, n, failed, errors)) for p in sys.argv[3:]]
    for p, v in views[1:]:
        if v and views[0][1] and v != views[0][1]:
            errors.append(f"{p} and {views[0][0]} disagree: {v} / {views[0][1]}")
    for e in errors:
        print("junit_check: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
