/* rn_cq: CQ verbs (T03), poll, overflow (async event), resize under concurrent producers,
 * purge (or keeping) a destroyed QP's CQEs, notification rules (§3.8, T38) and completion
 * channels (fd wakes). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "rn_cq.h"

#define MAX_CQE 4096u

static int fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	assert_true(poll(&p, 1, 0) >= 0);
	return (p.revents & POLLIN) != 0;
}

static struct rn_cq *mk_cq(uint32_t n, struct rn_comp_channel *ch, struct rn_evq *evq,
			   void *ctx)
{
	struct rn_cq_attr a = { .min_cqe = n, .max_cqe = MAX_CQE, .channel = ch, .evq = evq,
				.id = 5, .context = ctx };
	struct rn_cq *cq;
	uint32_t got;

	assert_int_equal(rn_cq_create(&a, &cq, &got), RN_OK);
	assert_true(got >= n);
	return cq;
}

static struct rn_cqe cqe(uint32_t qp, uint64_t wr, uint8_t status, uint16_t flags)
{
	struct rn_cqe e;

	memset(&e, 0, sizeof(e));
	e.qp_id = qp;
	e.wr_id = wr;
	e.status = status;
	e.flags = flags;
	e.opcode = RN_WC_OP_RECV;
	return e;
}

static void push_ok(struct rn_cq *cq, uint32_t qp, uint64_t wr)
{
	struct rn_cqe e = cqe(qp, wr, RN_WC_SUCCESS, 0);

	assert_int_equal(rn_cq_push(cq, &e), RN_CQ_PUSH_OK);
}

/* T03: too big, returned size >= requested (and within the device limit). */
static void test_T03_cq_create_sizes(void **state)
{
	struct rn_cq_attr a = { .min_cqe = MAX_CQE + 1, .max_cqe = MAX_CQE };
	struct rn_cq *cq = (void *)1;
	uint32_t got = 0, sz;

	(void)state;
	assert_int_equal(rn_cq_create(&a, &cq, &got), RN_ERR_CQ_TOO_BIG);
	assert_null(cq);
	for (uint32_t n = 0; n < 70; n++) {
		a.min_cqe = n;
		assert_int_equal(rn_cq_create(&a, &cq, &got), RN_OK);
		assert_true(got >= n && got >= 1 && got <= MAX_CQE);
		assert_int_equal(rn_cq_query(cq, &sz, NULL), RN_OK);
		assert_int_equal(sz, got);
		assert_int_equal(rn_cq_destroy(cq), RN_OK);
	}
	a.max_cqe = 1000;               /* a non-power-of-two limit is never exceeded */
	a.min_cqe = 600;
	assert_int_equal(rn_cq_create(&a, &cq, &got), RN_OK);
	assert_true(got >= 600 && got <= 1000);
	for (uint32_t i = 0; i < got; i++)
		push_ok(cq, 1, i);
	struct rn_cqe e = cqe(1, 0, 0, 0);

	assert_int_equal(rn_cq_push(cq, &e), RN_CQ_PUSH_OVERFLOW);  /* size is exactly got */
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
}

static void test_T03_cq_poll_empty_and_handles(void **state)
{
	struct rn_cq *cq = mk_cq(8, NULL, NULL, NULL);
	struct rn_cqe out[4];
	uint32_t got = 99;

	(void)state;
	assert_int_equal(rn_cq_poll(cq, out, 4, &got), RN_ERR_CQ_EMPTY);
	assert_int_equal(got, 0);
	assert_int_equal(rn_cq_poll(NULL, out, 4, &got), RN_ERR_INVALID_CQ);
	assert_int_equal(rn_cq_poll(cq, out, 0, &got), RN_ERR_INVALID_MODIFIER);
	assert_int_equal(rn_cq_req_notify(NULL, RN_NOTIFY_NEXT), RN_ERR_INVALID_CQ);
	assert_int_equal(rn_cq_resize(NULL, 8, NULL), RN_ERR_INVALID_CQ);
	assert_int_equal(rn_cq_query(NULL, NULL, NULL), RN_ERR_INVALID_CQ);
	assert_int_equal(rn_cq_destroy(NULL), RN_ERR_INVALID_CQ);
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
}

