/* rn_srq / rn_rq: PostRQ immediate errors and partial lists (§8.2.1), occupancy until the WC
 * is reaped (§6.3.5), S-RQ Limit arm / fire once / re-arm and Modify rules (§6.3.8, T39),
 * QP RQ Limit, destroy in use, and many takers under threads (each WQE taken exactly once). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rn_srq.h"

#define DEV_MAX_WR 1024u
#define DEV_MAX_SGE 8u

static struct rn_srq_attr attr(uint32_t max_wr, uint32_t max_sge, uint32_t limit,
			       struct rn_evq *evq)
{
	struct rn_srq_attr a = { .max_wr = max_wr, .max_sge = max_sge, .limit = limit, .pd = 3,
				 .dev_max_wr = DEV_MAX_WR, .dev_max_sge = DEV_MAX_SGE,
				 .evq = evq, .id = 11 };
	return a;
}

static struct rn_srq *mk_srq(uint32_t max_wr, uint32_t max_sge, uint32_t limit,
			     struct rn_evq *evq)
{
	struct rn_srq_attr a = attr(max_wr, max_sge, limit, evq);
	struct rn_srq *s;
	uint32_t aw, as;

	assert_int_equal(rn_srq_create(&a, &s, &aw, &as), RN_OK);
	assert_true(aw >= max_wr && as >= max_sge);
	return s;
}

/* Post one WR with n SGEs whose fields encode the WR ID. */
static enum rn_status post1(struct rn_srq *s, uint64_t id, int nsge)
{
	struct rn_rq_sge sg[RN_RQ_MAX_SGE + 1];
	struct rn_recv_wr wr = { .wr_id = id, .sg_list = sg, .num_sge = nsge };

	for (int i = 0; i < nsge && i <= RN_RQ_MAX_SGE; i++)
		sg[i] = (struct rn_rq_sge){ .addr = id * 100 + (uint64_t)i, .length = 64,
					    .stag = (uint32_t)id };
	return rn_srq_post(s, &wr, NULL, NULL);
}

static void take_ok(struct rn_srq *s, struct rn_rq_limit *l, uint64_t want)
{
	struct rn_rqe e;

	assert_int_equal(rn_srq_take(s, l, &e), 1);
	assert_int_equal(e.wr_id, want);
}

static void test_T39_srq_create_checks(void **state)
{
	struct rn_srq_attr a;
	struct rn_srq *s = (void *)1;
	struct rn_srq_info info;
	uint32_t aw = 0, as = 0;

	(void)state;
	a = attr(DEV_MAX_WR + 1, 1, 0, NULL);
	assert_int_equal(rn_srq_create(&a, &s, &aw, &as), RN_ERR_RQ_WRS_EXCEED);
	assert_null(s);
	a = attr(8, DEV_MAX_SGE + 1, 0, NULL);
	assert_int_equal(rn_srq_create(&a, &s, &aw, &as), RN_ERR_RQ_SGES_EXCEED);
	a = attr(8, 2, 9, NULL);
	assert_int_equal(rn_srq_create(&a, &s, &aw, &as), RN_ERR_SRQ_LIMIT_RANGE);
	a = attr(8, 2, 8, NULL);                      /* limit == max is in range */
	assert_int_equal(rn_srq_create(&a, &s, &aw, &as), RN_OK);
	assert_true(aw >= 8 && as >= 2);
	assert_int_equal(rn_srq_query(s, &info), RN_OK);
	assert_int_equal(info.max_wr, aw);
	assert_int_equal(info.max_sge, as);
	assert_int_equal(info.pd, 3);
	assert_int_equal(info.limit, 8);
	assert_true(info.armed);                         /* armed at create when > 0 */
	assert_int_equal(rn_srq_pd(s), 3);
	assert_int_equal(rn_srq_destroy(s), RN_OK);
	a = attr(8, 2, 0, NULL);
	assert_int_equal(rn_srq_create(&a, &s, &aw, &as), RN_OK);
	assert_int_equal(rn_srq_query(s, &info), RN_OK);
	assert_false(info.armed);
	assert_int_equal(rn_srq_destroy(s), RN_OK);
	assert_int_equal(rn_srq_query(NULL, &info), RN_ERR_INVALID_SRQ);
	assert_int_equal(rn_srq_destroy(NULL), RN_ERR_INVALID_SRQ);
	assert_int_equal(rn_srq_modify(NULL, 0, 0, 0, NULL), RN_ERR_INVALID_SRQ);
}

