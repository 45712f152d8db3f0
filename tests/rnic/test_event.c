/* rn_event: the async event queue (RDMA Verbs 1.0 §9.5.3, Fig. 25, §9.4): identifiers and
 * kinds, the eventfd really readable (poll / epoll), FIFO order, ack counts and destroy
 * waiting, purge, overflow counted and reported in-band, many producers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "rn_event.h"
#include "rn_qp_state.h"

static int fd_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, timeout_ms);

	assert_true(n >= 0);
	return n == 1 && (p.revents & POLLIN);
}

/* The QP identifiers line up with rn_qp_state's enum, so rn_qp can cast (rn_event.h). */
_Static_assert((int)RN_AE_LLP_CLOSE_COMPLETE == (int)RN_QPE_LLP_CLOSE_COMPLETE, "qp ev");
_Static_assert((int)RN_AE_PROT_INVALID_STAG == (int)RN_QPE_STAG_INVALID, "qp ev");
_Static_assert((int)RN_AE_BAD_LLP_CLOSE == (int)RN_QPE_BAD_LLP_CLOSE, "qp ev");
_Static_assert((int)RN_AE_IRRQ_WRAP == (int)RN_QPE_IRRQ_WRAP, "qp ev");
_Static_assert((int)RN_AE_QP_RQ_LIMIT == (int)RN_QPE_RQ_LIMIT_REACHED, "qp ev");
_Static_assert((int)RN_AE_CQ_OVERFLOW == (int)RN_QPE_COUNT, "qp events end where CQ ones start");

static void test_event_ids_and_kinds(void **state)
{
	(void)state;
	for (int id = RN_AE_LLP_CLOSE_COMPLETE; id <= RN_AE_QP_RQ_LIMIT; id++)
		assert_int_equal(rn_event_kind((enum rn_event_id)id), RN_RES_QP);
	assert_int_equal(rn_event_kind(RN_AE_CQ_OVERFLOW), RN_RES_CQ);
	assert_int_equal(rn_event_kind(RN_AE_CQ_OP_ERROR), RN_RES_CQ);
	assert_int_equal(rn_event_kind(RN_AE_SRQ_LIMIT), RN_RES_SRQ);
	assert_int_equal(rn_event_kind(RN_AE_SRQ_CATASTROPHIC), RN_RES_SRQ);
	assert_int_equal(rn_event_kind(RN_AE_RNIC_CATASTROPHIC), RN_RES_RNIC);
	/* Fig. 37: exactly three informational events. */
	int info = 0;

	for (int id = 1; id < RN_AE_COUNT; id++) {
		assert_non_null(rn_event_str((enum rn_event_id)id));
		assert_string_not_equal(rn_event_str((enum rn_event_id)id), "unknown event");
		info += !rn_event_is_error((enum rn_event_id)id);
	}
	assert_int_equal(info, 3);
	assert_false(rn_event_is_error(RN_AE_SRQ_LIMIT));
	assert_true(rn_event_is_error(RN_AE_CQ_OVERFLOW));
	assert_string_equal(rn_event_str(RN_AE_COUNT), "unknown event");
	assert_string_equal(rn_event_str(RN_AE_TERMINATE_RECEIVED), "Terminate Message Received");
}

static void test_evq_fd_readable_and_record(void **state)
{
	struct rn_evq *q;
	struct rn_event_res qp, cq;
	struct rn_async_event ev;
	int dummy_qp, dummy_cq;

	(void)state;
	assert_int_equal(rn_evq_create(8, &q), RN_OK);
	rn_event_res_init(&qp, RN_RES_QP, &dummy_qp, 7);
	rn_event_res_init(&cq, RN_RES_CQ, &dummy_cq, 3);
	assert_false(fd_readable(rn_evq_fd(q), 0));
	assert_int_equal(rn_evq_get(q, &ev, 0), EAGAIN);
	assert_int_equal(rn_evq_get(q, &ev, 20), EAGAIN);   /* timed wait expires */

	assert_int_equal(rn_evq_post(q, RN_AE_TERMINATE_RECEIVED, &qp), RN_OK);
	assert_int_equal(rn_evq_post(q, RN_AE_CQ_OVERFLOW, &cq), RN_OK);
	assert_true(fd_readable(rn_evq_fd(q), 0));
	assert_int_equal(rn_evq_pending(q), 2);

	assert_int_equal(rn_evq_get(q, &ev, 0), 0);
	assert_int_equal(ev.id, RN_AE_TERMINATE_RECEIVED);
	assert_int_equal(ev.kind, RN_RES_QP);
	assert_ptr_equal(ev.handle, &dummy_qp);
	assert_int_equal(ev.res_id, 7);
	assert_int_equal(ev.dropped, 0);
	assert_true(fd_readable(rn_evq_fd(q), 0));   /* one still queued */
	assert_int_equal(rn_evq_get(q, &ev, 0), 0);
	assert_int_equal(ev.id, RN_AE_CQ_OVERFLOW);
	assert_ptr_equal(ev.handle, &dummy_cq);
	assert_false(fd_readable(rn_evq_fd(q), 0));  /* level follows the queue */
	rn_evq_ack(q, &ev);
	rn_evq_destroy(q);
}

