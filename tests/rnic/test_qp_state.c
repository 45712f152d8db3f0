/* QP state machine (rnic/rn_qp_state.[ch]): every Modify pair, every event in every state,
 * attribute rules, posting rules, the one-error-completion rule, and random walks checked
 * against invariants. Named after acceptance tests (docs/acceptance.md) where one applies. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rn_qp_state.h"

#define assert_err(e, l, t, c) do {                  \
		assert_int_equal((e).layer, (l));    \
		assert_int_equal((e).etype, (t));    \
		assert_int_equal((e).ecode, (c));    \
	} while (0)

/* ---- fixtures ---------------------------------------------------------------------------- */

static const struct rn_qp_caps CAPS = { 16, 16, 256, 256, true, true, true };
static const struct rn_qp_attr ATTR = { 4, 4, 64, 64, 0, false };
static const struct rn_qp_cond CLEAN = { 0, 0, false, 0 };
static const struct rn_qp_error ACCESS_ERR = {
	{ IWARP_LAYER_RDMAP, RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_ACCESS }, RN_QPE_ACCESS, false
};

static void sm_new(struct rn_qp_sm *sm, bool srq)
{
	memset(sm, 0, sizeof(*sm));  /* deterministic padding for memcmp */
	rn_qp_sm_init(sm, &CAPS, &ATTR, srq);
}

static enum rn_status mod(struct rn_qp_sm *sm, enum rn_qp_state next, unsigned mask,
			  const struct rn_qp_cond *c, struct rn_qp_step *out)
{
	struct rn_qp_modify m = { next, mask, ATTR, true };

	return rn_qp_modify(sm, &m, c, out);
}

static void ev(struct rn_qp_sm *sm, enum rn_qp_input in, struct rn_qp_step *out)
{
	rn_qp_event(sm, in, &ACCESS_ERR, &CLEAN, out);
}

/* A QP in state s by the ordinary path (Error: entered from Idle, flush reported done). */
static void sm_in(struct rn_qp_sm *sm, enum rn_qp_state s)
{
	struct rn_qp_step o;

	sm_new(sm, false);
	if (s == RN_QPS_ERROR) {
		assert_int_equal(mod(sm, RN_QPS_ERROR, 0, &CLEAN, &o), RN_OK);
		ev(sm, RN_QPI_FLUSH_DONE, &o);
	}
	if (s == RN_QPS_IDLE || s == RN_QPS_ERROR)
		return;
	assert_int_equal(mod(sm, RN_QPS_RTS, RN_QPM_LLP_HANDLE, &CLEAN, &o), RN_OK);
	if (s != RN_QPS_RTS)
		assert_int_equal(mod(sm, s, 0, &CLEAN, &o), RN_OK);
	assert_int_equal(sm->state, s);
}

/* Expected actions: kind plus the event id (RAISE_ASYNC) or 0xLEcc code (SEND_TERMINATE). */
struct exp { enum rn_qp_act k; int v; };
#define END { RN_QPA_COUNT, 0 }
#define A(k) { RN_QPA_##k, 0 }
#define EV(e) { RN_QPA_RAISE_ASYNC, RN_QPE_##e }
#define TERM(c) { RN_QPA_SEND_TERMINATE, c }
#define ACTS(...) ((const struct exp[]){ __VA_ARGS__, END })
#define NONE ((const struct exp[]){ END })
#define STOP A(STOP_SQ), A(STOP_INBOUND)
#define TO_ERR A(DISASSOCIATE_LLP), A(FLUSH_SQ), A(FLUSH_RQ)
#define RESET_TO_ERR A(LLP_RESET), TO_ERR

static void check_acts(const struct rn_qp_step *o, const struct exp *want)
{
	unsigned n = 0;

	for (; want[n].k != RN_QPA_COUNT; n++) {
		assert_true(n < o->n);
		assert_string_equal(rn_qp_act_str(o->act[n].kind), rn_qp_act_str(want[n].k));
		if (want[n].k == RN_QPA_RAISE_ASYNC)
			assert_int_equal(o->act[n].event, want[n].v);
		if (want[n].k == RN_QPA_SEND_TERMINATE)
			assert_int_equal(iwarp_err_u16(o->act[n].term), want[n].v);
	}
	assert_int_equal(o->n, n);
}

static unsigned count_act(const struct rn_qp_step *o, enum rn_qp_act k)
{
	unsigned c = 0;

	for (unsigned i = 0; i < o->n; i++)
		c += o->act[i].kind == k;
	return c;
}

/* ---- Modify: every (state x target) pair --------------------------------------------------- */

struct mod_row {
	enum rn_qp_state from, to;
	unsigned mask;
	enum rn_status st;
	const struct exp *acts;
};

