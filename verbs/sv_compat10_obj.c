/* IBVERBS_1.0 twins for CQs, S-RQs, QPs and multicast (see sv_compat10.c): a 1.0 wrapper per
 * object, whose current object's user context points back to it for the event calls. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sv_compat10.h"
#include "sv_compat10_int.h"

static void *sv10_zalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p)
		errno = ENOMEM;
	return p;
}

/* Frees a wrapper whose current object could not be made, keeping that call's errno. */
static void *sv10_fail(void *wrapper)
{
	int e = errno;

	free(wrapper);
	errno = e;
	return NULL;
}

/* ---- CQs ---------------------------------------------------------------------------------- */
struct ibv_cq_1_0 *sv10_create_cq(struct ibv_context_1_0 *context, int cqe, void *cq_context,
				  struct ibv_comp_channel *channel, int comp_vector);
struct ibv_cq_1_0 *sv10_create_cq(struct ibv_context_1_0 *context, int cqe, void *cq_context,
				  struct ibv_comp_channel *channel, int comp_vector)
{
	struct ibv_cq_1_0 *cq = sv10_zalloc(sizeof(*cq));

	if (!cq)
		return NULL;
	cq->real_cq = ibv_create_cq(context->real_context, cqe, cq, channel, comp_vector);
	if (!cq->real_cq)
		return sv10_fail(cq);
	cq->context = context;
	cq->cq_context = cq_context;
	cq->handle = cq->real_cq->handle;
	cq->cqe = cq->real_cq->cqe;
	pthread_mutex_init(&cq->mutex, NULL);
	pthread_cond_init(&cq->cond, NULL);
	return cq;
}
SV10_SYMVER(sv10_create_cq, ibv_create_cq);

int sv10_resize_cq(struct ibv_cq_1_0 *cq, int cqe);
int sv10_resize_cq(struct ibv_cq_1_0 *cq, int cqe)
{
	int rc = ibv_resize_cq(cq->real_cq, cqe);

	if (!rc)
		cq->cqe = cq->real_cq->cqe;
	return rc;
}
SV10_SYMVER(sv10_resize_cq, ibv_resize_cq);

int sv10_destroy_cq(struct ibv_cq_1_0 *cq);
int sv10_destroy_cq(struct ibv_cq_1_0 *cq)
{
	int rc = ibv_destroy_cq(cq->real_cq);

	if (!rc) {
		pthread_cond_destroy(&cq->cond);
		pthread_mutex_destroy(&cq->mutex);
		free(cq);
	}
	return rc;
}
SV10_SYMVER(sv10_destroy_cq, ibv_destroy_cq);

/* ---- S-RQs -------------------------------------------------------------------------------- */
struct ibv_srq_1_0 *sv10_create_srq(struct ibv_pd_1_0 *pd, struct ibv_srq_init_attr *attr);
struct ibv_srq_1_0 *sv10_create_srq(struct ibv_pd_1_0 *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_1_0 *srq = sv10_zalloc(sizeof(*srq));
	void *user;

	if (!srq || !attr)
		return srq ? (errno = EINVAL, sv10_fail(srq)) : NULL;
	user = attr->srq_context;
	attr->srq_context = srq;
	srq->real_srq = ibv_create_srq(pd->real_pd, attr);
	attr->srq_context = user;
	if (!srq->real_srq)
		return sv10_fail(srq);
	srq->context = pd->context;
	srq->srq_context = user;
	srq->pd = pd;
	srq->handle = srq->real_srq->handle;
	pthread_mutex_init(&srq->mutex, NULL);
	pthread_cond_init(&srq->cond, NULL);
	return srq;
}
SV10_SYMVER(sv10_create_srq, ibv_create_srq);

int sv10_modify_srq(struct ibv_srq_1_0 *srq, struct ibv_srq_attr *attr, int mask);
int sv10_modify_srq(struct ibv_srq_1_0 *srq, struct ibv_srq_attr *attr, int mask)
{
	return ibv_modify_srq(srq->real_srq, attr, mask);
}
SV10_SYMVER(sv10_modify_srq, ibv_modify_srq);

int sv10_query_srq(struct ibv_srq_1_0 *srq, struct ibv_srq_attr *attr);
int sv10_query_srq(struct ibv_srq_1_0 *srq, struct ibv_srq_attr *attr)
{
	return ibv_query_srq(srq->real_srq, attr);
}
SV10_SYMVER(sv10_query_srq, ibv_query_srq);

