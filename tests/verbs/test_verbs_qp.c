/* verbs: QP create / query / modify / destroy, the IB <-> iWARP state mapping, posting in Idle
 * (queued, nothing completes) and in Error (flushed completions), completion channel and
 * async event fds, in-use errors, bad work requests. No connection: see test_verbs_loop.c. */
#include "tv_util.h"

#include <fcntl.h>

static char buf[8192] __attribute__((aligned(4096)));

static void test_qp_create_query(void **state)
{
	struct tv *t = *state;
	struct ibv_qp_init_attr ia = { .qp_context = buf, .send_cq = t->cq, .recv_cq = t->cq,
				       .cap = { .max_send_wr = 5, .max_recv_wr = 7,
						.max_send_sge = 2, .max_recv_sge = 3,
						.max_inline_data = 64 },
				       .qp_type = IBV_QPT_RC, .sq_sig_all = 1 };
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa;
	struct ibv_qp *qp = ibv_create_qp(t->pd, &ia);

	assert_non_null(qp);
	assert_true(ia.cap.max_send_wr >= 5 && ia.cap.max_recv_wr >= 7);
	assert_true(ia.cap.max_send_sge >= 2 && ia.cap.max_recv_sge >= 3);
	assert_true(ia.cap.max_inline_data >= 64);
	assert_int_equal(qp->state, IBV_QPS_RESET);
	assert_int_equal(qp->qp_type, IBV_QPT_RC);
	assert_ptr_equal(qp->qp_context, buf);
	assert_true(qp->qp_num != 0);
	assert_int_equal(ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_CAP, &qi), 0);
	assert_int_equal(qa.qp_state, IBV_QPS_INIT);   /* iWARP Idle (test_verbs_semantics) */
	assert_int_equal(qa.cap.max_send_wr, ia.cap.max_send_wr);
	assert_int_equal(qi.sq_sig_all, 1);
	assert_ptr_equal(qi.send_cq, t->cq);
	assert_true(qa.max_rd_atomic > 0 && qa.max_dest_rd_atomic > 0);
	assert_true(qa.qp_access_flags & IBV_ACCESS_REMOTE_READ);
	assert_int_equal(ibv_destroy_cq(t->cq), EBUSY);   /* in use by the QP */
	assert_int_equal(ibv_dealloc_pd(t->pd), EBUSY);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_query_qp(NULL, &qa, 0, &qi), EINVAL);
	assert_int_equal(ibv_destroy_qp(NULL), EINVAL);
}

static void test_qp_create_errors(void **state)
{
	struct tv *t = *state;
	struct ibv_device_attr da;
	struct ibv_cq fakecq = { .context = t->ctx };
	struct ibv_qp_init_attr ia = { .send_cq = t->cq, .recv_cq = t->cq,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1 },
				       .qp_type = IBV_QPT_UD };

	assert_int_equal(ibv_query_device(t->ctx, &da), 0);
	errno = 0;
	assert_null(ibv_create_qp(t->pd, &ia));          /* UD: not on iWARP */
	assert_int_equal(errno, EOPNOTSUPP);
	ia.qp_type = IBV_QPT_UC;
	assert_null(ibv_create_qp(t->pd, &ia));
	ia.qp_type = IBV_QPT_RC;
	assert_null(ibv_create_qp(NULL, &ia));
	assert_null(ibv_create_qp(t->pd, NULL));
	ia.send_cq = NULL;
	errno = 0;
	assert_null(ibv_create_qp(t->pd, &ia));
	assert_int_equal(errno, EINVAL);
	ia.send_cq = &fakecq;
	assert_null(ibv_create_qp(t->pd, &ia));
	ia.send_cq = t->cq;
	ia.cap.max_send_wr = (uint32_t)da.max_qp_wr + 1;
	errno = 0;
	assert_null(ibv_create_qp(t->pd, &ia));
	assert_int_equal(errno, EINVAL);
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_sge = (uint32_t)da.max_sge + 1;
	assert_null(ibv_create_qp(t->pd, &ia));
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = 1u << 20;
	assert_null(ibv_create_qp(t->pd, &ia));
}

