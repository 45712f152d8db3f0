/* The QP over a transport that takes payload by reference (rn_transport.h sendv_ref): a
 * wrapper around a loopback stream that sends everything at once but reports each batch
 * that had a referenced entry as held until the test releases it, so the QP's completion
 * rules show without timing: a Write completes only once its batch is released, in order;
 * a Read Response frees its IRD slot when handed over, not when released (the requester
 * may send its next Read Request first). */
#include "test_qp_util.h"

struct ref_conn {
	struct rn_conn base; /* first */
	struct rn_conn *inner;
	uint64_t last_held;  /* the last batch taken by reference */
	uint64_t released;   /* what ref_released reports */
	unsigned held_calls, copy_calls;
};

static struct ref_conn *ref_of(const struct rn_conn *c)
{
	return (struct ref_conn *)c;
}

static ssize_t ref_sendv_ref(struct rn_conn *c, const struct iovec *iov, unsigned n,
			     const bool *ref, uint64_t batch, bool *held)
{
	struct ref_conn *r = ref_of(c);
	ssize_t got = rn_conn_sendv(r->inner, iov, n);
	size_t off = 0;

	*held = false;
	for (unsigned i = 0; i < n && got > 0 && off < (size_t)got; i++) {
		*held |= ref[i];
		off += iov[i].iov_len;
	}
	if (*held) {
		assert_true(batch > r->last_held); /* increasing */
		r->last_held = batch;
		r->held_calls++;
	} else if (got > 0) {
		r->copy_calls++;
	}
	return got;
}

static uint64_t ref_released(struct rn_conn *c)
{
	return ref_of(c)->released;
}

static ssize_t ref_sendv(struct rn_conn *c, const struct iovec *iov, unsigned n)
{
	ref_of(c)->copy_calls++;
	return rn_conn_sendv(ref_of(c)->inner, iov, n);
}

static ssize_t ref_recv(struct rn_conn *c, void *buf, size_t len)
{
	return rn_conn_recv(ref_of(c)->inner, buf, len);
}

static int ref_connect_status(struct rn_conn *c)
{
	return rn_conn_connect_status(ref_of(c)->inner);
}

static int ref_shutdown_write(struct rn_conn *c)
{
	return rn_conn_shutdown_write(ref_of(c)->inner);
}

static void ref_close(struct rn_conn *c)
{
	rn_conn_close(ref_of(c)->inner);
	free(c);
}

static void ref_abort(struct rn_conn *c)
{
	rn_conn_abort(ref_of(c)->inner);
	free(c);
}

static int ref_fd(const struct rn_conn *c)
{
	return rn_conn_fd(ref_of(c)->inner);
}

static const struct rn_transport_ops ref_ops = {
	.name = "test-ref",
	.connect_status = ref_connect_status,
	.sendv = ref_sendv,
	.recv = ref_recv,
	.shutdown_write = ref_shutdown_write,
	.close = ref_close,
	.abort = ref_abort,
	.fd = ref_fd,
	.sendv_ref = ref_sendv_ref,
	.ref_released = ref_released,
};

/* a's stream takes references; b is a plain QP. */
static struct ref_conn *connect_ref(struct fx *f)
{
	struct ref_conn *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	q_cm_pair(&f->a.h, &f->b.h, true, false);
	r->base.ops = &ref_ops;
	r->inner = f->a.h.conn;
	f->a.h.conn = &r->base;
	q_rts(&f->a);
	q_rts(&f->b);
	return r;
}

/* Nothing completes on cq while both sides run for ms. */
static bool none_within(struct fx *f, struct rn_cq *cq, int ms)
{
	q_run(&f->a, &f->b, ms, NULL, NULL);
	return q_cq_empty(cq);
}

static bool filled(void *arg)
{
	const struct qbuf *b = arg;

	return b->p[b->len - 1] != 0;
}

