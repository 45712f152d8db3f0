/* Local checks: each side runs them on its own device (verbs §9.2, checklist T01-T07, T30),
 * so the row holds both devices' answers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ck.h"

/* T01, verbs §9.2.1.2: what Query RNIC reports is usable, and the device is an RNIC. */
int ck_device_attrs(struct ic *ic)
{
	struct ibv_device_attr a;
	struct ibv_port_attr p;
	int rc = ibv_query_device(ic->ctx, &a);
	EXPECT(ic, rc == 0, "ibv_query_device failed: %s", strerror(rc));
	EXPECT(ic, ic->ctx->device->node_type == IBV_NODE_RNIC &&
		   ic->ctx->device->transport_type == IBV_TRANSPORT_IWARP,
	       "expected an iWARP RNIC (node type RNIC, transport iWARP), saw node type %s",
	       ibv_node_type_str(ic->ctx->device->node_type));
	EXPECT(ic, a.max_qp > 0 && a.max_qp_wr > 0 && a.max_sge > 0 && a.max_cq > 0 &&
		   a.max_cqe > 0 && a.max_mr > 0 && a.max_pd > 0 && a.max_mr_size > 0,
	       "expected every maximum above 0, saw max_qp %d max_qp_wr %d max_sge %d max_cq %d "
	       "max_cqe %d max_mr %d max_pd %d", a.max_qp, a.max_qp_wr, a.max_sge, a.max_cq,
	       a.max_cqe, a.max_mr, a.max_pd);
	EXPECT(ic, (a.max_srq == 0) == (a.max_srq_wr == 0),
	       "expected max_srq and max_srq_wr both 0 or both above 0 (§6.3), saw %d and %d",
	       a.max_srq, a.max_srq_wr);
	EXPECT(ic, a.phys_port_cnt >= 1, "expected at least one port, saw %u", a.phys_port_cnt);
	rc = ibv_query_port(ic->ctx, 1, &p);
	EXPECT(ic, rc == 0, "ibv_query_port(1) failed: %s", strerror(rc));
	EXPECT(ic, p.state == IBV_PORT_ACTIVE, "expected port 1 ACTIVE, saw %s",
	       ibv_port_state_str(p.state));
	EXPECT(ic, p.max_msg_sz > 0, "expected port 1 max_msg_sz above 0, saw 0");
	return 0;
}

/* T02 (§5.2.2, §9.2.2.2): a PD with an MR is in use; T30 (§7.4, Fig. 18): Remote Write
 * needs Local Write. */
int ck_pd_mr(struct ic *ic)
{
	size_t len = 8192;
	uint8_t *mem = calloc(1, len);
	EXPECT(ic, mem, "out of memory");
	struct ibv_pd *pd = ibv_alloc_pd(ic->ctx);
	int rc = -1;
	struct ibv_mr *mr = NULL, *bad = NULL;
	if (!pd) {
		ic_fail(ic, "ibv_alloc_pd failed: %s", strerror(errno));
		goto out;
	}
	mr = ibv_reg_mr(pd, mem, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_REMOTE_READ);
	if (!mr) {
		ic_fail(ic, "ibv_reg_mr(LW|RW|RR) failed: %s", strerror(errno));
		goto out;
	}
	if (mr->addr != mem || mr->length != len || mr->pd != pd) {
		ic_fail(ic, "MR reports addr %p length %zu, registered %p length %zu", mr->addr,
			mr->length, (void *)mem, len);
		goto out;
	}
	int e = ibv_dealloc_pd(pd);
	if (e != EBUSY) {
		if (e == 0)
			pd = NULL;
		ic_fail(ic, "ibv_dealloc_pd of a PD with an MR: expected EBUSY, saw %s",
			e ? strerror(e) : "success");
		goto out;
	}
	errno = 0;
	bad = ibv_reg_mr(pd, mem, len, IBV_ACCESS_REMOTE_WRITE);
	if (bad || errno != EINVAL) {
		ic_fail(ic, "ibv_reg_mr(Remote Write without Local Write): expected EINVAL, saw %s",
			bad ? "an MR" : strerror(errno));
		goto out;
	}
	e = ibv_dereg_mr(mr);
	mr = NULL;
	if (e != 0) {
		ic_fail(ic, "ibv_dereg_mr failed: %s", strerror(e));
		goto out;
	}
	e = ibv_dealloc_pd(pd);
	pd = NULL;
	if (e != 0) {
		ic_fail(ic, "ibv_dealloc_pd of an unused PD failed: %s", strerror(e));
		goto out;
	}
	rc = 0;
out:
	if (bad)
		ibv_dereg_mr(bad);
	if (mr)
		ibv_dereg_mr(mr);
	if (pd)
		ibv_dealloc_pd(pd);
	free(mem);
	return rc;
}

