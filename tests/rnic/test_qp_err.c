/* QP error paths between two QPs: remote protection errors (exact Terminate, async events on
 * both sides, guard bytes untouched), RQ errors, SQ completion errors and the flush shape,
 * IRD / ORD errors, memory WRs (Bind MW, Fast-Register, Local Invalidate). */
#include "test_qp_util.h"
#include "rn_fault.h"
#include "rn_qp_int.h"

#include <sys/mman.h>

static bool both_error(void *arg)
{
	struct fx *f = arg;
	return q_state(&f->a) == RN_QPS_ERROR && q_state(&f->b) == RN_QPS_ERROR;
}

static void run_to_error(struct fx *f)
{
	q_run(&f->a, &f->b, Q_WAIT_MS, both_error, f);
	assert_int_equal(q_state(&f->a), RN_QPS_ERROR);
	assert_int_equal(q_state(&f->b), RN_QPS_ERROR);
}

/* B detected the error and sent the Terminate; A received it and did not answer. */
static void check_term(struct fx *f, uint16_t code, bool hdr_copy, enum rn_event_id b_ev)
{
	struct rn_qp_info qa, qb;
	assert_int_equal(q_event(&f->d, f->b.qp), b_ev);
	assert_int_equal(q_event(&f->d, f->a.qp), RN_AE_TERMINATE_RECEIVED);
	assert_int_equal(q_event(&f->d, f->a.qp), RN_AE_NONE);
	assert_int_equal(rn_qp_query(f->a.qp, &qa), RN_OK);
	assert_int_equal(rn_qp_query(f->b.qp, &qb), RN_OK);
	assert_true(qb.term_valid && qb.term_local);
	assert_true(qa.term_valid && !qa.term_local);
	assert_int_equal(iwarp_err_u16(qa.term.err), code);
	assert_int_equal(iwarp_err_u16(qb.term.err), code);
	assert_int_equal(qa.term.d, hdr_copy);
	assert_int_equal(qa.term.m, hdr_copy);
	assert_memory_equal(qa.term.ddp_hdr, qb.term.ddp_hdr, sizeof(qa.term.ddp_hdr));
	/* the counters softrnic-stat shows: one Terminate of this layer and type each way */
	unsigned layer = rn_stats_term_layer(code >> 12);
	unsigned etype = rn_stats_term_etype((code >> 8) & 0xf);
	assert_int_equal(f->b.qp->st_qp->c.term_tx[layer][etype], 1);
	assert_int_equal(f->a.qp->st_qp->c.term_rx[layer][etype], 1);
	assert_int_equal(f->a.qp->st_qp->c.term_tx[layer][etype], 0);   /* never answered (D48) */
}

/* A Write of n octets to (stag, to) and a later Send that must be flushed. */
static void write_then_send(struct fx *f, struct qbuf *src, uint32_t n, uint32_t stag, uint64_t to)
{
	struct rn_rq_sge s = { (uintptr_t)src->p, n, src->stag };
	assert_int_equal(q_rdma(&f->a, 1, RN_WR_RDMA_WRITE, RN_SEND_SIGNALED, &s, 1, stag, to),
			 RN_OK);
	run_to_error(f);
	/* Write was handed to the transport before the Terminate came back: Success */
	q_expect(&f->a, &f->b, f->a.scq, 1, RN_WC_SUCCESS);
}

static void check_untouched(struct qbuf *b)
{
	assert_true(qbuf_guards_ok(b));
	for (size_t i = 0; i < b->len; i++)
		assert_int_equal(b->p[i], 0);
}

/* T14: Write to an MR of another PD -> 0x1102 (DDP "STag not associated"), Tagged Invalid PD. */
static void test_write_other_pd_T14(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst;
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &src, 100, f->d.pd, RN_ACC_LOCAL_WRITE);
	memset(src.p, 0x5a, 100);
	qbuf_new(&f->d, &dst, 100, f->d.pd2, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE);
	write_then_send(f, &src, 100, dst.stag, (uintptr_t)dst.p);
	check_untouched(&dst);
	check_term(f, 0x1102, true, RN_AE_PROT_INVALID_PD);
	struct rn_qp_info qa;
	assert_int_equal(rn_qp_query(f->a.qp, &qa), RN_OK);
	assert_int_equal(qa.term.ddp_hdr_len, DDP_TAGGED_HDR_LEN);
	assert_int_equal(qa.term.ddp_hdr[1], RDMAP_CTRL(RDMAP_OP_WRITE));
	assert_int_equal(qa.term.ddp_seg_len, DDP_TAGGED_HDR_LEN + 100);
	/* posting in Error: immediate error */
	assert_int_equal(q_send(&f->a, 2, RN_WR_SEND, 0, NULL, 0), RN_ERR_INVALID_QP_STATE);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
}

