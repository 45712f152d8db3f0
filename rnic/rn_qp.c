/* The QP object: create / query / modify / destroy, posting, the progress entry points, and
 * the glue that carries out what rn_qp_state decides (flushes, Terminate, LLP close / reset,
 * async events). Transmit is in rn_qp_tx.c, receive in rn_qp_rx.c. */
#include "rn_fdlease.h"
#include "rn_qp_int.h"
#include "rn_fault.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_uint next_qp_id = 1;

/* ---- completions ------------------------------------------------------------------------ */

/* The common part of a CQE. The one-error rule (§6.2.4): only the first non-Flushed error is
 * written as such. */
static void cqe_init(struct rn_qp *qp, struct rn_cqe *e, uint64_t wr_id, enum rn_wc_status st,
		     enum rn_wc_opcode op)
{
	if (st != RN_WC_SUCCESS && st != RN_WC_FLUSHED &&
	    rn_qp_errwc_note(&qp->sm.errwc, RN_WCK_ERROR, NULL) == RN_WCK_FLUSHED)
		st = RN_WC_FLUSHED;
	memset(e, 0, sizeof(*e));
	e->wr_id = wr_id;
	e->qp_id = qp->alloc.qp_id;
	e->status = (uint8_t)st;
	e->opcode = (uint8_t)op;
}

static void cqe_push(struct rn_qp *qp, bool sq, const struct rn_cqe *e)
{
	if (rn_cq_push(sq ? qp->ia.send_cq : qp->ia.recv_cq, e) == RN_CQ_PUSH_OVERFLOW) {
		qp->cq_err = true;   /* acted on once the current step is done */
		qp->cq_err_sq = sq;
	}
}

void rn_qp_push_cqe(struct rn_qp *qp, bool sq, uint64_t wr_id, enum rn_wc_status st,
		    enum rn_wc_opcode op, uint32_t byte_len, uint16_t flags, uint32_t inv_stag)
{
	struct rn_cqe e;

	cqe_init(qp, &e, wr_id, st, op);
	if (e.status == RN_WC_SUCCESS) {
		e.flags = flags;
		e.byte_len = byte_len;
		e.inv_stag = inv_stag;
	}
	cqe_push(qp, sq, &e);
}

void rn_qp_push_recv_imm(struct rn_qp *qp, uint64_t wr_id, enum rn_wc_opcode op,
			 uint32_t byte_len, uint16_t flags, uint32_t inv_stag, uint32_t imm)
{
	struct rn_cqe e;

	cqe_init(qp, &e, wr_id, RN_WC_SUCCESS, op);
	e.flags = flags | RN_CQE_F_IMM;
	e.byte_len = byte_len;
	e.inv_stag = inv_stag;
	e.imm_data = imm;
	cqe_push(qp, false, &e);
}

/* A tolerant QP's dropped message: the QP stays in RTS, so the one-error rule (which exists
 * because the QP is going to Error) does not apply: every such completion keeps its status. */
void rn_qp_push_cqe_tolerated(struct rn_qp *qp, uint64_t wr_id, enum rn_wc_status st,
			      enum rn_wc_opcode op)
{
	struct rn_cqe e;

	memset(&e, 0, sizeof(e));
	e.wr_id = wr_id;
	e.qp_id = qp->alloc.qp_id;
	e.status = (uint8_t)st;
	e.opcode = (uint8_t)op;
	cqe_push(qp, false, &e);
}

/* An SQ CQE carries the WR's sequence number: polling it retires this slot and every earlier
 * one, unsignaled WRs included (RDMA Verbs §8.2.4). */
static void push_sq_cqe(struct rn_qp *qp, uint32_t idx, const struct rn_sqe *s)
{
	struct rn_cqe e;

	cqe_init(qp, &e, s->wr.wr_id, (enum rn_wc_status)s->status, rn_wr_wc_opcode(s->op));
	e.sq_seq = idx;
	e.sq = &qp->sq_ret;
	cqe_push(qp, true, &e);
}

/* Write the CQEs of finished SQ WRs in post order. The slots stay taken until polled. */
void rn_qp_sq_complete(struct rn_qp *qp)
{
	while (qp->sq_head != qp->sq_proc) {
		struct rn_sqe *e = rn_qp_sqe(qp, qp->sq_head);

		if (!e->done)
			break;
		if (e->wait_sync && !rn_mem_sync_done(qp->ia.mem, e->ticket))
			break;
		if (e->signaled || e->status != RN_WC_SUCCESS)
			push_sq_cqe(qp, qp->sq_head, e);
		qp->sq_head++;
	}
}

/* SQ WQEs posted and not yet retired by a poll: what counts against the SQ depth. */
static uint32_t sq_used(struct rn_qp *qp)
{
	return qp->sq_tail - rn_sq_retired(&qp->sq_ret);
}

/* ---- state machine plumbing --------------------------------------------------------------- */

struct rn_qp_cond rn_qp_cond_now(const struct rn_qp *qp)
{
	struct rn_qp_cond c = { 0 };
	uint32_t avail = 0, inprog = 0;

	c.sq_wqes = qp->sq_tail - qp->sq_head;
	if (qp->rq) {
		rn_rq_counts(qp->rq, &avail, &inprog);
		c.rq_wqes = avail + inprog;
	}
	c.irrq_busy = qp->irq_tail != qp->irq_head;
	if (qp->ia.srq) {
		struct rn_srq_info si;
		if (rn_srq_query(qp->ia.srq, &si) == RN_OK)
			c.srq_max_wr = si.max_wr;
	}
	return c;
}

