/* Receive processing: transport octets -> mpa_rx_next pieces -> DDP/RDMAP decode and checks
 * at the segment's HEAD -> DATA copied straight into the target -> delivery at END.
 *
 * Rules kept here:
 *   - Every check runs at HEAD, for the whole segment, before its first octet is placed
 *     (RDMA Verbs §7.6.3); each later chunk is re-validated for exactly its own range right
 *     before the copy, so nothing is written outside a checked range and no translation is
 *     kept across a return (quiescence).
 *   - An error found at HEAD is acted on only at END, once MPA delivered the segment whole
 *     (§6.4 item 7): a CRC error in the same FPDU wins; the first delivered error wins.
 *   - With CRC negotiated the payload is staged and placed only after the CRC matched, so a
 *     corrupted segment never reaches memory (T37). Without CRC there is nothing to wait for:
 *     DATA is placed straight from the transport buffer, and a large payload remainder is read
 *     by the transport straight into its (checked, contiguous) target run (rx_direct), then
 *     fed to the decoder from there, so its DATA pieces already sit at their destination.
 *   - The Terminate carries the offending segment's headers (rdmap_term_build on the head).
 *   - S-RQ / RQ WQEs are taken at the first segment of a Send (MSN order, §8.2.2 rule 12).
 *   - RFC 7306 Immediate Data (docs/rdmap.md): kind "prefix" is remembered for the next Send;
 *     the other kinds take one WQE and complete it with byte_len 0.
 *   - Tolerant QPs (rn_qp_init_attr.tolerant): an error marked message-level (err_tol) found
 *     after DDP accepted the segment's sequence numbers drops the message (WC error or async
 *     event, no state change), DDP's MSN still advances, and the message's later segments are
 *     skipped. Everything else (framing, versions, QN / MSN / MO, opcodes, Read Responses)
 *     terminates as on any QP. */
#include "rn_qp_int.h"
#include "rn_fault.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void rn_qp_rx_reset(struct rn_qp *qp)
{
	struct rn_qp_rx *rx = &qp->rx;
	struct mpa_rx_cfg rc = { 0 };

	rc.head_len = MPA_RX_HEAD_MAX;
	mpa_rx_init(&rx->mpa, &rc);
	ddp_rx_init(&rx->ddp, RDMAP_NQUEUES);
	rx->eof = rx->fin_fed = rx->closed_fed = false;
	rx->stopped = rx->mpa_failed = false;
	rx->err_pending = false;
	rx->big = false;
	rx->small_run = 0;
	rx->target = RXT_NONE;
	rx->skip = false;
	rx->imm_pending = false;
	rx->wqe_imm = false;
	qp->term_copy_hdr = false;
}

/* ---- receive WQEs ---------------------------------------------------------------------- */

/* Called before the Receive's CQE is pushed, never after: a consumer may poll the CQE and
 * repost at once, and that post takes no lock in common with the receive path
 * (rn_qp_post_recv, rn_srq_post), so the slot must already be free. rx->wqe stays readable. */
static void retire_wqe(struct rn_qp *qp)
{
	if (qp->rx.wqe_srq)
		rn_srq_retire(qp->ia.srq, &qp->rq_lim);
	else
		rn_rq_retire(qp->rq, 1);
	qp->rx.have_wqe = false;
	qp->rx.wqe_imm = false;
	rn_ref_once_drop(&qp->rx.wqe0);
}

/* Complete the Receive in progress with a non-success status (flush or error). */
void rn_qp_rx_drop_wqe(struct rn_qp *qp, enum rn_wc_status st)
{
	if (!qp->rx.have_wqe)
		return;
	retire_wqe(qp);
	rn_qp_push_cqe(qp, false, qp->rx.wqe.wr_id, st, RN_WC_OP_RECV, 0, 0, 0);
}

static bool take_wqe(struct rn_qp *qp)
{
	struct rn_qp_rx *rx = &qp->rx;
	bool got;

	if (qp->ia.srq)
		got = rn_srq_take(qp->ia.srq, &qp->rq_lim, &rx->wqe) != 0;
	else
		got = rn_rq_take(qp->rq, &rx->wqe) != RN_RQ_EMPTY;
	if (!got)
		return false;
	rx->have_wqe = true;
	rx->wqe_srq = qp->ia.srq != NULL;
	rn_ref_once_drop(&rx->wqe0);
	rx->wqe_len = 0;
	for (uint32_t i = 0; i < rx->wqe.num_sge; i++)
		rx->wqe_len += rx->wqe.sge[i].length;
	return true;
}

static uint32_t rq_pd(const struct rn_qp *qp)
{
	return qp->ia.srq ? rn_srq_pd(qp->ia.srq) : qp->ia.pd;
}

static enum rn_wc_status check_wqe(struct rn_qp *qp)
{
	uint32_t fl = qp->ia.privileged ? RN_MEM_PRIVILEGED : 0;
	struct rn_mem_ref ref;

	rn_ref_once_drop(&qp->rx.wqe0);
	for (uint32_t i = 0; i < qp->rx.wqe.num_sge; i++) {
		const struct rn_rq_sge *s = &qp->rx.wqe.sge[i];
		enum rn_wc_status st = rn_mem_check_local_sge(qp->ia.mem, rq_pd(qp), fl, s->stag,
							      s->addr, s->length,
							      RN_ACC_LOCAL_WRITE, &ref);
		if (st != RN_WC_SUCCESS)
			return st;
		if (i == 0 && s->length > 0)
			rn_ref_once_keep(&qp->rx.wqe0, &ref);
	}
	return RN_WC_SUCCESS;
}

/* ---- errors ------------------------------------------------------------------------------- */

