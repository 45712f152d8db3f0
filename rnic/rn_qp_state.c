/* The iWARP QP state machine as tables (see rn_qp_state.h; RDMA Verbs 1.0 §6.1-§6.6, §9.5.3).
 *
 * Decisions where the spec leaves a choice (also in docs/):
 *  D35 Posting per state. Idle: enqueue, hold. RTS: enqueue, process. Closing: PostRQ enqueues and
 *     flushes; PostSQ enqueues, then Bad Close (LLP Reset, async "Bad Close", -> Error), the
 *     "without Immediate Error" rows of Fig. 11 (T35 needs that path). "At some point MUST
 *     return an Immediate Error" holds because Closing is bounded by the LLP close timeout.
 *     Terminate and Error: Immediate Error (Invalid QP state) from the first moment; that is
 *     the point the spec says must come, and it is what Linux siw does for user QPs.
 *  D36 Remote FIN in RTS with SQ and IRRQ empty -> Closing with no event at that moment; the
 *     affiliated event §6.2.2.2 requires is the "LLP Close Complete" raised when Closing ends
 *     in Idle (or "Bad Close" / "LLP Connection ..." when it ends in Error), as §6.6.2.1 and T34
 *     describe. Fig. 37 has no "remote close started" event and we add none.
 *  D37 No "Error State Entered" event ever (§6.2.3 normative and Fig. 37 win over §6.6.2.2).
 *  D38 Modify RTS->Closing with SQ WQEs or inbound Reads in progress: the verb succeeds, the QP
 *     passes through Closing straight to Error (LLP Reset, "Bad Close"), the first option of
 *     §6.2.2.2. The same check runs on every Closing event.
 *  D39 Flushing starts on entry to Error, not in Terminate (the "MAY" of §6.2.3): Terminate is
 *     bounded by the LLP close timeout, and one flush point keeps the one-error rule simple.
 *  D40 LLP failure in Terminate raises "Bad Close" whatever the cause of the Terminate (§6.2.3
 *     names the Modify and WC cases; we treat the others alike). A clean LLP close in
 *     Terminate raises nothing: the cause was already reported (async event, WC, or Modify).
 *  D41 The LLP event names its cause in every state: incoming RST -> "LLP Connection Reset",
 *     timeout / retries -> "LLP Connection Lost" (Fig. 24 defines them by cause; §6.2.5's
 *     "LLP Connection Lost" for Closing is read as the generic failure case).
 *  D42 A Terminate arriving in Closing: LLP Reset, -> Error, "Bad Close" (it is incoming data,
 *     for which §6.2.5 says an async error MUST be generated); its buffer is kept queryable.
 *  D43 A local error in Closing: LLP Reset, -> Error, the error's own event unless it was
 *     reported in a WC. Local errors and segments in Terminate and Error are ignored.
 *  D44 LLP close complete while in RTS (no FIN seen first) is treated as LLP lost.
 *  D45 Idle->RTS without an LLP Stream Handle, or with one whose stream is not Established:
 *     RN_ERR_INVALID_LLP_HANDLE. An attribute the transition does not list (Fig. 4 and 5):
 *     RN_ERR_INVALID_MODIFIER; an attribute Fig. 5 lists but the device does not support
 *     changing (caps), or raising ORD without caps.grow_ord: RN_ERR_QP_ATTR_FIXED. A next
 *     state outside the enum: RN_ERR_INVALID_MODIFIER. Max RQ WRs on an S-RQ QP is accepted
 *     and ignored (Fig. 5 footnote 2); QP RQ Limit on a QP without S-RQ is an invalid modifier.
 *  D46 Status precedence in Modify: state value, transition, attribute set, LLP handle,
 *     attribute values (ORD, IRD, SQ, RQ, RQ limit), then the Error->Idle flush gate.
 *  D47 Error->Idle needs RN_QPI_FLUSH_DONE after the last flush issued, and no WQE left on the
 *     SQ or RQ; otherwise RN_ERR_STILL_FLUSHING.
 *  D218 Inbound Read / Write enables (RN_QPM_ACCESS) are not in Figs. 4-5; we accept them
 *     where attributes may change at all (Idle->Idle, Idle->RTS, RTS->RTS) because libibverbs
 *     sets them with IBV_QP_ACCESS_FLAGS (INIT, RTR, RTS) and siw applies them in any state.
 *     They only gate segments arriving after the Modify; nothing already placed changes.
 *  D48 Terminate codes: Modify->Terminate sends RDMAP Local Catastrophic 0x0000; Bad LLP Close
 *     sends 0x0207 (RDMAP / Remote Operation / Catastrophic localized to the stream, RFC 5040).
 *     A QP sends at most one Terminate per stream and never one after receiving one.
 *  D220 A QP created with close_to_error (every libibverbs QP) ends a graceful close in Error,
 *     not Idle: the LLP close done, it enters Error without an LLP reset, flushes both queues
 *     and raises "LLP Close Complete" as Idle would. Linux siw moves a closed QP to Error, and
 *     libibverbs users expect IBV_QPS_ERR after a disconnect with every WR completed. */