static const struct mod_row MOD_ROWS[] = {
	{ RN_QPS_IDLE, RN_QPS_IDLE, 0, RN_OK, NONE },
	{ RN_QPS_IDLE, RN_QPS_RTS, 0, RN_ERR_INVALID_LLP_HANDLE, NONE },
	{ RN_QPS_IDLE, RN_QPS_RTS, RN_QPM_LLP_HANDLE, RN_OK,
	  ACTS(A(RESET_LAYERS), A(ASSOCIATE_LLP), A(START_SQ)) },
	{ RN_QPS_IDLE, RN_QPS_CLOSING, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_IDLE, RN_QPS_TERMINATE, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_IDLE, RN_QPS_ERROR, 0, RN_OK, ACTS(A(FLUSH_SQ), A(FLUSH_RQ)) },
	{ RN_QPS_RTS, RN_QPS_IDLE, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_RTS, RN_QPS_RTS, 0, RN_OK, NONE },
	{ RN_QPS_RTS, RN_QPS_CLOSING, 0, RN_OK, ACTS(STOP, A(FLUSH_RQ), A(LLP_CLOSE)) },
	{ RN_QPS_RTS, RN_QPS_TERMINATE, 0, RN_OK, ACTS(STOP, TERM(0x0000), A(LLP_CLOSE)) },
	{ RN_QPS_RTS, RN_QPS_ERROR, 0, RN_OK, ACTS(STOP, RESET_TO_ERR) },
	{ RN_QPS_CLOSING, RN_QPS_IDLE, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_CLOSING, RN_QPS_RTS, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_CLOSING, RN_QPS_CLOSING, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_CLOSING, RN_QPS_TERMINATE, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_CLOSING, RN_QPS_ERROR, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_TERMINATE, RN_QPS_IDLE, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_TERMINATE, RN_QPS_RTS, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_TERMINATE, RN_QPS_CLOSING, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_TERMINATE, RN_QPS_TERMINATE, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_TERMINATE, RN_QPS_ERROR, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_ERROR, RN_QPS_IDLE, 0, RN_OK, NONE },
	{ RN_QPS_ERROR, RN_QPS_RTS, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_ERROR, RN_QPS_RTS, RN_QPM_LLP_HANDLE, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_ERROR, RN_QPS_CLOSING, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_ERROR, RN_QPS_TERMINATE, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
	{ RN_QPS_ERROR, RN_QPS_ERROR, 0, RN_ERR_INVALID_STATE_CHANGE, NONE },
};

static void run_mod_row(const struct mod_row *r)
{
	struct rn_qp_sm sm, before;
	struct rn_qp_step o;

	sm_in(&sm, r->from);
	before = sm;
	assert_int_equal(mod(&sm, r->to, r->mask, &CLEAN, &o), r->st);
	assert_int_equal(o.status, r->st);
	assert_int_equal(o.from, r->from);
	check_acts(&o, r->acts);
	assert_int_equal(o.to, r->st == RN_OK ? r->to : r->from);
	assert_int_equal(sm.state, o.to);
	if (r->st != RN_OK)
		assert_memory_equal(&sm, &before, sizeof(sm));
}

/* T06 + the allowed ones: all 25 pairs (Idle->RTS and Error->RTS with and without a handle). */
static void test_T06_modify_matrix(void **state)
{
	bool seen[RN_QPS_COUNT][RN_QPS_COUNT] = { { false } };

	(void)state;
	for (size_t i = 0; i < sizeof(MOD_ROWS) / sizeof(MOD_ROWS[0]); i++) {
		run_mod_row(&MOD_ROWS[i]);
		seen[MOD_ROWS[i].from][MOD_ROWS[i].to] = true;
	}
	for (int f = 0; f < RN_QPS_COUNT; f++)
		for (int t = 0; t < RN_QPS_COUNT; t++)
			assert_true(seen[f][t]);
}

static void test_modify_bad_inputs(void **state)
{
	struct rn_qp_sm sm, before;
	struct rn_qp_step o;

	(void)state;
	sm_in(&sm, RN_QPS_RTS);
	before = sm;
	assert_int_equal(mod(&sm, (enum rn_qp_state)99, 0, &CLEAN, &o), RN_ERR_INVALID_MODIFIER);
	assert_int_equal(mod(&sm, RN_QPS_RTS, 1u << 9, &CLEAN, &o), RN_ERR_INVALID_MODIFIER);
	assert_int_equal(o.n, 0);
	assert_memory_equal(&sm, &before, sizeof(sm));
}

/* ---- T05 / T07: Idle ----------------------------------------------------------------------- */

static void test_T05_idle_semantics(void **state)
{
	struct rn_qp_sm sm;
	struct rn_qp_step o;
	struct rn_qp_cond busy = { 3, 2, false, 0 };

	(void)state;
	sm_new(&sm, false);
	assert_int_equal(rn_qp_post_policy(RN_QPS_IDLE, RN_WQ_SQ), RN_POST_HOLD);
	assert_int_equal(rn_qp_post_policy(RN_QPS_IDLE, RN_WQ_RQ), RN_POST_HOLD);
	for (int in = 0; in < RN_QPI_COUNT; in++) {  /* nothing processed, no stream */
		rn_qp_event(&sm, (enum rn_qp_input)in, &ACCESS_ERR, &busy, &o);
		assert_int_equal(o.n, 0);
		assert_int_equal(sm.state, RN_QPS_IDLE);
	}
	assert_int_equal(mod(&sm, RN_QPS_ERROR, 0, &busy, &o), RN_OK);
	check_acts(&o, ACTS(A(FLUSH_SQ), A(FLUSH_RQ)));
	/* WQEs still being flushed, then flushed but FLUSH_DONE not yet seen */
	assert_int_equal(mod(&sm, RN_QPS_IDLE, 0, &busy, &o), RN_ERR_STILL_FLUSHING);
	assert_int_equal(mod(&sm, RN_QPS_IDLE, 0, &CLEAN, &o), RN_ERR_STILL_FLUSHING);
	assert_int_equal(sm.state, RN_QPS_ERROR);
	ev(&sm, RN_QPI_FLUSH_DONE, &o);
	assert_int_equal(o.n, 0);
	assert_int_equal(mod(&sm, RN_QPS_IDLE, 0, &busy, &o), RN_ERR_STILL_FLUSHING);
	assert_int_equal(mod(&sm, RN_QPS_IDLE, 0, &CLEAN, &o), RN_OK);
	assert_int_equal(sm.state, RN_QPS_IDLE);
}

static void test_T07_idle_rts_prerequisites(void **state)
{
	struct rn_qp_sm sm, before;
	struct rn_qp_step o;
	struct rn_qp_modify m = { RN_QPS_RTS, RN_QPM_LLP_HANDLE, ATTR, false };

	(void)state;
	sm_new(&sm, false);
	before = sm;
	assert_int_equal(rn_qp_modify(&sm, &m, &CLEAN, &o), RN_ERR_INVALID_LLP_HANDLE);
	m.mask = RN_QPM_STREAM_MSG;  /* buffer but no handle */
	m.llp_established = true;
	assert_int_equal(rn_qp_modify(&sm, &m, &CLEAN, &o), RN_ERR_INVALID_LLP_HANDLE);
	assert_memory_equal(&sm, &before, sizeof(sm));
	m.mask = RN_QPM_LLP_HANDLE | RN_QPM_STREAM_MSG;  /* active side (T08 ordering) */
	assert_int_equal(rn_qp_modify(&sm, &m, &CLEAN, &o), RN_OK);
	check_acts(&o, ACTS(A(RESET_LAYERS), A(LLP_RX_HOLD), A(SEND_STREAM_MSG), A(ASSOCIATE_LLP),
			    A(LLP_RX_RESUME), A(START_SQ)));
	assert_int_equal(sm.state, RN_QPS_RTS);
}

/* ---- attributes (Figs. 4-5) ---------------------------------------------------------------- */

#define ATTR_BITS (RN_QPM_ORD | RN_QPM_IRD | RN_QPM_SQ_DEPTH | RN_QPM_RQ_DEPTH | RN_QPM_RQ_LIMIT | \
		   RN_QPM_ACCESS)

/* Which single attribute bit each allowed transition accepts (S-RQ QP, all caps on). */
struct attr_row { enum rn_qp_state from, to; unsigned ok; };