/* The segment's first error (false: one is already pending, this one is ignored). */
static bool seg_err(struct rn_qp *qp, struct iwarp_err e, enum rn_qp_async ev)
{
	struct rn_qp_rx *rx = &qp->rx;

	if (rx->err_pending)
		return false;
	rx->err_pending = true;
	rx->err = (struct rn_qp_error){ e, ev, false };
	rx->err_tol = false;
	rx->err_copy_hdr = false;
	rx->target = RXT_DROP;
	return true;
}

/* A message-level error: this message is bad, the stream is fine (tolerant QPs drop it). */
static void seg_err_msg(struct rn_qp *qp, struct iwarp_err e, enum rn_qp_async ev)
{
	if (seg_err(qp, e, ev))
		qp->rx.err_tol = true;
}

/* An error the Receive's WC reports (status st): no async event. Message-level. */
static void seg_err_wc(struct rn_qp *qp, struct iwarp_err e, enum rn_wc_status st)
{
	if (!seg_err(qp, e, RN_QPE_NONE))
		return;
	qp->rx.err_tol = true;
	qp->rx.err.in_wc = true;
	qp->rx.wc_err = true;
	qp->rx.wc_status = (uint8_t)st;
}

/* Async event for a DDP / RDMAP error of an incoming segment (RDMA Verbs §8.3.3, Fig. 24). */
static enum rn_qp_async ev_ddp(const struct rn_qp *qp, struct iwarp_err e)
{
	static const enum rn_qp_async tagged[] = {
		RN_QPE_STAG_INVALID, RN_QPE_BASE_BOUNDS, RN_QPE_INVALID_PD, RN_QPE_WRAP,
		RN_QPE_DDP_VERSION,
	};
	if (e.etype == DDP_ETYPE_TAGGED)
		return e.ecode < 5 ? tagged[e.ecode] : RN_QPE_STAG_INVALID;
	if (e.etype != DDP_ETYPE_UNTAGGED)
		return RN_QPE_LLP_BAD_FPDU;
	bool irrq = qp->rx.msg.ddp.qn == RDMAP_QN_READ_REQ;
	switch (e.ecode) {
	case DDP_ECODE_U_INVALID_QN:
		return RN_QPE_DDP_QN;
	case DDP_ECODE_U_MSN_RANGE:
		return irrq ? RN_QPE_IRRQ_MSN_RANGE : RN_QPE_RQ_MSN_RANGE;
	case DDP_ECODE_U_MSN_NO_BUF:
		return RN_QPE_RQ_MSN_RANGE;
	case DDP_ECODE_U_INVALID_MO:
		return irrq ? RN_QPE_IRRQ_MSN_GAP : RN_QPE_RQ_MSN_GAP;
	case DDP_ECODE_U_VERSION:
		return RN_QPE_DDP_VERSION;
	default:
		return RN_QPE_RQ_MSN_RANGE;
	}
}

static enum rn_qp_async ev_for(const struct rn_qp *qp, struct iwarp_err e)
{
	if (e.layer == IWARP_LAYER_DDP)
		return ev_ddp(qp, e);
	if (e.layer == IWARP_LAYER_LLP)
		return e.ecode == MPA_ECODE_CRC ? RN_QPE_LLP_CRC : RN_QPE_LLP_BAD_FPDU;
	if (e.etype == RDMAP_ETYPE_PROTECTION)
		return e.ecode == RDMAP_ECODE_ACCESS ? RN_QPE_ACCESS : RN_QPE_STAG_INVALID;
	switch (e.ecode) {
	case RDMAP_ECODE_VERSION:
		return RN_QPE_RDMA_VERSION;
	case RDMAP_ECODE_CATA_STREAM:
		return RN_QPE_NO_L_BIT;
	case RDMAP_ECODE_UNSPECIFIED:
		if (qp->rx.msg.opcode == RDMAP_OP_READ_REQ)
			return RN_QPE_READ_REQ_INVALID;
		return RN_QPE_UNEXPECTED_OPCODE;
	default:
		return RN_QPE_UNEXPECTED_OPCODE;
	}
}

static enum rn_qp_async ev_irrq(struct iwarp_err e)
{
	static const enum rn_qp_async ev[] = {
		RN_QPE_IRRQ_STAG, RN_QPE_IRRQ_BASE_BOUNDS, RN_QPE_IRRQ_ACCESS,
		RN_QPE_IRRQ_INVALID_PD, RN_QPE_IRRQ_WRAP,
	};
	return e.ecode < 5 ? ev[e.ecode] : RN_QPE_IRRQ_STAG;
}

/* Tolerant QP, message-level error: report it, keep DDP's sequence, skip the rest. The QP
 * stays in RTS and sends no Terminate. */
static void drop_message(struct rn_qp *qp)
{
	struct rn_qp_rx *rx = &qp->rx;

	rx->err_pending = false;
	if (rx->wc_err) {
		rx->wc_err = false;
		if (rx->have_wqe) {
			retire_wqe(qp);
			rn_qp_push_cqe_tolerated(qp, rx->wqe.wr_id, (enum rn_wc_status)rx->wc_status,
						 RN_WC_OP_RECV);
		}
	} else {
		rn_qp_raise_async(qp, rx->err.event);
	}
	if (!rx->pl.tagged && !rx->ddp_done)
		ddp_rx_deliver(&rx->ddp, &rx->pl);
	rx->ddp_done = true;
	if (!rx->pl.last) {
		rx->skip = true;
		rx->skip_tagged = rx->pl.tagged;
		rx->skip_op = rx->msg.opcode;
		rx->skip_qn = rx->pl.qn;
		rx->skip_msn = rx->pl.msn;
	}
}

