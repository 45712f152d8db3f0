/* verbs: RFC 7306 immediate data (IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM), tolerant
 * QPs (SOFTRNIC_QP_TOLERANT) and softrnic_query_qp_term, between two contexts connected over
 * 127.0.0.1 as in test_verbs_loop.c. */
#include "tv_loop.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "rnic.h"
#include "rn_transport.h"
#include "softrnic/verbs_ext.h"
#include "verbs_int.h"

static int setup(void **state)
{
	return tv_pair_setup(state, NULL, NULL);
}

/* b receives through an SRQ. */
static int setup_srq(void **state)
{
	static const struct tv_side_opt srq = { .srq = true };

	return tv_pair_setup(state, NULL, &srq);
}

/* b is a tolerant QP (VIA Unreliable service). */
static int setup_tol(void **state)
{
	static const struct tv_side_opt tol = { .ext = SOFTRNIC_QP_TOLERANT };

	return tv_pair_setup(state, NULL, &tol);
}

static struct ibv_send_wr imm_wr(uint64_t id, enum ibv_wr_opcode op, unsigned flags, uint32_t imm)
{
	struct ibv_send_wr w;

	memset(&w, 0, sizeof(w));
	w.wr_id = id;
	w.opcode = op;
	w.send_flags = flags;
	w.imm_data = htonl(imm);
	return w;
}

static void send_imm_common(struct tv_pair *p)
{
	struct ibv_send_wr w = imm_wr(1, IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED, 0x11223344);
	struct ibv_wc wc;

	tv_post_recv(&p->b, 10, 0, 4096);
	memcpy(p->a.buf, "immediate!", 11);
	tv_post_send(&p->a, &w, 0, 11);
	wc = tv_wait_wc(p->a.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_SEND);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.wr_id, 10);
	assert_int_equal(wc.byte_len, 11);
	assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(ntohl(wc.imm_data), 0x11223344);
	assert_string_equal(p->b.buf, "immediate!");
}

static void test_send_imm(void **state)
{
	send_imm_common(*state);
}

static void test_send_imm_srq(void **state)
{
	send_imm_common(*state);
}

/* Zero-length Send with immediate. */
static void test_send_imm_zero(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_send_wr w = imm_wr(2, IBV_WR_SEND_WITH_IMM, 0, 77);
	struct ibv_wc wc;

	tv_post_recv(&p->b, 11, 0, 64);
	tv_post_send(&p->a, &w, 0, 0);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.byte_len, 0);
	assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(ntohl(wc.imm_data), 77);
}

/* Write with immediate: the data is there when the Receive's WC is seen; byte_len 0. */
static void test_write_imm(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_send_wr w = imm_wr(3, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_SEND_SIGNALED, 0xabcdef);
	struct ibv_wc wc;

	for (int i = 0; i < 30000; i++)
		p->a.buf[8192 + i] = (char)(i * 11);
	w.wr.rdma.remote_addr = (uintptr_t)p->b.buf + 20000;
	w.wr.rdma.rkey = p->b.mr->rkey;
	tv_post_recv(&p->b, 12, 0, 64);
	tv_post_send(&p->a, &w, 8192, 30000);
	wc = tv_wait_wc(p->b.cq);
	assert_memory_equal(p->b.buf + 20000, p->a.buf + 8192, 30000);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(wc.wr_id, 12);
	assert_int_equal(wc.byte_len, 0);
	assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(ntohl(wc.imm_data), 0xabcdef);
	wc = tv_wait_wc(p->a.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
}

/* A CQ armed for solicited completions: an ordinary Write with immediate does not wake it,
 * the SOLICITED one does (RDMAP 0xD). */
static void test_write_imm_se(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_send_wr w = imm_wr(4, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 1);
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;
	struct ibv_wc wc;

	w.wr.rdma.remote_addr = (uintptr_t)p->b.buf;
	w.wr.rdma.rkey = p->b.mr->rkey;
	tv_post_recv(&p->b, 13, 4096, 64);
	tv_post_recv(&p->b, 14, 4096, 64);
	assert_int_equal(ibv_req_notify_cq(p->b.cq, 1), 0);
	tv_post_send(&p->a, &w, 0, 16);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.wr_id, 13);
	assert_false(tv_readable(p->b.ch->fd, 200));
	w.send_flags = IBV_SEND_SOLICITED;
	w.imm_data = htonl(2);
	tv_post_send(&p->a, &w, 0, 16);
	assert_true(tv_readable(p->b.ch->fd, TV_LOOP_WAIT_MS));
	assert_int_equal(ibv_get_cq_event(p->b.ch, &cq, &ctx), 0);
	ibv_ack_cq_events(cq, 1);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.wr_id, 14);
	assert_int_equal(ntohl(wc.imm_data), 2);
}

/* Immediate data without a Receive: b terminates (DDP 0x1202, "no buffer"), a receives it;
 * softrnic_query_qp_term reports both ends. */
