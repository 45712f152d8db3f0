/* Posting (VIA §9.6.1, §9.6.4, §10): validation of the descriptor at post (errors go into its
 * Status, the post still succeeds, the descriptor completes in order), then translation into
 * verbs work requests when the VI is connected and the QP has room ("pump"). A descriptor
 * with more data segments than the QP's SGE limit goes through a registered bounce buffer
 * (one SGE); an RDMA Read becomes one Read per local segment (the QP's Read has one sink SGE);
 * on Reliable Reception a send completes with the peer's acknowledgement (vipl_rr.c). */
#include "vipl_int.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#define SEG(d, i) ((VIP_DESCRIPTOR_SEGMENT *)((char *)&(d)->CS + sizeof((d)->CS)) + (i))

static unsigned data_first(unsigned op)
{
	return op == VIP_CONTROL_OP_SENDRECV ? 0 : 1; /* RDMA: DS[0] is the address segment */
}

/* A local data segment is usable by this VI: its region exists, has the VI's Ptag, contains
 * the bytes, and (when the NIC writes into it) is writable. */
static struct vipl_region *seg_region(struct vipl_vi *vi, const VIP_DATA_SEGMENT *s, bool sink)
{
	struct vipl_region *r = vipl_region_find(vi->o.nic, s->Handle);
	uintptr_t a = (uintptr_t)s->Data.Address;
	if (r == NULL || r->ptag != vi->ptag || a < r->lo || a + s->Length < a ||
	    a + s->Length > r->hi || (sink && !r->writable))
		return NULL;
	return r;
}

/* Format, protection and length checks of VIA §10.2 (the bits for Status; 0 if valid). */
static uint32_t check_desc(struct vipl_vi *vi, VIP_DESCRIPTOR *d, VIP_MEM_HANDLE mh,
			   struct vipl_wqe *e)
{
	uintptr_t da = (uintptr_t)d;
	struct vipl_region *dr = vipl_region_find(vi->o.nic, mh);
	VIP_CONTROL_SEGMENT *cs = &d->CS;

	if (da % VIP_DESCRIPTOR_ALIGNMENT)
		return VIP_STATUS_FORMAT_ERROR;
	if (dr == NULL || dr->ptag != vi->ptag || da < dr->lo || da + sizeof(*cs) > dr->hi) {
		vipl_async_error(vi->o.nic, vi, VIP_ERROR_POST_DESC, VIP_RESOURCE_DESCRIPTOR, d, 0);
		return VIP_STATUS_PROTECTION_ERROR;
	}
	e->op = cs->Control & VIP_CONTROL_OP_MASK;
	e->fence = (cs->Control & VIP_CONTROL_QFENCE) != 0;
	if ((cs->Control & VIP_CONTROL_RESERVED) || cs->Reserved != 0 ||
	    e->op == VIP_CONTROL_OP_RESERVED || (e->recv && e->op != VIP_CONTROL_OP_SENDRECV))
		return VIP_STATUS_FORMAT_ERROR;
	if (e->op == VIP_CONTROL_OP_RDMAREAD && vi->attr.ReliabilityLevel == VIP_SERVICE_UNRELIABLE)
		return VIP_STATUS_FORMAT_ERROR; /* Table 1 */
	unsigned first = data_first(e->op);
	if (cs->SegCount < first || cs->SegCount - first > VIPL_MAX_SEGS)
		return VIP_STATUS_FORMAT_ERROR;
	if (da + sizeof(*cs) + (size_t)cs->SegCount * sizeof(VIP_DESCRIPTOR_SEGMENT) > dr->hi)
		return VIP_STATUS_PROTECTION_ERROR;
	if (first && SEG(d, 0)->Remote.Reserved != 0)
		return VIP_STATUS_FORMAT_ERROR;
	uint64_t sum = 0;
	bool sink = e->recv || e->op == VIP_CONTROL_OP_RDMAREAD;
	for (unsigned i = first; i < cs->SegCount; i++) {
		const VIP_DATA_SEGMENT *s = &SEG(d, i)->Local;
		if (s->Length > 0 && seg_region(vi, s, sink) == NULL)
			return VIP_STATUS_PROTECTION_ERROR;
		sum += s->Length;
	}
	if (!e->recv && sum != cs->Length)
		return VIP_STATUS_LENGTH_ERROR;
	if (!e->recv && sum > vi->granted_mtu)
		return VIP_STATUS_LENGTH_ERROR; /* the VI's granted MTU, not the NIC's */
	e->length = (uint32_t)sum;
	if (!e->recv && (cs->Control & VIP_CONTROL_IMMEDIATE) && e->op != VIP_CONTROL_OP_RDMAREAD) {
		e->has_imm = true;
		e->imm = cs->ImmediateData;
	}
	return 0;
}

