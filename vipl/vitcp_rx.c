/* VI/TCP receive side (draft §3.2-§3.4): whole segments from the stream, checked before any
 * octet is placed. The peer is untrusted: a malformed segment (version, length, type, order,
 * offsets), a write outside a registered region, a wrong memory handle or a disabled RDMA
 * operation ends the connection with the VIA error it amounts to (docs/vipl.md "VI/TCP: a
 * hostile peer"), and nothing is ever written outside the registered memory the VI may use.
 * Per reliability level (VIA §2.5, Table 1): Unreliable drops a message that cannot be taken
 * and stays connected; Reliable Delivery ends the connection; Reliable Reception first tells
 * the sender (Message ACK + VI Error Type), then ends it. NIC lock held. */
#include "vitcp.h"

#include <string.h>

#define SEG(d, i) ((VIP_DESCRIPTOR_SEGMENT *)((char *)&(d)->CS + sizeof((d)->CS)) + (i))

void vt_fail(struct vipl_vi *vi, VIP_ERROR_CODE code, uint32_t status, bool orderly)
{
	if (vi == NULL || vi->state != VIP_STATE_CONNECTED)
		return;
	if (status != 0 && vi->attr.ReliabilityLevel == VIP_SERVICE_RELIABLE_RECEPTION)
		for (struct vipl_wqe *e = vi->sq.head; e != NULL; e = e->next)
			if (e->state == WQE_ISSUED) { /* the oldest unfinished one (§2.5.3) */
				e->status |= e->status ? 0 : status;
				break;
			}
	if (vi->vt != NULL)
		vt_close_after(vi->vt, VIPL_GRAVE_MS); /* a last acknowledgement leaves first */
	vi->state = VIP_STATE_ERROR;
	vipl_wq_flush(vi, &vi->sq);
	vipl_wq_flush(vi, &vi->rq);
	vipl_async_error_as(vi->o.nic, vi, code, VIP_RESOURCE_VI, NULL, 0, orderly);
}

/* The message numbered msgno cannot be taken here (bits: VI Error Type). */
static void msg_error(struct vipl_vi *vi, uint32_t msgno, uint16_t bits, VIP_ERROR_CODE code)
{
	struct vt_conn *c = vi->vt;
	if (c == NULL)
		return; /* ended already */
	if (vi->attr.ReliabilityLevel == VIP_SERVICE_UNRELIABLE) {
		c->rx.drop = true; /* §2.5.1: this message is lost, the VI stays */
		return;
	}
	if (vi->attr.ReliabilityLevel == VIP_SERVICE_RELIABLE_RECEPTION) {
		c->rx_ok = msgno; /* §3.2: Message ACK names the message in error */
		c->err_code = bits;
		(void)vt_nop(c);
	}
	vt_fail(vi, code, 0, false);
}

/* The oldest receive ready for a message, or NULL. */
static struct vipl_wqe *next_receive(struct vipl_vi *vi)
{
	for (struct vipl_wqe *e = vi->rq.head; e != NULL; e = e->next)
		if (e->state == WQE_ISSUED)
			return e;
	return NULL;
}

/* A receive ends (UR: in error; others: done); the next message may be told. */
static void receive_done(struct vipl_vi *vi, struct vipl_wqe *e, uint32_t err)
{
	vipl_wqe_finish(vi, e, err);
	vipl_wq_complete_ready(vi, &vi->rq);
}

/* A receive the message at hand cannot fill: too small, or its memory went. */
static void receive_failed(struct vipl_vi *vi, struct vipl_wqe *e, uint32_t err, uint32_t msgno)
{
	struct vt_conn *c = vi->vt;
	c->rx.e = NULL;
	e->length = 0;
	receive_done(vi, e, err);
	msg_error(vi, msgno, VT_E_VDE, VIP_ERROR_CONN_LOST);
}

/* Start of a Send or an RDMA Write: its number must be the next (§3.2). -1: protocol error. */
static int msg_start(struct vt_conn *c, const struct vt_hdr *h)
{
	if (c->rx.active || h->offset != 0 || h->msgno != c->rx_expect)
		return -1;
	memset(&c->rx, 0, sizeof(c->rx));
	c->rx.active = true;
	c->rx.type = vt_type(h);
	c->rx.msgno = h->msgno;
	c->rx.idv = (h->flags & VT_F_IDV) != 0;
	c->rx.imm = h->imm;
	c->rx_expect++;
	return 0;
}

/* A continuation must follow its message exactly (type, number, offset, immediate). */
static int msg_continue(const struct vt_rx_msg *m, const struct vt_hdr *h)
{
	if (!m->active || m->type != vt_type(h) || m->msgno != h->msgno || m->next_off != h->offset ||
	    m->idv != ((h->flags & VT_F_IDV) != 0))
		return -1;
	return 0;
}

