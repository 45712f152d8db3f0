/* qp_scale's shared verbs objects: one PD, a CQ (and its channel) per SCALE_QPS_PER_CQ QPs,
 * one registered buffer of SCALE_MSG octets per QP, and the small helpers around them. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "scale.h"

int scale_nofile(unsigned want)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_NOFILE, &r))
		return -1;
	if (r.rlim_cur >= want)
		return 0;
	struct rlimit up = { want, r.rlim_max > want ? r.rlim_max : want };
	if (setrlimit(RLIMIT_NOFILE, &up) == 0)
		return 0;
	/* no right to raise the hard limit: go as far as it allows, and say so */
	r.rlim_cur = r.rlim_max;
	setrlimit(RLIMIT_NOFILE, &r);
	fprintf(stderr, "qp_scale: open-file limit %llu, below the %u wanted (%s): the QPs past "
		"it will fail\n", (unsigned long long)r.rlim_max, want, strerror(errno));
	return 0;
}

int scale_dev_open(struct scale_dev *d, struct ibv_context *ctx, unsigned nqp)
{
	memset(d, 0, sizeof *d);
	d->ctx = ctx;
	d->nqp = nqp;
	d->ncq = (nqp + SCALE_QPS_PER_CQ - 1) / SCALE_QPS_PER_CQ;
	d->ch = calloc(d->ncq, sizeof *d->ch);
	d->cq = calloc(d->ncq, sizeof *d->cq);
	d->buf = calloc(nqp, 2 * SCALE_MSG);
	d->pd = ibv_alloc_pd(ctx);
	if (!d->ch || !d->cq || !d->buf || !d->pd)
		return -1;
	d->mr = ibv_reg_mr(d->pd, d->buf, (size_t)nqp * 2 * SCALE_MSG, IBV_ACCESS_LOCAL_WRITE);
	if (!d->mr)
		return -1;
	for (unsigned c = 0; c < d->ncq; c++) {
		d->ch[c] = ibv_create_comp_channel(ctx);
		if (!d->ch[c])
			return -1;
		fcntl(d->ch[c]->fd, F_SETFL, fcntl(d->ch[c]->fd, F_GETFL) | O_NONBLOCK);
		d->cq[c] = ibv_create_cq(ctx, 2 * SCALE_QPS_PER_CQ, NULL, d->ch[c], 0);
		if (!d->cq[c] || ibv_req_notify_cq(d->cq[c], 0))
			return -1;
	}
	return 0;
}

void scale_dev_close(struct scale_dev *d)
{
	for (unsigned c = 0; c < d->ncq; c++) {
		if (d->cq && d->cq[c])
			ibv_destroy_cq(d->cq[c]);
		if (d->ch && d->ch[c])
			ibv_destroy_comp_channel(d->ch[c]);
	}
	if (d->mr)
		ibv_dereg_mr(d->mr);
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	free(d->buf);
	free(d->cq);
	free(d->ch);
	memset(d, 0, sizeof *d);
}

int scale_post_recv(struct scale_dev *d, struct ibv_qp *qp, unsigned i)
{
	struct ibv_sge sge = { (uintptr_t)(d->buf + (size_t)i * 2 * SCALE_MSG), SCALE_MSG,
			       d->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;
	return ibv_post_recv(qp, &wr, &bad);
}

int scale_post_send(struct scale_dev *d, struct ibv_qp *qp, unsigned i)
{
	struct ibv_sge sge = { (uintptr_t)(d->buf + (size_t)i * 2 * SCALE_MSG + SCALE_MSG),
			       SCALE_MSG, d->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	return ibv_post_send(qp, &wr, &bad);
}

int scale_qp_create(struct scale_dev *d, struct rdma_cm_id *id, unsigned i)
{
	struct ibv_cq *cq = d->cq[i / SCALE_QPS_PER_CQ];
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	if (rdma_create_qp(id, d->pd, &a))
		return -1;
	return scale_post_recv(d, id->qp, i);
}

int scale_wait_wc(struct scale_dev *d, unsigned c, struct ibv_wc *wc, int timeout_ms)
{
	uint64_t end = vx_now_ns() + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		int n = ibv_poll_cq(d->cq[c], 1, wc);
		if (n)
			return n < 0 ? -1 : 1;
		struct pollfd p = { d->ch[c]->fd, POLLIN, 0 };
		int left = (int)((int64_t)(end - vx_now_ns()) / 1000000);
		if (left < 0 || poll(&p, 1, left) < 0)
			return -1;
		struct ibv_cq *cq;
		void *ctx;
		if (ibv_get_cq_event(d->ch[c], &cq, &ctx) == 0) {
			ibv_ack_cq_events(cq, 1);
			ibv_req_notify_cq(cq, 0);
		}
	}
}