/* END of an errored segment: the Receive's WC if it is one, then the state machine. */
static void raise_seg_error(struct rn_qp *qp)
{
	struct rn_qp_rx *rx = &qp->rx;
	struct rn_qp_error e = rx->err;

	if (qp->ia.tolerant && rx->err_tol && rx->pl_ok) {
		drop_message(qp);
		return;
	}
	rx->err_pending = false;
	qp->term_copy_hdr = rx->err_copy_hdr;
	if (rx->wc_err) {
		rx->wc_err = false;
		rn_qp_rx_drop_wqe(qp, (enum rn_wc_status)rx->wc_status);
	}
	memcpy(qp->term_src, rx->head, rx->head_len);
	qp->term_src_len = rx->head_len;
	qp->term_src_ulpdu = rx->ulpdu_len;
	rn_qp_input(qp, RN_QPI_SEGMENT_ERROR, &e);
}

/* ---- placement ---------------------------------------------------------------------------- */

/* 0; -1 the entry changed meanwhile; -2 the memory faulted (unmapped or protected after
 * registration: rn_fault.h). */
static int copy_in(struct rn_qp *qp, struct rn_mem_ref *ref, const uint8_t *src, uint64_t len)
{
	while (len) {
		uint64_t n = ref->run < len ? ref->run : len;
		if (n == 0)
			return -1;
		/* direct placement: the octets already are there */
		if (ref->addr != src && !rn_copy_guarded(ref->addr, src, n))
			return -2;
		src += n;
		len -= n;
		if (len && rn_mem_ref_next(qp->ia.mem, ref) != 0)
			return -1;
	}
	return 0;
}

/* A tagged sink range: Read Responses into a privileged STag 0 sink use process addresses. */
static int check_sink(struct rn_qp *qp, uint32_t stag, uint64_t to, uint64_t len, uint32_t need,
		      struct rn_mem_ref *ref, struct iwarp_err *err)
{
	if (stag == 0 && need == RN_ACC_LOCAL_WRITE && qp->ia.privileged && len) {
		if (rn_mem_check_local_sge(qp->ia.mem, qp->ia.pd, RN_MEM_PRIVILEGED, 0, to, len,
					   need, ref) == RN_WC_SUCCESS)
			return 0;
		*err = ddp_err_tagged(DDP_ECODE_T_INVALID_STAG);
		return -1;
	}
	return rn_mem_check_tagged(qp->ia.mem, qp->ia.pd, qp->alloc.qp_id, stag, to, len, need,
				   ref, err);
}

static void place_tagged(struct rn_qp *qp, const uint8_t *d, size_t len, uint64_t off)
{
	struct rn_qp_rx *rx = &qp->rx;
	struct rn_mem_ref ref;
	struct iwarp_err err;

	/* from the payload's start the head's check covers these octets (len is at most its) */
	if (!(off == 0 && rn_ref_once_take(&rx->sink0, &ref)) &&
	    check_sink(qp, rx->pl.stag, rx->pl.to + off, len, rx->need, &ref, &err) != 0) {
		seg_err_msg(qp, err, ev_for(qp, err));
		return;
	}
	int r = copy_in(qp, &ref, d, len);
	if (r == -2)   /* the sink's memory is gone: RFC 5040 access rights violation */
		seg_err_msg(qp, rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_ACCESS), RN_QPE_ACCESS);
	else if (r != 0)
		seg_err_msg(qp, ddp_err_tagged(DDP_ECODE_T_INVALID_STAG), RN_QPE_STAG_INVALID);
}

static void place_untagged(struct rn_qp *qp, const uint8_t *d, size_t len, uint64_t off)
{
	struct rn_qp_rx *rx = &qp->rx;
	uint32_t fl = qp->ia.privileged ? RN_MEM_PRIVILEGED : 0;
	uint64_t pos = rx->pl.mo + off, base = 0;

	for (uint32_t i = 0; i < rx->wqe.num_sge && len; i++) {
		const struct rn_rq_sge *s = &rx->wqe.sge[i];
		struct rn_mem_ref ref;

		if (pos >= base + s->length) {
			base += s->length;
			continue;
		}
		uint64_t in = pos - base, n = s->length - in;
		if (n > len)
			n = len;
		enum rn_wc_status st = RN_WC_SUCCESS;
		/* SGE 0 from its start: the kept translation covers these n octets */
		if (!(i == 0 && in == 0 && rn_ref_once_take(&rx->wqe0, &ref)))
			st = rn_mem_check_local_sge(qp->ia.mem, rq_pd(qp), fl, s->stag, s->addr + in,
						    n, RN_ACC_LOCAL_WRITE, &ref);
		int r = st == RN_WC_SUCCESS ? copy_in(qp, &ref, d, n) : 0;
		if (st != RN_WC_SUCCESS || r != 0) {
			if (st == RN_WC_SUCCESS)   /* -2: the Receive's memory faulted */
				st = r == -2 ? RN_WC_ACCESS_VIOLATION : RN_WC_INVALID_STAG;
			seg_err_wc(qp, rdmap_err(RDMAP_ETYPE_CATASTROPHIC, RDMAP_ECODE_CATASTROPHIC), st);
			return;
		}
		d += n;
		len -= n;
		pos += n;
		base += s->length;
	}
}

static void place_now(struct rn_qp *qp, const uint8_t *d, size_t len, uint64_t off)
{
	if (!len)
		return;
	if (qp->rx.target == RXT_TAGGED)
		place_tagged(qp, d, len, off);
	else if (qp->rx.target == RXT_UNTAGGED)
		place_untagged(qp, d, len, off);
}

/* CRC on, the payload waits for END. While its pieces lie back to back in the input they are
 * only remembered (a run); the run is copied into the stage when a piece does not continue it,
 * or when the rx_feed call ends (its input is reused after it). So the part of an FPDU that
 * the call that ends it read (with large FPDUs: all but the head's few octets, rx->big) is
 * placed at END straight from the input: one copy of it, not two. */
static void stage_forget(struct rn_qp_rx *rx)
{
	rx->run_src = NULL;
	rx->run_off = rx->run_len = 0;
}

