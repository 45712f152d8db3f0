/* Send Queue processing and everything the QP transmits: SQ WRs become RDMAP messages, DDP
 * segments within the MULPDU and MPA FPDUs, queued as a gather list and handed to the
 * transport with one sendv per batch; what it does not take waits for on_writable. Read
 * Responses from the IRRQ alternate with SQ messages at message boundaries (RFC 5040 §5.5
 * allows them to pass Sends and Writes; they stay in order among themselves). A Terminate
 * goes out after the last complete segment already framed.
 *
 * Zero-copy: with markers off, a Send / Write / Read Response segment is queued
 * as  MPA header + DDP header (copied into buf) | the payload's runs in registered memory
 * (referenced, not copied) | pad + CRC field (buf), framed by mpa_tx_frame. Headers, trailers,
 * Read Requests, Terminates, streaming-mode octets and every FPDU with markers are copied into
 * buf (mpa_tx_encode: markers must sit inside the payload). The entries keep wire order; the
 * buf octets of successive buf entries are consecutive in [head, tail).
 *
 * Why completing a WR when the transport accepted its last octet stays right: the socket
 * transport's sendmsg copies the octets into kernel socket buffers before it returns, so the
 * accepted octets no longer depend on the user's memory (rn_transport.h: accepted octets
 * belong to the transport). A referenced payload run that was not accepted before the pump
 * call returns is copied into buf then (tx_materialize): no translation survives the call
 * (rn_mem QSBR: the engine passes a quiescent point between calls, after which a dereg may
 * return), the iovec position survives EAGAIN as buf octets, and the WR still completes only
 * when its last octet is accepted.
 *
 * A transport with sendv_ref (DPDK, on a port whose transmit copies) takes the referenced
 * runs themselves and reads them until the peer acknowledged them: the batch is held
 * (struct tx_held), and a message whose octets overlap a held batch completes only once the
 * transport released it (tx_released). A deregistration makes the transport copy them out
 * first (rn_mem_holder_add), so no reference outlives the memory. */
#include "rn_qp_int.h"
#include "rn_fault.h"

#include <errno.h>
#include <string.h>

/* ---- buffer ------------------------------------------------------------------------------ */

void rn_qp_tx_reset(struct rn_qp *qp)
{
	struct rn_qp_tx *t = &qp->tx;

	t->head = t->tail = 0;
	t->ehead = t->etail = 0;
	t->eoff = t->ext_bytes = 0;
	t->queued_total = t->sent_total = 0;
	t->mhead = t->mtail = t->mscan = 0;
	t->hhead = t->htail = 0;
	t->batch_seq = 0;
	t->space_known = false;
	t->limit = RN_TX_BUF;
	t->cur = TXM_NONE;
	t->rr_turn = false;
	t->stopped = false;
	t->term_pending = false;
	t->close_pending = t->fin_sent = false;
	memset(&t->term, 0, sizeof(t->term));
	for (unsigned i = 0; i < RDMAP_NQUEUES; i++)
		t->msn[i] = DDP_MSN_INITIAL;
	mpa_tx_init(&t->mpa, false, false);
	t->mulpdu = (uint32_t)mpa_mulpdu(RN_QP_DEFAULT_EMSS, false);
	t->max_fpdu = t->mulpdu + 9u + 4u * ((t->mulpdu + 9u) / 512u + 2u);
}

/* The stream is gone: nothing queued will ever leave. */
void rn_qp_tx_drop(struct rn_qp *qp)
{
	qp->tx.head = qp->tx.tail = 0;
	qp->tx.ehead = qp->tx.etail = 0;
	qp->tx.eoff = qp->tx.ext_bytes = 0;
	qp->tx.mhead = qp->tx.mscan = qp->tx.mtail;
	qp->tx.hhead = qp->tx.htail;   /* the stream closed or aborted with it */
	qp->tx.term_pending = false;
	qp->tx.cur = TXM_NONE;
}

static bool tx_empty(const struct rn_qp_tx *t)
{
	return t->ehead == t->etail;
}

static void ent_push(struct rn_qp_tx *t, const uint8_t *ext, size_t n)
{
	if (!n)
		return;
	t->queued_total += n;
	if (ext) {
		t->ext_bytes += n;
	} else if (!tx_empty(t) && !t->ent[(t->etail - 1) % RN_TX_ENTS].ext) {
		t->ent[(t->etail - 1) % RN_TX_ENTS].len += n;   /* its octets end at tail too */
		return;
	}
	t->ent[t->etail++ % RN_TX_ENTS] = (struct tx_ent){ ext, n };
}

/* Append n octets to buf as the next queued octets. The caller checked the room. */
static void push_copy(struct rn_qp_tx *t, const void *p, size_t n)
{
	memcpy(t->buf + t->tail, p, n);
	t->tail += n;
	ent_push(t, NULL, n);
}

/* Room to frame one more FPDU of at most max_fpdu octets, copied or referenced, while less
 * than limit is queued. buf keeps tail + ext_bytes <= cap so that tx_materialize can always
 * copy every referenced octet. */
static bool tx_room(struct rn_qp *qp, size_t limit)
{
	struct rn_qp_tx *t = &qp->tx;

	if (tx_empty(t))
		t->head = t->tail = 0;
	if (t->head > 0 && t->cap - t->tail - t->ext_bytes < t->max_fpdu) {
		memmove(t->buf, t->buf + t->head, t->tail - t->head);
		t->tail -= t->head;
		t->head = 0;
	}
	if (t->tail - t->head + t->ext_bytes >= limit)
		return false;   /* enough is queued */
	if (t->space_known && limit - (t->tail - t->head + t->ext_bytes) < RN_TX_SPACE_MIN)
		return false;   /* the transport's signal brings us back with more room */
	if (t->etail - t->ehead > RN_TX_ENTS - RN_TX_SEG_ENTS)
		return false;
	return t->cap - t->tail - t->ext_bytes >= t->max_fpdu;
}

/* Copy every referenced octet still queued into buf, keeping wire order: the queue becomes
 * one buf entry at the end of buf. Backwards, so no buf octet is overwritten before it moved
 * (cap - tail >= ext_bytes). false: some referenced memory faulted (unmapped after its
 * check, rn_fault.h); its octets are zeros, so the stream keeps its framing, and the caller
 * fails the QP. */
