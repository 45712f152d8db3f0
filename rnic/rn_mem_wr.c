/* Memory operations executed on behalf of a QP: Fast-Register NS-MR and Invalidate Local STag
 * from the SQ, Send with Invalidate from the peer. They return completion statuses
 * (RDMA Verbs §9.5.2) and, for remote invalidation, the Terminate code (§8.3.2, RFC 5040
 * §7.4). */
#include "rn_mem_int.h"
#include "rdmap.h"

#define RN_ACC_REMOTE (RN_ACC_REMOTE_READ | RN_ACC_REMOTE_WRITE)

/* ---- fast-register ---------------------------------------------------------------------- */

static enum rn_wc_status fr_check_entry(const struct rn_tpt_entry *e, uint64_t c,
					const struct rn_mem_qp *qp)
{
	if (!ctl_live(c) || ctl_is_mw(c) || (ctl_flags(c) & FL_SHARED))
		return RN_WC_INVALID_REGION;
	if (ctl_state(c) == ST_VALID)
		return RN_WC_STAG_NOT_INVALID;
	if (ctl_pd(c) != qp->pd)
		return RN_WC_INVALID_PD;
	(void)e;
	return RN_WC_SUCCESS;
}

static enum rn_wc_status fr_check_list(const struct rn_pbl *p, const struct rn_fr_wr *wr)
{
	if (wr->page_shift < 12 || wr->page_shift > 30)
		return RN_WC_INVALID_PAGE_SIZE;
	uint32_t cap = p ? p->max_pages : 0;
	if (wr->npages > cap)
		return RN_WC_PBL_TOO_LONG;
	if (wr->npages > 0 && !wr->pages)
		return RN_WC_INVALID_PBL_ENTRY;
	uint64_t mask = (1ull << wr->page_shift) - 1;
	for (uint32_t i = 0; i < wr->npages; i++)
		if (wr->pages[i] == 0 || (wr->pages[i] & mask))
			return RN_WC_INVALID_PBL_ENTRY;
	if (wr->fbo > mask)
		return RN_WC_INVALID_FBO;
	return RN_WC_SUCCESS;
}

static enum rn_wc_status fr_check_region(uint64_t c, const struct rn_fr_wr *wr)
{
	if (!rn_acc_valid_mr(wr->access))
		return RN_WC_INVALID_ACCESS;
	if ((wr->access & RN_ACC_REMOTE) && !(ctl_flags(c) & FL_REMOTE_OK))
		return RN_WC_INVALID_ACCESS;
	uint64_t span = ((uint64_t)wr->npages << wr->page_shift) - wr->fbo; /* < 2^62 */
	if (wr->npages == 0 || wr->length > span)
		return RN_WC_INVALID_LENGTH;
	if (wr->access & RN_ACC_ZERO_BASED)
		return RN_WC_SUCCESS;
	uint64_t mask = (1ull << wr->page_shift) - 1;
	if ((wr->iova & mask) != wr->fbo)
		return RN_WC_INVALID_VA;
	if (wr->length > 0 && wr->length - 1 > UINT64_MAX - wr->iova)
		return RN_WC_INVALID_VA;
	return RN_WC_SUCCESS;
}

enum rn_wc_status rn_mem_fast_reg(struct rn_mem *mem, const struct rn_mem_qp *qp,
				  const struct rn_fr_wr *wr)
{
	if (!mem || !qp || !wr)
		return RN_WC_INVALID_WQE;
	if (!qp->privileged)
		return RN_WC_QP_NOT_PRIVILEGED;
	struct rn_tpt_entry *e = rn_tpt_get(mem, wr->stag);
	if (!e)
		return RN_WC_INVALID_REGION;
	uint64_t c = rn_tpt_lock(e);
	struct rn_pbl *p = atomic_load_explicit(&e->pbl, memory_order_relaxed);
	enum rn_wc_status st = fr_check_entry(e, c, qp);
	if (st == RN_WC_SUCCESS)
		st = fr_check_list(p, wr);
	if (st == RN_WC_SUCCESS)
		st = fr_check_region(c, wr);
	if (st != RN_WC_SUCCESS) {
		rn_tpt_unlock(e, c);
		return st;
	}
	for (uint32_t i = 0; i < wr->npages; i++)
		atomic_store_explicit(&p->pg[i], (uintptr_t)wr->pages[i], memory_order_release);
	atomic_store_explicit(&p->npages, wr->npages, memory_order_release);
	atomic_store_explicit(&p->page_shift, wr->page_shift, memory_order_release);
	bool zb = wr->access & RN_ACC_ZERO_BASED;
	atomic_store_explicit(&e->to_base, zb ? 0 : wr->iova, memory_order_release);
	atomic_store_explicit(&e->length, wr->length, memory_order_release);
	atomic_store_explicit(&e->va_base, wr->fbo, memory_order_release);
	uint32_t acc = (wr->access & RN_ACC_RIGHTS) | RN_ACC_LOCAL_READ | RN_ACC_REMOTE_INV;
	uint32_t fl = (ctl_flags(c) & FL_REMOTE_OK) | (zb ? FL_ZERO_BASED : 0);
	rn_tpt_publish(e, c, ctl_make(RN_STAG_KEY(wr->stag), ST_VALID, TY_MR_PBL, acc, fl, ctl_pd(c)));
	return RN_WC_SUCCESS;
}

