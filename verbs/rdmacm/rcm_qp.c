/* QPs on ids: rdma_create_qp / rdma_destroy_qp (and the SRQ variants), done with the public
 * libibverbs calls as librdmacm does: the id's PD (the device's default PD when NULL), and,
 * when the consumer gives no CQs, a completion channel and a CQ for each queue, recorded in
 * the id (send_cq_channel / send_cq / recv_cq_channel / recv_cq) so the rdma_verbs.h helpers
 * (rdma_get_send_comp, rdma_get_recv_comp) work. Also the link from an ESTABLISHED rn_cm to
 * the QP (rcm_qp_start) and the graceful disconnect (rcm_qp_disconnect). */
#include "rcm_int.h"
#include "verbs_int.h" /* softrnic_qp_connect */

#include <errno.h>
#include <stdlib.h>

static void destroy_cqs(struct rdma_cm_id *id)
{
	if (id->send_cq != NULL && id->send_cq != id->recv_cq)
		ibv_destroy_cq(id->send_cq);
	if (id->recv_cq != NULL)
		ibv_destroy_cq(id->recv_cq);
	if (id->send_cq_channel != NULL && id->send_cq_channel != id->recv_cq_channel)
		ibv_destroy_comp_channel(id->send_cq_channel);
	if (id->recv_cq_channel != NULL)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	id->send_cq = id->recv_cq = NULL;
	id->send_cq_channel = id->recv_cq_channel = NULL;
}

/* The CQ's context is the id, as librdmacm sets it: rdma_get_send_comp / rdma_get_recv_comp
 * (rdma_verbs.h) check that ibv_get_cq_event returns it. */
static struct ibv_cq *new_cq(struct rdma_cm_id *id, uint32_t depth,
			     struct ibv_comp_channel **ch)
{
	*ch = ibv_create_comp_channel(id->verbs);
	if (*ch == NULL)
		return NULL;
	return ibv_create_cq(id->verbs, depth > 0 ? (int)depth : 1, id, *ch, 0);
}

/* CQs the consumer did not give (librdmacm: one channel and one CQ per queue). */
static int create_cqs(struct rcm_id *r, struct ibv_qp_init_attr *a)
{
	struct rdma_cm_id *id = &r->pub;

	if (a->recv_cq == NULL) {
		id->recv_cq = new_cq(id, a->cap.max_recv_wr, &id->recv_cq_channel);
		if (id->recv_cq == NULL)
			goto fail;
		a->recv_cq = id->recv_cq;
		r->own_cqs = true;
	}
	if (a->send_cq == NULL) {
		id->send_cq = new_cq(id, a->cap.max_send_wr, &id->send_cq_channel);
		if (id->send_cq == NULL)
			goto fail;
		a->send_cq = id->send_cq;
		r->own_cqs = true;
	}
	return 0;
fail:;
	int e = errno ? errno : ENOMEM;
	destroy_cqs(id);
	r->own_cqs = false;
	return -e;
}

RCM_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			      struct ibv_qp_init_attr *qp_init_attr)
{
	if (id == NULL || qp_init_attr == NULL || id->verbs == NULL || id->qp != NULL)
		return rcm_err(EINVAL);
	if (pd == NULL && (pd = rcm_dev_pd(id->verbs)) == NULL)
		return rcm_err(ENOMEM);
	if (pd->context != id->verbs)
		return rcm_err(EINVAL);
	/* librdmacm leaves the type to the device, which on siw refuses all but RC so */
	if (qp_init_attr->qp_type != IBV_QPT_RC)
		return rcm_err(EOPNOTSUPP);
	struct rcm_id *r = rcm_id_of(id);
	struct ibv_qp_init_attr a = *qp_init_attr;
	int rc = create_cqs(r, &a);
	if (rc != 0)
		return rcm_err(-rc);
	struct ibv_qp *qp = ibv_create_qp(pd, &a);
	if (qp == NULL) {
		int e = errno ? errno : ENOMEM;
		if (r->own_cqs)
			destroy_cqs(id);
		r->own_cqs = false;
		return rcm_err(e);
	}
	if (!r->own_cqs) { /* the consumer's CQs: recorded, not owned */
		id->send_cq = a.send_cq;
		id->recv_cq = a.recv_cq;
	}
	qp_init_attr->cap = a.cap;
	id->pd = pd;
	id->qp = qp;
	return 0;
}