static const struct attr_row ATTR_ROWS[] = {
	{ RN_QPS_IDLE, RN_QPS_IDLE, ATTR_BITS },
	{ RN_QPS_IDLE, RN_QPS_RTS, ATTR_BITS | RN_QPM_LLP_HANDLE | RN_QPM_STREAM_MSG },
	{ RN_QPS_IDLE, RN_QPS_ERROR, 0 },
	{ RN_QPS_RTS, RN_QPS_RTS, RN_QPM_ORD | RN_QPM_IRD | RN_QPM_SQ_DEPTH | RN_QPM_RQ_DEPTH |
				  RN_QPM_ACCESS },   /* D15 */
	{ RN_QPS_RTS, RN_QPS_CLOSING, 0 },
	{ RN_QPS_RTS, RN_QPS_TERMINATE, 0 },
	{ RN_QPS_RTS, RN_QPS_ERROR, 0 },
	{ RN_QPS_ERROR, RN_QPS_IDLE, 0 },
};

static void try_attr_bit(const struct attr_row *r, unsigned bit)
{
	struct rn_qp_sm sm, before;
	struct rn_qp_step o;
	struct rn_qp_cond c = { 0, 0, false, 100 };
	struct rn_qp_modify m = { r->to, bit, { 2, 3, 32, 32, 7, true, true, false }, true };

	sm_in(&sm, r->from);
	sm.has_srq = true;
	before = sm;
	if (r->to == RN_QPS_RTS && r->from == RN_QPS_IDLE)
		m.mask |= RN_QPM_LLP_HANDLE;
	enum rn_status st = rn_qp_modify(&sm, &m, &c, &o);
	if (!(r->ok & bit)) {
		assert_int_equal(st, RN_ERR_INVALID_MODIFIER);
		assert_memory_equal(&sm, &before, sizeof(sm));
		return;
	}
	assert_int_equal(st, RN_OK);
	assert_int_equal(o.act[0].kind, (bit & ATTR_BITS) ? RN_QPA_APPLY_ATTRS : RN_QPA_RESET_LAYERS);
	if (bit == RN_QPM_ORD)
		assert_int_equal(sm.attr.ord, 2);
	if (bit == RN_QPM_IRD)
		assert_int_equal(sm.attr.ird, 3);
	if (bit == RN_QPM_SQ_DEPTH)
		assert_int_equal(sm.attr.sq_depth, 32);
	if (bit == RN_QPM_RQ_DEPTH)  /* S-RQ QP: accepted, no effect (Fig. 5 footnote 2) */
		assert_int_equal(sm.attr.rq_depth, ATTR.rq_depth);
	if (bit == RN_QPM_RQ_LIMIT)
		assert_true(sm.attr.rq_limit == 7 && sm.attr.rq_limit_armed);
	if (bit == RN_QPM_ACCESS)
		assert_true(sm.attr.inbound_read && !sm.attr.inbound_write);
}

static void test_attr_allowed_per_transition(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ATTR_ROWS) / sizeof(ATTR_ROWS[0]); i++)
		for (unsigned bit = 1; bit & RN_QPM_ALL; bit <<= 1)
			try_attr_bit(&ATTR_ROWS[i], bit);
}

struct val_row {
	unsigned mask;
	struct rn_qp_attr a;
	struct rn_qp_cond c;
	bool srq;
	enum rn_status st;
};

static const struct val_row VAL_ROWS[] = {
	{ RN_QPM_ORD, { .ord = 17 }, { 0 }, false, RN_ERR_ORD_EXCEEDS },
	{ RN_QPM_ORD, { .ord = 16 }, { 0 }, false, RN_OK },
	{ RN_QPM_ORD, { .ord = 0 }, { 0 }, false, RN_OK },
	{ RN_QPM_IRD, { .ird = 17 }, { 0 }, false, RN_ERR_IRD_EXCEEDS },
	{ RN_QPM_SQ_DEPTH, { .sq_depth = 257 }, { 0 }, false, RN_ERR_SQ_WRS_EXCEED },
	{ RN_QPM_SQ_DEPTH, { .sq_depth = 4 }, { .sq_wqes = 5 }, false, RN_ERR_SHRINK_FAILED },
	{ RN_QPM_SQ_DEPTH, { .sq_depth = 5 }, { .sq_wqes = 5 }, false, RN_OK },
	{ RN_QPM_RQ_DEPTH, { .rq_depth = 257 }, { 0 }, false, RN_ERR_RQ_WRS_EXCEED },
	{ RN_QPM_RQ_DEPTH, { .rq_depth = 1 }, { .rq_wqes = 2 }, false, RN_ERR_SHRINK_FAILED },
	{ RN_QPM_RQ_DEPTH, { .rq_depth = 999 }, { .rq_wqes = 2 }, true, RN_OK },
	{ RN_QPM_RQ_LIMIT, { .rq_limit = 9 }, { .srq_max_wr = 8 }, true, RN_ERR_RQ_LIMIT_RANGE },
	{ RN_QPM_RQ_LIMIT, { .rq_limit = 8 }, { .srq_max_wr = 8 }, true, RN_OK },
	{ RN_QPM_RQ_LIMIT, { .rq_limit = 1 }, { .srq_max_wr = 8 }, false, RN_ERR_INVALID_MODIFIER },
	/* first attribute fine, second not: nothing applied */
	{ RN_QPM_ORD | RN_QPM_SQ_DEPTH, { .ord = 1, .sq_depth = 300 }, { 0 }, false,
	  RN_ERR_SQ_WRS_EXCEED },
};

static void test_attr_values_idle_and_rts(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(VAL_ROWS) / sizeof(VAL_ROWS[0]); i++) {
		for (int s = RN_QPS_IDLE; s <= RN_QPS_RTS; s++) {
			const struct val_row *r = &VAL_ROWS[i];
			struct rn_qp_sm sm, before;
			struct rn_qp_step o;
			struct rn_qp_modify m = { (enum rn_qp_state)s, r->mask, r->a, true };

			if (s == RN_QPS_RTS && (r->mask & RN_QPM_RQ_LIMIT))
				continue;  /* not an RTS->RTS attribute: covered above */
			sm_in(&sm, (enum rn_qp_state)s);
			sm.has_srq = r->srq;
			before = sm;
			assert_int_equal(rn_qp_modify(&sm, &m, &r->c, &o), r->st);
			if (r->st != RN_OK)
				assert_memory_equal(&sm, &before, sizeof(sm));
			else
				check_acts(&o, ACTS(A(APPLY_ATTRS)));
		}
	}
}