static void test_evq_kind_mismatch_rejected(void **state)
{
	struct rn_evq *q;
	struct rn_event_res qp;

	(void)state;
	assert_int_equal(rn_evq_create(4, &q), RN_OK);
	rn_event_res_init(&qp, RN_RES_QP, NULL, 1);
	assert_int_equal(rn_evq_post(q, RN_AE_SRQ_LIMIT, &qp), RN_ERR_INVALID_MODIFIER);
	assert_int_equal(rn_evq_post(q, RN_AE_NONE, &qp), RN_ERR_INVALID_MODIFIER);
	assert_int_equal(rn_evq_post(q, RN_AE_COUNT, &qp), RN_ERR_INVALID_MODIFIER);
	assert_int_equal(rn_evq_post(q, RN_AE_BAD_CLOSE, NULL), RN_ERR_INVALID_MODIFIER);
	assert_int_equal(rn_evq_pending(q), 0);
	assert_false(fd_readable(rn_evq_fd(q), 0));
	rn_evq_destroy(q);
}

static void test_evq_overflow_counted(void **state)
{
	struct rn_evq *q;
	struct rn_event_res r;
	struct rn_async_event ev;

	(void)state;
	assert_int_equal(rn_evq_create(2, &q), RN_OK);
	rn_event_res_init(&r, RN_RES_SRQ, NULL, 1);
	assert_int_equal(rn_evq_post(q, RN_AE_SRQ_LIMIT, &r), RN_OK);
	assert_int_equal(rn_evq_post(q, RN_AE_SRQ_CATASTROPHIC, &r), RN_OK);
	assert_int_equal(rn_evq_post(q, RN_AE_SRQ_LIMIT, &r), RN_ERR_NO_RESOURCES);
	assert_int_equal(rn_evq_post(q, RN_AE_SRQ_LIMIT, &r), RN_ERR_NO_RESOURCES);
	assert_int_equal(rn_evq_dropped_total(q), 2);
	assert_int_equal(rn_evq_get(q, &ev, 0), 0);
	assert_int_equal(ev.id, RN_AE_SRQ_LIMIT);
	assert_int_equal(ev.dropped, 2);             /* the loss is reported in-band */
	assert_int_equal(rn_evq_get(q, &ev, 0), 0);
	assert_int_equal(ev.id, RN_AE_SRQ_CATASTROPHIC);
	assert_int_equal(ev.dropped, 0);
	assert_int_equal(rn_evq_dropped_total(q), 2);
	rn_evq_ack(q, &ev);
	rn_evq_ack(q, &ev);
	rn_evq_destroy(q);
}

static void test_evq_ack_counts(void **state)
{
	struct rn_evq *q;
	struct rn_event_res a, b;
	struct rn_async_event e1, e2, e3;
	uint32_t queued, unacked;

	(void)state;
	assert_int_equal(rn_evq_create(8, &q), RN_OK);
	rn_event_res_init(&a, RN_RES_QP, NULL, 1);
	rn_event_res_init(&b, RN_RES_QP, NULL, 2);
	assert_int_equal(rn_evq_post(q, RN_AE_BAD_CLOSE, &a), RN_OK);
	assert_int_equal(rn_evq_post(q, RN_AE_LLP_CONN_LOST, &b), RN_OK);
	assert_int_equal(rn_evq_post(q, RN_AE_LLP_CONN_RESET, &a), RN_OK);
	rn_evq_res_counts(q, &a, &queued, &unacked);
	assert_int_equal(queued, 2);
	assert_int_equal(unacked, 0);
	assert_int_equal(rn_evq_get(q, &e1, 0), 0);
	assert_int_equal(rn_evq_get(q, &e2, 0), 0);
	assert_int_equal(rn_evq_get(q, &e3, 0), 0);
	assert_ptr_equal(e1.res, &a);
	assert_ptr_equal(e2.res, &b);
	assert_ptr_equal(e3.res, &a);
	rn_evq_res_counts(q, &a, &queued, &unacked);
	assert_int_equal(queued, 0);
	assert_int_equal(unacked, 2);
	assert_int_equal(rn_evq_wait_acked(q, &a, 0), ETIMEDOUT);
	assert_int_equal(rn_evq_wait_acked(q, &a, 10), ETIMEDOUT);
	rn_evq_ack(q, &e1);
	assert_int_equal(rn_evq_wait_acked(q, &a, 0), ETIMEDOUT);
	rn_evq_ack(q, &e3);
	assert_int_equal(rn_evq_wait_acked(q, &a, 0), 0);
	rn_evq_res_counts(q, &b, &queued, &unacked);
	assert_int_equal(unacked, 1);
	rn_evq_ack(q, &e2);
	rn_evq_ack(q, &e2);                          /* extra ack does not wrap the count */
	rn_evq_res_counts(q, &b, NULL, &unacked);
	assert_int_equal(unacked, 0);
	rn_evq_destroy(q);
}

