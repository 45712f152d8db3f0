/* verbs: a loopback round trip through the public API. Two contexts (two independent devices,
 * as two processes would have), one RC QP each, connected over 127.0.0.1 with rn_cm and
 * softrnic_qp_connect (what our librdmacm does); then Send, Send with Solicited Event and a
 * completion channel, RDMA Write, RDMA Read, Send with Invalidate of a type-2 window, and
 * flushes on the way down. Everything after the connect is <infiniband/verbs.h> only. */
#include "tv_loop.h"

#include <arpa/inet.h>
#include <netinet/in.h>
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

/* SQ as deep as the 128-entry CQ: the edge where a CQE per posted WR just fits. */
static int setup_sq128(void **state)
{
	static const struct tv_side_opt sq128 = { .send_wr = 128 };

	return tv_pair_setup(state, &sq128, &sq128);
}

static void test_connected_state(void **state)
{
	struct tv_pair *p = *state;

	assert_int_equal(p->a.qp->state, IBV_QPS_RTS);
	tv_expect_rts(&p->b);
	assert_int_equal(tv_modify_state(p->a.qp, IBV_QPS_INIT), EINVAL);
}

static void test_send(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_send_wr w = { .wr_id = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	tv_post_recv(&p->b, 10, 0, 4096);
	memcpy(p->a.buf, "hello softrnic", 15);
	tv_post_send(&p->a, &w, 0, 15);
	wc = tv_wait_wc(p->a.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_SEND);
	assert_int_equal(wc.wr_id, 1);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.wr_id, 10);
	assert_int_equal(wc.byte_len, 15);
	assert_int_equal(wc.qp_num, p->b.qp->qp_num);
	assert_string_equal(p->b.buf, "hello softrnic");
}

/* Inline Send with SE wakes the peer's CQ armed for solicited completions only. */
static void test_send_solicited_channel(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_send_wr w = { .wr_id = 2, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SOLICITED | IBV_SEND_INLINE };
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;
	struct ibv_wc wc;

	tv_post_recv(&p->b, 11, 4096, 4096);
	assert_int_equal(ibv_req_notify_cq(p->b.cq, 1), 0);
	memcpy(p->a.buf + 100, "inline!", 8);
	tv_post_send(&p->a, &w, 100, 8);    /* unsignaled: no WC on a */
	assert_true(tv_readable(p->b.ch->fd, TV_LOOP_WAIT_MS));
	assert_int_equal(ibv_get_cq_event(p->b.ch, &cq, &ctx), 0);
	assert_ptr_equal(cq, p->b.cq);
	assert_ptr_equal(ctx, &p->b);
	ibv_ack_cq_events(cq, 1);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.wr_id, 11);
	assert_int_equal(wc.byte_len, 8);
	assert_string_equal(p->b.buf + 4096, "inline!");
	assert_int_equal(ibv_poll_cq(p->a.cq, 1, &wc), 0);
}