/* SGEs of the data segments [first, SegCount), zero-length ones left out; a bounce buffer when
 * there are more than max. Returns the SGE count, -1 (status in *err) on failure. */
static int build_sgl(struct vipl_vi *vi, struct vipl_wqe *e, struct ibv_sge *sg, unsigned max,
		     bool sink, uint32_t *err)
{
	VIP_DESCRIPTOR *d = e->desc;
	unsigned first = data_first(e->op), n = 0;
	for (unsigned i = first; i < e->nseg; i++) {
		const VIP_DATA_SEGMENT *s = &SEG(d, i)->Local;
		if (s->Length == 0)
			continue;
		struct vipl_region *r = seg_region(vi, s, sink);
		if (r == NULL) { /* deregistered since the post: error at access (§3.2.1) */
			*err = VIP_STATUS_PROTECTION_ERROR;
			return -1;
		}
		if (n < max)
			sg[n] = (struct ibv_sge){ (uintptr_t)s->Data.Address, s->Length, r->mr->lkey };
		n++;
	}
	if (n <= max)
		return (int)n;
	e->bounce = malloc(e->length);
	if (e->bounce != NULL)
		e->bounce_mr = ibv_reg_mr(vi->ptag->pd, e->bounce, e->length, IBV_ACCESS_LOCAL_WRITE);
	if (e->bounce_mr == NULL) {
		*err = VIP_STATUS_TRANSPORT_ERROR;
		return -1;
	}
	if (!sink) { /* gather now */
		size_t off = 0;
		for (unsigned i = first; i < e->nseg && off < e->length; i++) {
			const VIP_DATA_SEGMENT *s = &SEG(d, i)->Local;
			/* bounded by the buffer: a descriptor changed after its post (undefined
			 * for VIA) must not overrun it */
			size_t c = s->Length < e->length - off ? s->Length : e->length - off;
			memcpy((char *)e->bounce + off, s->Data.Address, c);
			off += c;
		}
	}
	sg[0] = (struct ibv_sge){ (uintptr_t)e->bounce, e->length, e->bounce_mr->lkey };
	return 1;
}

/* Scatter a bounce buffer into the receive's (or Read's) segments, len octets arrived. Each
 * segment is read once from the descriptor and checked again: the CPU copy must honour what
 * the RNIC's own placement would (a deregistered region is a protection error at access). */
uint32_t vipl_bounce_scatter(struct vipl_vi *vi, struct vipl_wqe *e, uint32_t len)
{
	VIP_DESCRIPTOR *d = e->desc;
	size_t off = 0;
	for (unsigned i = data_first(e->op); i < e->nseg && off < len; i++) {
		VIP_DATA_SEGMENT s = SEG(d, i)->Local;
		if (s.Length == 0)
			continue;
		if (seg_region(vi, &s, true) == NULL)
			return VIP_STATUS_PROTECTION_ERROR;
		size_t n = s.Length < len - off ? s.Length : len - off;
		memcpy(s.Data.Address, (char *)e->bounce + off, n);
		off += n;
	}
	return 0;
}

uint32_t vipl_segs_usable(struct vipl_vi *vi, struct vipl_wqe *e, bool sink)
{
	for (unsigned i = data_first(e->op); i < e->nseg; i++) {
		const VIP_DATA_SEGMENT *s = &SEG(e->desc, i)->Local;
		if (s->Length > 0 && seg_region(vi, s, sink) == NULL)
			return VIP_STATUS_PROTECTION_ERROR;
	}
	return 0;
}

/* Copy len octets between buf and the data segments of e from octet off of its data on
 * (to_desc: into them). Each segment is read once and re-validated (VIA §3.2.1: a region
 * deregistered since the post is a protection error at access), so a copy never leaves the
 * registered memory the VI may use. 0, or VIP_STATUS_PROTECTION_ERROR. */
