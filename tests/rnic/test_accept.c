/* Acceptance tests without a test named after them elsewhere (docs/acceptance.md):
 * T01 RNIC lifecycle, T08 active start race, T17 Read sink rights, T21 Local Fence,
 * T33 Destroy QP and QP ID reuse. Two QPs over loopback TCP, driven in this thread. */
#include "test_qp_util.h"
#include <sys/socket.h>

#include "rn_device.h"

static bool a_error(void *arg)
{
	struct fx *f = arg;
	return q_state(&f->a) == RN_QPS_ERROR;
}

/* ---- T01 ------------------------------------------------------------------------------ */

static struct rn_device *t01_open(enum rn_status want)
{
	struct rn_device_open_attr a;
	struct rn_device *d = NULL;
	rn_device_open_attr_default(&a);
	a.name = "softrnic3";
	a.exclusive = true;
	assert_int_equal(rn_device_open(&a, &d), want);
	return d;
}

/* Allocate one PD, CQ, MR and QP on dev; returns false when any fails. */
static bool t01_alloc(struct rn_device *dev, char *buf)
{
	struct rn_mem *mem = rn_device_mem(dev);
	struct rn_cq *cq;
	struct rn_qp *qp;
	uint32_t pd, got;
	rn_stag_t mr;
	if (rn_mem_pd_alloc(mem, &pd) != RN_OK ||
	    rn_device_cq_create(dev, 8, NULL, NULL, &cq, &got) != RN_OK ||
	    rn_mem_reg_mr(mem, pd, buf, 64, (uintptr_t)buf, RN_ACC_LOCAL_WRITE, &mr) != RN_OK)
		return false;
	struct rn_qp_init_attr qa = { .pd = pd, .send_cq = cq, .recv_cq = cq, .sq_depth = 4,
				      .rq_depth = 4, .max_send_sge = 1, .max_write_sge = 1,
				      .max_recv_sge = 1, .ord = 1, .ird = 1 };
	return rn_device_qp_create(dev, &qa, &qp, NULL) == RN_OK;
}

/* T01: Open twice -> RNIC in use; Block List mode unsupported; query (S-RQ supported, send
 * SGEs >= 4); close with live objects succeeds; reopen and allocate the same counts again. */
static void test_T01_rnic_lifecycle(void **state)
{
	(void)state;
	struct rn_device_open_attr a;
	struct rn_device *d, *d2;
	struct rn_device_attr at;
	char buf[64];
	rn_device_open_attr_default(&a);
	a.name = "softrnic3";
	a.pbl_mode = RN_PBL_BLOCK_LIST;
	assert_int_equal(rn_device_open(&a, &d2), RN_ERR_BLOCK_LIST_UNSUPPORTED);
	d = t01_open(RN_OK);
	assert_null(t01_open(RN_ERR_RNIC_IN_USE));
	assert_int_equal(rn_device_query(d, &at), RN_OK);
	assert_true(at.max_send_sge >= 4);
	assert_true(at.srq_supported ? at.max_srq > 0 && at.max_srq_wr > 0
				     : at.max_srq == 0 && at.max_srq_wr == 0);
	for (int i = 0; i < 4; i++)
		assert_true(t01_alloc(d, buf));
	assert_int_equal(rn_device_close(d), RN_OK);
	d = t01_open(RN_OK);
	for (int i = 0; i < 4; i++)
		assert_true(t01_alloc(d, buf));
	assert_int_equal(rn_device_close(d), RN_OK);
}

/* ---- T08 ------------------------------------------------------------------------------ */

static void t08_once(struct fx *f, unsigned iter)
{
	struct qbuf rb, sb;
	uint32_t len = 1 + iter % 200;
	qside_create(&f->a, &f->d, NULL);
	qside_create(&f->b, &f->d, NULL);
	qbuf_new(&f->d, &rb, 256, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &sb, 256, f->d.pd, RN_ACC_LOCAL_WRITE);
	memset(sb.p, (int)(iter & 0xff), 256);
	assert_int_equal(q_recv(&f->a, 7, &rb, 0, 256), RN_OK);
	q_cm_pair(&f->a.h, &f->b.h, iter & 1, false);
	q_rts(&f->b);
	/* B sends at once, before A's QP even enters RTS */
	struct rn_rq_sge s = { (uintptr_t)sb.p, len, sb.stag };
	assert_int_equal(q_send(&f->b, 8, RN_WR_SEND, RN_SEND_SIGNALED, &s, 1), RN_OK);
	q_run(NULL, &f->b, (int)(iter % 3), NULL, NULL); /* jitter 0-2 ms */
	q_rts(&f->a);
	struct rn_cqe e;
	assert_true(q_poll(&f->a, &f->b, f->a.rcq, &e));
	assert_int_equal(e.wr_id, 7);
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.byte_len, len);
	assert_int_equal(rb.p[len - 1], iter & 0xff);
	assert_int_equal(rb.p[len], 0);
	q_expect(&f->a, &f->b, f->b.scq, 8, RN_WC_SUCCESS);
	qside_destroy(&f->a);
	qside_destroy(&f->b);
	qbuf_free(&f->d, &rb);
	qbuf_free(&f->d, &sb);
}