void rn_qp_raise_async(struct rn_qp *qp, enum rn_qp_async ev)
{
	if (qp->ia.evq && ev != RN_QPE_NONE)
		rn_evq_post(qp->ia.evq, (enum rn_event_id)ev, &qp->res);
}

static void flush_sq(struct rn_qp *qp)
{
	for (uint32_t i = qp->sq_head; i != qp->sq_tail; i++) {
		struct rn_sqe *e = rn_qp_sqe(qp, i);

		if (!e->done) {
			e->done = true;
			e->status = RN_WC_FLUSHED;
		}
		e->wait_sync = false;
	}
	qp->sq_proc = qp->sq_tail;
	qp->orq_head = qp->orq_tail;
	qp->tx.cur = TXM_NONE;
	qp->tx.mhead = qp->tx.mtail;
	rn_qp_sq_complete(qp);
}

static void flush_rq(struct rn_qp *qp)
{
	struct rn_rqe w;

	rn_qp_rx_drop_wqe(qp, RN_WC_FLUSHED);  /* the Receive a message was being placed into */
	if (!qp->rq)
		return;   /* S-RQ WQEs not yet used are not flushed (§6.3.6) */
	while (rn_rq_take(qp->rq, &w) != RN_RQ_EMPTY) {
		rn_qp_push_cqe(qp, false, w.wr_id, RN_WC_FLUSHED, RN_WC_OP_RECV, 0, 0, 0);
		rn_rq_retire(qp->rq, 1);
	}
}

/* Lock held: the QP's stream changes (or goes); the engine must look again. */
static void set_conn(struct rn_qp *qp, struct rn_conn *conn)
{
	if (conn && conn != qp->conn)
		rn_stats_qp_peer(qp->st_qp, conn);
	qp->conn = conn;
	atomic_store(&qp->conn_fd, conn ? rn_conn_fd(conn) : -1);
	qp->need_wake = true;
}

static void llp_reset(struct rn_qp *qp)
{
	if (qp->conn) {
		rn_conn_abort(qp->conn);
		set_conn(qp, NULL);
	}
	rn_qp_tx_drop(qp);
}

/* Destroy QP: the stream is closed, not reset, as Linux siw's socket release does (iw_cm
 * moves the QP to Error, the kernel closes the socket): octets the SQ handed over (their
 * completions said Success) still reach the peer, then our FIN; a reset would discard what
 * the peer has not read yet (rdma_disconnect + rdma_destroy_qp at once, as rping does) and
 * makes a siw peer report a completion error where perftest destroys its QPs without
 * disconnecting (docs/interop.md). A transport resets by itself when octets we never read
 * are left (rn_transport.h close). */
static void llp_release(struct rn_qp *qp)
{
	if (qp->conn) {
		rn_conn_close(qp->conn);
		set_conn(qp, NULL);
	}
	llp_reset(qp);
}

/* Release the stream and everything tied to it (ORQ entries are flushed with the SQ). */
static void llp_disassociate(struct rn_qp *qp)
{
	if (qp->conn) {
		rn_conn_close(qp->conn);
		set_conn(qp, NULL);
	}
	rn_qp_tx_drop(qp);
	qp->irq_head = qp->irq_next = qp->irq_tail;
	free(qp->rx.pre);
	qp->rx.pre = NULL;
	qp->rx.pre_len = qp->rx.pre_off = 0;
}

static void reset_layers(struct rn_qp *qp)
{
	rn_qp_tx_reset(qp);
	rn_qp_rx_reset(qp);
	qp->orq_head = qp->orq_tail;
	qp->irq_head = qp->irq_next = qp->irq_tail;
	qp->term_rcvd_valid = false;
}

/* Take the stream's parameters from the handoff (rn_cm's positions and MSNs). */
static void llp_associate(struct rn_qp *qp)
{
	const struct rn_cm_handoff *h = &qp->llp;
	struct mpa_rx_cfg rc = { 0 };

	mpa_tx_init(&qp->tx.mpa, h->params.crc, h->params.markers_tx);
	qp->tx.mpa.pos = h->tx_pos;
	qp->tx.mulpdu = (uint32_t)mpa_mulpdu(qp->emss, h->params.markers_tx);
	qp->tx.max_fpdu = qp->tx.mulpdu + 9u + 4u * ((qp->tx.mulpdu + 9u) / 512u + 2u);
	rc.crc = h->params.crc;
	rc.markers = h->params.markers_rx;
	rc.pos = h->rx_pos;
	rc.head_len = MPA_RX_HEAD_MAX;
	mpa_rx_init(&qp->rx.mpa, &rc);
	qp->rx.staged = h->params.crc;
	for (unsigned i = 0; i < RDMAP_NQUEUES; i++) {
		qp->tx.msn[i] = h->tx_msn[i] ? h->tx_msn[i] : DDP_MSN_INITIAL;
		qp->rx.ddp.q[i].msn = h->rx_msn[i] ? h->rx_msn[i] : DDP_MSN_INITIAL;
	}
	qp->rx.pre = h->rx;
	qp->rx.pre_len = h->rx_len;
	qp->rx.pre_off = 0;
	qp->llp.rx = NULL;
	qp->need_wake = true;
}