static struct ibv_qp *rc_qp(struct ic *ic, struct ibv_cq *cq, uint32_t swr, uint32_t ssge)
{
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = swr, .max_recv_wr = 4, .max_send_sge = ssge,
			 .max_recv_sge = 1 } };
	return ibv_create_qp(ic->pd, &qa);
}

/* T03 (§5.3.1, §5.3.4, §9.2.3): CQ size limits, an empty poll, a CQ in use. */
int ck_cq(struct ic *ic)
{
	errno = 0;
	struct ibv_cq *big = ibv_create_cq(ic->ctx, ic->dev.max_cqe + 1, NULL, NULL, 0);
	if (big)
		ibv_destroy_cq(big);
	EXPECT(ic, !big && errno == EINVAL,
	       "ibv_create_cq(max_cqe + 1 = %d): expected EINVAL, saw %s", ic->dev.max_cqe + 1,
	       big ? "a CQ" : strerror(errno));
	struct ibv_cq *cq = ibv_create_cq(ic->ctx, 1, NULL, NULL, 0);
	EXPECT(ic, cq, "ibv_create_cq(1) failed: %s", strerror(errno));
	struct ibv_wc wc;
	int cqe = cq->cqe, n = ibv_poll_cq(cq, 1, &wc);
	struct ibv_qp *qp = rc_qp(ic, cq, 4, 1);
	int qp_errno = errno;
	int busy = qp ? ibv_destroy_cq(cq) : -1;
	if (qp)
		ibv_destroy_qp(qp);
	int gone = busy == 0 ? 0 : ibv_destroy_cq(cq);
	EXPECT(ic, cqe >= 1, "ibv_create_cq(1) gave %d entries", cqe);
	EXPECT(ic, n == 0, "polling an empty CQ: expected 0, saw %d", n);
	EXPECT(ic, qp, "ibv_create_qp on the CQ failed: %s", strerror(qp_errno));
	EXPECT(ic, busy == EBUSY, "ibv_destroy_cq of a CQ a QP uses: expected EBUSY, saw %s",
	       busy ? strerror(busy) : "success");
	EXPECT(ic, gone == 0, "ibv_destroy_cq of an unused CQ failed: %s", strerror(gone));
	return 0;
}

/* T04 (§9.2.5.1, §8.1.3.2): invalid QP requests fail and create nothing; a valid one gives
 * at least what was asked, in Idle. */