/* §8.2.1 / T09 shape: list of 5, #3 has too many SGEs -> 2 posted, #3 reported. */
static void test_srq_post_list_partial(void **state)
{
	struct rn_srq *s = mk_srq(8, 2, 0, NULL);
	struct rn_rq_sge sg[3] = { { 1, 10, 0x100 }, { 2, 20, 0x200 }, { 3, 30, 0x300 } };
	struct rn_recv_wr w[5];
	const struct rn_recv_wr *bad = NULL;
	uint32_t posted = 99, avail;
	struct rn_rqe e;

	(void)state;
	for (int i = 0; i < 5; i++)
		w[i] = (struct rn_recv_wr){ .wr_id = 10 + (uint64_t)i, .next = i < 4 ? &w[i + 1] : NULL,
					    .sg_list = sg, .num_sge = 2 };
	w[2].num_sge = 3;
	assert_int_equal(rn_srq_post(s, &w[0], &bad, &posted), RN_ERR_INVALID_SGL_LENGTH);
	assert_int_equal(posted, 2);
	assert_ptr_equal(bad, &w[2]);
	rn_srq_counts(s, &avail, NULL);
	assert_int_equal(avail, 2);
	w[2].num_sge = -1;
	assert_int_equal(rn_srq_post(s, &w[2], &bad, &posted), RN_ERR_INVALID_SGL_LENGTH);
	assert_int_equal(posted, 0);
	w[2].num_sge = 1;
	w[2].sg_list = NULL;
	assert_int_equal(rn_srq_post(s, &w[2], &bad, &posted), RN_ERR_INVALID_SGL_FORMAT);
	w[2].sg_list = sg;
	w[2].num_sge = 0;                               /* zero SGEs is a valid Receive */
	assert_int_equal(rn_srq_post(s, &w[2], &bad, &posted), RN_OK);
	assert_int_equal(posted, 3);
	assert_null(bad);
	assert_int_equal(rn_srq_post(NULL, &w[0], &bad, &posted), RN_ERR_INVALID_SRQ);
	assert_int_equal(posted, 0);
	/* arrival order, SGEs copied */
	assert_int_equal(rn_srq_take(s, NULL, &e), 1);
	assert_int_equal(e.wr_id, 10);
	assert_int_equal(e.num_sge, 2);
	assert_int_equal(e.sge[1].addr, 2);
	assert_int_equal(e.sge[1].length, 20);
	assert_int_equal(e.sge[1].stag, 0x200);
	take_ok(s, NULL, 11);
	take_ok(s, NULL, 12);
	take_ok(s, NULL, 13);
	assert_int_equal(e.wr_id, 10);
	take_ok(s, NULL, 14);
	assert_int_equal(rn_srq_take(s, NULL, &e), 0);
	assert_int_equal(rn_srq_destroy(s), RN_OK);
}

/* §6.3.5: a taken WQE still counts until its WC is reaped; reaping allows a repost. */
static void test_srq_full_until_retired(void **state)
{
	struct rn_srq *s = mk_srq(4, 1, 0, NULL);
	uint32_t avail, prog;

	(void)state;
	for (uint64_t i = 0; i < 4; i++)
		assert_int_equal(post1(s, i, 1), RN_OK);
	assert_int_equal(post1(s, 9, 1), RN_ERR_TOO_MANY_WRS);
	take_ok(s, NULL, 0);
	take_ok(s, NULL, 1);
	rn_srq_counts(s, &avail, &prog);
	assert_int_equal(avail, 2);
	assert_int_equal(prog, 2);
	assert_int_equal(post1(s, 9, 1), RN_ERR_TOO_MANY_WRS);
	rn_srq_retire(s, NULL);
	assert_int_equal(post1(s, 4, 1), RN_OK);
	assert_int_equal(post1(s, 5, 1), RN_ERR_TOO_MANY_WRS);
	rn_srq_retire(s, NULL);
	assert_int_equal(post1(s, 5, 1), RN_OK);
	for (uint64_t i = 2; i < 6; i++)                /* order kept across the wrap */
		take_ok(s, NULL, i);
	assert_int_equal(rn_srq_destroy(s), RN_OK);
}