static void run_action(struct rn_qp *qp, const struct rn_qp_action *a, bool *flushed)
{
	switch (a->kind) {
	case RN_QPA_APPLY_ATTRS:
		qp->alloc.ord = qp->sm.attr.ord;
		qp->alloc.ird = qp->sm.attr.ird;
		qp->ia.inbound_read = qp->sm.attr.inbound_read;
		qp->ia.inbound_write = qp->sm.attr.inbound_write;
		if (qp->ia.srq)
			rn_rq_limit_set(&qp->rq_lim, qp->sm.attr.rq_limit_armed ?
					qp->sm.attr.rq_limit : 0);
		break;
	case RN_QPA_RESET_LAYERS:
		reset_layers(qp);
		break;
	case RN_QPA_LLP_RX_HOLD:
	case RN_QPA_LLP_RX_RESUME:
		break;   /* receive runs only from on_readable, after Modify returned */
	case RN_QPA_SEND_STREAM_MSG:
		break;   /* queued by rn_qp_modify_qp once the layers are set */
	case RN_QPA_ASSOCIATE_LLP:
		llp_associate(qp);
		break;
	case RN_QPA_START_SQ:
		qp->tx.stopped = false;
		break;
	case RN_QPA_STOP_SQ:
		qp->tx.stopped = true;
		break;
	case RN_QPA_STOP_INBOUND:
		qp->rx.stopped = true;
		break;
	case RN_QPA_SEND_TERMINATE:
		rn_qp_tx_terminate(qp, a->term);
		break;
	case RN_QPA_LLP_CLOSE:
		qp->tx.close_pending = true;
		break;
	case RN_QPA_LLP_RESET:
		llp_reset(qp);
		break;
	case RN_QPA_DISASSOCIATE_LLP:
		llp_disassociate(qp);
		break;
	case RN_QPA_FLUSH_SQ:
		flush_sq(qp);
		*flushed = true;
		break;
	case RN_QPA_FLUSH_RQ:
		flush_rq(qp);
		*flushed = true;
		break;
	case RN_QPA_RAISE_ASYNC:
		rn_qp_raise_async(qp, a->event);
		break;
	default:
		break;
	}
}

/* A Receive posted in this state goes into the RQ and nothing else happens (Idle, RTS,
 * Terminate): such posts need not take the QP's lock (rn_qp_post_recv). */
static bool rq_post_queues(enum rn_qp_state s)
{
	enum rn_post_policy p = rn_qp_post_policy(s, RN_WQ_RQ);

	return p == RN_POST_PROCESS || p == RN_POST_HOLD;
}

static void run_step(struct rn_qp *qp, const struct rn_qp_step *st)
{
	bool flushed = false;

	/* before the actions: a flush of the RQ among them must see every WR posted past the
	 * gate, and posts from now on take the lock and the new state's rule */
	if (qp->rq && st->to != st->from)
		rn_rq_set_open(qp->rq, rq_post_queues(st->to));
	if (st->to != st->from)
		__atomic_store_n(&qp->st_qp->state, (uint32_t)st->to, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < st->n; i++)
		run_action(qp, &st->act[i], &flushed);
	/* Back in Idle the SQ is empty: give every slot back at once, as a libibverbs reset
	 * does, so a QP reused after a close does not wait for old CQEs to be polled (those
	 * then retire nothing: the counter never moves back). */
	if (st->to == RN_QPS_IDLE && st->from != RN_QPS_IDLE)
		rn_sq_retire_to(&qp->sq_ret, qp->sq_head);
	if (flushed)
		rn_qp_input(qp, RN_QPI_FLUSH_DONE, NULL);
}

/* A CQ overflowed while completing: CQ/SQ or CQ/RQ error (0x0207, async, §6.3). */
static void check_cq_error(struct rn_qp *qp)
{
	if (!qp->cq_err)
		return;
	qp->cq_err = false;
	rn_qp_local_error(qp, rdmap_err(RDMAP_ETYPE_OPERATION, RDMAP_ECODE_CATA_STREAM),
			  qp->cq_err_sq ? RN_QPE_CQ_SQ_ERROR : RN_QPE_CQ_RQ_ERROR, false);
}

void rn_qp_input(struct rn_qp *qp, enum rn_qp_input in, const struct rn_qp_error *err)
{
	struct rn_qp_cond c = rn_qp_cond_now(qp);
	struct rn_qp_step st;

	rn_qp_event(&qp->sm, in, err, &c, &st);
	run_step(qp, &st);
	check_cq_error(qp);
}

void rn_qp_local_error(struct rn_qp *qp, struct iwarp_err term, enum rn_qp_async ev, bool in_wc)
{
	struct rn_qp_error e = { term, ev, in_wc };

	qp->term_src_len = 0;   /* a local error has no offending ULPDU */
	rn_qp_input(qp, RN_QPI_LOCAL_ERROR, &e);
}

/* The transport failed: RST from the peer, or anything else (lost). */
void rn_qp_llp_failed(struct rn_qp *qp, long err)
{
	bool reset = err == -ECONNRESET || err == -EPIPE;

	rn_qp_input(qp, reset ? RN_QPI_LLP_RESET : RN_QPI_LLP_LOST, NULL);
	if (qp->conn) {   /* the state did not take it (e.g. Idle): still release it */
		rn_conn_abort(qp->conn);
		set_conn(qp, NULL);
	}
}

/* A send failed: the peer reset the stream. What it sent before the reset is still in the
 * transport, and a Terminate among it names the cause, where the reset alone says only that
 * the stream failed (a peer that sends a Terminate, then closes its socket, resets the stream
 * when our next octets reach it: a send can meet that reset before a read has taken the
 * Terminate). So read first; the read ends at the reset and reports it. At most RX_DRAIN_RUNS
 * receive runs: a stream that still gives after that is failed as it is. */
#define RX_DRAIN_RUNS 16