/* T25: right index, wrong key -> 0x1100. */
static void test_write_wrong_key_T25(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst;
	q_connect(&f->a, &f->b, true);
	qbuf_new(&f->d, &src, 100, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &dst, 100, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE);
	write_then_send(f, &src, 100, dst.stag ^ 0x01, (uintptr_t)dst.p);
	check_untouched(&dst);
	check_term(f, 0x1100, true, RN_AE_PROT_INVALID_STAG);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
}

/* T15: one byte past the end -> 0x1101, nothing written. */
static void test_write_bounds_T15(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst;
	q_connect(&f->a, &f->b, false);
	/* one segment: a tagged segment is checked whole before any octet is placed. (A
	 * multi-segment Write places its earlier, valid segments: DDP segments carry no message
	 * length, so the first cannot know the message will overrun; docs P-rows.) */
	qbuf_new(&f->d, &src, 5000, f->d.pd, RN_ACC_LOCAL_WRITE);
	memset(src.p, 0x77, 5000);
	qbuf_new(&f->d, &dst, 1000, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE);
	write_then_send(f, &src, 1001, dst.stag, (uintptr_t)dst.p);
	check_untouched(&dst);
	check_term(f, 0x1101, true, RN_AE_PROT_BASE_BOUNDS);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
}

/* T15 (TO one byte below the base). */
static void test_write_below_base_T15(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst;
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &src, 16, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &dst, 16, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE);
	write_then_send(f, &src, 16, dst.stag, (uintptr_t)dst.p - 1);
	check_untouched(&dst);
	check_term(f, 0x1101, true, RN_AE_PROT_BASE_BOUNDS);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
}

/* T16: MR without Remote Write -> RDMAP 0x0102, Tagged Access Rights. */
static void test_write_no_rights_T16(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst;
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &src, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &dst, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	write_then_send(f, &src, 64, dst.stag, (uintptr_t)dst.p);
	check_untouched(&dst);
	check_term(f, 0x0102, true, RN_AE_PROT_ACCESS);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
}

static void no_inbound(struct rn_qp_init_attr *a)
{
	a->inbound_write = false;
	a->inbound_read = false;
}

/* T16: Write to a QP created without inbound RDMA Write. */
static void test_write_not_enabled_T16(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst;
	qside_destroy(&f->b);
	qside_create(&f->b, &f->d, no_inbound);
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &src, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &dst, 64, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE);
	write_then_send(f, &src, 64, dst.stag, (uintptr_t)dst.p);
	check_untouched(&dst);
	check_term(f, 0x0102, true, RN_AE_REM_WRITE_NOT_ENABLED);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
}

/* T16: Read of an MR without Remote Read -> data source B: IRRQ access (0x0102); A's Read does
 * not complete Success. */
static void test_read_no_rights_T16(void **state)
{
	struct fx *f = *state;
	struct qbuf remote, sink;
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &remote, 64, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE);
	qbuf_new(&f->d, &sink, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	struct rn_rq_sge k = { (uintptr_t)sink.p, 64, sink.stag };
	assert_int_equal(q_rdma(&f->a, 1, RN_WR_RDMA_READ, RN_SEND_SIGNALED, &k, 1, remote.stag,
				(uintptr_t)remote.p), RN_OK);
	run_to_error(f);
	q_expect(&f->a, &f->b, f->a.scq, 1, RN_WC_FLUSHED);
	check_term(f, 0x0102, true, RN_AE_IRRQ_ACCESS);
	struct rn_qp_info qa;
	assert_int_equal(rn_qp_query(f->a.qp, &qa), RN_OK);
	assert_true(qa.term.r);   /* the Read Request header is copied */
	assert_int_equal(qa.term.rdma_hdr_len, RDMAP_READ_REQ_LEN);
	check_untouched(&sink);
	qbuf_free(&f->d, &remote);
	qbuf_free(&f->d, &sink);
}

