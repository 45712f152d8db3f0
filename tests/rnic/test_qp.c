/* QP data path between two QPs over loopback TCP (rn_cm setup, single-threaded driving).
 * Test names carry acceptance test IDs (docs/acceptance.md) where one applies. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "rn_qp_int.h"
#include "test_qp_util.h"

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

/* Send / Recv with SGE lists on both sides, several segments. */
static void test_send_recv_sgl(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst;
	q_connect_eth(&f->a, &f->b, false);
	qbuf_new(&f->d, &src, 6000, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &dst, 8000, f->d.pd, RN_ACC_LOCAL_WRITE);
	fill(src.p, src.len, 1);
	struct rn_rq_sge rs[2] = { { (uintptr_t)dst.p, 3000, dst.stag },
				   { (uintptr_t)dst.p + 4000, 4000, dst.stag } };
	struct rn_recv_wr rw = { 77, NULL, rs, 2 };
	assert_int_equal(rn_qp_post_recv(f->b.qp, &rw, NULL, NULL), RN_OK);
	struct rn_rq_sge ss[3] = { { (uintptr_t)src.p, 1000, src.stag },
				   { (uintptr_t)src.p + 1000, 0, 0xdead },  /* zero-length: unchecked */
				   { (uintptr_t)src.p + 2000, 4000, src.stag } };
	assert_int_equal(q_send(&f->a, 1, RN_WR_SEND, RN_SEND_SIGNALED, ss, 3), RN_OK);
	struct rn_cqe e;
	assert_true(q_poll(&f->a, &f->b, f->a.scq, &e));
	assert_int_equal(e.wr_id, 1);
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.opcode, RN_WC_OP_SEND);
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.wr_id, 77);
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.opcode, RN_WC_OP_RECV);
	assert_int_equal(e.byte_len, 5000);
	assert_int_equal(e.flags & RN_CQE_F_SOLICITED, 0);
	assert_memory_equal(dst.p, src.p, 1000);
	assert_memory_equal(dst.p + 1000, src.p + 2000, 2000);
	assert_memory_equal(dst.p + 4000, src.p + 4000, 2000);
	for (size_t i = 3000; i < 4000; i++)
		assert_int_equal(dst.p[i], 0);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
}

/* Inline data and Solicited Event; T40 zero-length Send with a garbage SGE STag. */
static void test_inline_se_zero_len_T40(void **state)
{
	struct fx *f = *state;
	struct qbuf dst;
	char msg[40] = "inline data, no STag needed";
	q_connect(&f->a, &f->b, true);
	qbuf_new(&f->d, &dst, 256, f->d.pd, RN_ACC_LOCAL_WRITE);
	assert_int_equal(q_recv(&f->b, 1, &dst, 0, 128), RN_OK);
	assert_int_equal(q_recv(&f->b, 2, &dst, 128, 128), RN_OK);
	struct rn_rq_sge s = { (uintptr_t)msg, sizeof(msg), 0x12345678 };
	assert_int_equal(q_send(&f->a, 10, RN_WR_SEND,
				RN_SEND_SIGNALED | RN_SEND_INLINE | RN_SEND_SOLICITED, &s, 1), RN_OK);
	memset(msg, 'x', sizeof(msg));   /* inline: copied at post time */
	struct rn_rq_sge z = { 0x1000, 0, 0xbadbad00 };
	assert_int_equal(q_send(&f->a, 11, RN_WR_SEND, RN_SEND_SIGNALED, &z, 1), RN_OK);
	q_expect(&f->a, &f->b, f->a.scq, 10, RN_WC_SUCCESS);
	q_expect(&f->a, &f->b, f->a.scq, 11, RN_WC_SUCCESS);
	struct rn_cqe e;
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.wr_id, 1);
	assert_int_equal(e.byte_len, 40);
	assert_true(e.flags & RN_CQE_F_SOLICITED);
	assert_string_equal((char *)dst.p, "inline data, no STag needed");
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.wr_id, 2);
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.byte_len, 0);
	qbuf_free(&f->d, &dst);
}

/* T26: Send with Invalidate of an MR with the remote-invalidate right. */
static void test_send_inv_T26(void **state)
{
	struct fx *f = *state;
	struct qbuf dst, m;
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &dst, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &m, 64, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE | RN_ACC_REMOTE_INV);
	assert_int_equal(q_recv(&f->b, 5, &dst, 0, 64), RN_OK);
	struct rn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 6;
	wr.opcode = RN_WR_SEND_INV;
	wr.flags = RN_SEND_SIGNALED;
	wr.wr.send.inv_stag = m.stag;
	assert_int_equal(rn_qp_post_send(f->a.qp, &wr, NULL, NULL), RN_OK);
	q_expect(&f->a, &f->b, f->a.scq, 6, RN_WC_SUCCESS);
	struct rn_cqe e;
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_true(e.flags & RN_CQE_F_INVALIDATED);
	assert_int_equal(e.inv_stag, m.stag);
	struct rn_mem_info mi;
	assert_int_equal(rn_mem_query_mr(f->d.mem, m.stag, &mi), RN_OK);
	assert_int_equal(mi.state, RN_MEM_INVALID);
	qbuf_free(&f->d, &dst);
	qbuf_free(&f->d, &m);
}

