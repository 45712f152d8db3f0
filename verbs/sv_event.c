/* Asynchronous events: rn_evq -> ibv_get_async_event / ibv_ack_async_event
 * (docs/verbs.md "Async events"). */
#include <errno.h>

#include "verbs_int.h"

#define SV_EV_DROP (-1)   /* no libibverbs counterpart: acked and not delivered */

/* rn_event_id (RDMA Verbs Fig. 37) -> ibv_event_type. */
static const int sv_ev_tab[RN_AE_COUNT] = {
	[RN_AE_NONE] = SV_EV_DROP,
	/* A clean close is reported by the connection manager (RDMA_CM_EVENT_DISCONNECTED). */
	[RN_AE_LLP_CLOSE_COMPLETE] = SV_EV_DROP,
	/* The stream is dead: every one of these ends the QP in Error. */
	[RN_AE_TERMINATE_RECEIVED] = IBV_EVENT_QP_FATAL,
	[RN_AE_LLP_CONN_RESET] = IBV_EVENT_QP_FATAL,
	[RN_AE_LLP_CONN_LOST] = IBV_EVENT_QP_FATAL,
	[RN_AE_LLP_SEGMENT_SIZE] = IBV_EVENT_QP_FATAL,
	[RN_AE_LLP_INVALID_CRC] = IBV_EVENT_QP_FATAL,
	[RN_AE_LLP_BAD_FPDU] = IBV_EVENT_QP_FATAL,
	/* The peer sent something malformed or unexpected: an invalid request. */
	[RN_AE_REM_INVALID_DDP_VERSION] = IBV_EVENT_QP_REQ_ERR,
	[RN_AE_REM_INVALID_RDMA_VERSION] = IBV_EVENT_QP_REQ_ERR,
	[RN_AE_REM_UNEXPECTED_OPCODE] = IBV_EVENT_QP_REQ_ERR,
	[RN_AE_REM_INVALID_DDP_QN] = IBV_EVENT_QP_REQ_ERR,
	/* Read / Write not enabled on this QP: an access violation. */
	[RN_AE_REM_READ_NOT_ENABLED] = IBV_EVENT_QP_ACCESS_ERR,
	[RN_AE_REM_WRITE_NOT_ENABLED] = IBV_EVENT_QP_ACCESS_ERR,
	[RN_AE_REM_READ_REQ_INVALID] = IBV_EVENT_QP_REQ_ERR,
	[RN_AE_REM_NO_L_BIT] = IBV_EVENT_QP_REQ_ERR,
	/* Tagged-buffer protection errors: access violations. */
	[RN_AE_PROT_INVALID_STAG] = IBV_EVENT_QP_ACCESS_ERR,
	[RN_AE_PROT_BASE_BOUNDS] = IBV_EVENT_QP_ACCESS_ERR,
	[RN_AE_PROT_ACCESS] = IBV_EVENT_QP_ACCESS_ERR,
	[RN_AE_PROT_INVALID_PD] = IBV_EVENT_QP_ACCESS_ERR,
	[RN_AE_PROT_WRAP] = IBV_EVENT_QP_ACCESS_ERR,
	/* Traffic while closing / FIN with work outstanding: the connection broke. */
	[RN_AE_BAD_CLOSE] = IBV_EVENT_QP_FATAL,
	[RN_AE_BAD_LLP_CLOSE] = IBV_EVENT_QP_FATAL,
	/* MSN errors of untagged queues: invalid requests. */
	[RN_AE_RQ_MSN_RANGE] = IBV_EVENT_QP_REQ_ERR,
	[RN_AE_RQ_MSN_GAP] = IBV_EVENT_QP_REQ_ERR,
	[RN_AE_IRRQ_TOO_MANY_READS] = IBV_EVENT_QP_REQ_ERR,
	[RN_AE_IRRQ_MSN_GAP] = IBV_EVENT_QP_REQ_ERR,
	[RN_AE_IRRQ_MSN_RANGE] = IBV_EVENT_QP_REQ_ERR,
	/* Read Request source checks: access violations. */
	[RN_AE_IRRQ_INVALID_STAG] = IBV_EVENT_QP_ACCESS_ERR,
	[RN_AE_IRRQ_BASE_BOUNDS] = IBV_EVENT_QP_ACCESS_ERR,
	[RN_AE_IRRQ_ACCESS] = IBV_EVENT_QP_ACCESS_ERR,
	[RN_AE_IRRQ_INVALID_PD] = IBV_EVENT_QP_ACCESS_ERR,
	[RN_AE_IRRQ_WRAP] = IBV_EVENT_QP_ACCESS_ERR,
	/* The QP's side of a CQ failure (the CQ gets IBV_EVENT_CQ_ERR itself). */
	[RN_AE_CQ_SQ_ERROR] = IBV_EVENT_QP_FATAL,
	[RN_AE_CQ_RQ_ERROR] = IBV_EVENT_QP_FATAL,
	[RN_AE_SRQ_QP_ERROR] = IBV_EVENT_QP_FATAL,
	[RN_AE_LOCAL_QP_CATASTROPHIC] = IBV_EVENT_QP_FATAL,
	/* libibverbs has no QP RQ Limit (it can only be armed through the RNIC API). */
	[RN_AE_QP_RQ_LIMIT] = SV_EV_DROP,
	[RN_AE_CQ_OVERFLOW] = IBV_EVENT_CQ_ERR,
	[RN_AE_CQ_OP_ERROR] = IBV_EVENT_CQ_ERR,
	[RN_AE_SRQ_LIMIT] = IBV_EVENT_SRQ_LIMIT_REACHED,
	[RN_AE_SRQ_CATASTROPHIC] = IBV_EVENT_SRQ_ERR,
	[RN_AE_RNIC_CATASTROPHIC] = IBV_EVENT_DEVICE_FATAL,
};