static void stage_flush(struct rn_qp_rx *rx)
{
	if (rx->run_src != NULL && rx->run_len > 0)
		memcpy(rx->stage + rx->run_off, rx->run_src, rx->run_len);
	stage_forget(rx);
}

static void stage(struct rn_qp_rx *rx, const uint8_t *d, size_t len, uint64_t off)
{
	if (len == 0 || off + len > MPA_MAX_ULPDU)
		return;
	if (rx->run_src != NULL && off == rx->run_off + rx->run_len &&
	    d == rx->run_src + rx->run_len) {
		rx->run_len += len;
		return;
	}
	stage_flush(rx);
	rx->run_src = d;
	rx->run_off = (size_t)off;
	rx->run_len = len;
}

/* END of a staged FPDU whose CRC matched: the stage's octets, then the run's. */
static void place_staged(struct rn_qp *qp, size_t plen)
{
	struct rn_qp_rx *rx = &qp->rx;

	if (rx->run_src == NULL || rx->run_off + rx->run_len != plen) {
		stage_flush(rx);
		place_now(qp, rx->stage, plen, 0);
		return;
	}
	if (rx->run_off > 0)
		place_now(qp, rx->stage, rx->run_off, 0);
	if (!rx->err_pending)   /* the first part's placement may have failed */
		place_now(qp, rx->run_src, rx->run_len, rx->run_off);
}

/* Place now, or stage until END when the CRC must be checked first. */
static void place(struct rn_qp *qp, const uint8_t *d, size_t len, uint64_t off)
{
	if (qp->rx.target != RXT_TAGGED && qp->rx.target != RXT_UNTAGGED)
		return;
	if (!qp->rx.staged) {
		place_now(qp, d, len, off);
		return;
	}
	stage(&qp->rx, d, len, off);
}

/* ---- HEAD: decode and check ------------------------------------------------------------------- */

static void head_write(struct rn_qp *qp, uint32_t len)
{
	struct rn_qp_rx *rx = &qp->rx;
	struct rn_mem_ref ref;
	struct iwarp_err err;

	if (!qp->ia.inbound_write || (qp->in_only[0] && rx->pl.stag != qp->in_only_stag[0])) {
		seg_err_msg(qp, rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_ACCESS),
			    RN_QPE_WRITE_DISABLED);
		return;
	}
	rn_ref_once_drop(&rx->sink0);
	if (check_sink(qp, rx->pl.stag, rx->pl.to, len, RN_ACC_REMOTE_WRITE, &ref, &err) != 0) {
		seg_err_msg(qp, err, ev_for(qp, err));
		return;
	}
	if (len)
		rn_ref_once_keep(&rx->sink0, &ref);
	rx->need = RN_ACC_REMOTE_WRITE;
	rx->target = RXT_TAGGED;
}

/* A Read Response must continue the oldest outstanding Read exactly (RFC 5040 §5.5). */
static void head_read_resp(struct rn_qp *qp, uint32_t len)
{
	struct rn_qp_rx *rx = &qp->rx;
	struct rn_orq_ent *o = &qp->orq[qp->orq_head % qp->orq_cap];
	const struct iwarp_err bounds = ddp_err_tagged(DDP_ECODE_T_BASE_BOUNDS);
	struct rn_mem_ref ref;
	struct iwarp_err err;

	if (!qp->rresp_ok) {
		seg_err(qp, rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_ACCESS),
			RN_QPE_WRITE_DISABLED);
		return;
	}
	if (qp->orq_head == qp->orq_tail) {
		seg_err(qp, rdmap_err(RDMAP_ETYPE_OPERATION, RDMAP_ECODE_OPCODE),
			RN_QPE_UNEXPECTED_OPCODE);
		return;
	}
	if (rx->pl.stag != o->sink_stag) {
		seg_err(qp, ddp_err_tagged(DDP_ECODE_T_INVALID_STAG), RN_QPE_STAG_INVALID);
		return;
	}
	if (rx->pl.to != o->sink_to + o->got || o->got + len > o->size ||
	    (rx->pl.last && o->got + len != o->size)) {
		seg_err(qp, bounds, RN_QPE_BASE_BOUNDS);
		return;
	}
	rn_ref_once_drop(&rx->sink0);
	if (check_sink(qp, rx->pl.stag, rx->pl.to, len, RN_ACC_LOCAL_WRITE, &ref, &err) != 0) {
		seg_err(qp, err, ev_for(qp, err));
		return;
	}
	if (len)
		rn_ref_once_keep(&rx->sink0, &ref);
	rx->need = RN_ACC_LOCAL_WRITE;
	rx->target = RXT_TAGGED;
}

static void head_send(struct rn_qp *qp)
{
	struct rn_qp_rx *rx = &qp->rx;
	struct iwarp_err err;
	enum rn_wc_status st;

	if (rx->pl.mo == 0) {   /* a new Send takes the prefix value, whatever becomes of it */
		rx->wqe_imm = rx->imm_pending;
		rx->wqe_imm_val = rx->imm_val;
		rx->imm_pending = false;
	}
	if (!rx->have_wqe && !take_wqe(qp)) {
		seg_err_msg(qp, ddp_err_untagged(DDP_ECODE_U_MSN_NO_BUF), RN_QPE_RQ_MSN_RANGE);
		return;
	}
	if (rx->pl.mo == 0 && (st = check_wqe(qp)) != RN_WC_SUCCESS) {
		/* Fig. 23: RQ WR local errors -> 0x0000 */
		seg_err_wc(qp, rdmap_err(RDMAP_ETYPE_CATASTROPHIC, RDMAP_ECODE_CATASTROPHIC), st);
		return;
	}
	if (ddp_place_check_len(&rx->pl, rx->wqe_len, &err) != 0) {
		seg_err_wc(qp, err, RN_WC_BASE_BOUNDS);  /* DDP 0x1205 "message too long" */
		return;
	}
	rx->target = RXT_UNTAGGED;
}