RCM_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	if (attr == NULL)
		return rcm_err(EINVAL);
	if (attr->comp_mask & ~(uint32_t)IBV_QP_INIT_ATTR_PD)
		return rcm_err(ENOSYS); /* XRC, TSO, hashing, create flags: not on this device */
	struct ibv_qp_init_attr a = {
		.qp_context = attr->qp_context, .send_cq = attr->send_cq, .recv_cq = attr->recv_cq,
		.srq = attr->srq, .cap = attr->cap, .qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
	};
	int rc = rdma_create_qp(id, (attr->comp_mask & IBV_QP_INIT_ATTR_PD) ? attr->pd : NULL, &a);
	if (rc == 0)
		attr->cap = a.cap;
	return rc;
}

RCM_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id == NULL || id->qp == NULL)
		return;
	struct rcm_id *r = rcm_id_of(id);
	pthread_mutex_lock(&rcm_lock);
	r->qp_linked = false;
	rcm_qp_unwatch(r);
	pthread_mutex_unlock(&rcm_lock);
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	if (r->own_cqs)
		destroy_cqs(id);
	else
		id->send_cq = id->recv_cq = NULL;
	r->own_cqs = false;
}

RCM_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr)
{
	if (id == NULL || attr == NULL || id->verbs == NULL || id->srq != NULL)
		return rcm_err(EINVAL);
	if (pd == NULL && (pd = rcm_dev_pd(id->verbs)) == NULL)
		return rcm_err(ENOMEM);
	struct ibv_srq *srq = ibv_create_srq(pd, attr);
	if (srq == NULL)
		return rcm_err(errno ? errno : ENOMEM);
	id->srq = srq;
	id->pd = pd;
	return 0;
}

RCM_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	(void)id;
	(void)attr;
	return rcm_err(ENOSYS); /* XRC / tag-matching SRQs: not on this device */
}

RCM_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id == NULL || id->srq == NULL)
		return;
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
}

RCM_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr,
				 int *qp_attr_mask)
{
	(void)id;
	(void)qp_attr;
	(void)qp_attr_mask;
	return rcm_err(ENOSYS); /* iWARP QPs move to RTS with the connection, not by the ULP */
}

/* ---- the link to the verbs layer ------------------------------------------------------- */

/* The QP's LLP close callback: runs under the QP's lock on whatever thread drives the QP, so
 * it takes no library lock; it records the fact and wakes the engine (an eventfd write). */
static void qp_llp_closed(void *arg)
{
	struct rcm_id *id = arg;

	rcm_down_queue(id); /* llp_down, and back to the engine's list */
	rcm_engine_kick();
}

void rcm_qp_unwatch(struct rcm_id *id)
{
	if (id->pub.qp != NULL)
		(void)softrnic_qp_set_close_cb(id->pub.qp, NULL, NULL);
}

int rcm_qp_start(struct rcm_id *id, struct rn_cm_handoff *h)
{
	/* registered first: the stream may end as soon as the QP has it */
	atomic_store(&id->llp_down, false);
	int rc = softrnic_qp_set_close_cb(id->pub.qp, qp_llp_closed, id);
	if (rc == 0)
		rc = softrnic_qp_connect(id->pub.qp, h); /* Idle -> RTS; the device engine drives it */

	if (rc != 0) { /* the stream is still ours */
		rcm_qp_unwatch(id);
		if (h->conn != NULL)
			rn_conn_abort(h->conn);
		free(h->rx);
		h->conn = NULL;
		h->rx = NULL;
		return -rc;
	}
	return 0;
}

/* The QP's state as libibverbs reports it (IBV_QPS_UNKNOWN if it cannot be read). */
enum ibv_qp_state rcm_qp_state(struct rcm_id *id)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (id->pub.qp == NULL || ibv_query_qp(id->pub.qp, &a, IBV_QP_STATE, &ia) != 0)
		return IBV_QPS_UNKNOWN;
	return a.qp_state;
}

int rcm_qp_disconnect(struct rcm_id *id)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD }; /* iWARP Closing */

	if (rcm_qp_state(id) != IBV_QPS_RTS)
		return 0; /* closing or closed already (the peer went first) */
	int rc = ibv_modify_qp(id->pub.qp, &a, IBV_QP_STATE);
	return rc != 0 && rcm_qp_state(id) == IBV_QPS_RTS ? -rc : 0;
}