void rn_qp_llp_send_failed(struct rn_qp *qp, long err)
{
	for (int i = 0; i < RX_DRAIN_RUNS && qp->conn && !qp->rx.eof; i++)
		if (rn_qp_rx_run(qp) == 0)
			break;   /* nothing more to read, and no failure seen there */
	if (qp->conn)
		rn_qp_llp_failed(qp, err);
}

/* FIN from the peer, then "LLP close complete" once ours went out as well. */
void rn_qp_check_closed(struct rn_qp *qp)
{
	if (!qp->conn)
		return;
	if (qp->rx.eof && !qp->rx.fin_fed) {
		qp->rx.fin_fed = true;
		rn_qp_input(qp, RN_QPI_LLP_FIN, NULL);
		rn_qp_tx_pump(qp);   /* the state machine may have asked for a FIN */
	}
	if (qp->conn && qp->rx.eof && qp->tx.fin_sent && !qp->rx.closed_fed) {
		qp->rx.closed_fed = true;
		rn_qp_input(qp, RN_QPI_LLP_CLOSED, NULL);
	}
}

/* ---- create / destroy -------------------------------------------------------------------- */

static uint32_t or_default(uint32_t v, uint32_t d)
{
	return v ? v : d;
}

static void resolve_limits(struct rn_qp_limits *l)
{
	l->max_sq_wr = or_default(l->max_sq_wr, 16384);
	l->max_rq_wr = or_default(l->max_rq_wr, 16384);
	l->max_sge = or_default(l->max_sge, RN_QP_MAX_SGE);
	if (l->max_sge > RN_QP_MAX_SGE)
		l->max_sge = RN_QP_MAX_SGE;
	l->max_recv_sge = or_default(l->max_recv_sge, RN_RQ_MAX_SGE);
	if (l->max_recv_sge > RN_RQ_MAX_SGE)
		l->max_recv_sge = RN_RQ_MAX_SGE;
	l->max_inline = or_default(l->max_inline, 256);
	l->max_ord = or_default(l->max_ord, 128);
	l->max_ird = or_default(l->max_ird, 128);
}

static enum rn_status check_create(const struct rn_qp_init_attr *a, const struct rn_qp_limits *l)
{
	if (!a->mem)
		return RN_ERR_INVALID_RNIC;
	if (!a->send_cq || !a->recv_cq)
		return RN_ERR_INVALID_CQ;
	if (a->ord > l->max_ord)
		return RN_ERR_ORD_EXCEEDS;
	if (a->ird > l->max_ird)
		return RN_ERR_IRD_EXCEEDS;
	if (a->sq_depth > l->max_sq_wr)
		return RN_ERR_SQ_WRS_EXCEED;
	if (!a->srq && a->rq_depth > l->max_rq_wr)
		return RN_ERR_RQ_WRS_EXCEED;
	if (a->max_send_sge > l->max_sge || a->max_write_sge > l->max_sge)
		return RN_ERR_SQ_SGES_EXCEED;
	if (!a->srq && a->max_recv_sge > l->max_recv_sge)
		return RN_ERR_RQ_SGES_EXCEED;
	if (a->max_inline > l->max_inline)
		return RN_ERR_INVALID_MODIFIER;
	if (a->srq && rn_srq_check_qp_limit(a->srq, a->rq_limit) != RN_OK)
		return RN_ERR_RQ_LIMIT_RANGE;
	return RN_OK;
}

static void fill_alloc(struct rn_qp *qp, const struct rn_qp_init_attr *a)
{
	struct rn_qp_alloc *o = &qp->alloc;

	o->sq_depth = or_default(a->sq_depth, 1);
	o->rq_depth = a->srq ? 0 : or_default(a->rq_depth, 1);
	o->max_send_sge = or_default(a->max_send_sge, 1);
	o->max_write_sge = or_default(a->max_write_sge, 1);
	o->max_recv_sge = a->srq ? 0 : or_default(a->max_recv_sge, 1);
	o->max_inline = a->max_inline;
	o->ord = a->ord;
	o->ird = a->ird;
}

static enum rn_status alloc_rings(struct rn_qp *qp)
{
	const struct rn_qp_limits *l = &qp->ia.limits;
	uint32_t d = qp->alloc.sq_depth;

	qp->sq = calloc(d, sizeof(*qp->sq));
	qp->inl = calloc(d, qp->alloc.max_inline ? qp->alloc.max_inline : 1);
	/* ORQ / IRRQ sized for the device maximum, so ORD and IRD may change in Modify */
	qp->orq_cap = l->max_ord ? l->max_ord : 1;
	qp->irq_cap = l->max_ird ? l->max_ird : 1;
	qp->orq = calloc(qp->orq_cap, sizeof(*qp->orq));
	qp->irq = calloc(qp->irq_cap, sizeof(*qp->irq));
	qp->tx.cap = RN_TX_BUF + 2u * 66000u;   /* room for a full queue plus the largest FPDU */
	qp->tx.buf = malloc(qp->tx.cap);
	qp->tx.bounce = malloc(MPA_MAX_ULPDU);
	qp->rx.buf = malloc(RN_QP_RX_BUF);
	qp->rx.stage = malloc(MPA_MAX_ULPDU);
	if (!qp->rx.stage || !qp->sq || !qp->inl || !qp->orq || !qp->irq || !qp->tx.buf || !qp->tx.bounce ||
	    !qp->rx.buf)
		return RN_ERR_NO_RESOURCES;
	for (uint32_t i = 0; i < d; i++)
		qp->sq[i].inl = qp->inl + (size_t)i * qp->alloc.max_inline;
	if (!qp->ia.srq && rn_rq_create(qp->alloc.rq_depth, qp->alloc.max_recv_sge, &qp->rq))
		return RN_ERR_NO_RESOURCES;
	return RN_OK;
}