static int next_event(struct rn_evq *q, struct rn_async_event *ev)
{
	int rc = rn_evq_get(q, ev, 0);

	if (rc == 0)
		rn_evq_ack(q, ev);
	return rc;
}

/* T39: limit L armed at create fires exactly once when available drops below L; no second
 * event until Modify re-arms. */
static void test_T39_srq_limit_fires_once_and_rearms(void **state)
{
	struct rn_evq *q;
	struct rn_srq *s;
	struct rn_async_event ev;
	struct rn_srq_info info;

	(void)state;
	assert_int_equal(rn_evq_create(16, &q), RN_OK);
	s = mk_srq(8, 1, 3, q);
	for (uint64_t i = 0; i < 8; i++)
		assert_int_equal(post1(s, i, 1), RN_OK);
	for (uint64_t i = 0; i < 5; i++)               /* 8 -> 3 available: not below 3 */
		take_ok(s, NULL, i);
	assert_int_equal(next_event(q, &ev), EAGAIN);
	take_ok(s, NULL, 5);                            /* 2 < 3: fires */
	assert_int_equal(next_event(q, &ev), 0);
	assert_int_equal(ev.id, RN_AE_SRQ_LIMIT);
	assert_int_equal(ev.kind, RN_RES_SRQ);
	assert_ptr_equal(ev.handle, s);
	assert_int_equal(ev.res_id, 11);
	take_ok(s, NULL, 6);
	take_ok(s, NULL, 7);
	assert_int_equal(next_event(q, &ev), EAGAIN);  /* once */
	assert_int_equal(rn_srq_query(s, &info), RN_OK);
	assert_false(info.armed);
	assert_int_equal(info.limit, 3);
	for (int i = 0; i < 8; i++)
		rn_srq_retire(s, NULL);
	for (uint64_t i = 0; i < 8; i++)               /* refilling does not fire either */
		assert_int_equal(post1(s, 100 + i, 1), RN_OK);
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_ARM, 0, 0, NULL), RN_OK);
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_ARM, 0, 0, NULL), RN_OK);  /* re-arm armed */
	assert_int_equal(rn_srq_query(s, &info), RN_OK);
	assert_true(info.armed);
	for (uint64_t i = 0; i < 5; i++)
		take_ok(s, NULL, 100 + i);
	assert_int_equal(next_event(q, &ev), EAGAIN);
	take_ok(s, NULL, 105);
	assert_int_equal(next_event(q, &ev), 0);
	assert_int_equal(next_event(q, &ev), EAGAIN);
	/* new limit + arm with fewer available than the limit: fires at the next take */
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_LIMIT | RN_SRQ_MOD_ARM, 0, 4, NULL), RN_OK);
	take_ok(s, NULL, 106);
	assert_int_equal(next_event(q, &ev), 0);
	assert_int_equal(ev.id, RN_AE_SRQ_LIMIT);
	/* limit 0 + arm: never fires */
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_LIMIT | RN_SRQ_MOD_ARM, 0, 0, NULL), RN_OK);
	take_ok(s, NULL, 107);
	assert_int_equal(next_event(q, &ev), EAGAIN);
	assert_int_equal(rn_srq_destroy(s), RN_OK);
	rn_evq_destroy(q);
}

static void assert_srq_same(struct rn_srq *s, const struct rn_srq_info *want)
{
	struct rn_srq_info now;

	assert_int_equal(rn_srq_query(s, &now), RN_OK);
	assert_int_equal(now.max_wr, want->max_wr);
	assert_int_equal(now.limit, want->limit);
	assert_int_equal(now.armed, want->armed);
}

