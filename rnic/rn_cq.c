/* CQ ring and completion channels.
 *
 * Concurrency (why it is shaped this way):
 * - head and tail are free-running 64-bit counters; slot = counter & mask. Producers serialise
 *   on plock (a spinlock held for one 40-byte copy), the consumer on clock. The two sides
 *   never share a lock: producers publish by storing tail, the consumer frees slots by
 *   storing head. An empty poll is a load of tail and head, no lock, no store.
 * - Resize and dropping or orphaning a destroyed QP's CQEs take clock then plock (the only
 *   place both are held), so the ring can be replaced while producers run; positions are
 *   kept (copy [head, tail) to the same counters in the new ring), so nothing is lost,
 *   duplicated or reordered.
 * - Sharing one lock with the producers would make every empty poll several times dearer
 *   and make busy-pollers contend with the data path.
 * - Notification is a Dekker pair: the producer stores tail then loads armed; the consumer
 *   stores armed (RMW) then loads tail, all seq_cst. Whichever runs second sees the other, so
 *   poll / arm / poll cannot miss a completion. Only producers pay the fence (one xchg). */
#include "rn_cq.h"

#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rn_sync.h"

#define RN_CACHELINE 64

struct rn_comp_channel {
	pthread_mutex_t lock;
	pthread_cond_t cond;       /* signalled on fire and on ack */
	int efd;
	struct rn_cq *first, *last; /* CQs with events not yet taken, oldest first */
	uint32_t ncq;              /* CQs using this channel */
};

struct rn_cq {
	/* read-mostly */
	struct rn_cqe *ring;       /* changed only with clock + plock held */
	uint64_t mask;             /* ring slots - 1 */
	uint32_t size;             /* usable entries (<= mask + 1) */
	uint32_t max_cqe;
	struct rn_comp_channel *ch;
	struct rn_evq *evq;
	void *context;
	struct rn_event_res evres;
	atomic_uint refs;

	alignas(RN_CACHELINE) atomic_int armed; /* RN_NOTIFY_* bits */
	atomic_uint feed_hint;     /* the device's: which feeder a poll tries first */
	atomic_int ovf_raised;     /* overflow event posted, consumer has not drained since */
	atomic_uint_fast64_t ovf_count;
	uint64_t *ovf_stat;        /* the device's cq_overruns, or NULL */

	alignas(RN_CACHELINE) pthread_spinlock_t plock;
	atomic_uint_fast64_t tail; /* next slot a producer fills */
	uint64_t head_seen;        /* producers' last view of head (<= head; under plock) */

	alignas(RN_CACHELINE) pthread_spinlock_t clock;
	atomic_uint_fast64_t head; /* next slot the consumer reads */

	/* guarded by ch->lock */
	struct rn_cq *ch_next;
	uint32_t ch_pending;       /* fired, not yet taken */
	uint32_t ch_unacked;       /* taken, not yet acked */
	int ch_queued;
};