/* Fig. 5 attributes the device does not support, and raising ORD without grow_ord. */
static void test_attr_fixed_by_caps(void **state)
{
	struct rn_qp_caps caps = CAPS;
	struct rn_qp_sm sm, before;
	struct rn_qp_step o;
	struct rn_qp_modify m = { RN_QPS_RTS, 0, ATTR, true };

	(void)state;
	caps.grow_ord = caps.mod_ird = caps.resize_wq = false;
	memset(&sm, 0, sizeof(sm));
	rn_qp_sm_init(&sm, &caps, &ATTR, false);
	assert_int_equal(mod(&sm, RN_QPS_RTS, RN_QPM_LLP_HANDLE, &CLEAN, &o), RN_OK);
	before = sm;
	const unsigned fixed[] = { RN_QPM_IRD, RN_QPM_SQ_DEPTH, RN_QPM_RQ_DEPTH };
	for (size_t i = 0; i < 3; i++) {
		m.mask = fixed[i];
		assert_int_equal(rn_qp_modify(&sm, &m, &CLEAN, &o), RN_ERR_QP_ATTR_FIXED);
	}
	m.mask = RN_QPM_ORD;
	m.attr.ord = ATTR.ord + 1;
	assert_int_equal(rn_qp_modify(&sm, &m, &CLEAN, &o), RN_ERR_QP_ATTR_FIXED);
	assert_memory_equal(&sm, &before, sizeof(sm));
	m.attr.ord = ATTR.ord - 1;  /* reducing ORD is mandatory (§6.5) */
	assert_int_equal(rn_qp_modify(&sm, &m, &CLEAN, &o), RN_OK);
	assert_int_equal(sm.attr.ord, ATTR.ord - 1);
}

/* ---- every event in every state ------------------------------------------------------------ */

struct ev_row {
	enum rn_qp_state from;
	enum rn_qp_input in;
	enum rn_qp_state to;
	const struct exp *acts;
};

#define IGN(s, i) { RN_QPS_##s, RN_QPI_##i, RN_QPS_##s, NONE }

static const struct ev_row EV_ROWS[] = {
	IGN(IDLE, LLP_FIN), IGN(IDLE, LLP_CLOSED), IGN(IDLE, LLP_RESET), IGN(IDLE, LLP_LOST),
	IGN(IDLE, TERM_RECEIVED), IGN(IDLE, LOCAL_ERROR), IGN(IDLE, SEGMENT_ERROR),
	IGN(IDLE, SEGMENT), IGN(IDLE, SQ_POSTED), IGN(IDLE, RQ_POSTED), IGN(IDLE, FLUSH_DONE),

	{ RN_QPS_RTS, RN_QPI_LLP_FIN, RN_QPS_CLOSING, ACTS(STOP, A(FLUSH_RQ), A(LLP_CLOSE)) },
	{ RN_QPS_RTS, RN_QPI_LLP_CLOSED, RN_QPS_ERROR, ACTS(STOP, RESET_TO_ERR, EV(LLP_LOST)) },
	{ RN_QPS_RTS, RN_QPI_LLP_RESET, RN_QPS_ERROR, ACTS(STOP, RESET_TO_ERR, EV(LLP_RESET)) },
	{ RN_QPS_RTS, RN_QPI_LLP_LOST, RN_QPS_ERROR, ACTS(STOP, RESET_TO_ERR, EV(LLP_LOST)) },
	{ RN_QPS_RTS, RN_QPI_TERM_RECEIVED, RN_QPS_TERMINATE,
	  ACTS(STOP, A(LLP_CLOSE), EV(TERM_RECEIVED)) },
	{ RN_QPS_RTS, RN_QPI_LOCAL_ERROR, RN_QPS_TERMINATE,
	  ACTS(STOP, TERM(0x0102), A(LLP_CLOSE), EV(ACCESS)) },
	{ RN_QPS_RTS, RN_QPI_SEGMENT_ERROR, RN_QPS_TERMINATE,
	  ACTS(STOP, TERM(0x0102), A(LLP_CLOSE), EV(ACCESS)) },
	IGN(RTS, SEGMENT),
	{ RN_QPS_RTS, RN_QPI_SQ_POSTED, RN_QPS_RTS, ACTS(A(START_SQ)) },
	IGN(RTS, RQ_POSTED), IGN(RTS, FLUSH_DONE),

	IGN(CLOSING, LLP_FIN),
	{ RN_QPS_CLOSING, RN_QPI_LLP_CLOSED, RN_QPS_IDLE,
	  ACTS(A(DISASSOCIATE_LLP), EV(LLP_CLOSE_COMPLETE)) },
	{ RN_QPS_CLOSING, RN_QPI_LLP_RESET, RN_QPS_ERROR, ACTS(RESET_TO_ERR, EV(LLP_RESET)) },
	{ RN_QPS_CLOSING, RN_QPI_LLP_LOST, RN_QPS_ERROR, ACTS(RESET_TO_ERR, EV(LLP_LOST)) },
	{ RN_QPS_CLOSING, RN_QPI_TERM_RECEIVED, RN_QPS_ERROR, ACTS(RESET_TO_ERR, EV(BAD_CLOSE)) },
	{ RN_QPS_CLOSING, RN_QPI_LOCAL_ERROR, RN_QPS_ERROR, ACTS(RESET_TO_ERR, EV(ACCESS)) },
	{ RN_QPS_CLOSING, RN_QPI_SEGMENT_ERROR, RN_QPS_ERROR, ACTS(RESET_TO_ERR, EV(BAD_CLOSE)) },
	{ RN_QPS_CLOSING, RN_QPI_SEGMENT, RN_QPS_ERROR, ACTS(RESET_TO_ERR, EV(BAD_CLOSE)) },
	{ RN_QPS_CLOSING, RN_QPI_SQ_POSTED, RN_QPS_ERROR, ACTS(RESET_TO_ERR, EV(BAD_CLOSE)) },
	{ RN_QPS_CLOSING, RN_QPI_RQ_POSTED, RN_QPS_CLOSING, ACTS(A(FLUSH_RQ)) },
	IGN(CLOSING, FLUSH_DONE),  /* LLP close not finished yet */

	IGN(TERMINATE, LLP_FIN),
	{ RN_QPS_TERMINATE, RN_QPI_LLP_CLOSED, RN_QPS_ERROR, ACTS(TO_ERR) },
	{ RN_QPS_TERMINATE, RN_QPI_LLP_RESET, RN_QPS_ERROR, ACTS(RESET_TO_ERR, EV(BAD_CLOSE)) },
	{ RN_QPS_TERMINATE, RN_QPI_LLP_LOST, RN_QPS_ERROR, ACTS(RESET_TO_ERR, EV(BAD_CLOSE)) },
	IGN(TERMINATE, TERM_RECEIVED), IGN(TERMINATE, LOCAL_ERROR), IGN(TERMINATE, SEGMENT_ERROR),
	IGN(TERMINATE, SEGMENT), IGN(TERMINATE, SQ_POSTED), IGN(TERMINATE, RQ_POSTED),
	IGN(TERMINATE, FLUSH_DONE),

	IGN(ERROR, LLP_FIN), IGN(ERROR, LLP_CLOSED), IGN(ERROR, LLP_RESET), IGN(ERROR, LLP_LOST),
	IGN(ERROR, TERM_RECEIVED), IGN(ERROR, LOCAL_ERROR), IGN(ERROR, SEGMENT_ERROR),
	IGN(ERROR, SEGMENT), IGN(ERROR, SQ_POSTED), IGN(ERROR, RQ_POSTED), IGN(ERROR, FLUSH_DONE),
};

