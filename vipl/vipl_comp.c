/* Completions (VIA §6.4, §9.6.2-3, §9.6.5-6, §9.6.9-10): the connection's verbs CQ is drained
 * by the NIC thread on every completion event and inline by Done / Wait calls, so a polling
 * application is not delayed by a thread switch. Errors follow the VI's reliability level (VIA
 * 1.0 §2.5, Table 1; §7): Unreliable keeps the connection for per-message receive errors;
 * Reliable Delivery and Reception move the VI to Error, flush everything, and report the cause
 * (the peer's Terminate, softrnic_query_qp_term) in the failing descriptor (RR) or
 * asynchronously (RD). */
#include "softrnic_conf.h"
#include "vipl_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include <softrnic/verbs_ext.h>


enum cause { CAUSE_NONE, CAUSE_NO_BUFFER, CAUSE_PROT_W, CAUSE_OTHER };

/* RFC 5040 §4.8 / RFC 5041 §7: DDP untagged (etype 2) codes 1 no buffer / 2-3 MSN, 5 message
 * too long -> the receiver lacked a fitting descriptor; DDP tagged (etype 1) or RDMAP remote
 * protection (etype 1) -> protection. */
static enum cause term_cause(struct vipl_vi *vi, bool *known)
{
	struct softrnic_qp_term t;
	*known = false;
	if (vi->c.qp == NULL || softrnic_query_qp_term(vi->c.qp, &t) != 0)
		return CAUSE_NONE;
	*known = true;
	if (t.layer == 1 && t.etype == 2)
		return CAUSE_NO_BUFFER;
	/* RDMAP remote protection (etype 1) covers Writes and Read Requests alike, and DDP
	 * tagged errors any tagged placement: the Terminate does not say which operation; a Read
	 * of ours in flight makes it a Read protection error (vipl_vi_fail). */
	if ((t.layer == 1 && t.etype == 1) || (t.layer == 0 && t.etype == 1))
		return CAUSE_PROT_W;
	return CAUSE_OTHER;
}

static uint32_t wc_err(const struct ibv_wc *wc)
{
	switch (wc->status) {
	case IBV_WC_LOC_LEN_ERR:
		return VIP_STATUS_LENGTH_ERROR;
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_MW_BIND_ERR:
		return VIP_STATUS_PROTECTION_ERROR;
	case IBV_WC_WR_FLUSH_ERR:
		return VIP_STATUS_DESC_FLUSHED_ERROR;
	case IBV_WC_REM_ACCESS_ERR:
		return VIP_STATUS_RDMA_PROT_ERROR;
	case IBV_WC_LOC_QP_OP_ERR:
		return VIP_STATUS_FORMAT_ERROR;
	default:
		return VIP_STATUS_TRANSPORT_ERROR;
	}
}

/* The VI leaves Connected for Error: the first unfinished send of an RR VI takes the cause,
 * everything else is flushed, the connection is buried (its QP ends the stream), and
 * the application hears of it asynchronously. ended: the stream ended with no error of its
 * own (the peer's Disconnect): with no Terminate either, the default handler keeps quiet.
 * NIC lock held. */
void vipl_vi_fail(struct vipl_vi *vi, VIP_ERROR_CODE code, bool async, bool ended)
{
	bool known;
	if (vi->state != VIP_STATE_CONNECTED)
		return;
	enum cause c = term_cause(vi, &known);
	bool rr = vi->attr.ReliabilityLevel == VIP_SERVICE_RELIABLE_RECEPTION;
	for (struct vipl_wqe *e = vi->sq.head; e != NULL; e = e->next) {
		if (e->state != WQE_ISSUED)
			continue;
		/* the oldest unfinished one failed: on RR any of them (§2.5.3), on RD a Read
		 * (its data never came: T20), whose own completion may only say "flushed" */
		if (e->status == 0 && rr)
			e->status = c == CAUSE_NO_BUFFER ? VIP_STATUS_REMOTE_DESC_ERROR :
				    c == CAUSE_PROT_W ? VIP_STATUS_RDMA_PROT_ERROR :
				    VIP_STATUS_TRANSPORT_ERROR;
		else if (e->status == 0 && e->op == VIP_CONTROL_OP_RDMAREAD &&
			 c == CAUSE_PROT_W)
			e->status = VIP_STATUS_RDMA_PROT_ERROR;
		break;
	}
	if (code == VIP_ERROR_CONN_LOST && known && c == CAUSE_NO_BUFFER)
		code = VIP_ERROR_RECVQ_EMPTY;
	if (code == VIP_ERROR_CONN_LOST && known && c == CAUSE_PROT_W) {
		code = VIP_ERROR_RDMAW_PROT;
		for (struct vipl_wqe *e = vi->sq.head; e != NULL; e = e->next)
			if (e->state == WQE_ISSUED && e->op == VIP_CONTROL_OP_RDMAREAD) {
				code = VIP_ERROR_RDMAR_PROT;
				break;
			}
	}
	/* Not at once: the QP ends its stream itself (after a Terminate, sent or taken: our FIN,
	 * then the peer's). Destroyed now, it would close the socket, and the peer's next
	 * octets would draw a reset that can reach the peer before it read our Terminate. */
	vipl_conn_bury_after(vi, VIPL_GRAVE_MS);
	vi->state = VIP_STATE_ERROR;
	vipl_wq_flush(vi, &vi->sq);
	vipl_wq_flush(vi, &vi->rq);
	if (async)
		vipl_async_error_as(vi->o.nic, vi, code, VIP_RESOURCE_VI, NULL, 0, ended && !known);
}