static bool tx_materialize(struct rn_qp_tx *t)
{
	size_t w = t->cap, src = t->tail;
	bool ok = true;

	if (!t->ext_bytes)
		return true;
	for (uint32_t i = t->etail; i != t->ehead;) {
		const struct tx_ent *e = &t->ent[--i % RN_TX_ENTS];
		size_t off = i == t->ehead ? t->eoff : 0, n = e->len - off;

		w -= n;
		if (e->ext) {
			if (!rn_copy_guarded(t->buf + w, e->ext + off, n)) {
				memset(t->buf + w, 0, n);
				ok = false;
			}
		} else {
			src -= n;
			memmove(t->buf + w, t->buf + src, n);
		}
	}
	t->ent[t->ehead % RN_TX_ENTS] = (struct tx_ent){ NULL, t->cap - w };
	t->etail = t->ehead + 1;
	t->eoff = 0;
	t->ext_bytes = 0;
	t->head = w;
	t->tail = t->cap;
	return ok;
}

/* Registered memory a queued reference points to faulted: which WR or Read Response it
 * belonged to is not known here, so the whole QP fails (Terminate, QP_FATAL, every WR not
 * complete is flushed); never a signal. */
static void tx_ref_faulted(struct rn_qp *qp)
{
	rn_qp_local_error(qp, rdmap_err(RDMAP_ETYPE_CATASTROPHIC, RDMAP_ECODE_CATASTROPHIC),
			  RN_QPE_LOCAL_CATASTROPHIC, false);
}

void rn_qp_tx_queue_raw(struct rn_qp *qp, const void *p, size_t n)
{
	struct rn_qp_tx *t = &qp->tx;

	if (!n || n > t->cap - t->tail - t->ext_bytes || t->eoff)
		return;
	/* streaming-mode octets go before every FPDU and outside the marker origin */
	memmove(t->buf + t->head + n, t->buf + t->head, t->tail - t->head);
	memcpy(t->buf + t->head, p, n);
	t->tail += n;
	t->queued_total += n;
	if (!tx_empty(t) && !t->ent[t->ehead % RN_TX_ENTS].ext)
		t->ent[t->ehead % RN_TX_ENTS].len += n;
	else
		t->ent[--t->ehead % RN_TX_ENTS] = (struct tx_ent){ NULL, n };
	for (uint32_t i = t->mhead; i != t->mtail; i++)
		t->marks[i % RN_TX_MARKS].end += n;
	t->raw_end = t->sent_total + n;
}

/* Total wire length of a marker-free FPDU from its ULPDU_Length: header, ULPDU, pad to 4,
 * CRC (the field is there even when CRC is off). RFC 5044 §4. */
static size_t mpa_fpdu_rec_len(const uint8_t hdr[2])
{
	size_t ulpdu = (size_t)hdr[0] << 8 | hdr[1];

	return MPA_HDR_LEN + ulpdu + mpa_pad_len(ulpdu) + MPA_CRC_LEN;
}

/* A transport that can keeps every FPDU whole and at the start of a TCP segment (the MPA
 * alignment rule, RFC 5044 §5); kernel sockets cannot (-EOPNOTSUPP: nothing changes). The
 * passive side enters RTS with its MPA Reply still queued as raw octets (and the RTR or a
 * first message may be framed behind it): record mode starts once those octets are with the
 * transport, and tx_flush offers nothing past them before. */
static void records_on(struct rn_qp *qp)
{
	qp->tx.rec_pending = false;
	(void)rn_conn_set_records(qp->conn, mpa_fpdu_rec_len);
}

void rn_qp_tx_use_records(struct rn_qp *qp)
{
	struct rn_qp_tx *t = &qp->tx;

	if (!qp->conn || qp->llp.params.markers_tx)
		return;
	if (t->raw_end > t->sent_total)
		t->rec_pending = true;
	else
		records_on(qp);
}

static bool marks_full(const struct rn_qp_tx *t)
{
	return t->mtail - t->mhead >= RN_TX_MARKS;
}

static void add_mark(struct rn_qp *qp, enum tx_mark_kind k, uint32_t idx)
{
	struct tx_mark *m = &qp->tx.marks[qp->tx.mtail++ % RN_TX_MARKS];

	m->end = qp->tx.queued_total;
	m->kind = (uint8_t)k;
	m->idx = idx;
}

static void mark_reached(struct rn_qp *qp, const struct tx_mark *m)
{
	if (m->kind == MARK_SQ) {
		struct rn_sqe *e = rn_qp_sqe(qp, m->idx);
		e->done = true;   /* handed to the transport: Send / Write complete */
	} else if (qp->irq_head != qp->irq_next) {
		qp->irq_head++;   /* Read Response out: the IRD slot is free again */
	}
}

/* Part of the octets before end is still read by the transport from registered memory. */
static bool tx_held_before(const struct rn_qp_tx *t, uint64_t end)
{
	return t->hhead != t->htail && t->held[t->hhead % RN_TX_HELD].start < end;
}

/* Messages handed over: reached. A Send / Write whose memory the transport still reads
 * waits for its release (and the SQ completes in order behind it); a Read Response frees
 * its IRD slot at once, as without references: the requester may already have its data
 * and send the next Read Request before its ACK reaches us. */
static void tx_marks(struct rn_qp *qp)
{
	struct rn_qp_tx *t = &qp->tx;

	/* [mhead, mscan): handed over, Read Responses among them done, Sends / Writes waiting;
	 * held batches are released in order, so the waiting ones go from the oldest on */
	while (t->mhead != t->mscan) {
		struct tx_mark *m = &t->marks[t->mhead % RN_TX_MARKS];

		if (m->kind == MARK_SQ && tx_held_before(t, m->end))
			break;
		if (m->kind != MARK_DONE)
			mark_reached(qp, m);
		t->mhead++;
	}
	for (; t->mscan != t->mtail; t->mscan++) {
		struct tx_mark *m = &t->marks[t->mscan % RN_TX_MARKS];

		if (m->end > t->sent_total)
			break;
		if (m->kind == MARK_SQ && (t->mhead != t->mscan || tx_held_before(t, m->end)))
			continue;   /* waits, behind or for a held batch */
		mark_reached(qp, m);
		m->kind = MARK_DONE;
		if (t->mhead == t->mscan)
			t->mhead++;
	}
}

/* The transport released held batches: their messages may complete. */
static void tx_released(struct rn_qp *qp)
{
	struct rn_qp_tx *t = &qp->tx;
	uint64_t done;

	if (t->hhead == t->htail || !qp->conn)
		return;
	done = rn_conn_ref_released(qp->conn);
	while (t->hhead != t->htail && t->held[t->hhead % RN_TX_HELD].batch <= done)
		t->hhead++;
	tx_marks(qp);
}