/* RDMA Write over several segments, exactly filling the MR (T15 positive half). */
static void test_write_fill_T15(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst;
	q_connect_eth(&f->a, &f->b, true);
	qbuf_new(&f->d, &src, 10000, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &dst, 10000, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE);
	fill(src.p, src.len, 3);
	struct rn_rq_sge s = { (uintptr_t)src.p, 10000, src.stag };
	assert_int_equal(q_rdma(&f->a, 9, RN_WR_RDMA_WRITE, RN_SEND_SIGNALED, &s, 1, dst.stag,
				(uintptr_t)dst.p), RN_OK);
	q_expect(&f->a, &f->b, f->a.scq, 9, RN_WC_SUCCESS);
	/* a Send after it: when its Receive completes the Write is placed (§8.2.2 rule 13) */
	struct qbuf r;
	qbuf_new(&f->d, &r, 16, f->d.pd, RN_ACC_LOCAL_WRITE);
	assert_int_equal(q_recv(&f->b, 1, &r, 0, 16), RN_OK);
	assert_int_equal(q_send(&f->a, 10, RN_WR_SEND, 0, NULL, 0), RN_OK);
	q_expect(&f->a, &f->b, f->b.rcq, 1, RN_WC_SUCCESS);
	assert_memory_equal(dst.p, src.p, 10000);
	assert_true(q_cq_empty(f->a.scq));   /* unsignaled Send: no CQE */
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
	qbuf_free(&f->d, &r);
}

/* RDMA Read of 100 KB (many Read Response segments), Read-after-Write (T20). */
static void test_read_multiseg_T20(void **state)
{
	struct fx *f = *state;
	struct qbuf src, remote, sink;
	q_connect_eth(&f->a, &f->b, true);
	qbuf_new(&f->d, &src, 100000, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &remote, 100000, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &sink, 100000, f->d.pd, RN_ACC_LOCAL_WRITE);
	fill(src.p, src.len, 5);
	struct rn_rq_sge s = { (uintptr_t)src.p, 100000, src.stag };
	assert_int_equal(q_rdma(&f->a, 1, RN_WR_RDMA_WRITE, 0, &s, 1, remote.stag,
				(uintptr_t)remote.p), RN_OK);
	struct rn_rq_sge k = { (uintptr_t)sink.p, 100000, sink.stag };
	assert_int_equal(q_rdma(&f->a, 2, RN_WR_RDMA_READ, RN_SEND_SIGNALED, &k, 1, remote.stag,
				(uintptr_t)remote.p), RN_OK);
	struct rn_cqe e;
	assert_true(q_poll(&f->a, &f->b, f->a.scq, &e));
	assert_int_equal(e.wr_id, 2);
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.opcode, RN_WC_OP_RDMA_READ);
	assert_memory_equal(sink.p, src.p, 100000);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &remote);
	qbuf_free(&f->d, &sink);
}

static void ord2(struct rn_qp_init_attr *a)
{
	a->ord = 2;
}

/* T18: ORD 2, 5 Reads + 1 Send: all complete, in post order. */
static void test_ord_limit_T18(void **state)
{
	struct fx *f = *state;
	struct qbuf remote, sink, r;
	qside_destroy(&f->a);
	qside_create(&f->a, &f->d, ord2);
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &remote, 5000, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &sink, 5 * 5000, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &r, 16, f->d.pd, RN_ACC_LOCAL_WRITE);
	fill(remote.p, remote.len, 9);
	assert_int_equal(q_recv(&f->b, 100, &r, 0, 16), RN_OK);
	for (int i = 0; i < 5; i++) {
		struct rn_rq_sge k = { (uintptr_t)sink.p + i * 5000, 5000, sink.stag };
		assert_int_equal(q_rdma(&f->a, i, RN_WR_RDMA_READ, RN_SEND_SIGNALED, &k, 1,
					remote.stag, (uintptr_t)remote.p), RN_OK);
	}
	assert_int_equal(q_send(&f->a, 5, RN_WR_SEND, RN_SEND_SIGNALED, NULL, 0), RN_OK);
	for (int i = 0; i < 6; i++)
		q_expect(&f->a, &f->b, f->a.scq, (uint64_t)i, RN_WC_SUCCESS);
	for (int i = 0; i < 5; i++)
		assert_memory_equal(sink.p + i * 5000, remote.p, 5000);
	q_expect(&f->a, &f->b, f->b.rcq, 100, RN_WC_SUCCESS);
	qbuf_free(&f->d, &remote);
	qbuf_free(&f->d, &sink);
	qbuf_free(&f->d, &r);
}

/* T19: a Send with Read Fence after a large Read: the Receive completes after the Read, and
 * the Read's WC comes before the Send's. */