/* Issue 27 item 3: a Write whose remote TO + length wraps 2^64 cannot be segmented: it
 * completes in error (Wrap, IBV_WC_LOC_PROT_ERR) and A goes to Error; B never sees a
 * segment of it (before: Success, nothing sent, QP in RTS). */
static void test_write_remote_wrap(void **state)
{
	struct fx *f = *state;
	struct qbuf src;
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &src, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	struct rn_rq_sge s = { (uintptr_t)src.p, 64, src.stag };
	assert_int_equal(q_rdma(&f->a, 1, RN_WR_RDMA_WRITE, RN_SEND_SIGNALED, &s, 1, 0x1234,
				UINT64_MAX - 7), RN_OK);
	run_to_error(f);
	q_expect(&f->a, &f->b, f->a.scq, 1, RN_WC_WRAP);
	assert_int_equal(q_event(&f->d, f->b.qp), RN_AE_TERMINATE_RECEIVED);
	qbuf_free(&f->d, &src);
}

/* ---- issue 27 item 2: registered memory unmapped after registration --------------------- */

/* len bytes of fresh mapping registered with acc, then unmapped: the MR stays registered.
 * cmocka sets its own SIGSEGV handler around each setup, test and teardown (and restores the
 * one before when it ends), replacing the one rn_qp_create installed: put ours back on top. */
static rn_stag_t gone_mr(struct fx *f, size_t len, uint32_t acc, uint8_t **addr)
{
	rn_stag_t stag;

	assert_int_equal(rn_fault_install(), 0);
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	assert_int_equal(rn_mem_reg_mr(f->d.mem, f->d.pd, p, len, (uintptr_t)p, acc, &stag), RN_OK);
	assert_int_equal(munmap(p, len), 0);
	*addr = p;
	return stag;
}

/* A peer's Write of n octets into it: B terminates with RFC 5040 "access rights violation"
 * (0x0102) and the tagged access event, never a SIGSEGV (n small: placed by copy; large with
 * CRC off: read straight into the target, where the kernel answers EFAULT). */
static void write_into_gone(struct fx *f, uint32_t n, bool crc)
{
	struct qbuf src;
	uint8_t *gone;
	q_connect(&f->a, &f->b, crc);
	rn_stag_t stag = gone_mr(f, 1u << 20, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE, &gone);
	qbuf_new(&f->d, &src, n, f->d.pd, RN_ACC_LOCAL_WRITE);
	write_then_send(f, &src, n, stag, (uintptr_t)gone);
	check_term(f, 0x0102, true, RN_AE_PROT_ACCESS);
	assert_int_equal(rn_mem_dereg(f->d.mem, stag), RN_OK);
	qbuf_free(&f->d, &src);
}

static void test_write_unmapped_small(void **state)
{
	write_into_gone(*state, 64, true);
}

static void test_write_unmapped_direct(void **state)
{
	write_into_gone(*state, 256 * 1024, false);
}

/* A peer's Read of it: B terminates with 0x0102, IRRQ access event; A's Read does not
 * complete Success. */