/* T08: the peer's first Send arrives right behind connection setup, before the active QP
 * is in RTS (our "stream message" is the MPA exchange + RTR of rn_cm); it is never lost.
 * 1000 rounds with 0-2 ms jitter, CRC on and off. */
static void test_T08_active_start_race(void **state)
{
	struct fx *f = *state;
	qside_destroy(&f->a);
	qside_destroy(&f->b);
	for (unsigned i = 0; i < 1000; i++)
		t08_once(f, i);
	qside_create(&f->a, &f->d, NULL);
	qside_create(&f->b, &f->d, NULL);
}

/* ---- T17 ------------------------------------------------------------------------------ */

/* T17: A's Read sink lacks the right the sink needs (Local Write; T17 in
 * docs/acceptance.md): PostSQ succeeds, the Read Request goes out, the error appears when
 * the Read Response arrives: A async tagged access violation, A -> Terminate -> Error; the
 * sink stays untouched and the Read does not complete Success. */
static void test_T17_read_sink_rights(void **state)
{
	struct fx *f = *state;
	struct qbuf src, sink;
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &src, 128, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_READ);
	memset(src.p, 0x5a, 128);
	qbuf_new(&f->d, &sink, 128, f->d.pd, RN_ACC_REMOTE_READ);
	struct rn_rq_sge s = { (uintptr_t)sink.p, 128, sink.stag };
	assert_int_equal(q_rdma(&f->a, 1, RN_WR_RDMA_READ, RN_SEND_SIGNALED, &s, 1, src.stag,
				(uintptr_t)src.p), RN_OK);
	q_run(&f->a, &f->b, Q_WAIT_MS, a_error, f);
	assert_int_equal(q_state(&f->a), RN_QPS_ERROR);
	assert_int_equal(q_event(&f->d, f->a.qp), RN_AE_PROT_ACCESS);
	struct rn_qp_info qa;
	assert_int_equal(rn_qp_query(f->a.qp, &qa), RN_OK);
	assert_true(qa.term_valid && qa.term_local);
	struct rn_cqe e;
	assert_true(q_poll(&f->a, &f->b, f->a.scq, &e));
	assert_int_equal(e.wr_id, 1);
	assert_int_not_equal(e.status, RN_WC_SUCCESS);
	for (size_t i = 0; i < sink.len; i++)
		assert_int_equal(sink.p[i], 0);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &sink);
}

/* ---- T21 ------------------------------------------------------------------------------ */

static void t21_inv(struct qside *s, rn_stag_t st, uint64_t id)
{
	struct rn_send_wr w;
	memset(&w, 0, sizeof(w));
	w.wr_id = id;
	w.opcode = RN_WR_LOCAL_INV;
	w.flags = RN_SEND_SIGNALED | RN_SEND_LOCAL_FENCE;
	w.wr.inv.stag = st;
	assert_int_equal(rn_qp_post_send(s->qp, &w, NULL, NULL), RN_OK);
}

/* T21: a large Write from MR M, then Invalidate Local STag M with Local Fence: the Write
 * completes Success with the right remote data; a later Write from M fails locally. */
static void test_T21_local_fence(void **state)
{
	struct fx *f = *state;
	struct qbuf m, dst;
	const size_t n = 1u << 20;
	q_connect_eth(&f->a, &f->b, false);
	qbuf_new(&f->d, &m, n, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &dst, n, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE);
	for (size_t i = 0; i < n; i++)
		m.p[i] = (uint8_t)(i * 7 + 3);
	struct rn_rq_sge s = { (uintptr_t)m.p, (uint32_t)n, m.stag };
	assert_int_equal(q_rdma(&f->a, 1, RN_WR_RDMA_WRITE, RN_SEND_SIGNALED, &s, 1, dst.stag,
				(uintptr_t)dst.p), RN_OK);
	t21_inv(&f->a, m.stag, 2);
	q_expect(&f->a, &f->b, f->a.scq, 1, RN_WC_SUCCESS);
	q_expect(&f->a, &f->b, f->a.scq, 2, RN_WC_SUCCESS);
	q_run(&f->a, &f->b, 100, NULL, NULL);
	assert_memory_equal(dst.p, m.p, n);
	assert_int_equal(q_rdma(&f->a, 3, RN_WR_RDMA_WRITE, RN_SEND_SIGNALED, &s, 1, dst.stag,
				(uintptr_t)dst.p), RN_OK);
	struct rn_cqe e;
	assert_true(q_poll(&f->a, &f->b, f->a.scq, &e));
	assert_int_equal(e.wr_id, 3);
	assert_int_equal(e.status, RN_WC_INVALID_STAG);
	assert_true(qbuf_guards_ok(&dst));
	qbuf_free(&f->d, &m);
	qbuf_free(&f->d, &dst);
}

/* ---- T33 ------------------------------------------------------------------------------ */

static void with_id(struct rn_qp_init_attr *a)
{
	a->qp_id = 4242;
}

static rn_stag_t t33_bind(struct fx *f, struct qbuf *mr)
{
	return q_bind_mw2(&f->a, &f->b, mr, (uintptr_t)mr->p, mr->len, 0x21, NULL);
}