static void test_qp_states(void **state)
{
	struct tv *t = *state;
	struct ibv_qp *qp = tv_qp(t, NULL, 4);
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr a;

	assert_non_null(qp);
	/* The IB sequence with IB attributes: accepted (ignored ones) in Idle */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					       IBV_QP_ACCESS_FLAGS), 0);
	assert_int_equal(qp->state, IBV_QPS_INIT);
	assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_STATE, &qi), 0);
	assert_int_equal(a.qp_state, IBV_QPS_INIT);
	/* access flags apply in Idle (INIT -> INIT): Remote Write off, Read on */
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_ACCESS_FLAGS), 0);
	assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_ACCESS_FLAGS, &qi), 0);
	assert_true(a.qp_access_flags & IBV_ACCESS_REMOTE_READ);
	assert_false(a.qp_access_flags & IBV_ACCESS_REMOTE_WRITE);
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_ACCESS_FLAGS), 0);
	assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_STATE, &qi), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 7;
	a.rq_psn = 1;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
			 0);
	assert_int_equal(qp->state, IBV_QPS_RTR);
	assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_STATE, &qi), 0);
	assert_int_equal(a.qp_state, IBV_QPS_RTR);
	assert_int_equal(a.max_dest_rd_atomic, 4);
	/* RTS needs a connection (rdma_cm): EINVAL, state unchanged */
	assert_int_equal(tv_modify_state(qp, IBV_QPS_RTS), EINVAL);
	assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_STATE, &qi), 0);
	assert_int_equal(a.qp_state, IBV_QPS_RTR);
	/* wrong current state, bad port, unknown bits, alt path */
	a.qp_state = IBV_QPS_INIT;
	a.cur_qp_state = IBV_QPS_RTS;
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE), EINVAL);
	a.port_num = 2;
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_PORT), EINVAL);
	assert_int_equal(ibv_modify_qp(qp, &a, 1 << 30), EINVAL);
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_ALT_PATH), EOPNOTSUPP);
	a.qp_state = (enum ibv_qp_state)IBV_QPS_UNKNOWN;
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	assert_int_equal(ibv_modify_qp(NULL, &a, IBV_QP_STATE), EINVAL);
	assert_int_equal(ibv_modify_qp(qp, NULL, IBV_QP_STATE), EINVAL);
	/* Error, then back to RESET; INIT from ERR is not a transition */
	assert_int_equal(tv_modify_state(qp, IBV_QPS_ERR), 0);
	assert_int_equal(qp->state, IBV_QPS_ERR);
	assert_int_equal(tv_modify_state(qp, IBV_QPS_INIT), EINVAL);
	assert_int_equal(tv_modify_state(qp, IBV_QPS_RESET), 0);
	assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_STATE, &qi), 0);
	assert_int_equal(a.qp_state, IBV_QPS_RESET);
	assert_int_equal(tv_modify_state(qp, IBV_QPS_INIT), 0);
	assert_int_equal(ibv_destroy_qp(qp), 0);
}

static void post_recv_n(struct ibv_qp *qp, int n, uint64_t base)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64, .lkey = 0 };

	for (int i = 0; i < n; i++) {
		struct ibv_recv_wr w = { .wr_id = base + (uint64_t)i, .sg_list = &sge,
					 .num_sge = 1 }, *bad = NULL;

		assert_int_equal(ibv_post_recv(qp, &w, &bad), 0);
	}
}

static int post_send1(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id, unsigned flags,
		      struct ibv_mr *mr)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 32, .lkey = mr->lkey };
	struct ibv_send_wr w = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				 .send_flags = flags }, *bad = NULL;

	w.wr.rdma.remote_addr = 0x1000;
	w.wr.rdma.rkey = 0x1234;
	return ibv_post_send(qp, &w, &bad);
}