static void test_read_unmapped_source(void **state)
{
	struct fx *f = *state;
	struct qbuf sink;
	uint8_t *gone;
	q_connect(&f->a, &f->b, false);
	rn_stag_t stag = gone_mr(f, 65536, RN_ACC_REMOTE_READ, &gone);
	qbuf_new(&f->d, &sink, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	struct rn_rq_sge k = { (uintptr_t)sink.p, 64, sink.stag };
	assert_int_equal(q_rdma(&f->a, 1, RN_WR_RDMA_READ, RN_SEND_SIGNALED, &k, 1, stag,
				(uintptr_t)gone), RN_OK);
	run_to_error(f);
	q_expect(&f->a, &f->b, f->a.scq, 1, RN_WC_FLUSHED);
	assert_int_equal(q_event(&f->d, f->b.qp), RN_AE_IRRQ_ACCESS);
	assert_int_equal(q_event(&f->d, f->a.qp), RN_AE_TERMINATE_RECEIVED);
	struct rn_qp_info qa;
	assert_int_equal(rn_qp_query(f->a.qp, &qa), RN_OK);
	assert_int_equal(iwarp_err_u16(qa.term.err), 0x0102);
	check_untouched(&sink);
	assert_int_equal(rn_mem_dereg(f->d.mem, stag), RN_OK);
	qbuf_free(&f->d, &sink);
}

/* A local Send from it: small (copied) completes with an access violation; large (sent by
 * reference, with CRC read for the CRC, without it the kernel's EFAULT) fails the QP. A
 * reaches Error either way, without a signal. */
static void send_from_gone(struct fx *f, uint32_t n, bool crc, enum rn_wc_status want)
{
	uint8_t *gone;
	q_connect(&f->a, &f->b, crc);
	rn_stag_t stag = gone_mr(f, 1u << 20, RN_ACC_LOCAL_WRITE, &gone);
	struct rn_rq_sge s = { (uintptr_t)gone, n, stag };
	assert_int_equal(q_send(&f->a, 1, RN_WR_SEND, RN_SEND_SIGNALED, &s, 1), RN_OK);
	run_to_error(f);
	struct rn_cqe e;
	assert_true(q_poll(&f->a, &f->b, f->a.scq, &e));
	assert_int_equal(e.wr_id, 1);
	/* by reference without CRC: the fault shows in the segment's copy (access violation)
	 * or, when the kernel's sendmsg met it, as the QP's failure (flushed) */
	if (e.status != want)
		assert_int_equal(e.status, want == RN_WC_FLUSHED ? RN_WC_ACCESS_VIOLATION : want);
	assert_int_equal(rn_mem_dereg(f->d.mem, stag), RN_OK);
}

static void test_send_unmapped_small(void **state)
{
	send_from_gone(*state, 64, false, RN_WC_ACCESS_VIOLATION);
}

static void test_send_unmapped_zc_crc(void **state)
{
	send_from_gone(*state, 64 * 1024, true, RN_WC_ACCESS_VIOLATION);
}

static void test_send_unmapped_zc(void **state)
{
	send_from_gone(*state, 64 * 1024, false, RN_WC_FLUSHED);
}

/* T13: Send with no Receive posted -> 0x1202 (DDP "no buffer"), RQ MSN range event. */
static void test_send_no_recv_T13(void **state)
{
	struct fx *f = *state;
	q_connect(&f->a, &f->b, false);
	assert_int_equal(q_send(&f->a, 1, RN_WR_SEND, RN_SEND_SIGNALED, NULL, 0), RN_OK);
	run_to_error(f);
	q_expect(&f->a, &f->b, f->a.scq, 1, RN_WC_SUCCESS);
	check_term(f, 0x1202, true, RN_AE_RQ_MSN_RANGE);
}

/* T12: Receive too small -> B's RQ WC Base and Bounds, Terminate DDP 0x1205, no async at B. */
static void test_recv_too_small_T12(void **state)
{
	struct fx *f = *state;
	struct qbuf src, dst;
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &src, 100, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &dst, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	assert_int_equal(q_recv(&f->b, 9, &dst, 0, 64), RN_OK);
	assert_int_equal(q_recv(&f->b, 10, &dst, 0, 64), RN_OK);
	struct rn_rq_sge s = { (uintptr_t)src.p, 100, src.stag };
	assert_int_equal(q_send(&f->a, 1, RN_WR_SEND, RN_SEND_SIGNALED, &s, 1), RN_OK);
	assert_int_equal(q_send(&f->a, 2, RN_WR_SEND, RN_SEND_SIGNALED, &s, 1), RN_OK);
	run_to_error(f);
	q_expect(&f->a, &f->b, f->b.rcq, 9, RN_WC_BASE_BOUNDS);
	q_expect(&f->a, &f->b, f->b.rcq, 10, RN_WC_FLUSHED);
	check_term(f, 0x1205, true, RN_AE_NONE);
	check_untouched(&dst);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &dst);
}

/* T11: [unsignaled Send OK, signaled Send with a bad SGE STag, 3 unsignaled Sends]: one error
 * WC, three Flushed, nothing for WR 1; peer gets Terminate 0x0000. */
