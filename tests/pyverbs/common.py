"""Shared setup of softrnic's own pyverbs tests (tests/pyverbs/test_*.py).

They run with Debian's python3-pyverbs against whatever libibverbs.so.1 the dynamic loader
finds: ours when LD_LIBRARY_PATH names build/verbs (tests/pyverbs/meson.build does), or the
system's with a kernel device such as Linux siw, so that what they assert of softrnic can be
checked on the reference device too. PYVERBS_DEV names the device (default: the first one).
"""
import errno
import os
import unittest

import pyverbs.device as d
import pyverbs.enums as e
from pyverbs.pyverbs_error import PyverbsRDMAError

PORT = 1


def device_name():
    name = os.environ.get('PYVERBS_DEV')
    if name:
        return name
    devs = d.get_device_list()
    if not devs:
        raise unittest.SkipTest('no RDMA device')
    return devs[0].name.decode()


def is_softrnic(ctx_name):
    return ctx_name.startswith('softrnic')


def softrnic_xfail(why):
    """Marks a test that asserts what siw does and softrnic does not do yet (why: where it is
    being fixed) as an expected failure on softrnic only. Once fixed, the unexpected success
    fails the suite: then drop the mark."""
    try:
        on_softrnic = is_softrnic(device_name())
    except unittest.SkipTest:
        on_softrnic = False
    return unittest.expectedFailure if on_softrnic else (lambda f: f)


class DeviceTestCase(unittest.TestCase):
    """Opens the device (self.ctx) and queries it (self.attr) for each test."""

    def setUp(self):
        self.dev_name = device_name()
        self.ctx = d.Context(name=self.dev_name)
        self.attr = self.ctx.query_device()

    def tearDown(self):
        self.ctx.close()

    def assertErrno(self, code, fn, *args, **kwargs):
        """fn(*args) raises PyverbsRDMAError with error_code == code."""
        with self.assertRaises(PyverbsRDMAError) as cm:
            fn(*args, **kwargs)
        self.assertEqual(cm.exception.error_code, code,
                         f'{errno.errorcode.get(cm.exception.error_code)} '
                         f'instead of {errno.errorcode[code]}: {cm.exception}')
        return cm.exception


__all__ = ['PORT', 'DeviceTestCase', 'device_name', 'is_softrnic', 'softrnic_xfail', 'd', 'e', 'errno',
           'PyverbsRDMAError']