/* Idle holds WRs without completing them; Error flushes each with its wr_id. */
static void test_post_idle_then_flush(void **state)
{
	struct tv *t = *state;
	struct ibv_mr *mr = ibv_reg_mr(t->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp *qp = tv_qp(t, NULL, 8);
	struct ibv_wc wc[16];
	int n, sends = 0, recvs = 0;

	assert_non_null(qp);
	post_recv_n(qp, 3, 100);
	assert_int_equal(post_send1(qp, IBV_WR_SEND, 1, IBV_SEND_SIGNALED, mr), 0);
	assert_int_equal(post_send1(qp, IBV_WR_RDMA_WRITE, 2, IBV_SEND_SIGNALED, mr), 0);
	assert_int_equal(post_send1(qp, IBV_WR_RDMA_READ, 3, 0, mr), 0);    /* unsignaled */
	assert_int_equal(post_send1(qp, IBV_WR_SEND_WITH_INV, 4,
				    IBV_SEND_SIGNALED | IBV_SEND_SOLICITED, mr), 0);
	assert_int_equal(ibv_poll_cq(t->cq, 16, wc), 0);       /* queued, nothing completes */
	assert_int_equal(tv_modify_state(qp, IBV_QPS_ERR), 0);
	n = ibv_poll_cq(t->cq, 16, wc);
	assert_true(n >= 6);   /* 3 receives + the signaled sends (+ maybe the unsignaled one) */
	for (int i = 0; i < n; i++) {
		assert_int_equal(wc[i].status, IBV_WC_WR_FLUSH_ERR);
		assert_int_equal(wc[i].qp_num, qp->qp_num);
		if (wc[i].wr_id >= 100)
			assert_int_equal(wc[i].wr_id, 100 + (uint64_t)recvs++);
		else
			sends++;
	}
	assert_int_equal(recvs, 3);
	assert_true(sends >= 3);
	/* Error, libibverbs' rule (docs/verbs.md): posts are accepted and flushed, in post order */
	assert_int_equal(post_send1(qp, IBV_WR_SEND, 9, IBV_SEND_SIGNALED, mr), 0);
	post_recv_n(qp, 1, 200);
	assert_int_equal(ibv_poll_cq(t->cq, 16, wc), 2);
	assert_int_equal(wc[0].wr_id, 9);
	assert_int_equal(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(wc[0].opcode, IBV_WC_SEND);
	assert_int_equal(wc[1].wr_id, 200);
	assert_int_equal(wc[1].status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
}

static void test_post_errors(void **state)
{
	struct tv *t = *state;
	struct ibv_mr *mr = ibv_reg_mr(t->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp *qp = tv_qp(t, NULL, 2);
	struct ibv_sge sge[3] = { { (uintptr_t)buf, 8, mr->lkey }, { (uintptr_t)buf, 8, mr->lkey },
				  { (uintptr_t)buf, 8, mr->lkey } };
	struct ibv_send_wr w[3], *bad = NULL;
	struct ibv_recv_wr r = { .sg_list = sge, .num_sge = 3 }, *rbad = NULL;

	memset(w, 0, sizeof(w));
	for (int i = 0; i < 3; i++) {
		w[i].wr_id = (uint64_t)i;
		w[i].sg_list = sge;
		w[i].num_sge = 1;
		w[i].opcode = IBV_WR_SEND;
		w[i].next = i < 2 ? &w[i + 1] : NULL;
	}
	w[1].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;     /* no atomics */
	assert_int_equal(ibv_post_send(qp, w, &bad), EINVAL);
	assert_ptr_equal(bad, &w[1]);                  /* w[0] was posted */
	w[1].opcode = IBV_WR_TSO;                      /* raw Ethernet only */
	assert_int_equal(ibv_post_send(qp, &w[1], &bad), EINVAL);
	assert_ptr_equal(bad, &w[1]);
	w[1].opcode = IBV_WR_SEND;
	w[1].send_flags = IBV_SEND_IP_CSUM;
	assert_int_equal(ibv_post_send(qp, &w[1], &bad), EINVAL);
	w[1].send_flags = 0;
	w[1].num_sge = 3;                              /* over max_send_sge */
	assert_int_equal(ibv_post_send(qp, &w[1], &bad), EINVAL);
	assert_ptr_equal(bad, &w[1]);
	w[1].num_sge = 1;
	w[1].next = NULL;
	assert_int_equal(ibv_post_send(qp, &w[1], &bad), 0);   /* 2 of 2 */
	w[2].next = NULL;
	assert_int_equal(ibv_post_send(qp, &w[2], &bad), ENOMEM);   /* SQ full */
	assert_ptr_equal(bad, &w[2]);
	assert_int_equal(ibv_post_recv(qp, &r, &rbad), EINVAL);  /* 3 SGEs > 2 */
	assert_ptr_equal(rbad, &r);
	/* SGLs the post does not read stay unread (ASan would see a read past w[2]'s list): a
	 * Local Invalidate with a stale list, a Send whose count is over any QP's limit */
	struct ibv_send_wr li = { .opcode = IBV_WR_LOCAL_INV, .num_sge = 1,
				  .sg_list = (struct ibv_sge *)(uintptr_t)8 };
	assert_int_equal(ibv_post_send(qp, &li, &bad), ENOMEM);  /* SQ still full */
	w[2].num_sge = 1000;
	assert_int_equal(ibv_post_send(qp, &w[2], &bad), ENOMEM);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
}

static void test_srq_qp(void **state)
{
	struct tv *t = *state;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(t->pd, &sa);
	struct ibv_qp *qp = tv_qp(t, srq, 4);
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8, .lkey = 0 };
	struct ibv_recv_wr r = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa;

	assert_non_null(qp);
	assert_int_equal(ibv_post_recv(qp, &r, &bad), EINVAL);   /* RQ is the SRQ */
	assert_int_equal(ibv_post_srq_recv(srq, &r, &bad), 0);
	assert_int_equal(ibv_query_qp(qp, &qa, IBV_QP_CAP, &qi), 0);
	assert_ptr_equal(qi.srq, srq);
	assert_int_equal(ibv_destroy_srq(srq), EBUSY);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_destroy_srq(srq), 0);
}

/* Flushed completions wake an armed CQ's completion channel (poll() on its fd). */
static void test_channel_wakes(void **state)
{
	struct tv *t = *state;
	struct ibv_comp_channel *ch = ibv_create_comp_channel(t->ctx);
	int tag;
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 16, &tag, ch, 0), *got = NULL;
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq,
				       .cap = { .max_send_wr = 2, .max_recv_wr = 2,
						.max_recv_sge = 1 },
				       .qp_type = IBV_QPT_RC };
	struct ibv_qp *qp = ibv_create_qp(t->pd, &ia);
	struct ibv_wc wc[4];
	void *ctx = NULL;

	assert_non_null(qp);
	post_recv_n(qp, 1, 7);
	assert_int_equal(ibv_req_notify_cq(cq, 0), 0);
	assert_false(tv_readable(ch->fd, 0));
	assert_int_equal(tv_modify_state(qp, IBV_QPS_ERR), 0);
	assert_true(tv_readable(ch->fd, 2000));
	assert_int_equal(ibv_get_cq_event(ch, &got, &ctx), 0);
	assert_ptr_equal(got, cq);
	assert_ptr_equal(ctx, &tag);
	ibv_ack_cq_events(got, 1);
	assert_int_equal(cq->comp_events_completed, 1);
	assert_int_equal(ibv_poll_cq(cq, 4, wc), 1);
	assert_int_equal(wc[0].wr_id, 7);
	assert_int_equal(wc[0].opcode & IBV_WC_RECV, IBV_WC_RECV);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_destroy_comp_channel(ch), 0);
}

