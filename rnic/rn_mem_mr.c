/* Memory regions: register, reregister, register shared, allocate for fast-register,
 * deallocate, query (RDMA Verbs 1.0 §7.3-§7.5, §7.9, §9.2.6). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "rn_mem_int.h"

#define RN_ACC_REMOTE (RN_ACC_REMOTE_READ | RN_ACC_REMOTE_WRITE)

struct rn_pbl *rn_pbl_new(uint32_t max_pages)
{
	struct rn_pbl *p = calloc(1, sizeof(*p) + (size_t)max_pages * sizeof(p->pg[0]));
	if (!p)
		return NULL;
	p->max_pages = max_pages;
	atomic_init(&p->refs, 1);
	return p;
}

void rn_pbl_put(struct rn_pbl *p)
{
	if (p && atomic_fetch_sub(&p->refs, 1) == 1)
		free(p);
}

/* Fig. 18 with Local Read always granted (ibverbs has no flag for it): the one invalid
 * combination left is Remote Write without Local Write; unknown bits are invalid too. */
bool rn_acc_valid_mr(uint32_t access)
{
	if (access & ~(RN_ACC_RIGHTS | RN_ACC_ZERO_BASED))
		return false;
	return !(access & RN_ACC_REMOTE_WRITE) || (access & RN_ACC_LOCAL_WRITE);
}

static uint32_t acc_store(uint32_t access)
{
	return (access & RN_ACC_RIGHTS) | RN_ACC_LOCAL_READ;
}

/* Every page of [addr, addr + len) is mapped in the process (a kernel RNIC's get_user_pages
 * fails with EFAULT otherwise). mincore(2) answers ENOMEM for a range with an unmapped page:
 * one system call per 16 MiB (its vector), no file or /proc parsing, nothing faulted in or
 * pinned; it cannot fault itself. It does not see protections: a PROT_NONE or read-only page
 * passes, and so does memory unmapped later; the guarded copies (rn_fault.h) turn an access
 * to those into a protection error. The vector lives on the stack: as thread-local storage
 * it made the drop-in libibverbs.so.1's static TLS too large to be dlopen'ed (libfabric loads
 * it that way: "cannot allocate memory in static TLS block"). */
static bool range_mapped(const void *addr, uint64_t len)
{
	unsigned char vec[4096];
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)addr & ~(uintptr_t)(pg - 1);
	uint64_t left = ((uintptr_t)addr - a) + len;

	while (left) {
		uint64_t n = left < sizeof(vec) * pg ? left : sizeof(vec) * pg;
		if (mincore((void *)a, (size_t)n, vec) != 0 && errno == ENOMEM)
			return false;
		a += (uintptr_t)n;
		left -= n;
	}
	return true;
}

static enum rn_status region_args(const void *addr, uint64_t len, uint64_t iova, uint32_t access)
{
	if (!rn_acc_valid_mr(access))
		return RN_ERR_INVALID_ACCESS;
	if (!addr)
		return RN_ERR_INVALID_VA;
	if (len == 0 || len - 1 > UINTPTR_MAX - (uintptr_t)addr)
		return RN_ERR_INVALID_LENGTH;
	if (!(access & RN_ACC_ZERO_BASED) && len - 1 > UINT64_MAX - iova)
		return RN_ERR_INVALID_VA;
	if (!range_mapped(addr, len))
		return RN_ERR_BAD_ADDRESS;
	return RN_OK;
}

/* Fields of a VA-contiguous translation; the caller holds the entry's lock. */
static void set_region(struct rn_tpt_entry *e, void *addr, uint64_t len, uint64_t iova,
		       uint32_t access)
{
	uint64_t base = (access & RN_ACC_ZERO_BASED) ? 0 : iova;
	atomic_store_explicit(&e->to_base, base, memory_order_release);
	atomic_store_explicit(&e->length, len, memory_order_release);
	atomic_store_explicit(&e->va_base, (uintptr_t)addr, memory_order_release);
}

static uint32_t region_flags(uint32_t access)
{
	uint32_t f = FL_REMOTE_OK; /* ibverbs registration has no Remote Access Flag: always on */
	if (access & RN_ACC_ZERO_BASED)
		f |= FL_ZERO_BASED;
	return f;
}