#include "rn_qp_state.h"

#include <assert.h>
#include <stddef.h>

/* ---- step output -------------------------------------------------------------------------- */

static void step_init(struct rn_qp_step *out, enum rn_qp_state s)
{
	out->status = RN_OK;
	out->from = s;
	out->to = s;
	out->n = 0;
}

static struct rn_qp_action *emit(struct rn_qp_step *out, enum rn_qp_act kind)
{
	assert(out->n < RN_QP_MAX_ACTIONS);
	struct rn_qp_action *a = &out->act[out->n++];

	a->kind = kind;
	a->event = RN_QPE_NONE;
	a->term = (struct iwarp_err){ 0, 0, 0 };
	return a;
}

static void emit_async(struct rn_qp_step *out, enum rn_qp_async ev)
{
	if (ev != RN_QPE_NONE)
		emit(out, RN_QPA_RAISE_ASYNC)->event = ev;
}

/* One Terminate per stream, never after one was received (§6.2.2.3). */
static void emit_term(struct rn_qp_sm *sm, struct rn_qp_step *out, struct iwarp_err t)
{
	if (sm->term_received || sm->term_sent)
		return;
	sm->term_sent = true;
	sm->term = t;
	emit(out, RN_QPA_SEND_TERMINATE)->term = t;
}

static void set_state(struct rn_qp_sm *sm, struct rn_qp_step *out, enum rn_qp_state s)
{
	sm->state = s;
	out->to = s;
}

/* ---- shared transitions ------------------------------------------------------------------- */

static void stop_processing(struct rn_qp_step *out)
{
	emit(out, RN_QPA_STOP_SQ);
	emit(out, RN_QPA_STOP_INBOUND);
}

static void flush_all(struct rn_qp_sm *sm, struct rn_qp_step *out)
{
	emit(out, RN_QPA_FLUSH_SQ);
	emit(out, RN_QPA_FLUSH_RQ);
	sm->flush_pending = true;
}

/* Leave a state that has a stream for Error: (reset,) disassociate, flush, then the event. */
static void enter_error(struct rn_qp_sm *sm, struct rn_qp_step *out, bool reset,
			enum rn_qp_async ev)
{
	if (reset)
		emit(out, RN_QPA_LLP_RESET);
	emit(out, RN_QPA_DISASSOCIATE_LLP);
	set_state(sm, out, RN_QPS_ERROR);
	flush_all(sm, out);
	emit_async(out, ev);
}

/* RTS -> Terminate: stop, Terminate (unless one was received), LLP close, then the event. */
static void enter_terminate(struct rn_qp_sm *sm, struct rn_qp_step *out,
			    const struct iwarp_err *t, enum rn_qp_async ev)
{
	stop_processing(out);
	if (t)
		emit_term(sm, out, *t);
	emit(out, RN_QPA_LLP_CLOSE);
	set_state(sm, out, RN_QPS_TERMINATE);
	emit_async(out, ev);
}

static bool closing_is_bad(const struct rn_qp_cond *c)
{
	return c->sq_wqes != 0 || c->irrq_busy;
}

/* RTS -> Closing (Modify or remote FIN); D38: straight on to Error if work remains. */
static void enter_closing(struct rn_qp_sm *sm, struct rn_qp_step *out, const struct rn_qp_cond *c)
{
	stop_processing(out);
	sm->llp_closed = false;
	set_state(sm, out, RN_QPS_CLOSING);
	if (closing_is_bad(c)) {
		enter_error(sm, out, true, RN_QPE_BAD_CLOSE);
		return;
	}
	emit(out, RN_QPA_FLUSH_RQ);
	emit(out, RN_QPA_LLP_CLOSE);
}