int ck_qp_create(struct ic *ic)
{
	struct ibv_cq *cq = ibv_create_cq(ic->ctx, 16, NULL, NULL, 0);
	EXPECT(ic, cq, "ibv_create_cq(16) failed: %s", strerror(errno));
	struct ibv_qp *q1, *q2, *q3, *ok;
	int e1, e2, e3;
	errno = 0;
	q1 = rc_qp(ic, cq, 4, (uint32_t)ic->dev.max_sge + 1);
	e1 = errno;
	errno = 0;
	q2 = rc_qp(ic, cq, (uint32_t)ic->dev.max_qp_wr + 1, 1);
	e2 = errno;
	struct ibv_qp_init_attr ud = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	errno = 0;
	q3 = ibv_create_qp(ic->pd, &ud);
	e3 = errno;
	ok = rc_qp(ic, cq, 4, 1);
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int qrc = ok ? ibv_query_qp(ok, &a, IBV_QP_STATE | IBV_QP_CAP, &ia) : -1;
	for (struct ibv_qp **q = (struct ibv_qp *[]){ q1, q2, q3, ok }, **e = q + 4; q < e; q++)
		if (*q && *q != ok)
			ibv_destroy_qp(*q);
	uint32_t num = ok ? ok->qp_num : 0;
	if (ok)
		ibv_destroy_qp(ok);
	ibv_destroy_cq(cq);
	EXPECT(ic, !q1 && e1 == EINVAL, "max_send_sge = max_sge + 1: expected EINVAL, saw %s",
	       q1 ? "a QP" : strerror(e1));
	EXPECT(ic, !q2 && e2 == EINVAL, "max_send_wr = max_qp_wr + 1: expected EINVAL, saw %s",
	       q2 ? "a QP" : strerror(e2));
	EXPECT(ic, !q3 && e3 == EOPNOTSUPP,
	       "a UD QP on iWARP: expected EOPNOTSUPP, saw %s", q3 ? "a QP" : strerror(e3));
	EXPECT(ic, ok, "ibv_create_qp(RC, 4 WRs, 1 SGE) failed: %s", strerror(errno));
	EXPECT(ic, qrc == 0, "ibv_query_qp failed: %s", strerror(qrc));
	EXPECT(ic, a.qp_state == IBV_QPS_RESET || a.qp_state == IBV_QPS_INIT ||
		   a.qp_state == IBV_QPS_RTR,
	       "a new QP: expected Idle (RESET, INIT or RTR), saw state %d", a.qp_state);
	EXPECT(ic, a.cap.max_send_wr >= 4 && a.cap.max_recv_wr >= 4 && a.cap.max_send_sge >= 1 &&
		   a.cap.max_recv_sge >= 1,
	       "a new QP: expected at least 4/4 WRs and 1/1 SGEs, saw %u/%u and %u/%u",
	       a.cap.max_send_wr, a.cap.max_recv_wr, a.cap.max_send_sge, a.cap.max_recv_sge);
	EXPECT(ic, num != 0, "a new QP has QP number 0");
	return 0;
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* The QP part of ck_qp_states, on a QP the caller destroys. */
static int qp_states(struct ic *ic, struct ibv_qp *qp, struct ibv_cq *cq)
{
	int rc = to_state(qp, IBV_QPS_RTS);
	EXPECT(ic, rc != 0, "Idle -> RTS without a connection succeeded (T07 wants an error)");
	if (ic_expect_qp_idle(ic, qp) != 0)
		return -1;
	rc = to_state(qp, IBV_QPS_ERR);
	EXPECT(ic, rc == 0, "Idle -> ERR failed: %s", strerror(rc));
	if (ic_expect_qp_state(ic, qp, IBV_QPS_ERR) != 0)
		return -1;
	rc = to_state(qp, IBV_QPS_RTS);
	EXPECT(ic, rc != 0, "ERR -> RTS succeeded (T06 wants an error)");
	if (ic_expect_qp_state(ic, qp, IBV_QPS_ERR) != 0)
		return -1;
	struct ic_buf *b = ic_buf_new(ic, 64, IBV_ACCESS_LOCAL_WRITE, 0);
	EXPECT(ic, b, "ibv_reg_mr failed: %s", strerror(errno));
	struct ibv_sge sg = ic_sge(b, 0, 64);
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sg, .num_sge = 1 }, *bad;
	rc = ibv_post_recv(qp, &wr, &bad);
	EXPECT(ic, rc == 0, "ibv_post_recv in ERR: expected it accepted, saw %s", strerror(rc));
	ic->conn.qp = qp;
	rc = ic_expect_wc(ic, cq, 7, IBV_WC_WR_FLUSH_ERR, NULL);
	ic->conn.qp = NULL;
	if (rc)
		return -1;
	rc = to_state(qp, IBV_QPS_RESET);
	EXPECT(ic, rc == 0, "ERR -> RESET once flushed failed: %s", strerror(rc));
	return ic_expect_qp_idle(ic, qp);
}

/* T05-T07 (§6.2): no RTS without a connection, Error from Idle, no way back to RTS, a
 * Receive posted in Error is flushed, Error -> Idle (modify to RESET) once flushed. */