/* ---- invalidation ----------------------------------------------------------------------- */

enum inv_result {
	INV_DO,         /* valid and allowed: invalidate */
	INV_NOOP,       /* already Invalid and allowed: success, nothing to do */
	INV_BAD_STAG,   /* no such STag, wrong key, deallocated, type-1 window */
	INV_NOT_ASSOC,  /* other PD, or window bound to another QP */
	INV_ACCESS,     /* remote: no remote-invalidate right */
	INV_SHARED,     /* a Shared MR is never invalidated */
	INV_BOUND,      /* an MR with windows bound */
};

/* RDMA Verbs §7.8, §7.10.4, in the precedence invalid > association > rights >
 * cannot-invalidate. */
static enum inv_result inv_check(const struct rn_tpt_entry *e, uint64_t c, rn_stag_t stag,
				 const struct rn_mem_qp *qp, bool remote)
{
	if (!ctl_live(c) || ctl_key(c) != RN_STAG_KEY(stag) || ctl_type(c) == TY_MW1)
		return INV_BAD_STAG;
	bool valid = ctl_state(c) == ST_VALID;
	if (ctl_type(c) == TY_MW2 && valid) {
		if (atomic_load_explicit(&e->qp_id, memory_order_relaxed) != qp->qp_id)
			return INV_NOT_ASSOC;
	} else if (ctl_pd(c) != qp->pd) {
		return INV_NOT_ASSOC;
	}
	if (remote && (!(ctl_acc(c) & RN_ACC_REMOTE_INV) || !(ctl_acc(c) & RN_ACC_REMOTE)))
		return INV_ACCESS;
	if (ctl_flags(c) & FL_SHARED)
		return INV_SHARED;
	if (!ctl_is_mw(c) && atomic_load(&e->nbound) > 0)
		return INV_BOUND;
	return valid ? INV_DO : INV_NOOP;
}

/* Lock, check, invalidate. A window's association moves to the invalidating QP's PD. */
static enum inv_result invalidate(struct rn_mem *mem, const struct rn_mem_qp *qp, rn_stag_t stag,
				  bool remote)
{
	struct rn_tpt_entry *e = rn_tpt_get(mem, stag);
	if (!e)
		return INV_BAD_STAG;
	uint64_t c = rn_tpt_lock(e);
	enum inv_result r = inv_check(e, c, stag, qp, remote);
	if (r != INV_DO) {
		rn_tpt_unlock(e, c);
		return r;
	}
	if (ctl_is_mw(c)) {
		rn_tpt_publish(e, c, rn_mw_unbind_fields(e, c, qp->pd));
		rn_mw_parent_release(mem, e->parent_idx);
	} else {
		rn_tpt_publish(e, c, ctl_with_state(c, ST_INVALID));
	}
	return INV_DO;
}

enum rn_wc_status rn_mem_local_inv(struct rn_mem *mem, const struct rn_mem_qp *qp, rn_stag_t stag)
{
	if (!mem || !qp)
		return RN_WC_INVALID_WQE;
	switch (invalidate(mem, qp, stag, false)) {
	case INV_DO:
	case INV_NOOP:
		return RN_WC_SUCCESS;
	case INV_NOT_ASSOC:
		return RN_WC_INVALID_PD;
	case INV_BOUND:
		return RN_WC_MW_STILL_BOUND;
	case INV_ACCESS:
		return RN_WC_ACCESS_VIOLATION;
	case INV_BAD_STAG:
	case INV_SHARED:
	default:
		return RN_WC_INVALID_STAG;
	}
}

enum rn_wc_status rn_mem_remote_inv(struct rn_mem *mem, const struct rn_mem_qp *qp,
				    rn_stag_t stag, struct iwarp_err *term)
{
	struct iwarp_err dummy;
	if (!term)
		term = &dummy;
	*term = rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_INVALID_STAG);
	if (!mem || !qp)
		return RN_WC_REM_INV_REQ;
	switch (invalidate(mem, qp, stag, true)) {
	case INV_DO:
	case INV_NOOP:
		return RN_WC_SUCCESS;
	case INV_NOT_ASSOC:
		*term = rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_STAG_NOT_ASSOC);
		break;
	case INV_ACCESS:
		*term = rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_ACCESS);
		break;
	case INV_SHARED:
	case INV_BOUND:
		*term = rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_CANNOT_INVALIDATE);
		break;
	case INV_BAD_STAG:
	default:
		break;
	}
	return RN_WC_REM_INV_REQ;
}
