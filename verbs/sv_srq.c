/* Shared receive queues over rn_srq (docs/verbs.md "SRQ"). Receive WR lists pass through
 * unchanged: struct rn_recv_wr / rn_rq_sge have the layout of ibv_recv_wr / ibv_sge. */
#include <errno.h>
#include <stdlib.h>

#include "verbs_int.h"

_Static_assert(sizeof(struct rn_rq_sge) == sizeof(struct ibv_sge) &&
		       offsetof(struct rn_rq_sge, addr) == offsetof(struct ibv_sge, addr) &&
		       offsetof(struct rn_rq_sge, length) == offsetof(struct ibv_sge, length) &&
		       offsetof(struct rn_rq_sge, stag) == offsetof(struct ibv_sge, lkey),
	       "rn_rq_sge must match ibv_sge");
_Static_assert(sizeof(struct rn_recv_wr) == sizeof(struct ibv_recv_wr) &&
		       offsetof(struct rn_recv_wr, next) == offsetof(struct ibv_recv_wr, next) &&
		       offsetof(struct rn_recv_wr, sg_list) ==
			       offsetof(struct ibv_recv_wr, sg_list) &&
		       offsetof(struct rn_recv_wr, num_sge) ==
			       offsetof(struct ibv_recv_wr, num_sge),
	       "rn_recv_wr must match ibv_recv_wr");

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init)
{
	struct sv_context *c;
	struct rn_srq_attr a;
	struct sv_srq *s;
	uint32_t wr, sge;
	enum rn_status st;

	if (!sv_pd(pd) || !init || !init->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	c = sv_ctx(pd->context);
	s = sv_obj_alloc(SV_OBJ_SRQ, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	/* the device checks and references the PD, fills limits, event queue and number */
	a = (struct rn_srq_attr){ .max_wr = init->attr.max_wr, .max_sge = init->attr.max_sge,
				  .limit = init->attr.srq_limit, .pd = sv_pd(pd)->id, .context = s };
	st = rn_device_srq_create(c->dev, &a, &s->rn, &wr, &sge);
	if (st) {
		sv_obj_free(SV_OBJ_SRQ, s);
		errno = sv_errno(st);
		return NULL;
	}
	init->attr.max_wr = wr;
	init->attr.max_sge = sge;
	s->srq.context = pd->context;
	s->srq.srq_context = init->srq_context;
	s->srq.pd = pd;
	s->srq.handle = sv_tag(s, SV_MAGIC_SRQ);
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	s->max_sge = sge;
	s->magic = SV_MAGIC_SRQ;
	return &s->srq;
}

/* IBV_SRQ_MAX_WR resizes; IBV_SRQ_LIMIT sets the limit and arms it (libibverbs semantics). */
int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct sv_srq *s = sv_srq(srq);
	uint32_t m = 0;

	if (!s || !attr || !mask || (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)))
		return EINVAL;
	if (mask & IBV_SRQ_MAX_WR)
		m |= RN_SRQ_MOD_MAX_WR;
	if (mask & IBV_SRQ_LIMIT)
		m |= RN_SRQ_MOD_LIMIT | RN_SRQ_MOD_ARM;
	return sv_errno(rn_srq_modify(s->rn, m, attr->max_wr, attr->srq_limit, NULL));
}

/* srq_limit reads 0 once the limit event fired (disarmed), as on IB hardware. */
int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct sv_srq *s = sv_srq(srq);
	struct rn_srq_info info;
	enum rn_status st;

	if (!s || !attr)
		return EINVAL;
	st = rn_srq_query(s->rn, &info);
	if (st)
		return sv_errno(st);
	attr->max_wr = info.max_wr;
	attr->max_sge = info.max_sge;
	attr->srq_limit = info.armed ? info.limit : 0;
	return 0;
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct sv_srq *s = sv_srq(srq);
	enum rn_status st;

	if (!s)
		return EINVAL;
	st = rn_device_srq_destroy(sv_ctx(srq->context)->dev, s->rn);
	if (st)
		return sv_errno(st);
	s->magic = 0;
	pthread_mutex_destroy(&srq->mutex);
	pthread_cond_destroy(&srq->cond);
	sv_obj_free(SV_OBJ_SRQ, s);
	return 0;
}

int sv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct sv_srq *s = sv_srq(srq);
	const struct rn_recv_wr *rbad = NULL;
	enum rn_status st;

	if (!s) {
		if (bad)
			*bad = wr;
		return EINVAL;
	}
	st = rn_srq_post(s->rn, (const struct rn_recv_wr *)wr, &rbad, NULL);
	if (st && bad)
		*bad = (struct ibv_recv_wr *)rbad;
	return sv_errno(st);
}