static void free_qp(struct rn_qp *qp)
{
	if (qp->rq)
		rn_rq_destroy(qp->rq);
	free(qp->sq);
	free(qp->inl);
	free(qp->orq);
	free(qp->irq);
	free(qp->tx.buf);
	free(qp->tx.bounce);
	free(qp->rx.buf);
	free(qp->rx.stage);
	free(qp->rx.pre);
	free(qp);
}

static void init_sm(struct rn_qp *qp)
{
	const struct rn_qp_limits *l = &qp->ia.limits;
	struct rn_qp_caps caps = { l->max_ord, l->max_ird, l->max_sq_wr, l->max_rq_wr,
				   true, true, false };
	struct rn_qp_attr at = { qp->alloc.ord, qp->alloc.ird, qp->alloc.sq_depth,
				 qp->alloc.rq_depth, qp->ia.rq_limit, qp->ia.rq_limit > 0,
				 qp->ia.inbound_read, qp->ia.inbound_write };

	rn_qp_sm_init(&qp->sm, &caps, &at, qp->ia.srq != NULL);
	qp->sm.close_to_error = qp->ia.close_to_error;
}

/* QPs made without a device (unit tests) count here, seen by no reader. */
static struct rn_stats_dev no_device_stats;

/* A record of the statistics file when the table has room, else the QP's own (the device's
 * totals count the QP either way). */
static void stats_take(struct rn_qp *qp)
{
	qp->st_dev = qp->ia.stats ? qp->ia.stats : &no_device_stats;
	qp->st_qp = qp->ia.stats ? rn_stats_qp_take(qp->ia.stats, qp->alloc.qp_id) : NULL;
	if (!qp->st_qp) {
		rn_stats_qp_local(&qp->st_own, qp->alloc.qp_id);
		qp->st_qp = &qp->st_own;
	}
	rn_stat_shared_add(&qp->st_dev->qps_created, 1);
}

static void stats_put(struct rn_qp *qp)
{
	rn_stat_shared_add(&qp->st_dev->qps_destroyed, 1);
	if (qp->st_qp != &qp->st_own)
		rn_stats_qp_put(qp->st_qp);
}

enum rn_status rn_qp_create(const struct rn_qp_init_attr *attr, struct rn_qp **out,
			    struct rn_qp_alloc *out_alloc)
{
	struct rn_qp_limits lim;
	struct rn_qp *qp;
	enum rn_status st;

	if (!attr || !out)
		return RN_ERR_INVALID_MODIFIER;
	rn_fault_install();   /* before the QP touches registered memory (rn_fault.h) */
	lim = attr->limits;
	resolve_limits(&lim);
	st = check_create(attr, &lim);
	if (st)
		return st;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return RN_ERR_NO_RESOURCES;
	qp->ia = *attr;
	qp->ia.limits = lim;
	fill_alloc(qp, attr);
	qp->alloc.qp_id = attr->qp_id ? attr->qp_id : atomic_fetch_add(&next_qp_id, 1);
	st = alloc_rings(qp);
	if (st == RN_OK && rn_mem_pd_get(attr->mem, attr->pd) != RN_OK)
		st = RN_ERR_INVALID_PD;
	if (st == RN_OK && pthread_mutex_init(&qp->lock, NULL) != 0) {
		rn_mem_pd_put(attr->mem, attr->pd);
		st = RN_ERR_NO_RESOURCES;
	}
	if (st) {
		free_qp(qp);
		return st;
	}
	qp->emss = RN_QP_DEFAULT_EMSS;
	atomic_init(&qp->conn_fd, -1);
	qp->rresp_ok = attr->inbound_write;
	rn_sq_retire_init(&qp->sq_ret, 0);
	qp->mq = (struct rn_mem_qp){ attr->pd, qp->alloc.qp_id, attr->privileged };
	rn_event_res_init(&qp->res, RN_RES_QP, attr->ev_handle ? attr->ev_handle : (void *)qp,
			  qp->alloc.qp_id);
	rn_rq_limit_init(&qp->rq_lim, attr->srq ? attr->rq_limit : 0, attr->evq, &qp->res);
	init_sm(qp);
	reset_layers(qp);
	stats_take(qp);
	rn_cq_ref(attr->send_cq);
	rn_cq_ref(attr->recv_cq);
	if (attr->srq)
		rn_srq_ref(attr->srq);
	if (out_alloc)
		*out_alloc = qp->alloc;
	*out = qp;
	return RN_OK;
}

enum rn_status rn_qp_destroy(struct rn_qp *qp)
{
	if (!qp)
		return RN_ERR_INVALID_QP;
	pthread_mutex_lock(&qp->lock);
	if (rn_mem_qp_check_unbound(qp->ia.mem, qp->alloc.qp_id) != RN_OK) {
		pthread_mutex_unlock(&qp->lock);
		return RN_ERR_MW_BOUND_TO_QP;
	}
	llp_release(qp);
	if (qp->rx.have_wqe && qp->rx.wqe_srq)
		rn_srq_retire(qp->ia.srq, &qp->rq_lim);
	pthread_mutex_unlock(&qp->lock);
	uint32_t (*leave)(struct rn_cq *, uint32_t) = qp->ia.keep_cqes ? rn_cq_orphan_qp
								       : rn_cq_purge_qp;
	leave(qp->ia.send_cq, qp->alloc.qp_id);
	if (qp->ia.recv_cq != qp->ia.send_cq)
		leave(qp->ia.recv_cq, qp->alloc.qp_id);
	if (qp->ia.evq) {
		rn_evq_purge(qp->ia.evq, &qp->res);
		rn_evq_wait_acked(qp->ia.evq, &qp->res, -1);
	}
	rn_cq_unref(qp->ia.send_cq);
	rn_cq_unref(qp->ia.recv_cq);
	if (qp->ia.srq)
		rn_srq_unref(qp->ia.srq);
	rn_mem_pd_put(qp->ia.mem, qp->ia.pd);
	pthread_mutex_destroy(&qp->lock);
	stats_put(qp);
	free_qp(qp);
	return RN_OK;
}

