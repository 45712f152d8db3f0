/* Queue pairs over rn_qp: create / query / modify / destroy (docs/verbs.md "QP states").
 *
 * libibverbs' IB state machine on the five iWARP states (the mapping Linux siw uses):
 *   IBV_QPS_RESET, INIT, RTR  <-> Idle     (which of the three Idle reads as is remembered)
 *   IBV_QPS_RTS               <-> RTS      (entered only with a connection: rdma_cm /
 *                                           softrnic_qp_connect; a plain modify fails EINVAL)
 *   IBV_QPS_SQD               <-> Closing  (graceful close of the stream)
 *   IBV_QPS_SQE               <-> Terminate (send a Terminate, then close)
 *   IBV_QPS_ERR               <-> Error    (flush both queues)
 * Any state -> RESET goes through Error (flushing) to Idle, as IB resets a QP from any state. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_int.h"

/* ibv target state -> iWARP state (RESET/INIT/RTR are all Idle). */
static const enum rn_qp_state sv_qps_to_rn[] = {
	[IBV_QPS_RESET] = RN_QPS_IDLE,
	[IBV_QPS_INIT] = RN_QPS_IDLE,
	[IBV_QPS_RTR] = RN_QPS_IDLE,
	[IBV_QPS_RTS] = RN_QPS_RTS,
	[IBV_QPS_SQD] = RN_QPS_CLOSING,
	[IBV_QPS_SQE] = RN_QPS_TERMINATE,
	[IBV_QPS_ERR] = RN_QPS_ERROR,
};

/* iWARP state -> what ibv_query_qp reports (Idle: the remembered RESET / INIT / RTR). */
static const enum ibv_qp_state sv_rn_to_qps[RN_QPS_COUNT] = {
	[RN_QPS_IDLE] = IBV_QPS_RESET,
	[RN_QPS_RTS] = IBV_QPS_RTS,
	[RN_QPS_CLOSING] = IBV_QPS_SQD,
	[RN_QPS_TERMINATE] = IBV_QPS_SQE,
	[RN_QPS_ERROR] = IBV_QPS_ERR,
};

/* Modify attributes with no iWARP meaning: accepted and ignored so IB-style code runs. */
#define SV_QP_IGNORED (IBV_QP_EN_SQD_ASYNC_NOTIFY | IBV_QP_PKEY_INDEX | IBV_QP_QKEY | \
		       IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
		       IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN | IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | \
		       IBV_QP_PATH_MIG_STATE | IBV_QP_DEST_QPN)
/* Attributes we act on or check. */
#define SV_QP_HANDLED (IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PORT | \
		       IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_CAP)
/* Known but unsupported: alternate path (no APM), rate limit. */
#define SV_QP_UNSUPPORTED (IBV_QP_ALT_PATH | IBV_QP_RATE_LIMIT)

#define SV_QP_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND)

enum ibv_qp_state sv_qp_state(struct sv_qp *q)
{
	enum rn_qp_state s = rn_qp_get_state(q->rn);

	if (s == RN_QPS_IDLE)
		return q->idle_state;
	return (unsigned)s < RN_QPS_COUNT ? sv_rn_to_qps[s] : IBV_QPS_UNKNOWN;
}

/* ---- create ------------------------------------------------------------------------------ */
static int sv_qp_check(struct ibv_pd *pd, const struct ibv_qp_init_attr *in)
{
	if (!sv_pd(pd) || !in)
		return EINVAL;
	if (in->qp_type != IBV_QPT_RC)
		return EOPNOTSUPP;          /* iWARP is reliable connected only */
	if (!sv_cq(in->send_cq) || !sv_cq(in->recv_cq) || in->send_cq->context != pd->context ||
	    in->recv_cq->context != pd->context)
		return EINVAL;
	if (in->srq && (!sv_srq(in->srq) || in->srq->context != pd->context))
		return EINVAL;
	return 0;
}

static void sv_qp_rn_attr(struct sv_context *c, struct ibv_pd *pd,
			  const struct ibv_qp_init_attr *in, unsigned ext,
			  struct rn_qp_init_attr *a)
{
	const struct ibv_device_attr *d = &c->attr;
	struct rn_device_attr da;