/* Poll one or many, oldest first, all fields copied. */
static void test_cq_poll_order_and_batches(void **state)
{
	struct rn_cq *cq = mk_cq(8, NULL, NULL, NULL);
	struct rn_cqe out[8], e = cqe(3, 0, RN_WC_SUCCESS, RN_CQE_F_INVALIDATED);
	uint32_t got;

	(void)state;
	for (uint64_t i = 0; i < 7; i++) {
		e.wr_id = 100 + i;
		e.byte_len = (uint32_t)i * 10;
		e.inv_stag = 0xabcd00 + (uint32_t)i;
		assert_int_equal(rn_cq_push(cq, &e), RN_CQ_PUSH_OK);
	}
	assert_int_equal(rn_cq_count(cq), 7);
	assert_int_equal(rn_cq_poll(cq, out, 1, &got), RN_OK);
	assert_int_equal(got, 1);
	assert_int_equal(out[0].wr_id, 100);
	assert_int_equal(rn_cq_poll(cq, out, 4, &got), RN_OK);
	assert_int_equal(got, 4);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(out[i].wr_id, 101 + i);
		assert_int_equal(out[i].byte_len, (1 + i) * 10);
		assert_int_equal(out[i].inv_stag, 0xabcd01 + i);
		assert_int_equal(out[i].qp_id, 3);
		assert_int_equal(out[i].flags, RN_CQE_F_INVALIDATED);
	}
	assert_int_equal(rn_cq_poll(cq, out, 8, &got), RN_OK);
	assert_int_equal(got, 2);
	assert_int_equal(out[1].wr_id, 106);
	assert_int_equal(rn_cq_poll(cq, out, 8, &got), RN_ERR_CQ_EMPTY);
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
}

/* T03: with 10 WCs queued, resize to 5 fails and all 10 stay pollable in order; with the
 * ring wrapped, a grow keeps order. */
static void test_T03_cq_resize_shrink_fails(void **state)
{
	struct rn_cq *cq = mk_cq(16, NULL, NULL, NULL);
	struct rn_cqe out[16];
	uint32_t got, sz;

	(void)state;
	/* wrap the ring: 12 in, 12 out, then 10 in */
	for (uint64_t i = 0; i < 12; i++)
		push_ok(cq, 1, i);
	assert_int_equal(rn_cq_poll(cq, out, 16, &got), RN_OK);
	for (uint64_t i = 0; i < 10; i++)
		push_ok(cq, 1, 1000 + i);
	assert_int_equal(rn_cq_resize(cq, 5, &sz), RN_ERR_SHRINK_FAILED);
	assert_int_equal(rn_cq_query(cq, &sz, NULL), RN_OK);
	assert_int_equal(sz, 16);
	assert_int_equal(rn_cq_resize(cq, MAX_CQE + 1, &sz), RN_ERR_CQ_TOO_BIG);
	assert_int_equal(rn_cq_resize(cq, 10, &sz), RN_OK);   /* exactly fits */
	assert_true(sz >= 10);
	assert_int_equal(rn_cq_resize(cq, 100, &sz), RN_OK);
	assert_true(sz >= 100);
	assert_int_equal(rn_cq_poll(cq, out, 16, &got), RN_OK);
	assert_int_equal(got, 10);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(out[i].wr_id, 1000 + i);
	assert_int_equal(rn_cq_resize(cq, 2, &sz), RN_OK);     /* empty: shrink allowed */
	assert_true(sz >= 2 && sz < 100);
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
}

/* T03: Destroy CQ used by a QP -> CQ In Use; unchanged afterwards. */
static void test_T03_cq_destroy_in_use(void **state)
{
	struct rn_cq *cq = mk_cq(4, NULL, NULL, NULL);
	struct rn_cqe out;
	uint32_t got;

	(void)state;
	push_ok(cq, 1, 42);
	rn_cq_ref(cq);
	rn_cq_ref(cq);
	assert_int_equal(rn_cq_destroy(cq), RN_ERR_CQ_IN_USE);
	rn_cq_unref(cq);
	assert_int_equal(rn_cq_destroy(cq), RN_ERR_CQ_IN_USE);
	assert_int_equal(rn_cq_poll(cq, &out, 1, &got), RN_OK);
	assert_int_equal(out.wr_id, 42);
	rn_cq_unref(cq);
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
}

