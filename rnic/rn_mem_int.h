/* Internals of the memory table shared by rn_mem*.c. Not for other modules.
 *
 * Entry control word (the only word the data path reads first; a seqlock):
 *   [ 7: 0] key     [ 9: 8] state     [11:10] type     [17:12] rights (enum rn_acc & 0x3f)
 *   [23:18] flags   [47:24] PD (24 bits)   [63:48] generation, bumped by every publish
 * A writer owns an entry while its state is BUSY (taken with a CAS). */
#ifndef RN_MEM_INT_H
#define RN_MEM_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rn_mem.h"

enum rn_tpt_state { ST_FREE = 0, ST_INVALID = 1, ST_VALID = 2, ST_BUSY = 3 };
enum rn_tpt_type { TY_MR = 0, TY_MR_PBL = 1, TY_MW1 = 2, TY_MW2 = 3 };
enum rn_tpt_flag {
	FL_ZERO_BASED = 1u << 0,
	FL_SHARED = 1u << 1,    /* MR: Shared, for good (source or product of Register Shared) */
	FL_REMOTE_OK = 1u << 2, /* MR: Remote Access Flag of alloc_mr / register */
	FL_CLOSING = 1u << 3,   /* a control-path writer owns the entry across a grace period
	                         * (dereg, rereg): other writers see an invalid STag */
};

#define CTL_KEY_SHIFT 0
#define CTL_STATE_SHIFT 8
#define CTL_TYPE_SHIFT 10
#define CTL_ACC_SHIFT 12
#define CTL_FLAG_SHIFT 18
#define CTL_PD_SHIFT 24
#define CTL_GEN_SHIFT 48

static inline uint8_t ctl_key(uint64_t c) { return (uint8_t)(c >> CTL_KEY_SHIFT); }
static inline unsigned ctl_state(uint64_t c) { return (unsigned)(c >> CTL_STATE_SHIFT) & 3u; }
static inline unsigned ctl_type(uint64_t c) { return (unsigned)(c >> CTL_TYPE_SHIFT) & 3u; }
static inline uint32_t ctl_acc(uint64_t c) { return (uint32_t)(c >> CTL_ACC_SHIFT) & 0x3fu; }
static inline uint32_t ctl_flags(uint64_t c) { return (uint32_t)(c >> CTL_FLAG_SHIFT) & 0x3fu; }
static inline uint32_t ctl_pd(uint64_t c) { return (uint32_t)(c >> CTL_PD_SHIFT) & 0xffffffu; }
static inline uint16_t ctl_gen(uint64_t c) { return (uint16_t)(c >> CTL_GEN_SHIFT); }
static inline bool ctl_is_mw(uint64_t c) { return ctl_type(c) >= TY_MW1; }

/* All fields but the generation; ctl_publish adds it. */
static inline uint64_t ctl_make(uint8_t key, unsigned state, unsigned type, uint32_t acc,
				uint32_t flags, uint32_t pd)
{
	return ((uint64_t)key << CTL_KEY_SHIFT) | ((uint64_t)(state & 3u) << CTL_STATE_SHIFT) |
	       ((uint64_t)(type & 3u) << CTL_TYPE_SHIFT) |
	       ((uint64_t)(acc & 0x3fu) << CTL_ACC_SHIFT) |
	       ((uint64_t)(flags & 0x3fu) << CTL_FLAG_SHIFT) |
	       ((uint64_t)(pd & 0xffffffu) << CTL_PD_SHIFT);
}
static inline uint64_t ctl_with_state(uint64_t c, unsigned state)
{
	return (c & ~(3ull << CTL_STATE_SHIFT)) | ((uint64_t)(state & 3u) << CTL_STATE_SHIFT);
}

/* Page list of a fast-registered MR: fixed-size pages so translation is O(1). */
struct rn_pbl {
	uint32_t max_pages;
	_Atomic uint32_t npages;
	_Atomic uint32_t page_shift;
	_Atomic uint32_t refs;       /* owner MR + shared MRs */
	_Atomic uintptr_t pg[];      /* page addresses; atomics: read by the data path */
};

/* One TPT entry, one cache line. Data-path fields are atomics: release stores by the writer,
 * acquire loads inside the reader's seqlock (no fences: TSan-checkable).
 * VA-contiguous (TY_MR, or a window on one): va_base = address of the byte at to_base.
 * Page list (TY_MR_PBL, or a window on one): va_base = byte position of to_base in the list. */
