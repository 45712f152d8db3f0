/* The memory table: TPT array, index allocation, keys, the per-entry writer lock and the
 * quiescence (QSBR) machinery. The verbs live in rn_mem_pd.c, rn_mem_mr.c, rn_mem_mw.c and
 * rn_mem_check.c. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rn_mem_int.h"
#include "rn_transport.h"

_Static_assert(sizeof(struct rn_tpt_entry) == 64, "a TPT entry is one cache line");

/* Its address identifies the calling thread (QSBR: a writer never waits for itself). */
static _Thread_local char rn_thread_marker;

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t roundup_pow2(uint64_t v)
{
	uint64_t p = 1;
	while (p < v)
		p <<= 1;
	return (uint32_t)p;
}

static bool limits_valid(const struct rn_mem_limits *l)
{
	if (!l || l->max_pd == 0 || l->max_pd > RN_PD_MAX)
		return false;
	if ((uint64_t)l->max_mr + l->max_mw == 0)
		return false;
	/* + 1 for index 0; the table is capped at 2^24 entries */
	return (uint64_t)l->max_mr + l->max_mw + 1 <= (uint64_t)RN_STAG_IDX_MAX + 1;
}

/* FIFO of free indices seeded in random order: the longest time before an index comes back,
 * and no predictable first STag. */
static void seed_free_list(struct rn_mem *mem)
{
	uint32_t cnt = mem->n - 1;
	for (uint32_t i = 0; i < cnt; i++)
		mem->freeq[i] = i + 1;
	for (uint32_t i = cnt; i > 1; i--) {
		uint32_t j = (uint32_t)(splitmix64(&mem->rng) % i);
		uint32_t t = mem->freeq[i - 1];
		mem->freeq[i - 1] = mem->freeq[j];
		mem->freeq[j] = t;
	}
	mem->fq_head = 0;
	mem->fq_tail = cnt;
}

static void seed_pd_list(struct rn_mem *mem)
{
	for (uint32_t i = 0; i < mem->lim.max_pd; i++)
		mem->pd_freeq[i] = i + 1;
	mem->pdq_head = 0;
	mem->pdq_tail = mem->lim.max_pd;
}

static uint64_t rng_seed(const void *salt)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t s = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ (uintptr_t)salt;
	return splitmix64(&s);
}

enum rn_status rn_mem_create(const struct rn_mem_limits *lim, struct rn_mem **out)
{
	if (!out)
		return RN_ERR_INVALID_MODIFIER;
	*out = NULL;
	if (!limits_valid(lim))
		return RN_ERR_INVALID_MODIFIER;
	struct rn_mem *mem = calloc(1, sizeof(*mem));
	if (!mem)
		return RN_ERR_NO_RESOURCES;
	mem->lim = *lim;
	mem->n = roundup_pow2((uint64_t)lim->max_mr + lim->max_mw + 1);
	mem->tpt = aligned_alloc(64, (size_t)mem->n * sizeof(struct rn_tpt_entry));
	mem->freeq = malloc((size_t)mem->n * sizeof(uint32_t));
	mem->pds = calloc((size_t)lim->max_pd + 1, sizeof(struct rn_pd_slot));
	mem->pd_freeq = malloc(((size_t)lim->max_pd + 1) * sizeof(uint32_t));
	if (!mem->tpt || !mem->freeq || !mem->pds || !mem->pd_freeq) {
		free(mem->tpt);
		free(mem->freeq);
		free(mem->pds);
		free(mem->pd_freeq);
		free(mem);
		return RN_ERR_NO_RESOURCES;
	}
	memset(mem->tpt, 0, (size_t)mem->n * sizeof(struct rn_tpt_entry));
	pthread_mutex_init(&mem->lock, NULL);
	mem->rng = rng_seed(mem);
	seed_free_list(mem);
	seed_pd_list(mem);
	atomic_init(&mem->epoch, 1);
	*out = mem;
	return RN_OK;
}

void rn_mem_destroy(struct rn_mem *mem)
{
	if (!mem)
		return;
	if (mem->n_mr > 0)
		rn_mem_drop_refs(); /* live regions go with the device: as many deregistrations */
	for (uint32_t i = 1; i < mem->n; i++) {
		struct rn_tpt_entry *e = &mem->tpt[i];
		uint64_t c = atomic_load(&e->ctl);
		struct rn_pbl *p = atomic_load(&e->pbl);
		/* MR entries own a reference on their page list; windows only borrow the parent's */
		if (ctl_state(c) != ST_FREE && !ctl_is_mw(c) && p)
			rn_pbl_put(p);
	}
	pthread_mutex_destroy(&mem->lock);
	free(mem->tpt);
	free(mem->freeq);
	free(mem->pds);
	free(mem->pd_freeq);
	free(mem);
}

uint32_t rn_mem_tpt_size(const struct rn_mem *mem)
{
	return mem ? mem->n : 0;
}

/* ---- entries ---------------------------------------------------------------------------- */