/* Push to a full CQ: overflow status, async CQ Overflow once per episode, entries intact. */
static void test_cq_overflow_event(void **state)
{
	struct rn_evq *q;
	struct rn_cq *cq;
	struct rn_async_event ev;
	struct rn_cqe out[8], e = cqe(1, 99, 0, 0);
	uint32_t got;

	(void)state;
	assert_int_equal(rn_evq_create(8, &q), RN_OK);
	cq = mk_cq(4, NULL, q, NULL);
	for (uint64_t i = 0; i < 4; i++)
		push_ok(cq, 1, i);
	assert_int_equal(rn_cq_push(cq, &e), RN_CQ_PUSH_OVERFLOW);
	assert_int_equal(rn_cq_push(cq, &e), RN_CQ_PUSH_OVERFLOW);
	assert_int_equal(rn_evq_get(q, &ev, 0), 0);
	assert_int_equal(ev.id, RN_AE_CQ_OVERFLOW);
	assert_int_equal(ev.kind, RN_RES_CQ);
	assert_ptr_equal(ev.handle, cq);
	assert_int_equal(ev.res_id, 5);
	assert_int_equal(rn_evq_get(q, &ev, 0), EAGAIN);   /* one event per episode */
	rn_evq_ack(q, &ev);
	assert_int_equal(rn_cq_overflows(cq), 2);
	assert_int_equal(rn_cq_poll(cq, out, 1, &got), RN_OK);
	assert_int_equal(out[0].wr_id, 0);
	push_ok(cq, 1, 4);                                  /* room again */
	assert_int_equal(rn_cq_push(cq, &e), RN_CQ_PUSH_OVERFLOW);
	assert_int_equal(rn_evq_get(q, &ev, 0), 0);        /* new episode, new event */
	rn_evq_ack(q, &ev);
	assert_int_equal(rn_cq_poll(cq, out, 8, &got), RN_OK);
	assert_int_equal(got, 4);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(out[i].wr_id, 1 + i);
	/* a queued-but-never-taken event is dropped by destroy (no ack needed) */
	for (uint64_t i = 0; i < 4; i++)
		push_ok(cq, 1, i);
	assert_int_equal(rn_cq_push(cq, &e), RN_CQ_PUSH_OVERFLOW);
	assert_int_equal(rn_evq_pending(q), 1);
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
	assert_int_equal(rn_evq_pending(q), 0);
	rn_evq_destroy(q);
}

/* Destroy QP: its CQEs disappear, the others keep their order. */
static void test_cq_purge_qp(void **state)
{
	struct rn_cq *cq = mk_cq(8, NULL, NULL, NULL);
	struct rn_cqe out[8];
	uint32_t got;

	(void)state;
	for (uint64_t i = 0; i < 6; i++)   /* wrap first */
		push_ok(cq, 9, i);
	assert_int_equal(rn_cq_poll(cq, out, 8, &got), RN_OK);
	for (uint64_t i = 0; i < 8; i++)
		push_ok(cq, (i % 3 == 0) ? 2 : 1, i);
	assert_int_equal(rn_cq_purge_qp(cq, 2), 3);
	assert_int_equal(rn_cq_purge_qp(cq, 77), 0);
	assert_int_equal(rn_cq_count(cq), 5);
	push_ok(cq, 1, 100);
	assert_int_equal(rn_cq_poll(cq, out, 8, &got), RN_OK);
	assert_int_equal(got, 6);
	uint64_t want[] = { 1, 2, 4, 5, 7, 100 };

	for (uint32_t i = 0; i < 6; i++) {
		assert_int_equal(out[i].wr_id, want[i]);
		assert_int_equal(out[i].qp_id, 1);
	}
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
}

/* Destroy of a QP that keeps its CQEs (D221): they stay, in order, and no longer retire
 * anything on a poll; a CQE of another QP still does. */
