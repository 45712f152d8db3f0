/* IBVERBS_1.0 data path and events (sv_compat10.h): the ops a 1.0 context carries, which
 * translate 1.0 WR lists into current ones on the stack, and the event calls, which swap
 * current objects for their 1.0 wrappers (each current object's user context points to its
 * wrapper, set by sv_compat10.c). */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "sv_compat10.h"
#include "sv_compat10_int.h"

/* Chains of at most this many WRs are translated per call; longer chains are posted in
 * batches, stopping at the first failure (its WR is *bad_wr). */
#define SV10_BATCH 64

int sv10_poll_cq(struct ibv_cq_1_0 *cq, int num_entries, struct ibv_wc *wc)
{
	return ibv_poll_cq(cq->real_cq, num_entries, wc);
}

int sv10_req_notify_cq(struct ibv_cq_1_0 *cq, int solicited_only)
{
	return ibv_req_notify_cq(cq->real_cq, solicited_only);
}

static void sv10_send_wr(const struct ibv_send_wr_1_0 *o, struct ibv_send_wr *n)
{
	memset(n, 0, sizeof(*n));
	n->wr_id = o->wr_id;
	n->sg_list = o->sg_list;
	n->num_sge = o->num_sge;
	n->opcode = o->opcode;
	n->send_flags = (unsigned)o->send_flags;
	n->imm_data = o->imm_data;
	if (o->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || o->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		n->wr.atomic.remote_addr = o->wr.atomic.remote_addr;
		n->wr.atomic.compare_add = o->wr.atomic.compare_add;
		n->wr.atomic.swap = o->wr.atomic.swap;
		n->wr.atomic.rkey = o->wr.atomic.rkey;
	} else {
		n->wr.rdma.remote_addr = o->wr.rdma.remote_addr;
		n->wr.rdma.rkey = o->wr.rdma.rkey;
	}
}

int sv10_post_send(struct ibv_qp_1_0 *qp, struct ibv_send_wr_1_0 *wr,
		   struct ibv_send_wr_1_0 **bad_wr)
{
	struct ibv_send_wr n[SV10_BATCH], *nbad = NULL;
	struct ibv_send_wr_1_0 *o[SV10_BATCH];

	while (wr) {
		int k = 0, rc;

		for (; wr && k < SV10_BATCH; wr = wr->next, k++) {
			o[k] = wr;
			sv10_send_wr(wr, &n[k]);
			if (k)
				n[k - 1].next = &n[k];
		}
		rc = ibv_post_send(qp->real_qp, n, &nbad);
		if (rc) {
			if (bad_wr)
				*bad_wr = nbad ? o[nbad - n] : o[0];
			return rc;
		}
	}
	return 0;
}

/* Receive WRs: the same translation for QPs and S-RQs. */
static int sv10_fill_recv(struct ibv_recv_wr_1_0 **wr, struct ibv_recv_wr *n,
			  struct ibv_recv_wr_1_0 **o)
{
	int k = 0;

	for (; *wr && k < SV10_BATCH; *wr = (*wr)->next, k++) {
		o[k] = *wr;
		n[k] = (struct ibv_recv_wr){ .wr_id = (*wr)->wr_id, .sg_list = (*wr)->sg_list,
					     .num_sge = (*wr)->num_sge };
		if (k)
			n[k - 1].next = &n[k];
	}
	return k;
}

int sv10_post_recv(struct ibv_qp_1_0 *qp, struct ibv_recv_wr_1_0 *wr,
		   struct ibv_recv_wr_1_0 **bad_wr)
{
	struct ibv_recv_wr n[SV10_BATCH], *nbad = NULL;
	struct ibv_recv_wr_1_0 *o[SV10_BATCH];

	while (wr) {
		int rc;

		sv10_fill_recv(&wr, n, o);
		rc = ibv_post_recv(qp->real_qp, n, &nbad);
		if (rc) {
			if (bad_wr)
				*bad_wr = nbad ? o[nbad - n] : o[0];
			return rc;
		}
	}
	return 0;
}

int sv10_post_srq_recv(struct ibv_srq_1_0 *srq, struct ibv_recv_wr_1_0 *wr,
		       struct ibv_recv_wr_1_0 **bad_wr)
{
	struct ibv_recv_wr n[SV10_BATCH], *nbad = NULL;
	struct ibv_recv_wr_1_0 *o[SV10_BATCH];

	while (wr) {
		int rc;

		sv10_fill_recv(&wr, n, o);
		rc = ibv_post_srq_recv(srq->real_srq, n, &nbad);
		if (rc) {
			if (bad_wr)
				*bad_wr = nbad ? o[nbad - n] : o[0];
			return rc;
		}
	}
	return 0;
}

/* ---- events ------------------------------------------------------------------------------ */
int sv10_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq_1_0 **cq,
		      void **cq_context);
int sv10_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq_1_0 **cq,
		      void **cq_context)
{
	struct ibv_cq *real;
	void *wrapper;

	if (ibv_get_cq_event(channel, &real, &wrapper))
		return -1;
	*cq = wrapper;
	*cq_context = (*cq)->cq_context;
	return 0;
}
SV10_SYMVER(sv10_get_cq_event, ibv_get_cq_event);

void sv10_ack_cq_events(struct ibv_cq_1_0 *cq, unsigned int nevents);
void sv10_ack_cq_events(struct ibv_cq_1_0 *cq, unsigned int nevents)
{
	ibv_ack_cq_events(cq->real_cq, nevents);
}
SV10_SYMVER(sv10_ack_cq_events, ibv_ack_cq_events);

/* Which element an event names (the current object's user context is its 1.0 wrapper). */
static int sv10_element(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_CQ_ERR:
		return 'c';
	case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR: case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST: case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR: case IBV_EVENT_QP_LAST_WQE_REACHED:
		return 'q';
	case IBV_EVENT_SRQ_ERR: case IBV_EVENT_SRQ_LIMIT_REACHED:
		return 's';
	default:
		return 0;
	}
}

int sv10_get_async_event(struct ibv_context_1_0 *context, struct ibv_async_event *event);
int sv10_get_async_event(struct ibv_context_1_0 *context, struct ibv_async_event *event)
{
	int rc = ibv_get_async_event(context->real_context, event);

	if (rc)
		return rc;
	switch (sv10_element(event->event_type)) {
	case 'c':
		event->element.cq = event->element.cq->cq_context;
		break;
	case 'q':
		event->element.qp = event->element.qp->qp_context;
		break;
	case 's':
		event->element.srq = event->element.srq->srq_context;
		break;
	}
	return 0;
}
SV10_SYMVER(sv10_get_async_event, ibv_get_async_event);

void sv10_ack_async_event(struct ibv_async_event *event);
void sv10_ack_async_event(struct ibv_async_event *event)
{
	struct ibv_async_event real = *event;

	switch (sv10_element(event->event_type)) {
	case 'c':
		real.element.cq = ((struct ibv_cq_1_0 *)(void *)event->element.cq)->real_cq;
		break;
	case 'q':
		real.element.qp = ((struct ibv_qp_1_0 *)(void *)event->element.qp)->real_qp;
		break;
	case 's':
		real.element.srq = ((struct ibv_srq_1_0 *)(void *)event->element.srq)->real_srq;
		break;
	}
	ibv_ack_async_event(&real);
}
SV10_SYMVER(sv10_ack_async_event, ibv_ack_async_event);