static int rx_send(struct vipl_vi *vi, struct vt_conn *c, const struct vt_hdr *h,
		   const uint8_t *p, uint32_t n)
{
	if (h->offset == 0 ? msg_start(c, h) : msg_continue(&c->rx, h))
		return -1;
	struct vt_rx_msg *m = &c->rx;
	if (h->offset == 0 && (m->e = next_receive(vi)) == NULL) {
		msg_error(vi, m->msgno, VT_E_VDE, VIP_ERROR_RECVQ_EMPTY);
		if (vi->vt == NULL)
			return 1;
	}
	m->tre |= (h->flags & VT_F_TRE) != 0;
	if ((uint64_t)m->next_off + n > UINT32_MAX)
		return -1;
	m->next_off += n;
	struct vipl_wqe *e = m->e;
	if (!m->drop && e != NULL) {
		uint32_t err = (uint64_t)e->filled + n > e->length ? VIP_STATUS_LENGTH_ERROR :
			       vipl_seg_copy(vi, e, e->filled, (void *)(uintptr_t)p, n, true);
		if (err != 0) {
			receive_failed(vi, e, err, m->msgno);
			if (vi->vt == NULL)
				return 1;
		} else {
			e->filled += n;
		}
	}
	if (!(h->flags & VT_F_EOM))
		return 0;
	m->active = false;
	if (!m->drop && m->e != NULL) {
		e->length = e->filled;
		e->has_imm = m->idv;
		e->imm = m->idv ? m->imm : 0;
		/* §3.2 Transmit Error: the whole message is in error */
		receive_done(vi, e, m->tre ? VIP_STATUS_TRANSPORT_ERROR : 0);
	}
	if (!m->drop)
		c->rx_ok = m->msgno;
	return 0;
}

/* The RDMA target [addr + off, + n) lies in a region of this VI's Ptag with RDMA Write (or
 * Read) enabled, under the handle the peer named; the region, else NULL. */
static struct vipl_region *rdma_region(struct vipl_vi *vi, const struct vt_rdma *r, uint32_t off,
				       uint32_t n, bool write)
{
	struct vipl_region *reg = vipl_region_find(vi->o.nic, r->handle);
	uint64_t a = r->addr + off;
	if (reg == NULL || reg->ptag != vi->ptag || (write ? !reg->rdma_write : !reg->rdma_read) ||
	    (write ? !vi->attr.EnableRdmaWrite : !vi->attr.EnableRdmaRead) || a < r->addr ||
	    a < reg->lo || a + n < a || a + n > reg->hi || (uint64_t)off + n > r->length)
		return NULL;
	return reg;
}

static int rx_write(struct vipl_vi *vi, struct vt_conn *c, const struct vt_hdr *h,
		    const uint8_t *p, uint32_t n)
{
	struct vt_rdma r;
	vt_rdma_get(p, &r);
	p += VT_RDMA_LEN;
	n -= VT_RDMA_LEN;
	if (h->offset == 0) {
		if (msg_start(c, h) != 0)
			return -1;
		c->rx.rdma = r;
	} else if (msg_continue(&c->rx, h) != 0 || memcmp(&r, &c->rx.rdma, sizeof(r)) != 0) {
		return -1; /* every segment names the message's first address (D268) */
	}
	struct vt_rx_msg *m = &c->rx;
	m->tre |= (h->flags & VT_F_TRE) != 0;
	if (!m->drop && rdma_region(vi, &r, h->offset, n, true) == NULL) {
		msg_error(vi, m->msgno, VT_E_MPE, VIP_ERROR_RDMAW_PROT);
		if (vi->vt == NULL)
			return 1;
	}
	if (!m->drop)
		memcpy((void *)(uintptr_t)(r.addr + h->offset), p, n);
	m->next_off += n;
	if (!(h->flags & VT_F_EOM))
		return 0;
	m->active = false;
	if (m->next_off != r.length)
		return -1; /* the message is not the length it announced */
	if (m->drop)
		return 0;
	if (m->idv) { /* with immediate data: it takes a receive (VIA §6.2) */
		struct vipl_wqe *e = next_receive(vi);
		if (e == NULL) {
			msg_error(vi, m->msgno, VT_E_VDE, VIP_ERROR_RECVQ_EMPTY);
			return vi->vt == NULL ? 1 : 0;
		}
		e->op = VIP_CONTROL_OP_RDMAWRITE; /* Status: remote RDMA Write */
		e->length = 0;
		e->has_imm = true;
		e->imm = m->imm;
		receive_done(vi, e, m->tre ? VIP_STATUS_TRANSPORT_ERROR : 0);
	}
	c->rx_ok = m->msgno;
	return 0;
}