static void test_event_matrix(void **state)
{
	bool seen[RN_QPS_COUNT][RN_QPI_COUNT] = { { false } };

	(void)state;
	for (size_t i = 0; i < sizeof(EV_ROWS) / sizeof(EV_ROWS[0]); i++) {
		const struct ev_row *r = &EV_ROWS[i];
		struct rn_qp_sm sm, before;
		struct rn_qp_step o;

		sm_in(&sm, r->from);
		before = sm;
		ev(&sm, r->in, &o);
		assert_int_equal(o.status, RN_OK);
		assert_int_equal(o.from, r->from);
		assert_int_equal(o.to, r->to);
		assert_int_equal(sm.state, r->to);
		check_acts(&o, r->acts);
		if (r->acts[0].k == RN_QPA_COUNT && r->in != RN_QPI_FLUSH_DONE)
			assert_memory_equal(&sm, &before, sizeof(sm));  /* ignored: untouched */
		seen[r->from][r->in] = true;
	}
	for (int s = 0; s < RN_QPS_COUNT; s++)
		for (int in = 0; in < RN_QPI_COUNT; in++)
			assert_true(seen[s][in]);
}

/* ---- named scenarios ---------------------------------------------------------------------- */

/* T34: local close; the remote side (FIN, SQ/IRRQ empty) closes with one event only. */
static void test_T34_normal_close(void **state)
{
	struct rn_qp_sm sm;
	struct rn_qp_step o;
	struct rn_qp_cond rq_busy = { 0, 1, false, 0 };

	(void)state;
	sm_in(&sm, RN_QPS_RTS);
	assert_int_equal(mod(&sm, RN_QPS_CLOSING, 0, &CLEAN, &o), RN_OK);
	assert_int_equal(count_act(&o, RN_QPA_RAISE_ASYNC), 0);  /* no event at the verb */
	rn_qp_event(&sm, RN_QPI_LLP_CLOSED, NULL, &rq_busy, &o);  /* RQ flush not finished */
	check_acts(&o, NONE);
	assert_int_equal(sm.state, RN_QPS_CLOSING);
	ev(&sm, RN_QPI_FLUSH_DONE, &o);
	check_acts(&o, ACTS(A(DISASSOCIATE_LLP), EV(LLP_CLOSE_COMPLETE)));
	assert_int_equal(sm.state, RN_QPS_IDLE);
	/* reuse on a new connection: layers reset */
	assert_int_equal(mod(&sm, RN_QPS_RTS, RN_QPM_LLP_HANDLE, &CLEAN, &o), RN_OK);
	assert_int_equal(o.act[0].kind, RN_QPA_RESET_LAYERS);

	/* remote FIN: Closing, no event until the close finishes */
	ev(&sm, RN_QPI_LLP_FIN, &o);
	assert_int_equal(count_act(&o, RN_QPA_RAISE_ASYNC), 0);
	ev(&sm, RN_QPI_LLP_FIN, &o);  /* repeated FIN report: nothing */
	check_acts(&o, NONE);
	ev(&sm, RN_QPI_LLP_CLOSED, &o);
	check_acts(&o, ACTS(A(DISASSOCIATE_LLP), EV(LLP_CLOSE_COMPLETE)));
}

/* D220: with close_to_error a finished close, local or the peer's, ends in Error (no LLP
 * reset, both queues flushed, "LLP Close Complete"), even while the RQ flush is running. */
static void test_close_to_error(void **state)
{
	struct rn_qp_sm sm;
	struct rn_qp_step o;
	struct rn_qp_cond rq_busy = { 0, 1, false, 0 };

	(void)state;
	for (int remote = 0; remote < 2; remote++) {
		sm_in(&sm, RN_QPS_RTS);
		sm.close_to_error = true;
		if (remote)
			ev(&sm, RN_QPI_LLP_FIN, &o);
		else
			assert_int_equal(mod(&sm, RN_QPS_CLOSING, 0, &CLEAN, &o), RN_OK);
		assert_int_equal(sm.state, RN_QPS_CLOSING);
		rn_qp_event(&sm, RN_QPI_RQ_POSTED, NULL, &rq_busy, &o);
		check_acts(&o, ACTS(A(FLUSH_RQ)));
		rn_qp_event(&sm, RN_QPI_LLP_CLOSED, NULL, &rq_busy, &o);
		check_acts(&o, ACTS(TO_ERR, EV(LLP_CLOSE_COMPLETE)));
		assert_int_equal(sm.state, RN_QPS_ERROR);
		/* Error -> Idle waits for the flush, as after any other way into Error */
		assert_int_equal(mod(&sm, RN_QPS_IDLE, 0, &CLEAN, &o), RN_ERR_STILL_FLUSHING);
		ev(&sm, RN_QPI_FLUSH_DONE, &o);
		assert_int_equal(mod(&sm, RN_QPS_IDLE, 0, &CLEAN, &o), RN_OK);
	}
	/* a FIN with work left is still a Bad LLP Close (T35) */
	sm_in(&sm, RN_QPS_RTS);
	sm.close_to_error = true;
	rn_qp_event(&sm, RN_QPI_LLP_FIN, NULL, &(struct rn_qp_cond){ 1, 0, false, 0 }, &o);
	check_acts(&o, ACTS(STOP, TERM(0x0207), A(LLP_CLOSE), EV(BAD_LLP_CLOSE)));
}

/* T35 (B side): FIN with an SQ WQE or an inbound Read in progress -> Bad LLP Close. */
static void test_T35_bad_llp_close(void **state)
{
	const struct rn_qp_cond conds[] = { { 1, 0, false, 0 }, { 0, 0, true, 0 } };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct rn_qp_sm sm;
		struct rn_qp_step o;
		bool local;

		sm_in(&sm, RN_QPS_RTS);
		rn_qp_event(&sm, RN_QPI_LLP_FIN, NULL, &conds[i], &o);
		check_acts(&o, ACTS(STOP, TERM(0x0207), A(LLP_CLOSE), EV(BAD_LLP_CLOSE)));
		assert_int_equal(sm.state, RN_QPS_TERMINATE);
		assert_true(rn_qp_term_queryable(&sm, &local) && local);
		rn_qp_event(&sm, RN_QPI_LLP_CLOSED, NULL, &conds[i], &o);
		check_acts(&o, ACTS(TO_ERR));
		assert_int_equal(sm.state, RN_QPS_ERROR);
		assert_true(rn_qp_term_queryable(&sm, &local) && local);
	}
}