static void test_cq_orphan_qp(void **state)
{
	struct rn_cq *cq = mk_cq(8, NULL, NULL, NULL);
	struct rn_sq_retire gone, live;
	struct rn_cqe out[8];
	uint32_t got;

	(void)state;
	rn_sq_retire_init(&gone, 0);
	rn_sq_retire_init(&live, 0);
	for (uint64_t i = 0; i < 6; i++)   /* wrap first */
		push_ok(cq, 9, i);
	assert_int_equal(rn_cq_poll(cq, out, 8, &got), RN_OK);
	for (uint64_t i = 0; i < 8; i++) {
		struct rn_cqe e = cqe((i % 3 == 0) ? 2 : 1, i, RN_WC_SUCCESS, 0);
		e.sq = (i % 3 == 0) ? &gone : &live;
		e.sq_seq = (uint32_t)i;
		assert_int_equal(rn_cq_push(cq, &e), RN_CQ_PUSH_OK);
	}
	assert_int_equal(rn_cq_orphan_qp(cq, 2), 3);
	assert_int_equal(rn_cq_orphan_qp(cq, 77), 0);
	assert_int_equal(rn_cq_count(cq), 8);
	assert_int_equal(rn_cq_poll(cq, out, 8, &got), RN_OK);
	assert_int_equal(got, 8);
	for (uint32_t i = 0; i < 8; i++) {
		assert_int_equal(out[i].wr_id, i);
		assert_int_equal(out[i].qp_id, i % 3 == 0 ? 2 : 1);
		assert_true(i % 3 != 0 || out[i].sq == NULL);
	}
	assert_int_equal(rn_sq_retired(&gone), 0);   /* the destroyed QP's counter untouched */
	assert_int_equal(rn_sq_retired(&live), 8);
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
}

/* ---- resize while producers run (T03 "grow CQ during traffic") ---- */

#define NPROD 2

struct rs_ctx {
	struct rn_cq *cq;
	uint32_t qp;
	uint64_t n;
	atomic_int *stop;
};

static void *rs_producer(void *arg)
{
	struct rs_ctx *c = arg;

	for (uint64_t i = 0; i < c->n; i++) {
		struct rn_cqe e = cqe(c->qp, i, 0, 0);

		while (rn_cq_push(c->cq, &e) == RN_CQ_PUSH_OVERFLOW)
			sched_yield();  /* full: retry the same sequence number */
	}
	return NULL;
}

static void *rs_resizer(void *arg)
{
	struct rs_ctx *c = arg;
	uint32_t sizes[] = { 64, 1024, 16, 4096, 8, 256, 2 }, sz;
	unsigned k = 0;

	while (!atomic_load(c->stop)) {
		enum rn_status rc = rn_cq_resize(c->cq, sizes[k++ % 7], &sz);

		assert_true(rc == RN_OK || rc == RN_ERR_SHRINK_FAILED);
		sched_yield();
	}
	return NULL;
}

static void test_T03_cq_resize_during_traffic(void **state)
{
	const uint64_t per = 100000;
	struct rn_cq *cq = mk_cq(16, NULL, NULL, NULL);
	atomic_int stop = 0;
	struct rs_ctx p[NPROD], r = { .cq = cq, .stop = &stop };
	pthread_t tp[NPROD], tr;
	uint64_t next[NPROD] = { 0 }, total = 0;
	struct rn_cqe out[32];
	uint32_t got;

	(void)state;
	for (int i = 0; i < NPROD; i++) {
		p[i] = (struct rs_ctx){ .cq = cq, .qp = (uint32_t)i, .n = per, .stop = &stop };
		pthread_create(&tp[i], NULL, rs_producer, &p[i]);
	}
	pthread_create(&tr, NULL, rs_resizer, &r);
	while (total < NPROD * per) {
		if (rn_cq_poll(cq, out, 1 + (uint32_t)(total % 32), &got) != RN_OK) {
			sched_yield();
			continue;
		}
		for (uint32_t i = 0; i < got; i++) {
			/* per-producer order: no loss (gap), no duplicate, no reorder */
			assert_true(out[i].qp_id < NPROD);
			assert_int_equal(out[i].wr_id, next[out[i].qp_id]);
			next[out[i].qp_id]++;
		}
		total += got;
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < NPROD; i++)
		pthread_join(tp[i], NULL);
	pthread_join(tr, NULL);
	assert_int_equal(rn_cq_poll(cq, out, 32, &got), RN_ERR_CQ_EMPTY);
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
}

/* ---- notification ---- */

static void test_cq_not_armed_never_writes_fd(void **state)
{
	struct rn_comp_channel *ch;
	struct rn_cq *cq, *fired;
	struct rn_cqe out[8];
	uint32_t got;

	(void)state;
	assert_int_equal(rn_comp_channel_create(&ch), 0);
	cq = mk_cq(64, ch, NULL, NULL);
	for (uint64_t i = 0; i < 40; i++) {
		struct rn_cqe e = cqe(1, i, i % 2 ? RN_WC_FLUSHED : 0, RN_CQE_F_SOLICITED);

		assert_int_equal(rn_cq_push(cq, &e), RN_CQ_PUSH_OK);
	}
	assert_false(fd_readable(rn_comp_channel_fd(ch)));
	assert_int_equal(rn_comp_channel_get(ch, &fired, NULL, 0), EAGAIN);
	while (rn_cq_poll(cq, out, 8, &got) == RN_OK)
		;
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
	assert_int_equal(rn_comp_channel_destroy(ch), 0);
}