uint32_t vipl_seg_copy(struct vipl_vi *vi, struct vipl_wqe *e, size_t off, void *buf, size_t len,
		       bool to_desc)
{
	VIP_DESCRIPTOR *d = e->desc;
	size_t at = 0, done = 0;
	for (unsigned i = data_first(e->op); i < e->nseg && done < len; i++) {
		VIP_DATA_SEGMENT s = SEG(d, i)->Local;
		if (s.Length == 0)
			continue;
		if (at + s.Length <= off) {
			at += s.Length;
			continue;
		}
		if (seg_region(vi, &s, to_desc) == NULL)
			return VIP_STATUS_PROTECTION_ERROR;
		size_t skip = off > at ? off - at : 0;
		size_t n = s.Length - skip < len - done ? s.Length - skip : len - done;
		char *mem = (char *)s.Data.Address + skip;
		if (to_desc)
			memcpy(mem, (const char *)buf + done, n);
		else
			memcpy((char *)buf + done, mem, n);
		done += n;
		at += s.Length;
	}
	return done == len ? 0 : VIP_STATUS_LENGTH_ERROR;
}

/* A refused post: the QP already left RTS (the peer's Terminate is on its way to us: the
 * descriptor is flushed with the others), or the RNIC cannot carry this descriptor. */
static uint32_t post_err(struct vipl_vi *vi)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	if (ibv_query_qp(vi->c.qp, &a, IBV_QP_STATE, &ia) == 0 && a.qp_state != IBV_QPS_RTS)
		return VIP_STATUS_DESC_FLUSHED_ERROR;
	return VIP_STATUS_FORMAT_ERROR;
}

static unsigned read_segs(const struct vipl_wqe *e)
{
	unsigned n = 0;
	for (unsigned i = 1; i < e->nseg; i++)
		n += SEG(e->desc, i)->Local.Length > 0;
	return n;
}

static unsigned wr_need(struct vipl_vi *vi, struct vipl_wqe *e)
{
	if (e->op == VIP_CONTROL_OP_RDMAREAD) {
		unsigned n = read_segs(e);
		return n > vi->sge_max ? 1u : n ? n : 1u;
	}
	/* RR: a plain RDMA Write takes a Read behind it (vipl_rr.c) */
	return vipl_rr(vi) && !vipl_rr_counted(e) ? 2u : 1u;
}

/* Post the Reads of an RDMA Read descriptor: one per non-empty local segment, at consecutive
 * remote offsets. Returns the number posted; *err on failure. */
static unsigned issue_read(struct vipl_vi *vi, struct vipl_wqe *e, uint32_t *err)
{
	VIP_DESCRIPTOR *d = e->desc;
	const VIP_ADDRESS_SEGMENT *ra = &SEG(d, 0)->Remote;
	uint64_t roff = 0;
	unsigned posted = 0;
	if (read_segs(e) > vi->sge_max) {
		/* Many sink segments: one Read into a bounce buffer, scattered at completion
		 * (bounded WR count whatever SegCount is). */
		struct ibv_sge sg;
		if (build_sgl(vi, e, &sg, 0, true, err) < 0)
			return 0;
		struct ibv_send_wr wr = { .wr_id = (uintptr_t)e, .sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ,
			.send_flags = IBV_SEND_SIGNALED | (e->fence ? IBV_SEND_FENCE : 0) };
		wr.wr.rdma.remote_addr = ra->Data.AddressBits;
		wr.wr.rdma.rkey = ra->Handle;
		struct ibv_send_wr *bad;
		if (ibv_post_send(vi->c.qp, &wr, &bad) != 0) {
			*err = post_err(vi);
			return 0;
		}
		return 1;
	}
	for (unsigned i = 1; i < e->nseg; i++) {
		const VIP_DATA_SEGMENT *s = &SEG(d, i)->Local;
		if (s->Length == 0)
			continue;
		struct vipl_region *r = seg_region(vi, s, true);
		if (r == NULL) {
			*err = VIP_STATUS_PROTECTION_ERROR;
			return posted;
		}
		struct ibv_sge sg = { (uintptr_t)s->Data.Address, s->Length, r->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = (uintptr_t)e, .sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED };
		if (posted == 0 && e->fence)
			wr.send_flags |= IBV_SEND_FENCE;
		wr.wr.rdma.remote_addr = ra->Data.AddressBits + roff;
		wr.wr.rdma.rkey = ra->Handle;
		struct ibv_send_wr *bad;
		if (ibv_post_send(vi->c.qp, &wr, &bad) != 0) {
			*err = post_err(vi);
			return posted;
		}
		roff += s->Length;
		posted++;
	}
	return posted;
}

/* Send / RDMA Write (with or without immediate). On RR: ahead of it the acknowledgement of the
 * receives completed here, when one is due; behind a plain Write the Read that completes it
 * (vipl_rr.c). Returns the work requests of e posted. */
