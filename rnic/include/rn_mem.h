/* Protection domains and the STag table (TPT): memory regions and memory windows (RDMA Verbs
 * 1.0 ch. 7, §9.2.2, §9.2.6; completion statuses §9.5.2, Terminate codes §8.3.2). No I/O.
 *
 * STags: [31:8] index (24 bits), [7:0] key. MRs and MWs share one index space; index 0 is never
 * handed out, so STag 0 (the privileged "physical" STag) never names a table entry.
 * iWARP has one STag per registration: lkey == rkey == stag.
 *
 * Threads. Control-path verbs (PD, register, deregister, allocate, query) may be called from any
 * thread. The data-path checks (rn_mem_check_tagged / _local_sge, rn_mem_ref_next) are lock-free
 * and may run concurrently with every writer. The WR-execution functions (fast-register, bind,
 * local and remote invalidate) are writers too and are serialized per entry with a CAS.
 *
 * Lifetime. A data-path thread registers as a reader (rn_mem_reader_register) and calls
 * rn_mem_quiescent() between DDP segments; it never keeps a translation across that call.
 * rn_mem_dereg() and a translation-changing rn_mem_rereg_mr() wait until every registered reader
 * has passed a quiescent point: after they return, no placement into the old memory is running.
 * Local / remote invalidate and fast-register do not wait (they run on the data path); a placement
 * that validated before the invalidate may still complete, as the verbs permit for operations
 * in flight. The SQ can defer the invalidate's completion with rn_mem_sync_start/_done. */
#ifndef RN_MEM_H
#define RN_MEM_H

#if !defined(RNIC_H) && !defined(RNIC_INTERNAL)
#error "include rnic.h, the RNIC's public header"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ddp.h"
#include "rn_status.h"
#include "rn_wc.h"

typedef uint32_t rn_stag_t;
#define RN_STAG_IDX(s) ((uint32_t)(s) >> 8)
#define RN_STAG_KEY(s) ((uint8_t)(s))
#define RN_STAG(i, k) (((uint32_t)(i) << 8) | (uint8_t)(k))
#define RN_STAG_IDX_MAX 0x00ffffffu

#define RN_PD_MAX 0x00ffffffu /* PD IDs are 24 bits; PD 0 is never handed out */

/* Access rights and registration modifiers (the `access` argument everywhere). */
enum rn_acc {
	RN_ACC_LOCAL_READ = 1u << 0,   /* always granted (ibverbs has no flag for it) */
	RN_ACC_LOCAL_WRITE = 1u << 1,
	RN_ACC_REMOTE_READ = 1u << 2,
	RN_ACC_REMOTE_WRITE = 1u << 3, /* requires LOCAL_WRITE */
	RN_ACC_MW_BIND = 1u << 4,      /* MR: windows may be bound to it */
	RN_ACC_REMOTE_INV = 1u << 5,   /* may be invalidated by a peer's Send with Invalidate;
	                                * implied for fast-registered MRs and type-2 windows */
	RN_ACC_ZERO_BASED = 1u << 8,   /* modifier: the first byte has TO 0 (else TO = VA) */
};
#define RN_ACC_RIGHTS 0x3fu        /* the rights bits, stored in the entry */

enum rn_mw_type { RN_MW_TYPE1 = 1, RN_MW_TYPE2 = 2 };

/* rn_mem_rereg_mr() flags */
enum rn_rereg_flag {
	RN_REREG_TRANSLATION = 1u << 0,
	RN_REREG_PD = 1u << 1,
	RN_REREG_ACCESS = 1u << 2,
};

struct rn_mem_limits {
	uint32_t max_pd;     /* 1 .. RN_PD_MAX */
	uint32_t max_mr;     /* live MRs (registered, shared, allocated for fast-register) */
	uint32_t max_mw;     /* live MWs; max_mr + max_mw <= RN_STAG_IDX_MAX - 1 */
	uint32_t max_pbl;    /* most pages in one fast-register page list */
};