static int rx_read_req(struct vipl_vi *vi, struct vt_conn *c, const struct vt_hdr *h,
		       const uint8_t *p, uint32_t n)
{
	struct vt_rdma r;
	if (n != VT_RDMA_LEN || !(h->flags & VT_F_EOM) || msg_start(c, h) != 0)
		return -1; /* §3.2: a Read Request is one segment */
	c->rx.active = false;
	vt_rdma_get(p, &r);
	if (vi->attr.ReliabilityLevel == VIP_SERVICE_UNRELIABLE || r.length > vi->granted_mtu)
		return -1;
	/* answers still queued beyond what the window we offered allows: the peer ignores it
	 * (§2.2.2.2.6), and would make us hold its Reads' data without bound */
	if (c->out_len - c->out_off > (size_t)VT_READ_WINDOW * VIPL_MAX_XFER + VT_OUT_MAX)
		return -1;
	bool bad = r.length > 0 && rdma_region(vi, &r, 0, r.length, false) == NULL;
	if (vt_read_respond(vi, h->msgno, &r, bad) != 0)
		return -1;
	c->rx_ok = h->msgno;
	return 0;
}

/* The Read this response answers: the oldest issued Read numbered msgno. */
static struct vipl_wqe *read_of(struct vipl_vi *vi, uint32_t msgno)
{
	for (struct vipl_wqe *e = vi->sq.head; e != NULL; e = e->next)
		if (e->state == WQE_ISSUED && e->op == VIP_CONTROL_OP_RDMAREAD)
			return e->msgno == msgno ? e : NULL; /* answered in order */
	return NULL;
}

static int rx_read_resp(struct vipl_vi *vi, struct vt_conn *c, const struct vt_hdr *h,
			const uint8_t *p, uint32_t n)
{
	struct vt_rx_msg *m = &c->resp;
	if (h->offset == 0) {
		if (m->active)
			return -1;
		memset(m, 0, sizeof(*m));
		m->active = true;
		m->type = VT_READ_RESP;
		m->msgno = h->msgno;
		if ((m->e = read_of(vi, h->msgno)) == NULL)
			return -1; /* an answer to nothing we asked */
	} else if (msg_continue(m, h) != 0) {
		return -1;
	}
	struct vipl_wqe *e = m->e;
	m->tre |= (h->flags & VT_F_TRE) != 0;
	if ((uint64_t)e->filled + n > e->length)
		return -1; /* more than we asked for */
	if (e->status == 0 && vipl_seg_copy(vi, e, e->filled, (void *)(uintptr_t)p, n, true) != 0)
		e->status |= VIP_STATUS_PROTECTION_ERROR;
	e->filled += n;
	m->next_off += n;
	if (!(h->flags & VT_F_EOM))
		return 0;
	m->active = false;
	c->reads_out--;
	if (m->tre) { /* the responder refused: a protection error there (VIA §6.3.3) */
		e->status |= VIP_STATUS_RDMA_PROT_ERROR;
		vipl_wqe_finish(vi, e, 0);
		vt_fail(vi, VIP_ERROR_RDMAR_PROT, 0, false);
		return 1;
	}
	if (e->filled != e->length)
		return -1;
	vipl_wqe_finish(vi, e, 0);
	vipl_wq_complete_ready(vi, &vi->sq);
	return 0;
}

/* One data segment (types 0-4) of a connected VI. 0 fine, 1 the connection ended, -1 a
 * protocol error (the caller ends it). */
static int data_segment(struct vipl_vi *vi, struct vt_conn *c, const struct vt_hdr *h,
			const uint8_t *body, uint32_t n)
{
	c->peer_posted = h->rx_posted;
	if (vi->attr.ReliabilityLevel == VIP_SERVICE_RELIABLE_RECEPTION) {
		vt_on_ack(vi, h->ack, h->rerr);
		if (vi->vt == NULL)
			return 1;
	}
	switch (vt_type(h)) {
	case VT_NOP:
		return n == 0 ? 0 : -1;
	case VT_SEND:
		return rx_send(vi, c, h, body, n);
	case VT_RDMA_WRITE:
		return n < VT_RDMA_LEN ? -1 : rx_write(vi, c, h, body, n);
	case VT_READ_REQ:
		return rx_read_req(vi, c, h, body, n);
	case VT_READ_RESP:
		return rx_read_resp(vi, c, h, body, n);
	default:
		return -1;
	}
}

/* A CE segment's body without its trailer: with the CRC option the last four octets are the
 * CRC, checked here (§3.5, §3.6). -1: malformed. */