static void head_read_req(struct rn_qp *qp)
{
	const struct rdmap_read_req *rr = &qp->rx.msg.u.read_req;
	struct rn_mem_ref ref;
	struct iwarp_err err;

	if (!qp->ia.inbound_read || (qp->in_only[1] && rr->src_stag != qp->in_only_stag[1])) {
		seg_err_msg(qp, rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_ACCESS),
			    RN_QPE_READ_DISABLED);
		return;
	}
	if (qp->irq_tail - qp->irq_head >= qp->alloc.ird) {
		seg_err_msg(qp, ddp_err_untagged(DDP_ECODE_U_MSN_RANGE), RN_QPE_IRRQ_TOO_MANY);
		return;
	}
	if (rn_mem_check_tagged(qp->ia.mem, qp->ia.pd, qp->alloc.qp_id, rr->src_stag, rr->src_to,
				rr->size, RN_ACC_REMOTE_READ, &ref, &err) != 0) {
		seg_err_msg(qp, err, ev_irrq(err));
		return;
	}
	/* The Read Response goes to the sink's TO: one that wraps 2^64 cannot be segmented
	 * (RFC 5041 §5.1: TOs do not wrap). RFC 5040 §7: Remote Protection Error, TO Wrap. */
	if (rr->size > 0 && rr->sink_to > UINT64_MAX - (rr->size - 1)) {
		err = rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_TO_WRAP);
		seg_err_msg(qp, err, ev_irrq(err));
		return;
	}
	qp->rx.target = RXT_NONE;
}

/* Immediate Data: its 8 octets are whole in the head (validated: one segment of exactly 8).
 * Kind "prefix" needs no WQE until its Send; the others take one now, as a Send would. */
static void head_imm(struct rn_qp *qp)
{
	struct rn_qp_rx *rx = &qp->rx;
	const uint8_t *d = rx->head + rx->ddp_hlen;

	if (rx->head_len < rx->ddp_hlen + RDMAP_IMM_DATA_LEN) {   /* the head holds it all */
		seg_err(qp, rdmap_err(RDMAP_ETYPE_OPERATION, RDMAP_ECODE_UNSPECIFIED),
			RN_QPE_UNEXPECTED_OPCODE);
		return;
	}
	memcpy(&rx->imm_cur, d, 4);   /* kept in wire order: verbs' __be32 */
	rx->imm_kind = d[4];
	rx->target = RXT_NONE;
	if (rx->imm_kind == RN_IMM_KIND_PREFIX)
		return;
	if (!rx->have_wqe && !take_wqe(qp))
		seg_err_msg(qp, ddp_err_untagged(DDP_ECODE_U_MSN_NO_BUF), RN_QPE_RQ_MSN_RANGE);
}

static bool is_send_op(uint8_t op)
{
	return op == RDMAP_OP_SEND || op == RDMAP_OP_SEND_SE || op == RDMAP_OP_SEND_INV ||
	       op == RDMAP_OP_SEND_SE_INV;
}

/* After a prefix Immediate Data only a Send may come next (Read Responses, which may pass
 * anything, and a Terminate excepted): a Write, Read Request or another Immediate Data is an
 * unexpected opcode. The header is valid, so the Terminate copies it (err_copy_hdr). */
static bool imm_order_bad(struct rn_qp *qp)
{
	uint8_t op = qp->rx.msg.opcode;

	if (!qp->rx.imm_pending || is_send_op(op) || op == RDMAP_OP_READ_RESP ||
	    op == RDMAP_OP_TERMINATE)
		return false;
	if (seg_err(qp, rdmap_err(RDMAP_ETYPE_OPERATION, RDMAP_ECODE_OPCODE),
		    RN_QPE_UNEXPECTED_OPCODE))
		qp->rx.err_copy_hdr = true;
	return true;
}

/* A later segment of a message a tolerant QP dropped: untagged by QN and MSN, tagged by
 * opcode (a Read Response between the segments of a dropped Write is still processed). */
static bool skipped(const struct rn_qp_rx *rx)
{
	if (!rx->skip || rx->pl.tagged != rx->skip_tagged)
		return false;
	if (rx->pl.tagged)
		return rx->msg.opcode == rx->skip_op;
	return rx->pl.qn == rx->skip_qn && rx->pl.msn == rx->skip_msn;
}

static void head_dispatch(struct rn_qp *qp, uint32_t len)
{
	switch (qp->rx.msg.opcode) {
	case RDMAP_OP_WRITE:
		head_write(qp, len);
		break;
	case RDMAP_OP_READ_RESP:
		head_read_resp(qp, len);
		break;
	case RDMAP_OP_READ_REQ:
		head_read_req(qp);
		break;
	case RDMAP_OP_TERMINATE:
		break;
	case RDMAP_OP_IMM_DATA:
	case RDMAP_OP_IMM_DATA_SE:
		head_imm(qp);
		break;
	default:
		head_send(qp);
		break;
	}
}