static void test_read_fence_T19(void **state)
{
	struct fx *f = *state;
	struct qbuf remote, sink, r;
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &remote, 200000, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &sink, 200000, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &r, 16, f->d.pd, RN_ACC_LOCAL_WRITE);
	fill(remote.p, remote.len, 11);
	assert_int_equal(q_recv(&f->b, 100, &r, 0, 16), RN_OK);
	struct rn_rq_sge k = { (uintptr_t)sink.p, 200000, sink.stag };
	assert_int_equal(q_rdma(&f->a, 1, RN_WR_RDMA_READ, RN_SEND_SIGNALED, &k, 1, remote.stag,
				(uintptr_t)remote.p), RN_OK);
	assert_int_equal(q_send(&f->a, 2, RN_WR_SEND, RN_SEND_SIGNALED | RN_SEND_FENCE, NULL, 0),
			 RN_OK);
	struct rn_cqe e;
	assert_true(q_poll(&f->a, &f->b, f->b.rcq, &e));
	assert_int_equal(e.wr_id, 100);
	/* the fenced Send reached B, so the whole Read had landed at A before it left */
	assert_memory_equal(sink.p, remote.p, 200000);
	q_expect(&f->a, &f->b, f->a.scq, 1, RN_WC_SUCCESS);
	q_expect(&f->a, &f->b, f->a.scq, 2, RN_WC_SUCCESS);
	qbuf_free(&f->d, &remote);
	qbuf_free(&f->d, &sink);
	qbuf_free(&f->d, &r);
}

/* T40: zero-length Read with a garbage remote STag and no local SGE. */
static void test_zero_len_read_T40(void **state)
{
	struct fx *f = *state;
	q_connect(&f->a, &f->b, false);
	assert_int_equal(q_rdma(&f->a, 3, RN_WR_RDMA_READ, RN_SEND_SIGNALED, NULL, 0, 0xabcdef01,
				0x42), RN_OK);
	q_expect(&f->a, &f->b, f->a.scq, 3, RN_WC_SUCCESS);
	assert_int_equal(q_state(&f->a), RN_QPS_RTS);
	assert_int_equal(q_state(&f->b), RN_QPS_RTS);
}

static void sq4(struct rn_qp_init_attr *a)
{
	a->sq_depth = 4;
}

/* T10 (RDMA Verbs §8.2.4): SQ slots are returned when a completion is polled. Depth 4: three
 * unsignaled Sends and a signaled one fill it; a 5th post is "Too many WRs" in Idle, and still
 * in RTS once all four completed but nothing was polled; polling the signaled WC retires it
 * and the three unsignaled before it (RDMA Verbs §8.2.4), and no WC appears for those. */
static void test_unsignaled_T10(void **state)
{
	struct fx *f = *state;
	struct qbuf r;
	qside_destroy(&f->a);
	qside_create(&f->a, &f->d, sq4);
	for (int i = 0; i < 3; i++)
		assert_int_equal(q_send(&f->a, i, RN_WR_SEND, 0, NULL, 0), RN_OK);
	assert_int_equal(q_send(&f->a, 3, RN_WR_SEND, RN_SEND_SIGNALED, NULL, 0), RN_OK);
	assert_int_equal(q_send(&f->a, 4, RN_WR_SEND, 0, NULL, 0), RN_ERR_TOO_MANY_WRS);
	qbuf_new(&f->d, &r, 16, f->d.pd, RN_ACC_LOCAL_WRITE);
	for (int i = 0; i < 8; i++)
		assert_int_equal(q_recv(&f->b, 100 + i, &r, 0, 16), RN_OK);
	q_connect(&f->a, &f->b, false);
	for (int i = 0; i < 4; i++)
		q_expect(&f->a, &f->b, f->b.rcq, 100 + i, RN_WC_SUCCESS);
	q_run(&f->a, &f->b, 20, NULL, NULL);
	assert_int_equal(rn_cq_count(f->a.scq), 1);   /* completed, not yet polled */
	assert_int_equal(q_send(&f->a, 4, RN_WR_SEND, 0, NULL, 0), RN_ERR_TOO_MANY_WRS);
	q_expect(&f->a, &f->b, f->a.scq, 3, RN_WC_SUCCESS);
	for (int i = 0; i < 3; i++)
		assert_int_equal(q_send(&f->a, 5 + i, RN_WR_SEND, 0, NULL, 0), RN_OK);
	assert_int_equal(q_send(&f->a, 8, RN_WR_SEND, RN_SEND_SIGNALED, NULL, 0), RN_OK);
	assert_int_equal(q_send(&f->a, 9, RN_WR_SEND, 0, NULL, 0), RN_ERR_TOO_MANY_WRS);
	q_expect(&f->a, &f->b, f->a.scq, 8, RN_WC_SUCCESS);
	assert_true(q_cq_empty(f->a.scq));
	qbuf_free(&f->d, &r);
}

/* SQ slots: posting until "Too many WRs", then polling, never overflows a CQ as deep as the SQ
 * (with slots freed when the CQE was written, it did); a QP destroyed with a CQE still queued
 * leaves nothing in the CQ for a poller to follow. */