/* Modify S-RQ rules; every failure leaves the S-RQ unchanged (§8.3.1). */
static void test_T39_srq_modify_rules(void **state)
{
	struct rn_srq *s = mk_srq(16, 1, 6, NULL);
	struct rn_srq_info before;
	uint32_t aw;

	(void)state;
	assert_int_equal(rn_srq_query(s, &before), RN_OK);
	assert_int_equal(rn_srq_modify(s, 1u << 7, 0, 0, NULL), RN_ERR_INVALID_MODIFIER);
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_MAX_WR, 4, 0, NULL), RN_ERR_INVALID_MODIFIER);
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_LIMIT, 0, 17, NULL), RN_ERR_SRQ_LIMIT_RANGE);
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_MAX_WR | RN_SRQ_MOD_LIMIT, 4, 5, NULL),
			 RN_ERR_SRQ_LIMIT_RANGE);
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_MAX_WR, DEV_MAX_WR + 1, 0, NULL),
			 RN_ERR_RQ_WRS_EXCEED);
	assert_srq_same(s, &before);
	for (uint64_t i = 0; i < 10; i++)
		assert_int_equal(post1(s, i, 1), RN_OK);
	take_ok(s, NULL, 0);                            /* 9 available + 1 in progress */
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_MAX_WR | RN_SRQ_MOD_LIMIT, 9, 2, NULL),
			 RN_ERR_SHRINK_FAILED);
	assert_srq_same(s, &before);
	/* shrink to exactly the occupancy with a lower limit: allowed, order kept */
	struct rn_srq_info info;

	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_MAX_WR | RN_SRQ_MOD_LIMIT, 10, 2, &aw), RN_OK);
	assert_int_equal(aw, 10);
	assert_int_equal(rn_srq_query(s, &info), RN_OK);
	assert_true(info.armed);                        /* a new value alone keeps it armed */
	assert_int_equal(info.limit, 2);
	assert_int_equal(post1(s, 99, 1), RN_ERR_TOO_MANY_WRS);
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_MAX_WR, 64, 0, &aw), RN_OK);  /* grow */
	assert_int_equal(aw, 64);
	assert_int_equal(post1(s, 10, 1), RN_OK);
	for (uint64_t i = 1; i <= 10; i++)
		take_ok(s, NULL, i);
	assert_int_equal(rn_srq_query(s, &info), RN_OK);
	assert_false(info.armed);                       /* the limit of 2 fired while draining */
	for (int i = 0; i < 11; i++)
		rn_srq_retire(s, NULL);
	/* an unarmed limit does not block a shrink, but cannot be armed above the size */
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_LIMIT, 0, 40, NULL), RN_OK);
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_MAX_WR, 32, 0, &aw), RN_OK);
	assert_int_equal(aw, 32);
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_ARM, 0, 0, NULL), RN_ERR_SRQ_LIMIT_RANGE);
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_LIMIT | RN_SRQ_MOD_ARM, 0, 20, NULL), RN_OK);
	/* §6.3.8: shrinking below an armed limit is an invalid modifier */
	assert_int_equal(rn_srq_query(s, &before), RN_OK);
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_MAX_WR, 16, 0, NULL), RN_ERR_INVALID_MODIFIER);
	assert_srq_same(s, &before);
	assert_int_equal(rn_srq_modify(s, RN_SRQ_MOD_LIMIT, 0, 0, NULL), RN_OK);
	assert_int_equal(rn_srq_query(s, &info), RN_OK);
	assert_false(info.armed);                       /* limit 0 is never armed */
	assert_int_equal(rn_srq_destroy(s), RN_OK);
}

/* Destroy with a QP associated -> QPs still associated; with WQEs posted -> fine. */
static void test_T39_srq_destroy_in_use(void **state)
{
	struct rn_srq *s = mk_srq(4, 1, 0, NULL);

	(void)state;
	assert_int_equal(post1(s, 1, 1), RN_OK);
	rn_srq_ref(s);
	assert_int_equal(rn_srq_destroy(s), RN_ERR_SRQ_IN_USE);
	take_ok(s, NULL, 1);                            /* still usable */
	assert_int_equal(post1(s, 2, 1), RN_OK);
	rn_srq_unref(s);
	assert_int_equal(rn_srq_destroy(s), RN_OK);
}

