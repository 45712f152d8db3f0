/* rn_qp: RFC 7306 Immediate Data (Send / Write with immediate, docs/rdmap.md) and tolerant QPs
 * (VIA Unreliable service: a bad message is dropped, the stream goes on), two QPs over
 * loopback TCP driven from this thread. */
#include <arpa/inet.h>

#include "test_qp_util.h"

static void fill(struct qbuf *b, uint8_t seed)
{
	for (size_t i = 0; i < b->len; i++)
		b->p[i] = (uint8_t)(i * 13 + seed);
}

/* Send with immediate: the Receive carries the value, the data and the IMM flag; a plain Send
 * right after carries no value (the prefix is used up). */
static void test_send_imm(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst;
	struct rn_cqe e;
	uint32_t imm = htonl(0x12345678);

	qbuf_new(&f->d, &src, 4096, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &dst, 8192, f->d.pd, ACC_ALL);
	fill(&src, 1);
	q_connect(&f->a, &f->b, true);
	assert_int_equal(q_recv(&f->b, 7, &dst, 0, 4096), RN_OK);
	assert_int_equal(q_recv(&f->b, 8, &dst, 4096, 4096), RN_OK);
	struct rn_rq_sge s = { (uintptr_t)src.p, 3000, src.stag };
	assert_int_equal(q_post(&f->a, 1, RN_WR_SEND_IMM, RN_SEND_SIGNALED, &s, 1, imm, 0, 0), RN_OK);
	assert_int_equal(q_send(&f->a, 2, RN_WR_SEND, RN_SEND_SIGNALED, &s, 1), RN_OK);
	assert_true(q_poll(&f->a, &f->b, f->a.scq, &e));
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.opcode, RN_WC_OP_SEND);
	assert_int_equal(e.wr_id, 1);
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.wr_id, 7);
	assert_int_equal(e.opcode, RN_WC_OP_RECV);
	assert_int_equal(e.byte_len, 3000);
	assert_true(e.flags & RN_CQE_F_IMM);
	assert_false(e.flags & RN_CQE_F_SOLICITED);
	assert_int_equal(e.imm_data, imm);
	assert_memory_equal(dst.p, src.p, 3000);
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.wr_id, 8);
	assert_int_equal(e.byte_len, 3000);
	assert_false(e.flags & RN_CQE_F_IMM);
	assert_int_equal(q_state(&f->b), RN_QPS_RTS);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
}

/* Zero-length inline Send with immediate and SE: byte_len 0, the value, solicited. */
static void test_send_imm_zero_se(void **state)
{
	struct fx *f = *state;
	struct qbuf dst;
	struct rn_cqe e;

	qbuf_new(&f->d, &dst, 64, f->d.pd, ACC_ALL);
	q_connect(&f->a, &f->b, false);
	assert_int_equal(q_recv(&f->b, 9, &dst, 0, 64), RN_OK);
	assert_int_equal(q_post(&f->a, 1, RN_WR_SEND_IMM, RN_SEND_SOLICITED | RN_SEND_INLINE, NULL, 0,
			        htonl(0xcafe), 0, 0), RN_OK);
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.wr_id, 9);
	assert_int_equal(e.opcode, RN_WC_OP_RECV);
	assert_int_equal(e.byte_len, 0);
	assert_int_equal(e.flags & (RN_CQE_F_IMM | RN_CQE_F_SOLICITED),
			 RN_CQE_F_IMM | RN_CQE_F_SOLICITED);
	assert_int_equal(e.imm_data, htonl(0xcafe));
	assert_true(q_cq_empty(f->a.scq));   /* unsignaled */
	qbuf_free(&f->d, &dst);
}

/* Write with immediate over several segments: when the Receive completes, every octet of the
 * Write is in place; the Receive's buffer is untouched, byte_len 0. */
static void test_write_imm(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst, rb;
	struct rn_cqe e;

	qbuf_new(&f->d, &src, 20000, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &dst, 20000, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &rb, 64, f->d.pd, ACC_ALL);
	fill(&src, 5);
	q_connect_eth(&f->a, &f->b, true);
	assert_int_equal(q_recv(&f->b, 3, &rb, 0, 64), RN_OK);
	struct rn_rq_sge s = { (uintptr_t)src.p, 20000, src.stag };
	assert_int_equal(q_post(&f->a, 4, RN_WR_RDMA_WRITE_IMM, RN_SEND_SIGNALED, &s, 1,
			        htonl(0xa1b2c3d4), dst.stag, (uintptr_t)dst.p), RN_OK);
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_memory_equal(dst.p, src.p, 20000);   /* placed before the completion */
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.wr_id, 3);
	assert_int_equal(e.opcode, RN_WC_OP_RECV_RDMA_IMM);
	assert_int_equal(e.byte_len, 0);
	assert_int_equal(e.flags, RN_CQE_F_IMM);
	assert_int_equal(e.imm_data, htonl(0xa1b2c3d4));
	for (size_t i = 0; i < rb.len; i++)
		assert_int_equal(rb.p[i], 0);
	assert_true(q_poll(&f->a, &f->b, f->a.scq, &e));
	assert_int_equal(e.wr_id, 4);
	assert_int_equal(e.opcode, RN_WC_OP_RDMA_WRITE);
	assert_int_equal(e.status, RN_WC_SUCCESS);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
	qbuf_free(&f->d, &rb);
}