static void test_sq_retire_no_overflow(void **state)
{
	struct fx *f = *state;
	struct rn_qp_init_attr a;
	struct rn_cqe e;
	int posted = 0, polled = 0;
	qside_destroy(&f->a);
	qside_create(&f->a, &f->d, sq4);
	assert_int_equal(rn_qp_destroy(f->a.qp), RN_OK);
	assert_int_equal(rn_cq_destroy(f->a.scq), RN_OK);
	f->a.scq = q_cq(&f->d, 4);
	a = q_attr(&f->d, f->a.scq, f->a.rcq);
	a.sq_depth = 4;
	assert_int_equal(rn_qp_create(&a, &f->a.qp, NULL), RN_OK);
	q_connect(&f->a, &f->b, false);
	while (polled < 40) {
		while (posted < 40 && q_rdma(&f->a, (uint64_t)posted, RN_WR_RDMA_WRITE,
					     RN_SEND_SIGNALED, NULL, 0, 0x100, 0) == RN_OK)
			posted++;
		q_run(&f->a, &f->b, 5, NULL, NULL);
		assert_true(q_poll(&f->a, &f->b, f->a.scq, &e));
		assert_int_equal(e.wr_id, (uint64_t)polled++);
		assert_int_equal(e.status, RN_WC_SUCCESS);
	}
	assert_int_equal(rn_cq_overflows(f->a.scq), 0);
	assert_int_equal(q_state(&f->a), RN_QPS_RTS);
	assert_int_equal(q_rdma(&f->a, 99, RN_WR_RDMA_WRITE, RN_SEND_SIGNALED, NULL, 0, 0x100, 0),
			 RN_OK);
	q_run(&f->a, &f->b, 20, NULL, NULL);
	assert_int_equal(rn_cq_count(f->a.scq), 1);
	assert_int_equal(rn_qp_destroy(f->a.qp), RN_OK);
	f->a.qp = NULL;
	assert_true(q_cq_empty(f->a.scq));
}

/* T09 and the other immediate statuses of PostSQ / PostRQ. */
static void test_post_errors_T09(void **state)
{
	struct fx *f = *state;
	struct rn_rq_sge sg[5] = { { 0 } };
	struct rn_send_wr w[5], *bad = NULL;
	uint32_t n = 0;
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 5; i++) {
		w[i].wr_id = (uint64_t)i + 1;
		w[i].opcode = RN_WR_SEND;
		w[i].sg_list = sg;
		w[i].num_sge = 1;
		w[i].next = i < 4 ? &w[i + 1] : NULL;
	}
	w[2].num_sge = 5;
	assert_int_equal(rn_qp_post_send(f->a.qp, w, &bad, &n), RN_ERR_INVALID_SGL_LENGTH);
	assert_ptr_equal(bad, &w[2]);
	assert_int_equal(n, 2);
	struct rn_send_wr x;
	memset(&x, 0, sizeof(x));
	x.opcode = RN_WR_OPCODE_COUNT;
	assert_int_equal(rn_qp_post_send(f->a.qp, &x, NULL, NULL), RN_ERR_INVALID_OPCODE);
	x.opcode = RN_WR_SEND;
	x.flags = 1u << 20;
	assert_int_equal(rn_qp_post_send(f->a.qp, &x, NULL, NULL), RN_ERR_INVALID_MODIFIER);
	x.flags = RN_SEND_INLINE;
	x.num_sge = 1;
	x.sg_list = sg;
	sg[0].length = 65;   /* max_inline 64 */
	assert_int_equal(rn_qp_post_send(f->a.qp, &x, NULL, NULL), RN_ERR_INVALID_MODIFIER);
	x.flags = 0;
	x.sg_list = NULL;
	assert_int_equal(rn_qp_post_send(f->a.qp, &x, NULL, NULL), RN_ERR_INVALID_SGL_FORMAT);
	x.num_sge = -1;
	assert_int_equal(rn_qp_post_send(f->a.qp, &x, NULL, NULL), RN_ERR_INVALID_SGL_LENGTH);
	x.opcode = RN_WR_RDMA_READ;
	x.num_sge = 2;
	x.sg_list = sg;
	assert_int_equal(rn_qp_post_send(f->a.qp, &x, NULL, NULL), RN_ERR_INVALID_SGL_LENGTH);
	assert_int_equal(rn_qp_post_send(NULL, &x, NULL, NULL), RN_ERR_INVALID_QP);
	/* RQ: too many SGEs, then QP in Error rejects both queues */
	struct rn_recv_wr rw = { 1, NULL, sg, 5 };
	assert_int_equal(rn_qp_post_recv(f->a.qp, &rw, NULL, NULL), RN_ERR_INVALID_SGL_LENGTH);
	struct rn_qp_mod m = { .next = RN_QPS_ERROR };
	assert_int_equal(rn_qp_modify_qp(f->a.qp, &m, NULL), RN_OK);
	x.opcode = RN_WR_SEND;
	x.num_sge = 0;
	assert_int_equal(rn_qp_post_send(f->a.qp, &x, NULL, NULL), RN_ERR_INVALID_QP_STATE);
	rw.num_sge = 1;
	assert_int_equal(rn_qp_post_recv(f->a.qp, &rw, NULL, NULL), RN_ERR_INVALID_QP_STATE);
	/* the two posted WRs were flushed */
	q_expect(&f->a, NULL, f->a.scq, 1, RN_WC_FLUSHED);
	q_expect(&f->a, NULL, f->a.scq, 2, RN_WC_FLUSHED);
}

static void no_bind(struct rn_qp_init_attr *a)
{
	a->bind_mw = false;
}

