/* Work-queue bookkeeping (NIC lock held): entries in post order, the Next / NextHandle links of
 * the descriptors, and in-order completion (allowed by VIA §6.3.1.1): an entry whose verbs work
 * finished is completed only when every entry before it is, by writing Length, ImmediateData,
 * Control's immediate bit and then Status with a release store (Status last, VIA §6.4.1), then
 * the VIPL CQ entry, then a one-shot notify. */
#include "vipl_int.h"

#include <stdlib.h>
#include <string.h>

struct vipl_wqe *vipl_wqe_new(struct vipl_wq *q, VIP_DESCRIPTOR *d, bool recv)
{
	struct vipl_wqe *e = q->spare;
	if (e != NULL) {
		q->spare = e->next;
		q->nspare--;
		memset(e, 0, sizeof(*e));
	} else if ((e = calloc(1, sizeof(*e))) == NULL) {
		return NULL;
	}
	e->desc = d;
	e->recv = recv;
	e->state = WQE_WAIT;
	if (q->tail != NULL)
		q->tail->next = e;
	else
		q->head = e;
	q->tail = e;
	if (q->issue == NULL)
		q->issue = e;
	q->count++;
	return e;
}

void vipl_wqe_free(struct vipl_wqe *e)
{
	if (e->bounce_mr != NULL)
		ibv_dereg_mr(e->bounce_mr);
	free(e->bounce);
	free(e);
}

/* The verbs work of e is over (err: VIP error bits, 0 on success). */
void vipl_wqe_finish(struct vipl_vi *vi, struct vipl_wqe *e, uint32_t err)
{
	if (e->state == WQE_FINISHED || e->state == WQE_DONE)
		return;
	e->status |= err;
	e->state = WQE_FINISHED;
	(e->recv ? &vi->rq : &vi->sq)->nfinished++;
	if (e->bounce_mr != NULL) {
		ibv_dereg_mr(e->bounce_mr);
		e->bounce_mr = NULL;
	}
	free(e->bounce);
	e->bounce = NULL;
}

static uint32_t op_bits(const struct vipl_wqe *e)
{
	if (e->recv)
		return e->op == VIP_CONTROL_OP_RDMAWRITE ? VIP_STATUS_OP_REMOTE_RDMA_WRITE
							 : VIP_STATUS_OP_RECEIVE;
	switch (e->op) {
	case VIP_CONTROL_OP_RDMAWRITE:
		return VIP_STATUS_OP_RDMA_WRITE;
	case VIP_CONTROL_OP_RDMAREAD:
		return VIP_STATUS_OP_RDMA_READ;
	default:
		return VIP_STATUS_OP_SEND;
	}
}

static void write_status(struct vipl_wqe *e)
{
	VIP_CONTROL_SEGMENT *cs = &e->desc->CS;
	uint32_t st = VIP_STATUS_DONE | e->status | op_bits(e);
	if (e->status & VIP_STATUS_ERROR_MASK)
		e->length = 0; /* VIA §10.2 says undefined, §6.4.1 0 on overrun */
	cs->Length = e->length;
	if (e->recv && e->has_imm) {
		cs->ImmediateData = e->imm;
		cs->Control |= VIP_CONTROL_IMMEDIATE; /* VIA §10.2 names both places */
		st |= VIP_STATUS_IMMEDIATE;
	}
	__atomic_store_n(&cs->Status, st, __ATOMIC_RELEASE);
}

void vipl_wq_complete_some(struct vipl_vi *vi, struct vipl_wq *q)
{
	struct vipl_nic *nic = vi->o.nic;
	bool any = false;
	for (struct vipl_wqe *e = q->head; q->nfinished > 0 && e != NULL; e = e->next) {
		if (e->state == WQE_DONE)
			continue;
		if (e->state != WQE_FINISHED)
			break;
		write_status(e);
		e->state = WQE_DONE;
		q->nfinished--;
		any = true;
		if (q->cq != NULL)
			vipl_cq_push(q->cq, vi, e->recv);
	}
	/* An armed one-shot notify takes the head it was waiting for (VIA §9.6.9). */
	if (q->notify != NULL && q->head != NULL && q->head->state == WQE_DONE) {
		struct vipl_call *c = calloc(1, sizeof(*c));
		if (c != NULL) {
			c->kind = CALL_VI;
			c->vi = vi;
			c->vi_handle = vi->o.handle;
			c->vih = q->notify;
			c->ctx = q->notify_ctx;
			c->desc = vipl_wq_dequeue(q);
			q->notify = NULL;
			vipl_call_queue(nic, c);
		}
	}
	if (any)
		pthread_cond_broadcast(&nic->cv);
}

/* Everything not yet completed ends with DESC_FLUSHED (Disconnect, Error). */
void vipl_wq_flush(struct vipl_vi *vi, struct vipl_wq *q)
{
	for (struct vipl_wqe *e = q->head; e != NULL; e = e->next)
		if (e->state == WQE_WAIT || e->state == WQE_ISSUED)
			vipl_wqe_finish(vi, e, e->status ? 0 : VIP_STATUS_DESC_FLUSHED_ERROR);
	q->issue = NULL;
	q->inflight = 0;
	vipl_wq_complete_ready(vi, q);
}

struct vipl_wqe *vipl_wq_next_wait(struct vipl_wq *q)
{
	while (q->issue != NULL && q->issue->state != WQE_WAIT)
		q->issue = q->issue->next;
	return q->issue;
}

VIP_DESCRIPTOR *vipl_wq_dequeue(struct vipl_wq *q)
{
	struct vipl_wqe *e = q->head;
	if (e == NULL || e->state != WQE_DONE)
		return NULL;
	q->head = e->next;
	if (q->head == NULL)
		q->tail = NULL;
	if (q->issue == e)
		q->issue = e->next;
	q->count--;
	VIP_DESCRIPTOR *d = e->desc;
	if (q->nspare < 64 && e->bounce == NULL && e->bounce_mr == NULL) {
		e->next = q->spare;
		q->spare = e;
		q->nspare++;
	} else {
		vipl_wqe_free(e);
	}
	return d;
}