static uint64_t roundup_pow2(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* The usable size for a request: a power of two (cheap masking), but never over the limit. */
static uint32_t cq_size_for(uint32_t min_cqe, uint32_t max_cqe)
{
	uint64_t p = roundup_pow2(min_cqe ? min_cqe : 1);

	return p > max_cqe ? max_cqe : (uint32_t)p;
}

static struct rn_cqe *ring_alloc(uint32_t size, uint64_t *mask)
{
	uint64_t slots = roundup_pow2(size);

	*mask = slots - 1;
	return calloc(slots, sizeof(struct rn_cqe));
}

static void channel_attach(struct rn_comp_channel *ch)
{
	pthread_mutex_lock(&ch->lock);
	ch->ncq++;
	pthread_mutex_unlock(&ch->lock);
}

static void cq_free(struct rn_cq *cq)
{
	pthread_spin_destroy(&cq->plock);
	pthread_spin_destroy(&cq->clock);
	free(cq->ring);
	free(cq);
}

enum rn_status rn_cq_create(const struct rn_cq_attr *attr, struct rn_cq **out,
			    uint32_t *allocated)
{
	struct rn_cq *cq;

	*out = NULL;
	if (attr->min_cqe > attr->max_cqe)
		return RN_ERR_CQ_TOO_BIG;
	cq = aligned_alloc(RN_CACHELINE, (sizeof(*cq) + RN_CACHELINE - 1) & ~(size_t)(RN_CACHELINE - 1));
	if (!cq)
		return RN_ERR_NO_RESOURCES;
	memset(cq, 0, sizeof(*cq));
	cq->size = cq_size_for(attr->min_cqe, attr->max_cqe);
	cq->ring = ring_alloc(cq->size, &cq->mask);
	if (!cq->ring) {
		free(cq);
		return RN_ERR_NO_RESOURCES;
	}
	pthread_spin_init(&cq->plock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&cq->clock, PTHREAD_PROCESS_PRIVATE);
	cq->max_cqe = attr->max_cqe;
	cq->ch = attr->channel;
	cq->evq = attr->evq;
	cq->context = attr->context;
	cq->ovf_stat = attr->overruns;
	rn_event_res_init(&cq->evres, RN_RES_CQ, cq, attr->id);
	if (cq->ch)
		channel_attach(cq->ch);
	*out = cq;
	if (allocated)
		*allocated = cq->size;
	return RN_OK;
}

/* Remove cq from its channel's pending list; ch->lock held. */
static void channel_unlink_locked(struct rn_comp_channel *ch, struct rn_cq *cq)
{
	struct rn_cq **pp = &ch->first, *prev = NULL;

	if (!cq->ch_queued)
		return;
	while (*pp != cq) {
		prev = *pp;
		pp = &(*pp)->ch_next;
	}
	*pp = cq->ch_next;
	if (ch->last == cq)
		ch->last = prev;
	cq->ch_next = NULL;
	cq->ch_queued = 0;
	cq->ch_pending = 0;
	if (!ch->first)
		rn_efd_clear(ch->efd);
}

/* Drop untaken channel events, wait for taken ones to be acked, detach. */
static void channel_detach(struct rn_comp_channel *ch, struct rn_cq *cq)
{
	pthread_mutex_lock(&ch->lock);
	channel_unlink_locked(ch, cq);
	while (cq->ch_unacked)
		pthread_cond_wait(&ch->cond, &ch->lock);
	ch->ncq--;
	pthread_mutex_unlock(&ch->lock);
}

enum rn_status rn_cq_destroy(struct rn_cq *cq)
{
	if (!cq)
		return RN_ERR_INVALID_CQ;
	if (atomic_load(&cq->refs))
		return RN_ERR_CQ_IN_USE;
	if (cq->ch)
		channel_detach(cq->ch, cq);
	if (cq->evq) {
		rn_evq_purge(cq->evq, &cq->evres);
		rn_evq_wait_acked(cq->evq, &cq->evres, -1);
	}
	cq_free(cq);
	return RN_OK;
}

enum rn_status rn_cq_query(struct rn_cq *cq, uint32_t *size, struct rn_comp_channel **channel)
{
	if (!cq)
		return RN_ERR_INVALID_CQ;
	if (size) {
		pthread_spin_lock(&cq->clock);
		*size = cq->size;
		pthread_spin_unlock(&cq->clock);
	}
	if (channel)
		*channel = cq->ch;
	return RN_OK;
}

/* Both locks held: move [head, tail) into the new ring at the same counters. */
static void cq_swap_ring_locked(struct rn_cq *cq, struct rn_cqe *nring, uint64_t nmask,
				uint32_t nsize)
{
	uint64_t h = atomic_load_explicit(&cq->head, memory_order_relaxed);
	uint64_t t = atomic_load_explicit(&cq->tail, memory_order_relaxed);
	struct rn_cqe *old = cq->ring;

	for (uint64_t i = h; i != t; i++)
		nring[i & nmask] = old[i & cq->mask];
	cq->ring = nring;
	cq->mask = nmask;
	cq->size = nsize;
}

static void cq_lock_all(struct rn_cq *cq)
{
	pthread_spin_lock(&cq->clock);
	pthread_spin_lock(&cq->plock);
}

static void cq_unlock_all(struct rn_cq *cq)
{
	pthread_spin_unlock(&cq->plock);
	pthread_spin_unlock(&cq->clock);
}

enum rn_status rn_cq_resize(struct rn_cq *cq, uint32_t min_cqe, uint32_t *allocated)
{
	uint32_t nsize;
	uint64_t nmask, queued;
	struct rn_cqe *nring;

	if (!cq)
		return RN_ERR_INVALID_CQ;
	if (min_cqe > cq->max_cqe)
		return RN_ERR_CQ_TOO_BIG;
	nsize = cq_size_for(min_cqe, cq->max_cqe);
	/* Allocate outside the locks: producers spin on plock while we hold it. */
	nring = ring_alloc(nsize, &nmask);
	if (!nring)
		return RN_ERR_NO_RESOURCES;
	cq_lock_all(cq);
	queued = atomic_load_explicit(&cq->tail, memory_order_relaxed) -
		 atomic_load_explicit(&cq->head, memory_order_relaxed);
	if (queued > nsize) {
		cq_unlock_all(cq);
		free(nring);
		return RN_ERR_SHRINK_FAILED;
	}
	struct rn_cqe *old = cq->ring;

	cq_swap_ring_locked(cq, nring, nmask, nsize);
	cq_unlock_all(cq);
	free(old);
	if (allocated)
		*allocated = nsize;
	return RN_OK;
}

/* After the consumer freed slots, a later overflow is a new episode worth an event. */
static void cq_overflow_rearm(struct rn_cq *cq)
{
	if (atomic_load_explicit(&cq->ovf_raised, memory_order_relaxed))
		atomic_store_explicit(&cq->ovf_raised, 0, memory_order_relaxed);
}

void rn_sq_retire_init(struct rn_sq_retire *r, uint32_t v)
{
	atomic_init(&r->retired, v);
}

void rn_sq_retire_to(struct rn_sq_retire *r, uint32_t upto)
{
	unsigned cur = atomic_load_explicit(&r->retired, memory_order_relaxed);

	/* CAS: the QP itself may retire everything (entering Idle) while a poller advances. */
	while ((int32_t)(upto - cur) > 0 &&
	       !atomic_compare_exchange_weak_explicit(&r->retired, &cur, upto,
						      memory_order_release, memory_order_relaxed))
		;
}

uint32_t rn_sq_retired(struct rn_sq_retire *r)
{
	return atomic_load_explicit(&r->retired, memory_order_acquire);
}

/* clock held (see rn_sq_retire in rn_cq.h). SQ CQEs of one QP are in post order, so only the
 * last of a run of the same SQ needs the atomic update. */
static void cq_retire_sq(const struct rn_cqe *out, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		struct rn_sq_retire *r = out[i].sq;

		if (r && (i + 1 == n || out[i + 1].sq != r))
			rn_sq_retire_to(r, out[i].sq_seq + 1);
	}
}