/* Armed once fires once; three arms still one event; CQEs present at arm time do not fire. */
static void test_T38_cq_notify_next_one_shot(void **state)
{
	struct rn_comp_channel *ch;
	struct rn_cq *cq, *fired = NULL;
	void *ctx = NULL;
	int tag;

	(void)state;
	assert_int_equal(rn_comp_channel_create(&ch), 0);
	cq = mk_cq(64, ch, NULL, &tag);
	push_ok(cq, 1, 1);
	assert_int_equal(rn_cq_req_notify(cq, RN_NOTIFY_NEXT), RN_OK);
	assert_int_equal(rn_cq_req_notify(cq, RN_NOTIFY_NEXT), RN_OK);
	assert_int_equal(rn_cq_req_notify(cq, RN_NOTIFY_NEXT), RN_OK);
	assert_false(fd_readable(rn_comp_channel_fd(ch)));   /* the queued CQE does not fire */
	push_ok(cq, 1, 2);
	assert_true(fd_readable(rn_comp_channel_fd(ch)));
	push_ok(cq, 1, 3);
	assert_int_equal(rn_comp_channel_get(ch, &fired, &ctx, 0), 0);
	assert_ptr_equal(fired, cq);
	assert_ptr_equal(ctx, &tag);
	assert_false(fd_readable(rn_comp_channel_fd(ch)));
	assert_int_equal(rn_comp_channel_get(ch, &fired, &ctx, 0), EAGAIN);  /* exactly one */
	assert_int_equal(rn_cq_unacked_events(cq), 1);
	rn_cq_ack_events(cq, 1);
	assert_int_equal(rn_cq_unacked_events(cq), 0);
	/* re-arm: fires again, and two fires before a get are two events */
	assert_int_equal(rn_cq_req_notify(cq, RN_NOTIFY_NEXT), RN_OK);
	push_ok(cq, 1, 4);
	assert_int_equal(rn_cq_req_notify(cq, RN_NOTIFY_NEXT), RN_OK);
	push_ok(cq, 1, 5);
	assert_int_equal(rn_comp_channel_get(ch, &fired, NULL, 0), 0);
	assert_true(fd_readable(rn_comp_channel_fd(ch)));
	assert_int_equal(rn_comp_channel_get(ch, &fired, NULL, 0), 0);
	assert_false(fd_readable(rn_comp_channel_fd(ch)));
	rn_cq_ack_events(cq, 2);
	assert_int_equal(rn_cq_req_notify(cq, (enum rn_notify)0), RN_ERR_INVALID_NOTIFY_TYPE);
	assert_int_equal(rn_cq_req_notify(cq, (enum rn_notify)3), RN_ERR_INVALID_NOTIFY_TYPE);
	assert_int_equal(rn_comp_channel_destroy(ch), EBUSY);
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
	assert_int_equal(rn_comp_channel_destroy(ch), 0);
}

/* §3.8 / T38: solicited fires on a solicited Receive or any error (Flushed too), not on a
 * plain success; an outstanding "next" arm wins over "solicited". */
