/* Descriptor flow control (cLAN's VIP_SERVICE_DFC, VITCP §3.3's DFC; docs/vipl.md "One header
 * for three stacks"): on a VI created with VIP_SERVICE_DFC OR'ed into its reliability level, a
 * message that takes a receive of the peer (a Send, an RDMA Write with immediate) is issued
 * only when the peer has a receive posted for it; until then it waits in the library,
 * "deferred", instead of breaking the connection (VIA's Receive Assumption, §2.5). The peer
 * learns of DFC from the request's flags and counts the receives it posts to the connection
 * (held ones included, at establishment); it writes that count with an 8-octet RDMA Write into
 * the DFC side's credit word ([32] of the ack block), again whenever it posts more (one
 * Write in flight; a newer count follows when it completes). The DFC side issues while its
 * issued count is below the credit word.
 *
 * Deferred sends go out at any post, Done or Wait on the VI, at VipPostDeferredSends, and, while
 * the VI's interrupt is enabled (the default; VipPostDeferredSends sets it), by the NIC thread,
 * which looks every VIPL_DFC_LOOK_MS while some wait. */
#include "vipl_int.h"

#include <string.h>

#define CREDIT_IN 32
#define CREDIT_OUT 40

/* work request id of a credit Write (never a queue entry's address) */
static const char credit_write_tag;
#define WR_CREDIT ((uint64_t)(uintptr_t)&credit_write_tag)

static uint64_t credits(const struct vipl_vi *vi)
{
	return __atomic_load_n((uint64_t *)(void *)(vi->c.ack + CREDIT_IN), __ATOMIC_ACQUIRE);
}

bool vipl_dfc_allows(const struct vipl_vi *vi, const struct vipl_wqe *e)
{
	if (!vi->dfc || !vipl_rr_counted(e))
		return true;
	return vi->c.ack != NULL && vi->c.dfc_sent < credits(vi);
}

void vipl_dfc_issued(struct vipl_vi *vi, const struct vipl_wqe *e)
{
	if (vi->dfc && vipl_rr_counted(e))
		vi->c.dfc_sent++;
}

/* The peer defers its sends: tell it how many receives are posted here. */
void vipl_dfc_credit(struct vipl_vi *vi)
{
	struct vipl_conn *c = &vi->c;
	if (!c->peer_dfc || c->ack == NULL || c->credit_writing || c->rx_posted == c->credit_told ||
	    vi->state != VIP_STATE_CONNECTED || c->qp == NULL)
		return;
	__atomic_store_n((uint64_t *)(void *)(c->ack + CREDIT_OUT), c->rx_posted, __ATOMIC_RELAXED);
	struct ibv_sge sg = { (uintptr_t)(c->ack + CREDIT_OUT), 8, c->ack_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_CREDIT, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	wr.wr.rdma.remote_addr = c->peer_ack_va + CREDIT_IN;
	wr.wr.rdma.rkey = c->peer_ack_stag;
	if (ibv_post_send(c->qp, &wr, &bad) == 0) {
		c->credit_told = c->rx_posted;
		c->credit_writing = true;
	}
}

bool vipl_dfc_wc(struct vipl_vi *vi, const struct ibv_wc *wc, bool *ok)
{
	if (wc->wr_id != WR_CREDIT)
		return false;
	*ok = wc->status == IBV_WC_SUCCESS;
	vi->c.credit_writing = false;
	if (*ok)
		vipl_dfc_credit(vi); /* receives posted meanwhile */
	return true;
}

bool vipl_dfc_deferred(const struct vipl_vi *vi)
{
	return vi->dfc && vi->state == VIP_STATE_CONNECTED && vi->sq.issue != NULL;
}

/* The NIC thread's timer: issue what the credits now allow on VIs whose interrupt is on. */
void vipl_dfc_timers(struct vipl_nic *nic, uint64_t now, uint64_t *next)
{
	bool waiting = false;
	for (struct vipl_vi *vi = nic->vis; vi != NULL; vi = vi->next) {
		if (!vi->dfc_interrupt || !vipl_dfc_deferred(vi))
			continue;
		vipl_sq_pump(vi);
		waiting |= vipl_dfc_deferred(vi);
	}
	uint64_t at = now + VIPL_DFC_LOOK_MS;
	if (waiting && (*next == 0 || at < *next))
		*next = at;
}

VIPL_EXPORT VIP_RETURN VipPostDeferredSends(VIP_VI_HANDLE ViHandle, VIP_BOOLEAN EnableInterrupt,
					    VIP_BOOLEAN *SendsDeferred)
{
	struct vipl_vi *vi = (struct vipl_vi *)vipl_handle_get(ViHandle, VK_VI);
	if (vi == NULL || SendsDeferred == NULL) {
		vipl_handle_put(vi ? &vi->o : NULL);
		return VIP_INVALID_PARAMETER;
	}
	struct vipl_nic *nic = vi->o.nic;
	VIP_RETURN rc = VIP_SUCCESS;
	pthread_mutex_lock(&nic->lock);
	if (!vi->dfc) {
		rc = VIP_INVALID_STATE; /* not a DFC VI: nothing is ever deferred */
	} else {
		vipl_sq_pump(vi);
		vi->dfc_interrupt = EnableInterrupt != VIP_FALSE;
		*SendsDeferred = vipl_dfc_deferred(vi) ? VIP_TRUE : VIP_FALSE;
		if (vi->dfc_interrupt && *SendsDeferred)
			vipl_nic_wake(nic); /* the thread's timer looks again */
	}
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&vi->o);
	return rc;
}
