/* The data path: ibv_post_send / ibv_post_recv / ibv_bind_mw and the Fast-Register extension,
 * translated into rn_qp work requests (docs/verbs.md "Work requests"). SGE lists pass through
 * (struct ibv_sge has the layout of struct rn_rq_sge; sv_srq.c asserts it). */
#include <errno.h>
#include <string.h>

#include "rnic.h"
#include "verbs_int.h"

#define SV_POST_BATCH 16

/* ibv_wr_opcode -> rn_wr_opcode; -1: not offered (no atomics: atomic_cap is NONE; TSO is
 * for raw Ethernet). Immediate data rides on RFC 7306 Immediate Data (docs/rdmap.md). */
static const int sv_wr_op[] = {
	[IBV_WR_RDMA_WRITE] = RN_WR_RDMA_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = RN_WR_RDMA_WRITE_IMM,
	[IBV_WR_SEND] = RN_WR_SEND,                      /* SOLICITED -> Send with SE */
	[IBV_WR_SEND_WITH_IMM] = RN_WR_SEND_IMM,        /* SOLICITED -> SE on the Send */
	[IBV_WR_RDMA_READ] = RN_WR_RDMA_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = -1,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = -1,
	[IBV_WR_LOCAL_INV] = RN_WR_LOCAL_INV,
	[IBV_WR_BIND_MW] = RN_WR_BIND_MW,
	[IBV_WR_SEND_WITH_INV] = RN_WR_SEND_INV,
	[IBV_WR_TSO] = -1,
	[IBV_WR_DRIVER1] = RN_WR_RDMA_READ_INV,          /* SOFTRNIC_WR_RDMA_READ_WITH_INV */
	[IBV_WR_ATOMIC_WRITE] = -1,
};

/* ibv_send_flags -> rn_send_flag (IBV_SEND_IP_CSUM has no meaning on RC: refused). */
static const struct {
	unsigned ibv, rn;
} sv_send_flag[] = {
	{ IBV_SEND_FENCE, RN_SEND_FENCE },        /* wait for earlier Reads to complete */
	{ IBV_SEND_SIGNALED, RN_SEND_SIGNALED },
	{ IBV_SEND_SOLICITED, RN_SEND_SOLICITED },
	{ IBV_SEND_INLINE, RN_SEND_INLINE },
};

static int sv_flags(unsigned ibv, unsigned *rn)
{
	unsigned known = 0;

	*rn = 0;
	for (size_t i = 0; i < sizeof(sv_send_flag) / sizeof(sv_send_flag[0]); i++) {
		known |= sv_send_flag[i].ibv;
		if (ibv & sv_send_flag[i].ibv)
			*rn |= sv_send_flag[i].rn;
	}
	return (ibv & ~known) ? EINVAL : 0;
}

/* MW access of a bind: remote rights and zero-based addressing only. */
static uint32_t sv_mw_access(unsigned ibv)
{
	return ((ibv & IBV_ACCESS_REMOTE_READ) ? RN_ACC_REMOTE_READ : 0) |
	       ((ibv & IBV_ACCESS_REMOTE_WRITE) ? RN_ACC_REMOTE_WRITE : 0) |
	       ((ibv & IBV_ACCESS_ZERO_BASED) ? RN_ACC_ZERO_BASED : 0);
}

static void sv_bind_wr(const struct ibv_mw_bind_info *bi, uint32_t new_rkey,
		       struct rn_bind_wr *b)
{
	b->mw_stag = new_rkey;
	b->mr_stag = bi->mr ? bi->mr->lkey : 0;
	b->addr = bi->addr;
	b->length = bi->length;
	b->access = sv_mw_access(bi->mw_access_flags);
}

