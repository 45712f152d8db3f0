/* Helpers for the verbs tests. The tests use the public API exactly as an application does:
 * <infiniband/verbs.h>, linked with softrnic's library. */
#ifndef TV_UTIL_H
#define TV_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

struct tv {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

static inline void tv_open(struct tv *t)
{
	int n = 0;

	memset(t, 0, sizeof(*t));
	t->list = ibv_get_device_list(&n);
	assert_non_null(t->list);
	assert_int_equal(n, 1);
	t->ctx = ibv_open_device(t->list[0]);
	assert_non_null(t->ctx);
	t->pd = ibv_alloc_pd(t->ctx);
	assert_non_null(t->pd);
	t->cq = ibv_create_cq(t->ctx, 64, NULL, NULL, 0);
	assert_non_null(t->cq);
}

static inline void tv_close(struct tv *t)
{
	if (t->cq)
		assert_int_equal(ibv_destroy_cq(t->cq), 0);
	if (t->pd)
		assert_int_equal(ibv_dealloc_pd(t->pd), 0);
	assert_int_equal(ibv_close_device(t->ctx), 0);
	ibv_free_device_list(t->list);
}

static inline int tv_setup(void **state)
{
	struct tv *t = calloc(1, sizeof(*t));

	tv_open(t);
	*state = t;
	return 0;
}

static inline int tv_teardown(void **state)
{
	tv_close(*state);
	free(*state);
	return 0;
}

static inline int tv_readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* An RC QP on t's CQ (send and receive), optional SRQ. */
static inline struct ibv_qp *tv_qp(struct tv *t, struct ibv_srq *srq, uint32_t wr)
{
	struct ibv_qp_init_attr a = {
		.send_cq = t->cq, .recv_cq = t->cq, .srq = srq,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr, .max_send_sge = 2,
			 .max_recv_sge = 2 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(t->pd, &a);
}

static inline int tv_modify_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* What ibv_query_qp reports as the QP's state. */
static inline enum ibv_qp_state tv_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	return a.qp_state;
}

/* Wait up to ms until qp queries as s; whether it does. */
static inline int tv_wait_state(struct ibv_qp *qp, enum ibv_qp_state s, int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (tv_qp_state(qp) == s)
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= ms)
			return 0;
		poll(NULL, 0, 1);
	}
}

#endif
