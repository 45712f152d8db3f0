/* Data-path validation (RDMA Verbs 1.0 §7.6.3, §7.10.6): incoming tagged segments and local
 * SGEs, on a lock-free seqlock snapshot of the entry (rn_mem_int.h), plus the page walk.
 * Nothing here blocks or allocates. */
#include <sched.h>

#include "rn_mem_int.h"
#include "rdmap.h"

struct snap {
	uint64_t ctl, to_base, length;
	uintptr_t va;
	struct rn_pbl *pbl;
	uint32_t qp_id;
};

/* Seqlock reader: load the word, the fields (acquire: the re-read cannot move above them, and
 * a field written by a writer implies its BUSY is visible), re-read the word; a writer inside
 * (BUSY) or a changed word (the generation rules out ABA) means retry. The first load is
 * seq_cst for the quiescence argument (rn_mem.c); on x86 and ARMv8 it costs what acquire does. */
static void snap_take(const struct rn_tpt_entry *e, struct snap *s)
{
	unsigned spins = 0;
	for (;;) {
		uint64_t c1 = atomic_load_explicit(&e->ctl, memory_order_seq_cst);
		if (ctl_state(c1) != ST_BUSY) {
			s->to_base = atomic_load_explicit(&e->to_base, memory_order_acquire);
			s->length = atomic_load_explicit(&e->length, memory_order_acquire);
			s->va = atomic_load_explicit(&e->va_base, memory_order_acquire);
			s->pbl = atomic_load_explicit(&e->pbl, memory_order_acquire);
			s->qp_id = atomic_load_explicit(&e->qp_id, memory_order_acquire);
			if (atomic_load_explicit(&e->ctl, memory_order_acquire) == c1) {
				s->ctl = c1;
				return;
			}
		}
		if (++spins > 64) {
			spins = 0;
			sched_yield();
		}
	}
}

/* Called after acquire loads of page-list fields: the word is re-read after them. */
static bool snap_still(const struct rn_tpt_entry *e, uint64_t ctl)
{
	return atomic_load_explicit(&e->ctl, memory_order_acquire) == ctl;
}

enum chk { CHK_OK, CHK_STAG, CHK_ASSOC, CHK_ACCESS, CHK_WRAP, CHK_BOUNDS };

/* The checks in the §6.7 precedence; local: an MW STag is not an lkey. */
static enum chk check_snap(const struct snap *s, rn_stag_t stag, uint32_t pd, uint32_t qp_id,
			   uint64_t to, uint64_t len, uint32_t need, bool local)
{
	uint64_t c = s->ctl;
	if (ctl_state(c) != ST_VALID || ctl_key(c) != RN_STAG_KEY(stag))
		return CHK_STAG;
	if (ctl_is_mw(c) && local)
		return CHK_STAG;
	bool assoc = ctl_type(c) == TY_MW2 ? s->qp_id == qp_id : ctl_pd(c) == pd;
	if (!assoc)
		return CHK_ASSOC;
	if ((ctl_acc(c) & need) != need)
		return CHK_ACCESS;
	if (to > UINT64_MAX - (len - 1)) /* len > 0: the last byte's TO would pass 2^64 - 1 */
		return CHK_WRAP;
	if (to < s->to_base || len > s->length || to - s->to_base > s->length - len)
		return CHK_BOUNDS;
	return CHK_OK;
}

/* The run at ref->pos in the page list; false when the entry changed under us. */
static bool pbl_run(const struct rn_tpt_entry *e, struct rn_mem_ref *ref)
{
	const struct rn_pbl *p = ref->pbl;
	uint32_t shift = atomic_load_explicit(&p->page_shift, memory_order_acquire);
	uint32_t npages = atomic_load_explicit(&p->npages, memory_order_acquire);
	uint64_t page = ref->pos >> shift;
	uintptr_t va = page < npages ? atomic_load_explicit(&p->pg[page], memory_order_acquire) : 0;
	if (!snap_still(e, ref->ctl) || va == 0)
		return false;
	uint64_t in_page = ref->pos & ((1ull << shift) - 1);
	uint64_t left = (1ull << shift) - in_page;
	ref->addr = (uint8_t *)(va + in_page);
	ref->run = ref->remain < left ? ref->remain : left;
	return true;
}

static bool translate(const struct rn_tpt_entry *e, const struct snap *s, uint32_t idx,
		      uint64_t to, uint64_t len, struct rn_mem_ref *ref)
{
	uint64_t off = to - s->to_base;
	ref->remain = len;
	ref->ctl = s->ctl;
	ref->idx = idx;
	if (!ctl_uses_pbl(s->ctl, s->pbl)) {
		ref->pbl = NULL;
		ref->pos = 0;
		ref->addr = (uint8_t *)(s->va + off);
		ref->run = len;
		return true;
	}
	ref->pbl = s->pbl;
	ref->pos = s->va + off;
	return pbl_run(e, ref);
}

static void ref_empty(struct rn_mem_ref *ref)
{
	*ref = (struct rn_mem_ref){ 0 };
}