struct rn_mem;

/* ---- table ------------------------------------------------------------------------------ */
enum rn_status rn_mem_create(const struct rn_mem_limits *lim, struct rn_mem **out);
/* Frees everything, including live PDs/MRs/MWs (close of the device). NULL is ignored. */
void rn_mem_destroy(struct rn_mem *mem);
/* Number of TPT entries n (a power of two); valid STag indices are 1 .. n-1. */
uint32_t rn_mem_tpt_size(const struct rn_mem *mem);

/* ---- protection domains ----------------------------------------------------------------- */
enum rn_status rn_mem_pd_alloc(struct rn_mem *mem, uint32_t *pd);
/* RN_ERR_PD_IN_USE while an MR, MW, QP or S-RQ references it. */
enum rn_status rn_mem_pd_dealloc(struct rn_mem *mem, uint32_t pd);
/* QPs and S-RQs take a reference at create and drop it at destroy. */
enum rn_status rn_mem_pd_get(struct rn_mem *mem, uint32_t pd);
enum rn_status rn_mem_pd_put(struct rn_mem *mem, uint32_t pd);

/* ---- memory regions --------------------------------------------------------------------- */
/* Register [addr, addr+len) of this process. VA-based: TO of the first byte is `iova` (normally
 * (uintptr_t)addr); RN_ACC_ZERO_BASED: it is 0 and iova is ignored. The RNIC picks the key. */
enum rn_status rn_mem_reg_mr(struct rn_mem *mem, uint32_t pd, void *addr, uint64_t len,
			     uint64_t iova, uint32_t access, rn_stag_t *stag);
/* Change translation / PD / access of a non-shared MR; keeps the index, new RNIC-chosen key.
 * Status: invalid handle, STag index, or bound windows leave the MR unchanged; any other error
 * deallocates it (RI-Reregister semantics, RDMA Verbs §7.3; verbs/ pre-validates to offer the
 * ibverbs "input error, MR unchanged" behaviour). Arguments not selected by flags are ignored,
 * except that RN_REREG_TRANSLATION takes RN_ACC_ZERO_BASED from `access`. */
enum rn_status rn_mem_rereg_mr(struct rn_mem *mem, rn_stag_t *stag, uint32_t flags, uint32_t pd,
			       void *addr, uint64_t len, uint64_t iova, uint32_t access);
/* A new STag for the memory of the Valid non-shared MR `src` (its key must match); both become
 * Shared for good. VA-based: iova must have the same offset in a 4 KiB page as the memory. */
enum rn_status rn_mem_reg_shared_mr(struct rn_mem *mem, rn_stag_t src, uint32_t pd,
				    uint64_t iova, uint32_t access, rn_stag_t *stag);
/* An Invalid MR STag for fast-register with room for max_pages pages (allocated = requested).
 * remote_ok is the Remote Access Flag: without it fast-register may not grant remote rights. */
enum rn_status rn_mem_alloc_mr(struct rn_mem *mem, uint32_t pd, uint32_t max_pages,
			       bool remote_ok, rn_stag_t *stag);
/* Deallocate STag (MR or MW; by index, the key is not checked, RDMA Verbs §7.9). An MR with
 * bound windows: RN_ERR_MW_BOUND_TO_MR, unchanged. Waits for data-path readers (see above). */
enum rn_status rn_mem_dereg(struct rn_mem *mem, rn_stag_t stag);

enum rn_mem_state { RN_MEM_FREE = 0, RN_MEM_INVALID = 1, RN_MEM_VALID = 2 };