static int sv_send_wr(const struct ibv_send_wr *w, struct rn_send_wr *r)
{
	int op = (unsigned)w->opcode < sizeof(sv_wr_op) / sizeof(sv_wr_op[0]) ? sv_wr_op[w->opcode]
									    : -1;

	memset(r, 0, sizeof(*r));
	if (op < 0)
		return EINVAL;
	if (w->opcode == IBV_WR_BIND_MW && !w->bind_mw.mw)
		return EINVAL;
	r->wr_id = w->wr_id;
	r->sg_list = (struct rn_rq_sge *)w->sg_list;
	r->num_sge = w->num_sge;
	r->opcode = (enum rn_wr_opcode)op;
	if (sv_flags(w->send_flags, &r->flags))
		return EINVAL;
	r->imm_data = w->imm_data;   /* __be32: its bytes go on the wire as they are */
	if (op == RN_WR_RDMA_WRITE || op == RN_WR_RDMA_WRITE_IMM || op == RN_WR_RDMA_READ ||
	    op == RN_WR_RDMA_READ_INV) {
		r->wr.rdma.remote_addr = w->wr.rdma.remote_addr;
		r->wr.rdma.rkey = w->wr.rdma.rkey;
	} else if (op == RN_WR_SEND_INV) {
		r->wr.send.inv_stag = w->invalidate_rkey;
	} else if (op == RN_WR_LOCAL_INV) {
		r->wr.inv.stag = w->invalidate_rkey;
	} else if (op == RN_WR_BIND_MW) {
		sv_bind_wr(&w->bind_mw.bind_info, w->bind_mw.rkey, &r->wr.bind);
	}
	return 0;
}

/* Post up to SV_POST_BATCH translated WRs; *bad gets the ibv WR that failed. */
static int sv_post_batch(struct sv_qp *q, struct rn_send_wr *r, struct ibv_send_wr **src,
			 unsigned n, struct ibv_send_wr **bad)
{
	struct rn_send_wr *rbad = NULL;
	enum rn_status st;

	if (!n)
		return 0;
	for (unsigned i = 0; i + 1 < n; i++)
		r[i].next = &r[i + 1];
	r[n - 1].next = NULL;
	st = rn_qp_post_send(q->rn, r, &rbad, NULL);
	if (st && bad)
		*bad = rbad ? src[rbad - r] : src[0];
	return sv_errno(st);
}

static int post_send(struct sv_qp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct rn_send_wr r[SV_POST_BATCH];
	struct ibv_send_wr *src[SV_POST_BATCH];
	unsigned n = 0;
	int rc;

	for (; wr; wr = wr->next) {
		if (sv_send_wr(wr, &r[n])) {
			rc = sv_post_batch(q, r, src, n, bad);
			if (!rc && bad)
				*bad = wr;
			return rc ? rc : EINVAL;
		}
		src[n++] = wr;
		if (n == SV_POST_BATCH) {
			if ((rc = sv_post_batch(q, r, src, n, bad)))
				return rc;
			n = 0;
		}
	}
	return sv_post_batch(q, r, src, n, bad);
}

/* Posts of at least RN_DEVICE_LONG_POST octets are timed: only they can take long enough
 * (a sendmsg of tens of KiB) to matter to the device's busy-poll run; a small post skips
 * the two clock reads, on the path every small-message round trip pays. Only the SGLs
 * the post itself reads are looked into: those of Sends and Writes, with no more SGEs than
 * any QP takes (a longer one fails the post and may be shorter than it says). */
static bool sends_data(enum ibv_wr_opcode op)
{
	return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_SEND_WITH_INV ||
	       op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

static bool long_post(const struct ibv_send_wr *wr)
{
	uint64_t n = 0;

	for (; wr && n < RN_DEVICE_LONG_POST; wr = wr->next) {
		if (!sends_data(wr->opcode) || !wr->sg_list || wr->num_sge < 0 ||
		    wr->num_sge > RN_QP_MAX_SGE)
			return false;
		for (int i = 0; i < wr->num_sge; i++)
			n += wr->sg_list[i].length;
	}
	return n >= RN_DEVICE_LONG_POST;
}

int sv_check_send(struct ibv_qp *qp, const struct ibv_send_wr *wr)
{
	struct sv_qp *q = sv_qp(qp);
	struct rn_send_wr r;

	if (!q || sv_send_wr(wr, &r))
		return EINVAL;
	return sv_errno(rn_qp_check_send(q->rn, &r));
}

int sv_check_recv(struct ibv_qp *qp, const struct ibv_recv_wr *wr)
{
	struct sv_qp *q = sv_qp(qp);

	return q ? sv_errno(rn_qp_check_recv(q->rn, (const struct rn_recv_wr *)wr)) : EINVAL;
}

int sv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct sv_qp *q = sv_qp(qp);

	if (!q) {
		if (bad)
			*bad = wr;
		return EINVAL;
	}
	rn_device_qp_posted(q->rn); /* its completion is the one to look for next */
	if (!long_post(wr))
		return post_send(q, wr, bad);
	/* a long post's span tells the device how busy its consumer is (rn_device.h) */
	uint64_t start = rn_progress_now_ns();
	int rc = post_send(q, wr, bad);

	rn_device_consumer_posted(sv_ctx(qp->context)->dev, start);
	return rc;
}