/* Snapshot, check, translate; retry when the page lookup raced a writer. */
static enum chk lookup(struct rn_mem *mem, rn_stag_t stag, uint32_t pd, uint32_t qp_id,
		       uint64_t to, uint64_t len, uint32_t need, bool local, struct rn_mem_ref *ref)
{
	const struct rn_tpt_entry *e = rn_tpt_get(mem, stag);
	if (!e)
		return CHK_STAG;
	for (;;) {
		struct snap s;
		snap_take(e, &s);
		enum chk c = check_snap(&s, stag, pd, qp_id, to, len, need, local);
		if (c != CHK_OK)
			return c;
		if (translate(e, &s, RN_STAG_IDX(stag), to, len, ref))
			return CHK_OK;
	}
}

static struct iwarp_err tagged_err(enum chk c, bool source)
{
	static const enum rdmap_ecode src[] = {
		[CHK_STAG] = RDMAP_ECODE_INVALID_STAG, [CHK_ASSOC] = RDMAP_ECODE_STAG_NOT_ASSOC,
		[CHK_ACCESS] = RDMAP_ECODE_ACCESS,     [CHK_WRAP] = RDMAP_ECODE_TO_WRAP,
		[CHK_BOUNDS] = RDMAP_ECODE_BASE_BOUNDS,
	};
	static const enum ddp_ecode_tagged sink[] = {
		[CHK_STAG] = DDP_ECODE_T_INVALID_STAG, [CHK_ASSOC] = DDP_ECODE_T_STAG_NOT_ASSOC,
		[CHK_WRAP] = DDP_ECODE_T_TO_WRAP,      [CHK_BOUNDS] = DDP_ECODE_T_BASE_BOUNDS,
	};
	/* DDP has no access-rights code: RDMAP's remote protection 0x02 for sinks too */
	if (source || c == CHK_ACCESS)
		return rdmap_err(RDMAP_ETYPE_PROTECTION, src[c]);
	return ddp_err_tagged(sink[c]);
}

int rn_mem_check_tagged(struct rn_mem *mem, uint32_t pd, uint32_t qp_id, rn_stag_t stag,
			uint64_t to, uint64_t len, uint32_t need, struct rn_mem_ref *ref,
			struct iwarp_err *err)
{
	struct iwarp_err dummy;
	struct rn_mem_ref scratch;
	bool source = need & RN_ACC_REMOTE_READ;
	if (!err)
		err = &dummy;
	if (!ref)
		ref = &scratch;
	ref_empty(ref);
	if (len == 0)
		return 0; /* RDMA Verbs §7.6.3: zero-length access is not checked */
	enum chk c = mem ? lookup(mem, stag, pd, qp_id, to, len, need & RN_ACC_RIGHTS, false, ref)
			 : CHK_STAG;
	if (c == CHK_OK)
		return 0;
	ref_empty(ref);
	*err = tagged_err(c, source);
	return -1;
}

static enum rn_wc_status local_status(enum chk c)
{
	switch (c) {
	case CHK_OK: return RN_WC_SUCCESS;
	case CHK_ASSOC: return RN_WC_INVALID_PD;
	case CHK_ACCESS: return RN_WC_ACCESS_VIOLATION;
	case CHK_WRAP: return RN_WC_WRAP;
	case CHK_BOUNDS: return RN_WC_BASE_BOUNDS;
	case CHK_STAG:
	default: return RN_WC_INVALID_STAG;
	}
}

/* STag 0: no PD, no bounds, local rights only; the address is taken as it is. */
static enum rn_wc_status stag0(uint32_t flags, uint64_t addr, uint64_t len, uint32_t need,
			       struct rn_mem_ref *ref)
{
	if (!(flags & RN_MEM_PRIVILEGED))
		return RN_WC_QP_NOT_PRIVILEGED;
	if (need & ~(uint32_t)(RN_ACC_LOCAL_READ | RN_ACC_LOCAL_WRITE))
		return RN_WC_ACCESS_VIOLATION;
	if (addr > UINTPTR_MAX - (len - 1))
		return RN_WC_WRAP;
	ref->addr = (uint8_t *)(uintptr_t)addr;
	ref->run = ref->remain = len;
	return RN_WC_SUCCESS;
}

enum rn_wc_status rn_mem_check_local_sge(struct rn_mem *mem, uint32_t pd, uint32_t flags,
					 rn_stag_t lkey, uint64_t addr, uint64_t len,
					 uint32_t need, struct rn_mem_ref *ref)
{
	struct rn_mem_ref scratch;
	if (!ref)
		ref = &scratch;
	ref_empty(ref);
	if (len == 0)
		return RN_WC_SUCCESS; /* a zero-length SGE is not checked, whatever its lkey */
	if (!mem)
		return RN_WC_INVALID_STAG;
	if (lkey == 0)
		return stag0(flags, addr, len, need, ref);
	enum chk c = lookup(mem, lkey, pd, 0, addr, len, (need & RN_ACC_RIGHTS) | RN_ACC_LOCAL_READ,
			    true, ref);
	if (c != CHK_OK)
		ref_empty(ref);
	return local_status(c);
}

int rn_mem_ref_next(struct rn_mem *mem, struct rn_mem_ref *ref)
{
	if (!mem || !ref || ref->run > ref->remain)
		return -1;
	ref->remain -= ref->run;
	if (ref->remain == 0) {
		ref->addr = NULL;
		ref->run = 0;
		return 0;
	}
	if (!ref->pbl) {
		ref->addr += ref->run;
		ref->run = ref->remain;
		return 0;
	}
	if (ref->idx == 0 || ref->idx >= mem->n)
		return -1;
	ref->pos += ref->run;
	return pbl_run(&mem->tpt[ref->idx], ref) ? 0 : -1;
}