/* One verbs completion. Returns false when the connection failed (stop polling it). */
static bool one_wc(struct vipl_vi *vi, const struct ibv_wc *wc)
{
	bool ok;
	if (vipl_rr_wc(vi, wc, &ok) || vipl_dfc_wc(vi, wc, &ok)) { /* the library's own Writes */
		if (!ok)
			vipl_vi_fail(vi, VIP_ERROR_CONN_LOST, true,
				     wc->status == IBV_WC_WR_FLUSH_ERR);
		return ok;
	}
	struct vipl_wqe *e = (struct vipl_wqe *)(uintptr_t)wc->wr_id;
	struct vipl_wq *q = e->recv ? &vi->rq : &vi->sq;
	if (q->inflight > 0)
		q->inflight--;
	if (e->pending > 0)
		e->pending--;
	if (wc->status == IBV_WC_SUCCESS) {
		if (!e->recv && e->bounce != NULL && e->op == VIP_CONTROL_OP_RDMAREAD)
			e->status |= vipl_bounce_scatter(vi, e, e->length);
		if (e->recv) {
			e->length = wc->byte_len;
			if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
				e->op = VIP_CONTROL_OP_RDMAWRITE; /* Status op: remote RDMA Write */
				e->length = 0;
			} else if (e->bounce != NULL) {
				e->status |= vipl_bounce_scatter(vi, e, wc->byte_len);
			}
			if (wc->wc_flags & IBV_WC_WITH_IMM) {
				e->has_imm = true;
				e->imm = ntohl(wc->imm_data);
			}
			vi->c.rx_done++; /* Reliable Reception tells the peer (vipl_rr.c) */
		}
		if (e->pending == 0 && !vipl_rr_wait_ack(vi, e))
			vipl_wqe_finish(vi, e, 0);
		return true;
	}
	uint32_t err = wc_err(wc);
	bool unreliable = vi->attr.ReliabilityLevel == VIP_SERVICE_UNRELIABLE;
	if (unreliable && err != VIP_STATUS_DESC_FLUSHED_ERROR) {
		/* Unreliable: the error is this descriptor's; the VI stays Connected (§2.5.1) */
		e->status |= err;
		if (e->pending == 0)
			vipl_wqe_finish(vi, e, 0);
		return true;
	}
	if (err != VIP_STATUS_DESC_FLUSHED_ERROR &&
	    (vi->attr.ReliabilityLevel != VIP_SERVICE_RELIABLE_RECEPTION || e->recv ||
	     e->op == VIP_CONTROL_OP_RDMAREAD))
		e->status |= err; /* RR sends take the Terminate's cause in vipl_vi_fail */
	vipl_vi_fail(vi, VIP_ERROR_CONN_LOST, true, err == VIP_STATUS_DESC_FLUSHED_ERROR);
	return false;
}