/* A new stream starts clean: Terminate flags, the one-error rule, the close flag. */
static void forget_stream(struct rn_qp_sm *sm)
{
	sm->llp_closed = false;
	sm->term_sent = false;
	sm->term_received = false;
	sm->term = (struct iwarp_err){ 0, 0, 0 };
	sm->errwc.error_done = false;
}

/* ---- Modify QP: rules (Figs. 4-5) and actions ----------------------------------------------- */

#define ATTRS (RN_QPM_ORD | RN_QPM_IRD | RN_QPM_SQ_DEPTH | RN_QPM_RQ_DEPTH | RN_QPM_RQ_LIMIT | \
	       RN_QPM_ACCESS)
#define FIG5_IDLE (RN_QPM_SQ_DEPTH | RN_QPM_RQ_DEPTH | RN_QPM_IRD | RN_QPM_RQ_LIMIT)
#define FIG5_RTS (RN_QPM_SQ_DEPTH | RN_QPM_RQ_DEPTH | RN_QPM_IRD)

typedef void (*mod_fn)(struct rn_qp_sm *, const struct rn_qp_modify *, const struct rn_qp_cond *,
		       struct rn_qp_step *);

struct mod_rule {
	mod_fn apply;       /* NULL: transition not allowed */
	unsigned required;  /* Fig. 4, required besides Next state */
	unsigned allowed;   /* Fig. 4 must-support + Fig. 5 optional */
};

static void commit_attrs(struct rn_qp_sm *sm, const struct rn_qp_modify *m, struct rn_qp_step *out)
{
	const struct rn_qp_attr *a = &m->attr;

	if (!(m->mask & ATTRS))
		return;
	if (m->mask & RN_QPM_ORD)
		sm->attr.ord = a->ord;
	if (m->mask & RN_QPM_IRD)
		sm->attr.ird = a->ird;
	if (m->mask & RN_QPM_SQ_DEPTH)
		sm->attr.sq_depth = a->sq_depth;
	if ((m->mask & RN_QPM_RQ_DEPTH) && !sm->has_srq)
		sm->attr.rq_depth = a->rq_depth;
	if (m->mask & RN_QPM_RQ_LIMIT) {
		sm->attr.rq_limit = a->rq_limit;
		sm->attr.rq_limit_armed = a->rq_limit_armed;
	}
	if (m->mask & RN_QPM_ACCESS) {
		sm->attr.inbound_read = a->inbound_read;
		sm->attr.inbound_write = a->inbound_write;
	}
	emit(out, RN_QPA_APPLY_ATTRS);
}

static void mod_attrs(struct rn_qp_sm *sm, const struct rn_qp_modify *m,
		      const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)c;
	commit_attrs(sm, m, out);
}

/* §6.2.1.2: reset the layers; with a Stream Message Buffer hold receive while it goes out, so
 * the peer's first FPDU is parsed only once iWARP mode is on (no early message lost). */
static void mod_idle_rts(struct rn_qp_sm *sm, const struct rn_qp_modify *m,
			 const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	bool msg = (m->mask & RN_QPM_STREAM_MSG) != 0;

	(void)c;
	commit_attrs(sm, m, out);
	forget_stream(sm);
	emit(out, RN_QPA_RESET_LAYERS);
	if (msg) {
		emit(out, RN_QPA_LLP_RX_HOLD);
		emit(out, RN_QPA_SEND_STREAM_MSG);
	}
	emit(out, RN_QPA_ASSOCIATE_LLP);
	if (msg)
		emit(out, RN_QPA_LLP_RX_RESUME);
	set_state(sm, out, RN_QPS_RTS);
	emit(out, RN_QPA_START_SQ);
}

static void mod_idle_error(struct rn_qp_sm *sm, const struct rn_qp_modify *m,
			   const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)m;
	(void)c;
	set_state(sm, out, RN_QPS_ERROR);  /* no stream: no LLP effect (§6.2.1.3) */
	flush_all(sm, out);
}

static void mod_rts_closing(struct rn_qp_sm *sm, const struct rn_qp_modify *m,
			    const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)m;
	enter_closing(sm, out, c);  /* no async event at the verb (§6.2.2.2) */
}

static void mod_rts_terminate(struct rn_qp_sm *sm, const struct rn_qp_modify *m,
			      const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	const struct iwarp_err t = rdmap_err(RDMAP_ETYPE_CATASTROPHIC, RDMAP_ECODE_CATASTROPHIC);

	(void)m;
	(void)c;
	enter_terminate(sm, out, &t, RN_QPE_NONE);
}