enum rn_status rn_mem_reg_mr(struct rn_mem *mem, uint32_t pd, void *addr, uint64_t len,
			     uint64_t iova, uint32_t access, rn_stag_t *stag)
{
	if (!mem)
		return RN_ERR_INVALID_RNIC;
	if (!stag)
		return RN_ERR_INVALID_MODIFIER;
	enum rn_status st = region_args(addr, len, iova, access);
	uint32_t idx;
	if (st == RN_OK)
		st = rn_tpt_alloc(mem, false, pd, &idx);
	if (st != RN_OK)
		return st;
	struct rn_tpt_entry *e = &mem->tpt[idx];
	uint64_t old = rn_tpt_lock(e);
	uint8_t key = rn_tpt_new_key(mem, e->last_key);
	set_region(e, addr, len, iova, access);
	atomic_store_explicit(&e->pbl, NULL, memory_order_release);
	rn_tpt_publish(e, old, ctl_make(key, ST_VALID, TY_MR, acc_store(access), region_flags(access), pd));
	*stag = RN_STAG(idx, key);
	return RN_OK;
}

enum rn_status rn_mem_alloc_mr(struct rn_mem *mem, uint32_t pd, uint32_t max_pages,
			       bool remote_ok, rn_stag_t *stag)
{
	if (!mem)
		return RN_ERR_INVALID_RNIC;
	if (!stag || max_pages == 0)
		return RN_ERR_INVALID_MODIFIER;
	if (max_pages > mem->lim.max_pbl)
		return RN_ERR_NO_RESOURCES; /* §7.3.2.1: beyond the RI's PBL size */
	struct rn_pbl *p = rn_pbl_new(max_pages);
	if (!p)
		return RN_ERR_NO_RESOURCES;
	uint32_t idx;
	enum rn_status st = rn_tpt_alloc(mem, false, pd, &idx);
	if (st != RN_OK) {
		rn_pbl_put(p);
		return st;
	}
	struct rn_tpt_entry *e = &mem->tpt[idx];
	uint64_t old = rn_tpt_lock(e);
	uint8_t key = rn_tpt_new_key(mem, e->last_key);
	atomic_store_explicit(&e->to_base, 0, memory_order_release);
	atomic_store_explicit(&e->length, 0, memory_order_release);
	atomic_store_explicit(&e->va_base, 0, memory_order_release);
	atomic_store_explicit(&e->pbl, p, memory_order_release);
	rn_tpt_publish(e, old, ctl_make(key, ST_INVALID, TY_MR_PBL, RN_ACC_LOCAL_READ,
				    remote_ok ? FL_REMOTE_OK : 0, pd));
	*stag = RN_STAG(idx, key);
	return RN_OK;
}

enum rn_status rn_mem_dereg(struct rn_mem *mem, rn_stag_t stag)
{
	if (!mem)
		return RN_ERR_INVALID_RNIC;
	struct rn_tpt_entry *e = rn_tpt_get(mem, stag);
	if (!e)
		return RN_ERR_INVALID_STAG;
	uint64_t old = rn_tpt_lock(e);
	if (!ctl_live(old)) {
		rn_tpt_unlock(e, old);
		return RN_ERR_INVALID_STAG;
	}
	if (!ctl_is_mw(old) && atomic_load(&e->nbound) > 0) {
		rn_tpt_unlock(e, old);
		return RN_ERR_MW_BOUND_TO_MR;
	}
	rn_tpt_retire(mem, e, old);
	return RN_OK;
}

/* ---- reregister ------------------------------------------------------------------------- */

struct rereg_args {
	uint32_t flags, pd, access;
	void *addr;
	uint64_t len, iova;
};

/* Validates the new attributes and takes the new PD's reference (RN_REREG_PD). */
static enum rn_status rereg_validate(struct rn_mem *mem, const struct rereg_args *a)
{
	if ((a->flags & RN_REREG_ACCESS) && !rn_acc_valid_mr(a->access))
		return RN_ERR_INVALID_ACCESS;
	if (a->flags & RN_REREG_TRANSLATION) {
		uint32_t acc = (a->flags & RN_REREG_ACCESS) ? a->access : (a->access & RN_ACC_ZERO_BASED);
		enum rn_status st = region_args(a->addr, a->len, a->iova, acc);
		if (st != RN_OK)
			return st;
	}
	if (!(a->flags & RN_REREG_PD))
		return RN_OK;
	pthread_mutex_lock(&mem->lock);
	enum rn_status st = rn_pd_ref_locked(mem, a->pd);
	pthread_mutex_unlock(&mem->lock);
	return st;
}