int ck_qp_states(struct ic *ic)
{
	struct ibv_cq *cq = ibv_create_cq(ic->ctx, 16, NULL, NULL, 0);
	EXPECT(ic, cq, "ibv_create_cq(16) failed: %s", strerror(errno));
	struct ibv_qp *qp = rc_qp(ic, cq, 4, 1);
	int rc = qp ? qp_states(ic, qp, cq) : ic_fail(ic, "ibv_create_qp failed: %s",
						       strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	return rc;
}

/* Post n Receives (wr_id first..first+n-1) on a QP in ERR: each is flushed to its CQ. Those
 * past the first `must` may be refused: a full CQ's results are the device's choice. */
static int flush_receives(struct ic *ic, struct ibv_qp *qp, uint64_t first, int n, int must)
{
	struct ic_buf *b = ic_buf_new(ic, 64, IBV_ACCESS_LOCAL_WRITE, 0);
	EXPECT(ic, b, "ibv_reg_mr failed: %s", strerror(errno));
	EXPECT(ic, to_state(qp, IBV_QPS_ERR) == 0, "Idle -> ERR failed");
	for (int i = 0; i < n; i++) {
		struct ibv_sge sg = ic_sge(b, 0, 64);
		struct ibv_recv_wr wr = { .wr_id = first + (uint64_t)i, .sg_list = &sg,
					  .num_sge = 1 }, *bad;
		int rc = ibv_post_recv(qp, &wr, &bad);
		if (rc && i >= must)
			break;
		EXPECT(ic, rc == 0, "ibv_post_recv %d of %d in ERR failed: %s", i + 1, n,
		       strerror(rc));
	}
	return 0;
}

/* After the overrun: the other CQ holds exactly its own flushed Receive, and the only async
 * event the device may report is IBV_EVENT_CQ_ERR on the overrun CQ. */
static int overrun_contained(struct ic *ic, struct ibv_cq *small, struct ibv_cq *other,
			     struct ibv_qp *qp2)
{
	ic->conn.qp = qp2;
	int rc = ic_expect_wc(ic, other, 900, IBV_WC_WR_FLUSH_ERR, NULL);
	if (rc == 0)
		rc = ic_expect_no_wc(ic, other, 100);
	ic->conn.qp = NULL;
	if (rc)
		return -1;
	struct ibv_async_event ev;
	while (ibv_get_async_event(ic->ctx, &ev) == 0) { /* non-blocking: ic_drain_async */
		bool ok = ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == small;
		enum ibv_event_type t = ev.event_type;
		ibv_ack_async_event(&ev);
		EXPECT(ic, ok, "after the overrun: async event %s, expected none but CQ_ERR on "
		       "the overrun CQ", ibv_event_type_str(t));
	}
	return 0;
}

/* Verbs §5.3.1 (T03): overrunning a CQ may give indeterminate results on that CQ but must
 * not affect other CQs or QPs not using it. A CQ of 1 entry is offered the flushes of 4 more
 * Receives than it holds (a device may refuse the posts once it is full); a second QP's
 * Receive, flushed to a second CQ, must complete there exactly once. */
int ck_cq_overrun(struct ic *ic)
{
	ic_drain_async(ic);
	struct ibv_cq *small = ibv_create_cq(ic->ctx, 1, NULL, NULL, 0);
	struct ibv_cq *other = ibv_create_cq(ic->ctx, 16, NULL, NULL, 0);
	struct ibv_qp *q1 = NULL, *q2 = NULL;
	int rc = ic_fail(ic, "ibv_create_cq failed: %s", strerror(errno));
	if (small && other) {
		ic->res.v = IC_PASS;
		int n = small->cqe + 4;
		struct ibv_qp_init_attr qa = { .send_cq = small, .recv_cq = small,
			.qp_type = IBV_QPT_RC, .cap = { .max_send_wr = 1, .max_recv_wr = (uint32_t)n,
							.max_send_sge = 1, .max_recv_sge = 1 } };
		q1 = ibv_create_qp(ic->pd, &qa);
		q2 = rc_qp(ic, other, 4, 1);
		rc = q1 && q2 ? 0 : ic_fail(ic, "ibv_create_qp failed: %s", strerror(errno));
		if (rc == 0)
			rc = flush_receives(ic, q1, 100, n, small->cqe);
		if (rc == 0)
			rc = flush_receives(ic, q2, 900, 1, 1);
		if (rc == 0)
			rc = overrun_contained(ic, small, other, q2);
	}
	if (q1)
		ibv_destroy_qp(q1);
	if (q2)
		ibv_destroy_qp(q2);
	if (small)
		ibv_destroy_cq(small);
	if (other)
		ibv_destroy_cq(other);
	return rc;
}
