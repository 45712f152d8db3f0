/* Protection domains, memory regions and memory windows over rn_mem (docs/verbs.md "Memory").
 * iWARP has one STag per registration: lkey == rkey == the STag. */
#include <errno.h>
#include <stdlib.h>

#include "verbs_int.h"

/* The header turns these names into inline wrappers; we define the functions themselves. */
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* IBV_ACCESS_* bit -> RN_ACC_* rights (0: accepted, no RNIC right). */
static const struct {
	unsigned ibv;
	uint32_t rn;
} sv_acc_tab[] = {
	{ IBV_ACCESS_LOCAL_WRITE, RN_ACC_LOCAL_WRITE },
	{ IBV_ACCESS_REMOTE_WRITE, RN_ACC_REMOTE_WRITE },
	{ IBV_ACCESS_REMOTE_READ, RN_ACC_REMOTE_READ },
	{ IBV_ACCESS_REMOTE_ATOMIC, 0 },   /* no atomics (atomic_cap NONE): nothing to grant */
	{ IBV_ACCESS_MW_BIND, RN_ACC_MW_BIND },
	{ IBV_ACCESS_ZERO_BASED, RN_ACC_ZERO_BASED },
	{ IBV_ACCESS_HUGETLB, 0 },         /* a hint about the pages; irrelevant here */
};

/* Bits that fail: on-demand paging is not offered (no page faults to take). */
#define SV_ACC_UNSUPPORTED ((unsigned)IBV_ACCESS_ON_DEMAND)

/* Translate access flags; (uint32_t)-1 when a bit is unknown or unsupported. Optional-range
 * flags (relaxed ordering, ...) may be ignored by definition. Local Read is always granted. */
uint32_t sv_access(unsigned ibv)
{
	uint32_t rn = RN_ACC_LOCAL_READ;
	unsigned known = IBV_ACCESS_OPTIONAL_RANGE;

	for (size_t i = 0; i < sizeof(sv_acc_tab) / sizeof(sv_acc_tab[0]); i++) {
		known |= sv_acc_tab[i].ibv;
		if (ibv & sv_acc_tab[i].ibv)
			rn |= sv_acc_tab[i].rn;
	}
	if ((ibv & ~known) || (ibv & SV_ACC_UNSUPPORTED))
		return (uint32_t)-1;
	/* As the kernel: remote write or atomic access needs local write. */
	if ((ibv & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(ibv & IBV_ACCESS_LOCAL_WRITE))
		return (uint32_t)-1;
	return rn;
}

/* ---- protection domains ----------------------------------------------------------------- */
struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct sv_context *c = sv_ctx(context);
	struct sv_pd *p;
	uint32_t id;
	enum rn_status st;

	if (!c) {
		errno = EINVAL;
		return NULL;
	}
	p = sv_obj_alloc(SV_OBJ_PD, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	st = rn_mem_pd_alloc(c->mem, &id);
	if (st) {
		sv_obj_free(SV_OBJ_PD, p);
		errno = sv_errno(st);
		return NULL;
	}
	p->pd.context = context;
	p->pd.handle = sv_tag(p, SV_MAGIC_PD);
	p->id = id;
	p->magic = SV_MAGIC_PD;
	return &p->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct sv_pd *p = sv_pd(pd);
	enum rn_status st;

	if (!p)
		return EINVAL;
	st = rn_mem_pd_dealloc(sv_ctx(pd->context)->mem, p->id);
	if (st)
		return sv_errno(st);
	p->magic = 0;
	sv_obj_free(SV_OBJ_PD, p);
	return 0;
}

/* ---- memory regions --------------------------------------------------------------------- */
static struct ibv_mr *sv_mr_new(struct ibv_pd *pd, void *addr, size_t len, rn_stag_t stag)
{
	struct sv_mr *m = sv_obj_alloc(SV_OBJ_MR, sizeof(*m));

	if (!m)
		return NULL;
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = len;
	m->mr.handle = sv_tag(m, SV_MAGIC_MR);
	m->mr.lkey = m->mr.rkey = stag;
	m->magic = SV_MAGIC_MR;
	return &m->mr;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	struct sv_pd *p = sv_pd(pd);
	uint32_t acc = sv_access(access);
	struct rn_mem *mem;
	struct ibv_mr *mr;
	rn_stag_t stag;
	enum rn_status st;

	if (!p || !addr || !length || acc == (uint32_t)-1) {
		errno = EINVAL;
		return NULL;
	}
	mem = sv_ctx(pd->context)->mem;
	st = rn_mem_reg_mr(mem, p->id, addr, length, iova, acc, &stag);
	if (st) {
		errno = sv_errno(st);
		return NULL;
	}
	mr = sv_mr_new(pd, addr, length, stag);
	if (!mr) {
		rn_mem_dereg(mem, stag);
		errno = ENOMEM;
	}
	return mr;
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned)access);
}

struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			       int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned)access);
}

/* No dma-buf importer in a user-space RNIC. */
struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
				 uint64_t iova, int fd, int access)
{
	(void)pd, (void)offset, (void)length, (void)iova, (void)fd, (void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

/* Input checks of ibv_rereg_mr before the RNIC sees anything: failures leave the MR as it
 * was (IBV_REREG_MR_ERR_INPUT); the RNIC's own failures deallocate it (RDMA Verbs §7.3). */
static int sv_rereg_check(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
			  size_t length, int access)
{
	if (!flags || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED))
		return EINVAL;
	if ((flags & IBV_REREG_MR_CHANGE_PD) && (!sv_pd(pd) || pd->context != mr->context))
		return EINVAL;
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!addr || !length))
		return EINVAL;
	if ((flags & IBV_REREG_MR_CHANGE_ACCESS) && sv_access((unsigned)access) == (uint32_t)-1)
		return EINVAL;
	return 0;
}