static void mod_rts_error(struct rn_qp_sm *sm, const struct rn_qp_modify *m,
			  const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)m;
	(void)c;
	stop_processing(out);
	enter_error(sm, out, true, RN_QPE_NONE);  /* abortive: RST, no Terminate (Fig. 12) */
}

static void mod_error_idle(struct rn_qp_sm *sm, const struct rn_qp_modify *m,
			   const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)m;
	(void)c;
	forget_stream(sm);
	sm->flush_pending = false;
	set_state(sm, out, RN_QPS_IDLE);
}

/* [from][to]; every pair not listed is an invalid state change. */
static const struct mod_rule mod_rules[RN_QPS_COUNT][RN_QPS_COUNT] = {
	[RN_QPS_IDLE] = {
		[RN_QPS_IDLE] = { mod_attrs, 0, RN_QPM_ORD | FIG5_IDLE | RN_QPM_ACCESS },
		[RN_QPS_RTS] = { mod_idle_rts, RN_QPM_LLP_HANDLE,
				 RN_QPM_LLP_HANDLE | RN_QPM_STREAM_MSG | RN_QPM_ORD | FIG5_IDLE |
				 RN_QPM_ACCESS },
		[RN_QPS_ERROR] = { mod_idle_error, 0, 0 },
	},
	[RN_QPS_RTS] = {
		[RN_QPS_RTS] = { mod_attrs, 0, RN_QPM_ORD | FIG5_RTS | RN_QPM_ACCESS },
		[RN_QPS_CLOSING] = { mod_rts_closing, 0, 0 },
		[RN_QPS_TERMINATE] = { mod_rts_terminate, 0, 0 },
		[RN_QPS_ERROR] = { mod_rts_error, 0, 0 },
	},
	[RN_QPS_ERROR] = {
		[RN_QPS_IDLE] = { mod_error_idle, 0, 0 },
	},
};

/* Fig. 5 attributes the device may not support changing (D45). */
static enum rn_status check_supported(const struct rn_qp_sm *sm, const struct rn_qp_modify *m)
{
	if ((m->mask & RN_QPM_RQ_LIMIT) && !sm->has_srq)
		return RN_ERR_INVALID_MODIFIER;
	if ((m->mask & RN_QPM_IRD) && !sm->caps.mod_ird)
		return RN_ERR_QP_ATTR_FIXED;
	if ((m->mask & (RN_QPM_SQ_DEPTH | RN_QPM_RQ_DEPTH)) && !sm->caps.resize_wq)
		return RN_ERR_QP_ATTR_FIXED;
	return RN_OK;
}

static enum rn_status check_values(const struct rn_qp_sm *sm, const struct rn_qp_modify *m,
				   const struct rn_qp_cond *c)
{
	const struct rn_qp_attr *a = &m->attr;
	unsigned k = m->mask;

	if ((k & RN_QPM_ORD) && a->ord > sm->caps.max_ord)
		return RN_ERR_ORD_EXCEEDS;
	if ((k & RN_QPM_ORD) && a->ord > sm->attr.ord && !sm->caps.grow_ord)
		return RN_ERR_QP_ATTR_FIXED;
	if ((k & RN_QPM_IRD) && a->ird > sm->caps.max_ird)
		return RN_ERR_IRD_EXCEEDS;
	if ((k & RN_QPM_SQ_DEPTH) && a->sq_depth > sm->caps.max_sq_wr)
		return RN_ERR_SQ_WRS_EXCEED;
	if ((k & RN_QPM_SQ_DEPTH) && a->sq_depth < c->sq_wqes)
		return RN_ERR_SHRINK_FAILED;
	if ((k & RN_QPM_RQ_DEPTH) && !sm->has_srq && a->rq_depth > sm->caps.max_rq_wr)
		return RN_ERR_RQ_WRS_EXCEED;
	if ((k & RN_QPM_RQ_DEPTH) && !sm->has_srq && a->rq_depth < c->rq_wqes)
		return RN_ERR_SHRINK_FAILED;
	if ((k & RN_QPM_RQ_LIMIT) && a->rq_limit > c->srq_max_wr)
		return RN_ERR_RQ_LIMIT_RANGE;
	return RN_OK;
}

