/* soak_conn: the verbs objects both roles make - one PD, CQ and completion channel for all
 * QPs, QPs on rdma_cm ids (on the server's S-RQ when there is one) - registered memory
 * (vx_reg), and waiting for one rdma_cm event during setup (vx_cm_wait). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "soak.h"

static int nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) ? -1 : 0;
}

int soak_channel(struct soak_run *r)
{
	if (!(r->ec = rdma_create_event_channel()))
		return perror("rdma_create_event_channel"), -1;
	return nonblock(r->ec->fd) ? (perror("fcntl(O_NONBLOCK)"), -1) : 0;
}

int soak_common_setup(struct soak_run *r, struct ibv_context *ctx)
{
	int depth = r->o->qps * (2 * SOAK_SLOTS + SOAK_RECVS + 4);
	r->ctx = ctx;
	if (!(r->pd = ibv_alloc_pd(ctx)))
		return perror("ibv_alloc_pd"), -1;
	if (!(r->ch = ibv_create_comp_channel(ctx)))
		return perror("ibv_create_comp_channel"), -1;
	if (!(r->cq = ibv_create_cq(ctx, depth, NULL, r->ch, 0)))
		return perror("ibv_create_cq"), -1;
	/* the main loop polls every source itself; none may block it */
	if (nonblock(r->ch->fd) || nonblock(ctx->async_fd))
		return perror("fcntl(O_NONBLOCK)"), -1;
	return 0;
}

int soak_create_qp(struct soak_run *r, struct rdma_cm_id *id, int depth_send, int depth_recv)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = r->cq, .recv_cq = r->cq, .srq = r->srq, .qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = (uint32_t)depth_send,
		         .max_recv_wr = r->srq ? 0 : (uint32_t)depth_recv,
		         .max_send_sge = 1, .max_recv_sge = 1 },
	};
	if (rdma_create_qp(id, r->pd, &qa))
		return perror("rdma_create_qp"), -1;
	return 0;
}

struct ibv_mr *soak_reg(struct soak_run *r, size_t len, int access)
{
	struct vx_conn v = { .pd = r->pd };
	if (r->nmr == (int)(sizeof r->mr / sizeof r->mr[0]))
		return fprintf(stderr, "soak: too many regions\n"), NULL;
	struct ibv_mr *mr = vx_reg(&v, len, access);
	if (mr)
		r->mr[r->nmr++] = mr;
	return mr;
}

int soak_cm_wait(struct soak_run *r, enum rdma_cm_event_type want, int ms,
                 struct rdma_cm_id **idp, void *pdata, size_t pdata_len)
{
	r->cm.ec = r->ec;
	if (vx_cm_wait(&r->cm, want, ms, idp))
		return -1;
	if (pdata) {
		memset(pdata, 0, pdata_len);
		memcpy(pdata, r->cm.peer_data,
		       r->cm.peer_data_len < pdata_len ? r->cm.peer_data_len : pdata_len);
	}
	return 0;
}
