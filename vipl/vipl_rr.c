/* Reliable Reception's acknowledgements (VIA §2.5.3, D114; docs/vipl.md "Reliable
 * Reception"): a send completes only once its data is in the peer's memory and, for a Send,
 * the peer's receive completed. Both ends of an RR connection count:
 *   - a message that takes a receive of the peer (a Send, an RDMA Write with immediate) gets
 *     the next number, rr_seq, when it is issued;
 *   - each end counts the receives it completed (rx_done) and writes that count with an
 *     8-octet RDMA Write into the peer's ack word ([16] of its ack block), in the same post as
 *     its next send ahead of it (one batch on the wire, so a reply carries it for free), or
 *     on its own when the application goes waiting without sending (vipl_comp.c) or the NIC
 *     thread took the completion while nobody waits;
 *   - a message whose own work request completed is done when the peer's count reaches its
 *     number. Receives complete in message order, so a count of k says the first k such
 *     messages were placed and their receives completed.
 * What the count does not cover, an RDMA Write without immediate (no receive of the peer sees
 * it) and anything while a waiter would otherwise sleep with no reply coming, uses a 1-octet
 * RDMA Read of the peer's ack word: RDMAP returns the Read Response only after everything sent
 * before the Read Request was placed, so a Read completes every message issued before it.
 * The Read is what keeps it live when the peer's application never calls the library: the
 * peer's RNIC answers it alone. */
#include "vipl_int.h"

#include <pthread.h>
#include <string.h>

#define ACK_IN 16
#define ACK_OUT 24

/* work request ids of this file's own work (never a queue entry's address) */
static const char ack_write_tag, ack_read_tag;
#define WR_ACK_WRITE ((uint64_t)(uintptr_t)&ack_write_tag)
#define WR_ACK_READ ((uint64_t)(uintptr_t)&ack_read_tag)

bool vipl_rr(const struct vipl_vi *vi)
{
	return vi->attr.ReliabilityLevel == VIP_SERVICE_RELIABLE_RECEPTION;
}

bool vipl_rr_counted(const struct vipl_wqe *e)
{
	return !e->recv && (e->op == VIP_CONTROL_OP_SENDRECV ||
			    (e->op == VIP_CONTROL_OP_RDMAWRITE && e->has_imm));
}

unsigned vipl_rr_ack_wr(struct vipl_vi *vi, struct ibv_send_wr *wr, struct ibv_sge *sg)
{
	struct vipl_conn *c = &vi->c;
	if (!vipl_rr(vi) || c->ack_mr == NULL || c->rx_done == c->rx_told ||
	    c->ack_writes >= VIPL_RR_ACK_WRITES)
		return 0;
	/* the source word may be rewritten before this Write leaves: it only grows, and a
	 * newer count is as true */
	__atomic_store_n((uint64_t *)(void *)(c->ack + ACK_OUT), c->rx_done, __ATOMIC_RELAXED);
	*sg = (struct ibv_sge){ (uintptr_t)(c->ack + ACK_OUT), 8, c->ack_mr->lkey };
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = WR_ACK_WRITE;
	wr->sg_list = sg;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_RDMA_WRITE;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->wr.rdma.remote_addr = c->peer_ack_va + ACK_IN;
	wr->wr.rdma.rkey = c->peer_ack_stag;
	return 1;
}

void vipl_rr_ack_posted(struct vipl_vi *vi)
{
	vi->c.rx_told = __atomic_load_n((uint64_t *)(void *)(vi->c.ack + ACK_OUT),
					__ATOMIC_RELAXED);
	vi->c.ack_writes++;
}

void vipl_rr_flush(struct vipl_vi *vi)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sg;
	if (vi->state != VIP_STATE_CONNECTED || vi->c.qp == NULL ||
	    vipl_rr_ack_wr(vi, &wr, &sg) == 0)
		return;
	if (ibv_post_send(vi->c.qp, &wr, &bad) == 0)
		vipl_rr_ack_posted(vi);
	/* refused: the QP is leaving RTS; its completions say why */
}