int sv10_destroy_srq(struct ibv_srq_1_0 *srq);
int sv10_destroy_srq(struct ibv_srq_1_0 *srq)
{
	int rc = ibv_destroy_srq(srq->real_srq);

	if (!rc) {
		pthread_cond_destroy(&srq->cond);
		pthread_mutex_destroy(&srq->mutex);
		free(srq);
	}
	return rc;
}
SV10_SYMVER(sv10_destroy_srq, ibv_destroy_srq);

/* ---- QPs ---------------------------------------------------------------------------------- */
struct ibv_qp_1_0 *sv10_create_qp(struct ibv_pd_1_0 *pd, struct ibv_qp_init_attr_1_0 *attr);
struct ibv_qp_1_0 *sv10_create_qp(struct ibv_pd_1_0 *pd, struct ibv_qp_init_attr_1_0 *attr)
{
	struct ibv_qp_1_0 *qp = sv10_zalloc(sizeof(*qp));
	struct ibv_qp_init_attr a;

	if (!qp)
		return NULL;
	if (!attr || !attr->send_cq || !attr->recv_cq) {
		errno = EINVAL;
		return sv10_fail(qp);
	}
	a = (struct ibv_qp_init_attr){
		.qp_context = qp, .send_cq = attr->send_cq->real_cq,
		.recv_cq = attr->recv_cq->real_cq, .srq = attr->srq ? attr->srq->real_srq : NULL,
		.cap = attr->cap, .qp_type = attr->qp_type, .sq_sig_all = attr->sq_sig_all,
	};
	qp->real_qp = ibv_create_qp(pd->real_pd, &a);
	if (!qp->real_qp)
		return sv10_fail(qp);
	attr->cap = a.cap;
	qp->context = pd->context;
	qp->qp_context = attr->qp_context;
	qp->pd = pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->srq = attr->srq;
	qp->handle = qp->real_qp->handle;
	qp->qp_num = qp->real_qp->qp_num;
	qp->state = qp->real_qp->state;
	qp->qp_type = qp->real_qp->qp_type;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	return qp;
}
SV10_SYMVER(sv10_create_qp, ibv_create_qp);

int sv10_query_qp(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr, int mask,
		  struct ibv_qp_init_attr_1_0 *init_attr);
int sv10_query_qp(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr, int mask,
		  struct ibv_qp_init_attr_1_0 *init_attr)
{
	struct ibv_qp_init_attr a;
	int rc = ibv_query_qp(qp->real_qp, attr, mask, &a);

	if (rc || !init_attr)
		return rc;
	*init_attr = (struct ibv_qp_init_attr_1_0){
		.qp_context = qp->qp_context, .send_cq = qp->send_cq, .recv_cq = qp->recv_cq,
		.srq = qp->srq, .cap = a.cap, .qp_type = a.qp_type, .sq_sig_all = a.sq_sig_all,
	};
	return 0;
}
SV10_SYMVER(sv10_query_qp, ibv_query_qp);

int sv10_modify_qp(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr, int mask);
int sv10_modify_qp(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr, int mask)
{
	int rc = ibv_modify_qp(qp->real_qp, attr, mask);

	if (!rc)
		qp->state = qp->real_qp->state;
	return rc;
}
SV10_SYMVER(sv10_modify_qp, ibv_modify_qp);

int sv10_destroy_qp(struct ibv_qp_1_0 *qp);
int sv10_destroy_qp(struct ibv_qp_1_0 *qp)
{
	int rc = ibv_destroy_qp(qp->real_qp);

	if (!rc) {
		pthread_cond_destroy(&qp->cond);
		pthread_mutex_destroy(&qp->mutex);
		free(qp);
	}
	return rc;
}
SV10_SYMVER(sv10_destroy_qp, ibv_destroy_qp);

int sv10_attach_mcast(struct ibv_qp_1_0 *qp, union ibv_gid *gid, uint16_t lid);
int sv10_attach_mcast(struct ibv_qp_1_0 *qp, union ibv_gid *gid, uint16_t lid)
{
	return ibv_attach_mcast(qp->real_qp, gid, lid);
}
SV10_SYMVER(sv10_attach_mcast, ibv_attach_mcast);

int sv10_detach_mcast(struct ibv_qp_1_0 *qp, union ibv_gid *gid, uint16_t lid);
int sv10_detach_mcast(struct ibv_qp_1_0 *qp, union ibv_gid *gid, uint16_t lid)
{
	return ibv_detach_mcast(qp->real_qp, gid, lid);
}
SV10_SYMVER(sv10_detach_mcast, ibv_detach_mcast);