struct rn_tpt_entry *rn_tpt_get(struct rn_mem *mem, rn_stag_t stag)
{
	uint32_t idx = RN_STAG_IDX(stag);
	if (!mem || idx == 0 || idx >= mem->n)
		return NULL;
	return &mem->tpt[idx];
}

static void cpu_relax(unsigned *spins)
{
	/* writer sections are a handful of stores; yield only if the writer got preempted */
	if (++*spins > 64) {
		*spins = 0;
		sched_yield();
	}
}

/* Take the entry's writer lock: CAS the state to BUSY. Returns the word before the lock. The
 * field stores that follow are release stores, so a reader that sees one of them also sees
 * BUSY when it re-reads the word (a fence-free seqlock: TSan understands it, x86 pays nothing). */
uint64_t rn_tpt_lock(struct rn_tpt_entry *e)
{
	unsigned spins = 0;
	uint64_t cur = atomic_load_explicit(&e->ctl, memory_order_acquire);
	for (;;) {
		if (ctl_state(cur) == ST_BUSY) {
			cpu_relax(&spins);
			cur = atomic_load_explicit(&e->ctl, memory_order_acquire);
			continue;
		}
		if (atomic_compare_exchange_weak_explicit(&e->ctl, &cur, ctl_with_state(cur, ST_BUSY),
							  memory_order_acq_rel,
							  memory_order_acquire))
			break;
	}
	return cur;
}

/* Publish new control fields with the generation bumped: readers that snapshotted the old
 * version retry. seq_cst: a grace period that starts after this store (rn_mem_sync_start) and
 * finds a reader offline guarantees that reader's next (seq_cst) look at the word sees it. */
void rn_tpt_publish(struct rn_tpt_entry *e, uint64_t old, uint64_t fields)
{
	uint64_t gen = (uint64_t)(uint16_t)(ctl_gen(old) + 1u);
	fields &= ~(0xffffull << CTL_GEN_SHIFT);
	atomic_store_explicit(&e->ctl, fields | (gen << CTL_GEN_SHIFT), memory_order_seq_cst);
}

/* Release the lock without a change visible to readers: the old word comes back, so a reader
 * that straddled the lock still validates (its fields did not change). */
void rn_tpt_unlock(struct rn_tpt_entry *e, uint64_t old)
{
	atomic_store_explicit(&e->ctl, old, memory_order_release);
}

enum rn_status rn_tpt_alloc(struct rn_mem *mem, bool mw, uint32_t pd, uint32_t *idx)
{
	enum rn_status st = RN_OK;
	pthread_mutex_lock(&mem->lock);
	uint32_t *cnt = mw ? &mem->n_mw : &mem->n_mr;
	uint32_t max = mw ? mem->lim.max_mw : mem->lim.max_mr;
	if (pd == 0 || pd > mem->lim.max_pd || !mem->pds[pd].live)
		st = RN_ERR_INVALID_PD;
	else if (*cnt >= max || mem->fq_head == mem->fq_tail)
		st = RN_ERR_NO_RESOURCES;
	if (st == RN_OK) {
		rn_pd_ref_locked(mem, pd);
		*idx = mem->freeq[mem->fq_head++ & (mem->n - 1)];
		(*cnt)++;
	}
	pthread_mutex_unlock(&mem->lock);
	return st;
}

/* The entry is FREE again: the index goes to the back of the FIFO. */
void rn_tpt_release(struct rn_mem *mem, uint32_t idx, bool mw)
{
	pthread_mutex_lock(&mem->lock);
	mem->freeq[mem->fq_tail++ & (mem->n - 1)] = idx;
	if (mw)
		mem->n_mw--;
	else
		mem->n_mr--;
	pthread_mutex_unlock(&mem->lock);
}

/* Deallocate a locked, live entry (dereg, dealloc MW, failed rereg), RDMA Verbs §7.9:
 * INVALID+CLOSING (new lookups fail), grace period, release the page list and the PD,
 * FREE, index back to the FIFO. */
void rn_tpt_retire(struct rn_mem *mem, struct rn_tpt_entry *e, uint64_t old)
{
	uint32_t idx = (uint32_t)(e - mem->tpt);
	bool mw = ctl_is_mw(old);
	rn_tpt_publish(e, old, ctl_make(ctl_key(old), ST_INVALID, ctl_type(old), ctl_acc(old),
				    ctl_flags(old) | FL_CLOSING, ctl_pd(old)));
	if (mw && ctl_state(old) == ST_VALID)
		rn_mw_parent_release(mem, e->parent_idx);
	rn_mem_synchronize(mem);
	if (!mw)
		rn_mem_drop_refs(); /* zero-copy transmit may still read it */
	struct rn_pbl *p = atomic_load_explicit(&e->pbl, memory_order_relaxed);
	if (!mw && p)
		rn_pbl_put(p);
	rn_pd_unref(mem, ctl_pd(old));
	uint64_t c = rn_tpt_lock(e);
	e->last_key = ctl_key(old);
	atomic_store_explicit(&e->pbl, NULL, memory_order_release);
	atomic_store_explicit(&e->qp_id, 0, memory_order_release);
	atomic_store_explicit(&e->nbound, 0, memory_order_release);
	atomic_store_explicit(&e->length, 0, memory_order_release);
	rn_tpt_publish(e, c, ctl_make(ctl_key(old), ST_FREE, ctl_type(old), 0, 0, 0));
	rn_tpt_release(mem, idx, mw);
}