static uint32_t sv_rereg_flags(int flags)
{
	return ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) ? RN_REREG_TRANSLATION : 0) |
	       ((flags & IBV_REREG_MR_CHANGE_PD) ? RN_REREG_PD : 0) |
	       ((flags & IBV_REREG_MR_CHANGE_ACCESS) ? RN_REREG_ACCESS : 0);
}

static void sv_rereg_apply(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
			   size_t length, rn_stag_t stag)
{
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
	}
	mr->lkey = mr->rkey = stag;
}

int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access)
{
	struct sv_mr *m = sv_mr(mr);
	struct rn_mem_info info;
	struct rn_mem *mem;
	rn_stag_t stag;
	uint32_t acc, npd;
	int rc;
	enum rn_status st;

	rc = (m && !m->dead) ? sv_rereg_check(mr, flags, pd, addr, length, access) : EINVAL;
	if (rc) {
		errno = rc;
		return IBV_REREG_MR_ERR_INPUT;
	}
	mem = sv_ctx(mr->context)->mem;
	if (rn_mem_query_mr(mem, mr->lkey, &info) || info.state != RN_MEM_VALID) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	/* Keep what is not changed: the RNIC takes ZERO_BASED from access with a translation. */
	acc = (flags & IBV_REREG_MR_CHANGE_ACCESS) ? sv_access((unsigned)access) : info.access;
	npd = (flags & IBV_REREG_MR_CHANGE_PD) ? sv_pd(pd)->id : info.pd;
	stag = mr->lkey;
	st = rn_mem_rereg_mr(mem, &stag, sv_rereg_flags(flags), npd, addr, length,
			     (uintptr_t)addr, acc);
	if (st == RN_OK) {
		sv_rereg_apply(mr, flags, pd, addr, length, stag);
		return 0;
	}
	errno = sv_errno(st);
	if (st == RN_ERR_MW_BOUND_TO_MR || st == RN_ERR_INVALID_STAG)
		return IBV_REREG_MR_ERR_INPUT;   /* the RNIC left the MR unchanged */
	m->dead = 1;                         /* deallocated: only ibv_dereg_mr is left */
	mr->lkey = mr->rkey = 0;
	return IBV_REREG_MR_ERR_CMD;
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct sv_mr *m = sv_mr(mr);
	enum rn_status st;

	if (!m)
		return EINVAL;
	/* An MR a failed reregistration deallocated is already gone from the table. */
	if (!m->dead) {
		st = rn_mem_dereg(sv_ctx(mr->context)->mem, mr->lkey);
		if (st)
			return sv_errno(st);
	}
	m->magic = 0;
	sv_obj_free(SV_OBJ_MR, m);
	return 0;
}

struct ibv_mr *softrnic_alloc_mr(struct ibv_pd *pd, uint32_t max_pages, int remote_access)
{
	struct sv_pd *p = sv_pd(pd);
	struct rn_mem *mem;
	struct ibv_mr *mr;
	rn_stag_t stag;
	enum rn_status st;

	if (!p || !max_pages) {
		errno = EINVAL;
		return NULL;
	}
	mem = sv_ctx(pd->context)->mem;
	st = rn_mem_alloc_mr(mem, p->id, max_pages, remote_access != 0, &stag);
	if (st) {
		errno = sv_errno(st);
		return NULL;
	}
	mr = sv_mr_new(pd, NULL, 0, stag);
	if (!mr) {
		rn_mem_dereg(mem, stag);
		errno = ENOMEM;
	}
	return mr;
}

/* ---- memory windows (ops.alloc_mw / ops.dealloc_mw; ibv_bind_mw is in sv_qp.c) ----------- */
struct ibv_mw *sv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct sv_pd *p = sv_pd(pd);
	struct rn_mem *mem;
	struct sv_mw *w;
	rn_stag_t stag;
	enum rn_status st;

	if (!p || (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)) {
		errno = EINVAL;
		return NULL;
	}
	mem = sv_ctx(pd->context)->mem;
	w = sv_obj_alloc(SV_OBJ_MW, sizeof(*w));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	st = rn_mem_alloc_mw(mem, p->id, type == IBV_MW_TYPE_1 ? RN_MW_TYPE1 : RN_MW_TYPE2,
			     &stag);
	if (st) {
		sv_obj_free(SV_OBJ_MW, w);
		errno = sv_errno(st);
		return NULL;
	}
	w->mw.context = pd->context;
	w->mw.pd = pd;
	w->mw.rkey = stag;
	w->mw.handle = sv_tag(w, SV_MAGIC_MW);
	w->mw.type = type;
	w->magic = SV_MAGIC_MW;
	return &w->mw;
}

int sv_dealloc_mw(struct ibv_mw *mw)
{
	struct sv_mw *w = (struct sv_mw *)mw;
	enum rn_status st;

	if (!sv_mw(mw))
		return EINVAL;
	st = rn_mem_dereg(sv_ctx(mw->context)->mem, mw->rkey);
	if (st)
		return sv_errno(st);
	w->magic = 0;
	sv_obj_free(SV_OBJ_MW, w);
	return 0;
}