	rn_device_query(c->dev, &da);
	memset(a, 0, sizeof(*a));
	a->mem = c->mem;
	a->pd = sv_pd(pd)->id;
	a->send_cq = sv_cq(in->send_cq)->rn;
	a->recv_cq = sv_cq(in->recv_cq)->rn;
	a->srq = in->srq ? sv_srq(in->srq)->rn : NULL;
	a->sq_depth = in->cap.max_send_wr;
	a->rq_depth = in->cap.max_recv_wr;
	a->max_send_sge = a->max_write_sge = in->cap.max_send_sge;
	a->max_recv_sge = in->cap.max_recv_sge;
	/* As siw: inline sends up to the device's maximum whatever was asked (0 included:
	 * rdma_xclient asks none and sends inline), reported in cap; above it, EINVAL. */
	a->max_inline = in->cap.max_inline_data > da.max_inline ? in->cap.max_inline_data
								: da.max_inline;
	/* Created with the device's ORD / IRD; connect (or modify) lowers them. */
	a->ord = (uint32_t)d->max_qp_init_rd_atom;
	a->ird = (uint32_t)d->max_qp_rd_atom;
	/* As iw_cm sets up every iWARP QP: the peer may Read and Write (verbs_ext.h to refuse). */
	a->inbound_read = !(ext & SOFTRNIC_QP_NO_REMOTE_READ);
	a->inbound_write = !(ext & SOFTRNIC_QP_NO_REMOTE_WRITE);
	a->bind_mw = true;
	a->privileged = (ext & SOFTRNIC_QP_PRIVILEGED) != 0;
	a->tolerant = (ext & SOFTRNIC_QP_TOLERANT) != 0;   /* VIA Unreliable service */
	a->sq_sig_all = in->sq_sig_all != 0;
	/* As siw: a disconnected QP reads IBV_QPS_ERR with every WR completed (D220), and the
	 * completions still queued when it is destroyed can be polled (D221). */
	a->close_to_error = true;
	a->keep_cqes = true;
	/* mem, evq, limits, qp_id, wake: rn_device_qp_create fills them */
	a->context = in->qp_context;
}

static void sv_qp_cap(const struct rn_qp_alloc *al, struct ibv_qp_cap *cap)
{
	cap->max_send_wr = al->sq_depth;
	cap->max_recv_wr = al->rq_depth;
	cap->max_send_sge = al->max_send_sge < al->max_write_sge ? al->max_send_sge
								 : al->max_write_sge;
	cap->max_recv_sge = al->max_recv_sge;
	cap->max_inline_data = al->max_inline;
}

/* qp_access_flags as in force (Modify may have changed the remote enables). */
static unsigned sv_qp_access(const struct rn_qp_info *i)
{
	return IBV_ACCESS_LOCAL_WRITE | (i->inbound_read ? IBV_ACCESS_REMOTE_READ : 0) |
	       (i->inbound_write ? IBV_ACCESS_REMOTE_WRITE : 0) |
	       (i->bind_mw ? IBV_ACCESS_MW_BIND : 0);
}

static void sv_qp_fill(struct sv_qp *q, struct ibv_pd *pd, const struct ibv_qp_init_attr *in,
		       uint32_t qp_num)
{
	q->qp.context = pd->context;
	q->qp.qp_context = in->qp_context;
	q->qp.pd = pd;
	q->qp.send_cq = in->send_cq;
	q->qp.recv_cq = in->recv_cq;
	q->qp.srq = in->srq;
	q->qp.handle = sv_tag(q, SV_MAGIC_QP);
	q->qp.qp_num = qp_num;
	q->qp.state = IBV_QPS_RESET;
	q->qp.qp_type = IBV_QPT_RC;
	pthread_mutex_init(&q->qp.mutex, NULL);
	pthread_cond_init(&q->qp.cond, NULL);
	/* ibv_qp.state is RESET after create, as libibverbs sets it; queried, the fresh QP's
	 * Idle reads as INIT, as iWARP drivers map Idle (cxgb4) and rdma-core's tests expect
	 * of an IBV_NODE_RNIC (tests/test_qp.py); siw's kernel query leaves it unset. */
	q->idle_state = IBV_QPS_INIT;
	q->sq_sig_all = in->sq_sig_all;
	pthread_mutex_init(&q->close_mtx, NULL);
	q->close_fn = NULL;
	q->close_arg = NULL;
	q->magic = SV_MAGIC_QP;
}

struct ibv_qp *sv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *in, unsigned ext)
{
	struct rn_qp_init_attr a;
	struct rn_qp_alloc al;
	struct sv_context *c;
	struct sv_qp *q;
	int rc = sv_qp_check(pd, in);
	enum rn_status st;

	if (!rc && (ext & ~SOFTRNIC_QP_FLAGS_ALL))
		rc = EINVAL;
	if (rc || !(q = sv_obj_alloc(SV_OBJ_QP, sizeof(*q)))) {
		errno = rc ? rc : ENOMEM;
		return NULL;
	}
	c = sv_ctx(pd->context);
	sv_qp_rn_attr(c, pd, in, ext, &a);
	a.ev_handle = q;
	st = rn_device_qp_create(c->dev, &a, &q->rn, &al);
	if (st) {
		sv_obj_free(SV_OBJ_QP, q);
		errno = sv_errno(st);
		return NULL;
	}
	sv_qp_cap(&al, &in->cap);
	sv_qp_fill(q, pd, in, al.qp_id);
	return &q->qp;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	return sv_create_qp(pd, qp_init_attr, 0);
}

