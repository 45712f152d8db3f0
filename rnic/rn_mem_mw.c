/* Memory windows: allocate, bind (type 1 rebinds, zero length unbinds; type 2 binds only when
 * Invalid and is tied to the binding QP), the unbind helpers used by invalidate and dealloc.
 * RDMA Verbs 1.0 §7.10.2, §7.10.6.1; T23/T24/T27. Lock order: window before region. */
#include "rn_mem_int.h"

enum rn_status rn_mem_alloc_mw(struct rn_mem *mem, uint32_t pd, enum rn_mw_type type,
			       rn_stag_t *stag)
{
	if (!mem)
		return RN_ERR_INVALID_RNIC;
	if (!stag || (type != RN_MW_TYPE1 && type != RN_MW_TYPE2))
		return RN_ERR_INVALID_MODIFIER;
	uint32_t idx;
	enum rn_status st = rn_tpt_alloc(mem, true, pd, &idx);
	if (st != RN_OK)
		return st;
	struct rn_tpt_entry *e = &mem->tpt[idx];
	uint64_t old = rn_tpt_lock(e);
	uint8_t key = rn_tpt_new_key(mem, e->last_key);
	atomic_store_explicit(&e->length, 0, memory_order_release);
	atomic_store_explicit(&e->pbl, NULL, memory_order_release);
	atomic_store_explicit(&e->qp_id, 0, memory_order_release);
	/* type-2 windows may be invalidated remotely (RDMA Verbs §7.8); type 1 never */
	uint32_t acc = type == RN_MW_TYPE2 ? RN_ACC_REMOTE_INV : 0;
	rn_tpt_publish(e, old, ctl_make(key, ST_INVALID, type == RN_MW_TYPE1 ? TY_MW1 : TY_MW2, acc, 0, pd));
	*stag = RN_STAG(idx, key);
	return RN_OK;
}

uint64_t rn_mw_unbind_fields(struct rn_tpt_entry *mw, uint64_t old, uint32_t new_pd)
{
	atomic_store_explicit(&mw->qp_id, 0, memory_order_release);
	return ctl_make(ctl_key(old), ST_INVALID, ctl_type(old), ctl_acc(old), ctl_flags(old), new_pd);
}

void rn_mw_parent_release(struct rn_mem *mem, uint32_t parent_idx)
{
	if (parent_idx > 0 && parent_idx < mem->n)
		atomic_fetch_sub(&mem->tpt[parent_idx].nbound, 1);
}

enum rn_status rn_mem_qp_check_unbound(struct rn_mem *mem, uint32_t qp_id)
{
	if (!mem)
		return RN_ERR_INVALID_RNIC;
	/* control path (Destroy QP): a scan of the table is cheap enough and needs no per-QP list */
	for (uint32_t i = 1; i < mem->n; i++) {
		struct rn_tpt_entry *e = &mem->tpt[i];
		uint64_t c = atomic_load_explicit(&e->ctl, memory_order_acquire);
		if (ctl_type(c) == TY_MW2 && ctl_state(c) != ST_FREE && ctl_state(c) != ST_INVALID &&
		    atomic_load_explicit(&e->qp_id, memory_order_relaxed) == qp_id)
			return RN_ERR_MW_BOUND_TO_QP;
	}
	return RN_OK;
}

/* ---- bind ------------------------------------------------------------------------------- */

static enum rn_wc_status bind_check_mw(uint64_t c, const struct rn_mem_qp *qp)
{
	if (!ctl_live(c) || !ctl_is_mw(c))
		return RN_WC_INVALID_WINDOW;
	if (ctl_pd(c) != qp->pd)
		return RN_WC_INVALID_PD;
	if (ctl_type(c) == TY_MW2 && ctl_state(c) == ST_VALID)
		return RN_WC_STAG_NOT_INVALID;
	return RN_WC_SUCCESS;
}

static bool window_inside(const struct rn_tpt_entry *mr, uint64_t addr, uint64_t len)
{
	uint64_t base = atomic_load_explicit(&mr->to_base, memory_order_relaxed);
	uint64_t mlen = atomic_load_explicit(&mr->length, memory_order_relaxed);
	return addr >= base && len <= mlen && addr - base <= mlen - len; /* cannot overflow */
}

static enum rn_wc_status bind_check_mr(const struct rn_tpt_entry *mr, uint64_t c, uint64_t mwc,
				       const struct rn_mem_qp *qp, const struct rn_bind_wr *wr)
{
	if (!ctl_live(c) || ctl_is_mw(c) || ctl_state(c) != ST_VALID ||
	    ctl_key(c) != RN_STAG_KEY(wr->mr_stag))
		return RN_WC_INVALID_REGION;
	if (ctl_pd(c) != qp->pd)
		return RN_WC_INVALID_PD;
	if (!(ctl_acc(c) & RN_ACC_MW_BIND))
		return RN_WC_ACCESS_VIOLATION;
	if (ctl_flags(c) & FL_ZERO_BASED)
		return RN_WC_INVALID_REGION; /* RDMA Verbs §7.6: no window on a zero-based MR */
	if (wr->access & ~(uint32_t)(RN_ACC_REMOTE_READ | RN_ACC_REMOTE_WRITE | RN_ACC_ZERO_BASED))
		return RN_WC_INVALID_ACCESS;
	if (ctl_type(mwc) == TY_MW1 && (wr->access & RN_ACC_ZERO_BASED))
		return RN_WC_INVALID_ACCESS;
	if ((wr->access & RN_ACC_REMOTE_WRITE) && !(ctl_acc(c) & RN_ACC_LOCAL_WRITE))
		return RN_WC_ACCESS_VIOLATION;
	if (!window_inside(mr, wr->addr, wr->length))
		return RN_WC_BASE_BOUNDS;
	return RN_WC_SUCCESS;
}