/* Every waiting send numbered up to acked is done (their WRs completed in post order). */
static void complete_upto(struct vipl_vi *vi, uint64_t acked)
{
	struct vipl_conn *c = &vi->c;
	if (acked <= c->rr_acked)
		return;
	c->rr_acked = acked;
	for (struct vipl_wqe *e = vi->sq.head; e != NULL && c->rr_waiting > 0; e = e->next) {
		if (e->state != WQE_ISSUED || e->pending != 0 || e->rr_seq == 0)
			continue;
		if (e->rr_seq > acked)
			break;
		c->rr_waiting--;
		vipl_wqe_finish(vi, e, 0);
	}
	c->rr_wait_us = vipl_now_us(); /* the next one's wait counts from here */
}

void vipl_rr_check(struct vipl_vi *vi)
{
	if (vi->c.rr_waiting == 0 || vi->c.ack == NULL)
		return;
	complete_upto(vi, __atomic_load_n((uint64_t *)(void *)(vi->c.ack + ACK_IN),
					  __ATOMIC_ACQUIRE));
}

void vipl_rr_read(struct vipl_vi *vi)
{
	struct vipl_conn *c = &vi->c;
	if (c->rr_waiting == 0 || c->rr_read_covers != 0 || vi->state != VIP_STATE_CONNECTED ||
	    c->qp == NULL)
		return;
	struct ibv_sge sg = { (uintptr_t)(c->ack + 8), 1, c->ack_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_ACK_READ, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	wr.wr.rdma.remote_addr = c->peer_ack_va;
	wr.wr.rdma.rkey = c->peer_ack_stag;
	if (ibv_post_send(c->qp, &wr, &bad) == 0)
		c->rr_read_covers = c->rr_sent;
}

bool vipl_rr_wait_ack(struct vipl_vi *vi, struct vipl_wqe *e)
{
	if (e->rr_seq == 0 || e->rr_seq <= vi->c.rr_acked)
		return false;
	if (vi->c.rr_waiting++ == 0)
		vi->c.rr_wait_us = vipl_now_us();
	return true;
}

void vipl_rr_idle_sender(struct vipl_vi *vi, uint64_t spin_us)
{
	if (vi->c.rr_waiting > 0 && vi->c.rr_read_covers == 0 &&
	    vipl_now_us() - vi->c.rr_wait_us >= spin_us)
		vipl_rr_read(vi);
}

/* The peer may be waiting for this count to complete its last send (a ping-pong's last
 * reply): it goes before the stream ends. Destroyed at once, the connection could lose it;
 * 50 ms lets the Write leave first (loopback and a LAN take microseconds). */
uint64_t vipl_rr_last_ack(struct vipl_vi *vi)
{
	unsigned before = vi->c.ack_writes;
	vipl_rr_flush(vi);
	return vi->c.ack_writes != before ? 50 : 0;
}

bool vipl_rr_wc(struct vipl_vi *vi, const struct ibv_wc *wc, bool *ok)
{
	*ok = wc->status == IBV_WC_SUCCESS;
	if (wc->wr_id == WR_ACK_WRITE) {
		if (vi->c.ack_writes > 0)
			vi->c.ack_writes--;
		return true;
	}
	if (wc->wr_id != WR_ACK_READ)
		return false;
	uint64_t covers = vi->c.rr_read_covers;
	vi->c.rr_read_covers = 0;
	if (*ok)
		complete_upto(vi, covers);
	return true;
}

/* The NIC thread took vi's completions: the application is not polling them now. An
 * acknowledgement due goes out unless an application thread waits on vi (it may reply and
 * carry it); sends still waiting get a Read unless the application polled in the last 5 ms
 * (the coarse clock's resolution; its peer's next reply or wait brings the count, and the
 * thread looks again when it re-arms the CQ). */
void vipl_rr_thread(struct vipl_vi *vi)
{
	if (!vipl_rr(vi) || vi->c.ack == NULL)
		return;
	if (vi->waiters == 0)
		vipl_rr_flush(vi);
	if (vi->c.rr_waiting > 0 && vipl_now_us() - vi->inline_us > 5000)
		vipl_rr_read(vi);
}