static void rx_head(struct rn_qp *qp, const struct mpa_rx_piece *p)
{
	struct rn_qp_rx *rx = &qp->rx;
	struct iwarp_err err;

	memcpy(rx->head, p->data, p->len);
	rx->head_len = p->len;
	stage_forget(rx);   /* a new FPDU: nothing of it staged yet */
	rx->ulpdu_len = p->ulpdu_len;
	RN_QP_STAT(qp, rx_fpdus, 1);
	RN_QP_STAT(qp, rx_octets, rn_stats_fpdu_octets(p->ulpdu_len));
	if (p->ulpdu_len >= MPA_RX_HEAD_MAX + RN_RX_DIRECT_MIN) {
		rx->big = true;
		rx->small_run = 0;
	} else if (++rx->small_run >= 2) {
		rx->big = false;   /* a message's short last segment alone keeps it */
	}
	rx->err_pending = false;
	rx->wc_err = false;
	rx->pl_ok = false;
	rx->ddp_done = false;
	rx->target = RXT_NONE;
	memset(&rx->msg, 0, sizeof(rx->msg));
	if (rx->stopped) {
		rx->target = RXT_DROP;
		return;
	}
	if (rdmap_msg_decode(rx->head, rx->head_len, &rx->msg, &err) != 0) {
		seg_err(qp, err, RN_QPE_LLP_BAD_FPDU);
		return;
	}
	/* RFC 7306 opcodes are known (Immediate Data is implemented); atomics are not */
	if (rdmap_msg_validate(&rx->msg, RDMAP_NQUEUES, true, &err) != 0) {
		seg_err(qp, err, ev_for(qp, err));
		return;
	}
	if (rx->msg.opcode == RDMAP_OP_ATOMIC_REQ || rx->msg.opcode == RDMAP_OP_ATOMIC_RESP) {
		seg_err(qp, rdmap_err(RDMAP_ETYPE_OPERATION, RDMAP_ECODE_OPCODE),
			RN_QPE_UNEXPECTED_OPCODE);
		return;
	}
	rx->ddp_hlen = ddp_hdr_len(rx->msg.ddp.tagged);
	uint32_t len = (uint32_t)(rx->ulpdu_len - rx->ddp_hlen);
	for (unsigned q = 0; q < RDMAP_NQUEUES; q++)
		rx->ddp.q[q].posted = 1;   /* buffers are checked here, by opcode */
	if (ddp_place_decide(&rx->ddp, &rx->msg.ddp, len, &rx->pl, &err) != 0) {
		seg_err(qp, err, ev_for(qp, err));
		return;
	}
	rx->pl_ok = true;
	if (skipped(rx)) {
		rx->target = RXT_SKIP;
		return;
	}
	if (imm_order_bad(qp))
		return;
	head_dispatch(qp, len);
	/* from the piece itself (the same octets as rx->head): when the head came straight from
	 * the input, the payload after it continues it there (stage) */
	if (rx->target == RXT_TAGGED || rx->target == RXT_UNTAGGED)
		place(qp, p->data + rx->ddp_hlen, rx->head_len - rx->ddp_hlen, 0);
}

/* ---- END: deliver --------------------------------------------------------------------------- */

static void complete_recv(struct rn_qp *qp)
{
	struct rn_qp_rx *rx = &qp->rx;
	uint8_t op = rx->msg.opcode;
	uint16_t fl = (op == RDMAP_OP_SEND_SE || op == RDMAP_OP_SEND_SE_INV) ? RN_CQE_F_SOLICITED : 0;
	uint32_t bytes = rx->pl.mo + rx->pl.len;
	uint32_t inv = 0;

	if (op == RDMAP_OP_SEND_INV || op == RDMAP_OP_SEND_SE_INV) {
		struct iwarp_err term;
		if (rn_mem_remote_inv(qp->ia.mem, &qp->mq, rx->msg.inv_stag, &term) != RN_WC_SUCCESS) {
			seg_err_wc(qp, term, RN_WC_REM_INV_REQ);
			raise_seg_error(qp);
			return;
		}
		fl |= RN_CQE_F_INVALIDATED;
		inv = rx->msg.inv_stag;
	}
	bool imm = rx->wqe_imm;

	retire_wqe(qp);   /* clears wqe_imm */
	if (imm)
		rn_qp_push_recv_imm(qp, rx->wqe.wr_id, RN_WC_OP_RECV, bytes, fl, inv, rx->wqe_imm_val);
	else
		rn_qp_push_cqe(qp, false, rx->wqe.wr_id, RN_WC_SUCCESS, RN_WC_OP_RECV, bytes, fl, inv);
}

static void deliver_imm(struct rn_qp *qp)
{
	struct rn_qp_rx *rx = &qp->rx;
	uint16_t fl = rx->msg.opcode == RDMAP_OP_IMM_DATA_SE ? RN_CQE_F_SOLICITED : 0;
	enum rn_wc_opcode op = rx->imm_kind == RN_IMM_KIND_WRITE ? RN_WC_OP_RECV_RDMA_IMM
								  : RN_WC_OP_RECV_IMM;

	if (rx->imm_kind == RN_IMM_KIND_PREFIX) {
		rx->imm_pending = true;   /* its MSN is used: DDP already advanced */
		rx->imm_val = rx->imm_cur;
		return;
	}
	retire_wqe(qp);
	rn_qp_push_recv_imm(qp, rx->wqe.wr_id, op, 0, fl, 0, rx->imm_cur);
}

static void deliver_irrq(struct rn_qp *qp)
{
	const struct rdmap_read_req *rr = &qp->rx.msg.u.read_req;
	struct rn_irq_ent *r = &qp->irq[qp->irq_tail++ % qp->irq_cap];

	*r = (struct rn_irq_ent){ rr->sink_stag, rr->sink_to, rr->size, rr->src_stag, rr->src_to };
}

/* A segment that passed every check: its payload, and its message once at the last one. */
static void rx_count(struct rn_qp *qp)
{
	const struct rn_qp_rx *rx = &qp->rx;
	enum rn_stats_op op = rn_stats_op_of(rx->msg.opcode);

	if (op == RN_STATS_NOPS)
		return;
	RN_QP_STAT(qp, rx_msg_octets[op], rx->pl.len);
	if (rx->pl.last)
		RN_QP_STAT(qp, rx_msgs[op], 1);
}

