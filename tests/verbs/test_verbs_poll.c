/* verbs: consumer-side progress (rn_device_cq_progress). An application that busy-polls a
 * CQ holds the device's engine thread off, so the poll itself must run the work of every QP
 * of the device, not only of the QPs completing into that CQ: here the responder of an RDMA
 * Read completes into a CQ nobody polls, as in ib_read_lat, whose server polls its handshake
 * QP's CQ while the test QP answers Reads. Two contexts (two devices, as two processes), two
 * RC QPs each, connected pairwise over 127.0.0.1 (tv_loop.h). */
#include "tv_loop.h"

#include <stdbool.h>

#define BUFSZ 4096
#define WAIT_MS 2000
#define READS 50

struct qp_end {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
};

struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct qp_end q[2];
};

struct world {
	struct ibv_device **list;
	struct dev a, b;
};

static void end_open(struct dev *d, struct qp_end *e)
{
	struct ibv_qp_init_attr ia = { .cap = { .max_send_wr = 16, .max_recv_wr = 16,
						.max_send_sge = 1, .max_recv_sge = 1 },
				       .qp_type = IBV_QPT_RC };

	e->cq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
	assert_non_null(e->cq);
	ia.send_cq = ia.recv_cq = e->cq;
	e->qp = ibv_create_qp(d->pd, &ia);
	assert_non_null(e->qp);
	e->buf = aligned_alloc(4096, BUFSZ);
	assert_non_null(e->buf);
	memset(e->buf, 0, BUFSZ);
	e->mr = ibv_reg_mr(d->pd, e->buf, BUFSZ, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	assert_non_null(e->mr);
}

static void end_close(struct qp_end *e)
{
	assert_int_equal(ibv_destroy_qp(e->qp), 0);
	assert_int_equal(ibv_dereg_mr(e->mr), 0);
	assert_int_equal(ibv_destroy_cq(e->cq), 0);
	free(e->buf);
}

static void dev_open(struct ibv_device *ibdev, struct dev *d)
{
	d->ctx = ibv_open_device(ibdev);
	assert_non_null(d->ctx);
	d->pd = ibv_alloc_pd(d->ctx);
	assert_non_null(d->pd);
	end_open(d, &d->q[0]);
	end_open(d, &d->q[1]);
}

static void dev_close(struct dev *d)
{
	end_close(&d->q[0]);
	end_close(&d->q[1]);
	assert_int_equal(ibv_dealloc_pd(d->pd), 0);
	assert_int_equal(ibv_close_device(d->ctx), 0);
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));

	w->list = ibv_get_device_list(NULL);
	assert_non_null(w->list);
	dev_open(w->list[0], &w->a);
	dev_open(w->list[0], &w->b);
	tv_connect_qps(w->a.q[0].qp, w->b.q[0].qp);
	tv_connect_qps(w->a.q[1].qp, w->b.q[1].qp);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	dev_close(&w->a);
	dev_close(&w->b);
	ibv_free_device_list(w->list);
	free(w);
	return 0;
}

static void post_read(struct qp_end *req, const struct qp_end *rsp, uint64_t id, uint32_t off)
{
	struct ibv_sge sge = { (uintptr_t)req->buf + off, 8, req->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)rsp->buf + off;
	wr.wr.rdma.rkey = rsp->mr->rkey;
	assert_int_equal(ibv_post_send(req->qp, &wr, &bad), 0);
}

/* b.q[1] reads from a.q[1], READS times, one at a time. The only thread of the test polls
 * a.q[0]'s CQ without pause (nothing ever completes there: the device's engine is held off)
 * and b.q[1]'s for the result. a.q[1], the responder, completes into a CQ nobody polls: its
 * Read Responses go out only if polling a.q[0]'s CQ runs it too. */
static void test_poll_runs_other_qps(void **state)
{
	struct world *w = *state;
	struct qp_end *rsp = &w->a.q[1], *req = &w->b.q[1];
	struct ibv_wc wc;

	for (uint32_t i = 0; i < READS; i++) {
		uint32_t off = (i % (BUFSZ / 8)) * 8;
		long long end = t_now_ms() + WAIT_MS;
		int n = 0;

		memcpy(rsp->buf + off, "respond", 8);
		rsp->buf[off + 7] = (char)i;
		post_read(req, rsp, i, off);
		while (t_now_ms() < end) {
			assert_int_equal(ibv_poll_cq(w->a.q[0].cq, 1, &wc), 0);
			n = ibv_poll_cq(req->cq, 1, &wc);
			if (n != 0)
				break;
		}
		assert_int_equal(n, 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, i);
		assert_memory_equal(req->buf + off, rsp->buf + off, 8);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_poll_runs_other_qps, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