/* ---- transport ----------------------------------------------------------------------------- */

/* Hand iov to the transport: by reference where it can and payload is offered (ref[i]: the
 * entry is registered memory), by copy otherwise. A batch taken by reference is held. */
static ssize_t tx_send(struct rn_qp *qp, const struct iovec *iov, unsigned cnt, const bool *ref,
		       bool any_ref)
{
	struct rn_qp_tx *t = &qp->tx;
	bool held = false;
	ssize_t n;

	if (!any_ref || !rn_conn_can_ref(qp->conn) || t->htail - t->hhead >= RN_TX_HELD)
		return rn_conn_sendv(qp->conn, iov, cnt);
	n = rn_conn_sendv_ref(qp->conn, iov, cnt, ref, t->batch_seq + 1, &held);
	if (n > 0 && held) {
		t->held[t->htail++ % RN_TX_HELD] = (struct tx_held){ ++t->batch_seq, t->sent_total,
								    t->sent_total + (uint64_t)n };
	}
	return n;
}

/* Hand queued octets to the transport in one sendv. > 0 sent, 0 nothing fitted, < 0 the
 * stream failed; *all: everything offered was taken. */
static long tx_flush(struct rn_qp *qp, bool *all)
{
	struct rn_qp_tx *t = &qp->tx;
	struct iovec iov[RN_TX_ENTS];
	bool ref[RN_TX_ENTS], any_ref = false;
	unsigned cnt = 0;
	size_t bpos = t->head, off = t->eoff, offered = 0;
	ssize_t n;

	/* before record mode starts, offer nothing past the raw octets */
	size_t limit = t->rec_pending ? (size_t)(t->raw_end - t->sent_total) : SIZE_MAX;

	*all = false;
	if (!qp->conn || tx_empty(t))
		return 0;
	for (uint32_t i = t->ehead; i != t->etail && cnt < RN_TX_ENTS && offered < limit; i++) {
		const struct tx_ent *e = &t->ent[i % RN_TX_ENTS];
		size_t len = e->len - off;

		if (len > limit - offered)
			len = limit - offered;

		ref[cnt] = e->ext != NULL;
		any_ref |= ref[cnt];
		if (e->ext) {
			iov[cnt++] = (struct iovec){ (void *)(e->ext + off), len };
		} else {
			iov[cnt++] = (struct iovec){ t->buf + bpos, len };
			bpos += len;
		}
		offered += len;
		off = 0;
	}
	n = tx_send(qp, iov, cnt, ref, any_ref);
	if (n == -EAGAIN)
		return 0;
	if (n == -EFAULT && any_ref) {
		/* a referenced run was unmapped after its check: the kernel took nothing. Its
		 * octets become zeros in buf (the FPDU stays whole), then the Terminate follows */
		tx_materialize(t);
		tx_ref_faulted(qp);
		return 0;
	}
	if (n < 0) {
		rn_qp_llp_send_failed(qp, (long)n);
		return -1;
	}
	*all = (size_t)n == offered;
	t->sent_total += (uint64_t)n;
	if (t->rec_pending && t->sent_total >= t->raw_end)
		records_on(qp);
	for (size_t left = (size_t)n; left;) {
		struct tx_ent *e = &t->ent[t->ehead % RN_TX_ENTS];
		size_t rem = e->len - t->eoff, k = left < rem ? left : rem;

		if (e->ext)
			t->ext_bytes -= k;
		else
			t->head += k;
		left -= k;
		if (k == rem) {
			t->ehead++;
			t->eoff = 0;
		} else {
			t->eoff += k;
		}
	}
	tx_marks(qp);
	return (long)n;
}

/* ---- framing ------------------------------------------------------------------------------ */

/* Frame one ULPDU (header + payload) into the buffer. */
static int frame(struct rn_qp *qp, const uint8_t *hdr, size_t hlen, const uint8_t *pl, size_t plen)
{
	struct rn_qp_tx *t = &qp->tx;
	struct iovec iov[2] = { { (void *)hdr, hlen }, { (void *)pl, plen } };
	ssize_t n = mpa_tx_encode(&t->mpa, iov, plen ? 2 : 1, t->buf + t->tail,
				  t->cap - t->tail - t->ext_bytes);

	if (n < 0)
		return -1;
	t->tail += (size_t)n;
	ent_push(t, NULL, (size_t)n);
	return 0;
}

/* An unexpected opcode normally copies no header (the opcode cannot be trusted, RFC 5040 §7
 * as siw does it); a Send missing after a prefix Immediate Data is a well-formed header in
 * the wrong place, so the Terminate shows it (M and D). */
static void term_copy_ddp_hdr(struct rn_qp *qp)
{
	struct rdmap_term *tm = &qp->tx.term;
	size_t hl = qp->rx.ddp_hlen;

	if (!hl || hl > sizeof(tm->ddp_hdr) || qp->term_src_len < hl)
		return;
	tm->m = tm->d = true;
	tm->ddp_seg_len = (uint16_t)qp->term_src_len;
	memcpy(tm->ddp_hdr, qp->term_src, hl);
	tm->ddp_hdr_len = (uint8_t)hl;
}

void rn_qp_tx_terminate(struct rn_qp *qp, struct iwarp_err e)
{
	struct rn_qp_tx *t = &qp->tx;

	rdmap_term_build(e, qp->term_src_len ? qp->term_src : NULL, qp->term_src_len, &t->term);
	if (qp->term_copy_hdr)
		term_copy_ddp_hdr(qp);
	qp->term_copy_hdr = false;
	if (t->term.m && qp->term_src_ulpdu <= 0xffff)
		t->term.ddp_seg_len = (uint16_t)qp->term_src_ulpdu;  /* real length, not the head */
	t->term_pending = true;
	t->cur = TXM_NONE;   /* a message being segmented stops on this segment boundary */
}

static void frame_terminate(struct rn_qp *qp)
{
	uint8_t u[DDP_UNTAGGED_HDR_LEN + RDMAP_TERM_MAX_LEN];
	size_t n = rdmap_term_ulpdu_encode(&qp->tx.term, qp->tx.msn[RDMAP_QN_TERMINATE], u, sizeof(u));

	qp->tx.term_pending = false;
	if (n && frame(qp, u, n, NULL, 0) == 0) {
		const struct iwarp_err *e = &qp->tx.term.err;

		qp->tx.msn[RDMAP_QN_TERMINATE]++;
		RN_QP_STAT(qp, tx_fpdus, 1);
		RN_QP_STAT(qp, tx_octets, rn_stats_fpdu_octets(n));
		RN_QP_STAT(qp, term_tx[rn_stats_term_layer(e->layer)][rn_stats_term_etype(e->etype)], 1);
	}
}