/* Mixed order: Send-imm, Write-imm (SE), Send: three Receives in order, each of its kind
 * (the MSNs of the Immediate Data messages are accounted on both sides). */
static void test_imm_mix(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst, rb;
	struct rn_cqe e;

	qbuf_new(&f->d, &src, 256, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &dst, 256, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &rb, 3 * 256, f->d.pd, ACC_ALL);
	fill(&src, 9);
	q_connect(&f->a, &f->b, false);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(q_recv(&f->b, 20 + i, &rb, i * 256, 256), RN_OK);
	struct rn_rq_sge s = { (uintptr_t)src.p, 60, src.stag };
	assert_int_equal(q_post(&f->a, 1, RN_WR_SEND_IMM, RN_SEND_INLINE, &s, 1, 11, 0, 0), RN_OK);
	assert_int_equal(q_post(&f->a, 2, RN_WR_RDMA_WRITE_IMM, RN_SEND_SOLICITED, &s, 1, 22,
			        dst.stag, (uintptr_t)dst.p), RN_OK);
	assert_int_equal(q_send(&f->a, 3, RN_WR_SEND, 0, &s, 1), RN_OK);
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.wr_id, 20);
	assert_int_equal(e.opcode, RN_WC_OP_RECV);
	assert_int_equal(e.flags, RN_CQE_F_IMM);
	assert_int_equal(e.imm_data, 11);
	assert_int_equal(e.byte_len, 60);
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.wr_id, 21);
	assert_int_equal(e.opcode, RN_WC_OP_RECV_RDMA_IMM);
	assert_int_equal(e.flags, RN_CQE_F_IMM | RN_CQE_F_SOLICITED);
	assert_int_equal(e.imm_data, 22);
	assert_memory_equal(dst.p, src.p, 60);
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.wr_id, 22);
	assert_int_equal(e.opcode, RN_WC_OP_RECV);
	assert_int_equal(e.flags, 0);
	assert_int_equal(e.byte_len, 60);
	assert_memory_equal(rb.p + 512, src.p, 60);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
	qbuf_free(&f->d, &rb);
}

static bool b_left_rts(void *arg)
{
	struct fx *f = arg;
	return q_state(&f->b) != RN_QPS_RTS && q_state(&f->a) != RN_QPS_RTS;
}

/* Write with immediate and no Receive posted: the Terminate a Send without a Receive gets
 * (DDP 0x1202), sent by b, received by a; Query QP reports it on both. */
static void test_imm_no_recv_terminate(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst;
	struct rn_qp_info ia, ib;

	qbuf_new(&f->d, &src, 64, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &dst, 64, f->d.pd, ACC_ALL);
	q_connect(&f->a, &f->b, false);
	struct rn_rq_sge s = { (uintptr_t)src.p, 64, src.stag };
	assert_int_equal(q_post(&f->a, 1, RN_WR_RDMA_WRITE_IMM, 0, &s, 1, 5, dst.stag,
			        (uintptr_t)dst.p), RN_OK);
	q_run(&f->a, &f->b, Q_WAIT_MS, b_left_rts, f);
	assert_int_equal(rn_qp_query(f->b.qp, &ib), RN_OK);
	assert_int_equal(rn_qp_query(f->a.qp, &ia), RN_OK);
	assert_true(ib.term_valid);
	assert_true(ib.term_local);
	assert_int_equal(iwarp_err_u16(ib.term.err), 0x1202);
	assert_true(ia.term_valid);
	assert_false(ia.term_local);
	assert_int_equal(iwarp_err_u16(ia.term.err), 0x1202);
	assert_int_equal(q_event(&f->d, f->b.qp), RN_AE_RQ_MSN_RANGE);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
}

/* ---- tolerant QPs -------------------------------------------------------------------------- */

/* The next async event of s's QP, driving both sides until one comes (bounded). */
static enum rn_event_id wait_event(struct fx *f, struct qside *s)
{
	long long end = t_now_ms() + Q_WAIT_MS;
	enum rn_event_id ev;

	while ((ev = q_event(&f->d, s->qp)) == RN_AE_NONE && t_now_ms() < end)
		q_run(&f->a, &f->b, 5, NULL, NULL);
	return ev;
}