static void test_error_flush_shape_T11(void **state)
{
	struct fx *f = *state;
	struct qbuf src, r;
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &src, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &r, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	assert_int_equal(q_recv(&f->b, 100, &r, 0, 64), RN_OK);
	struct rn_rq_sge good = { (uintptr_t)src.p, 8, src.stag };
	struct rn_rq_sge bad = { (uintptr_t)src.p, 8, src.stag + 0x100 };
	struct rn_send_wr w[5];
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 5; i++) {
		w[i].wr_id = (uint64_t)i + 1;
		w[i].opcode = RN_WR_SEND;
		w[i].sg_list = i == 1 ? &bad : &good;
		w[i].num_sge = 1;
		w[i].flags = i == 1 ? RN_SEND_SIGNALED : 0;
		w[i].next = i < 4 ? &w[i + 1] : NULL;
	}
	assert_int_equal(rn_qp_post_send(f->a.qp, w, NULL, NULL), RN_OK);
	run_to_error(f);
	q_expect(&f->a, &f->b, f->a.scq, 2, RN_WC_INVALID_STAG);
	for (int i = 3; i <= 5; i++)
		q_expect(&f->a, &f->b, f->a.scq, (uint64_t)i, RN_WC_FLUSHED);
	assert_true(q_cq_empty(f->a.scq));
	q_expect(&f->a, &f->b, f->b.rcq, 100, RN_WC_SUCCESS);   /* WR 1 arrived */
	/* A sent 0x0000 with no header copy; B got it */
	struct rn_qp_info qa, qb;
	assert_int_equal(rn_qp_query(f->a.qp, &qa), RN_OK);
	assert_int_equal(rn_qp_query(f->b.qp, &qb), RN_OK);
	assert_true(qa.term_local && !qb.term_local && qb.term_valid);
	assert_int_equal(iwarp_err_u16(qb.term.err), 0x0000);
	assert_false(qb.term.d);
	assert_int_equal(q_event(&f->d, f->a.qp), RN_AE_NONE);
	assert_int_equal(q_event(&f->d, f->b.qp), RN_AE_TERMINATE_RECEIVED);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &r);
}

static void ord0(struct rn_qp_init_attr *a)
{
	a->ord = 0;
}

/* T18: ORD 0 and a Read -> WC Zero RDMA Read Resources, QP -> Terminate -> Error. */
static void test_zero_ord_T18(void **state)
{
	struct fx *f = *state;
	qside_destroy(&f->a);
	qside_create(&f->a, &f->d, ord0);
	q_connect(&f->a, &f->b, false);
	assert_int_equal(q_rdma(&f->a, 1, RN_WR_RDMA_READ, 0, NULL, 0, 1, 0), RN_OK);
	run_to_error(f);
	q_expect(&f->a, &f->b, f->a.scq, 1, RN_WC_ZERO_ORD);
}

static void ird2(struct rn_qp_init_attr *a)
{
	a->ird = 2;
}

/* T18: three Read Requests to a peer with IRD 2 -> IRRQ too many (0x1203). */
static void test_ird_exceeded_T18(void **state)
{
	struct fx *f = *state;
	struct qbuf remote, sink;
	qside_destroy(&f->b);
	qside_create(&f->b, &f->d, ird2);
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &remote, 64, f->d.pd, ACC_ALL);
	qbuf_new(&f->d, &sink, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	for (int i = 0; i < 3; i++) {
		struct rn_rq_sge k = { (uintptr_t)sink.p, 64, sink.stag };
		assert_int_equal(q_rdma(&f->a, i, RN_WR_RDMA_READ, RN_SEND_SIGNALED, &k, 1,
					remote.stag, (uintptr_t)remote.p), RN_OK);
	}
	run_to_error(f);
	check_term(f, 0x1203, true, RN_AE_IRRQ_TOO_MANY_READS);
	qbuf_free(&f->d, &remote);
	qbuf_free(&f->d, &sink);
}

/* T23/T15: Bind a type-2 window over part of an MR, the peer writes through it; a write one
 * byte past the window fails although the MR is larger; MR bytes outside stay. */