/* ---- payload gathering ------------------------------------------------------------------- */

/* Copy a validated translation's runs into dst. 0, -1 if the entry changed meanwhile, -2 if
 * the memory faulted (unmapped or protected after registration, rn_fault.h). */
static int copy_ref_out(struct rn_qp *qp, struct rn_mem_ref *ref, uint8_t *dst, uint64_t len)
{
	while (len) {
		uint64_t n = ref->run < len ? ref->run : len;
		if (n == 0)
			return -1;
		if (!rn_copy_guarded(dst, ref->addr, n))
			return -2;
		dst += n;
		len -= n;
		if (len && rn_mem_ref_next(qp->ia.mem, ref) != 0)
			return -1;
	}
	return 0;
}

/* The next source run of the SQ WR's SGL at the cursor: skips exhausted SGEs, takes at most
 * len octets of the current one (*n) and checks that range right now (an earlier
 * Fast-Register / Invalidate on this SQ may have changed it). The cursor does not move. */
static enum rn_wc_status next_src_run(struct rn_qp *qp, const struct rn_sqe *e, uint32_t len,
				      uint64_t *n, struct rn_mem_ref *ref)
{
	struct rn_qp_tx *t = &qp->tx;
	uint32_t fl = qp->ia.privileged ? RN_MEM_PRIVILEGED : 0;
	const struct rn_rq_sge *s = &e->sge[t->src_sge];

	while (s->length == t->src_off) {
		t->src_sge++;
		t->src_off = 0;
		s = &e->sge[t->src_sge];
	}
	*n = s->length - t->src_off;
	if (*n > len)
		*n = len;
	/* it covers the whole SGE from its start: *n fits */
	if (t->src_sge == 0 && t->src_off == 0 && rn_ref_once_take(&t->src0, ref))
		return RN_WC_SUCCESS;
	return rn_mem_check_local_sge(qp->ia.mem, qp->ia.pd, fl, s->stag, s->addr + t->src_off,
				      *n, RN_ACC_LOCAL_READ, ref);
}

/* Gather len octets of the SQ WR's SGL from the cursor into dst. */
static enum rn_wc_status gather_sgl(struct rn_qp *qp, struct rn_sqe *e, uint8_t *dst, uint32_t len)
{
	while (len) {
		struct rn_mem_ref ref;
		uint64_t n;
		enum rn_wc_status st = next_src_run(qp, e, len, &n, &ref);

		if (st != RN_WC_SUCCESS)
			return st;
		int r = copy_ref_out(qp, &ref, dst, n);
		if (r != 0)
			return r == -2 ? RN_WC_ACCESS_VIOLATION : RN_WC_INVALID_STAG;
		dst += n;
		len -= (uint32_t)n;
		qp->tx.src_off += n;
	}
	return RN_WC_SUCCESS;
}

/* Zero-copy: the runs of a validated translation as gather entries. 0, -1 the entry changed
 * meanwhile, 1 more than max entries (the caller copies instead). */
static int ref_runs(struct rn_qp *qp, struct rn_mem_ref *ref, uint64_t len, struct iovec *iov,
		    unsigned *cnt, unsigned max)
{
	while (len) {
		uint64_t n = ref->run < len ? ref->run : len;
		if (n == 0)
			return -1;
		if (*cnt == max)
			return 1;
		iov[(*cnt)++] = (struct iovec){ ref->addr, n };
		len -= n;
		if (len && rn_mem_ref_next(qp->ia.mem, ref) != 0)
			return -1;
	}
	return 0;
}

/* gather_sgl without the copy: the same checks, in the same place (before any octet is
 * read), the payload runs appended to iov. 1: too many runs, cursor unchanged. */
static int collect_sgl(struct rn_qp *qp, struct rn_sqe *e, uint32_t len, struct iovec *iov,
		       unsigned *cnt, unsigned max, enum rn_wc_status *stp)
{
	struct rn_qp_tx *t = &qp->tx;
	uint32_t sge0 = t->src_sge;
	uint64_t off0 = t->src_off;

	while (len) {
		struct rn_mem_ref ref;
		uint64_t n;
		int r;

		*stp = next_src_run(qp, e, len, &n, &ref);
		if (*stp != RN_WC_SUCCESS)
			return -1;
		r = ref_runs(qp, &ref, n, iov, cnt, max);
		if (r > 0) {
			t->src_sge = sge0;
			t->src_off = off0;
			return 1;
		}
		if (r < 0) {
			*stp = RN_WC_INVALID_STAG;
			return -1;
		}
		len -= (uint32_t)n;
		t->src_off += n;
	}
	return 0;
}

/* ---- SQ WR start ----------------------------------------------------------------------------- */

static bool is_read(uint8_t op)
{
	return op == RN_WR_RDMA_READ || op == RN_WR_RDMA_READ_INV;
}

/* Every SGE of a Send / Write source, whole, before the first octet goes out. */
static enum rn_wc_status check_sgl(struct rn_qp *qp, const struct rn_sqe *e)
{
	uint32_t fl = qp->ia.privileged ? RN_MEM_PRIVILEGED : 0;
	struct rn_mem_ref ref;

	rn_ref_once_drop(&qp->tx.src0);
	if (e->total > UINT32_MAX)
		return RN_WC_INVALID_LENGTH;
	if (e->inline_data)
		return RN_WC_SUCCESS;
	for (int i = 0; i < e->wr.num_sge; i++) {
		enum rn_wc_status st = rn_mem_check_local_sge(qp->ia.mem, qp->ia.pd, fl,
							      e->sge[i].stag, e->sge[i].addr,
							      e->sge[i].length, RN_ACC_LOCAL_READ,
							      &ref);
		if (st != RN_WC_SUCCESS) {
			rn_ref_once_drop(&qp->tx.src0);
			return st;
		}
		if (i == 0 && e->sge[0].length > 0)
			rn_ref_once_keep(&qp->tx.src0, &ref);
	}
	return RN_WC_SUCCESS;
}

/* The WR failed when processed: its error completion, then the QP goes to Terminate with
 * 0x0000 (Fig. 23) and no async event (it is reported in the WC). */