static unsigned issue_send(struct vipl_vi *vi, struct vipl_wqe *e, uint32_t *err)
{
	struct ibv_sge sg[16], ack_sg, read_sg;
	unsigned max = vi->sge_max < 16 ? vi->sge_max : 16;
	int n = build_sgl(vi, e, sg, max, false, err);
	if (n < 0)
		return 0;
	struct ibv_send_wr ack, wr[2], *bad = NULL;
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = (uintptr_t)e;
	wr[0].sg_list = n ? sg : NULL;
	wr[0].num_sge = n;
	wr[0].send_flags = IBV_SEND_SIGNALED | (e->fence ? IBV_SEND_FENCE : 0);
	if (e->op == VIP_CONTROL_OP_RDMAWRITE) {
		const VIP_ADDRESS_SEGMENT *ra = &SEG(e->desc, 0)->Remote;
		wr[0].opcode = e->has_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
		wr[0].wr.rdma.remote_addr = ra->Data.AddressBits;
		wr[0].wr.rdma.rkey = ra->Handle;
	} else {
		wr[0].opcode = e->has_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	}
	if (e->has_imm)
		wr[0].imm_data = htonl(e->imm);
	if (vipl_rr(vi) && !vipl_rr_counted(e)) {
		read_sg = (struct ibv_sge){ (uintptr_t)(vi->c.ack + 8), 1, vi->c.ack_mr->lkey };
		wr[0].next = &wr[1];
		wr[1].wr_id = (uintptr_t)e;
		wr[1].sg_list = &read_sg;
		wr[1].num_sge = 1;
		wr[1].opcode = IBV_WR_RDMA_READ;
		wr[1].send_flags = IBV_SEND_SIGNALED;
		wr[1].wr.rdma.remote_addr = vi->c.peer_ack_va;
		wr[1].wr.rdma.rkey = vi->c.peer_ack_stag;
	}
	struct ibv_send_wr *first = &wr[0];
	bool acked = vipl_rr_ack_wr(vi, &ack, &ack_sg) != 0;
	if (acked) {
		ack.next = &wr[0];
		first = &ack;
	}
	unsigned mine = wr[0].next ? 2 : 1;
	if (ibv_post_send(vi->c.qp, first, &bad) == 0) {
		if (acked)
			vipl_rr_ack_posted(vi);
		if (vipl_rr(vi) && vipl_rr_counted(e))
			e->rr_seq = ++vi->c.rr_sent;
		return mine;
	}
	*err = post_err(vi);
	if (bad == first)
		return 0;
	if (acked)
		vipl_rr_ack_posted(vi);
	return bad == &wr[0] ? 0 : 1;
}

unsigned vipl_wq_unfinished_before(struct vipl_wq *q, struct vipl_wqe *upto)
{
	unsigned n = 0;
	for (struct vipl_wqe *e = q->head; e != NULL && e != upto; e = e->next)
		n += e->state == WQE_WAIT || e->state == WQE_ISSUED;
	return n;
}

bool vipl_wq_read_before(struct vipl_wq *q, struct vipl_wqe *upto)
{
	for (struct vipl_wqe *e = q->head; e != NULL && e != upto; e = e->next)
		if (e->state == WQE_ISSUED && e->op == VIP_CONTROL_OP_RDMAREAD)
			return true;
	return false;
}

/* Give waiting send entries to the QP, in order, while it has room. A fenced entry waits for
 * every earlier one to finish (VIA §6.3.1.2, the stronger of its two readings). NIC lock held. */
void vipl_iwarp_sq_pump(struct vipl_vi *vi)
{
	struct vipl_wq *q = &vi->sq;
	if (vi->state != VIP_STATE_CONNECTED || vi->c.qp == NULL)
		return;
	for (struct vipl_wqe *e; (e = vipl_wq_next_wait(q)) != NULL;) {
		unsigned need = wr_need(vi, e);
		if (q->inflight + need > VIPL_QP_DEPTH && q->inflight > 0)
			break;
		if (e->fence && vipl_wq_unfinished_before(q, e) > 0)
			break;
		if (vi->attr.ReliabilityLevel == VIP_SERVICE_RELIABLE_RECEPTION &&
		    vipl_wq_read_before(q, e))
			break; /* RR: nothing passes an RDMA Read (§6.3.1.1 bypass rules) */
		if (!vipl_dfc_allows(vi, e))
			break; /* DFC: deferred until the peer posts a receive (vipl_dfc.c) */
		uint32_t err = 0;
		unsigned posted;
		if (e->op == VIP_CONTROL_OP_RDMAREAD)
			posted = e->length ? issue_read(vi, e, &err) : 0;
		else
			posted = issue_send(vi, e, &err);
		q->issue = e->next;
		e->status |= err;
		e->pending = posted;
		q->inflight += posted;
		if (posted > 0)
			vipl_dfc_issued(vi, e);
		if (posted == 0)
			vipl_wqe_finish(vi, e, 0);
		else
			e->state = WQE_ISSUED;
	}
	vipl_wq_complete_ready(vi, q);
}