/* Bind without the QP's bind enable; RQ post on an S-RQ QP (T39). */
static void test_post_errors_bind_srq_T39(void **state)
{
	struct fx *f = *state;
	qside_destroy(&f->a);
	qside_create(&f->a, &f->d, no_bind);
	struct rn_send_wr x;
	memset(&x, 0, sizeof(x));
	x.opcode = RN_WR_BIND_MW;
	assert_int_equal(rn_qp_post_send(f->a.qp, &x, NULL, NULL), RN_ERR_INVALID_OPCODE);
	struct rn_srq_attr sa = { .max_wr = 8, .max_sge = 2, .pd = f->d.pd, .dev_max_wr = 64,
				  .dev_max_sge = 4 };
	struct rn_srq *srq;
	uint32_t w, s;
	assert_int_equal(rn_srq_create(&sa, &srq, &w, &s), RN_OK);
	struct rn_qp_init_attr a = q_attr(&f->d, f->a.scq, f->a.rcq);
	a.srq = srq;
	a.rq_limit = 9;
	struct rn_qp *qp;
	assert_int_equal(rn_qp_create(&a, &qp, NULL), RN_ERR_RQ_LIMIT_RANGE);
	a.rq_limit = 2;
	assert_int_equal(rn_qp_create(&a, &qp, NULL), RN_OK);
	struct rn_recv_wr rw = { 1, NULL, NULL, 0 };
	assert_int_equal(rn_qp_post_recv(qp, &rw, NULL, NULL), RN_ERR_RQ_HAS_SRQ);
	assert_int_equal(rn_srq_destroy(srq), RN_ERR_SRQ_IN_USE);
	assert_int_equal(rn_qp_destroy(qp), RN_OK);
	assert_int_equal(rn_srq_destroy(srq), RN_OK);
}

/* T04: Create QP statuses; nothing created on failure. */
static void test_create_T04(void **state)
{
	struct fx *f = *state;
	struct rn_qp_init_attr a = q_attr(&f->d, f->a.scq, f->a.rcq);
	struct rn_qp *qp;
	struct rn_qp_alloc al;
	a.limits.max_ord = 8;
	a.ord = 9;
	assert_int_equal(rn_qp_create(&a, &qp, NULL), RN_ERR_ORD_EXCEEDS);
	a.ord = 1;
	a.ird = 1000;
	assert_int_equal(rn_qp_create(&a, &qp, NULL), RN_ERR_IRD_EXCEEDS);
	a.ird = 1;
	a.max_send_sge = RN_QP_MAX_SGE + 1;
	assert_int_equal(rn_qp_create(&a, &qp, NULL), RN_ERR_SQ_SGES_EXCEED);
	a.max_send_sge = 1;
	a.max_recv_sge = RN_RQ_MAX_SGE + 1;
	assert_int_equal(rn_qp_create(&a, &qp, NULL), RN_ERR_RQ_SGES_EXCEED);
	a.max_recv_sge = 1;
	a.sq_depth = 1u << 20;
	assert_int_equal(rn_qp_create(&a, &qp, NULL), RN_ERR_SQ_WRS_EXCEED);
	a.sq_depth = 8;
	a.rq_depth = 1u << 20;
	assert_int_equal(rn_qp_create(&a, &qp, NULL), RN_ERR_RQ_WRS_EXCEED);
	a.rq_depth = 8;
	a.send_cq = NULL;
	assert_int_equal(rn_qp_create(&a, &qp, NULL), RN_ERR_INVALID_CQ);
	a.send_cq = f->a.scq;
	a.pd = 999;
	assert_int_equal(rn_qp_create(&a, &qp, NULL), RN_ERR_INVALID_PD);
	a.pd = f->d.pd;
	a.qp_id = 4242;
	assert_int_equal(rn_qp_create(&a, &qp, &al), RN_OK);
	assert_int_equal(al.qp_id, 4242);
	assert_true(al.sq_depth >= 8 && al.rq_depth >= 8);
	struct rn_qp_info qi;
	assert_int_equal(rn_qp_query(qp, &qi), RN_OK);
	assert_int_equal(qi.state, RN_QPS_IDLE);
	assert_int_equal(qi.qp_id, 4242);
	assert_false(qi.has_llp);
	assert_int_equal(rn_mem_pd_dealloc(f->d.mem, f->d.pd), RN_ERR_PD_IN_USE);
	assert_int_equal(rn_qp_destroy(qp), RN_OK);
}

/* T05: Idle holds WRs; Idle -> Error flushes each with its WR ID; Error -> Idle. */
static void test_idle_flush_T05(void **state)
{
	struct fx *f = *state;
	struct qbuf r;
	qbuf_new(&f->d, &r, 16, f->d.pd, RN_ACC_LOCAL_WRITE);
	assert_int_equal(q_send(&f->a, 1, RN_WR_SEND, 0, NULL, 0), RN_OK);   /* unsignaled */
	assert_int_equal(q_send(&f->a, 2, RN_WR_SEND, RN_SEND_SIGNALED, NULL, 0), RN_OK);
	assert_int_equal(q_recv(&f->a, 3, &r, 0, 16), RN_OK);
	assert_true(q_cq_empty(f->a.scq) && q_cq_empty(f->a.rcq));
	struct rn_qp_mod m = { .next = RN_QPS_ERROR };
	assert_int_equal(rn_qp_modify_qp(f->a.qp, &m, NULL), RN_OK);
	q_expect(&f->a, NULL, f->a.scq, 1, RN_WC_FLUSHED);
	q_expect(&f->a, NULL, f->a.scq, 2, RN_WC_FLUSHED);
	q_expect(&f->a, NULL, f->a.rcq, 3, RN_WC_FLUSHED);
	m.next = RN_QPS_IDLE;
	assert_int_equal(rn_qp_modify_qp(f->a.qp, &m, NULL), RN_OK);
	assert_int_equal(q_state(&f->a), RN_QPS_IDLE);
	qbuf_free(&f->d, &r);
}