static void tolerant(struct rn_qp_init_attr *a)
{
	a->tolerant = true;
}

static int fx_setup_tol(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	qdev_init(&f->d);
	qside_create(&f->a, &f->d, NULL);
	qside_create(&f->b, &f->d, tolerant);
	*state = f;
	return 0;
}

/* A Send (3 segments) and a Write with immediate arrive with no Receive: both dropped, one
 * async event each, no Terminate; the next Send lands. */
static void test_tol_no_recv(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst, rb;
	struct rn_qp_info info;
	struct rn_cqe e;

	qbuf_new(&f->d, &src, 4000, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &dst, 64, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &rb, 4000, f->d.pd, ACC_ALL);
	fill(&src, 3);
	q_connect_eth(&f->a, &f->b, true);
	assert_int_equal(rn_qp_query(f->b.qp, &info), RN_OK);
	assert_true(info.tolerant);
	struct rn_rq_sge s = { (uintptr_t)src.p, 4000, src.stag };
	struct rn_rq_sge s8 = { (uintptr_t)src.p, 8, src.stag };
	assert_int_equal(q_send(&f->a, 1, RN_WR_SEND, RN_SEND_SIGNALED, &s, 1), RN_OK);
	assert_int_equal(q_post(&f->a, 2, RN_WR_RDMA_WRITE_IMM, RN_SEND_SIGNALED, &s8, 1, 7, dst.stag,
			        (uintptr_t)dst.p), RN_OK);
	q_expect(&f->a, &f->b, f->a.scq, 1, RN_WC_SUCCESS);
	q_expect(&f->a, &f->b, f->a.scq, 2, RN_WC_SUCCESS);
	assert_int_equal(wait_event(f, &f->b), RN_AE_RQ_MSN_RANGE);
	assert_int_equal(wait_event(f, &f->b), RN_AE_RQ_MSN_RANGE);
	q_run(&f->a, &f->b, 20, NULL, NULL);
	assert_int_equal(q_event(&f->d, f->b.qp), RN_AE_NONE);
	assert_int_equal(q_event(&f->d, f->a.qp), RN_AE_NONE);
	assert_int_equal(q_state(&f->b), RN_QPS_RTS);
	assert_int_equal(q_state(&f->a), RN_QPS_RTS);
	assert_memory_equal(dst.p, src.p, 8);   /* the Write itself was fine */
	assert_int_equal(q_recv(&f->b, 9, &rb, 0, 4000), RN_OK);
	assert_int_equal(q_send(&f->a, 3, RN_WR_SEND, 0, &s, 1), RN_OK);
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.wr_id, 9);
	assert_int_equal(e.byte_len, 4000);
	assert_false(e.flags & RN_CQE_F_IMM);
	assert_memory_equal(rb.p, src.p, 4000);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
	qbuf_free(&f->d, &rb);
}

/* Two Sends longer than their Receives (3 segments each): each Receive completes with Base
 * and bounds (LOC_LEN_ERR in verbs) and nothing placed, every time (no one-error rule); the
 * next Send, with a prefix Immediate Data, lands with its value. */
static void test_tol_too_long(void **state)
{
	struct fx *f = *state;
	struct qbuf src, small, big;
	struct rn_cqe e;

	qbuf_new(&f->d, &src, 4000, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &small, 200, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &big, 4000, f->d.pd, ACC_ALL);
	fill(&src, 4);
	q_connect_eth(&f->a, &f->b, false);
	assert_int_equal(q_recv(&f->b, 1, &small, 0, 100), RN_OK);
	assert_int_equal(q_recv(&f->b, 2, &small, 100, 100), RN_OK);
	assert_int_equal(q_recv(&f->b, 3, &big, 0, 4000), RN_OK);
	struct rn_rq_sge s = { (uintptr_t)src.p, 4000, src.stag };
	assert_int_equal(q_send(&f->a, 1, RN_WR_SEND, 0, &s, 1), RN_OK);
	assert_int_equal(q_post(&f->a, 2, RN_WR_SEND_IMM, 0, &s, 1, 77, 0, 0), RN_OK);
	assert_int_equal(q_post(&f->a, 3, RN_WR_SEND_IMM, 0, &s, 1, 78, 0, 0), RN_OK);
	q_expect(&f->a, &f->b, f->b.rcq, 1, RN_WC_BASE_BOUNDS);
	q_expect(&f->a, &f->b, f->b.rcq, 2, RN_WC_BASE_BOUNDS);
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.wr_id, 3);
	assert_int_equal(e.byte_len, 4000);
	assert_int_equal(e.flags, RN_CQE_F_IMM);
	assert_int_equal(e.imm_data, 78);
	assert_memory_equal(big.p, src.p, 4000);
	for (size_t i = 0; i < small.len; i++)
		assert_int_equal(small.p[i], 0);
	assert_int_equal(q_event(&f->d, f->b.qp), RN_AE_NONE);   /* reported in the WCs */
	assert_int_equal(q_state(&f->b), RN_QPS_RTS);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &small);
	qbuf_free(&f->d, &big);
}