enum rn_status rn_cq_poll(struct rn_cq *cq, struct rn_cqe *out, uint32_t max, uint32_t *got)
{
	uint64_t h, t, n;

	*got = 0;
	if (!cq)
		return RN_ERR_INVALID_CQ;
	if (!max)
		return RN_ERR_INVALID_MODIFIER;
	/* Lock-free empty check; seq_cst pairs with the producer's tail store (see top). */
	if (atomic_load(&cq->tail) == atomic_load_explicit(&cq->head, memory_order_relaxed))
		return RN_ERR_CQ_EMPTY;
	pthread_spin_lock(&cq->clock);
	h = atomic_load_explicit(&cq->head, memory_order_relaxed);
	t = atomic_load(&cq->tail);
	n = t - h < max ? t - h : max;
	for (uint64_t i = 0; i < n; i++)
		out[i] = cq->ring[(h + i) & cq->mask];
	cq_retire_sq(out, n);
	atomic_store_explicit(&cq->head, h + n, memory_order_release);
	pthread_spin_unlock(&cq->clock);
	if (!n)
		return RN_ERR_CQ_EMPTY;
	cq_overflow_rearm(cq);
	*got = (uint32_t)n;
	return RN_OK;
}

enum rn_status rn_cq_req_notify(struct rn_cq *cq, enum rn_notify type)
{
	if (!cq)
		return RN_ERR_INVALID_CQ;
	if (type != RN_NOTIFY_NEXT && type != RN_NOTIFY_SOLICITED)
		return RN_ERR_INVALID_NOTIFY_TYPE;
	/* OR, not store: several arms before the event merge, and "next" wins (§3.8). */
	atomic_fetch_or(&cq->armed, (int)type);
	return RN_OK;
}

/* §3.8: "next" fires on any completion; "solicited" on a solicited Receive or any error
 * completion (Flushed included: it is a completion in error). */
static int cqe_qualifies(int armed, const struct rn_cqe *e)
{
	if (armed & RN_NOTIFY_NEXT)
		return 1;
	return (armed & RN_NOTIFY_SOLICITED) &&
	       (e->status != RN_WC_SUCCESS || (e->flags & RN_CQE_F_SOLICITED));
}

