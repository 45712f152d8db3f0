#!/usr/bin/python3
"""Runs rdma-core's Python test suite (its tests/ directory, fetched by
scripts/rdma-core-tests.sh) in this process, as tests/run_tests.py would, and compares the
outcome of every test with an expectations file.

    rdma_core.py TESTS_DIR EXPECTED [--record FILE] [--seed N] [-- run_tests.py options]

EXPECTED has one line per test: the unittest id, blanks, then one of
    ok
    skip:<a substring of the skip reason>
    fail:<why it fails here>        (a failure or an error)
or several of them separated by '|' when the outcome depends on a random draw of the test.
'#' starts a comment. Exit 1 when a test does worse than expected (skip or fail where ok was
expected, a failure where a skip was expected, a skip for another reason), when a test is not
listed, when a listed test did not run, and also when a test does better than expected (so
that EXPECTED stays true): each is named. --record FILE writes what happened in EXPECTED's
format (fail reasons are the exception's last line), to start or refresh the file.
"""
import faulthandler
import importlib.machinery
import os
import random
import sys
import time
import traceback
import unittest


def load_expected(path):
    exp = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            tid, _, want = line.partition(' ')
            alts = []
            for w in want.split('|'):
                kind, _, arg = w.strip().partition(':')
                arg = arg.strip()
                if kind not in ('ok', 'skip', 'fail') or (kind == 'ok' and arg) or \
                        (kind != 'ok' and not arg):
                    sys.exit(f'{path}:{n}: bad expectation {want.strip()!r}')
                alts.append((kind, arg))
            if tid in exp:
                sys.exit(f'{path}:{n}: {tid} listed twice')
            exp[tid] = alts
    return exp


def matches(kind, detail, alts):
    for want, arg in alts:
        if kind == want and (kind != 'skip' or arg in detail):
            return True
    return False


class Result(unittest.TestResult):
    """Keeps one outcome per test id: ('ok'|'skip'|'fail', detail)."""

    def __init__(self):
        super().__init__()
        self.outcome = {}
        self.order = []
        self.tracebacks = []

    def startTest(self, test):
        super().startTest(test)
        self.order.append(test.id())
        # Printed first, so that a crash of the process names the test that caused it.
        print(f'{test.id()} ...', end=' ', flush=True)
        self._t0 = time.monotonic()

    def _set(self, test, kind, detail=''):
        tid = test.id()
        # A failed subtest or a tearDown error after a pass makes the test a failure.
        if self.outcome.get(tid, ('',))[0] != 'fail':
            self.outcome[tid] = (kind, detail)

    def stopTest(self, test):
        super().stopTest(test)
        kind, detail = self.outcome.setdefault(test.id(), ('ok', ''))
        dt = time.monotonic() - self._t0
        print(f'{kind}{": " + detail if detail else ""} ({dt:.2f} s)', flush=True)

    def addSuccess(self, test):
        self._set(test, 'ok')

    def addSkip(self, test, reason):
        self._set(test, 'skip', reason)

    def _err(self, test, err):
        lines = traceback.format_exception(*err)
        self.tracebacks.append((test.id(), ''.join(lines)))
        last = lines[-1].strip().replace('\n', ' ')
        self._set(test, 'fail', last)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._err(test, err)

    def addError(self, test, err):
        # A SkipTest raised in setUpClass arrives here from a _ErrorHolder.
        if issubclass(err[0], unittest.SkipTest):
            self._set(test, 'skip', str(err[1]))
            return
        super().addError(test, err)
        self._err(test, err)

    def addSubTest(self, test, subtest, err):
        if err is not None:
            if issubclass(err[0], test.failureException):
                super().addFailure(subtest, err)
            else:
                super().addError(subtest, err)
            self._err(test, err)

    def addExpectedFailure(self, test, err):
        self._set(test, 'ok')

    def addUnexpectedSuccess(self, test):
        self._set(test, 'fail', 'unexpected success')


def main():
    argv = sys.argv[1:]
    passthrough = []
    if '--' in argv:
        i = argv.index('--')
        argv, passthrough = argv[:i], argv[i + 1:]
    record = None
    seed = 0
    if '--seed' in argv:
        i = argv.index('--seed')
        seed = int(argv[i + 1])
        del argv[i:i + 2]
    if '--record' in argv:
        i = argv.index('--record')
        record = argv[i + 1]
        del argv[i:i + 2]
    if len(argv) != 2:
        sys.exit(__doc__)
    tests_dir, expected_path = argv
    tests_dir = os.path.abspath(tests_dir)
    expected = load_expected(expected_path)

    faulthandler.enable()
    # What run_tests.py does: its directory first on sys.path (for args_parser), the
    # package loaded as 'tests', its argument parser given the command line.
    sys.path.insert(0, tests_dir)
    sys.argv = [os.path.join(tests_dir, 'run_tests.py')] + passthrough
    from args_parser import parser
    parser.parse_args()
    tests = importlib.machinery.SourceFileLoader(
        'tests', os.path.join(tests_dir, '__init__.py')).load_module()
    suite = unittest.defaultTestLoader.loadTestsFromModule(tests)

    # rdma-core's tests draw QP attributes at random (tests/utils.py): a QP created through
    # ibv_create_qp_ex with or without IBV_QP_INIT_ATTR_CREATE_FLAGS, for one. A fixed seed
    # makes a run repeatable; EXPECTED lists both outcomes where the draw decides.
    random.seed(seed)
    result = Result()
    t0 = time.monotonic()
    suite.run(result)
    took = time.monotonic() - t0

    for tid, tb in result.tracebacks:
        print(f'\n==== {tid}\n{tb}', end='')

    got = result.outcome
    counts = {}
    for kind, _ in got.values():
        counts[kind] = counts.get(kind, 0) + 1
    print(f'\nrdma-core tests: {len(got)} run in {took:.1f} s: ' +
          ', '.join(f'{counts.get(k, 0)} {k}' for k in ('ok', 'skip', 'fail')))

    if record:
        with open(record, 'w') as f:
            for tid in result.order:
                kind, detail = got[tid]
                f.write(f'{tid} {kind}{":" + detail if kind != "ok" else ""}\n')
        print(f'recorded in {record}')

    problems = []
    for tid in result.order:
        kind, detail = got[tid]
        if tid not in expected:
            problems.append(f'{tid}: not in {expected_path} (got {kind}'
                            f'{": " + detail if detail else ""})')
            continue
        alts = expected[tid]
        if matches(kind, detail, alts):
            continue
        shown = ' | '.join(w + (':' + a if a else '') for w, a in alts)
        if kind == 'ok':
            problems.append(f'{tid}: passes now, expected {shown} (update {expected_path})')
        else:
            problems.append(f'{tid}: {kind}: {detail} (expected {shown})')
    for tid in expected:
        if tid not in got:
            problems.append(f'{tid}: listed in {expected_path} but did not run')
    if problems:
        print(f'\n{len(problems)} test(s) differ from {expected_path}:')
        for p in problems:
            print('  ' + p)
        return 1
    print(f'every test as {expected_path} expects')
    return 0


if __name__ == '__main__':
    sys.exit(main())
