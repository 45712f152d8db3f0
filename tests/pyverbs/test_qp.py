"""QP create / destroy on an iWARP device: RC only, in INIT after create (as siw), and the
errno of what iWARP lacks (UD, UC, raw packet) or of capabilities over the limits."""
import unittest

from common import DeviceTestCase, e, errno
from pyverbs.cq import CQ
from pyverbs.pd import PD
from pyverbs.qp import QP, QPCap, QPInitAttr

class QPTest(DeviceTestCase):
    def setUp(self):
        super().setUp()
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 64, None, None, 0)

    def init_attr(self, qp_type=e.IBV_QPT_RC, **cap):
        c = dict(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
        c.update(cap)
        return QPInitAttr(qp_type=qp_type, scq=self.cq, rcq=self.cq, cap=QPCap(**c))

    def test_rc_create_destroy(self):
        qps = [QP(self.pd, self.init_attr()) for _ in range(8)]
        nums = {qp.qp_num for qp in qps}
        self.assertEqual(len(nums), 8)
        for qp in qps:
            self.assertEqual(qp.qp_type, e.IBV_QPT_RC)
            qp.close()

    def test_rc_caps_reported(self):
        qp = QP(self.pd, self.init_attr(max_send_wr=10, max_recv_wr=12))
        attr, init = qp.query(e.IBV_QP_CAP)
        self.assertGreaterEqual(init.cap.max_send_wr, 10)
        self.assertGreaterEqual(init.cap.max_recv_wr, 12)
        self.assertGreaterEqual(init.cap.max_send_sge, 1)
        self.assertGreaterEqual(init.cap.max_recv_sge, 1)
        qp.close()

    # siw's QPs start in its IDLE state, which it reports as IB_QPS_INIT; rdma-core's
    # test_query_rc_qp expects that of any IBV_NODE_RNIC.
    def test_rc_state_after_create_is_init(self):
        qp = QP(self.pd, self.init_attr())
        attr, _ = qp.query(e.IBV_QP_STATE)
        self.assertEqual(attr.qp_state, e.IBV_QPS_INIT)
        qp.close()

    def test_rc_to_init(self):
        """Modifying the new QP to INIT (what QP(pd, init, QPAttr) does) is accepted."""
        from pyverbs.qp import QPAttr
        qp = QP(self.pd, self.init_attr(), QPAttr(port_num=1))
        attr, _ = qp.query(e.IBV_QP_STATE)
        self.assertEqual(attr.qp_state, e.IBV_QPS_INIT)
        qp.close()

    def test_ud_not_supported(self):
        self.assertErrno(errno.EOPNOTSUPP, QP, self.pd, self.init_attr(e.IBV_QPT_UD))

    def test_uc_not_supported(self):
        self.assertErrno(errno.EOPNOTSUPP, QP, self.pd, self.init_attr(e.IBV_QPT_UC))

    def test_raw_packet_not_supported(self):
        self.assertErrno(errno.EOPNOTSUPP, QP, self.pd, self.init_attr(e.IBV_QPT_RAW_PACKET))

    def test_too_many_wr(self):
        self.assertErrno(errno.EINVAL, QP, self.pd,
                         self.init_attr(max_send_wr=self.attr.max_qp_wr + 1))
        self.assertErrno(errno.EINVAL, QP, self.pd,
                         self.init_attr(max_recv_wr=self.attr.max_qp_wr + 1))

    def test_too_many_sge(self):
        self.assertErrno(errno.EINVAL, QP, self.pd,
                         self.init_attr(max_send_sge=self.attr.max_sge + 1))
        self.assertErrno(errno.EINVAL, QP, self.pd,
                         self.init_attr(max_recv_sge=self.attr.max_sge + 1))


if __name__ == '__main__':
    unittest.main()
