/* Posting to a QP in Error, with libibverbs' (IB) semantics: the WRs are accepted and complete
 * as flushed (docs/dropin.md). The RNIC returns an immediate error there, which the RDMA
 * Verbs specification allows (RDMAC 6.2.4: posts are enqueued and flushed until, at some
 * point of the flush, immediate errors start); libibverbs programs are written for the IB
 * rule, and siw's user-space provider accepts such posts as well. perftest re-posts a receive
 * on its rdma_cm exchange QP after the peer closed it and fails otherwise. These wrap the
 * context's post_send / post_recv ops (sv_device.c): when the RNIC refuses a post because the
 * QP is in Error, each refused WR gets a Flushed completion on its CQ instead, after the ones
 * the RNIC flushed on entering Error. Each WR is validated first, as in RTS: an invalid one
 * (too many SGEs, an opcode not offered...) fails the post with EINVAL there, as siw's
 * provider refuses it before the kernel flushes. S-RQs keep the RNIC's answer (no QP state
 * to follow). */
#include <errno.h>

#include "verbs_int.h"
#include "sv_post_err.h"

static bool sv_in_error(struct ibv_qp *qp)
{
	struct sv_qp *q = sv_qp(qp);

	return q && sv_qp_state(q) == IBV_QPS_ERR;
}

static int sv_flush_wc(struct ibv_cq *cq, struct ibv_qp *qp, uint64_t wr_id, uint8_t opcode)
{
	struct sv_cq *c = sv_cq(cq);
	struct rn_cqe e = { .wr_id = wr_id, .qp_id = qp->qp_num, .status = RN_WC_FLUSHED,
			    .opcode = opcode };

	if (!c)
		return EINVAL;
	return rn_cq_push(c->rn, &e) == RN_CQ_PUSH_OK ? 0 : ENOMEM;
}

/* The opcode a flushed send WR reports (libibverbs sets it on errors too). */
static uint8_t sv_flush_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return RN_WC_OP_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return RN_WC_OP_RDMA_READ;
	case IBV_WR_BIND_MW:
		return RN_WC_OP_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return RN_WC_OP_LOCAL_INV;
	default:
		return RN_WC_OP_SEND;
	}
}

int sv_post_send_ib(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct ibv_send_wr *b = NULL;
	int rc = sv_post_send(qp, wr, &b);

	if (rc == EINVAL && b && sv_in_error(qp)) {
		for (rc = 0; b && !rc; b = rc ? b : b->next) {
			rc = sv_check_send(qp, b);
			if (!rc)
				rc = sv_flush_wc(qp->send_cq, qp, b->wr_id,
						 sv_flush_opcode(b->opcode));
		}
	}
	if (rc && bad)
		*bad = b;
	return rc;
}

int sv_post_recv_ib(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct ibv_recv_wr *b = NULL;
	int rc = sv_post_recv(qp, wr, &b);

	if (rc == EINVAL && b && !qp->srq && sv_in_error(qp)) {
		for (rc = 0; b && !rc; b = rc ? b : b->next) {
			rc = sv_check_recv(qp, b);
			if (!rc)
				rc = sv_flush_wc(qp->recv_cq, qp, b->wr_id, RN_WC_OP_RECV);
		}
	}
	if (rc && bad)
		*bad = b;
	return rc;
}