/* T39: QP RQ Limit fires once when the QP's in-progress WQEs exceed it; re-arm by Modify QP. */
static void test_T39_qp_rq_limit(void **state)
{
	struct rn_evq *q;
	struct rn_srq *s;
	struct rn_event_res qp_res;
	struct rn_rq_limit lim, other;
	struct rn_async_event ev;
	int qp_obj;

	(void)state;
	assert_int_equal(rn_evq_create(16, &q), RN_OK);
	s = mk_srq(32, 1, 0, q);
	assert_int_equal(rn_srq_check_qp_limit(s, 33), RN_ERR_RQ_LIMIT_RANGE);
	assert_int_equal(rn_srq_check_qp_limit(s, 32), RN_OK);
	assert_int_equal(rn_srq_check_qp_limit(NULL, 1), RN_ERR_INVALID_SRQ);
	rn_event_res_init(&qp_res, RN_RES_QP, &qp_obj, 77);
	rn_rq_limit_init(&lim, 2, q, &qp_res);
	rn_rq_limit_init(&other, 0, q, &qp_res);        /* 0: never armed */
	assert_true(rn_rq_limit_armed(&lim));
	assert_false(rn_rq_limit_armed(&other));
	for (uint64_t i = 0; i < 20; i++)
		assert_int_equal(post1(s, i, 1), RN_OK);
	take_ok(s, &lim, 0);
	take_ok(s, &lim, 1);
	for (uint64_t i = 2; i < 6; i++)
		take_ok(s, &other, i);                  /* another QP's progress does not count */
	assert_int_equal(next_event(q, &ev), EAGAIN);
	take_ok(s, &lim, 6);                            /* 3 > 2 */
	assert_int_equal(next_event(q, &ev), 0);
	assert_int_equal(ev.id, RN_AE_QP_RQ_LIMIT);
	assert_int_equal(ev.kind, RN_RES_QP);
	assert_ptr_equal(ev.handle, &qp_obj);
	assert_int_equal(ev.res_id, 77);
	take_ok(s, &lim, 7);
	assert_int_equal(next_event(q, &ev), EAGAIN);  /* once */
	assert_false(rn_rq_limit_armed(&lim));
	for (int i = 0; i < 4; i++)
		rn_srq_retire(s, &lim);
	assert_int_equal(atomic_load(&lim.in_progress), 0);
	rn_rq_limit_set(&lim, 1);                       /* Modify QP re-arms */
	take_ok(s, &lim, 8);
	assert_int_equal(next_event(q, &ev), EAGAIN);
	take_ok(s, &lim, 9);
	assert_int_equal(next_event(q, &ev), 0);
	assert_int_equal(ev.id, RN_AE_QP_RQ_LIMIT);
	assert_int_equal(rn_srq_destroy(s), RN_OK);
	rn_evq_destroy(q);
}

/* The plain ring as a QP's own RQ: SGE cap, wrap, resize keeping order. */
static void test_rq_ring_for_qp(void **state)
{
	struct rn_rq *rq;
	struct rn_rq_sge sg = { 5, 6, 7 };
	struct rn_recv_wr wr = { .sg_list = &sg, .num_sge = 1 };
	struct rn_rqe e;
	uint32_t avail, prog;

	(void)state;
	assert_int_equal(rn_rq_create(4, RN_RQ_MAX_SGE + 1, &rq), RN_ERR_RQ_SGES_EXCEED);
	assert_null(rq);
	assert_int_equal(rn_rq_create(3, 1, &rq), RN_OK);
	assert_int_equal(rn_rq_max_wr(rq), 3);
	for (uint64_t round = 0; round < 5; round++) {   /* wrap several times */
		for (uint64_t i = 0; i < 3; i++) {
			wr.wr_id = round * 10 + i;
			assert_int_equal(rn_rq_post(rq, &wr, NULL, NULL), RN_OK);
		}
		assert_int_equal(rn_rq_post(rq, &wr, NULL, NULL), RN_ERR_TOO_MANY_WRS);
		for (uint64_t i = 0; i < 3; i++) {
			assert_int_equal(rn_rq_take(rq, &e), RN_RQ_TAKEN);
			assert_int_equal(e.wr_id, round * 10 + i);
		}
		assert_int_equal(rn_rq_take(rq, &e), RN_RQ_EMPTY);
		rn_rq_retire(rq, 3);
	}
	for (uint64_t i = 0; i < 3; i++) {
		wr.wr_id = 100 + i;
		assert_int_equal(rn_rq_post(rq, &wr, NULL, NULL), RN_OK);
	}
	assert_int_equal(rn_rq_take(rq, &e), RN_RQ_TAKEN);   /* head mid-ring */
	assert_int_equal(rn_rq_resize(rq, 2), RN_ERR_SHRINK_FAILED);
	assert_int_equal(rn_rq_resize(rq, 8), RN_OK);
	rn_rq_counts(rq, &avail, &prog);
	assert_int_equal(avail, 2);
	assert_int_equal(prog, 1);
	assert_int_equal(rn_rq_take(rq, &e), RN_RQ_TAKEN);
	assert_int_equal(e.wr_id, 101);
	assert_int_equal(e.sge[0].stag, 7);
	assert_int_equal(rn_rq_take(rq, &e), RN_RQ_TAKEN);
	assert_int_equal(e.wr_id, 102);
	rn_rq_retire(rq, 100);                              /* clamps, no wrap-around */
	rn_rq_counts(rq, &avail, &prog);
	assert_int_equal(prog, 0);
	rn_rq_destroy(rq);
}