static void test_evq_purge_keeps_others_in_order(void **state)
{
	struct rn_evq *q;
	struct rn_event_res a, b;
	struct rn_async_event ev;
	uint32_t queued;

	(void)state;
	assert_int_equal(rn_evq_create(4, &q), RN_OK);   /* small: purge crosses the wrap */
	rn_event_res_init(&a, RN_RES_CQ, NULL, 1);
	rn_event_res_init(&b, RN_RES_CQ, NULL, 2);
	/* move head off slot 0 */
	assert_int_equal(rn_evq_post(q, RN_AE_CQ_OP_ERROR, &b), RN_OK);
	assert_int_equal(rn_evq_post(q, RN_AE_CQ_OP_ERROR, &b), RN_OK);
	assert_int_equal(rn_evq_get(q, &ev, 0), 0);
	assert_int_equal(rn_evq_get(q, &ev, 0), 0);
	rn_evq_ack(q, &ev);
	rn_evq_ack(q, &ev);
	assert_int_equal(rn_evq_post(q, RN_AE_CQ_OVERFLOW, &a), RN_OK);
	assert_int_equal(rn_evq_post(q, RN_AE_CQ_OP_ERROR, &b), RN_OK);
	assert_int_equal(rn_evq_post(q, RN_AE_CQ_OVERFLOW, &a), RN_OK);
	assert_int_equal(rn_evq_post(q, RN_AE_CQ_OVERFLOW, &b), RN_OK);
	assert_int_equal(rn_evq_purge(q, &a), 2);
	rn_evq_res_counts(q, &a, &queued, NULL);
	assert_int_equal(queued, 0);
	assert_int_equal(rn_evq_pending(q), 2);
	assert_true(fd_readable(rn_evq_fd(q), 0));
	assert_int_equal(rn_evq_get(q, &ev, 0), 0);
	assert_int_equal(ev.id, RN_AE_CQ_OP_ERROR);
	assert_ptr_equal(ev.res, &b);
	rn_evq_ack(q, &ev);
	assert_int_equal(rn_evq_purge(q, &b), 1);
	assert_false(fd_readable(rn_evq_fd(q), 0));   /* emptied by purge: fd cleared */
	assert_int_equal(rn_evq_get(q, &ev, 0), EAGAIN);
	rn_evq_destroy(q);
}

struct waiter {
	struct rn_evq *q;
	struct rn_event_res *res;
	struct rn_async_event ev;
	int rc;
	atomic_int done;
};

static void *blocking_get(void *arg)
{
	struct waiter *w = arg;

	w->rc = rn_evq_get(w->q, &w->ev, -1);
	atomic_store(&w->done, 1);
	return NULL;
}

static void *epoll_wait_fd(void *arg)
{
	struct waiter *w = arg;
	struct epoll_event e = { .events = EPOLLIN }, out;
	int ep = epoll_create1(0);

	e.data.fd = rn_evq_fd(w->q);
	epoll_ctl(ep, EPOLL_CTL_ADD, rn_evq_fd(w->q), &e);
	w->rc = epoll_wait(ep, &out, 1, 10000);
	close(ep);
	atomic_store(&w->done, 1);
	return NULL;
}