static void sq_fail(struct rn_qp *qp, struct rn_sqe *e, enum rn_wc_status st)
{
	e->done = true;
	e->status = (uint8_t)st;
	e->wait_sync = false;
	rn_qp_local_error(qp, rdmap_err(RDMAP_ETYPE_CATASTROPHIC, RDMAP_ECODE_CATASTROPHIC),
			  RN_QPE_NONE, true);
}

static bool prior_read_pending(struct rn_qp *qp)
{
	return qp->orq_head != qp->orq_tail;
}

static bool prior_wr_pending(struct rn_qp *qp)
{
	for (uint32_t i = qp->sq_head; i != qp->sq_proc; i++) {
		struct rn_sqe *e = rn_qp_sqe(qp, i);
		if (!e->done || e->wait_sync)
			return true;
	}
	return false;
}

/* Fences and ORD (§8.2.2 rule 18, §8.2.2.2): the SQ head waits, nothing passes it. */
static bool sq_stalled(struct rn_qp *qp, const struct rn_sqe *e)
{
	if ((e->wr.flags & RN_SEND_FENCE) && prior_read_pending(qp))
		return true;
	if ((e->wr.flags & RN_SEND_LOCAL_FENCE) && prior_wr_pending(qp))
		return true;
	if (is_read(e->op) && qp->alloc.ord > 0 && qp->orq_tail - qp->orq_head >= qp->alloc.ord)
		return true;
	return false;
}

/* 0, or -1 and *err: the message cannot be segmented (a tagged TO + length that wraps 2^64,
 * an untagged MO past 2^32). The caller reports it: nothing of the message was framed. */
static int start_segmenting(struct rn_qp *qp, const struct ddp_hdr *tmpl, uint64_t len,
			    struct iwarp_err *err)
{
	qp->tx.src_sge = 0;
	qp->tx.src_off = 0;
	return ddp_seg_init(&qp->tx.it, tmpl, len, qp->tx.mulpdu, 0, err);
}

/* RFC 7306 Immediate Data, softrnic's 8 octets (docs/rdmap.md): the value as posted (verbs'
 * __be32, memory order), the kind, 3 zero octets. */
static bool start_imm(struct rn_qp *qp, struct rn_sqe *e, uint8_t kind)
{
	struct iwarp_err err;
	bool se = kind == RN_IMM_KIND_WRITE && (e->wr.flags & RN_SEND_SOLICITED);
	struct ddp_hdr h = rdmap_ddp_tmpl(se ? RDMAP_OP_IMM_DATA_SE : RDMAP_OP_IMM_DATA, 0, 0,
					  qp->tx.msn[RDMAP_QN_SEND]++, 0);

	memset(qp->tx.body, 0, RDMAP_IMM_DATA_LEN);
	memcpy(qp->tx.body, &e->wr.imm_data, 4);
	qp->tx.body[4] = kind;
	if (start_segmenting(qp, &h, RDMAP_IMM_DATA_LEN, &err) != 0) {   /* 8 octets at MO 0 */
		sq_fail(qp, e, RN_WC_INVALID_WQE);
		return false;
	}
	qp->tx.has_body = true;
	return true;
}

/* The Send or Write message of a data WR (the SGL / inline payload). false: it cannot be
 * sent (a Write whose remote TO + length wraps 2^64; a Send past DDP's 2^32 MO space): the
 * WR completes in error and the QP goes to Error (sq_fail), as for a bad local SGE. */
static bool start_payload(struct rn_qp *qp, struct rn_sqe *e)
{
	struct iwarp_err err;
	static const enum rdmap_opcode rop[] = {
		[RN_WR_SEND] = RDMAP_OP_SEND, [RN_WR_SEND_SE] = RDMAP_OP_SEND_SE,
		[RN_WR_SEND_INV] = RDMAP_OP_SEND_INV, [RN_WR_SEND_SE_INV] = RDMAP_OP_SEND_SE_INV,
		[RN_WR_RDMA_WRITE] = RDMAP_OP_WRITE,
	};
	struct ddp_hdr h;

	if (e->op == RN_WR_RDMA_WRITE || e->op == RN_WR_RDMA_WRITE_IMM) {
		h = rdmap_ddp_tmpl(RDMAP_OP_WRITE, e->wr.wr.rdma.rkey, e->wr.wr.rdma.remote_addr, 0, 0);
	} else {
		enum rdmap_opcode op = e->op == RN_WR_SEND_IMM
			? ((e->wr.flags & RN_SEND_SOLICITED) ? RDMAP_OP_SEND_SE : RDMAP_OP_SEND)
			: rop[e->op];
		h = rdmap_ddp_tmpl(op, 0, 0, qp->tx.msn[RDMAP_QN_SEND]++, e->wr.wr.send.inv_stag);
	}
	if (start_segmenting(qp, &h, e->total, &err) != 0) {
		sq_fail(qp, e, h.tagged && err.ecode == DDP_ECODE_T_TO_WRAP ? RN_WC_WRAP
									   : RN_WC_INVALID_LENGTH);
		return false;
	}
	qp->tx.has_body = false;
	return true;
}

/* Send with immediate: the prefix Immediate Data first, the Send right after it (the receiver
 * pairs them by order on QN 0). Write with immediate: the Write, then Immediate Data, so the
 * peer's completion follows the placement of every Write octet (stream order). */
static bool start_data(struct rn_qp *qp, struct rn_sqe *e)
{
	enum rn_wc_status st = check_sgl(qp, e);

	if (st != RN_WC_SUCCESS) {
		sq_fail(qp, e, st);
		return false;
	}
	qp->tx.more = e->op == RN_WR_SEND_IMM || e->op == RN_WR_RDMA_WRITE_IMM;
	if (e->op == RN_WR_SEND_IMM)
		return start_imm(qp, e, RN_IMM_KIND_PREFIX);
	return start_payload(qp, e);
}

/* The first message of a two-message WR was framed: start the second one. false: it failed
 * (sq_fail reported it). */
static bool start_second(struct rn_qp *qp, struct rn_sqe *e)
{
	qp->tx.more = false;
	if (e->op == RN_WR_SEND_IMM)
		return start_payload(qp, e);
	return start_imm(qp, e, RN_IMM_KIND_WRITE);
}