/* ---- many takers (QPs on several threads) and one poster ---- */

#define NTAKERS 4
#define NWQE 200000u

struct mt {
	struct rn_srq *srq;
	struct rn_rq_limit lim;
	_Atomic unsigned char *seen;
	atomic_uint *taken_total;
	uint32_t taken;
};

static void *taker(void *arg)
{
	struct mt *m = arg;
	struct rn_rqe e;

	while (atomic_load(m->taken_total) < NWQE) {
		if (!rn_srq_take(m->srq, &m->lim, &e)) {
			sched_yield();
			continue;
		}
		assert_true(e.wr_id < NWQE);
		assert_int_equal(e.num_sge, 2);
		assert_int_equal(e.sge[1].addr, e.wr_id * 100 + 1);   /* not torn */
		assert_int_equal(atomic_fetch_add(&m->seen[e.wr_id], 1), 0);
		m->taken++;
		atomic_fetch_add(m->taken_total, 1);
		rn_srq_retire(m->srq, &m->lim);
	}
	return NULL;
}

static void test_srq_multi_consumer_each_once(void **state)
{
	struct rn_evq *q;
	struct rn_srq *s;
	struct mt m[NTAKERS];
	pthread_t t[NTAKERS];
	atomic_uint total = 0;
	_Atomic unsigned char *seen = calloc(NWQE, 1);
	struct rn_event_res res;
	struct rn_async_event ev;
	uint32_t sum = 0, avail, prog, limit_events = 0;

	(void)state;
	assert_non_null(seen);
	assert_int_equal(rn_evq_create(1024, &q), RN_OK);
	s = mk_srq(64, 2, 8, q);
	rn_event_res_init(&res, RN_RES_QP, NULL, 1);
	for (int i = 0; i < NTAKERS; i++) {
		m[i] = (struct mt){ .srq = s, .seen = seen, .taken_total = &total };
		rn_rq_limit_init(&m[i].lim, 0, q, &res);
		pthread_create(&t[i], NULL, taker, &m[i]);
	}
	for (uint64_t id = 0; id < NWQE;) {
		enum rn_status rc = post1(s, id, 2);

		if (rc == RN_ERR_TOO_MANY_WRS) {
			/* re-arm now and then so the limit fires many times, once per arm */
			if ((id & 4095) == 0)
				rn_srq_modify(s, RN_SRQ_MOD_ARM, 0, 0, NULL);
			sched_yield();
			continue;
		}
		assert_int_equal(rc, RN_OK);
		id++;
	}
	for (int i = 0; i < NTAKERS; i++) {
		pthread_join(t[i], NULL);
		sum += m[i].taken;
	}
	assert_int_equal(sum, NWQE);
	for (uint32_t i = 0; i < NWQE; i++)
		assert_int_equal(atomic_load(&seen[i]), 1);
	rn_srq_counts(s, &avail, &prog);
	assert_int_equal(avail + prog, 0);
	while (rn_evq_get(q, &ev, 0) == 0) {
		assert_int_equal(ev.id, RN_AE_SRQ_LIMIT);
		rn_evq_ack(q, &ev);
		limit_events++;
	}
	assert_true(limit_events >= 1);
	assert_int_equal(rn_evq_dropped_total(q), 0);
	assert_int_equal(rn_srq_destroy(s), RN_OK);
	rn_evq_destroy(q);
	free((void *)seen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_T39_srq_create_checks),
		cmocka_unit_test(test_srq_post_list_partial),
		cmocka_unit_test(test_srq_full_until_retired),
		cmocka_unit_test(test_T39_srq_limit_fires_once_and_rearms),
		cmocka_unit_test(test_T39_srq_modify_rules),
		cmocka_unit_test(test_T39_srq_destroy_in_use),
		cmocka_unit_test(test_T39_qp_rq_limit),
		cmocka_unit_test(test_rq_ring_for_qp),
		cmocka_unit_test(test_srq_multi_consumer_each_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