struct rn_mem_info {
	enum rn_mem_state state;
	uint8_t key;
	uint32_t pd;
	uint32_t access;      /* rights, plus RN_ACC_ZERO_BASED */
	uint64_t to_base;
	uint64_t length;
	bool shared;          /* MR: Shared (a source or a product of Register Shared) */
	bool remote_ok;       /* MR: Remote Access Flag */
	bool page_list;       /* MR: translated through a page list (fast-registered) */
	uint32_t max_pages;   /* MR: page-list capacity */
	uint32_t nbound;      /* MR: windows bound to it */
	enum rn_mw_type mw_type; /* MW */
	uint32_t qp_id;       /* MW type 2 while bound: its QP */
	rn_stag_t mr_stag;    /* MW while bound: index of the MR (key of the MR at bind time) */
};
/* Query by index (the key is ignored); STag 0, an MW (for _mr) or an MR (for _mw), a free
 * index: RN_ERR_INVALID_STAG. */
enum rn_status rn_mem_query_mr(struct rn_mem *mem, rn_stag_t stag, struct rn_mem_info *info);
enum rn_status rn_mem_query_mw(struct rn_mem *mem, rn_stag_t stag, struct rn_mem_info *info);

/* ---- memory windows --------------------------------------------------------------------- */
enum rn_status rn_mem_alloc_mw(struct rn_mem *mem, uint32_t pd, enum rn_mw_type type,
			       rn_stag_t *stag);
/* RN_OK when no type-2 window is bound to qp_id (Destroy QP), else RN_ERR_MW_BOUND_TO_QP. */
enum rn_status rn_mem_qp_check_unbound(struct rn_mem *mem, uint32_t qp_id);

/* ---- work requests executed by the SQ / RQ (return a completion status) ----------------- */
struct rn_mem_qp {         /* the QP on whose behalf an operation runs */
	uint32_t pd;
	uint32_t qp_id;
	bool privileged;       /* STag 0 and fast-register enabled */
};

struct rn_fr_wr {          /* Fast-Register NS-MR */
	rn_stag_t stag;        /* index from rn_mem_alloc_mr (or a registered MR), new key */
	uint32_t access;       /* rights | RN_ACC_ZERO_BASED */
	uint64_t iova;         /* VA-based: TO of the first byte; iova mod page size == fbo */
	uint64_t length;       /* bytes, <= npages * page size - fbo */
	uint32_t fbo;          /* first byte offset inside pages[0] */
	uint8_t page_shift;    /* 12 .. 30 */
	uint32_t npages;
	const uint64_t *pages; /* page-aligned process addresses, ascending TO order */
};
enum rn_wc_status rn_mem_fast_reg(struct rn_mem *mem, const struct rn_mem_qp *qp,
				  const struct rn_fr_wr *wr);

struct rn_bind_wr {        /* Bind MW (type 1: ibv_bind_mw; type 2: SQ WR) */
	rn_stag_t mw_stag;     /* window index, new key */
	rn_stag_t mr_stag;     /* full MR STag, key checked */
	uint64_t addr;         /* window start as a TO of the MR */
	uint64_t length;       /* type 1: 0 unbinds */
	uint32_t access;       /* RN_ACC_REMOTE_READ / _WRITE, RN_ACC_ZERO_BASED (type 2 only) */
};
enum rn_wc_status rn_mem_bind_mw(struct rn_mem *mem, const struct rn_mem_qp *qp,
				 const struct rn_bind_wr *wr);

/* Invalidate Local STag (also the local half of Read with Invalidate). Already Invalid: success. */
enum rn_wc_status rn_mem_local_inv(struct rn_mem *mem, const struct rn_mem_qp *qp, rn_stag_t stag);

/* Incoming Send with Invalidate, after the message was placed. On failure returns
 * RN_WC_REM_INV_REQ and the Terminate code in *term (RDMAP, remote protection, 0x00 invalid STag,
 * 0x03 other PD / MW not bound to this QP, 0x02 no remote-invalidate right, 0x09 cannot be
 * invalidated: MR with bound windows or a Shared MR). */
enum rn_wc_status rn_mem_remote_inv(struct rn_mem *mem, const struct rn_mem_qp *qp,
				    rn_stag_t stag, struct iwarp_err *term);