static void test_T38_cq_notify_solicited_rule(void **state)
{
	struct rn_comp_channel *ch;
	struct rn_cq *cq, *fired;
	struct rn_cqe plain = cqe(1, 1, RN_WC_SUCCESS, 0);
	struct rn_cqe sol = cqe(1, 2, RN_WC_SUCCESS, RN_CQE_F_SOLICITED);
	struct rn_cqe err = cqe(1, 3, RN_WC_ACCESS_VIOLATION, 0);
	struct rn_cqe flushed = cqe(1, 4, RN_WC_FLUSHED, 0);
	const struct rn_cqe *fires[] = { &sol, &err, &flushed };

	(void)state;
	assert_int_equal(rn_comp_channel_create(&ch), 0);
	cq = mk_cq(64, ch, NULL, NULL);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(rn_cq_req_notify(cq, RN_NOTIFY_SOLICITED), RN_OK);
		assert_int_equal(rn_cq_push(cq, &plain), RN_CQ_PUSH_OK);
		assert_int_equal(rn_cq_push(cq, &plain), RN_CQ_PUSH_OK);
		assert_int_equal(rn_comp_channel_get(ch, &fired, NULL, 0), EAGAIN);
		assert_int_equal(rn_cq_push(cq, fires[k]), RN_CQ_PUSH_OK);
		assert_int_equal(rn_comp_channel_get(ch, &fired, NULL, 0), 0);
		assert_ptr_equal(fired, cq);
		assert_int_equal(rn_cq_push(cq, fires[k]), RN_CQ_PUSH_OK);  /* disarmed */
		assert_int_equal(rn_comp_channel_get(ch, &fired, NULL, 0), EAGAIN);
		rn_cq_ack_events(cq, 1);
	}
	assert_int_equal(rn_cq_req_notify(cq, RN_NOTIFY_SOLICITED), RN_OK);
	assert_int_equal(rn_cq_req_notify(cq, RN_NOTIFY_NEXT), RN_OK);
	assert_int_equal(rn_cq_push(cq, &plain), RN_CQ_PUSH_OK);
	assert_int_equal(rn_comp_channel_get(ch, &fired, NULL, 0), 0);
	rn_cq_ack_events(cq, 1);
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
	assert_int_equal(rn_comp_channel_destroy(ch), 0);
}

/* Several CQs share one channel: events come out in firing order, each names its CQ. */
static void test_cq_channel_shared_by_cqs(void **state)
{
	struct rn_comp_channel *ch;
	struct rn_cq *a, *b, *c, *fired;
	void *ctx;
	int ta, tb, tc;

	(void)state;
	assert_int_equal(rn_comp_channel_create(&ch), 0);
	a = mk_cq(8, ch, NULL, &ta);
	b = mk_cq(8, ch, NULL, &tb);
	c = mk_cq(8, ch, NULL, &tc);
	assert_int_equal(rn_cq_req_notify(a, RN_NOTIFY_NEXT), RN_OK);
	assert_int_equal(rn_cq_req_notify(b, RN_NOTIFY_NEXT), RN_OK);
	push_ok(c, 1, 1);                               /* c not armed */
	push_ok(b, 1, 1);
	push_ok(a, 1, 1);
	assert_int_equal(rn_comp_channel_get(ch, &fired, &ctx, 0), 0);
	assert_ptr_equal(fired, b);
	assert_ptr_equal(ctx, &tb);
	assert_int_equal(rn_comp_channel_get(ch, &fired, &ctx, 0), 0);
	assert_ptr_equal(fired, a);
	assert_ptr_equal(ctx, &ta);
	assert_int_equal(rn_comp_channel_get(ch, &fired, &ctx, 0), EAGAIN);
	assert_false(fd_readable(rn_comp_channel_fd(ch)));
	rn_cq_ack_events(a, 1);
	rn_cq_ack_events(b, 1);
	/* destroying a CQ whose event was never taken removes it from the channel */
	assert_int_equal(rn_cq_req_notify(c, RN_NOTIFY_NEXT), RN_OK);
	push_ok(c, 1, 2);
	assert_true(fd_readable(rn_comp_channel_fd(ch)));
	assert_int_equal(rn_cq_destroy(c), RN_OK);
	assert_false(fd_readable(rn_comp_channel_fd(ch)));
	assert_int_equal(rn_comp_channel_get(ch, &fired, &ctx, 0), EAGAIN);
	assert_int_equal(rn_cq_destroy(a), RN_OK);
	assert_int_equal(rn_cq_destroy(b), RN_OK);
	assert_int_equal(rn_comp_channel_destroy(ch), 0);
}

struct chwait {
	struct rn_comp_channel *ch;
	struct rn_cq *cq;
	int rc;
	atomic_int done;
};

static void *epoll_on_channel(void *arg)
{
	struct chwait *w = arg;
	struct epoll_event e = { .events = EPOLLIN }, out;
	int ep = epoll_create1(0), fd = rn_comp_channel_fd(w->ch);

	e.data.fd = fd;
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
	w->rc = epoll_wait(ep, &out, 1, 10000);
	close(ep);
	atomic_store(&w->done, 1);
	return NULL;
}

static void *blocking_channel_get(void *arg)
{
	struct chwait *w = arg;

	w->rc = rn_comp_channel_get(w->ch, &w->cq, NULL, -1);
	atomic_store(&w->done, 1);
	return NULL;
}