struct ibv_qp *softrnic_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr,
				  unsigned flags)
{
	return sv_create_qp(pd, qp_init_attr, flags);
}

int softrnic_qp_limit_inbound(struct ibv_qp *qp, int read, uint32_t rkey)
{
	struct sv_qp *q = sv_qp(qp);

	return q ? sv_errno(rn_qp_limit_inbound(q->rn, read != 0, rkey)) : EINVAL;
}

/* ---- query ------------------------------------------------------------------------------- */
/* The Terminate rn_qp_query reports in Terminate / Error (verbs_ext.h). */
int softrnic_query_qp_term(struct ibv_qp *qp, struct softrnic_qp_term *term)
{
	struct sv_qp *q = sv_qp(qp);
	struct rn_qp_info info;
	enum rn_status st;

	if (!q || !term)
		return EINVAL;
	st = rn_qp_query(q->rn, &info);
	if (st)
		return sv_errno(st);
	if (!info.term_valid)
		return ENOENT;
	term->local = info.term_local ? 1 : 0;
	term->layer = info.term.err.layer;
	term->etype = info.term.err.etype;
	term->ecode = info.term.err.ecode;
	return 0;
}

/* The MPA parameters rn_qp_query reports once an LLP stream was handed over (verbs_ext.h). */
int softrnic_query_qp_mpa(struct ibv_qp *qp, struct softrnic_qp_mpa *mpa)
{
	struct sv_qp *q = sv_qp(qp);
	struct rn_qp_info info;
	enum rn_status st;

	if (!q || !mpa)
		return EINVAL;
	st = rn_qp_query(q->rn, &info);
	if (st)
		return sv_errno(st);
	if (!info.has_llp)
		return ENOENT;
	*mpa = (struct softrnic_qp_mpa){
		.rev = info.mpa.rev, .enhanced = info.mpa.enhanced, .crc = info.mpa.crc,
		.markers_tx = info.mpa.markers_tx, .markers_rx = info.mpa.markers_rx,
		.p2p = info.mpa.p2p, .rtr = (uint8_t)info.mpa.rtr,
		.local_ird = info.mpa.local_ird, .local_ord = info.mpa.local_ord,
		.peer_ird = info.mpa.peer_ird, .peer_ord = info.mpa.peer_ord,
	};
	return 0;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init)
{
	struct sv_qp *q = sv_qp(qp);
	struct rn_qp_info info;
	enum rn_status st;

	/* everything is cheap: filled whatever the mask */
	if (!q || !attr || !init)
		return EINVAL;
	st = rn_qp_query(q->rn, &info);
	if (st)
		return sv_errno(st);
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = attr->cur_qp_state = sv_qp_state(q);
	attr->path_mtu = IBV_MTU_1024;
	attr->qp_access_flags = sv_qp_access(&info);
	sv_qp_cap(&info.alloc, &attr->cap);
	attr->max_rd_atomic = (uint8_t)(info.alloc.ord > 255 ? 255 : info.alloc.ord);
	attr->max_dest_rd_atomic = (uint8_t)(info.alloc.ird > 255 ? 255 : info.alloc.ird);
	attr->port_num = 1;
	attr->sq_draining = info.state == RN_QPS_CLOSING;
	memset(init, 0, sizeof(*init));
	init->qp_context = qp->qp_context;
	init->send_cq = qp->send_cq;
	init->recv_cq = qp->recv_cq;
	init->srq = qp->srq;
	init->cap = attr->cap;
	init->qp_type = IBV_QPT_RC;
	init->sq_sig_all = q->sq_sig_all;
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;   /* as libibverbs' ibv_query_qp does */
	return 0;
}

/* ---- modify ------------------------------------------------------------------------------ */
static int sv_modify_check(struct sv_qp *q, const struct ibv_qp_attr *attr, int mask)
{
	if ((unsigned)mask & ~(unsigned)(SV_QP_IGNORED | SV_QP_HANDLED | SV_QP_UNSUPPORTED))
		return EINVAL;
	if (mask & SV_QP_UNSUPPORTED)
		return EOPNOTSUPP;
	if ((mask & IBV_QP_STATE) && (unsigned)attr->qp_state > IBV_QPS_ERR)
		return EINVAL;
	/* RESET / INIT / RTR are all Idle: any of them names Idle as the current state */
	if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != sv_qp_state(q) &&
	    !((unsigned)attr->cur_qp_state <= IBV_QPS_RTR && rn_qp_get_state(q->rn) == RN_QPS_IDLE))
		return EINVAL;
	if ((mask & IBV_QP_PORT) && attr->port_num != 1)
		return EINVAL;
	if ((mask & IBV_QP_ACCESS_FLAGS) && (attr->qp_access_flags & ~SV_QP_ACCESS))
		return EINVAL;
	return 0;
}