static bool both_idle(void *arg)
{
	struct fx *f = arg;
	return q_state(&f->a) == RN_QPS_IDLE && q_state(&f->b) == RN_QPS_IDLE;
}

/* T34: A Modify RTS -> Closing: Receives flushed, FIN exchange, both Idle with "LLP Close
 * Complete"; then A is reused on a new connection. */
static void test_graceful_close_T34(void **state)
{
	struct fx *f = *state;
	struct qbuf r;
	qbuf_new(&f->d, &r, 16, f->d.pd, RN_ACC_LOCAL_WRITE);
	q_connect(&f->a, &f->b, false);
	assert_int_equal(q_recv(&f->a, 7, &r, 0, 16), RN_OK);
	struct rn_qp_mod m = { .next = RN_QPS_CLOSING };
	assert_int_equal(rn_qp_modify_qp(f->a.qp, &m, NULL), RN_OK);
	assert_int_equal(q_event(&f->d, f->a.qp), RN_AE_NONE);   /* none at the verb */
	q_expect(&f->a, &f->b, f->a.rcq, 7, RN_WC_FLUSHED);
	q_run(&f->a, &f->b, Q_WAIT_MS, both_idle, f);
	assert_int_equal(q_state(&f->a), RN_QPS_IDLE);
	assert_int_equal(q_state(&f->b), RN_QPS_IDLE);
	assert_int_equal(q_event(&f->d, f->a.qp), RN_AE_LLP_CLOSE_COMPLETE);
	assert_int_equal(q_event(&f->d, f->b.qp), RN_AE_LLP_CLOSE_COMPLETE);
	assert_int_equal(rn_qp_fd(f->a.qp), -1);
	/* reuse: new connection, MSNs restart */
	q_connect(&f->a, &f->b, false);
	assert_int_equal(q_recv(&f->b, 8, &r, 0, 16), RN_OK);
	assert_int_equal(q_send(&f->a, 9, RN_WR_SEND, RN_SEND_SIGNALED, NULL, 0), RN_OK);
	q_expect(&f->a, &f->b, f->b.rcq, 8, RN_WC_SUCCESS);
	q_expect(&f->a, &f->b, f->a.scq, 9, RN_WC_SUCCESS);
	qbuf_free(&f->d, &r);
}

/* T36 first half: Modify RTS -> Terminate: Terminate 0x0000 on the wire, no event at A; B gets
 * "Terminate Message Received" and sends none back; both end in Error. */
static bool both_error(void *arg)
{
	struct fx *f = arg;
	return q_state(&f->a) == RN_QPS_ERROR && q_state(&f->b) == RN_QPS_ERROR;
}

static void test_modify_terminate_T36(void **state)
{
	struct fx *f = *state;
	q_connect(&f->a, &f->b, false);
	struct rn_qp_mod m = { .next = RN_QPS_TERMINATE };
	assert_int_equal(rn_qp_modify_qp(f->a.qp, &m, NULL), RN_OK);
	q_run(&f->a, &f->b, Q_WAIT_MS, both_error, f);
	assert_int_equal(q_state(&f->a), RN_QPS_ERROR);
	assert_int_equal(q_state(&f->b), RN_QPS_ERROR);
	assert_int_equal(q_event(&f->d, f->a.qp), RN_AE_NONE);
	assert_int_equal(q_event(&f->d, f->b.qp), RN_AE_TERMINATE_RECEIVED);
	struct rn_qp_info qa, qb;
	assert_int_equal(rn_qp_query(f->a.qp, &qa), RN_OK);
	assert_int_equal(rn_qp_query(f->b.qp, &qb), RN_OK);
	assert_true(qa.term_valid && qa.term_local);
	assert_true(qb.term_valid && !qb.term_local);
	assert_int_equal(iwarp_err_u16(qb.term.err), 0x0000);
	assert_false(qb.term.m || qb.term.d || qb.term.r);
}

/* T36 second half: Modify RTS -> Error: RST, B "LLP Connection Reset", B in Error, both
 * queues flushed. */
static void test_modify_error_reset_T36(void **state)
{
	struct fx *f = *state;
	struct qbuf r;
	qbuf_new(&f->d, &r, 16, f->d.pd, RN_ACC_LOCAL_WRITE);
	q_connect(&f->a, &f->b, false);
	assert_int_equal(q_recv(&f->b, 1, &r, 0, 16), RN_OK);
	struct rn_qp_mod m = { .next = RN_QPS_ERROR };
	assert_int_equal(rn_qp_modify_qp(f->a.qp, &m, NULL), RN_OK);
	q_run(&f->a, &f->b, Q_WAIT_MS, both_error, f);
	assert_int_equal(q_state(&f->b), RN_QPS_ERROR);
	assert_int_equal(q_event(&f->d, f->b.qp), RN_AE_LLP_CONN_RESET);
	q_expect(&f->a, &f->b, f->b.rcq, 1, RN_WC_FLUSHED);
	qbuf_free(&f->d, &r);
}

/* ---- waking the engine for write interest ---------------------------------------------- */
static atomic_int wakes;
static void count_wake(void *arg)
{
	(void)arg;
	atomic_fetch_add(&wakes, 1);
}
static void with_wake(struct rn_qp_init_attr *a)
{
	a->wake = count_wake;
}