void vipl_poll_cq(struct vipl_vi *vi)
{
	struct ibv_wc wc[16];
	bool ok = true;
	/* again only after a full batch: a poll that finds the CQ empty drives the transport
	 * (a recv() system call on kernel sockets), which a ping-pong pays on every message if the
	 * poll that returned its completion is always followed by one more */
	while (ok && vi->c.cq != NULL) {
		int n = ibv_poll_cq(vi->c.cq, 16, wc);
		if (n <= 0)
			break;
		for (int i = 0; i < n && ok; i++)
			ok = one_wc(vi, &wc[i]);
		if (n < 16)
			break;
	}
	if (vi->c.rr_waiting > 0)
		vipl_rr_check(vi);
	if (vi->state == VIP_STATE_CONNECTED) {   /* tested here: most polls have nothing to issue */
		if (vi->rq.issue != NULL)
			vipl_rq_pump(vi);
		if (vi->sq.issue != NULL)
			vipl_sq_pump(vi);
	}
	vipl_wq_complete_ready(vi, &vi->sq);
	vipl_wq_complete_ready(vi, &vi->rq);
}

struct vipl_vi *vipl_vi_by_cq(struct vipl_nic *nic, struct ibv_cq *cq)
{
	for (struct vipl_vi *vi = nic->vis; vi != NULL; vi = vi->next)
		if (vi->c.cq == cq)
			return vi;
	return NULL;
}

/* Absolute CLOCK_MONOTONIC ms for a VIPL timeout; 0 = forever (timeout >= VIP_INFINITE). */
uint64_t vipl_deadline(VIP_ULONG timeout_ms)
{
	if (timeout_ms >= VIP_INFINITE)
		return 0;
	return vipl_now_ms() + timeout_ms;
}

int vipl_wait(struct vipl_nic *nic, uint64_t deadline_ms)
{
	if (deadline_ms == 0)
		return pthread_cond_wait(&nic->cv, &nic->lock);
	struct timespec ts = { (time_t)(deadline_ms / 1000), (long)(deadline_ms % 1000) * 1000000L };
	return pthread_cond_timedwait(&nic->cv, &nic->lock, &ts);
}

/* How long a Wait polls before it sleeps: SOFTRNIC_VIPL_SPIN_US, default 50 µs. */
static uint64_t spin_us(void)
{
	static atomic_int cached = -1;
	int v = atomic_load(&cached);
	if (v < 0) {
		const char *e = softrnic_conf_get("SOFTRNIC_VIPL_SPIN_US", NULL, 0);
		v = e != NULL ? atoi(e) : 50;
		if (v < 0)
			v = 0;
		atomic_store(&cached, v);
	}
	return (uint64_t)v;
}

/* Done / Wait on one queue; timeout 0 with !wait is Done. */
static VIP_RETURN qdone(void *h, bool recv, bool wait, VIP_ULONG timeout, VIP_DESCRIPTOR **out)
{
	struct vipl_vi *vi = (struct vipl_vi *)vipl_handle_get(h, VK_VI);
	if (vi == NULL || out == NULL) {
		vipl_handle_put(vi ? &vi->o : NULL);
		return VIP_INVALID_PARAMETER;
	}
	struct vipl_nic *nic = vi->o.nic;
	struct vipl_wq *q = recv ? &vi->rq : &vi->sq;
	VIP_RETURN rc = VIP_NOT_DONE;
	uint64_t dl = wait ? vipl_deadline(timeout) : 0, spin_until = 0;
	bool idle = false;
	pthread_mutex_lock(&nic->lock);
	if (wait && q->cq != NULL) {
		rc = VIP_ERROR_RESOURCE; /* VIA §9.6.3, §9.6.6 (§9.6.8 says INVALID_PARAMETER) */
		goto out;
	}
	vi->waiters++;
	for (;;) {
		if (vi->o.dead) {
			rc = VIP_INVALID_PARAMETER;
			break;
		}
		/* a head the NIC thread completed already still counts as polling: else that
		 * thread, seeing no recent inline poll, keeps the CQ armed and takes every
		 * completion (and the NIC lock) from then on, which costs a streaming sender
		 * much of its bandwidth */
		if (q->head != NULL && q->head->state != WQE_DONE && vi->c.cq != NULL)
			vipl_poll_inline(vi);
		else if (vi->c.cq != NULL)
			vipl_note_polling(vi);
		if ((*out = vipl_wq_dequeue(q)) != NULL) {
			rc = VIP_SUCCESS;
			break;
		}
		if (!idle) {
			/* nothing yet: the application is not about to send, so an RR
			 * acknowledgement it owes its peer goes now (vipl_rr.c) */
			idle = true;
			vipl_rr_flush(vi);
		}
		if (!recv)
			vipl_rr_idle_sender(vi, spin_us());
		if (!wait)
			break;
		if (spin_until == 0)
			spin_until = vipl_now_us() + spin_us();
		if (vi->c.cq != NULL && vipl_now_us() < spin_until) {
			/* poll inline a little before sleeping, so a ping-pong does
			 * not pay two thread wake-ups per message */
			pthread_mutex_unlock(&nic->lock);
			sched_yield();
			pthread_mutex_lock(&nic->lock);
			continue;
		}
		vipl_arm(vi); /* the thread must wake us: armed, then one more look */
		if (!recv)
			vipl_rr_read(vi); /* a sleeping sender's RR sends complete without a reply */
		if ((*out = vipl_wq_dequeue(q)) != NULL) {
			rc = VIP_SUCCESS;
			break;
		}
		if (vipl_wait(nic, dl) == ETIMEDOUT || (dl && vipl_now_ms() >= dl)) {
			if ((*out = vipl_wq_dequeue(q)) != NULL) {
				rc = VIP_SUCCESS;
				break;
			}
			rc = VIP_TIMEOUT;
			break;
		}
	}
	vi->waiters--;
out:
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&vi->o);
	return rc;
}