/* The attribute part of a modify (ORD, IRD, queue depths, remote access) as rn_qp_mod
 * fields. Access flags change the peer's Read / Write rights only: Read Responses to our own
 * Reads are always accepted, as in libibverbs (D218). LOCAL_WRITE, MW_BIND and
 * REMOTE_ATOMIC have nothing to change (always on / no atomics). */
static void sv_modify_attrs(const struct ibv_qp_attr *attr, int mask, struct rn_qp_mod *m)
{
	if (mask & IBV_QP_ACCESS_FLAGS) {
		m->mask |= RN_QPM_ACCESS;
		m->attr.inbound_read = (attr->qp_access_flags & IBV_ACCESS_REMOTE_READ) != 0;
		m->attr.inbound_write = (attr->qp_access_flags & IBV_ACCESS_REMOTE_WRITE) != 0;
	}
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC) {
		m->mask |= RN_QPM_ORD;
		m->attr.ord = attr->max_rd_atomic;
	}
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) {
		m->mask |= RN_QPM_IRD;
		m->attr.ird = attr->max_dest_rd_atomic;
	}
	if (mask & IBV_QP_CAP) {
		m->mask |= RN_QPM_SQ_DEPTH | RN_QPM_RQ_DEPTH;
		m->attr.sq_depth = attr->cap.max_send_wr;
		m->attr.rq_depth = attr->cap.max_recv_wr;
	}
}

static int sv_rn_modify(struct sv_qp *q, struct rn_qp_mod *m)
{
	return sv_errno(rn_qp_modify_qp(q->rn, m, NULL));
}

/* Any state -> RESET: through Error (flush) to Idle, as IB resets from any state. */
static int sv_modify_reset(struct sv_qp *q, struct rn_qp_mod *m)
{
	struct rn_qp_mod to_err = { .next = RN_QPS_ERROR };
	enum rn_qp_state s = rn_qp_get_state(q->rn);
	int rc;

	if (s == RN_QPS_IDLE)
		return m->mask ? sv_rn_modify(q, m) : 0;
	if (s != RN_QPS_ERROR && (rc = sv_rn_modify(q, &to_err)))
		return rc;
	return sv_rn_modify(q, m);
}

static int sv_modify_state(struct sv_qp *q, enum ibv_qp_state to, struct rn_qp_mod *m)
{
	enum rn_qp_state cur = rn_qp_get_state(q->rn);

	m->next = sv_qps_to_rn[to];
	if (to == IBV_QPS_RESET)
		return sv_modify_reset(q, m);
	if (m->next == RN_QPS_IDLE && cur != RN_QPS_IDLE)
		return EINVAL;                    /* INIT / RTR only from RESET / INIT / RTR */
	if (m->next == RN_QPS_IDLE && !m->mask)
		return 0;                         /* Idle -> Idle with nothing to change */
	return sv_rn_modify(q, m);
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct sv_qp *q = sv_qp(qp);
	struct rn_qp_mod m;
	int rc;

	if (!q || !attr)
		return EINVAL;
	rc = sv_modify_check(q, attr, attr_mask);
	if (rc)
		return rc;
	memset(&m, 0, sizeof(m));
	sv_modify_attrs(attr, attr_mask, &m);
	if (attr_mask & IBV_QP_STATE)
		rc = sv_modify_state(q, attr->qp_state, &m);
	else if (m.mask) {
		m.next = rn_qp_get_state(q->rn);
		rc = sv_rn_modify(q, &m);
	}
	if (rc)
		return rc;
	if ((attr_mask & IBV_QP_STATE) && sv_qps_to_rn[attr->qp_state] == RN_QPS_IDLE)
		q->idle_state = attr->qp_state;
	qp->state = sv_qp_state(q);
	return 0;
}

/* ---- destroy ------------------------------------------------------------------------------ */
int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct sv_qp *q = sv_qp(qp);
	struct sv_context *c;
	enum rn_status st;

	if (!q)
		return EINVAL;
	c = sv_ctx(qp->context);
	st = rn_device_qp_destroy(c->dev, q->rn);   /* MW_BOUND_TO_QP: unchanged (EBUSY) */
	if (st)
		return sv_errno(st);
	q->magic = 0;
	pthread_mutex_destroy(&qp->mutex);
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&q->close_mtx);
	sv_obj_free(SV_OBJ_QP, q);
	return 0;
}

/* Data is placed in stream order: a later octet of a message never lands before an earlier
 * one, so polling the last byte of an RDMA Write is safe (1). */
int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)op;
	return sv_qp(qp) && !flags ? 1 : 0;
}