static bool sq_drained(void *arg)
{
	struct fx *f = arg;
	return rn_cq_count(f->a.scq) > 0 && !rn_qp_wants_write(f->a.qp);
}

/* A Receive posted in RTS takes only the RQ's lock, never the QP's: the receive path holds the
 * QP's lock run after run while messages arrive, and a repost that waited for it let the RQ
 * run dry under qperf rc_bw. The test holds the QP's lock as an error-checking mutex: a post
 * that took it would get EDEADLK, go on, and unlock it on its way out, so the test's own
 * unlock would then fail with EPERM. In Closing, a post still takes the lock and the state's
 * rule (flushed at once). */
static void test_post_recv_without_qp_lock(void **state)
{
	struct fx *f = *state;
	struct qbuf dst;
	pthread_mutexattr_t ma;
	struct rn_cqe e;
	uint32_t got;

	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &dst, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	assert_int_equal(pthread_mutex_destroy(&f->b.qp->lock), 0);
	assert_int_equal(pthread_mutexattr_init(&ma), 0);
	assert_int_equal(pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK), 0);
	assert_int_equal(pthread_mutex_init(&f->b.qp->lock, &ma), 0);
	pthread_mutexattr_destroy(&ma);

	assert_int_equal(pthread_mutex_lock(&f->b.qp->lock), 0);
	assert_int_equal(q_recv(&f->b, 1, &dst, 0, 64), RN_OK);
	assert_int_equal(q_recv(&f->b, 2, &dst, 0, 64), RN_OK);
	assert_int_equal(pthread_mutex_unlock(&f->b.qp->lock), 0);   /* still ours */

	/* both were queued: two Sends land in them, in order */
	struct rn_rq_sge s = { (uintptr_t)dst.p, 8, dst.stag };
	assert_int_equal(q_send(&f->a, 10, RN_WR_SEND, RN_SEND_SIGNALED, &s, 1), RN_OK);
	assert_int_equal(q_send(&f->a, 11, RN_WR_SEND, RN_SEND_SIGNALED, &s, 1), RN_OK);
	q_expect(&f->a, &f->b, f->b.rcq, 1, RN_WC_SUCCESS);
	q_expect(&f->a, &f->b, f->b.rcq, 2, RN_WC_SUCCESS);

	/* Closing (our FIN sent): the gate is shut, the post takes the lock and is flushed */
	struct rn_qp_mod m = { .next = RN_QPS_CLOSING };
	assert_int_equal(rn_qp_modify_qp(f->b.qp, &m, NULL), RN_OK);
	assert_int_equal(q_state(&f->b), RN_QPS_CLOSING);
	assert_int_equal(q_recv(&f->b, 3, &dst, 0, 64), RN_OK);
	assert_int_equal(rn_cq_poll(f->b.rcq, &e, 1, &got), RN_OK);
	assert_int_equal(e.wr_id, 3);
	assert_int_equal(e.status, RN_WC_FLUSHED);
	qbuf_free(&f->d, &dst);
}

/* A Receive's slot is free before its CQE can be polled: a consumer that reposts the moment
 * it polls (qperf's rc_lat has a 1-deep RQ) must never find the RQ full. As in qperf, a
 * second thread sleeps on B's completion channel, polls and reposts at once into a 1-deep
 * RQ, while this thread drives both QPs (the CQE's push wakes the sleeper before the push
 * returns); each Send goes out only after the repost, so every one finds its Receive. */
#define RETIRE_MSGS 2000
struct repost_arg {
	struct fx *f;
	struct qbuf *dst;
	struct rn_comp_channel *ch;
	atomic_uint posted, full;
	atomic_bool stop;
};

static void *repost_thread(void *p)
{
	struct repost_arg *r = p;
	struct rn_cqe e;
	struct rn_cq *cq;
	void *ctx;
	uint32_t got;

	while (atomic_load(&r->posted) < RETIRE_MSGS && !atomic_load(&r->stop)) {
		if (rn_comp_channel_get(r->ch, &cq, &ctx, 100) != 0)
			continue;   /* the bound only lets the loop see stop */
		rn_cq_ack_events(cq, 1);
		rn_cq_req_notify(cq, RN_NOTIFY_NEXT);
		while (rn_cq_poll(cq, &e, 1, &got) == RN_OK) {
			enum rn_status st = q_recv(&r->f->b, e.wr_id + 1, r->dst, 0, 16);

			if (st == RN_ERR_TOO_MANY_WRS)
				atomic_fetch_add(&r->full, 1);
			if (st != RN_OK) {
				atomic_store(&r->stop, true);
				return NULL;
			}
			atomic_fetch_add(&r->posted, 1);
		}
	}
	return NULL;
}

static bool reposted(void *p)
{
	struct repost_arg *r = p;

	return atomic_load(&r->stop) || atomic_load(&r->posted) > r->f->a.qp->sq_tail - 1;
}