/* Writes of 8 KiB: the data reaches b at once, the completions wait for the release, in
 * order; a small Send (copied) behind them completes with them. */
static void test_write_waits_for_release(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst[2], rb;
	struct ref_conn *r = connect_ref(f);

	qbuf_new(&f->d, &src, 8192, f->d.pd, RN_ACC_LOCAL_WRITE);
	memset(src.p, 0x5a, src.len);
	for (int i = 0; i < 2; i++)
		qbuf_new(&f->d, &dst[i], 8192, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &rb, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	assert_int_equal(q_recv(&f->b, 9, &rb, 0, 64), RN_OK);
	for (int i = 0; i < 2; i++) {
		struct rn_rq_sge sge = { (uintptr_t)src.p, 8192, src.stag };

		assert_int_equal(q_rdma(&f->a, 1 + i, RN_WR_RDMA_WRITE, RN_SEND_SIGNALED, &sge, 1,
					dst[i].stag, (uintptr_t)dst[i].p), RN_OK);
		q_run(&f->a, &f->b, Q_WAIT_MS, filled, &dst[i]);
		assert_true(filled(&dst[i]));
	}
	struct rn_rq_sge s8 = { (uintptr_t)src.p, 8, src.stag };
	assert_int_equal(q_send(&f->a, 3, RN_WR_SEND, RN_SEND_SIGNALED, &s8, 1), RN_OK);
	q_expect(&f->b, &f->a, f->b.rcq, 9, RN_WC_SUCCESS); /* b got the Send too */
	assert_int_equal(r->held_calls, 2);
	assert_true(none_within(f, f->a.scq, 50));
	r->released = r->last_held - 1; /* the first Write's batch */
	q_expect(&f->a, &f->b, f->a.scq, 1, RN_WC_SUCCESS);
	assert_true(none_within(f, f->a.scq, 50));
	r->released = r->last_held;
	q_expect(&f->a, &f->b, f->a.scq, 2, RN_WC_SUCCESS);
	q_expect(&f->a, &f->b, f->a.scq, 3, RN_WC_SUCCESS);
	assert_true(q_cq_empty(f->a.scq));
	qbuf_free(&f->d, &src);
	for (int i = 0; i < 2; i++)
		qbuf_free(&f->d, &dst[i]);
	qbuf_free(&f->d, &rb);
}

/* b reads from a with its whole ORD outstanding, twice over, while a releases nothing: every
 * Read completes and no Terminate comes, since a's IRD slots free when the responses are
 * handed over. */
static void test_read_responses_free_ird(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst;
	struct ref_conn *r = connect_ref(f);

	qbuf_new(&f->d, &src, 8 * 8192, f->d.pd, ACC_ALL);
	for (size_t i = 0; i < src.len; i++)
		src.p[i] = (uint8_t)(i * 7);
	qbuf_new(&f->d, &dst, 8 * 8192, f->d.pd, RN_ACC_LOCAL_WRITE);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 4; i++) {
			size_t off = (size_t)(round * 4 + i) * 8192;
			struct rn_rq_sge sge = { (uintptr_t)(dst.p + off), 8192, dst.stag };

			assert_int_equal(q_rdma(&f->b, 10 + round * 4 + i, RN_WR_RDMA_READ,
						RN_SEND_SIGNALED, &sge, 1, src.stag,
						(uintptr_t)(src.p + off)), RN_OK);
		}
		for (int i = 0; i < 4; i++)
			q_expect(&f->b, &f->a, f->b.scq, 10 + round * 4 + i, RN_WC_SUCCESS);
	}
	assert_memory_equal(dst.p, src.p, src.len);
	assert_int_equal(r->released, 0);
	assert_true(r->held_calls >= 2);
	assert_int_equal(q_state(&f->a), RN_QPS_RTS);
	assert_int_equal(q_state(&f->b), RN_QPS_RTS);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_waits_for_release, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_read_responses_free_ird, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