/* ---- wake-up --------------------------------------------------------------------------------- */

/* Unlock, then tell the engine if the fd or the EPOLLOUT interest may have changed. Not
 * when it watches EPOLLOUT already: a sender streaming into a full socket would otherwise
 * wake it on every post, also out of a hold (rn_device.h), only for it to queue behind this
 * lock (vipl-bw's sender: ~4000 engine waits on the QP lock per 20000 x 64 KiB). */
static void unlock_and_wake(struct rn_qp *qp)
{
	bool wake = qp->need_wake || (!qp->eng_write && rn_qp_tx_busy(qp) && qp->conn);

	if (qp->need_wake)
		qp->eng_write = false; /* a new stream or none: the engine looks afresh */
	qp->need_wake = false;
	pthread_mutex_unlock(&qp->lock);
	if (wake && qp->ia.wake)
		qp->ia.wake(qp->ia.wake_arg);
}

/* ---- query / modify --------------------------------------------------------------------------- */

enum rn_status rn_qp_query(struct rn_qp *qp, struct rn_qp_info *info)
{
	bool local = false;

	if (!qp || !info)
		return RN_ERR_INVALID_QP;
	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&qp->lock);
	info->state = qp->sm.state;
	info->qp_id = qp->alloc.qp_id;
	info->pd = qp->ia.pd;
	info->send_cq = qp->ia.send_cq;
	info->recv_cq = qp->ia.recv_cq;
	info->srq = qp->ia.srq;
	info->alloc = qp->alloc;
	info->inbound_read = qp->ia.inbound_read;
	info->inbound_write = qp->ia.inbound_write;
	info->bind_mw = qp->ia.bind_mw;
	info->privileged = qp->ia.privileged;
	info->sq_sig_all = qp->ia.sq_sig_all;
	info->tolerant = qp->ia.tolerant;
	if (qp->ia.srq) {
		info->rq_limit = qp->sm.attr.rq_limit;
		info->rq_limit_armed = rn_rq_limit_armed(&qp->rq_lim) != 0;
	}
	info->has_llp = qp->sm.state != RN_QPS_IDLE && qp->llp.params.rev != 0;
	info->mpa = qp->llp.params;
	if (rn_qp_term_queryable(&qp->sm, &local)) {
		info->term_local = local;
		info->term_valid = local || qp->term_rcvd_valid;
		info->term = local ? qp->tx.term : qp->term_rcvd;
	}
	info->context = qp->ia.context;
	pthread_mutex_unlock(&qp->lock);
	return RN_OK;
}

static bool handoff_ok(const struct rn_qp_mod *m)
{
	return m->llp && m->llp->conn;
}

static void take_handoff(struct rn_qp *qp, const struct rn_qp_mod *m)
{
	qp->llp = *m->llp;
	set_conn(qp, m->llp->conn);
	m->llp->conn = NULL;
	m->llp->rx = NULL;
	m->llp->rx_len = 0;
	qp->emss = m->emss ? m->emss : m->llp->emss ? m->llp->emss : RN_QP_DEFAULT_EMSS;
	if (qp->emss < 256)
		qp->emss = 256;   /* a MULPDU must hold every RDMAP header */
	if (qp->emss > MPA_MAX_ULPDU)
		qp->emss = MPA_MAX_ULPDU;
}

enum rn_status rn_qp_modify_qp(struct rn_qp *qp, const struct rn_qp_mod *m,
			       struct rn_qp_alloc *out_alloc)
{
	struct rn_qp_modify sm_m;
	struct rn_qp_step st;
	struct rn_qp_cond c;

	if (!qp)
		return RN_ERR_INVALID_QP;
	if (!m)
		return RN_ERR_INVALID_MODIFIER;
	pthread_mutex_lock(&qp->lock);
	sm_m = (struct rn_qp_modify){ m->next, m->mask, m->attr, handoff_ok(m) };
	if ((m->mask & RN_QPM_RQ_LIMIT) && qp->ia.srq &&
	    rn_srq_check_qp_limit(qp->ia.srq, m->attr.rq_limit) != RN_OK) {
		pthread_mutex_unlock(&qp->lock);
		return RN_ERR_RQ_LIMIT_RANGE;
	}
	c = rn_qp_cond_now(qp);
	if (rn_qp_modify(&qp->sm, &sm_m, &c, &st) != RN_OK) {
		pthread_mutex_unlock(&qp->lock);
		return st.status;
	}
	if (st.from == RN_QPS_IDLE && st.to == RN_QPS_RTS)
		take_handoff(qp, m);
	run_step(qp, &st);
	if (st.to == RN_QPS_RTS && st.from == RN_QPS_IDLE) {
		if (m->mask & RN_QPM_STREAM_MSG)
			rn_qp_tx_queue_raw(qp, m->stream_msg, m->stream_msg_len);
		rn_qp_tx_use_records(qp);
	}
	check_cq_error(qp);
	rn_qp_tx_pump(qp);
	rn_qp_check_closed(qp);
	if (out_alloc)
		*out_alloc = qp->alloc;
	unlock_and_wake(qp);
	return RN_OK;
}