/* ---- data-path checks ------------------------------------------------------------------- */
/* A validated translation. Copy `run` bytes to/from `addr`, then rn_mem_ref_next() for the next
 * run (page lists); `remain` counts the bytes still to go including the current run. */
struct rn_mem_ref {
	uint8_t *addr;
	uint64_t run;
	uint64_t remain;
	/* private: the snapshot the walk continues from */
	const struct rn_pbl *pbl;
	uint64_t pos;          /* byte position in the page list */
	uint64_t ctl;
	uint32_t idx;
};
/* Incoming tagged segment: RDMA Write (need RN_ACC_REMOTE_WRITE), Read Response sink (need
 * RN_ACC_LOCAL_WRITE, or REMOTE_WRITE in strict mode), Read Request source (need
 * RN_ACC_REMOTE_READ). Returns 0 and *ref, or -1 and the Terminate error in *err, in the order
 * invalid STag > not associated > access > TO wrap > bounds. Codes: DDP tagged (layer 1, etype 1)
 * for sinks, except access: RDMAP 0/1/0x02; RDMAP remote protection (0/1) when need contains
 * RN_ACC_REMOTE_READ. len 0 is accepted without any check (RDMA Verbs §7.6.3): ref->run = 0. */
int rn_mem_check_tagged(struct rn_mem *mem, uint32_t pd, uint32_t qp_id, rn_stag_t stag,
			uint64_t to, uint64_t len, uint32_t need, struct rn_mem_ref *ref,
			struct iwarp_err *err);

#define RN_MEM_PRIVILEGED 1u  /* flags for rn_mem_check_local_sge: QP may use STag 0 */
/* Local SGE at WQE processing: pd is the QP's (the S-RQ's for receive SGEs). STag 0 on a
 * privileged QP maps addr 1:1 (process addresses stand for physical ones). Returns
 * RN_WC_SUCCESS and *ref, or the completion status (invalid STag incl. MW STags, PD, access,
 * wrap, bounds; STag 0 unprivileged: RN_WC_QP_NOT_PRIVILEGED). len 0: success, no check. */
enum rn_wc_status rn_mem_check_local_sge(struct rn_mem *mem, uint32_t pd, uint32_t flags,
					 rn_stag_t lkey, uint64_t addr, uint64_t len,
					 uint32_t need, struct rn_mem_ref *ref);

/* Advance past the current run. 0: next run in *ref (run 0 when remain is 0); -1: the entry
 * changed since the check (invalidated/re-registered): stop placing, treat as invalid STag. */
int rn_mem_ref_next(struct rn_mem *mem, struct rn_mem_ref *ref);

/* ---- quiescence (QSBR) ------------------------------------------------------------------ */
#define RN_MEM_MAX_READERS 64u
/* Called by a data-path thread for itself; the reader starts online. */
enum rn_status rn_mem_reader_register(struct rn_mem *mem, unsigned *id);
void rn_mem_reader_unregister(struct rn_mem *mem, unsigned id);
/* "I hold no translation": once per loop iteration, between segments. */
void rn_mem_quiescent(struct rn_mem *mem, unsigned id);
/* Around blocking waits (epoll): an offline reader never delays a writer. */
void rn_mem_reader_offline(struct rn_mem *mem, unsigned id);
void rn_mem_reader_online(struct rn_mem *mem, unsigned id);
/* Grace period: returns once every reader online now has passed a quiescent point. A reader
 * thread calling it is not waited for. Returns at once with no readers registered. */
void rn_mem_synchronize(struct rn_mem *mem);
/* Non-blocking form: a ticket, and whether its grace period is over. */
uint64_t rn_mem_sync_start(struct rn_mem *mem);
bool rn_mem_sync_done(struct rn_mem *mem, uint64_t ticket);

/* Holders of references beyond a call: rn_mem_holder_add, declared in rn_transport.h. */

#endif
