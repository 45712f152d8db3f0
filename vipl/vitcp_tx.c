/* VI/TCP transmit side (draft §2.2.2.2.3, §3.2, §3.4): descriptors of the send queue become
 * messages of one or more segments, queued whole (one message's segments are never
 * interleaved with another's) and handed to TCP without blocking; the NIC thread writes the
 * rest when the socket drains. Sends complete when TCP took their last octet (Unreliable,
 * Reliable Delivery: D120's reading on this wire) or when the peer's Message ACK covers them
 * (Reliable Reception); an RDMA Read when its response arrived. NIC lock held. */
#include "vitcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SEG(d, i) ((VIP_DESCRIPTOR_SEGMENT *)((char *)&(d)->CS + sizeof((d)->CS)) + (i))

/* Room for len more queued octets; NULL on allocation failure. */
static uint8_t *reserve(struct vt_conn *c, size_t len)
{
	if (c->out_off > 0 && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_len + len > c->out_cap) {
		if (c->out_off > 0) { /* reuse the octets TCP took */
			memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
			c->out_len -= c->out_off;
			c->out_off = 0;
		}
		size_t cap = c->out_cap ? c->out_cap : 65536;
		while (cap < c->out_len + len)
			cap *= 2;
		if (cap != c->out_cap) {
			uint8_t *n = realloc(c->out, cap);
			if (n == NULL)
				return NULL;
			c->out = n;
			c->out_cap = cap;
		}
	}
	uint8_t *p = c->out + c->out_len;
	c->out_len += len;
	c->tx_queued += len;
	return p;
}

int vt_queue(struct vt_conn *c, const void *p, size_t len)
{
	uint8_t *dst = reserve(c, len);
	if (dst == NULL)
		return -1;
	memcpy(dst, p, len);
	return 0;
}

int vt_flush(struct vt_conn *c)
{
	while (c->rc != NULL && c->out_off < c->out_len) {
		struct iovec iov = { c->out + c->out_off, c->out_len - c->out_off };
		ssize_t n = rn_conn_sendv(c->rc, &iov, 1);
		if (n > 0) {
			c->out_off += (size_t)n;
			c->tx_total += (uint64_t)n;
			continue;
		}
		if (n == -EAGAIN) {
			vipl_nic_wake(c->nic); /* the thread polls for room */
			return 0;
		}
		return -1;
	}
	return c->rc != NULL ? 0 : -1;
}

void vt_hdr_fill(struct vt_conn *c, struct vt_hdr *h, unsigned flags, uint32_t msgno)
{
	memset(h, 0, sizeof(*h));
	h->version = VT_VERSION;
	h->flags = (uint8_t)flags;
	h->msgno = msgno;
	/* acknowledgements and errors are meaningful on Reliable Reception only, but sent
	 * alike on every level (§3.2 allows it): one code path */
	h->ack = c->rx_ok;
	h->rerr = c->err_code;
	h->rx_posted = c->rx_posted;
	c->ack_told = c->rx_ok;
	c->posted_told = c->rx_posted;
}

/* A segment of a header alone (and the trailer): a NOP, or a Read Response with Transmit
 * Error. */
static int queue_bare(struct vt_conn *c, unsigned flags, uint32_t msgno)
{
	uint8_t buf[VT_HDR_LEN + 4];
	size_t n = VT_HDR_LEN + vt_trailer_len(c);
	struct vt_hdr h;
	vt_hdr_fill(c, &h, flags, msgno);
	h.seg_len = (uint16_t)n;
	vt_hdr_put(buf, &h);
	if (c->crc)
		vt_crc_seal(buf, n);
	return vt_queue(c, buf, n);
}

int vt_nop(struct vt_conn *c)
{
	return queue_bare(c, VT_F_EOM | VT_NOP, c->tx_msgno); /* §3.2: the last message's number */
}

void vt_tell(struct vipl_vi *vi)
{
	struct vt_conn *c = vi->vt;
	if (c == NULL || c->state != VT_CONNECTED)
		return;
	bool ack = vi->attr.ReliabilityLevel == VIP_SERVICE_RELIABLE_RECEPTION &&
		   c->ack_told != c->rx_ok;
	bool credit = c->peer_dfc && c->posted_told != c->rx_posted;
	if ((ack || credit) && (vt_nop(c) != 0 || vt_flush(c) != 0))
		vt_fail(vi, VIP_ERROR_CONN_LOST, 0, false);
}

/* Segments of a Send / RDMA Write / Read Response of total octets taken from src (a
 * descriptor, or memory when e is NULL). */