static bool start_read(struct rn_qp *qp, struct rn_sqe *e, uint32_t idx)
{
	struct rdmap_read_req rr = { 0 };
	struct rn_orq_ent *o;
	struct iwarp_err err;
	struct ddp_hdr h;

	if (qp->alloc.ord == 0) {
		sq_fail(qp, e, RN_WC_ZERO_ORD);
		return false;
	}
	if (e->total > UINT32_MAX) {
		sq_fail(qp, e, RN_WC_INVALID_LENGTH);
		return false;
	}
	if (e->wr.num_sge == 1 && e->sge[0].stag == 0 && e->total && !qp->ia.privileged) {
		sq_fail(qp, e, RN_WC_QP_NOT_PRIVILEGED);
		return false;
	}
	if (e->wr.num_sge == 1) {
		rr.sink_stag = e->sge[0].stag;
		rr.sink_to = e->sge[0].addr;
	}
	rr.size = (uint32_t)e->total;
	rr.src_stag = e->wr.wr.rdma.rkey;
	rr.src_to = e->wr.wr.rdma.remote_addr;
	rdmap_read_req_encode(&rr, qp->tx.body);
	qp->tx.more = false;
	o = &qp->orq[qp->orq_tail++ % qp->orq_cap];
	*o = (struct rn_orq_ent){ idx, rr.sink_stag, rr.sink_to, rr.size, 0 };
	h = rdmap_ddp_tmpl(RDMAP_OP_READ_REQ, 0, 0, qp->tx.msn[RDMAP_QN_READ_REQ]++, 0);
	if (start_segmenting(qp, &h, RDMAP_READ_REQ_LEN, &err) != 0) {   /* 28 octets at MO 0 */
		sq_fail(qp, e, RN_WC_INVALID_WQE);
		return false;
	}
	qp->tx.has_body = true;
	return true;
}

/* Bind / Fast-Register / Local Invalidate: executed now, in SQ order. */
static void run_memory_wr(struct rn_qp *qp, struct rn_sqe *e)
{
	enum rn_wc_status st;
	bool sync = false;

	switch (e->op) {
	case RN_WR_BIND_MW:
		st = rn_mem_bind_mw(qp->ia.mem, &qp->mq, &e->wr.wr.bind);
		break;
	case RN_WR_LOCAL_INV:
		st = rn_mem_local_inv(qp->ia.mem, &qp->mq, e->wr.wr.inv.stag);
		sync = true;
		break;
	default:
		st = qp->ia.privileged ? rn_mem_fast_reg(qp->ia.mem, &qp->mq, &e->wr.wr.fast_reg)
				       : RN_WC_QP_NOT_PRIVILEGED;
		sync = true;
		break;
	}
	if (st != RN_WC_SUCCESS) {
		sq_fail(qp, e, st);
		return;
	}
	e->done = true;
	if (sync) {
		e->ticket = rn_mem_sync_start(qp->ia.mem);
		e->wait_sync = !rn_mem_sync_done(qp->ia.mem, e->ticket);
		if (e->wait_sync)
			qp->need_wake = true;
	}
}

/* Start the SQ WR at sq_proc. true: a wire message is now being segmented. */
static bool sq_start_one(struct rn_qp *qp, bool *stall)
{
	uint32_t idx = qp->sq_proc;
	struct rn_sqe *e = rn_qp_sqe(qp, idx);

	rn_qp_sq_complete(qp);
	if (sq_stalled(qp, e)) {
		*stall = true;
		return false;
	}
	qp->sq_proc++;
	if (rn_wr_is_memory(e->op)) {
		run_memory_wr(qp, e);
		return false;
	}
	bool ok = is_read(e->op) ? start_read(qp, e, idx) : start_data(qp, e);
	if (ok) {
		qp->tx.cur = TXM_SQ;
		qp->tx.cur_idx = idx;
	}
	return ok;
}

static bool sq_next(struct rn_qp *qp)
{
	bool stall = false;

	while (qp->sq_proc != qp->sq_tail && !stall && qp->sm.state == RN_QPS_RTS) {
		if (sq_start_one(qp, &stall))
			return true;
	}
	return false;
}

static bool rresp_next(struct rn_qp *qp)
{
	struct rn_irq_ent *r;
	struct iwarp_err err;
	struct ddp_hdr h;

	if (qp->irq_next == qp->irq_tail)
		return false;
	r = &qp->irq[qp->irq_next % qp->irq_cap];
	h = rdmap_ddp_tmpl(RDMAP_OP_READ_RESP, r->sink_stag, r->sink_to, 0, 0);
	if (start_segmenting(qp, &h, r->size, &err) != 0) {
		/* the Read Request's check (head_read_req) keeps a wrapping sink out of the
		 * IRRQ; should one get here, the peer hears of it: Terminate, TO wrap */
		rn_qp_local_error(qp, rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_TO_WRAP),
				  RN_QPE_IRRQ_WRAP, false);
		return false;
	}
	qp->tx.has_body = false;
	qp->tx.more = false;
	qp->tx.cur = TXM_RRESP;
	return true;
}

/* Pick the next outbound message: Read Responses and SQ messages take turns. */
static bool next_message(struct rn_qp *qp)
{
	bool rr_ready = qp->irq_next != qp->irq_tail;

	if (rr_ready && (qp->tx.rr_turn || qp->sq_proc == qp->sq_tail)) {
		qp->tx.rr_turn = false;
		return rresp_next(qp);
	}
	qp->tx.rr_turn = true;
	if (sq_next(qp))
		return true;
	return rr_ready && rresp_next(qp);
}

/* ---- segments ------------------------------------------------------------------------------- */

static enum rn_qp_async irrq_event(struct iwarp_err e)
{
	static const enum rn_qp_async ev[] = {
		RN_QPE_IRRQ_STAG, RN_QPE_IRRQ_BASE_BOUNDS, RN_QPE_IRRQ_ACCESS,
		RN_QPE_IRRQ_INVALID_PD, RN_QPE_IRRQ_WRAP,
	};
	return e.ecode < 5 ? ev[e.ecode] : RN_QPE_IRRQ_STAG;
}

/* Read Response payload from the source, re-checked for this segment. */
static int gather_rresp(struct rn_qp *qp, uint64_t off, uint8_t *dst, uint32_t len)
{
	struct rn_irq_ent *r = &qp->irq[qp->irq_next % qp->irq_cap];
	struct rn_mem_ref ref;
	struct iwarp_err err;

	if (rn_mem_check_tagged(qp->ia.mem, qp->ia.pd, qp->alloc.qp_id, r->src_stag,
				r->src_to + off, len, RN_ACC_REMOTE_READ, &ref, &err) == 0) {
		int k = copy_ref_out(qp, &ref, dst, len);
		if (k == 0)
			return 0;
		/* the source's memory is gone: RFC 5040 access rights violation */
		err = k == -2 ? rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_ACCESS)
			      : rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_INVALID_STAG);
	}
	if (err.layer != IWARP_LAYER_RDMAP)
		err = rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_INVALID_STAG);
	/* §6.4 item 5: a Terminate instead of the bad response */
	rn_qp_local_error(qp, err, irrq_event(err), false);
	return -1;
}