/* A CQ too small for the flush overflows: IBV_EVENT_CQ_ERR (and the QP's fatal event) on the
 * async fd; acked events let the resources be destroyed. */
static void test_async_events(void **state)
{
	struct tv *t = *state;
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 1, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = { .send_cq = t->cq, .recv_cq = cq,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 8,
						.max_recv_sge = 1 },
				       .qp_type = IBV_QPT_RC };
	struct ibv_qp *qp = ibv_create_qp(t->pd, &ia);
	struct ibv_async_event ev;
	int cq_err = 0, qp_ev = 0;

	assert_non_null(qp);
	post_recv_n(qp, (int)cq->cqe + 2, 0);
	assert_false(tv_readable(t->ctx->async_fd, 0));
	assert_int_equal(tv_modify_state(qp, IBV_QPS_ERR), 0);
	assert_true(tv_readable(t->ctx->async_fd, 2000));
	assert_int_equal(fcntl(t->ctx->async_fd, F_SETFL,
			       fcntl(t->ctx->async_fd, F_GETFL) | O_NONBLOCK), 0);
	while (ibv_get_async_event(t->ctx, &ev) == 0) {
		if (ev.event_type == IBV_EVENT_CQ_ERR) {
			assert_ptr_equal(ev.element.cq, cq);
			cq_err++;
		} else {
			assert_ptr_equal(ev.element.qp, qp);
			qp_ev++;
		}
		ibv_ack_async_event(&ev);
	}
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(cq_err, 1);
	assert_int_equal(cq->async_events_completed, 1);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_get_async_event(NULL, &ev), -1);
	ibv_ack_async_event(NULL);
}