static int ce_body(const uint8_t *seg, size_t len, size_t *body_len)
{
	struct vt_ce ce;
	size_t n = len - VT_HDR_LEN;
	if (vt_ce_get(seg + VT_HDR_LEN, n, &ce) == 0 && !ce.crc) {
		*body_len = n;
		return 0;
	}
	if (!vt_crc_sealed(seg, len) || vt_ce_get(seg + VT_HDR_LEN, n - 4, &ce) != 0 || !ce.crc)
		return -1;
	*body_len = n - 4;
	return 0;
}

/* §3.6: with the CRC on, a segment's trailer must match it. */
static bool trailer_ok(const struct vt_conn *c, const uint8_t *seg, size_t len)
{
	return !c->crc || vt_crc_sealed(seg, len);
}

/* A segment whose CRC does not match. Of the draft's two ways (§3.6) the first needs VI and
 * TCP merged; this is the second: the receive of a Send (the one being filled, or the next
 * for a first segment) completes with what it holds and a transport error, and the
 * connection closes, on every reliability level: Unreliable "may" go on, but the header, and
 * with it the next segment's boundary, is suspect too. */
static void crc_failed(struct vipl_vi *vi, struct vt_conn *c, const struct vt_hdr *h)
{
	struct vipl_wqe *e = NULL;
	if (vt_type(h) == VT_SEND)
		e = c->rx.active && c->rx.type == VT_SEND ? c->rx.e : next_receive(vi);
	if (e != NULL && !c->rx.drop) {
		c->rx.e = NULL;
		e->length = e->filled;
		receive_done(vi, e, VIP_STATUS_TRANSPORT_ERROR);
	}
	msg_error(vi, h->msgno, VT_E_UTE, VIP_ERROR_RDMA_TRANSPORT);
	if (vi->vt != NULL)
		vt_fail(vi, VIP_ERROR_RDMA_TRANSPORT, 0, false);
}

/* One whole segment of c. 0 go on, -1 the connection ended. */
static int segment(struct vipl_nic *nic, struct vt_conn *c, const uint8_t *seg, size_t len)
{
	struct vt_hdr h;
	vt_hdr_get(seg, &h);
	unsigned t = vt_type(&h);
	if (t >= VT_CONN_REQ && t <= VT_CONN_NOMATCH) {
		size_t bl = len - VT_HDR_LEN;
		bool bare = t == VT_CONN_REJECT || t == VT_CONN_NOMATCH; /* a CRC is optional there */
		if (!bare && ce_body(seg, len, &bl) != 0)
			bl = 0; /* vt_ce_get refuses it */
		vt_on_ce(nic, c, &h, seg + VT_HDR_LEN, bl);
		return c->fd >= 0 && c->state != VT_CLOSING ? 0 : -1;
	}
	struct vipl_vi *vi = c->vi;
	if (c->state != VT_CONNECTED || vi == NULL) {
		if (c->req != NULL)
			c->req->dead = true;
		vt_conn_close(c); /* data before the connection is up */
		return -1;
	}
	if (!trailer_ok(c, seg, len)) {
		crc_failed(vi, c, &h);
		return vi->vt == c ? 0 : -1;
	}
	int rc = data_segment(vi, c, &h, seg + VT_HDR_LEN,
			      (uint32_t)(len - VT_HDR_LEN - vt_trailer_len(c)));
	if (rc < 0) /* §3.2 / VIA §7: a protocol violation is a transport error */
		msg_error(vi, h.msgno, VT_E_UTE, VIP_ERROR_RDMA_TRANSPORT);
	if (rc < 0 && vi->vt != NULL)
		vt_fail(vi, VIP_ERROR_RDMA_TRANSPORT, 0, false); /* Unreliable too: the stream is lost */
	return vi->vt == c ? 0 : -1;
}

int vt_rx_segments(struct vipl_nic *nic, struct vt_conn *c)
{
	size_t at = 0;
	int rc = 0;
	while (c->in_len - at >= VT_HDR_LEN) {
		struct vt_hdr h;
		vt_hdr_get(c->in + at, &h);
		if (h.version != VT_VERSION || h.seg_len < VT_HDR_LEN || vt_type(&h) > VT_CONN_NOMATCH) {
			/* no segment boundary to go on from */
			if (c->vi != NULL && c->state == VT_CONNECTED)
				vt_fail(c->vi, VIP_ERROR_RDMA_TRANSPORT, VIP_STATUS_TRANSPORT_ERROR, false);
			else
				vt_conn_close(c);
			return -1;
		}
		if (c->in_len - at < h.seg_len)
			break;
		if (segment(nic, c, c->in + at, h.seg_len) != 0) {
			rc = -1;
			break;
		}
		at += h.seg_len;
	}
	if (rc == 0 && at > 0) {
		memmove(c->in, c->in + at, c->in_len - at);
		c->in_len -= at;
	}
	return rc;
}