static int queue_data(struct vt_conn *c, struct vipl_vi *vi, unsigned type, uint32_t msgno,
		      struct vipl_wqe *e, const uint8_t *mem, uint32_t total,
		      const struct vt_rdma *rdma, bool imm, uint32_t immv)
{
	size_t rl = rdma != NULL ? VT_RDMA_LEN : 0, tl = vt_trailer_len(c);
	uint32_t off = 0;
	do {
		uint32_t chunk = total - off < VT_PAYLOAD_MAX ? total - off : VT_PAYLOAD_MAX;
		uint8_t *p = reserve(c, VT_HDR_LEN + rl + chunk + tl);
		if (p == NULL)
			return -1;
		bool bad = false;
		if (e != NULL && vipl_seg_copy(vi, e, off, p + VT_HDR_LEN + rl, chunk, false) != 0) {
			/* §2.2.2.2.5: the data cannot be had: pad, and say so with Transmit Error */
			memset(p + VT_HDR_LEN + rl, 0, chunk);
			e->status |= VIP_STATUS_PROTECTION_ERROR;
			bad = true;
		} else if (e == NULL) {
			memcpy(p + VT_HDR_LEN + rl, mem + off, chunk);
		}
		struct vt_hdr h;
		unsigned flags = type | (off + chunk == total ? VT_F_EOM : 0) |
				 (imm ? VT_F_IDV : 0) | (bad || (e && e->status) ? VT_F_TRE : 0);
		vt_hdr_fill(c, &h, flags, msgno);
		h.seg_len = (uint16_t)(VT_HDR_LEN + rl + chunk + tl);
		h.offset = off;
		h.imm = imm ? immv : 0;
		vt_hdr_put(p, &h);
		if (rdma != NULL)
			vt_rdma_put(p + VT_HDR_LEN, rdma);
		if (tl > 0)
			vt_crc_seal(p, h.seg_len);
		off += chunk;
	} while (off < total);
	return 0;
}

int vt_read_respond(struct vipl_vi *vi, uint32_t msgno, const struct vt_rdma *r, bool bad)
{
	struct vt_conn *c = vi->vt;
	if (bad) /* §3.2 Transmit Error: a protection error, no data */
		return queue_bare(c, VT_F_EOM | VT_F_TRE | VT_READ_RESP, msgno);
	return queue_data(c, vi, VT_READ_RESP, msgno, NULL,
			  (const uint8_t *)(uintptr_t)r->addr, r->length, NULL, false, 0);
}

static bool takes_receive(const struct vipl_wqe *e)
{
	return e->op == VIP_CONTROL_OP_SENDRECV || (e->op == VIP_CONTROL_OP_RDMAWRITE && e->has_imm);
}

/* One descriptor as a message; -1 when the connection cannot take it. */
static int issue(struct vipl_vi *vi, struct vt_conn *c, struct vipl_wqe *e)
{
	e->msgno = ++c->tx_msgno;
	if (e->op == VIP_CONTROL_OP_RDMAREAD) {
		const VIP_ADDRESS_SEGMENT *ra = &SEG(e->desc, 0)->Remote;
		struct vt_rdma r = { ra->Data.AddressBits, ra->Handle, e->length };
		uint8_t buf[VT_HDR_LEN + VT_RDMA_LEN + 4];
		size_t n = VT_HDR_LEN + VT_RDMA_LEN + vt_trailer_len(c);
		struct vt_hdr h;
		vt_hdr_fill(c, &h, VT_F_EOM | VT_READ_REQ, e->msgno);
		h.seg_len = (uint16_t)n;
		vt_hdr_put(buf, &h);
		vt_rdma_put(buf + VT_HDR_LEN, &r);
		if (c->crc)
			vt_crc_seal(buf, n);
		c->reads_out++;
		e->filled = 0;
		return vt_queue(c, buf, n);
	}
	if (e->op == VIP_CONTROL_OP_RDMAWRITE) {
		const VIP_ADDRESS_SEGMENT *ra = &SEG(e->desc, 0)->Remote;
		struct vt_rdma r = { ra->Data.AddressBits, ra->Handle, e->length };
		return queue_data(c, vi, VT_RDMA_WRITE, e->msgno, e, NULL, e->length, &r,
				  e->has_imm, e->imm);
	}
	return queue_data(c, vi, VT_SEND, e->msgno, e, NULL, e->length, NULL, e->has_imm, e->imm);
}

/* May e go now? Fence, RR's no-passing of Reads, the Read window, DFC. */
static bool may_issue(struct vipl_vi *vi, struct vt_conn *c, struct vipl_wqe *e)
{
	if (e->fence && vipl_wq_unfinished_before(&vi->sq, e))
		return false;
	if (vi->attr.ReliabilityLevel == VIP_SERVICE_RELIABLE_RECEPTION &&
	    vipl_wq_read_before(&vi->sq, e))
		return false;
	if (e->op == VIP_CONTROL_OP_RDMAREAD && c->reads_out >= c->peer_window)
		return false;
	/* DFC (§3.3): the peer's Rx Descriptors Posted, mod 2^16, bounds what takes one */
	if (vi->dfc && takes_receive(e) && (int16_t)(c->peer_posted - c->consumed) <= 0)
		return false;
	return c->out_len - c->out_off < VT_OUT_MAX;
}