/* Queue one event for cq on its channel; raises the fd on the empty -> pending edge. */
static void channel_fire(struct rn_comp_channel *ch, struct rn_cq *cq)
{
	pthread_mutex_lock(&ch->lock);
	cq->ch_pending++;
	if (!cq->ch_queued) {
		cq->ch_queued = 1;
		cq->ch_next = NULL;
		if (ch->last)
			ch->last->ch_next = cq;
		else
			ch->first = cq;
		ch->last = cq;
		if (ch->first == cq)
			rn_efd_raise(ch->efd);
	}
	pthread_cond_broadcast(&ch->cond);
	pthread_mutex_unlock(&ch->lock);
}

/* After a push: disarm and fire if this CQE qualifies. The CAS makes the event one-shot even
 * when several producers race here. */
static void cq_maybe_notify(struct rn_cq *cq, const struct rn_cqe *e)
{
	int a = atomic_load(&cq->armed);

	while (a && cqe_qualifies(a, e)) {
		if (atomic_compare_exchange_weak(&cq->armed, &a, 0)) {
			if (cq->ch)
				channel_fire(cq->ch, cq);
			return;
		}
	}
}

static void cq_overflow(struct rn_cq *cq)
{
	atomic_fetch_add_explicit(&cq->ovf_count, 1, memory_order_relaxed);
	if (cq->ovf_stat)
		__atomic_fetch_add(cq->ovf_stat, 1, __ATOMIC_RELAXED);
	if (!atomic_exchange(&cq->ovf_raised, 1) && cq->evq)
		rn_evq_post(cq->evq, RN_AE_CQ_OVERFLOW, &cq->evres);
}

enum rn_cq_push_result rn_cq_push(struct rn_cq *cq, const struct rn_cqe *e)
{
	uint64_t t, h;

	pthread_spin_lock(&cq->plock);
	t = atomic_load_explicit(&cq->tail, memory_order_relaxed);
	/* Read the consumer's cache line only when the CQ looks full: head only grows, so a
	 * stale head_seen errs towards "full" and is then refreshed. */
	h = cq->head_seen;
	if (t - h >= cq->size)
		h = cq->head_seen = atomic_load_explicit(&cq->head, memory_order_acquire);
	if (t - h >= cq->size) {
		pthread_spin_unlock(&cq->plock);
		cq_overflow(cq);
		return RN_CQ_PUSH_OVERFLOW;
	}
	cq->ring[t & cq->mask] = *e;
	atomic_store(&cq->tail, t + 1); /* seq_cst: publishes the slot and orders the armed load */
	pthread_spin_unlock(&cq->plock);
	cq_maybe_notify(cq, e);
	return RN_CQ_PUSH_OK;
}

uint32_t rn_cq_purge_qp(struct rn_cq *cq, uint32_t qp_id)
{
	uint64_t h, t, w;

	cq_lock_all(cq);
	h = atomic_load_explicit(&cq->head, memory_order_relaxed);
	t = atomic_load_explicit(&cq->tail, memory_order_relaxed);
	/* Compact towards the tail, so tail stays put and head only moves forward. */
	w = t;
	for (uint64_t i = t; i != h; i--) {
		struct rn_cqe *e = &cq->ring[(i - 1) & cq->mask];

		if (e->qp_id != qp_id)
			cq->ring[--w & cq->mask] = *e;
	}
	atomic_store_explicit(&cq->head, w, memory_order_release);
	cq_unlock_all(cq);
	return (uint32_t)(w - h);
}

uint32_t rn_cq_orphan_qp(struct rn_cq *cq, uint32_t qp_id)
{
	uint32_t n = 0;

	cq_lock_all(cq);
	uint64_t h = atomic_load_explicit(&cq->head, memory_order_relaxed);
	uint64_t t = atomic_load_explicit(&cq->tail, memory_order_relaxed);
	for (uint64_t i = h; i != t; i++) {
		struct rn_cqe *e = &cq->ring[i & cq->mask];

		if (e->qp_id == qp_id) {
			e->sq = NULL;   /* the QP's retire counter goes with it */
			n++;
		}
	}
	cq_unlock_all(cq);
	return n;
}

void rn_cq_ref(struct rn_cq *cq)
{
	atomic_fetch_add(&cq->refs, 1);
}

void rn_cq_unref(struct rn_cq *cq)
{
	atomic_fetch_sub(&cq->refs, 1);
}

uint32_t rn_cq_count(struct rn_cq *cq)
{
	uint64_t h = atomic_load(&cq->head);

	return (uint32_t)(atomic_load(&cq->tail) - h);
}

uint64_t rn_cq_overflows(struct rn_cq *cq)
{
	return atomic_load_explicit(&cq->ovf_count, memory_order_relaxed);
}