static void test_bind_mw_remote_T23(void **state)
{
	struct fx *f = *state;
	struct qbuf src, mr;
	rn_stag_t mw;
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &src, 256, f->d.pd, RN_ACC_LOCAL_WRITE);
	memset(src.p, 0x42, 256);
	qbuf_new(&f->d, &mr, 1024, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_MW_BIND);
	rn_stag_t wst = q_bind_mw2(&f->a, &f->b, &mr, (uintptr_t)mr.p + 256, 256, 0x33, &mw);
	/* Destroy QP is refused while the window is bound to it (T33) */
	assert_int_equal(rn_qp_destroy(f->b.qp), RN_ERR_MW_BOUND_TO_QP);
	struct rn_rq_sge s = { (uintptr_t)src.p, 256, src.stag };
	assert_int_equal(q_rdma(&f->a, 1, RN_WR_RDMA_WRITE, RN_SEND_SIGNALED, &s, 1, wst,
				(uintptr_t)mr.p + 256), RN_OK);
	q_expect(&f->a, &f->b, f->a.scq, 1, RN_WC_SUCCESS);
	q_run(&f->a, &f->b, 50, NULL, NULL);
	assert_int_equal(mr.p[256], 0x42);
	assert_int_equal(mr.p[511], 0x42);
	/* one byte past the window */
	assert_int_equal(q_rdma(&f->a, 2, RN_WR_RDMA_WRITE, 0, &s, 1, wst, (uintptr_t)mr.p + 257),
			 RN_OK);
	run_to_error(f);
	assert_int_equal(mr.p[255], 0);
	assert_int_equal(mr.p[512], 0);
	check_term(f, 0x1101, true, RN_AE_PROT_BASE_BOUNDS);
	/* free the window so Destroy QP succeeds */
	assert_int_equal(rn_mem_dereg(f->d.mem, mw), RN_OK);
	qbuf_free(&f->d, &src);
	qbuf_free(&f->d, &mr);
}

/* T22 / T21: Fast-Register an MR on B, A writes into it, B invalidates it locally with Local
 * Fence, then A's next Write fails with Invalid STag at B. */
static void test_fast_reg_inv_T22(void **state)
{
	struct fx *f = *state;
	struct qbuf src;
	rn_stag_t st;
	uint8_t *page = aligned_alloc(4096, 8192);
	memset(page, 0, 8192);
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &src, 100, f->d.pd, RN_ACC_LOCAL_WRITE);
	memset(src.p, 0x61, 100);
	assert_int_equal(rn_mem_alloc_mr(f->d.mem, f->d.pd, 2, true, &st), RN_OK);
	uint64_t pages[2] = { (uintptr_t)page, (uintptr_t)page + 4096 };
	rn_stag_t nst = RN_STAG(RN_STAG_IDX(st), 0x5c);
	struct rn_send_wr w;
	memset(&w, 0, sizeof(w));
	w.wr_id = 60;
	w.opcode = RN_WR_FAST_REG;
	w.flags = RN_SEND_SIGNALED;
	w.wr.fast_reg = (struct rn_fr_wr){ nst, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE,
					   (uintptr_t)page, 8192, 0, 12, 2, pages };
	assert_int_equal(rn_qp_post_send(f->b.qp, &w, NULL, NULL), RN_OK);
	q_expect(&f->a, &f->b, f->b.scq, 60, RN_WC_SUCCESS);
	struct rn_rq_sge s = { (uintptr_t)src.p, 100, src.stag };
	/* across the page boundary of the page list */
	assert_int_equal(q_rdma(&f->a, 1, RN_WR_RDMA_WRITE, RN_SEND_SIGNALED, &s, 1, nst,
				(uintptr_t)page + 4050), RN_OK);
	q_expect(&f->a, &f->b, f->a.scq, 1, RN_WC_SUCCESS);
	q_run(&f->a, &f->b, 50, NULL, NULL);
	assert_int_equal(page[4050], 0x61);
	assert_int_equal(page[4149], 0x61);
	assert_int_equal(page[4150], 0);
	memset(&w, 0, sizeof(w));
	w.wr_id = 61;
	w.opcode = RN_WR_LOCAL_INV;
	w.flags = RN_SEND_SIGNALED | RN_SEND_LOCAL_FENCE;
	w.wr.inv.stag = nst;
	assert_int_equal(rn_qp_post_send(f->b.qp, &w, NULL, NULL), RN_OK);
	q_expect(&f->a, &f->b, f->b.scq, 61, RN_WC_SUCCESS);
	assert_int_equal(q_rdma(&f->a, 2, RN_WR_RDMA_WRITE, 0, &s, 1, nst, (uintptr_t)page), RN_OK);
	run_to_error(f);
	assert_int_equal(page[0], 0);
	check_term(f, 0x1100, true, RN_AE_PROT_INVALID_STAG);
	rn_mem_dereg(f->d.mem, nst);
	free(page);
	qbuf_free(&f->d, &src);
}