VIPL_EXPORT VIP_RETURN VipSendDone(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR **DescriptorPtr)
{
	return qdone(ViHandle, false, false, 0, DescriptorPtr);
}

VIPL_EXPORT VIP_RETURN VipRecvDone(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR **DescriptorPtr)
{
	return qdone(ViHandle, true, false, 0, DescriptorPtr);
}

VIPL_EXPORT VIP_RETURN VipSendWait(VIP_VI_HANDLE ViHandle, VIP_ULONG TimeOut,
				   VIP_DESCRIPTOR **DescriptorPtr)
{
	return qdone(ViHandle, false, true, TimeOut, DescriptorPtr);
}

VIPL_EXPORT VIP_RETURN VipRecvWait(VIP_VI_HANDLE ViHandle, VIP_ULONG TimeOut,
				   VIP_DESCRIPTOR **DescriptorPtr)
{
	return qdone(ViHandle, true, true, TimeOut, DescriptorPtr);
}

/* One-shot notify (VIA §9.6.9-§9.6.11 leave it open; here a descriptor already Done at the
 * head is dequeued and the handler runs in the caller's thread before the call returns). */
static VIP_RETURN qnotify(void *h, bool recv, void *ctx, VIP_VI_NOTIFY_HANDLER fn)
{
	struct vipl_vi *vi = (struct vipl_vi *)vipl_handle_get(h, VK_VI);
	if (vi == NULL || fn == NULL) {
		vipl_handle_put(vi ? &vi->o : NULL);
		return VIP_INVALID_PARAMETER;
	}
	struct vipl_nic *nic = vi->o.nic;
	struct vipl_wq *q = recv ? &vi->rq : &vi->sq;
	VIP_DESCRIPTOR *d = NULL;
	VIP_RETURN rc = VIP_SUCCESS;
	pthread_mutex_lock(&nic->lock);
	if (q->cq != NULL) {
		rc = VIP_ERROR_RESOURCE;
	} else {
		if (vi->c.cq != NULL)
			vipl_poll_cq(vi);
		d = vipl_wq_dequeue(q);
		if (d == NULL) {
			q->notify = fn;
			q->notify_ctx = ctx;
			vipl_arm(vi); /* the thread runs the handler: it must see the completion */
			if (!recv)
				vipl_rr_read(vi);
		}
	}
	pthread_mutex_unlock(&nic->lock);
	if (d != NULL)
		fn(ctx, nic->o.handle, vi->o.handle, d);
	vipl_handle_put(&vi->o);
	return rc;
}

VIPL_EXPORT VIP_RETURN VipSendNotify(VIP_VI_HANDLE ViHandle, VIP_PVOID Context,
				     VIP_VI_NOTIFY_HANDLER Handler)
{
	return qnotify(ViHandle, false, Context, Handler);
}

VIPL_EXPORT VIP_RETURN VipRecvNotify(VIP_VI_HANDLE ViHandle, VIP_PVOID Context,
				     VIP_VI_NOTIFY_HANDLER Handler)
{
	return qnotify(ViHandle, true, Context, Handler);
}