void rn_cq_set_feed_hint(struct rn_cq *cq, unsigned hint)
{
	/* written only when it changes: a consumer posting to one QP keeps the line clean */
	if (atomic_load_explicit(&cq->feed_hint, memory_order_relaxed) != hint)
		atomic_store_explicit(&cq->feed_hint, hint, memory_order_relaxed);
}

unsigned rn_cq_feed_hint(const struct rn_cq *cq)
{
	return atomic_load_explicit(&((struct rn_cq *)cq)->feed_hint, memory_order_relaxed);
}

bool rn_cq_armed(const struct rn_cq *cq)
{
	return atomic_load_explicit((atomic_int *)&cq->armed, memory_order_relaxed) != 0;
}

void *rn_cq_context(const struct rn_cq *cq)
{
	return cq->context;
}

int rn_comp_channel_create(struct rn_comp_channel **out)
{
	struct rn_comp_channel *ch = calloc(1, sizeof(*ch));

	*out = NULL;
	if (!ch)
		return ENOMEM;
	ch->efd = eventfd(0, EFD_CLOEXEC);
	if (ch->efd < 0 || pthread_mutex_init(&ch->lock, NULL)) {
		if (ch->efd >= 0)
			close(ch->efd);
		free(ch);
		return ENOMEM;
	}
	if (rn_cond_init(&ch->cond)) {
		pthread_mutex_destroy(&ch->lock);
		close(ch->efd);
		free(ch);
		return ENOMEM;
	}
	*out = ch;
	return 0;
}

int rn_comp_channel_destroy(struct rn_comp_channel *ch)
{
	uint32_t n;

	if (!ch)
		return 0;
	pthread_mutex_lock(&ch->lock);
	n = ch->ncq;
	pthread_mutex_unlock(&ch->lock);
	if (n)
		return EBUSY;
	pthread_cond_destroy(&ch->cond);
	pthread_mutex_destroy(&ch->lock);
	close(ch->efd);
	free(ch);
	return 0;
}

int rn_comp_channel_fd(const struct rn_comp_channel *ch)
{
	return ch->efd;
}

/* Take one event of the first pending CQ; a CQ with more pending goes to the back so one
 * busy CQ cannot starve the others sharing the channel. ch->lock held, list non-empty. */
static struct rn_cq *channel_take_locked(struct rn_comp_channel *ch)
{
	struct rn_cq *cq = ch->first;

	ch->first = cq->ch_next;
	if (!ch->first)
		ch->last = NULL;
	cq->ch_next = NULL;
	cq->ch_queued = 0;
	cq->ch_unacked++;
	if (--cq->ch_pending) {
		cq->ch_queued = 1;
		if (ch->last)
			ch->last->ch_next = cq;
		else
			ch->first = cq;
		ch->last = cq;
	}
	if (!ch->first)
		rn_efd_clear(ch->efd);
	return cq;
}

int rn_comp_channel_get(struct rn_comp_channel *ch, struct rn_cq **cq, void **context,
			int timeout_ms)
{
	struct timespec dl = { 0, 0 };
	struct rn_cq *got = NULL;
	int rc = 0;

	if (timeout_ms > 0)
		dl = rn_deadline(timeout_ms);
	/* sleep in poll() on the eventfd, not on ch->cond: a signal must end the wait with
	 * EINTR, as it ends libibverbs' read() of the channel fd */
	pthread_mutex_lock(&ch->lock);
	while (!ch->first && rc == 0) {
		pthread_mutex_unlock(&ch->lock);
		rc = rn_efd_wait(ch->efd, timeout_ms, &dl);
		pthread_mutex_lock(&ch->lock);
	}
	if (ch->first)
		got = channel_take_locked(ch);
	pthread_mutex_unlock(&ch->lock);
	if (!got)
		return rc == EINTR ? EINTR : EAGAIN;
	*cq = got;
	if (context)
		*context = got->context;
	return 0;
}

void rn_cq_ack_events(struct rn_cq *cq, uint32_t n)
{
	struct rn_comp_channel *ch = cq->ch;

	if (!ch)
		return;
	pthread_mutex_lock(&ch->lock);
	cq->ch_unacked -= n < cq->ch_unacked ? n : cq->ch_unacked;
	pthread_cond_broadcast(&ch->cond);
	pthread_mutex_unlock(&ch->lock);
}

uint32_t rn_cq_unacked_events(struct rn_cq *cq)
{
	uint32_t n = 0;

	if (cq->ch) {
		pthread_mutex_lock(&cq->ch->lock);
		n = cq->ch_unacked;
		pthread_mutex_unlock(&cq->ch->lock);
	}
	return n;
}