/* The MR is INVALID+CLOSING (no reader can validate it); install the new attributes. */
static uint64_t rereg_apply(struct rn_mem *mem, struct rn_tpt_entry *e, uint64_t old,
			    const struct rereg_args *a)
{
	uint32_t acc = (a->flags & RN_REREG_ACCESS) ? acc_store(a->access) : ctl_acc(old);
	uint32_t flags = ctl_flags(old) & ~FL_CLOSING;
	unsigned type = ctl_type(old);
	if (a->flags & RN_REREG_TRANSLATION) {
		/* the page list, if any, stays allocated: a later fast-register may use it */
		set_region(e, a->addr, a->len, a->iova, a->access);
		type = TY_MR;
		flags = (flags & ~FL_ZERO_BASED) | ((a->access & RN_ACC_ZERO_BASED) ? FL_ZERO_BASED : 0);
	}
	if (acc & RN_ACC_REMOTE)
		flags |= FL_REMOTE_OK;
	uint32_t pd = (a->flags & RN_REREG_PD) ? a->pd : ctl_pd(old);
	uint8_t key = rn_tpt_new_key(mem, ctl_key(old));
	return ctl_make(key, ST_VALID, type, acc, flags, pd);
}

enum rn_status rn_mem_rereg_mr(struct rn_mem *mem, rn_stag_t *stag, uint32_t flags, uint32_t pd,
			       void *addr, uint64_t len, uint64_t iova, uint32_t access)
{
	if (!mem)
		return RN_ERR_INVALID_RNIC;
	if (!stag || flags == 0 || (flags & ~7u))
		return RN_ERR_INVALID_MODIFIER;
	struct rn_tpt_entry *e = rn_tpt_get(mem, *stag);
	if (!e)
		return RN_ERR_INVALID_STAG;
	uint64_t old = rn_tpt_lock(e);
	if (!ctl_live(old) || ctl_is_mw(old) || (ctl_flags(old) & FL_SHARED)) {
		rn_tpt_unlock(e, old);
		return RN_ERR_INVALID_STAG;
	}
	if (atomic_load(&e->nbound) > 0) {
		rn_tpt_unlock(e, old);
		return RN_ERR_MW_BOUND_TO_MR;
	}
	const struct rereg_args a = { flags, pd, access, addr, len, iova };
	enum rn_status st = rereg_validate(mem, &a);
	if (st != RN_OK) {
		rn_tpt_retire(mem, e, old); /* RI-Reregister: any other error deallocates the MR */
		return st;
	}
	uint64_t closing = ctl_make(ctl_key(old), ST_INVALID, ctl_type(old), ctl_acc(old),
				    ctl_flags(old) | FL_CLOSING, ctl_pd(old));
	rn_tpt_publish(e, old, closing);
	if (flags & RN_REREG_TRANSLATION) {
		rn_mem_synchronize(mem); /* no placement into the old memory after we return */
		rn_mem_drop_refs();      /* and no transmit from it */
	}
	uint64_t c = rn_tpt_lock(e);
	uint64_t fresh = rereg_apply(mem, e, c, &a);
	rn_tpt_publish(e, c, fresh);
	if (flags & RN_REREG_PD)
		rn_pd_unref(mem, ctl_pd(old));
	*stag = RN_STAG(RN_STAG_IDX(*stag), ctl_key(fresh));
	return RN_OK;
}

/* ---- register shared -------------------------------------------------------------------- */

/* VA-based shared MRs must keep the memory's offset inside its page (§7.3.2.4). */
static bool shared_va_ok(const struct rn_tpt_entry *src, uint64_t c, uint64_t iova)
{
	uintptr_t pos = atomic_load_explicit(&src->va_base, memory_order_relaxed);
	uint64_t mask = 4095;
	if (ctl_type(c) == TY_MR_PBL) {
		const struct rn_pbl *p = atomic_load_explicit(&src->pbl, memory_order_relaxed);
		mask = (1ull << atomic_load_explicit(&p->page_shift, memory_order_relaxed)) - 1;
	}
	uint64_t len = atomic_load_explicit(&src->length, memory_order_relaxed);
	if (len > 0 && len - 1 > UINT64_MAX - iova)
		return false;
	return (iova & mask) == (pos & mask);
}

static enum rn_status shared_src_check(const struct rn_tpt_entry *src, uint64_t c,
				       rn_stag_t stag, uint64_t iova, uint32_t access)
{
	if (!ctl_live(c) || ctl_is_mw(c) || ctl_state(c) != ST_VALID || ctl_key(c) != RN_STAG_KEY(stag))
		return RN_ERR_INVALID_STAG;
	if (!(access & RN_ACC_ZERO_BASED) && !shared_va_ok(src, c, iova))
		return RN_ERR_INVALID_VA;
	return RN_OK;
}