/* T33: Destroy QP with a bound window -> MW still bound; after invalidating it Destroy
 * succeeds (in RTS, Receives posted, CQEs not polled); a new QP with the same QP ID on the
 * same CQs never sees a completion of the old one. */
static void test_T33_destroy_qp_id_reuse(void **state)
{
	struct fx *f = *state;
	struct qbuf mr;
	qside_destroy(&f->b);
	qside_create(&f->b, &f->d, with_id);
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &mr, 256, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_MW_BIND);
	rn_stag_t mw = t33_bind(f, &mr);
	assert_int_equal(rn_qp_destroy(f->b.qp), RN_ERR_MW_BOUND_TO_QP);
	for (uint64_t i = 0; i < 4; i++)
		assert_int_equal(q_recv(&f->b, 100 + i, &mr, 0, 16), RN_OK);
	t21_inv(&f->b, mw, 51);
	q_run(&f->a, &f->b, 100, NULL, NULL);
	assert_int_equal(rn_qp_destroy(f->b.qp), RN_OK);
	f->b.qp = NULL;
	struct rn_qp_init_attr a = q_attr(&f->d, f->b.scq, f->b.rcq);
	a.qp_id = 4242;
	assert_int_equal(rn_qp_create(&a, &f->b.qp, NULL), RN_OK);
	struct rn_cqe e;
	uint32_t got;
	assert_int_equal(rn_cq_poll(f->b.scq, &e, 1, &got), RN_ERR_CQ_EMPTY);
	assert_int_equal(rn_cq_poll(f->b.rcq, &e, 1, &got), RN_ERR_CQ_EMPTY);
	struct rn_qp_mod m = { .next = RN_QPS_ERROR };
	assert_int_equal(rn_qp_modify_qp(f->b.qp, &m, NULL), RN_OK);
	assert_int_equal(rn_cq_poll(f->b.rcq, &e, 1, &got), RN_ERR_CQ_EMPTY);
	assert_int_equal(rn_mem_dereg(f->d.mem, mw), RN_OK);
	qbuf_free(&f->d, &mr);
}

/* ---- graceful close, then Destroy QP (found by softrnic-conform) ------------------------ */

static bool b_got_recv(void *arg)
{
	return rn_cq_count(((struct fx *)arg)->b.rcq) > 0;
}

/* T34: A's Send completed Success, A closes gracefully (RTS -> Closing, FIN queued
 * behind the data) and destroys the QP at once, before B read anything: the octets already
 * handed to the transport still reach B (Destroy must not reset a closing stream). */
static void test_T34_destroy_after_close_keeps_data(void **state)
{
	struct fx *f = *state;
	struct qbuf sb, rb;
	const uint32_t n = 256 * 1024;
	int small = 8192, big = 1 << 20;
	q_cm_pair(&f->a.h, &f->b.h, false, false);
	/* keep most of the message in A's socket: B's window is small, A's buffer large */
	setsockopt(rn_conn_fd(f->b.h.conn), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	setsockopt(rn_conn_fd(f->a.h.conn), SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	q_rts(&f->a);
	q_rts(&f->b);
	qbuf_new(&f->d, &sb, n, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &rb, n, f->d.pd, RN_ACC_LOCAL_WRITE);
	memset(sb.p, 0x3d, n);
	assert_int_equal(q_recv(&f->b, 9, &rb, 0, n), RN_OK);
	struct rn_rq_sge s = { (uintptr_t)sb.p, n, sb.stag };
	assert_int_equal(q_send(&f->a, 1, RN_WR_SEND, RN_SEND_SIGNALED, &s, 1), RN_OK);
	struct rn_cqe e;
	uint32_t got;
	long long end = t_now_ms() + Q_WAIT_MS;
	while (rn_cq_poll(f->a.scq, &e, 1, &got) != RN_OK && t_now_ms() < end)
		q_run(&f->a, NULL, 2, NULL, NULL);   /* B does not read yet */
	assert_int_equal(e.status, RN_WC_SUCCESS);
	struct rn_qp_mod m = { .next = RN_QPS_CLOSING };
	assert_int_equal(rn_qp_modify_qp(f->a.qp, &m, NULL), RN_OK);
	q_run(&f->a, NULL, 5, NULL, NULL);
	assert_int_equal(rn_qp_destroy(f->a.qp), RN_OK);
	f->a.qp = NULL;
	q_run(NULL, &f->b, Q_WAIT_MS, b_got_recv, f);
	assert_true(q_poll(NULL, &f->b, f->b.rcq, &e));
	assert_int_equal(e.wr_id, 9);
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.byte_len, n);
	assert_memory_equal(rb.p, sb.p, n);
	qbuf_free(&f->d, &sb);
	qbuf_free(&f->d, &rb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_T01_rnic_lifecycle),
		cmocka_unit_test_setup_teardown(test_T08_active_start_race, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_T17_read_sink_rights, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_T21_local_fence, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_T33_destroy_qp_id_reuse, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_T34_destroy_after_close_keeps_data, fx_setup,
						fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