static bool still_flushing(const struct rn_qp_sm *sm, const struct rn_qp_cond *c)
{
	return sm->flush_pending || c->sq_wqes != 0 || c->rq_wqes != 0;
}

/* Every check, in the D46 order; nothing is modified here. */
static enum rn_status modify_check(const struct rn_qp_sm *sm, const struct rn_qp_modify *m,
				   const struct rn_qp_cond *c)
{
	if ((unsigned)m->next >= RN_QPS_COUNT || (m->mask & ~(unsigned)RN_QPM_ALL))
		return RN_ERR_INVALID_MODIFIER;
	const struct mod_rule *r = &mod_rules[sm->state][m->next];
	if (!r->apply)
		return RN_ERR_INVALID_STATE_CHANGE;
	if (m->mask & ~r->allowed)
		return RN_ERR_INVALID_MODIFIER;
	enum rn_status st = check_supported(sm, m);
	if (st)
		return st;
	if ((r->required & RN_QPM_LLP_HANDLE) &&
	    (!(m->mask & RN_QPM_LLP_HANDLE) || !m->llp_established))
		return RN_ERR_INVALID_LLP_HANDLE;
	st = check_values(sm, m, c);
	if (st)
		return st;
	if (sm->state == RN_QPS_ERROR && still_flushing(sm, c))
		return RN_ERR_STILL_FLUSHING;
	return RN_OK;
}

enum rn_status rn_qp_modify(struct rn_qp_sm *sm, const struct rn_qp_modify *m,
			    const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	step_init(out, sm->state);
	out->status = modify_check(sm, m, c);
	if (out->status == RN_OK)
		mod_rules[sm->state][m->next].apply(sm, m, c, out);
	return out->status;
}

/* ---- events ------------------------------------------------------------------------------ */

typedef void (*ev_fn)(struct rn_qp_sm *, const struct rn_qp_error *, const struct rn_qp_cond *,
		      struct rn_qp_step *);

/* RTS */

/* Fig. 8: SQ and IRRQ empty -> Closing; otherwise "Bad LLP Close" and Terminate 0x0207. */
static void rts_fin(struct rn_qp_sm *sm, const struct rn_qp_error *e, const struct rn_qp_cond *c,
		    struct rn_qp_step *out)
{
	const struct iwarp_err t = rdmap_err(RDMAP_ETYPE_OPERATION, RDMAP_ECODE_CATA_STREAM);

	(void)e;
	if (closing_is_bad(c))
		enter_terminate(sm, out, &t, RN_QPE_BAD_LLP_CLOSE);
	else
		enter_closing(sm, out, c);
}

static void rts_reset(struct rn_qp_sm *sm, const struct rn_qp_error *e,
		      const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)e;
	(void)c;
	stop_processing(out);
	enter_error(sm, out, true, RN_QPE_LLP_RESET);
}

static void rts_lost(struct rn_qp_sm *sm, const struct rn_qp_error *e,
		     const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)e;
	(void)c;
	stop_processing(out);
	enter_error(sm, out, true, RN_QPE_LLP_LOST);
}

static void rts_term_received(struct rn_qp_sm *sm, const struct rn_qp_error *e,
			      const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)e;
	(void)c;
	sm->term_received = true;
	enter_terminate(sm, out, NULL, RN_QPE_TERM_RECEIVED);
}

static const struct rn_qp_error default_error = {
	{ IWARP_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC, RDMAP_ECODE_CATASTROPHIC },
	RN_QPE_NONE, false
};

/* Local or incoming-segment error: Terminate with its code; async unless reported in a WC. */
static void rts_error(struct rn_qp_sm *sm, const struct rn_qp_error *e,
		      const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)c;
	if (!e)
		e = &default_error;
	enter_terminate(sm, out, &e->term, e->in_wc ? RN_QPE_NONE : e->event);
}

static void rts_sq_posted(struct rn_qp_sm *sm, const struct rn_qp_error *e,
			  const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)sm;
	(void)e;
	(void)c;
	emit(out, RN_QPA_START_SQ);
}

/* Closing (Fig. 11) */

static void closing_bad(struct rn_qp_sm *sm, const struct rn_qp_error *e,
			const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)e;
	(void)c;
	enter_error(sm, out, true, RN_QPE_BAD_CLOSE);
}