void vt_sq_pump(struct vipl_vi *vi)
{
	struct vipl_wq *q = &vi->sq;
	struct vt_conn *c = vi->vt;
	if (vi->state != VIP_STATE_CONNECTED || c == NULL || c->state != VT_CONNECTED)
		return;
	for (struct vipl_wqe *e; (e = vipl_wq_next_wait(q)) != NULL;) {
		if (!may_issue(vi, c, e))
			break;
		uint32_t err = vipl_segs_usable(vi, e, e->op == VIP_CONTROL_OP_RDMAREAD);
		if (err != 0) { /* a region went since the post: an error at access, nothing sent */
			q->issue = e->next;
			vipl_wqe_finish(vi, e, err);
			continue;
		}
		if (issue(vi, c, e) != 0) {
			vt_fail(vi, VIP_ERROR_CATASTROPHIC, 0, false); /* out of memory */
			return;
		}
		if (takes_receive(e))
			c->consumed++;
		e->tx_end = c->tx_queued;
		e->state = WQE_ISSUED;
		q->issue = e->next;
	}
	if (vt_flush(c) != 0) {
		vt_fail(vi, VIP_ERROR_CONN_LOST, 0, false);
		return;
	}
	vt_tx_progress(vi);
}

void vt_tx_progress(struct vipl_vi *vi)
{
	struct vt_conn *c = vi->vt;
	if (c == NULL)
		return;
	bool rr = vi->attr.ReliabilityLevel == VIP_SERVICE_RELIABLE_RECEPTION;
	for (struct vipl_wqe *e = vi->sq.head; e != NULL; e = e->next) {
		if (e->state == WQE_WAIT)
			break;
		if (e->state == WQE_ISSUED && !rr && e->op != VIP_CONTROL_OP_RDMAREAD &&
		    e->tx_end <= c->tx_total)
			vipl_wqe_finish(vi, e, 0);
	}
	vipl_wq_complete_ready(vi, &vi->sq);
}

static uint32_t remote_status(uint16_t rerr)
{
	if (rerr & VT_E_MPE)
		return VIP_STATUS_RDMA_PROT_ERROR;
	if (rerr & VT_E_VDE)
		return VIP_STATUS_REMOTE_DESC_ERROR;
	return VIP_STATUS_TRANSPORT_ERROR;
}

/* §3.2 Message ACK (Reliable Reception): every send numbered up to ack is complete; with a VI
 * Error Type, the one numbered ack failed, and the connection with it. */
void vt_on_ack(struct vipl_vi *vi, uint32_t ack, uint16_t rerr)
{
	uint16_t vierr = rerr & (VT_E_MPE | VT_E_VDE | VT_E_UTE);
	for (struct vipl_wqe *e = vi->sq.head; e != NULL; e = e->next) {
		if (e->state != WQE_ISSUED || e->op == VIP_CONTROL_OP_RDMAREAD)
			continue;
		if ((int32_t)(ack - e->msgno) < 0)
			break;
		if (vierr != 0 && e->msgno == ack) {
			e->status |= remote_status(vierr);
			vt_fail(vi, (vierr & VT_E_MPE) ? VIP_ERROR_RDMAW_PROT : VIP_ERROR_CONN_LOST,
				0, false);
			return;
		}
		vipl_wqe_finish(vi, e, 0);
	}
	if (vierr != 0) /* an error of a message we cannot name */
		vt_fail(vi, VIP_ERROR_CONN_LOST, 0, false);
	else
		vipl_wq_complete_ready(vi, &vi->sq);
}

void vt_rq_pump(struct vipl_vi *vi)
{
	struct vipl_wq *q = &vi->rq;
	struct vt_conn *c = vi->vt;
	if (c == NULL || c->state != VT_CONNECTED)
		return;
	while (q->issue != NULL) {
		struct vipl_wqe *e = q->issue;
		q->issue = e->next;
		if (e->state != WQE_WAIT)
			continue;
		uint32_t err = vipl_segs_usable(vi, e, true);
		if (err != 0) { /* a region went since the post: an error at access */
			vipl_wqe_finish(vi, e, err);
			continue;
		}
		e->state = WQE_ISSUED; /* ready for a message: vitcp_rx.c takes the oldest */
		e->filled = 0;
		c->rx_posted++;
	}
	vt_tell(vi); /* a DFC peer hears of them */
	vipl_wq_complete_ready(vi, q);
}