/* Type-1 bind through ops.bind_mw: queued on an Idle QP, rkey advanced; flushed in Error. */
static void test_bind_mw(void **state)
{
	struct tv *t = *state;
	struct ibv_mr *mr = ibv_reg_mr(t->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(t->pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = ibv_alloc_mw(t->pd, IBV_MW_TYPE_2);
	struct ibv_qp *qp = tv_qp(t, NULL, 4);
	struct ibv_mw_bind b = { .wr_id = 55, .send_flags = IBV_SEND_SIGNALED,
				 .bind_info = { .mr = mr, .addr = (uintptr_t)buf, .length = 64,
						.mw_access_flags = IBV_ACCESS_REMOTE_WRITE } };
	struct ibv_pd *pd2 = ibv_alloc_pd(t->ctx);
	struct ibv_mr *mr2 = ibv_reg_mr(pd2, buf, 64, IBV_ACCESS_LOCAL_WRITE);
	uint32_t rkey = mw->rkey;
	struct ibv_wc wc;

	assert_non_null(qp);
	assert_int_equal(ibv_bind_mw(qp, mw, &b), 0);
	assert_int_equal(mw->rkey, ibv_inc_rkey(rkey));
	assert_int_equal(ibv_bind_mw(qp, mw2, &b), EINVAL);        /* type 2: post_send */
	b.bind_info.mr = mr2;
	assert_int_equal(ibv_bind_mw(qp, mw, &b), EPERM);          /* other PD */
	assert_int_equal(ibv_poll_cq(t->cq, 1, &wc), 0);
	assert_int_equal(tv_modify_state(qp, IBV_QPS_ERR), 0);
	assert_int_equal(ibv_poll_cq(t->cq, 1, &wc), 1);
	assert_int_equal(wc.wr_id, 55);
	assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	assert_int_equal(ibv_dealloc_mw(mw2), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dereg_mr(mr2), 0);
	assert_int_equal(ibv_dealloc_pd(pd2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_qp_create_query, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_qp_create_errors, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_qp_states, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_post_idle_then_flush, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_post_errors, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_srq_qp, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_channel_wakes, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_async_events, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_bind_mw, tv_setup, tv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