/* gather_rresp without the copy. 0, -1 failed (Terminate queued), 1 too many runs. */
static int collect_rresp(struct rn_qp *qp, uint64_t off, uint32_t len, struct iovec *iov,
			 unsigned *cnt, unsigned max)
{
	struct rn_irq_ent *r = &qp->irq[qp->irq_next % qp->irq_cap];
	struct rn_mem_ref ref;
	struct iwarp_err err;
	int k;

	if (rn_mem_check_tagged(qp->ia.mem, qp->ia.pd, qp->alloc.qp_id, r->src_stag, r->src_to + off,
				len, RN_ACC_REMOTE_READ, &ref, &err) == 0) {
		k = ref_runs(qp, &ref, len, iov, cnt, max);
		if (k >= 0)
			return k;
	}
	if (err.layer != IWARP_LAYER_RDMAP)
		err = rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_INVALID_STAG);
	rn_qp_local_error(qp, err, irrq_event(err), false);
	return -1;
}

struct zc_frame_args {
	struct mpa_tx *mpa;
	const struct iovec *iov;
	unsigned cnt;
	struct mpa_tx_frame *f;
	int rc;
};

static void zc_frame_call(void *arg)
{
	struct zc_frame_args *a = arg;

	a->rc = mpa_tx_frame(a->mpa, a->iov, a->cnt, a->f);
}

/* mpa_tx_frame over referenced runs: with CRC it reads them, under the guard (rn_fault.h).
 * A fault fails what the segment belongs to, as a failed copy would (gather). */
static int zc_frame(struct rn_qp *qp, const struct iovec *iov, unsigned cnt,
		    struct mpa_tx_frame *f)
{
	struct rn_qp_tx *t = &qp->tx;
	struct zc_frame_args a = { &t->mpa, iov, cnt, f, 0 };

	if (!t->mpa.crc)
		return mpa_tx_frame(&t->mpa, iov, cnt, f);
	if (rn_call_guarded(zc_frame_call, &a))
		return a.rc;
	if (t->cur == TXM_RRESP) {
		rn_qp_local_error(qp, rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_ACCESS),
				  RN_QPE_IRRQ_ACCESS, false);
	} else {
		t->cur = TXM_NONE;
		sq_fail(qp, rn_qp_sqe(qp, t->cur_idx), RN_WC_ACCESS_VIOLATION);
	}
	return -1;
}

/* Queue the segment zero-copy: MPA + DDP header (copied) | payload runs (referenced) | pad +
 * CRC field (copied). 1 queued, 0 not applicable (the caller copies), -1 failed. */
static int zc_segment(struct rn_qp *qp, const struct ddp_seg *s, const uint8_t *hdr, size_t hl)
{
	struct rn_qp_tx *t = &qp->tx;
	struct iovec iov[RN_TX_SEG_ENTS - 2];
	const unsigned max = RN_TX_SEG_ENTS - 2;
	unsigned cnt = 1;
	struct mpa_tx_frame f;
	int r;

	if (t->mpa.markers || t->has_body || s->payload_len < RN_TX_ZC_MIN)
		return 0;
	iov[0] = (struct iovec){ (void *)hdr, hl };
	if (t->cur == TXM_RRESP) {
		r = collect_rresp(qp, s->payload_off, s->payload_len, iov, &cnt, max);
	} else {
		struct rn_sqe *e = rn_qp_sqe(qp, t->cur_idx);
		enum rn_wc_status st = RN_WC_SUCCESS;

		if (e->inline_data)
			return 0;
		r = collect_sgl(qp, e, s->payload_len, iov, &cnt, max, &st);
		if (r < 0) {
			t->cur = TXM_NONE;
			sq_fail(qp, e, st);
		}
	}
	if (r != 0)
		return r > 0 ? 0 : -1;
	if (zc_frame(qp, iov, cnt, &f) != 0)
		return -1;
	push_copy(t, f.hdr, MPA_HDR_LEN);
	push_copy(t, hdr, hl);
	for (unsigned i = 1; i < cnt; i++)
		ent_push(t, iov[i].iov_base, iov[i].iov_len);
	push_copy(t, f.trailer, f.trailer_len);
	return 1;
}

static int gather(struct rn_qp *qp, const struct ddp_seg *s, const uint8_t **pl)
{
	struct rn_qp_tx *t = &qp->tx;

	*pl = t->bounce;
	if (t->has_body) {
		*pl = t->body;
		return 0;
	}
	if (!s->payload_len)
		return 0;
	if (t->cur == TXM_RRESP)
		return gather_rresp(qp, s->payload_off, t->bounce, s->payload_len);
	struct rn_sqe *e = rn_qp_sqe(qp, t->cur_idx);
	if (e->inline_data) {
		*pl = e->inl + s->payload_off;
		return 0;
	}
	enum rn_wc_status st = gather_sgl(qp, e, t->bounce, s->payload_len);
	if (st != RN_WC_SUCCESS) {
		t->cur = TXM_NONE;
		sq_fail(qp, e, st);
		return -1;
	}
	return 0;
}

static void message_framed(struct rn_qp *qp)
{
	struct rn_qp_tx *t = &qp->tx;

	if (t->cur == TXM_RRESP) {
		qp->irq_next++;
		add_mark(qp, MARK_RRESP, 0);
	} else if (t->more) {
		/* same WR, no other message between */
		if (!start_second(qp, rn_qp_sqe(qp, t->cur_idx)))
			t->cur = TXM_NONE;
		return;
	} else if (!is_read(rn_qp_sqe(qp, t->cur_idx)->op)) {
		add_mark(qp, MARK_SQ, t->cur_idx);   /* Read Requests complete on their response */
	}
	t->cur = TXM_NONE;
}

/* Payload octets the next segment may carry: what the transport's known space leaves after
 * what is queued and one FPDU's framing (0: no cap). */