enum rn_status rn_mem_reg_shared_mr(struct rn_mem *mem, rn_stag_t src, uint32_t pd,
				    uint64_t iova, uint32_t access, rn_stag_t *stag)
{
	if (!mem)
		return RN_ERR_INVALID_RNIC;
	if (!stag)
		return RN_ERR_INVALID_MODIFIER;
	if (!rn_acc_valid_mr(access))
		return RN_ERR_INVALID_ACCESS;
	struct rn_tpt_entry *se = rn_tpt_get(mem, src);
	if (!se)
		return RN_ERR_INVALID_STAG;
	uint32_t idx;
	enum rn_status st = rn_tpt_alloc(mem, false, pd, &idx);
	if (st != RN_OK)
		return st;
	uint64_t sc = rn_tpt_lock(se);
	st = shared_src_check(se, sc, src, iova, access);
	if (st != RN_OK) {
		rn_tpt_unlock(se, sc);
		rn_pd_unref(mem, pd);
		rn_tpt_release(mem, idx, false);
		return st;
	}
	struct rn_tpt_entry *e = &mem->tpt[idx];
	uint64_t old = rn_tpt_lock(e);
	uint8_t key = rn_tpt_new_key(mem, e->last_key);
	struct rn_pbl *p = atomic_load_explicit(&se->pbl, memory_order_relaxed);
	bool pbl = ctl_type(sc) == TY_MR_PBL;
	if (pbl)
		atomic_fetch_add(&p->refs, 1);
	atomic_store_explicit(&e->to_base, (access & RN_ACC_ZERO_BASED) ? 0 : iova, memory_order_release);
	atomic_store_explicit(&e->length, atomic_load_explicit(&se->length, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&e->va_base, atomic_load_explicit(&se->va_base, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&e->pbl, pbl ? p : NULL, memory_order_release);
	rn_tpt_publish(e, old, ctl_make(key, ST_VALID, ctl_type(sc), acc_store(access),
				    region_flags(access) | FL_SHARED, pd));
	rn_tpt_publish(se, sc, sc | ((uint64_t)FL_SHARED << CTL_FLAG_SHIFT));
	*stag = RN_STAG(idx, key);
	return RN_OK;
}

/* ---- query ------------------------------------------------------------------------------ */

static void fill_info(const struct rn_tpt_entry *e, uint64_t c, struct rn_mem_info *in)
{
	const struct rn_pbl *p = atomic_load_explicit(&e->pbl, memory_order_relaxed);
	*in = (struct rn_mem_info){ 0 };
	in->state = ctl_state(c) == ST_VALID ? RN_MEM_VALID : RN_MEM_INVALID;
	in->key = ctl_key(c);
	in->pd = ctl_pd(c);
	in->access = ctl_acc(c) | ((ctl_flags(c) & FL_ZERO_BASED) ? RN_ACC_ZERO_BASED : 0);
	in->to_base = atomic_load_explicit(&e->to_base, memory_order_relaxed);
	in->length = atomic_load_explicit(&e->length, memory_order_relaxed);
	if (ctl_is_mw(c)) {
		in->mw_type = ctl_type(c) == TY_MW1 ? RN_MW_TYPE1 : RN_MW_TYPE2;
		in->qp_id = atomic_load_explicit(&e->qp_id, memory_order_relaxed);
		if (ctl_state(c) == ST_VALID)
			in->mr_stag = RN_STAG(e->parent_idx, e->parent_key);
		return;
	}
	in->shared = ctl_flags(c) & FL_SHARED;
	in->remote_ok = ctl_flags(c) & FL_REMOTE_OK;
	in->page_list = ctl_type(c) == TY_MR_PBL;
	in->max_pages = p ? p->max_pages : 0;
	in->nbound = atomic_load(&e->nbound);
}

static enum rn_status query(struct rn_mem *mem, rn_stag_t stag, bool mw, struct rn_mem_info *info)
{
	if (!mem)
		return RN_ERR_INVALID_RNIC;
	if (!info)
		return RN_ERR_INVALID_MODIFIER;
	struct rn_tpt_entry *e = rn_tpt_get(mem, stag);
	if (!e)
		return RN_ERR_INVALID_STAG;
	uint64_t c = rn_tpt_lock(e); /* control path: the lock gives a consistent picture */
	enum rn_status st = RN_ERR_INVALID_STAG;
	if (ctl_live(c) && ctl_is_mw(c) == mw) {
		fill_info(e, c, info);
		st = RN_OK;
	}
	rn_tpt_unlock(e, c);
	return st;
}

enum rn_status rn_mem_query_mr(struct rn_mem *mem, rn_stag_t stag, struct rn_mem_info *info)
{
	return query(mem, stag, false, info);
}

enum rn_status rn_mem_query_mw(struct rn_mem *mem, rn_stag_t stag, struct rn_mem_info *info)
{
	return query(mem, stag, true, info);
}
