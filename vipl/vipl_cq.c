/* VIPL completion queues (VIA §9.7, §9.6.7-8, §9.6.11): a ring of (VI handle, queue) entries
 * owned by the library, filled in completion order. Overflow drops the entry (VIA §6.4.1: the
 * consumer sizes the CQ; the descriptor's Status is never affected). Resizing copies the ring
 * and refuses to shrink below what is queued (nothing is ever lost). */
#include "vipl_int.h"

#include <errno.h>
#include <stdlib.h>

void vipl_cq_push(struct vipl_cq *cq, const struct vipl_vi *v, bool recv)
{
	struct vipl_nic *nic = cq->o.nic;
	void *vi = v->o.handle;
	if (cq->tags != NULL)
		vipl_tags_signal(cq, v);
	if (cq->notify != NULL) { /* one-shot: the handler takes this entry */
		struct vipl_call *c = calloc(1, sizeof(*c));
		if (c != NULL) {
			c->kind = CALL_CQ;
			c->cq = cq;
			c->cqh = cq->notify;
			c->ctx = cq->notify_ctx;
			c->vi_handle = vi;
			c->recv = recv;
			cq->notify = NULL;
			vipl_call_queue(nic, c);
			return;
		}
	}
	if (cq->count == cq->cap)
		return;
	cq->ring[(cq->head + cq->count) % cq->cap] = (struct vipl_cqe){ vi, recv };
	cq->count++;
	pthread_cond_broadcast(&nic->cv);
}

static bool cq_pop(struct vipl_cq *cq, struct vipl_cqe *out)
{
	if (cq->count == 0)
		return false;
	*out = cq->ring[cq->head];
	cq->head = (cq->head + 1) % cq->cap;
	cq->count--;
	return true;
}

/* Drain the verbs CQs of every connected VI feeding this CQ (inline progress). */
static void cq_progress(struct vipl_nic *nic, struct vipl_cq *cq, bool arm)
{
	for (struct vipl_vi *vi = nic->vis; vi != NULL; vi = vi->next)
		if ((vi->sq.cq == cq || vi->rq.cq == cq) && vi->c.cq != NULL) {
			if (arm)
				vipl_arm(vi); /* before sleeping / arming a notify: vipl_arm.c */
			else
				vipl_poll_inline(vi);
		}
}

VIPL_EXPORT VIP_RETURN VipCreateCQ(VIP_NIC_HANDLE NicHandle, VIP_ULONG EntryCount,
				   VIP_CQ_HANDLE *CQHandle)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	if (nic == NULL || CQHandle == NULL || EntryCount == 0)
		goto out;
	rc = VIP_ERROR_RESOURCE;
	if (EntryCount > (1u << 20))
		goto out;
	struct vipl_cq *cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		goto out;
	cq->cap = EntryCount;
	cq->ring = calloc(cq->cap, sizeof(*cq->ring));
	cq->o.kind = VK_CQ;
	cq->o.nic = nic;
	if (cq->ring == NULL) {
		free(cq);
		goto out;
	}
	atomic_fetch_add(&nic->o.refs, 1);
	pthread_mutex_lock(&nic->lock);
	if (vipl_handle_add(&cq->o) == NULL) {
		pthread_mutex_unlock(&nic->lock);
		free(cq->ring);
		free(cq);
		vipl_handle_put(&nic->o);
		goto out;
	}
	cq->next = nic->cqs;
	nic->cqs = cq;
	*CQHandle = cq->o.handle;
	pthread_mutex_unlock(&nic->lock);
	rc = VIP_SUCCESS;
out:
	vipl_handle_put(nic ? &nic->o : NULL);
	return rc;
}

VIPL_EXPORT VIP_RETURN VipDestroyCQ(VIP_CQ_HANDLE CQHandle)
{
	struct vipl_cq *cq = (struct vipl_cq *)vipl_handle_get(CQHandle, VK_CQ);
	if (cq == NULL)
		return VIP_INVALID_PARAMETER;
	struct vipl_nic *nic = cq->o.nic;
	pthread_mutex_lock(&nic->lock);
	if (cq->bound > 0 || cq->o.dead) {
		VIP_RETURN rc = cq->o.dead ? VIP_INVALID_PARAMETER : VIP_ERROR_RESOURCE;
		pthread_mutex_unlock(&nic->lock);
		vipl_handle_put(&cq->o);
		return rc;
	}
	cq->notify = NULL;
	vipl_calls_cancel(nic, NULL, cq);
	vipl_tags_free(cq);
	for (struct vipl_cq **pp = &nic->cqs; *pp; pp = &(*pp)->next)
		if (*pp == cq) {
			*pp = cq->next;
			break;
		}
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_remove(&cq->o);
	pthread_mutex_lock(&nic->lock);
	pthread_cond_broadcast(&nic->cv); /* a CQWait on it returns VIP_INVALID_PARAMETER */
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&cq->o);
	return VIP_SUCCESS;
}