/* Both entries locked and checked: install the window on the region. */
static uint64_t bind_apply(struct rn_mem *mem, struct rn_tpt_entry *mw, uint64_t mwc,
			   struct rn_tpt_entry *mr, uint64_t mrc, const struct rn_mem_qp *qp,
			   const struct rn_bind_wr *wr)
{
	uint64_t off = wr->addr - atomic_load_explicit(&mr->to_base, memory_order_relaxed);
	bool zb = wr->access & RN_ACC_ZERO_BASED;
	bool type2 = ctl_type(mwc) == TY_MW2;
	struct rn_pbl *p = atomic_load_explicit(&mr->pbl, memory_order_relaxed);
	atomic_fetch_add(&mr->nbound, 1);
	atomic_store_explicit(&mw->to_base, zb ? 0 : wr->addr, memory_order_release);
	atomic_store_explicit(&mw->length, wr->length, memory_order_release);
	/* one formula for both parents: va_base is an address or a page-list position */
	atomic_store_explicit(&mw->va_base,
			      atomic_load_explicit(&mr->va_base, memory_order_relaxed) + off,
			      memory_order_relaxed);
	atomic_store_explicit(&mw->pbl, ctl_type(mrc) == TY_MR_PBL ? p : NULL, memory_order_release);
	atomic_store_explicit(&mw->qp_id, type2 ? qp->qp_id : 0, memory_order_release);
	mw->parent_idx = (uint32_t)(mr - mem->tpt);
	mw->parent_key = ctl_key(mrc);
	uint32_t acc = (wr->access & (RN_ACC_REMOTE_READ | RN_ACC_REMOTE_WRITE)) |
		       (type2 ? RN_ACC_REMOTE_INV : 0);
	return ctl_make(RN_STAG_KEY(wr->mw_stag), ST_VALID, ctl_type(mwc), acc,
			zb ? FL_ZERO_BASED : 0, ctl_pd(mwc));
}

/* Type 1 with length 0: unbind (and take the new key). */
static enum rn_wc_status mw1_unbind(struct rn_mem *mem, struct rn_tpt_entry *mw, uint64_t c,
				    const struct rn_bind_wr *wr)
{
	bool was_bound = ctl_state(c) == ST_VALID;
	uint64_t f = rn_mw_unbind_fields(mw, c, ctl_pd(c));
	f = (f & ~0xffull) | RN_STAG_KEY(wr->mw_stag);
	rn_tpt_publish(mw, c, f);
	if (was_bound)
		rn_mw_parent_release(mem, mw->parent_idx);
	return RN_WC_SUCCESS;
}

enum rn_wc_status rn_mem_bind_mw(struct rn_mem *mem, const struct rn_mem_qp *qp,
				 const struct rn_bind_wr *wr)
{
	if (!mem || !qp || !wr)
		return RN_WC_INVALID_WQE;
	struct rn_tpt_entry *mw = rn_tpt_get(mem, wr->mw_stag);
	if (!mw)
		return RN_WC_INVALID_WINDOW;
	uint64_t mwc = rn_tpt_lock(mw);
	enum rn_wc_status st = bind_check_mw(mwc, qp);
	if (st == RN_WC_SUCCESS && ctl_type(mwc) == TY_MW1 && wr->length == 0)
		return mw1_unbind(mem, mw, mwc, wr);
	struct rn_tpt_entry *mr = rn_tpt_get(mem, wr->mr_stag);
	if (st == RN_WC_SUCCESS && (!mr || mr == mw))
		st = RN_WC_INVALID_REGION;
	if (st != RN_WC_SUCCESS) {
		rn_tpt_unlock(mw, mwc);
		return st;
	}
	uint64_t mrc = rn_tpt_lock(mr);
	st = bind_check_mr(mr, mrc, mwc, qp, wr);
	if (st != RN_WC_SUCCESS) {
		rn_tpt_unlock(mr, mrc);
		rn_tpt_unlock(mw, mwc);
		return st;
	}
	bool rebind = ctl_state(mwc) == ST_VALID; /* type 1 moving to a new binding */
	uint32_t old_parent = mw->parent_idx;
	uint64_t f = bind_apply(mem, mw, mwc, mr, mrc, qp, wr);
	rn_tpt_unlock(mr, mrc); /* only nbound changed: readers of the MR are unaffected */
	rn_tpt_publish(mw, mwc, f);
	if (rebind)
		rn_mw_parent_release(mem, old_parent);
	return RN_WC_SUCCESS;
}