static void test_imm_no_recv_term(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_send_wr w = imm_wr(5, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 1);
	struct softrnic_qp_term t;
	struct ibv_async_event ev;
	long long end = t_now_ms() + TV_LOOP_WAIT_MS;

	assert_int_equal(softrnic_query_qp_term(p->b.qp, &t), ENOENT);   /* RTS: none */
	assert_int_equal(softrnic_query_qp_term(p->b.qp, NULL), EINVAL);
	assert_int_equal(softrnic_query_qp_term(NULL, &t), EINVAL);
	w.wr.rdma.remote_addr = (uintptr_t)p->b.buf;
	w.wr.rdma.rkey = p->b.mr->rkey;
	tv_post_send(&p->a, &w, 0, 16);
	assert_true(tv_readable(p->b.ctx->async_fd, TV_LOOP_WAIT_MS));
	assert_int_equal(ibv_get_async_event(p->b.ctx, &ev), 0);
	ibv_ack_async_event(&ev);
	assert_int_equal(ev.event_type, IBV_EVENT_QP_REQ_ERR);
	while (softrnic_query_qp_term(p->a.qp, &t) != 0 && t_now_ms() < end)
		usleep(1000);
	assert_int_equal(softrnic_query_qp_term(p->a.qp, &t), 0);
	assert_int_equal(t.local, 0);
	assert_int_equal(t.layer, 1);
	assert_int_equal(t.etype, 2);
	assert_int_equal(t.ecode, 2);
	assert_int_equal(softrnic_query_qp_term(p->b.qp, &t), 0);
	assert_int_equal(t.local, 1);
	assert_int_equal(t.layer, 1);
	assert_int_equal(t.etype, 2);
	assert_int_equal(t.ecode, 2);
}

/* Tolerant: a Send with no Receive is dropped (QP_REQ_ERR, still RTS), the next one lands. */
static void test_tol_no_recv(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_send_wr w = imm_wr(6, IBV_WR_SEND, 0, 0);
	struct ibv_wc wc;

	memcpy(p->a.buf, "first", 6);
	tv_post_send(&p->a, &w, 0, 6);
	tv_expect_async(&p->b, IBV_EVENT_QP_REQ_ERR);
	tv_expect_rts(&p->b);
	tv_expect_rts(&p->a);
	tv_post_recv(&p->b, 15, 0, 64);
	memcpy(p->a.buf + 100, "second", 7);
	tv_post_send(&p->a, &w, 100, 7);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 15);
	assert_int_equal(wc.byte_len, 7);
	assert_string_equal(p->b.buf, "second");
}

/* Tolerant: too long for its Receive -> IBV_WC_LOC_LEN_ERR, nothing placed; next one lands. */
static void test_tol_too_long(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_send_wr w = imm_wr(7, IBV_WR_SEND_WITH_IMM, 0, 5);
	struct ibv_wc wc;

	memset(p->a.buf, 0x5a, 1000);
	tv_post_recv(&p->b, 16, 0, 100);
	tv_post_send(&p->a, &w, 0, 1000);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.wr_id, 16);
	assert_int_equal(wc.status, IBV_WC_LOC_LEN_ERR);
	assert_int_equal(p->b.buf[0], 0);
	tv_expect_rts(&p->b);
	tv_post_recv(&p->b, 17, 0, 4096);
	tv_post_send(&p->a, &w, 0, 1000);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 17);
	assert_int_equal(wc.byte_len, 1000);
	assert_int_equal(ntohl(wc.imm_data), 5);
	assert_int_equal((unsigned char)p->b.buf[999], 0x5a);
}

/* Tolerant: a Write with a wrong rkey is dropped (QP_ACCESS_ERR), the bytes around the
 * region are untouched; a Write with immediate follows and lands. */
static void test_tol_bad_rkey(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_send_wr w = imm_wr(8, IBV_WR_RDMA_WRITE, 0, 0);
	struct ibv_wc wc;

	memset(p->a.buf, 0x77, 256);
	w.wr.rdma.remote_addr = (uintptr_t)p->b.buf + TV_LOOP_BUFSZ - 128;
	w.wr.rdma.rkey = p->b.mr->rkey;
	tv_post_send(&p->a, &w, 0, 256);   /* past the end of b's region */
	tv_expect_async(&p->b, IBV_EVENT_QP_ACCESS_ERR);
	for (int i = 0; i < 128; i++)
		assert_int_equal(p->b.buf[TV_LOOP_BUFSZ - 128 + i], 0);
	w.wr.rdma.rkey = p->b.mr->rkey ^ 0x10;
	tv_post_send(&p->a, &w, 0, 256);
	tv_expect_async(&p->b, IBV_EVENT_QP_ACCESS_ERR);
	tv_expect_rts(&p->b);
	w = imm_wr(9, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 9);
	w.wr.rdma.remote_addr = (uintptr_t)p->b.buf + 512;
	w.wr.rdma.rkey = p->b.mr->rkey;
	tv_post_recv(&p->b, 18, 0, 64);
	tv_post_send(&p->a, &w, 0, 256);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_memory_equal(p->b.buf + 512, p->a.buf, 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_send_imm, setup, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_send_imm_srq, setup_srq, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_send_imm_zero, setup, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_write_imm, setup, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_write_imm_se, setup, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_imm_no_recv_term, setup, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_tol_no_recv, setup_tol, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_tol_too_long, setup_tol, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_tol_bad_rkey, setup_tol, tv_pair_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