/* D42: the Terminate stays queryable; no Terminate is sent back. */
static void closing_term_received(struct rn_qp_sm *sm, const struct rn_qp_error *e,
				  const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	sm->term_received = true;
	closing_bad(sm, e, c, out);
}

static void closing_reset(struct rn_qp_sm *sm, const struct rn_qp_error *e,
			  const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)e;
	(void)c;
	enter_error(sm, out, true, RN_QPE_LLP_RESET);
}

static void closing_lost(struct rn_qp_sm *sm, const struct rn_qp_error *e,
			 const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)e;
	(void)c;
	enter_error(sm, out, true, RN_QPE_LLP_LOST);
}

static void closing_local_error(struct rn_qp_sm *sm, const struct rn_qp_error *e,
				const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)c;
	if (!e)
		e = &default_error;
	enter_error(sm, out, true, e->in_wc ? RN_QPE_NONE : e->event);
}

/* Idle once the LLP close is done, the RQ flushed and the SQ empty; work left is Bad Close.
 * D220: with close_to_error the finished close enters Error instead, which flushes what is
 * posted then (verbs/ completes later posts as flushed), so no WR waits in Idle. */
static void closing_try_finish(struct rn_qp_sm *sm, const struct rn_qp_cond *c,
			       struct rn_qp_step *out)
{
	if (closing_is_bad(c)) {
		enter_error(sm, out, true, RN_QPE_BAD_CLOSE);
		return;
	}
	if (sm->llp_closed && sm->close_to_error) {
		enter_error(sm, out, false, RN_QPE_LLP_CLOSE_COMPLETE);
		return;
	}
	if (!sm->llp_closed || c->rq_wqes != 0)
		return;
	emit(out, RN_QPA_DISASSOCIATE_LLP);
	set_state(sm, out, RN_QPS_IDLE);
	sm->llp_closed = false;
	emit_async(out, RN_QPE_LLP_CLOSE_COMPLETE);
}

static void closing_closed(struct rn_qp_sm *sm, const struct rn_qp_error *e,
			   const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)e;
	sm->llp_closed = true;
	closing_try_finish(sm, c, out);
}

static void closing_flush_done(struct rn_qp_sm *sm, const struct rn_qp_error *e,
			       const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)e;
	closing_try_finish(sm, c, out);
}

static void closing_rq_posted(struct rn_qp_sm *sm, const struct rn_qp_error *e,
			      const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)sm;
	(void)e;
	(void)c;
	emit(out, RN_QPA_FLUSH_RQ);
}

/* Terminate (Fig. 9) */

static void term_closed(struct rn_qp_sm *sm, const struct rn_qp_error *e,
			const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)e;
	(void)c;
	enter_error(sm, out, false, RN_QPE_NONE);  /* D40: cause already reported */
}

static void term_llp_failed(struct rn_qp_sm *sm, const struct rn_qp_error *e,
			    const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)e;
	(void)c;
	enter_error(sm, out, true, RN_QPE_BAD_CLOSE);
}

/* Error (Fig. 10) */

static void error_flush_done(struct rn_qp_sm *sm, const struct rn_qp_error *e,
			     const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	(void)e;
	(void)c;
	(void)out;
	sm->flush_pending = false;
}

/* [state][input]; NULL: the event does not apply (ignored, nothing changes). Idle has no
 * stream and holds posted WQEs, so every entry is NULL. */
static const ev_fn ev_rules[RN_QPS_COUNT][RN_QPI_COUNT] = {
	[RN_QPS_RTS] = {
		[RN_QPI_LLP_FIN] = rts_fin,
		[RN_QPI_LLP_CLOSED] = rts_lost,  /* D44 */
		[RN_QPI_LLP_RESET] = rts_reset,
		[RN_QPI_LLP_LOST] = rts_lost,
		[RN_QPI_TERM_RECEIVED] = rts_term_received,
		[RN_QPI_LOCAL_ERROR] = rts_error,
		[RN_QPI_SEGMENT_ERROR] = rts_error,
		[RN_QPI_SQ_POSTED] = rts_sq_posted,
	},
	[RN_QPS_CLOSING] = {
		[RN_QPI_LLP_CLOSED] = closing_closed,
		[RN_QPI_LLP_RESET] = closing_reset,
		[RN_QPI_LLP_LOST] = closing_lost,
		[RN_QPI_TERM_RECEIVED] = closing_term_received,
		[RN_QPI_LOCAL_ERROR] = closing_local_error,
		[RN_QPI_SEGMENT_ERROR] = closing_bad,
		[RN_QPI_SEGMENT] = closing_bad,
		[RN_QPI_SQ_POSTED] = closing_bad,
		[RN_QPI_RQ_POSTED] = closing_rq_posted,
		[RN_QPI_FLUSH_DONE] = closing_flush_done,
	},
	[RN_QPS_TERMINATE] = {
		[RN_QPI_LLP_CLOSED] = term_closed,
		[RN_QPI_LLP_RESET] = term_llp_failed,
		[RN_QPI_LLP_LOST] = term_llp_failed,
	},
	[RN_QPS_ERROR] = {
		[RN_QPI_FLUSH_DONE] = error_flush_done,
	},
};