int sv_event_type(enum rn_event_id id)
{
	return (unsigned)id < RN_AE_COUNT ? sv_ev_tab[id] : SV_EV_DROP;
}

/* Fill event->element and remember the resource's event identity for the ack. 0: deliver. */
static int sv_event_element(const struct rn_async_event *ev, struct ibv_async_event *out)
{
	struct sv_srq *s;
	struct sv_cq *q;
	struct sv_qp *p;

	switch (ev->kind) {
	case RN_RES_QP:
		p = ev->handle;  /* ev_handle of rn_qp_create */
		p->evres = ev->res;
		out->element.qp = &p->qp;
		return 0;
	case RN_RES_CQ:
		q = rn_cq_context(ev->handle);
		q->evres = ev->res;
		out->element.cq = &q->cq;
		return 0;
	case RN_RES_SRQ:
		s = rn_srq_context(ev->handle);
		s->evres = ev->res;
		out->element.srq = &s->srq;
		return 0;
	case RN_RES_RNIC:
	default:
		out->element.port_num = 1;
		return 1;    /* device events need no ack: acked at once */
	}
}

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct sv_context *c = sv_ctx(context);
	struct rn_async_event ev;
	int rc, type;

	if (!c || !event) {
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		rc = rn_device_async_get(c->dev, &ev, sv_fd_timeout(context->async_fd));
		if (rc) {
			errno = rc;
			return -1;
		}
		type = sv_event_type(ev.id);
		if (type == SV_EV_DROP) {
			rn_device_async_ack(c->dev, &ev);
			continue;
		}
		event->event_type = (enum ibv_event_type)type;
		if (sv_event_element(&ev, event))
			rn_device_async_ack(c->dev, &ev);
		return 0;
	}
}

/* Which resource an event names, from its libibverbs type. */
static enum rn_res_kind sv_event_kind(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_CQ_ERR:
		return RN_RES_CQ;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return RN_RES_SRQ;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return RN_RES_QP;
	default:
		return RN_RES_RNIC;
	}
}

static void sv_ack(struct ibv_context *ctx, struct rn_event_res *res, uint32_t *completed,
		   pthread_mutex_t *mu)
{
	struct sv_context *c = sv_ctx(ctx);
	struct rn_async_event ev = { .res = res };

	pthread_mutex_lock(mu);
	(*completed)++;
	pthread_mutex_unlock(mu);
	if (c && res)
		rn_device_async_ack(c->dev, &ev);
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	struct sv_srq *s;
	struct sv_cq *q;
	struct sv_qp *p;

	if (!event)
		return;
	switch (sv_event_kind(event->event_type)) {
	case RN_RES_CQ:
		if ((q = sv_cq(event->element.cq)))
			sv_ack(q->cq.context, q->evres, &q->cq.async_events_completed,
			       &q->cq.mutex);
		break;
	case RN_RES_SRQ:
		if ((s = sv_srq(event->element.srq)))
			sv_ack(s->srq.context, s->evres, &s->srq.events_completed,
			       &s->srq.mutex);
		break;
	case RN_RES_QP:
		if ((p = sv_qp(event->element.qp)))
			sv_ack(p->qp.context, p->evres, &p->qp.events_completed, &p->qp.mutex);
		break;
	default:
		break;
	}
}