/* ---- posting ------------------------------------------------------------------------------------ */

static void copy_wr(struct rn_qp *qp, struct rn_sqe *e, const struct rn_send_wr *wr)
{
	e->wr = *wr;
	e->wr.next = NULL;
	e->op = rn_wr_effective_op(wr);
	e->total = 0;
	e->inline_data = (wr->flags & RN_SEND_INLINE) != 0;
	e->signaled = qp->ia.sq_sig_all || (wr->flags & RN_SEND_SIGNALED);
	e->done = false;
	e->wait_sync = false;
	e->status = RN_WC_SUCCESS;
	uint32_t n = wr->num_sge > 0 && wr->sg_list ? (uint32_t)wr->num_sge : 0;
	if (n > RN_QP_MAX_SGE)
		n = 0;   /* memory WRs: SGL ignored */
	for (uint32_t i = 0; i < n; i++) {
		e->sge[i] = wr->sg_list[i];
		e->total += wr->sg_list[i].length;
	}
	e->wr.sg_list = e->sge;
	e->wr.num_sge = (int)n;
	if (e->inline_data) {
		size_t off = 0;
		for (uint32_t i = 0; i < n; i++) {
			if (e->sge[i].length)
				memcpy(e->inl + off, (const void *)(uintptr_t)e->sge[i].addr,
				       e->sge[i].length);
			off += e->sge[i].length;
		}
	}
}

static enum rn_status post_one_send(struct rn_qp *qp, const struct rn_send_wr *wr,
				    enum rn_post_policy pol)
{
	enum rn_status st;

	if (pol == RN_POST_REJECT)
		return RN_ERR_INVALID_QP_STATE;
	if (sq_used(qp) >= qp->alloc.sq_depth)
		return RN_ERR_TOO_MANY_WRS;
	st = rn_wr_check_send(qp, wr);
	if (st)
		return st;
	copy_wr(qp, rn_qp_sqe(qp, qp->sq_tail), wr);
	qp->sq_tail++;
	return RN_OK;
}

enum rn_status rn_qp_post_send(struct rn_qp *qp, struct rn_send_wr *wr, struct rn_send_wr **bad,
			       uint32_t *posted)
{
	enum rn_status st = RN_OK;
	uint32_t n = 0;

	if (bad)
		*bad = NULL;
	if (posted)
		*posted = 0;
	if (!qp)
		return RN_ERR_INVALID_QP;
	pthread_mutex_lock(&qp->lock);
	enum rn_post_policy pol = rn_qp_post_policy(qp->sm.state, RN_WQ_SQ);
	for (; wr; wr = wr->next, n++) {
		st = post_one_send(qp, wr, pol);
		if (st) {
			if (bad)
				*bad = wr;
			break;
		}
	}
	if (n > 0 && (pol == RN_POST_PROCESS || pol == RN_POST_ABORT)) {
		/* RTS: START_SQ, which changes nothing while the SQ runs: skipped then (gathering
		 * the state machine's conditions cost more than the rest of an 8-octet post);
		 * Closing: Bad Close */
		if (qp->sm.state == RN_QPS_RTS && !qp->tx.stopped)
			check_cq_error(qp);   /* what the input does besides */
		else
			rn_qp_input(qp, RN_QPI_SQ_POSTED, NULL);
	}
	if (qp->sm.state == RN_QPS_RTS)
		rn_qp_tx_pump(qp);
	if (posted)
		*posted = n;
	unlock_and_wake(qp);
	return st;
}

enum rn_status rn_qp_post_recv(struct rn_qp *qp, const struct rn_recv_wr *wr,
			       const struct rn_recv_wr **bad, uint32_t *posted)
{
	enum rn_status st;
	uint32_t n = 0;

	if (bad)
		*bad = NULL;
	if (posted)
		*posted = 0;
	if (!qp)
		return RN_ERR_INVALID_QP;
	if (qp->ia.srq) {
		if (bad)
			*bad = wr;
		return RN_ERR_RQ_HAS_SRQ;
	}
	/* Where posting only queues the WR, the RQ's own lock is enough. Not waiting for the
	 * QP's lock matters: the receive path takes it for run after run while messages keep
	 * coming, each consuming a Receive, and a mutex does not queue its waiters, so a
	 * consumer reposting as it polls could wait there (tens of ms seen under qperf rc_bw)
	 * until the RQ ran dry, and a Send that finds no Receive terminates the stream. */
	if (rn_rq_post_if_open(qp->rq, wr, bad, &n, &st)) {
		if (posted)
			*posted = n;
		return st;
	}
	pthread_mutex_lock(&qp->lock);
	enum rn_post_policy pol = rn_qp_post_policy(qp->sm.state, RN_WQ_RQ);
	if (pol == RN_POST_REJECT) {
		if (bad)
			*bad = wr;
		pthread_mutex_unlock(&qp->lock);
		return RN_ERR_INVALID_QP_STATE;
	}
	st = rn_rq_post(qp->rq, wr, bad, &n);
	if (n > 0 && pol == RN_POST_FLUSH)
		rn_qp_input(qp, RN_QPI_RQ_POSTED, NULL);
	if (posted)
		*posted = n;
	unlock_and_wake(qp);
	return st;
}