/* T35 (A side): PostSQ in Closing is accepted, then RST + Bad Close + Error. */
static void test_T35_closing_post_sq(void **state)
{
	struct rn_qp_sm sm;
	struct rn_qp_step o;
	struct rn_qp_cond one_sq = { 1, 0, false, 0 };

	(void)state;
	sm_in(&sm, RN_QPS_CLOSING);
	assert_int_equal(rn_qp_post_status(RN_QPS_CLOSING, RN_WQ_SQ), RN_OK);
	assert_int_equal(rn_qp_post_policy(RN_QPS_CLOSING, RN_WQ_SQ), RN_POST_ABORT);
	rn_qp_event(&sm, RN_QPI_SQ_POSTED, NULL, &one_sq, &o);
	check_acts(&o, ACTS(RESET_TO_ERR, EV(BAD_CLOSE)));
	assert_int_equal(sm.state, RN_QPS_ERROR);
}

/* Closing: work left on the SQ / IRRQ found at any re-check is Bad Close (Fig. 11 row 3). */
static void test_closing_work_left(void **state)
{
	struct rn_qp_sm sm;
	struct rn_qp_step o;
	struct rn_qp_cond rd = { 0, 0, true, 0 };

	(void)state;
	sm_in(&sm, RN_QPS_CLOSING);
	rn_qp_event(&sm, RN_QPI_LLP_CLOSED, NULL, &rd, &o);
	check_acts(&o, ACTS(RESET_TO_ERR, EV(BAD_CLOSE)));
	sm_in(&sm, RN_QPS_CLOSING);
	rn_qp_event(&sm, RN_QPI_FLUSH_DONE, NULL, &rd, &o);
	check_acts(&o, ACTS(RESET_TO_ERR, EV(BAD_CLOSE)));
	/* Modify RTS->Closing with work left: succeeds, passes through Closing to Error */
	sm_in(&sm, RN_QPS_RTS);
	rd = (struct rn_qp_cond){ 2, 0, false, 0 };
	assert_int_equal(mod(&sm, RN_QPS_CLOSING, 0, &rd, &o), RN_OK);
	check_acts(&o, ACTS(STOP, RESET_TO_ERR, EV(BAD_CLOSE)));
	assert_int_equal(o.to, RN_QPS_ERROR);
}

/* T36: ULP terminate (code 0, no event) and abortive teardown (RST, no Terminate). */
static void test_T36_ulp_terminate_and_abort(void **state)
{
	struct rn_qp_sm sm;
	struct rn_qp_step o;
	bool local;

	(void)state;
	sm_in(&sm, RN_QPS_RTS);
	assert_int_equal(mod(&sm, RN_QPS_TERMINATE, 0, &CLEAN, &o), RN_OK);
	check_acts(&o, ACTS(STOP, TERM(0x0000), A(LLP_CLOSE)));
	assert_true(rn_qp_term_queryable(&sm, &local) && local);
	assert_err(o.act[2].term, IWARP_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC, 0);
	ev(&sm, RN_QPI_LLP_CLOSED, &o);
	check_acts(&o, ACTS(TO_ERR));  /* no "Error State Entered" */
	/* LLP error while in Terminate after Modify: Bad Close */
	sm_in(&sm, RN_QPS_TERMINATE);
	ev(&sm, RN_QPI_LLP_LOST, &o);
	check_acts(&o, ACTS(RESET_TO_ERR, EV(BAD_CLOSE)));
	/* abortive */
	sm_in(&sm, RN_QPS_RTS);
	assert_int_equal(mod(&sm, RN_QPS_ERROR, 0, &CLEAN, &o), RN_OK);
	check_acts(&o, ACTS(STOP, RESET_TO_ERR));
	assert_false(rn_qp_term_queryable(&sm, NULL));
	/* the peer of the abort */
	sm_in(&sm, RN_QPS_RTS);
	ev(&sm, RN_QPI_LLP_RESET, &o);
	check_acts(&o, ACTS(STOP, RESET_TO_ERR, EV(LLP_RESET)));
}

/* T14 / T11 receiving side: Terminate received, never answered, buffer remote. */
static void test_T14_terminate_received_never_answered(void **state)
{
	struct rn_qp_sm sm;
	struct rn_qp_step o;
	bool local = true;

	(void)state;
	sm_in(&sm, RN_QPS_RTS);
	assert_false(rn_qp_term_queryable(&sm, NULL));  /* not in RTS */
	ev(&sm, RN_QPI_TERM_RECEIVED, &o);
	check_acts(&o, ACTS(STOP, A(LLP_CLOSE), EV(TERM_RECEIVED)));
	assert_true(rn_qp_term_queryable(&sm, &local));
	assert_false(local);
	for (int in = 0; in < RN_QPI_COUNT; in++) {  /* nothing in Terminate sends one */
		struct rn_qp_sm t = sm;

		ev(&t, (enum rn_qp_input)in, &o);
		assert_int_equal(count_act(&o, RN_QPA_SEND_TERMINATE), 0);
	}
	ev(&sm, RN_QPI_LLP_CLOSED, &o);
	check_acts(&o, ACTS(TO_ERR));
	assert_true(rn_qp_term_queryable(&sm, &local) && !local);
}

/* T11 / T12 / T18: an error reported in a WC raises no async event, but sends its Terminate. */
static void test_T11_error_in_wc_no_async(void **state)
{
	struct rn_qp_error e = { { IWARP_LAYER_RDMAP, 0, 0 }, RN_QPE_LOCAL_CATASTROPHIC, true };
	const enum rn_qp_input ins[] = { RN_QPI_LOCAL_ERROR, RN_QPI_SEGMENT_ERROR };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct rn_qp_sm sm;
		struct rn_qp_step o;

		sm_in(&sm, RN_QPS_RTS);
		rn_qp_event(&sm, ins[i], &e, &CLEAN, &o);
		check_acts(&o, ACTS(STOP, TERM(0x0000), A(LLP_CLOSE)));
		sm_in(&sm, RN_QPS_CLOSING);  /* D9 */
		rn_qp_event(&sm, RN_QPI_LOCAL_ERROR, &e, &CLEAN, &o);
		check_acts(&o, ACTS(RESET_TO_ERR));
	}
}