/* An RNIC-chosen key: random, and never the key this index had last time, so a stale STag from
 * the previous use of the index cannot match. */
uint8_t rn_tpt_new_key(struct rn_mem *mem, uint8_t last)
{
	uint8_t k;
	pthread_mutex_lock(&mem->lock);
	do
		k = (uint8_t)splitmix64(&mem->rng);
	while (k == last);
	pthread_mutex_unlock(&mem->lock);
	return k;
}

/* ---- quiescence ------------------------------------------------------------------------- */

enum rn_status rn_mem_reader_register(struct rn_mem *mem, unsigned *id)
{
	if (!mem || !id)
		return RN_ERR_INVALID_RNIC;
	for (unsigned i = 0; i < RN_MEM_MAX_READERS; i++) {
		uintptr_t none = 0;
		if (atomic_compare_exchange_strong(&mem->readers[i].owner, &none,
						   (uintptr_t)&rn_thread_marker)) {
			atomic_store(&mem->readers[i].epoch, atomic_load(&mem->epoch));
			*id = i;
			return RN_OK;
		}
	}
	return RN_ERR_NO_RESOURCES;
}

void rn_mem_reader_unregister(struct rn_mem *mem, unsigned id)
{
	if (!mem || id >= RN_MEM_MAX_READERS)
		return;
	/* release is enough going offline: a writer that reads 0 sees every access before it */
	atomic_store_explicit(&mem->readers[id].epoch, 0, memory_order_release);
	atomic_store_explicit(&mem->readers[id].owner, 0, memory_order_release);
}

/* seq_cst: the reader's accesses before this store happen before the writer that sees it, and
 * an epoch loaded after a writer's increment means the writer's INVALID publish is visible. */
void rn_mem_quiescent(struct rn_mem *mem, unsigned id)
{
	if (!mem || id >= RN_MEM_MAX_READERS)
		return;
	/* seq_cst store; the data path's first load of an entry word is seq_cst too, so a writer
	 * that did not see this store published its INVALID before our next lookup reads it */
	atomic_store(&mem->readers[id].epoch, atomic_load(&mem->epoch));
}

void rn_mem_reader_offline(struct rn_mem *mem, unsigned id)
{
	if (!mem || id >= RN_MEM_MAX_READERS)
		return;
	atomic_store(&mem->readers[id].epoch, 0);
}

void rn_mem_reader_online(struct rn_mem *mem, unsigned id)
{
	rn_mem_quiescent(mem, id);
}

uint64_t rn_mem_sync_start(struct rn_mem *mem)
{
	if (!mem)
		return 0;
	return atomic_fetch_add(&mem->epoch, 1) + 1;
}

bool rn_mem_sync_done(struct rn_mem *mem, uint64_t ticket)
{
	if (!mem)
		return true;
	for (unsigned i = 0; i < RN_MEM_MAX_READERS; i++) {
		uintptr_t owner = atomic_load(&mem->readers[i].owner);
		if (owner == 0 || owner == (uintptr_t)&rn_thread_marker)
			continue;
		uint64_t e = atomic_load(&mem->readers[i].epoch);
		if (e != 0 && e < ticket)
			return false;
	}
	return true;
}

void rn_mem_synchronize(struct rn_mem *mem)
{
	uint64_t t = rn_mem_sync_start(mem);
	while (!rn_mem_sync_done(mem, t)) {
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
}

/* ---- holders of references beyond a call ------------------------------------------------ */
static struct {
	pthread_mutex_t lock;
	struct {
		void (*drop)(void *arg);
		void *arg;
	} h[RN_MEM_HOLDERS];
	unsigned n;
} holders = { .lock = PTHREAD_MUTEX_INITIALIZER };

int rn_mem_holder_add(void (*drop)(void *arg), void *arg)
{
	int rc = -ENOSPC;

	pthread_mutex_lock(&holders.lock);
	if (holders.n < RN_MEM_HOLDERS) {
		holders.h[holders.n].drop = drop;
		holders.h[holders.n++].arg = arg;
		rc = 0;
	}
	pthread_mutex_unlock(&holders.lock);
	return rc;
}

void rn_mem_holder_del(void (*drop)(void *arg), void *arg)
{
	pthread_mutex_lock(&holders.lock);
	for (unsigned i = 0; i < holders.n; i++) {
		if (holders.h[i].drop == drop && holders.h[i].arg == arg) {
			holders.h[i] = holders.h[--holders.n];
			break;
		}
	}
	pthread_mutex_unlock(&holders.lock);
}

/* After the grace period of a deregistration: no transport reads the old memory once this
 * returns. */
void rn_mem_drop_refs(void)
{
	pthread_mutex_lock(&holders.lock);
	for (unsigned i = 0; i < holders.n; i++)
		holders.h[i].drop(holders.h[i].arg);
	pthread_mutex_unlock(&holders.lock);
}