static uint32_t seg_cap(const struct rn_qp_tx *t)
{
	size_t queued = t->tail - t->head + t->ext_bytes;

	if (!t->space_known || t->limit < queued + RN_TX_SPACE_MIN)
		return 0;
	return (uint32_t)(t->limit - queued - RN_TX_FPDU_FRAMING);
}

/* A segment framed: its FPDU, and its message once at the last segment. */
static void tx_count(struct rn_qp *qp, const struct ddp_hdr *h, size_t hl, uint32_t payload)
{
	enum rn_stats_op op = rn_stats_op_of(h->rsvdulp & RDMAP_CTRL_OPCODE_MASK);

	RN_QP_STAT(qp, tx_fpdus, 1);
	RN_QP_STAT(qp, tx_octets, rn_stats_fpdu_octets(hl + payload));
	if (op == RN_STATS_NOPS)
		return;
	RN_QP_STAT(qp, tx_msg_octets[op], payload);
	if (h->last)
		RN_QP_STAT(qp, tx_msgs[op], 1);
}

/* Frame the next segment of the current message. */
static int encode_segment(struct rn_qp *qp)
{
	struct rn_qp_tx *t = &qp->tx;
	uint8_t hdr[DDP_UNTAGGED_HDR_LEN];
	const uint8_t *pl;
	struct ddp_seg s;

	if (!ddp_seg_next_max(&t->it, &s, seg_cap(t))) {
		t->cur = TXM_NONE;
		return 0;
	}
	size_t hl = ddp_hdr_encode(&s.hdr, hdr, sizeof(hdr));
	int zc = zc_segment(qp, &s, hdr, hl);
	if (zc < 0)
		return -1;
	if (zc == 0) {
		if (gather(qp, &s, &pl) != 0)
			return -1;
		if (frame(qp, hdr, hl, pl, s.payload_len) != 0)
			return -1;
	}
	tx_count(qp, &s.hdr, hl, s.payload_len);
	if (s.hdr.last)
		message_framed(qp);
	return 0;
}

/* Something may be framed now: asking the transport's space (a lock, and its signal armed
 * when short) is for pumps that have something to frame. */
static bool tx_framing_due(const struct rn_qp *qp)
{
	const struct rn_qp_tx *t = &qp->tx;

	return t->term_pending || t->cur != TXM_NONE || qp->irq_next != qp->irq_tail ||
	       qp->sq_proc != qp->sq_tail;
}

/* What to queue at most: what the transport takes now when it can tell (rn_conn_send_space;
 * less than RN_TX_SPACE_MIN arms its send-space signal), else RN_TX_BUF. Octets sendv
 * refuses are copied before the pump returns (tx_materialize): on the DPDK engine, whose send
 * buffer stays full while the window limits, framing RN_TX_BUF each time would copy almost
 * every payload octet twice; and one FPDU of up to 64 KiB (MTU 64000) framed into a smaller
 * space would be refused whole. So with a known space
 * the segments are cut to fit it (encode_segment). An error is left to sendv to report. A
 * pump with nothing to frame does not ask (space unknown, no cap). */
static size_t tx_limit(struct rn_qp *qp)
{
	ssize_t sp = tx_framing_due(qp) ? rn_conn_send_space(qp->conn, RN_TX_SPACE_MIN) : -1;

	qp->tx.space_known = sp >= 0;
	return sp >= 0 && (size_t)sp < RN_TX_BUF ? (size_t)sp : RN_TX_BUF;
}

/* Frame as much as the buffer holds, up to limit queued octets (one FPDU may pass it). */
static void tx_fill(struct rn_qp *qp, size_t limit)
{
	struct rn_qp_tx *t = &qp->tx;

	t->limit = limit;
	while (qp->conn && tx_room(qp, limit) && !marks_full(t)) {
		if (t->term_pending) {
			frame_terminate(qp);
			continue;
		}
		if (t->stopped || qp->sm.state != RN_QPS_RTS)
			break;
		if (t->cur == TXM_NONE && !next_message(qp) && !t->term_pending)
			break;
		if (t->cur != TXM_NONE && encode_segment(qp) != 0 && !t->term_pending)
			break;
	}
}

/* Frame and send until the transport is full, the budget is spent, or nothing is left. */
void rn_qp_tx_pump(struct rn_qp *qp)
{
	struct rn_qp_tx *t = &qp->tx;
	uint64_t start = t->sent_total;

	tx_released(qp);
	while (qp->conn && t->sent_total - start < RN_TX_BUDGET) {
		bool all;

		tx_fill(qp, tx_limit(qp));
		if (tx_empty(t))
			break;
		if (tx_flush(qp, &all) <= 0 || !all)
			break;   /* the transport is full: framing more would only be copied */
	}
	rn_ref_once_drop(&t->src0);   /* the next pump looks the SGE up again: it may be gone */
	if (!tx_materialize(t))
		tx_ref_faulted(qp);
	if (qp->conn && t->close_pending && !t->fin_sent && tx_empty(t) &&
	    !t->term_pending) {
		rn_conn_shutdown_write(qp->conn);   /* FIN after everything queued */
		t->fin_sent = true;
	}
	rn_qp_sq_complete(qp);
}

/* More to send than the transport took (the engine should watch EPOLLOUT). */
bool rn_qp_tx_busy(struct rn_qp *qp)
{
	struct rn_qp_tx *t = &qp->tx;

	if (!tx_empty(t) || t->term_pending)
		return true;
	if (t->close_pending && !t->fin_sent)
		return true;
	if (t->stopped || qp->sm.state != RN_QPS_RTS)
		return false;
	return t->cur != TXM_NONE || qp->irq_next != qp->irq_tail ||
	       (qp->sq_proc != qp->sq_tail && !sq_stalled(qp, rn_qp_sqe(qp, qp->sq_proc)));
}

/* The last Read Response octet of o was placed. */
void rn_qp_read_done(struct rn_qp *qp, struct rn_orq_ent *o)
{
	struct rn_sqe *e = rn_qp_sqe(qp, o->sq_idx);

	qp->orq_head++;
	e->done = true;
	if (e->op == RN_WR_RDMA_READ_INV) {
		enum rn_wc_status st = rn_mem_local_inv(qp->ia.mem, &qp->mq, o->sink_stag);
		if (st != RN_WC_SUCCESS) {
			sq_fail(qp, e, st);
			return;
		}
		e->ticket = rn_mem_sync_start(qp->ia.mem);
		e->wait_sync = !rn_mem_sync_done(qp->ia.mem, e->ticket);
	}
	rn_qp_sq_complete(qp);
}