void rn_qp_event(struct rn_qp_sm *sm, enum rn_qp_input in, const struct rn_qp_error *err,
		 const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	step_init(out, sm->state);
	if ((unsigned)in >= RN_QPI_COUNT)
		return;
	ev_fn f = ev_rules[sm->state][in];
	if (f)
		f(sm, err, c, out);
}

/* ---- posting, one error completion, query --------------------------------------------------- */

static const enum rn_post_policy post_rules[RN_QPS_COUNT][2] = {
	[RN_QPS_IDLE] = { RN_POST_HOLD, RN_POST_HOLD },
	[RN_QPS_RTS] = { RN_POST_PROCESS, RN_POST_PROCESS },
	[RN_QPS_CLOSING] = { RN_POST_ABORT, RN_POST_FLUSH },
	[RN_QPS_TERMINATE] = { RN_POST_HOLD, RN_POST_HOLD },   /* D35: flushed on entering Error */
	[RN_QPS_ERROR] = { RN_POST_REJECT, RN_POST_REJECT },
};

enum rn_post_policy rn_qp_post_policy(enum rn_qp_state s, enum rn_wq wq)
{
	if ((unsigned)s >= RN_QPS_COUNT || (unsigned)wq > RN_WQ_RQ)
		return RN_POST_REJECT;
	return post_rules[s][wq];
}

enum rn_status rn_qp_post_status(enum rn_qp_state s, enum rn_wq wq)
{
	return rn_qp_post_policy(s, wq) == RN_POST_REJECT ? RN_ERR_INVALID_QP_STATE : RN_OK;
}

enum rn_wc_kind rn_qp_errwc_note(struct rn_qp_errwc *e, enum rn_wc_kind k, bool *flush_rest)
{
	if (k == RN_WCK_ERROR) {
		k = e->error_done ? RN_WCK_FLUSHED : RN_WCK_ERROR;
		e->error_done = true;
	}
	if (flush_rest)
		*flush_rest = e->error_done;
	return k;
}

void rn_qp_sm_init(struct rn_qp_sm *sm, const struct rn_qp_caps *caps,
		   const struct rn_qp_attr *attr, bool has_srq)
{
	sm->state = RN_QPS_IDLE;
	sm->attr = *attr;
	sm->caps = *caps;
	sm->has_srq = has_srq;
	sm->flush_pending = false;
	forget_stream(sm);
}

bool rn_qp_term_queryable(const struct rn_qp_sm *sm, bool *local)
{
	bool in_state = sm->state == RN_QPS_TERMINATE || sm->state == RN_QPS_ERROR;

	if (local)
		*local = sm->term_sent;
	return in_state && (sm->term_sent || sm->term_received);
}

const char *rn_qp_state_str(enum rn_qp_state s)
{
	static const char *const n[RN_QPS_COUNT] = { "Idle", "RTS", "Closing", "Terminate", "Error" };

	return (unsigned)s < RN_QPS_COUNT ? n[s] : "invalid state";
}

const char *rn_qp_act_str(enum rn_qp_act a)
{
	static const char *const n[RN_QPA_COUNT] = {
		"APPLY_ATTRS", "RESET_LAYERS", "LLP_RX_HOLD", "SEND_STREAM_MSG", "ASSOCIATE_LLP",
		"LLP_RX_RESUME", "START_SQ", "STOP_SQ", "STOP_INBOUND", "SEND_TERMINATE",
		"LLP_CLOSE", "LLP_RESET", "DISASSOCIATE_LLP", "FLUSH_SQ", "FLUSH_RQ", "RAISE_ASYNC",
	};

	return (unsigned)a < RN_QPA_COUNT ? n[a] : "invalid action";
}