static void unprivileged(struct rn_qp_init_attr *a)
{
	a->privileged = false;
}

/* T22: Fast-Register on a QP without the privilege -> WC "QP not privileged", Terminate. */
static void test_fast_reg_unprivileged_T22(void **state)
{
	struct fx *f = *state;
	rn_stag_t st;
	qside_destroy(&f->a);
	qside_create(&f->a, &f->d, unprivileged);
	q_connect(&f->a, &f->b, false);
	assert_int_equal(rn_mem_alloc_mr(f->d.mem, f->d.pd, 1, true, &st), RN_OK);
	struct rn_send_wr w;
	memset(&w, 0, sizeof(w));
	w.wr_id = 7;
	w.opcode = RN_WR_FAST_REG;
	w.wr.fast_reg.stag = st;
	assert_int_equal(rn_qp_post_send(f->a.qp, &w, NULL, NULL), RN_OK);
	run_to_error(f);
	q_expect(&f->a, &f->b, f->a.scq, 7, RN_WC_QP_NOT_PRIVILEGED);
	assert_int_equal(q_event(&f->d, f->b.qp), RN_AE_TERMINATE_RECEIVED);
	rn_mem_dereg(f->d.mem, st);
}

/* T26 negative: the MR lacks the remote-invalidate right -> B's Receive "remote invalidate
 * request error", Terminate 0x0102. */
static void test_send_inv_no_right_T26(void **state)
{
	struct fx *f = *state;
	struct qbuf dst, m;
	q_connect(&f->a, &f->b, false);
	qbuf_new(&f->d, &dst, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	qbuf_new(&f->d, &m, 64, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE);
	assert_int_equal(q_recv(&f->b, 5, &dst, 0, 64), RN_OK);
	struct rn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = RN_WR_SEND_INV;
	wr.wr.send.inv_stag = m.stag;
	assert_int_equal(rn_qp_post_send(f->a.qp, &wr, NULL, NULL), RN_OK);
	run_to_error(f);
	q_expect(&f->a, &f->b, f->b.rcq, 5, RN_WC_REM_INV_REQ);
	check_term(f, 0x0102, true, RN_AE_NONE);
	struct rn_mem_info mi;
	assert_int_equal(rn_mem_query_mr(f->d.mem, m.stag, &mi), RN_OK);
	assert_int_equal(mi.state, RN_MEM_VALID);
	qbuf_free(&f->d, &dst);
	qbuf_free(&f->d, &m);
}

/* T35: B receives FIN while its SQ holds a WR (a Read whose response never comes, because A
 * is Closing) -> B "Bad LLP Close", Terminate, Error, the Read Flushed. */
static void test_bad_llp_close_T35(void **state)
{
	struct fx *f = *state;
	q_connect(&f->a, &f->b, false);
	struct rn_qp_mod m = { .next = RN_QPS_CLOSING };
	assert_int_equal(rn_qp_modify_qp(f->a.qp, &m, NULL), RN_OK);
	/* B's Read Request goes out before B reads A's FIN */
	assert_int_equal(q_rdma(&f->b, 1, RN_WR_RDMA_READ, 0, NULL, 0, 1, 0), RN_OK);
	q_run(&f->a, &f->b, Q_WAIT_MS, both_error, f);
	assert_int_equal(q_state(&f->b), RN_QPS_ERROR);
	assert_int_equal(q_event(&f->d, f->b.qp), RN_AE_BAD_LLP_CLOSE);
	q_expect(&f->a, &f->b, f->b.scq, 1, RN_WC_FLUSHED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_other_pd_T14, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_write_wrong_key_T25, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_write_bounds_T15, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_write_below_base_T15, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_write_no_rights_T16, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_write_not_enabled_T16, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_read_no_rights_T16, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_write_remote_wrap, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_write_unmapped_small, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_write_unmapped_direct, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_read_unmapped_source, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_send_unmapped_small, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_send_unmapped_zc_crc, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_send_unmapped_zc, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_send_no_recv_T13, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_recv_too_small_T12, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_error_flush_shape_T11, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_zero_ord_T18, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_ird_exceeded_T18, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_bind_mw_remote_T23, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fast_reg_inv_T22, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fast_reg_unprivileged_T22, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_send_inv_no_right_T26, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_bad_llp_close_T35, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests_name("rnic_qp_err", tests, NULL, NULL);
}