/* T14 / T37: incoming segment error names its Terminate code and event (e.g. MPA CRC). */
static void test_T37_segment_error_code_and_event(void **state)
{
	struct rn_qp_error crc = { rdmap_err_llp(RDMAP_LLP_ECODE_CRC), RN_QPE_LLP_CRC, false };
	struct rn_qp_sm sm;
	struct rn_qp_step o;

	(void)state;
	sm_in(&sm, RN_QPS_RTS);
	rn_qp_event(&sm, RN_QPI_SEGMENT_ERROR, &crc, &CLEAN, &o);
	check_acts(&o, ACTS(STOP, TERM(0x2002), A(LLP_CLOSE), EV(LLP_CRC)));
	assert_err(sm.term, IWARP_LAYER_LLP, 0, RDMAP_LLP_ECODE_CRC);
	sm_in(&sm, RN_QPS_RTS);  /* NULL error: local catastrophic, no event */
	rn_qp_event(&sm, RN_QPI_LOCAL_ERROR, NULL, &CLEAN, &o);
	check_acts(&o, ACTS(STOP, TERM(0x0000), A(LLP_CLOSE)));
}

/* Closing + Terminate arrives: Bad Close, buffer queryable as remote, none sent (D8). */
static void test_closing_terminate_arrives(void **state)
{
	struct rn_qp_sm sm;
	struct rn_qp_step o;
	bool local = true;

	(void)state;
	sm_in(&sm, RN_QPS_CLOSING);
	ev(&sm, RN_QPI_TERM_RECEIVED, &o);
	assert_int_equal(count_act(&o, RN_QPA_SEND_TERMINATE), 0);
	assert_true(rn_qp_term_queryable(&sm, &local) && !local);
}

/* Error->Idle forgets the stream: Terminate buffer and the one-error rule start over. */
static void test_error_idle_forgets_stream(void **state)
{
	struct rn_qp_sm sm;
	struct rn_qp_step o;

	(void)state;
	sm_in(&sm, RN_QPS_TERMINATE);
	assert_int_equal(rn_qp_errwc_note(&sm.errwc, RN_WCK_ERROR, NULL), RN_WCK_ERROR);
	ev(&sm, RN_QPI_LLP_CLOSED, &o);
	ev(&sm, RN_QPI_FLUSH_DONE, &o);
	assert_int_equal(mod(&sm, RN_QPS_IDLE, 0, &CLEAN, &o), RN_OK);
	assert_false(rn_qp_term_queryable(&sm, NULL));
	assert_false(sm.term_sent || sm.term_received || sm.errwc.error_done);
	assert_int_equal(mod(&sm, RN_QPS_RTS, RN_QPM_LLP_HANDLE, &CLEAN, &o), RN_OK);
	assert_int_equal(mod(&sm, RN_QPS_TERMINATE, 0, &CLEAN, &o), RN_OK);
	assert_int_equal(count_act(&o, RN_QPA_SEND_TERMINATE), 1);  /* new stream, new Terminate */
}

/* ---- posting rules ------------------------------------------------------------------------- */

static void test_posting_rules(void **state)
{
	static const enum rn_post_policy want[RN_QPS_COUNT][2] = {
		{ RN_POST_HOLD, RN_POST_HOLD }, { RN_POST_PROCESS, RN_POST_PROCESS },
		{ RN_POST_ABORT, RN_POST_FLUSH }, { RN_POST_HOLD, RN_POST_HOLD },
		{ RN_POST_REJECT, RN_POST_REJECT },
	};
	static const enum rn_qp_input posted[2] = { RN_QPI_SQ_POSTED, RN_QPI_RQ_POSTED };

	(void)state;
	for (int s = 0; s < RN_QPS_COUNT; s++) {
		for (int q = 0; q < 2; q++) {
			enum rn_post_policy p = rn_qp_post_policy((enum rn_qp_state)s, (enum rn_wq)q);
			struct rn_qp_sm sm;
			struct rn_qp_step o;

			assert_int_equal(p, want[s][q]);
			assert_int_equal(rn_qp_post_status((enum rn_qp_state)s, (enum rn_wq)q),
					 p == RN_POST_REJECT ? RN_ERR_INVALID_QP_STATE : RN_OK);
			/* the event the QP feeds after an accepted post agrees with the policy */
			sm_in(&sm, (enum rn_qp_state)s);
			ev(&sm, posted[q], &o);
			assert_int_equal(p == RN_POST_PROCESS && q == RN_WQ_SQ, count_act(&o, RN_QPA_START_SQ));
			assert_int_equal(p == RN_POST_FLUSH, count_act(&o, RN_QPA_FLUSH_RQ) == 1 &&
					 sm.state == RN_QPS_CLOSING);
			assert_int_equal(p == RN_POST_ABORT, o.from != RN_QPS_ERROR && o.to == RN_QPS_ERROR);
			if (p == RN_POST_HOLD || p == RN_POST_REJECT)
				assert_int_equal(o.n, 0);
		}
	}
	assert_int_equal(rn_qp_post_policy((enum rn_qp_state)7, RN_WQ_SQ), RN_POST_REJECT);
}

/* ---- one non-Flushed error completion ------------------------------------------------------- */

static void test_T11_one_error_completion(void **state)
{
	static const enum rn_wc_kind in[] = { RN_WCK_SUCCESS, RN_WCK_FLUSHED, RN_WCK_ERROR,
					      RN_WCK_FLUSHED, RN_WCK_ERROR, RN_WCK_SUCCESS };
	static const enum rn_wc_kind out[] = { RN_WCK_SUCCESS, RN_WCK_FLUSHED, RN_WCK_ERROR,
					       RN_WCK_FLUSHED, RN_WCK_FLUSHED, RN_WCK_SUCCESS };
	static const bool rest[] = { false, false, true, true, true, true };
	struct rn_qp_errwc e = { false };
	unsigned errors = 0;

	(void)state;
	for (size_t i = 0; i < 6; i++) {
		bool flush = !rest[i];
		enum rn_wc_kind k = rn_qp_errwc_note(&e, in[i], &flush);

		assert_int_equal(k, out[i]);
		assert_int_equal(flush, rest[i]);
		errors += k == RN_WCK_ERROR;
	}
	assert_int_equal(errors, 1);
}

/* ---- random walks against invariants --------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

struct model {
	bool assoc;         /* stream associated (ASSOCIATE .. DISASSOCIATE) */
	bool term_rx;       /* a Terminate arrived on this stream */
	unsigned term_tx;   /* Terminates sent on this stream */
	bool flushed;       /* FLUSH_DONE fed after the last FLUSH_* action */
};

static struct rn_qp_cond rnd_cond(void)
{
	struct rn_qp_cond c = { rnd(3) == 0, rnd(3) == 0, rnd(4) == 0, rnd(10) };

	return c;
}