static void test_recv_retired_before_cqe(void **state)
{
	struct fx *f = *state;
	struct qside *b = &f->b;
	struct qbuf src, dst;
	struct repost_arg r = { .f = f, .dst = &dst };
	struct rn_cq_attr ca = { .min_cqe = 16, .max_cqe = 1u << 16, .evq = f->d.evq };
	pthread_t th;
	uint32_t n;

	qside_destroy(b);   /* B again, with a channel on its receive CQ and a 1-deep RQ */
	assert_int_equal(rn_comp_channel_create(&r.ch), 0);
	ca.channel = r.ch;
	memset(b, 0, sizeof(*b));
	b->d = &f->d;
	b->scq = q_cq(&f->d, 256);
	assert_int_equal(rn_cq_create(&ca, &b->rcq, &n), RN_OK);
	struct rn_qp_init_attr qa = q_attr(&f->d, b->scq, b->rcq);
	qa.rq_depth = 1;
	assert_int_equal(rn_qp_create(&qa, &b->qp, NULL), RN_OK);

	q_connect(&f->a, b, false);
	qbuf_new(&f->d, &src, 16, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &dst, 16, f->d.pd, RN_ACC_LOCAL_WRITE);
	assert_int_equal(q_recv(b, 0, &dst, 0, 16), RN_OK);
	assert_int_equal(q_recv(b, 99, &dst, 0, 16), RN_ERR_TOO_MANY_WRS);   /* 1 deep */
	assert_int_equal(rn_cq_req_notify(b->rcq, RN_NOTIFY_NEXT), RN_OK);
	assert_int_equal(pthread_create(&th, NULL, repost_thread, &r), 0);
	struct rn_rq_sge s = { (uintptr_t)src.p, 16, src.stag };
	for (unsigned i = 0; i < RETIRE_MSGS && !atomic_load(&r.stop); i++) {
		assert_int_equal(q_send(&f->a, i, RN_WR_SEND, RN_SEND_SIGNALED, &s, 1), RN_OK);
		q_run(&f->a, b, Q_WAIT_MS, reposted, &r);   /* until this one was reposted */
		q_expect(&f->a, b, f->a.scq, i, RN_WC_SUCCESS);   /* frees the SQ slot */
	}
	atomic_store(&r.stop, true);
	pthread_join(th, NULL);
	assert_int_equal(atomic_load(&r.full), 0);
	assert_int_equal(atomic_load(&r.posted), RETIRE_MSGS);
	assert_int_equal(q_state(b), RN_QPS_RTS);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
	qside_destroy(b);
	assert_int_equal(rn_comp_channel_destroy(r.ch), 0);
	qside_create(b, &f->d, NULL);   /* for the fixture's teardown */
}

/* A post that leaves work queued (pump budget, full socket) wakes the engine so that it
 * watches EPOLLOUT. Once the engine's last look (rn_qp_wants_write) gave it that interest,
 * further posts do not wake it; after the queue drained and the engine looked again, the
 * next post that leaves work queued wakes it once more. */
static void test_wake_write_interest(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst;
	const size_t len = 4u << 20; /* over one pump's budget (RN_TX_BUDGET) */

	qside_destroy(&f->a);
	qside_create(&f->a, &f->d, with_wake);
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &src, len, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &dst, len, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE);
	struct rn_rq_sge s = { (uintptr_t)src.p, (uint32_t)len, src.stag };
	assert_false(rn_qp_wants_write(f->a.qp)); /* the engine's look after RTS: nothing queued */
	int w = atomic_load(&wakes);
	assert_int_equal(q_rdma(&f->a, 1, RN_WR_RDMA_WRITE, 0, &s, 1, dst.stag, (uintptr_t)dst.p),
			 RN_OK);
	assert_int_equal(atomic_load(&wakes), w + 1);
	assert_true(rn_qp_wants_write(f->a.qp)); /* the engine looks: EPOLLOUT */
	assert_int_equal(q_rdma(&f->a, 2, RN_WR_RDMA_WRITE, 0, &s, 1, dst.stag, (uintptr_t)dst.p),
			 RN_OK);
	assert_int_equal(atomic_load(&wakes), w + 1); /* it watches already */
	assert_int_equal(q_rdma(&f->a, 3, RN_WR_RDMA_WRITE, RN_SEND_SIGNALED, &s, 1, dst.stag,
				(uintptr_t)dst.p), RN_OK);
	assert_int_equal(atomic_load(&wakes), w + 1);
	/* drive both ends until everything went out and the engine's look finds nothing */
	q_run(&f->a, &f->b, Q_WAIT_MS, sq_drained, f);
	assert_true(sq_drained(f));
	q_expect(&f->a, &f->b, f->a.scq, 3, RN_WC_SUCCESS);
	w = atomic_load(&wakes);
	assert_int_equal(q_rdma(&f->a, 4, RN_WR_RDMA_WRITE, RN_SEND_SIGNALED, &s, 1, dst.stag,
				(uintptr_t)dst.p), RN_OK);
	assert_int_equal(atomic_load(&wakes), w + 1);
	q_expect(&f->a, &f->b, f->a.scq, 4, RN_WC_SUCCESS);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_send_recv_sgl, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_post_recv_without_qp_lock, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_recv_retired_before_cqe, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_inline_se_zero_len_T40, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_send_inv_T26, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_write_fill_T15, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_read_multiseg_T20, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_ord_limit_T18, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_read_fence_T19, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_zero_len_read_T40, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_unsignaled_T10, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_sq_retire_no_overflow, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_post_errors_T09, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_post_errors_bind_srq_T39, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_create_T04, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_idle_flush_T05, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_graceful_close_T34, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_modify_terminate_T36, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_modify_error_reset_T36, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_wake_write_interest, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests_name("rnic_qp", tests, NULL, NULL);
}
