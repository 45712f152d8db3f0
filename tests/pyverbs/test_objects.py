"""PD, MR and CQ create / destroy, and the errno of what the device refuses, as siw does."""
import unittest

from common import DeviceTestCase, e, errno, softrnic_xfail
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.pd import PD

LW = e.IBV_ACCESS_LOCAL_WRITE


class PDTest(DeviceTestCase):
    def test_alloc_dealloc_many(self):
        pds = [PD(self.ctx) for _ in range(64)]
        for pd in pds:
            pd.close()
        pd = PD(self.ctx)
        pd.close()
        pd.close()  # pyverbs: a second close does nothing


class MRTest(DeviceTestCase):
    def setUp(self):
        super().setUp()
        self.pd = PD(self.ctx)

    def test_reg_dereg(self):
        for access in (0, LW, LW | e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_WRITE,
                       e.IBV_ACCESS_REMOTE_READ):
            with MR(self.pd, 4096, access) as mr:
                self.assertNotEqual(mr.lkey, 0)
                mr.write(b'softrnic', 8)
                self.assertEqual(mr.read(8, 0), b'softrnic')

    def test_remote_write_needs_local_write(self):
        self.assertErrno(errno.EINVAL, MR, self.pd, 4096, e.IBV_ACCESS_REMOTE_WRITE)

    def test_remote_atomic_needs_local_write(self):
        self.assertErrno(errno.EINVAL, MR, self.pd, 4096, e.IBV_ACCESS_REMOTE_ATOMIC)

    # ib_check_mr_access() (include/rdma/ib_verbs.h): ON_DEMAND on a device without ODP is
    # EOPNOTSUPP.
    @softrnic_xfail('ibv_reg_mr with IBV_ACCESS_ON_DEMAND gives EINVAL (verbs/)')
    def test_on_demand_not_supported(self):
        self.assertErrno(errno.EOPNOTSUPP, MR, self.pd, 4096, LW | e.IBV_ACCESS_ON_DEMAND)


class CQTest(DeviceTestCase):
    def test_create_destroy(self):
        for cqe in (1, 100, self.attr.max_cqe):
            cq = CQ(self.ctx, cqe, None, None, 0)
            self.assertGreaterEqual(cq.cqe, cqe)
            cq.close()

    def test_too_many_cqe(self):
        self.assertErrno(errno.EINVAL, CQ, self.ctx, self.attr.max_cqe + 1, None, None, 0)

    def test_zero_cqe(self):
        self.assertErrno(errno.EINVAL, CQ, self.ctx, 0, None, None, 0)

    def test_bad_comp_vector(self):
        self.assertErrno(errno.EINVAL, CQ, self.ctx, 10, None, None,
                         self.ctx.num_comp_vectors)


if __name__ == '__main__':
    unittest.main()