void vipl_iwarp_rq_pump(struct vipl_vi *vi)
{
	struct vipl_wq *q = &vi->rq;
	if (vi->c.qp == NULL)
		return;
	while (q->issue != NULL) {
		struct vipl_wqe *e = q->issue;
		if (e->state != WQE_WAIT) {
			q->issue = e->next;
			continue;
		}
		if (q->inflight >= VIPL_QP_DEPTH)
			break;
		struct ibv_sge sg[16];
		unsigned max = vi->rsge_max < 16 ? vi->rsge_max : 16;
		uint32_t err = 0;
		int n = build_sgl(vi, e, sg, max, true, &err);
		q->issue = e->next;
		if (n >= 0) {
			struct ibv_recv_wr wr = { .wr_id = (uintptr_t)e, .sg_list = n ? sg : NULL,
						  .num_sge = n }, *bad;
			if (ibv_post_recv(vi->c.qp, &wr, &bad) == 0) {
				e->state = WQE_ISSUED;
				e->pending = 1;
				q->inflight++;
				vi->c.rx_posted++;
				continue;
			}
			err = VIP_STATUS_TRANSPORT_ERROR;
		}
		vipl_wqe_finish(vi, e, err);
	}
	vipl_dfc_credit(vi); /* a DFC peer may now send more */
	vipl_wq_complete_ready(vi, q);
}

static VIP_RETURN post(void *h, VIP_DESCRIPTOR *d, VIP_MEM_HANDLE mh, bool recv)
{
	struct vipl_vi *vi = (struct vipl_vi *)vipl_handle_get(h, VK_VI);
	if (vi == NULL || d == NULL) {
		vipl_handle_put(vi ? &vi->o : NULL);
		return VIP_INVALID_PARAMETER;
	}
	struct vipl_nic *nic = vi->o.nic;
	struct vipl_wq *q = recv ? &vi->rq : &vi->sq;
	pthread_mutex_lock(&nic->lock);
	if (q->count >= VIPL_MAX_QDESC) {
		vipl_async_error(nic, vi, VIP_ERROR_VI_OVERRUN, VIP_RESOURCE_VI, d, 0);
		pthread_mutex_unlock(&nic->lock);
		vipl_handle_put(&vi->o);
		return VIP_ERROR_RESOURCE;
	}
	VIP_DESCRIPTOR *prev = q->tail ? q->tail->desc : NULL;
	struct vipl_wqe *e = vipl_wqe_new(q, d, recv);
	if (e == NULL) {
		pthread_mutex_unlock(&nic->lock);
		vipl_handle_put(&vi->o);
		return VIP_ERROR_RESOURCE;
	}
	if (prev != NULL) { /* the queue as VIA §10.2 links it */
		prev->CS.Next.Address = d;
		prev->CS.NextHandle = mh;
	}
	d->CS.Next.AddressBits = 0;
	d->CS.NextHandle = 0;
	__atomic_store_n(&d->CS.Status, 0, __ATOMIC_RELEASE);
	uint32_t err = check_desc(vi, d, mh, e);
	e->nseg = err ? 0 : d->CS.SegCount;
	if (err != 0)
		vipl_wqe_finish(vi, e, err);
	else if (vi->state == VIP_STATE_ERROR || (!recv && vi->state != VIP_STATE_CONNECTED))
		vipl_wqe_finish(vi, e, VIP_STATUS_DESC_FLUSHED_ERROR); /* VIA leaves it open */
	if (recv)
		vipl_rq_pump(vi);
	else
		vipl_sq_pump(vi);
	vipl_wq_complete_ready(vi, q);
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&vi->o);
	return VIP_SUCCESS;
}

VIPL_EXPORT VIP_RETURN VipPostSend(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR *DescriptorPtr,
				   VIP_MEM_HANDLE MemoryHandle)
{
	return post(ViHandle, DescriptorPtr, MemoryHandle, false);
}

VIPL_EXPORT VIP_RETURN VipPostRecv(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR *DescriptorPtr,
				   VIP_MEM_HANDLE MemoryHandle)
{
	return post(ViHandle, DescriptorPtr, MemoryHandle, true);
}