/* A thread sleeping in epoll_wait (or a blocking get) on the channel really wakes. */
static void test_cq_channel_fd_wakes_epoll(void **state)
{
	struct rn_comp_channel *ch;
	struct rn_cq *cq, *fired;
	struct chwait w = { 0 }, g = { 0 };
	pthread_t t;

	(void)state;
	assert_int_equal(rn_comp_channel_create(&ch), 0);
	cq = mk_cq(8, ch, NULL, NULL);
	w.ch = g.ch = ch;
	pthread_create(&t, NULL, epoll_on_channel, &w);
	usleep(20000);
	push_ok(cq, 1, 1);                               /* not armed: must not wake */
	usleep(20000);
	assert_false(atomic_load(&w.done));
	assert_int_equal(rn_cq_req_notify(cq, RN_NOTIFY_NEXT), RN_OK);
	push_ok(cq, 1, 2);
	pthread_join(t, NULL);
	assert_int_equal(w.rc, 1);
	assert_int_equal(rn_comp_channel_get(ch, &fired, NULL, 0), 0);
	rn_cq_ack_events(fired, 1);

	pthread_create(&t, NULL, blocking_channel_get, &g);
	usleep(20000);
	assert_false(atomic_load(&g.done));
	assert_int_equal(rn_cq_req_notify(cq, RN_NOTIFY_SOLICITED), RN_OK);
	struct rn_cqe e = cqe(1, 3, RN_WC_SUCCESS, RN_CQE_F_SOLICITED);

	assert_int_equal(rn_cq_push(cq, &e), RN_CQ_PUSH_OK);
	pthread_join(t, NULL);
	assert_int_equal(g.rc, 0);
	assert_ptr_equal(g.cq, cq);
	rn_cq_ack_events(cq, 1);
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
	assert_int_equal(rn_comp_channel_destroy(ch), 0);
}

static void *destroy_cq(void *arg)
{
	struct chwait *w = arg;

	w->rc = rn_cq_destroy(w->cq);
	atomic_store(&w->done, 1);
	return NULL;
}

/* ibv_destroy_cq semantics: destroy waits until the taken channel event is acked. */
static void test_cq_destroy_waits_for_ack(void **state)
{
	struct rn_comp_channel *ch;
	struct rn_cq *cq, *fired;
	struct chwait w = { 0 };
	pthread_t t;

	(void)state;
	assert_int_equal(rn_comp_channel_create(&ch), 0);
	cq = mk_cq(8, ch, NULL, NULL);
	assert_int_equal(rn_cq_req_notify(cq, RN_NOTIFY_NEXT), RN_OK);
	push_ok(cq, 1, 1);
	assert_int_equal(rn_comp_channel_get(ch, &fired, NULL, 0), 0);
	w.cq = cq;
	pthread_create(&t, NULL, destroy_cq, &w);
	usleep(30000);
	assert_false(atomic_load(&w.done));
	rn_cq_ack_events(cq, 1);
	pthread_join(t, NULL);
	assert_int_equal(w.rc, RN_OK);
	assert_int_equal(rn_comp_channel_destroy(ch), 0);
}

/* ---- T38: poll / arm / poll over many completions never stalls ---- */

struct pap {
	struct rn_cq *cq;
	uint64_t n;
};

static void *pap_producer(void *arg)
{
	struct pap *p = arg;

	for (uint64_t i = 0; i < p->n; i++) {
		struct rn_cqe e = cqe(1, i, 0, 0);

		while (rn_cq_push(p->cq, &e) == RN_CQ_PUSH_OVERFLOW)
			sched_yield();
		if ((i & 1023) == 0)
			usleep(50);   /* let the consumer drain and sleep now and then */
	}
	return NULL;
}

static uint64_t drain(struct rn_cq *cq, uint64_t next)
{
	struct rn_cqe out[16];
	uint32_t got;

	while (rn_cq_poll(cq, out, 16, &got) == RN_OK)
		for (uint32_t i = 0; i < got; i++)
			assert_int_equal(out[i].wr_id, next++);
	return next;
}