enum rn_status rn_qp_check_send(struct rn_qp *qp, const struct rn_send_wr *wr)
{
	if (!qp || !wr)
		return RN_ERR_INVALID_QP;
	return rn_wr_check_send(qp, wr);   /* reads the allocated limits only: fixed at create */
}

enum rn_status rn_qp_check_recv(struct rn_qp *qp, const struct rn_recv_wr *wr)
{
	if (!qp || !wr)
		return RN_ERR_INVALID_QP;
	if (qp->ia.srq)
		return RN_ERR_RQ_HAS_SRQ;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->alloc.max_recv_sge)
		return RN_ERR_INVALID_SGL_LENGTH;
	if (wr->num_sge > 0 && !wr->sg_list)
		return RN_ERR_INVALID_SGL_FORMAT;
	return RN_OK;
}

/* ---- progress entry points ------------------------------------------------------------------ */

int rn_qp_fd(struct rn_qp *qp)
{
	/* no lock: the engine asks on every event, often while a consumer posts */
	return atomic_load(&qp->conn_fd);
}

enum rn_status rn_qp_limit_inbound(struct rn_qp *qp, bool read, rn_stag_t stag)
{
	if (!qp)
		return RN_ERR_INVALID_QP;
	pthread_mutex_lock(&qp->lock);
	qp->in_only[read] = true;
	qp->in_only_stag[read] = stag;
	pthread_mutex_unlock(&qp->lock);
	return RN_OK;
}

int rn_qp_fd_hold(struct rn_qp *qp)
{
	int fd;

	/* under the lock: the QP closes its stream under it, so the number is still its */
	pthread_mutex_lock(&qp->lock);
	fd = qp->conn ? rn_conn_fd(qp->conn) : -1;
	if (fd >= 0 && rn_fd_hold(fd) != 0)
		fd = -1;
	pthread_mutex_unlock(&qp->lock);
	return fd;
}

int rn_qp_on_readable(struct rn_qp *qp)
{
	int did;

	pthread_mutex_lock(&qp->lock);
	did = rn_qp_rx_run(qp);
	rn_qp_tx_pump(qp);
	if (qp->conn && rn_conn_ready_as_readable(qp->conn)) {
		/* the fd never turns writable: readable also stands for send space */
		rn_qp_sq_complete(qp);
		check_cq_error(qp);
	}
	rn_qp_check_closed(qp);
	unlock_and_wake(qp);
	return did;
}

int rn_qp_on_writable(struct rn_qp *qp)
{
	uint64_t before;
	uint32_t head;

	pthread_mutex_lock(&qp->lock);
	before = qp->tx.sent_total;
	head = qp->sq_head;
	rn_qp_tx_pump(qp);
	rn_qp_sq_complete(qp);
	check_cq_error(qp);
	rn_qp_check_closed(qp);
	int did = qp->tx.sent_total != before || qp->sq_head != head;
	unlock_and_wake(qp);
	return did;
}

/* Consumer-side progress (rn_device_cq_progress): a try-lock, so an application thread never
 * waits behind the engine (or another poller) working on the same QP; the caller simply moves
 * on. Receive first, then transmit, as on_readable + on_writable do. */
int rn_qp_try_progress(struct rn_qp *qp)
{
	uint64_t before;
	int did;

	if (pthread_mutex_trylock(&qp->lock))
		return -EBUSY;
	uint32_t head = qp->sq_head;

	before = qp->tx.sent_total;
	did = rn_qp_rx_run(qp);
	/* most polls have nothing to send; held batches may have been released */
	if (rn_qp_tx_busy(qp) || qp->tx.hhead != qp->tx.htail)
		rn_qp_tx_pump(qp);
	rn_qp_sq_complete(qp);
	check_cq_error(qp);
	rn_qp_check_closed(qp);
	did |= qp->tx.sent_total != before || qp->sq_head != head;
	unlock_and_wake(qp);
	return did;
}

void rn_qp_cqs(const struct rn_qp *qp, const struct rn_cq *out[2])
{
	out[0] = qp->ia.send_cq; /* fixed at create */
	out[1] = qp->ia.recv_cq;
}

bool rn_qp_wants_write(struct rn_qp *qp)
{
	bool w;

	pthread_mutex_lock(&qp->lock);
	w = qp->conn && rn_qp_tx_busy(qp);
	if (!w && qp->sq_head != qp->sq_proc) {
		struct rn_sqe *e = rn_qp_sqe(qp, qp->sq_head);
		w = e->done && e->wait_sync;
	}
	qp->eng_write = w;
	/* a stream that signals everything as readable may be writable all the time (an
	 * eventfd): the engine must not watch that; readable covers send space */
	if (w && qp->conn && rn_conn_ready_as_readable(qp->conn))
		w = false;
	pthread_mutex_unlock(&qp->lock);
	return w;
}

void *rn_qp_wake_arg(const struct rn_qp *qp)
{
	return qp->ia.wake_arg;
}

uint32_t rn_qp_id(const struct rn_qp *qp)
{
	return qp->alloc.qp_id;
}

enum rn_qp_state rn_qp_get_state(struct rn_qp *qp)
{
	enum rn_qp_state s;

	pthread_mutex_lock(&qp->lock);
	s = qp->sm.state;
	pthread_mutex_unlock(&qp->lock);
	return s;
}

void *rn_qp_context(const struct rn_qp *qp)
{
	return qp->ia.context;
}

struct rn_event_res *rn_qp_event_res(struct rn_qp *qp)
{
	return &qp->res;
}