struct rn_tpt_entry {
	_Atomic uint64_t ctl;
	_Atomic uint64_t to_base;
	_Atomic uint64_t length;
	_Atomic uintptr_t va_base;
	_Atomic(struct rn_pbl *) pbl;
	_Atomic uint32_t qp_id;      /* MW type 2 while bound */
	_Atomic uint32_t nbound;     /* MR: windows bound to it */
	uint32_t parent_idx;         /* MW while bound: MR index (written under BUSY) */
	uint8_t parent_key;          /* MR key at bind time, for query */
	uint8_t last_key;            /* key of the previous use of this index */
	uint8_t pad[10];
} __attribute__((aligned(64)));

struct rn_pd_slot {
	uint32_t refs;               /* MRs + MWs + QPs + S-RQs */
	bool live;
};

struct rn_reader {
	_Atomic uint64_t epoch;      /* 0: offline or unused; else last epoch seen quiescent */
	_Atomic uintptr_t owner;     /* thread marker of the registering thread; 0: unused */
};

struct rn_mem {
	struct rn_mem_limits lim;
	uint32_t n;                  /* TPT entries, power of two */
	struct rn_tpt_entry *tpt;

	pthread_mutex_t lock;        /* control path: free lists, PD table, counters, RNG */
	uint32_t *freeq;             /* FIFO of free indices, capacity n */
	uint32_t fq_head, fq_tail;   /* free running counters */
	uint32_t n_mr, n_mw;
	uint64_t rng;

	struct rn_pd_slot *pds;      /* max_pd + 1, slot 0 unused */
	uint32_t *pd_freeq;          /* FIFO of free PD ids, capacity max_pd + 1 */
	uint32_t pdq_head, pdq_tail;

	_Atomic uint64_t epoch;      /* QSBR grace-period counter, starts at 1 */
	struct rn_reader readers[RN_MEM_MAX_READERS];
};

/* rn_mem.c: table services */
struct rn_tpt_entry *rn_tpt_get(struct rn_mem *mem, rn_stag_t stag);
uint64_t rn_tpt_lock(struct rn_tpt_entry *e);
void rn_tpt_publish(struct rn_tpt_entry *e, uint64_t old, uint64_t fields);
void rn_tpt_unlock(struct rn_tpt_entry *e, uint64_t old);
enum rn_status rn_tpt_alloc(struct rn_mem *mem, bool mw, uint32_t pd, uint32_t *idx);
void rn_tpt_release(struct rn_mem *mem, uint32_t idx, bool mw);
uint8_t rn_tpt_new_key(struct rn_mem *mem, uint8_t last);

/* rn_mem_pd.c: PD references (callers hold no lock) */
enum rn_status rn_pd_ref_locked(struct rn_mem *mem, uint32_t pd);
void rn_pd_unref_locked(struct rn_mem *mem, uint32_t pd);
void rn_pd_unref(struct rn_mem *mem, uint32_t pd);

/* rn_mem_mr.c */
struct rn_pbl *rn_pbl_new(uint32_t max_pages);
void rn_pbl_put(struct rn_pbl *p);
bool rn_acc_valid_mr(uint32_t access);

void rn_tpt_retire(struct rn_mem *mem, struct rn_tpt_entry *e, uint64_t old);
void rn_mem_drop_refs(void);

/* rn_mem_mw.c: unbinding a window (under its lock). Publish the returned fields first, then
 * drop the parent's count: an MR must never look unbound while a window on it is Valid. */
uint64_t rn_mw_unbind_fields(struct rn_tpt_entry *mw, uint64_t old, uint32_t new_pd);
void rn_mw_parent_release(struct rn_mem *mem, uint32_t parent_idx);

/* A translation goes through the page list: fast-registered MRs, windows on them. */
static inline bool ctl_uses_pbl(uint64_t c, const struct rn_pbl *p)
{
	return ctl_type(c) == TY_MR_PBL || (ctl_is_mw(c) && p != NULL);
}

/* The state the query verbs and the writer paths agree on: an entry that may be used. */
static inline bool ctl_live(uint64_t c)
{
	return ctl_state(c) != ST_FREE && !(ctl_flags(c) & FL_CLOSING);
}

#endif