static void test_T38_cq_poll_arm_poll_never_stalls(void **state)
{
	struct rn_comp_channel *ch;
	struct rn_cq *cq, *fired;
	struct pap p;
	pthread_t t;
	uint64_t next = 0, sleeps = 0;

	(void)state;
	assert_int_equal(rn_comp_channel_create(&ch), 0);
	cq = mk_cq(256, ch, NULL, NULL);
	p.cq = cq;
	p.n = 300000;
	pthread_create(&t, NULL, pap_producer, &p);
	while (next < p.n) {
		next = drain(cq, next);
		if (next == p.n)
			break;
		assert_int_equal(rn_cq_req_notify(cq, RN_NOTIFY_NEXT), RN_OK);
		uint64_t before = next;

		next = drain(cq, next);
		if (next != before)
			continue;   /* raced: stay armed, the event (if any) is taken later */
		/* A missed notification would hang here: 10 s is "never". */
		assert_int_equal(rn_comp_channel_get(ch, &fired, NULL, 10000), 0);
		rn_cq_ack_events(fired, 1);
		sleeps++;
	}
	pthread_join(t, NULL);
	while (rn_comp_channel_get(ch, &fired, NULL, 0) == 0)
		rn_cq_ack_events(fired, 1);
	assert_true(sleeps > 0);
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
	assert_int_equal(rn_comp_channel_destroy(ch), 0);
}

/* RDMA Verbs §8.2.4: polling SQ CQEs advances their QP's retire counter past the last one polled
 * (one poll may retire several), never backwards (also across 2^32), and Receive CQEs (no
 * counter) retire nothing. */
static void test_sq_retire_at_poll(void **state)
{
	(void)state;
	struct rn_cq *cq = mk_cq(8, NULL, NULL, NULL);
	struct rn_sq_retire r1, r2;
	struct rn_cqe e = { 0 }, out[8];
	uint32_t got;

	rn_sq_retire_init(&r1, 0xfffffffeu);
	rn_sq_retire_init(&r2, 10);
	e.sq = &r1;
	e.sq_seq = 0xfffffffeu;
	assert_int_equal(rn_cq_push(cq, &e), RN_CQ_PUSH_OK);
	e.sq_seq = 1;                     /* wrapped: after 0xffffffff, 0 */
	assert_int_equal(rn_cq_push(cq, &e), RN_CQ_PUSH_OK);
	e.sq = &r2;
	e.sq_seq = 12;
	assert_int_equal(rn_cq_push(cq, &e), RN_CQ_PUSH_OK);
	e.sq = NULL;                      /* a Receive */
	assert_int_equal(rn_cq_push(cq, &e), RN_CQ_PUSH_OK);
	assert_int_equal(rn_cq_poll(cq, out, 1, &got), RN_OK);
	assert_int_equal(rn_sq_retired(&r1), 0xffffffffu);
	assert_int_equal(rn_sq_retired(&r2), 10);   /* not polled yet */
	assert_int_equal(rn_cq_poll(cq, out, 8, &got), RN_OK);
	assert_int_equal(got, 3);
	assert_int_equal(rn_sq_retired(&r1), 2);
	assert_int_equal(rn_sq_retired(&r2), 13);
	rn_sq_retire_to(&r2, 5);          /* a stale CQE: no step back */
	assert_int_equal(rn_sq_retired(&r2), 13);
	assert_int_equal(rn_cq_destroy(cq), RN_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_T03_cq_create_sizes),
		cmocka_unit_test(test_sq_retire_at_poll),
		cmocka_unit_test(test_T03_cq_poll_empty_and_handles),
		cmocka_unit_test(test_cq_poll_order_and_batches),
		cmocka_unit_test(test_T03_cq_resize_shrink_fails),
		cmocka_unit_test(test_T03_cq_destroy_in_use),
		cmocka_unit_test(test_cq_overflow_event),
		cmocka_unit_test(test_cq_purge_qp),
		cmocka_unit_test(test_cq_orphan_qp),
		cmocka_unit_test(test_T03_cq_resize_during_traffic),
		cmocka_unit_test(test_cq_not_armed_never_writes_fd),
		cmocka_unit_test(test_T38_cq_notify_next_one_shot),
		cmocka_unit_test(test_T38_cq_notify_solicited_rule),
		cmocka_unit_test(test_cq_channel_shared_by_cqs),
		cmocka_unit_test(test_cq_channel_fd_wakes_epoll),
		cmocka_unit_test(test_cq_destroy_waits_for_ack),
		cmocka_unit_test(test_T38_cq_poll_arm_poll_never_stalls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