static void deliver(struct rn_qp *qp)
{
	struct rn_qp_rx *rx = &qp->rx;

	rx_count(qp);
	if (!rx->pl.tagged)
		ddp_rx_deliver(&rx->ddp, &rx->pl);
	rx->ddp_done = true;
	switch (rx->msg.opcode) {
	case RDMAP_OP_WRITE:
		break;
	case RDMAP_OP_READ_RESP: {
		struct rn_orq_ent *o = &qp->orq[qp->orq_head % qp->orq_cap];
		o->got += rx->pl.len;
		if (rx->pl.last)
			rn_qp_read_done(qp, o);
		break;
	}
	case RDMAP_OP_READ_REQ:
		deliver_irrq(qp);
		break;
	case RDMAP_OP_IMM_DATA:
	case RDMAP_OP_IMM_DATA_SE:
		deliver_imm(qp);
		break;
	case RDMAP_OP_TERMINATE:
		qp->term_rcvd = rx->msg.u.term;
		qp->term_rcvd_valid = rx->msg.body_len != 0;
		RN_QP_STAT(qp, term_rx[rn_stats_term_layer(rx->msg.u.term.err.layer)]
				      [rn_stats_term_etype(rx->msg.u.term.err.etype)], 1);
		rn_qp_input(qp, RN_QPI_TERM_RECEIVED, NULL);
		break;
	default:
		if (rx->pl.last)
			complete_recv(qp);
		break;
	}
}

static void rx_end(struct rn_qp *qp)
{
	struct rn_qp_rx *rx = &qp->rx;

	if (rx->staged && !rx->err_pending)
		place_staged(qp, rx->ulpdu_len - rx->ddp_hlen);
	stage_forget(rx);
	if (rx->err_pending) {
		raise_seg_error(qp);
		return;
	}
	if (rx->target == RXT_SKIP) {   /* the rest of a dropped message: sequence only */
		if (!rx->pl.tagged)
			ddp_rx_deliver(&rx->ddp, &rx->pl);
		if (rx->pl.last)
			rx->skip = false;
		return;
	}
	if (rx->target == RXT_DROP) {   /* inbound stopped */
		if (qp->sm.state == RN_QPS_CLOSING)
			rn_qp_input(qp, RN_QPI_SEGMENT, NULL);   /* Bad Close (Fig. 11) */
		return;
	}
	deliver(qp);
}

static void rx_mpa_error(struct rn_qp *qp, const struct mpa_error *me)
{
	struct iwarp_err e = { IWARP_LAYER_LLP, MPA_TERM_ETYPE_MPA, (uint8_t)me->ecode };
	struct rn_qp_error qe = { e, ev_for(qp, e), false };

	if (me->ecode == MPA_ECODE_CRC)
		RN_QP_STAT(qp, crc_errors, 1);
	else if (me->ecode == MPA_ECODE_MARKER)
		RN_QP_STAT(qp, marker_errors, 1);
	qp->rx.mpa_failed = true;
	qp->rx.err_pending = false;
	stage_forget(&qp->rx);   /* the FPDU is bad: nothing of it is placed */
	qp->term_src_len = 0;   /* LLP errors copy no header */
	rn_qp_input(qp, RN_QPI_SEGMENT_ERROR, &qe);
}

static bool rx_active(const struct rn_qp *qp)
{
	return qp->conn && !qp->rx.mpa_failed &&
	       (qp->sm.state == RN_QPS_RTS || qp->sm.state == RN_QPS_CLOSING);
}

/* Parse and place everything in in[0..len); what arrives in Terminate / Error is dropped. */
static void rx_feed_pieces(struct rn_qp *qp, const uint8_t *in, size_t len)
{
	struct mpa_rx_piece p;

	while (len && rx_active(qp)) {
		size_t n = mpa_rx_next(&qp->rx.mpa, in, len, &p);

		in += n;
		len -= n;
		switch (p.kind) {
		case MPA_RX_HEAD:
			rx_head(qp, &p);
			break;
		case MPA_RX_DATA:
			if (!qp->rx.err_pending)
				place(qp, p.data, p.len, p.off - qp->rx.ddp_hlen);
			break;
		case MPA_RX_END:
			rx_end(qp);
			break;
		case MPA_RX_ERROR:
			rx_mpa_error(qp, &p.err);
			return;
		default:
			if (n == 0)
				return;
			break;
		}
	}
}

static void rx_feed(struct rn_qp *qp, const uint8_t *in, size_t len)
{
	rx_feed_pieces(qp, in, len);
	rn_ref_once_drop(&qp->rx.wqe0);   /* valid only within this call (rn_qp_int.h) */
	rn_ref_once_drop(&qp->rx.sink0);
	stage_flush(&qp->rx);         /* the rest of this FPDU comes in a later call */
}

/* Direct placement (CRC and markers off; with CRC the payload waits for its check): the
 * decoder is inside the DATA of a segment whose whole range was checked at its HEAD, and
 * nothing read is left unparsed (every read is parsed whole). Returns where the rest of this
 * FPDU's payload goes and how many of its octets are one contiguous run of the target there
 * (re-checked right now for exactly that range, as place() does before a copy), or NULL: read
 * into the receive buffer. The run never goes past the FPDU's payload, so a peer's lengths
 * cannot take the read outside the checked range; errors (bad range, translation gone) are
 * left to the buffered path, which reports them. */