VIPL_EXPORT VIP_RETURN VipResizeCQ(VIP_CQ_HANDLE CQHandle, VIP_ULONG EntryCount)
{
	struct vipl_cq *cq = (struct vipl_cq *)vipl_handle_get(CQHandle, VK_CQ);
	if (cq == NULL || EntryCount == 0) {
		vipl_handle_put(cq ? &cq->o : NULL);
		return VIP_INVALID_PARAMETER;
	}
	struct vipl_nic *nic = cq->o.nic;
	VIP_RETURN rc = VIP_ERROR_RESOURCE;
	pthread_mutex_lock(&nic->lock);
	struct vipl_cqe *n = EntryCount <= (1u << 20) && EntryCount >= cq->count ?
			     calloc(EntryCount, sizeof(*n)) : NULL;
	if (n != NULL) {
		for (size_t i = 0; i < cq->count; i++)
			n[i] = cq->ring[(cq->head + i) % cq->cap];
		free(cq->ring);
		cq->ring = n;
		cq->head = 0;
		cq->cap = EntryCount;
		rc = VIP_SUCCESS;
	}
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&cq->o);
	return rc;
}

static VIP_RETURN cqdone(void *h, bool wait, VIP_ULONG timeout, VIP_VI_HANDLE *vi, VIP_BOOLEAN *rq)
{
	struct vipl_cq *cq = (struct vipl_cq *)vipl_handle_get(h, VK_CQ);
	if (cq == NULL || vi == NULL || rq == NULL) {
		vipl_handle_put(cq ? &cq->o : NULL);
		return VIP_INVALID_PARAMETER;
	}
	struct vipl_nic *nic = cq->o.nic;
	uint64_t dl = wait ? vipl_deadline(timeout) : 0;
	VIP_RETURN rc = VIP_NOT_DONE;
	struct vipl_cqe e;
	pthread_mutex_lock(&nic->lock);
	for (;;) {
		if (cq->o.dead) {
			rc = VIP_INVALID_PARAMETER;
			break;
		}
		if (cq->count == 0)
			cq_progress(nic, cq, false);
		if (cq_pop(cq, &e)) {
			*vi = e.vi;
			*rq = e.recv;
			rc = VIP_SUCCESS;
			break;
		}
		if (!wait)
			break;
		cq_progress(nic, cq, true);
		if (cq_pop(cq, &e)) {
			*vi = e.vi;
			*rq = e.recv;
			rc = VIP_SUCCESS;
			break;
		}
		if (vipl_wait(nic, dl) == ETIMEDOUT || (dl && vipl_now_ms() >= dl)) {
			rc = VIP_TIMEOUT;
			if (cq_pop(cq, &e)) {
				*vi = e.vi;
				*rq = e.recv;
				rc = VIP_SUCCESS;
			}
			break;
		}
	}
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&cq->o);
	return rc;
}

VIPL_EXPORT VIP_RETURN VipCQDone(VIP_CQ_HANDLE CQHandle, VIP_VI_HANDLE *ViHandle,
				 VIP_BOOLEAN *RecvQueue)
{
	return cqdone(CQHandle, false, 0, ViHandle, RecvQueue);
}

VIPL_EXPORT VIP_RETURN VipCQWait(VIP_CQ_HANDLE CQHandle, VIP_ULONG Timeout,
				 VIP_VI_HANDLE *ViHandle, VIP_BOOLEAN *RecvQueue)
{
	return cqdone(CQHandle, true, Timeout, ViHandle, RecvQueue);
}

VIPL_EXPORT VIP_RETURN VipCQNotify(VIP_CQ_HANDLE CqHandle, VIP_PVOID Context,
				   VIP_CQ_NOTIFY_HANDLER Handler)
{
	struct vipl_cq *cq = (struct vipl_cq *)vipl_handle_get(CqHandle, VK_CQ);
	if (cq == NULL || Handler == NULL) {
		vipl_handle_put(cq ? &cq->o : NULL);
		return VIP_INVALID_PARAMETER;
	}
	struct vipl_nic *nic = cq->o.nic;
	struct vipl_cqe e;
	bool now;
	pthread_mutex_lock(&nic->lock);
	cq_progress(nic, cq, false);
	now = cq_pop(cq, &e);
	if (!now) {
		cq->notify = Handler;
		cq->notify_ctx = Context;
		cq_progress(nic, cq, true); /* a completion now goes to the handler */
	}
	pthread_mutex_unlock(&nic->lock);
	if (now)
		Handler(Context, nic->o.handle, e.vi, e.recv);
	vipl_handle_put(&cq->o);
	return VIP_SUCCESS;
}