/* ibv_get_async_event blocks on the fd: both a blocking get and epoll must wake on post. */
static void test_evq_blocking_get_and_epoll_wake(void **state)
{
	struct rn_evq *q;
	struct rn_event_res r;
	struct waiter w1 = { 0 }, w2 = { 0 };
	pthread_t t1, t2;

	(void)state;
	assert_int_equal(rn_evq_create(8, &q), RN_OK);
	rn_event_res_init(&r, RN_RES_RNIC, NULL, 0);
	w1.q = w2.q = q;
	pthread_create(&t2, NULL, epoll_wait_fd, &w2);
	usleep(20000);
	assert_false(atomic_load(&w2.done));
	assert_int_equal(rn_evq_post(q, RN_AE_RNIC_CATASTROPHIC, &r), RN_OK);
	pthread_join(t2, NULL);
	assert_int_equal(w2.rc, 1);
	/* blocking get takes the event already queued, then one posted while it sleeps */
	assert_int_equal(rn_evq_get(q, &w1.ev, -1), 0);
	rn_evq_ack(q, &w1.ev);
	pthread_create(&t1, NULL, blocking_get, &w1);
	usleep(20000);
	assert_false(atomic_load(&w1.done));
	assert_int_equal(rn_evq_post(q, RN_AE_RNIC_CATASTROPHIC, &r), RN_OK);
	pthread_join(t1, NULL);
	assert_int_equal(w1.rc, 0);
	assert_int_equal(w1.ev.id, RN_AE_RNIC_CATASTROPHIC);
	rn_evq_ack(q, &w1.ev);
	rn_evq_destroy(q);
}

static void *wait_acked(void *arg)
{
	struct waiter *w = arg;

	w->rc = rn_evq_wait_acked(w->q, w->res, -1);
	atomic_store(&w->done, 1);
	return NULL;
}

/* Destroy paths block in wait_acked until the application acks (libibverbs rule). */
static void test_evq_wait_acked_wakes_on_ack(void **state)
{
	struct rn_evq *q;
	struct rn_event_res r;
	struct rn_async_event ev;
	struct waiter w = { 0 };
	pthread_t t;

	(void)state;
	assert_int_equal(rn_evq_create(8, &q), RN_OK);
	rn_event_res_init(&r, RN_RES_QP, NULL, 9);
	assert_int_equal(rn_evq_post(q, RN_AE_LOCAL_QP_CATASTROPHIC, &r), RN_OK);
	assert_int_equal(rn_evq_get(q, &ev, 0), 0);
	w.q = q;
	w.res = &r;
	pthread_create(&t, NULL, wait_acked, &w);
	usleep(20000);
	assert_false(atomic_load(&w.done));
	rn_evq_ack(q, &ev);
	pthread_join(t, NULL);
	assert_int_equal(w.rc, 0);
	rn_evq_destroy(q);
}

#define NPROD 4
#define PER_PROD 5000

struct prod {
	struct rn_evq *q;
	struct rn_event_res res;
	atomic_uint posted;
};

static void *producer(void *arg)
{
	struct prod *p = arg;

	for (int i = 0; i < PER_PROD; i++) {
		while (rn_evq_post(p->q, RN_AE_QP_RQ_LIMIT, &p->res) != RN_OK)
			sched_yield();   /* queue full: the consumer catches up */
		atomic_fetch_add(&p->posted, 1);
	}
	return NULL;
}

/* Many producers, one consumer: every event arrives once, per-resource counts add up. */
static void test_evq_many_producers(void **state)
{
	struct rn_evq *q;
	struct prod p[NPROD];
	pthread_t t[NPROD];
	uint32_t got[NPROD] = { 0 };
	struct rn_async_event ev;

	(void)state;
	assert_int_equal(rn_evq_create(64, &q), RN_OK);
	for (int i = 0; i < NPROD; i++) {
		p[i].q = q;
		atomic_init(&p[i].posted, 0);
		rn_event_res_init(&p[i].res, RN_RES_QP, &p[i], (uint32_t)i);
		pthread_create(&t[i], NULL, producer, &p[i]);
	}
	for (int n = 0; n < NPROD * PER_PROD; n++) {
		assert_int_equal(rn_evq_get(q, &ev, 10000), 0);
		assert_true(ev.res_id < NPROD);
		got[ev.res_id]++;
		rn_evq_ack(q, &ev);
	}
	for (int i = 0; i < NPROD; i++) {
		uint32_t queued, unacked;

		pthread_join(t[i], NULL);
		assert_int_equal(got[i], PER_PROD);
		rn_evq_res_counts(q, &p[i].res, &queued, &unacked);
		assert_int_equal(queued + unacked, 0);
	}
	assert_int_equal(rn_evq_get(q, &ev, 0), EAGAIN);
	assert_false(fd_readable(rn_evq_fd(q), 0));
	rn_evq_destroy(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_ids_and_kinds),
		cmocka_unit_test(test_evq_fd_readable_and_record),
		cmocka_unit_test(test_evq_kind_mismatch_rejected),
		cmocka_unit_test(test_evq_overflow_counted),
		cmocka_unit_test(test_evq_ack_counts),
		cmocka_unit_test(test_evq_purge_keeps_others_in_order),
		cmocka_unit_test(test_evq_blocking_get_and_epoll_wake),
		cmocka_unit_test(test_evq_wait_acked_wakes_on_ack),
		cmocka_unit_test(test_evq_many_producers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