static void rnd_modify(struct rn_qp_sm *sm, const struct rn_qp_cond *c, struct rn_qp_step *o)
{
	struct rn_qp_modify m = { (enum rn_qp_state)rnd(RN_QPS_COUNT), 0, ATTR, rnd(5) != 0 };
	struct rn_qp_sm before = *sm;

	if (rnd(2))
		m.mask |= RN_QPM_LLP_HANDLE;
	if (rnd(4) == 0)
		m.mask |= 1u << rnd(7);
	m.attr.ord = rnd(20);
	m.attr.sq_depth = rnd(300);
	if (rn_qp_modify(sm, &m, c, o) != RN_OK) {
		assert_memory_equal(sm, &before, sizeof(*sm));
		assert_int_equal(o->n, 0);
		return;
	}
	if (before.state == RN_QPS_ERROR) {  /* ERROR is left only to IDLE once flushed */
		assert_int_equal(m.next, RN_QPS_IDLE);
		assert_true(c->sq_wqes == 0 && c->rq_wqes == 0);
	}
	bool bad_close = before.state == RN_QPS_RTS && m.next == RN_QPS_CLOSING &&
			 (c->sq_wqes || c->irrq_busy);
	assert_int_equal(count_act(o, RN_QPA_RAISE_ASYNC), bad_close);
}

static void rnd_event(struct rn_qp_sm *sm, const struct rn_qp_cond *c, struct rn_qp_step *o,
		      struct model *md)
{
	enum rn_qp_input in = (enum rn_qp_input)rnd(RN_QPI_COUNT);
	struct rn_qp_error e = { { (uint8_t)rnd(3), (uint8_t)rnd(3), (uint8_t)rnd(10) },
				 (enum rn_qp_async)rnd(RN_QPE_COUNT), rnd(2) == 0 };

	if (in == RN_QPI_TERM_RECEIVED && md->assoc)
		md->term_rx = true;
	rn_qp_event(sm, in, rnd(8) ? &e : NULL, c, o);
	if (in == RN_QPI_FLUSH_DONE)
		md->flushed = true;
	if (o->from == RN_QPS_ERROR)
		assert_int_equal(o->to, RN_QPS_ERROR);  /* no event leaves Error */
}

static void model_update(struct model *md, const struct rn_qp_step *o)
{
	for (unsigned i = 0; i < o->n; i++) {
		switch (o->act[i].kind) {
		case RN_QPA_ASSOCIATE_LLP:
			*md = (struct model){ true, false, 0, md->flushed };
			break;
		case RN_QPA_DISASSOCIATE_LLP:
			md->assoc = false;
			break;
		case RN_QPA_SEND_TERMINATE:
			assert_false(md->term_rx);  /* never after one was received */
			assert_int_equal(md->term_tx++, 0);
			break;
		case RN_QPA_FLUSH_SQ:
		case RN_QPA_FLUSH_RQ:
			md->flushed = false;
			break;
		default:
			break;
		}
	}
}

static void check_step(const struct rn_qp_sm *sm, const struct rn_qp_step *o,
		       const struct model *md)
{
	assert_true((unsigned)sm->state < RN_QPS_COUNT);
	assert_int_equal(o->to, sm->state);
	assert_true(o->n <= RN_QP_MAX_ACTIONS);
	assert_int_equal(md->assoc, sm->state == RN_QPS_RTS || sm->state == RN_QPS_CLOSING ||
			 sm->state == RN_QPS_TERMINATE);
	if (o->from != RN_QPS_ERROR && o->to == RN_QPS_ERROR) {
		assert_int_equal(count_act(o, RN_QPA_FLUSH_SQ), 1);
		assert_int_equal(count_act(o, RN_QPA_FLUSH_RQ), 1);
	}
	if (o->from != RN_QPS_TERMINATE && o->to == RN_QPS_TERMINATE)
		assert_int_equal(count_act(o, RN_QPA_LLP_CLOSE), 1);
	if (o->from == RN_QPS_ERROR && o->to == RN_QPS_IDLE)
		assert_true(md->flushed);
}

static void test_random_walks(void **state)
{
	unsigned reached[RN_QPS_COUNT] = { 0 }, error_to_idle = 0;

	(void)state;
	for (int walk = 0; walk < 3000; walk++) {
		struct rn_qp_sm sm;
		struct model md = { false, false, 0, true };

		sm_new(&sm, rnd(2) == 0);
		for (int step = 0; step < 80; step++) {
			struct rn_qp_cond c = rnd_cond();
			struct rn_qp_step o;

			if (rnd(3) == 0)
				rnd_modify(&sm, &c, &o);
			else
				rnd_event(&sm, &c, &o, &md);
			model_update(&md, &o);
			check_step(&sm, &o, &md);
			reached[sm.state]++;
			error_to_idle += o.from == RN_QPS_ERROR && o.to == RN_QPS_IDLE;
		}
	}
	for (int s = 0; s < RN_QPS_COUNT; s++)
		assert_true(reached[s] > 100);
	assert_true(error_to_idle > 100);
}

static void test_strings(void **state)
{
	(void)state;
	assert_string_equal(rn_qp_state_str(RN_QPS_TERMINATE), "Terminate");
	assert_string_equal(rn_qp_state_str((enum rn_qp_state)9), "invalid state");
	assert_string_equal(rn_qp_act_str(RN_QPA_RAISE_ASYNC), "RAISE_ASYNC");
	assert_string_equal(rn_qp_act_str(RN_QPA_COUNT), "invalid action");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_T06_modify_matrix),
		cmocka_unit_test(test_modify_bad_inputs),
		cmocka_unit_test(test_T05_idle_semantics),
		cmocka_unit_test(test_T07_idle_rts_prerequisites),
		cmocka_unit_test(test_attr_allowed_per_transition),
		cmocka_unit_test(test_attr_values_idle_and_rts),
		cmocka_unit_test(test_attr_fixed_by_caps),
		cmocka_unit_test(test_event_matrix),
		cmocka_unit_test(test_T34_normal_close),
		cmocka_unit_test(test_close_to_error),
		cmocka_unit_test(test_T35_bad_llp_close),
		cmocka_unit_test(test_T35_closing_post_sq),
		cmocka_unit_test(test_closing_work_left),
		cmocka_unit_test(test_T36_ulp_terminate_and_abort),
		cmocka_unit_test(test_T14_terminate_received_never_answered),
		cmocka_unit_test(test_T11_error_in_wc_no_async),
		cmocka_unit_test(test_T37_segment_error_code_and_event),
		cmocka_unit_test(test_closing_terminate_arrives),
		cmocka_unit_test(test_error_idle_forgets_stream),
		cmocka_unit_test(test_posting_rules),
		cmocka_unit_test(test_T11_one_error_completion),
		cmocka_unit_test(test_random_walks),
		cmocka_unit_test(test_strings),
	};

	return cmocka_run_group_tests_name("qp_state", tests, NULL, NULL);
}