static uint8_t *rx_direct(struct rn_qp *qp, size_t *len)
{
	struct rn_qp_rx *rx = &qp->rx;
	struct rn_mem_ref ref;
	struct iwarp_err err;
	size_t left;
	uint64_t off;

	if (rx->staged || rx->mpa.cfg.markers || rx->mpa.state != MPA_RXS_DATA ||
	    rx->err_pending || !rx_active(qp))
		return NULL;
	left = rx->mpa.ulpdu_len - rx->mpa.done;
	if (left < RN_RX_DIRECT_MIN || rx->mpa.done < rx->ddp_hlen)
		return NULL;
	off = rx->mpa.done - rx->ddp_hlen;
	if (rx->target == RXT_TAGGED) {
		if (check_sink(qp, rx->pl.stag, rx->pl.to + off, left, rx->need, &ref, &err) != 0)
			return NULL;
	} else if (rx->target == RXT_UNTAGGED) {
		uint32_t fl = qp->ia.privileged ? RN_MEM_PRIVILEGED : 0;
		uint64_t pos = rx->pl.mo + off, base = 0;
		uint32_t i = 0;

		for (; i < rx->wqe.num_sge && pos >= base + rx->wqe.sge[i].length; i++)
			base += rx->wqe.sge[i].length;
		if (i == rx->wqe.num_sge)
			return NULL;
		const struct rn_rq_sge *s = &rx->wqe.sge[i];
		uint64_t in = pos - base, n = s->length - in;
		if (n > left)
			n = left;
		if (rn_mem_check_local_sge(qp->ia.mem, rq_pd(qp), fl, s->stag, s->addr + in, n,
					   RN_ACC_LOCAL_WRITE, &ref) != RN_WC_SUCCESS)
			return NULL;
		left = (size_t)n;
	} else {
		return NULL;
	}
	if (ref.run < left)
		left = (size_t)ref.run;
	if (left < RN_RX_DIRECT_MIN)
		return NULL;
	*len = left;
	return ref.addr;
}

/* A transport read returned n: -1 when it brought octets (go on), else what the receive
 * run returns (the stream ended or failed: 1; nothing there: did). */
static int rx_read_stop(struct rn_qp *qp, ssize_t n, int did)
{
	if (n > 0)
		return -1;
	if (n == -EAGAIN)
		return did;
	if (n == 0)
		qp->rx.eof = true;
	else
		rn_qp_llp_failed(qp, (long)n);
	return 1;
}

/* A transport that lends its own buffers (rn_conn_recv_lend, softrnic's engine): the decoder
 * reads the octets where they lie, so a payload is copied once, into its target, with CRC
 * on too (a segment that carries whole FPDUs is checked and placed straight from its
 * mbuf; only an FPDU split over two buffers is staged). Every lent octet is fed before the
 * view goes back; the decoder keeps no pointer into it after rx_feed. */
static int rx_run_lent(struct rn_qp *qp)
{
	struct rn_qp_rx *rx = &qp->rx;
	size_t total = 0;
	int did = 0;

	while (!rx->eof && qp->conn && total < RN_QP_RX_BUDGET) {
		struct rn_rx_view v;
		size_t want = RN_QP_RX_BUDGET - total;
		ssize_t n = rn_conn_recv_lend(qp->conn, &v, want);
		int stop = rx_read_stop(qp, n, did);

		if (stop >= 0)
			return stop;
		unsigned runs = v.n;

		did = 1;
		total += (size_t)n;
		for (unsigned i = 0; i < runs; i++)
			rx_feed(qp, v.run[i].iov_base, v.run[i].iov_len);
		rn_rx_view_release(&v);
		if ((size_t)n < want && runs < RN_RX_VIEW_RUNS)
			break;   /* the queue is empty: do not ask again at once */
	}
	return did;
}

/* One unit of receive work: at most RN_QP_RX_BUDGET octets, in reads of at most RN_QP_RX_BUF
 * (buffered head, then direct payload, ...). 1 when something was read (or the stream ended /
 * failed).
 * After a large FPDU the buffered read stops at the next FPDU's head (pad + CRC + length +
 * head), so that its payload can then be read straight into its target in the same call. */
int rn_qp_rx_run(struct rn_qp *qp)
{
	struct rn_qp_rx *rx = &qp->rx;
	size_t total = 0;
	int did = 0;

	if (!qp->conn)
		return 0;
	if (rx->pre) {   /* octets rn_cm read past the MPA exchange come first */
		uint8_t *pre = rx->pre;
		size_t plen = rx->pre_len;
		rx->pre = NULL;
		rx->pre_len = 0;
		rx_feed(qp, pre, plen);
		free(pre);
		return 1;
	}
	if (rn_conn_can_lend(qp->conn))
		return rx_run_lent(qp);
	while (!rx->eof && qp->conn && total < RN_QP_RX_BUDGET) {
		size_t want = RN_QP_RX_BUF;
		uint8_t *dst = rx_direct(qp, &want);
		bool small = false;
		ssize_t n;

		if (!dst) {
			dst = rx->buf;
			want = RN_QP_RX_BUF;
			if (rx->big && rx_active(qp)) {
				want = MPA_MAX_PAD + MPA_CRC_LEN + MPA_HDR_LEN + MPA_RX_HEAD_MAX;
				if (rx->mpa.state == MPA_RXS_DATA)
					want += rx->mpa.ulpdu_len - rx->mpa.done;
				if (want > RN_QP_RX_BUF)
					want = RN_QP_RX_BUF;
				small = want < RN_QP_RX_BUF;
			}
		}
		if (want > RN_QP_RX_BUDGET - total)
			want = RN_QP_RX_BUDGET - total; /* at most RN_QP_RX_BUDGET octets a call */
		n = rn_conn_recv(qp->conn, dst, want);
		if (n == -EFAULT && dst != rx->buf) {
			/* the target run was unmapped after its check: the kernel refused to write
			 * it (nothing read). Read into the buffer: the guarded placement reports it */
			dst = rx->buf;
			want = want < RN_QP_RX_BUF ? want : RN_QP_RX_BUF;
			n = rn_conn_recv(qp->conn, dst, want);
		}
		int stop = rx_read_stop(qp, n, did);
		if (stop >= 0)
			return stop;
		did = 1;
		total += (size_t)n;
		rx_feed(qp, dst, (size_t)n);
		if ((size_t)n < want || (dst == rx->buf && !small))
			break;
	}
	return did;
}