/* Writes to an invalid STag and past the end of a region (3 segments each): dropped, an
 * access event each, the guard bytes untouched, the QPs stay in RTS; a good Write and a Send
 * follow. */
static void test_tol_bad_write(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst, rb;
	struct rn_cqe e;

	qbuf_new(&f->d, &src, 4000, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &dst, 2000, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &rb, 64, f->d.pd, ACC_ALL);
	fill(&src, 6);
	q_connect_eth(&f->a, &f->b, true);
	struct rn_rq_sge s = { (uintptr_t)src.p, 4000, src.stag };
	assert_int_equal(q_rdma(&f->a, 1, RN_WR_RDMA_WRITE, 0, &s, 1, dst.stag ^ 0x5500,
				(uintptr_t)dst.p), RN_OK);
	assert_int_equal(q_rdma(&f->a, 2, RN_WR_RDMA_WRITE, 0, &s, 1, dst.stag, (uintptr_t)dst.p),
			 RN_OK);
	assert_int_equal(wait_event(f, &f->b), RN_AE_PROT_INVALID_STAG);
	assert_int_equal(wait_event(f, &f->b), RN_AE_PROT_BASE_BOUNDS);
	assert_int_equal(q_state(&f->b), RN_QPS_RTS);
	assert_int_equal(q_state(&f->a), RN_QPS_RTS);
	assert_true(qbuf_guards_ok(&dst));
	/* the second Write's first segment fitted and was placed, the rest was dropped */
	assert_memory_equal(dst.p, src.p, 1000);
	struct rn_rq_sge s2 = { (uintptr_t)src.p + 2000, 2000, src.stag };
	assert_int_equal(q_recv(&f->b, 5, &rb, 0, 64), RN_OK);
	assert_int_equal(q_post(&f->a, 3, RN_WR_RDMA_WRITE_IMM, 0, &s2, 1, 99, dst.stag,
			        (uintptr_t)dst.p), RN_OK);
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.wr_id, 5);
	assert_int_equal(e.opcode, RN_WC_OP_RECV_RDMA_IMM);
	assert_int_equal(e.imm_data, 99);
	assert_memory_equal(dst.p, src.p + 2000, 2000);
	assert_true(qbuf_guards_ok(&dst));
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
	qbuf_free(&f->d, &rb);
}

/* A Read Request for an invalid STag at a tolerant QP: dropped (IRRQ access event), no Read
 * Response, no Terminate; the requester's Read stays outstanding (VIA's Unreliable service
 * has no RDMA Read) and later Sends still land. */
static void test_tol_bad_read_req(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst, rb;
	struct rn_cqe e;

	qbuf_new(&f->d, &src, 64, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &dst, 64, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &rb, 64, f->d.pd, ACC_ALL);
	q_connect(&f->a, &f->b, false);
	struct rn_rq_sge k = { (uintptr_t)dst.p, 16, dst.stag };
	assert_int_equal(q_rdma(&f->a, 1, RN_WR_RDMA_READ, RN_SEND_SIGNALED, &k, 1, 0x4242,
				(uintptr_t)src.p), RN_OK);
	assert_int_equal(wait_event(f, &f->b), RN_AE_IRRQ_INVALID_STAG);
	assert_int_equal(q_state(&f->b), RN_QPS_RTS);
	assert_int_equal(q_state(&f->a), RN_QPS_RTS);
	assert_true(q_cq_empty(f->a.scq));
	assert_int_equal(q_recv(&f->b, 4, &rb, 0, 64), RN_OK);
	struct rn_rq_sge s = { (uintptr_t)src.p, 10, src.stag };
	assert_int_equal(q_send(&f->a, 2, RN_WR_SEND, 0, &s, 1), RN_OK);
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.wr_id, 4);
	assert_int_equal(e.byte_len, 10);
	for (size_t i = 0; i < dst.len; i++)
		assert_int_equal(dst.p[i], 0);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
	qbuf_free(&f->d, &rb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_send_imm, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_send_imm_zero_se, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_write_imm, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_imm_mix, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_imm_no_recv_terminate, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_tol_no_recv, fx_setup_tol, fx_teardown),
		cmocka_unit_test_setup_teardown(test_tol_too_long, fx_setup_tol, fx_teardown),
		cmocka_unit_test_setup_teardown(test_tol_bad_write, fx_setup_tol, fx_teardown),
		cmocka_unit_test_setup_teardown(test_tol_bad_read_req, fx_setup_tol, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