int sv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct sv_qp *q = sv_qp(qp);
	const struct rn_recv_wr *rbad = NULL;
	enum rn_status st;

	if (!q) {
		if (bad)
			*bad = wr;
		return EINVAL;
	}
	rn_device_qp_posted(q->rn);
	st = rn_qp_post_recv(q->rn, (const struct rn_recv_wr *)wr, &rbad, NULL);
	if (st && bad)
		*bad = rbad ? (struct ibv_recv_wr *)rbad : wr;
	return sv_errno(st);
}

/* ops.bind_mw (type 1; the header's inline ibv_bind_mw checked type and PD): a Bind WR on the
 * SQ, in order with the other WRs; mw->rkey takes the new key at once, as libibverbs does. */
int sv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct sv_qp *q = sv_qp(qp);
	struct rn_send_wr r;
	uint32_t rkey;
	enum rn_status st;

	if (!q || !sv_mw(mw) || !mw_bind || mw->context != qp->context)
		return EINVAL;
	if (mw_bind->bind_info.mr && !sv_mr(mw_bind->bind_info.mr))
		return EINVAL;
	memset(&r, 0, sizeof(r));
	r.wr_id = mw_bind->wr_id;
	r.opcode = RN_WR_BIND_MW;
	if (sv_flags(mw_bind->send_flags & ~IBV_SEND_INLINE, &r.flags))
		return EINVAL;
	rkey = ibv_inc_rkey(mw->rkey);
	sv_bind_wr(&mw_bind->bind_info, rkey, &r.wr.bind);
	st = rn_qp_post_send(q->rn, &r, NULL, NULL);
	if (st)
		return sv_errno(st);
	mw->rkey = rkey;
	return 0;
}

int softrnic_post_fast_reg(struct ibv_qp *qp, const struct softrnic_fast_reg_wr *wr)
{
	struct sv_qp *q = sv_qp(qp);
	struct rn_send_wr r;
	uint32_t acc;
	rn_stag_t stag;
	enum rn_status st;

	if (!q || !wr || !sv_mr(wr->mr) || wr->mr->context != qp->context || !wr->pages)
		return EINVAL;
	acc = sv_access(wr->access);
	if (acc == (uint32_t)-1)
		return EINVAL;
	memset(&r, 0, sizeof(r));
	r.wr_id = wr->wr_id;
	r.opcode = RN_WR_FAST_REG;
	if (sv_flags(wr->send_flags & ~IBV_SEND_INLINE, &r.flags))
		return EINVAL;
	stag = RN_STAG(RN_STAG_IDX(wr->mr->lkey), wr->key);
	r.wr.fast_reg = (struct rn_fr_wr){ .stag = stag, .access = acc, .iova = wr->iova,
					   .length = wr->length, .fbo = wr->fbo,
					   .page_shift = wr->page_shift, .npages = wr->npages,
					   .pages = wr->pages };
	st = rn_qp_post_send(q->rn, &r, NULL, NULL);
	if (st)
		return sv_errno(st);
	wr->mr->lkey = wr->mr->rkey = stag;
	wr->mr->addr = (void *)(uintptr_t)wr->iova;
	wr->mr->length = wr->length;
	return 0;
}

const char *softrnic_wc_vendor_str(uint32_t vendor_err)
{
	return rn_wc_status_str((enum rn_wc_status)vendor_err);
}