static void test_write_read(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_send_wr w = { .wr_id = 3, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr r = { .wr_id = 4, .opcode = IBV_WR_RDMA_READ,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	for (int i = 0; i < 20000; i++)
		p->a.buf[8192 + i] = (char)(i * 7);
	w.wr.rdma.remote_addr = (uintptr_t)p->b.buf + 16384;
	w.wr.rdma.rkey = p->b.mr->rkey;
	tv_post_send(&p->a, &w, 8192, 20000);
	wc = tv_wait_wc(p->a.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
	/* Read it back into another part of a's buffer: the Read completes after placement */
	r.wr.rdma.remote_addr = (uintptr_t)p->b.buf + 16384;
	r.wr.rdma.rkey = p->b.mr->rkey;
	tv_post_send(&p->a, &r, 40000, 20000);
	wc = tv_wait_wc(p->a.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_READ);
	assert_int_equal(wc.wr_id, 4);
	assert_memory_equal(p->a.buf + 40000, p->a.buf + 8192, 20000);
	assert_memory_equal(p->b.buf + 16384, p->a.buf + 8192, 20000);
	assert_int_equal(ibv_poll_cq(p->b.cq, 1, &wc), 0);   /* one-sided: nothing at b */
}

/* A bad rkey: the Write completes in error at a (remote access), both QPs end in Error and
 * report it on the async fd. */
static void test_write_bad_rkey(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_send_wr w = { .wr_id = 5, .opcode = IBV_WR_RDMA_READ,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	w.wr.rdma.remote_addr = (uintptr_t)p->b.buf;
	w.wr.rdma.rkey = p->b.mr->rkey ^ 0x80;    /* wrong key */
	tv_post_send(&p->a, &w, 0, 64);
	wc = tv_wait_wc(p->a.cq);
	assert_int_equal(wc.wr_id, 5);
	assert_int_not_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_not_equal(wc.vendor_err, 0);
	tv_expect_async(&p->b, IBV_EVENT_QP_ACCESS_ERR);
}

/* Send with Invalidate of a type-2 window bound on b's QP: b's WC reports the invalidated
 * rkey, and the window's STag no longer works. */
static void test_send_inv_mw2(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_mw *mw = ibv_alloc_mw(p->b.pd, IBV_MW_TYPE_2);
	struct ibv_send_wr bind = { .wr_id = 6, .opcode = IBV_WR_BIND_MW,
				    .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_send_wr s = { .wr_id = 7, .opcode = IBV_WR_SEND_WITH_INV,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	assert_non_null(mw);
	bind.bind_mw.mw = mw;
	bind.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	bind.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = p->b.mr, .addr = (uintptr_t)p->b.buf, .length = 4096,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	assert_int_equal(ibv_post_send(p->b.qp, &bind, &bad), 0);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_BIND_MW);
	mw->rkey = bind.bind_mw.rkey;
	tv_post_recv(&p->b, 12, 8192, 64);
	s.invalidate_rkey = mw->rkey;
	tv_post_send(&p->a, &s, 0, 4);
	wc = tv_wait_wc(p->a.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 12);
	assert_true(wc.wc_flags & IBV_WC_WITH_INV);
	assert_int_equal(wc.invalidated_rkey, mw->rkey);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

/* Fast-Register (extension) needs a privileged QP: on an ordinary one it completes with
 * IBV_WC_LOC_QP_OP_ERR ("QP not privileged" in vendor_err). */
static void test_fast_reg_unprivileged(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_mr *fr = softrnic_alloc_mr(p->a.pd, 4, 1);
	uint64_t pages[1] = { (uintptr_t)p->a.buf };
	struct softrnic_fast_reg_wr w = { .wr_id = 8, .send_flags = IBV_SEND_SIGNALED, .mr = fr,
					  .key = 0x42, .access = IBV_ACCESS_LOCAL_WRITE,
					  .iova = (uintptr_t)p->a.buf, .length = 4096,
					  .page_shift = 12, .npages = 1, .pages = pages };
	struct ibv_wc wc;

	assert_non_null(fr);
	assert_int_equal(softrnic_post_fast_reg(p->a.qp, &w), 0);
	assert_int_equal(fr->lkey & 0xff, 0x42);
	wc = tv_wait_wc(p->a.cq);
	assert_int_equal(wc.wr_id, 8);
	assert_int_equal(wc.status, IBV_WC_LOC_QP_OP_ERR);
	assert_string_equal(softrnic_wc_vendor_str(wc.vendor_err), "QP not in privileged mode");
	assert_int_equal(ibv_dereg_mr(fr), 0);
}

/* Post 64 KiB signaled Writes until ENOMEM, then poll: SQ space comes back only when a
 * completion is polled (RDMA Verbs §8.2.4), so the 128-entry CQ never overflows however far the
 * progress engine runs ahead, and the QP stays in RTS. 500 Writes, in order. */
static void test_post_until_enomem(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_sge sge = { (uintptr_t)p->a.buf, TV_LOOP_BUFSZ, p->a.mr->lkey };
	struct ibv_send_wr w = { .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc[16];
	long long end = t_now_ms() + 4 * TV_LOOP_WAIT_MS;
	int posted = 0, done = 0, enomem = 0, first = -1;

	w.wr.rdma.remote_addr = (uintptr_t)p->b.buf;
	w.wr.rdma.rkey = p->b.mr->rkey;
	while (done < 500 && t_now_ms() < end) {
		int rc = 0;

		while (posted < 500 && (w.wr_id = (uint64_t)posted,
					rc = ibv_post_send(p->a.qp, &w, &bad)) == 0)
			posted++;
		if (rc == ENOMEM && first < 0)
			first = posted;     /* nothing polled yet: exactly the SQ depth */
		enomem += rc == ENOMEM;
		assert_true(rc == 0 || rc == ENOMEM);
		assert_true(posted - done <= 128);
		int n = ibv_poll_cq(p->a.cq, 16, wc);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++, done++) {
			assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
			assert_int_equal(wc[i].wr_id, (uint64_t)done);
		}
	}
	assert_int_equal(done, 500);
	assert_int_equal(first, 128);
	assert_true(enomem > 0);
	tv_expect_rts(&p->a);
	assert_false(tv_readable(p->a.ctx->async_fd, 0));   /* no CQ or QP error event */
}

static unsigned qp_access(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa;

	assert_int_equal(ibv_query_qp(qp, &qa, IBV_QP_ACCESS_FLAGS, &qi), 0);
	return qa.qp_access_flags;
}

static void set_access(struct ibv_qp *qp, unsigned flags)
{
	struct ibv_qp_attr qa = { .qp_access_flags = flags };

	assert_int_equal(ibv_modify_qp(qp, &qa, IBV_QP_ACCESS_FLAGS), 0);
	assert_int_equal(qp_access(qp) & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE),
			 flags & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE));
}

/* IBV_QP_ACCESS_FLAGS in RTS (D218): a QP without REMOTE_WRITE still gets the
 * Read Responses of its own Reads (libibverbs semantics); a peer's Write to a QP that dropped
 * REMOTE_WRITE is refused (Terminate) and the target reports QP_ACCESS_ERR. */
static void test_access_flags_rts(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_send_wr r = { .wr_id = 30, .opcode = IBV_WR_RDMA_READ,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr w = { .wr_id = 31, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	set_access(p->a.qp, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	memset(p->b.buf, 0x3c, 4096);
	r.wr.rdma.remote_addr = (uintptr_t)p->b.buf;
	r.wr.rdma.rkey = p->b.mr->rkey;
	tv_post_send(&p->a, &r, 0, 4096);
	wc = tv_wait_wc(p->a.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_memory_equal(p->a.buf, p->b.buf, 4096);
	set_access(p->b.qp, IBV_ACCESS_LOCAL_WRITE);
	w.wr.rdma.remote_addr = (uintptr_t)p->b.buf;
	w.wr.rdma.rkey = p->b.mr->rkey;
	memset(p->a.buf, 0x11, 64);
	tv_post_send(&p->a, &w, 0, 64);   /* completes at a when sent (when the transport took it) */
	wc = tv_wait_wc(p->a.cq);
	assert_int_equal(wc.wr_id, 31);
	tv_expect_async(&p->b, IBV_EVENT_QP_ACCESS_ERR);
	assert_int_equal(p->b.buf[0], 0x3c);   /* nothing placed */
}

/* D220: a graceful close (SQD, what rdma_disconnect does) ends both QPs in ERR, not RESET;
 * the peer's posted Receive is flushed, and one posted after the close completes too. */
static void test_peer_close_ends_in_error(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_wc wc;

	tv_post_recv(&p->b, 40, 0, 64);
	assert_int_equal(tv_modify_state(p->a.qp, IBV_QPS_SQD), 0);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.wr_id, 40);
	assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
	assert_true(tv_wait_state(p->b.qp, IBV_QPS_ERR, TV_LOOP_WAIT_MS));
	assert_true(tv_wait_state(p->a.qp, IBV_QPS_ERR, TV_LOOP_WAIT_MS));
	tv_post_recv(&p->b, 41, 64, 64);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.wr_id, 41);
	assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(ibv_poll_cq(p->b.cq, 1, &wc), 0);
	assert_int_equal(tv_modify_state(p->b.qp, IBV_QPS_RESET), 0);
}

/* D221: a completion still queued when its QP is destroyed can be polled afterwards (as with
 * Linux siw; libfabric's rxm polls after destroying a disconnected QP). */
static void test_destroy_keeps_cqes(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_send_wr w = { .wr_id = 3, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_INLINE };
	struct ibv_qp_init_attr ia = { .send_cq = p->b.cq, .recv_cq = p->b.cq,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 },
				       .qp_type = IBV_QPT_RC };
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;
	struct ibv_wc wc;
	uint32_t qp_num = p->b.qp->qp_num;

	tv_post_recv(&p->b, 60, 0, 64);
	assert_int_equal(ibv_req_notify_cq(p->b.cq, 0), 0);
	memcpy(p->a.buf + 200, "last", 5);
	tv_post_send(&p->a, &w, 200, 5);
	assert_true(tv_readable(p->b.ch->fd, TV_LOOP_WAIT_MS));   /* the Receive completed */
	assert_int_equal(ibv_get_cq_event(p->b.ch, &cq, &ctx), 0);
	ibv_ack_cq_events(cq, 1);
	assert_int_equal(ibv_destroy_qp(p->b.qp), 0);
	p->b.qp = ibv_create_qp(p->b.pd, &ia);   /* for the teardown */
	assert_non_null(p->b.qp);
	assert_int_equal(ibv_poll_cq(p->b.cq, 1, &wc), 1);
	assert_int_equal(wc.wr_id, 60);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 5);
	assert_int_equal(wc.qp_num, qp_num);
	assert_string_equal(p->b.buf, "last");
}

/* ERR flushes what is posted; RESET brings the QP back to Idle. */
static void test_flush_and_reset(void **state)
{
	struct tv_pair *p = *state;
	struct ibv_wc wc;
	int n = 0;

	tv_post_recv(&p->b, 20, 0, 64);
	tv_post_recv(&p->b, 21, 64, 64);
	assert_int_equal(tv_modify_state(p->b.qp, IBV_QPS_ERR), 0);
	while (n < 2) {
		wc = tv_wait_wc(p->b.cq);
		assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
		assert_int_equal(wc.wr_id, 20 + (uint64_t)n++);
	}
	assert_int_equal(tv_modify_state(p->b.qp, IBV_QPS_RESET), 0);
	assert_int_equal(p->b.qp->state, IBV_QPS_RESET);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_connected_state, setup, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_send, setup, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_send_solicited_channel, setup,
						tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_write_read, setup, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_write_bad_rkey, setup, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_send_inv_mw2, setup, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_fast_reg_unprivileged, setup,
						tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_flush_and_reset, setup, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_peer_close_ends_in_error, setup,
						tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_destroy_keeps_cqes, setup, tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_post_until_enomem, setup_sq128,
						tv_pair_teardown),
		cmocka_unit_test_setup_teardown(test_access_flags_rts, setup, tv_pair_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
