/* Receive WQE ring, S-RQ and QP RQ Limit. */
#include "rn_srq.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- rn_rq ---- */

/* A slot is this header followed by max_sge SGEs; only num_sge of them are meaningful. */
struct rq_slot_hdr {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t pad;
};

struct rn_rq {
	pthread_spinlock_t lock;   /* guards everything below */
	uint32_t max_wr, max_sge;
	uint32_t head;             /* slot of the oldest available WQE */
	uint32_t avail;            /* posted, not taken */
	uint32_t inflight;         /* taken, not retired; still occupy the queue (§6.3.5) */
	uint32_t limit;
	int armed;
	bool open;                 /* rn_rq_set_open */
	size_t stride;
	unsigned char *slots;
};

static size_t rq_stride(uint32_t max_sge)
{
	return sizeof(struct rq_slot_hdr) + (size_t)max_sge * sizeof(struct rn_rq_sge);
}

enum rn_status rn_rq_create(uint32_t max_wr, uint32_t max_sge, struct rn_rq **out)
{
	struct rn_rq *rq;

	*out = NULL;
	if (max_sge > RN_RQ_MAX_SGE)
		return RN_ERR_RQ_SGES_EXCEED;
	rq = calloc(1, sizeof(*rq));
	if (!rq)
		return RN_ERR_NO_RESOURCES;
	rq->max_wr = max_wr ? max_wr : 1;
	rq->max_sge = max_sge ? max_sge : 1;
	rq->stride = rq_stride(rq->max_sge);
	rq->slots = calloc(rq->max_wr, rq->stride);
	if (!rq->slots) {
		free(rq);
		return RN_ERR_NO_RESOURCES;
	}
	pthread_spin_init(&rq->lock, PTHREAD_PROCESS_PRIVATE);
	rq->open = true;
	*out = rq;
	return RN_OK;
}

void rn_rq_destroy(struct rn_rq *rq)
{
	if (!rq)
		return;
	pthread_spin_destroy(&rq->lock);
	free(rq->slots);
	free(rq);
}

static unsigned char *rq_slot(struct rn_rq *rq, uint32_t i)
{
	return rq->slots + (size_t)(i % rq->max_wr) * rq->stride;
}

/* Immediate checks of one WR against this ring; lock held (max_sge never changes). */
static enum rn_status rq_check_wr(const struct rn_rq *rq, const struct rn_recv_wr *wr)
{
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge)
		return RN_ERR_INVALID_SGL_LENGTH;
	if (wr->num_sge > 0 && !wr->sg_list)
		return RN_ERR_INVALID_SGL_FORMAT;
	if (rq->avail + rq->inflight >= rq->max_wr)
		return RN_ERR_TOO_MANY_WRS;
	return RN_OK;
}

static void rq_store_locked(struct rn_rq *rq, const struct rn_recv_wr *wr)
{
	unsigned char *s = rq_slot(rq, rq->head + rq->avail);
	struct rq_slot_hdr h = { .wr_id = wr->wr_id, .num_sge = (uint32_t)wr->num_sge };

	memcpy(s, &h, sizeof(h));
	if (wr->num_sge)
		memcpy(s + sizeof(h), wr->sg_list, (size_t)wr->num_sge * sizeof(struct rn_rq_sge));
	rq->avail++;
}

/* The WRs in list order up to the first bad one; lock held. */
static enum rn_status rq_post_locked(struct rn_rq *rq, const struct rn_recv_wr *wr,
				     const struct rn_recv_wr **bad, uint32_t *posted)
{
	enum rn_status rc = RN_OK;
	uint32_t n = 0;

	for (; wr; wr = wr->next, n++) {
		rc = rq_check_wr(rq, wr);
		if (rc)
			break;
		rq_store_locked(rq, wr);
	}
	if (bad)
		*bad = rc ? wr : NULL;
	if (posted)
		*posted = n;
	return rc;
}

enum rn_status rn_rq_post(struct rn_rq *rq, const struct rn_recv_wr *wr,
			  const struct rn_recv_wr **bad, uint32_t *posted)
{
	enum rn_status rc;

	pthread_spin_lock(&rq->lock);
	rc = rq_post_locked(rq, wr, bad, posted);
	pthread_spin_unlock(&rq->lock);
	return rc;
}

void rn_rq_set_open(struct rn_rq *rq, bool open)
{
	pthread_spin_lock(&rq->lock);
	rq->open = open;
	pthread_spin_unlock(&rq->lock);
}

bool rn_rq_post_if_open(struct rn_rq *rq, const struct rn_recv_wr *wr,
			const struct rn_recv_wr **bad, uint32_t *posted, enum rn_status *st)
{
	bool open;

	pthread_spin_lock(&rq->lock);
	open = rq->open;
	if (open)
		*st = rq_post_locked(rq, wr, bad, posted);
	pthread_spin_unlock(&rq->lock);
	return open;
}

enum rn_rq_take_result rn_rq_take(struct rn_rq *rq, struct rn_rqe *out)
{
	struct rq_slot_hdr h;
	const unsigned char *s;
	int fired;

	pthread_spin_lock(&rq->lock);
	if (!rq->avail) {
		pthread_spin_unlock(&rq->lock);
		return RN_RQ_EMPTY;
	}
	s = rq_slot(rq, rq->head);
	memcpy(&h, s, sizeof(h));
	out->wr_id = h.wr_id;
	out->num_sge = h.num_sge;
	memcpy(out->sge, s + sizeof(h), (size_t)h.num_sge * sizeof(struct rn_rq_sge));
	rq->head = (rq->head + 1) % rq->max_wr;
	rq->avail--;
	rq->inflight++;
	/* §6.3.8: fires when the available WQEs drop below the limit; one-shot. */
	fired = rq->armed && rq->avail < rq->limit;
	if (fired)
		rq->armed = 0;
	pthread_spin_unlock(&rq->lock);
	return fired ? RN_RQ_TAKEN_LIMIT : RN_RQ_TAKEN;
}

void rn_rq_retire(struct rn_rq *rq, uint32_t n)
{
	pthread_spin_lock(&rq->lock);
	rq->inflight -= n < rq->inflight ? n : rq->inflight;
	pthread_spin_unlock(&rq->lock);
}

enum rn_status rn_rq_resize(struct rn_rq *rq, uint32_t max_wr)
{
	unsigned char *nslots, *old;

	max_wr = max_wr ? max_wr : 1;
	/* Allocate before locking: takers spin while we hold the lock. */
	nslots = calloc(max_wr, rq->stride);
	if (!nslots)
		return RN_ERR_NO_RESOURCES;
	pthread_spin_lock(&rq->lock);
	if (rq->avail + rq->inflight > max_wr) {
		pthread_spin_unlock(&rq->lock);
		free(nslots);
		return RN_ERR_SHRINK_FAILED;
	}
	for (uint32_t i = 0; i < rq->avail; i++)
		memcpy(nslots + (size_t)i * rq->stride, rq_slot(rq, rq->head + i), rq->stride);
	old = rq->slots;
	rq->slots = nslots;
	rq->head = 0;
	rq->max_wr = max_wr;
	pthread_spin_unlock(&rq->lock);
	free(old);
	return RN_OK;
}

void rn_rq_set_limit(struct rn_rq *rq, uint32_t limit, int arm)
{
	pthread_spin_lock(&rq->lock);
	rq->limit = limit;
	rq->armed = arm && limit > 0;
	pthread_spin_unlock(&rq->lock);
}

void rn_rq_counts(struct rn_rq *rq, uint32_t *avail, uint32_t *in_progress)
{
	pthread_spin_lock(&rq->lock);
	if (avail)
		*avail = rq->avail;
	if (in_progress)
		*in_progress = rq->inflight;
	pthread_spin_unlock(&rq->lock);
}

uint32_t rn_rq_max_wr(struct rn_rq *rq)
{
	uint32_t n;

	pthread_spin_lock(&rq->lock);
	n = rq->max_wr;
	pthread_spin_unlock(&rq->lock);
	return n;
}

uint32_t rn_rq_max_sge(const struct rn_rq *rq)
{
	return rq->max_sge;
}

void rn_rq_limit_state(struct rn_rq *rq, uint32_t *limit, int *armed)
{
	pthread_spin_lock(&rq->lock);
	if (limit)
		*limit = rq->limit;
	if (armed)
		*armed = rq->armed;
	pthread_spin_unlock(&rq->lock);
}

/* ---- QP RQ Limit ---- */

void rn_rq_limit_init(struct rn_rq_limit *l, uint32_t limit, struct rn_evq *evq,
		      struct rn_event_res *qp_res)
{
	atomic_init(&l->in_progress, 0);
	atomic_init(&l->limit, limit);
	atomic_init(&l->armed, limit > 0);
	l->evq = evq;
	l->qp_res = qp_res;
}

void rn_rq_limit_set(struct rn_rq_limit *l, uint32_t limit)
{
	atomic_store(&l->limit, limit);
	atomic_store(&l->armed, limit > 0);
}

int rn_rq_limit_armed(const struct rn_rq_limit *l)
{
	return atomic_load(&l->armed);
}

/* §6.3.8: fires once when the QP's messages in progress exceed its limit. */
static void rq_limit_taken(struct rn_rq_limit *l)
{
	uint32_t n = atomic_fetch_add(&l->in_progress, 1) + 1;
	int one = 1;

	if (atomic_load(&l->armed) && n > atomic_load(&l->limit) &&
	    atomic_compare_exchange_strong(&l->armed, &one, 0) && l->evq)
		rn_evq_post(l->evq, RN_AE_QP_RQ_LIMIT, l->qp_res);
}

/* ---- S-RQ ---- */

struct rn_srq {
	struct rn_rq *rq;
	pthread_mutex_t mod_lock;  /* serialises Modify / Query against each other */
	uint32_t pd;
	uint32_t dev_max_wr;
	struct rn_evq *evq;
	void *context;
	struct rn_event_res evres;
	atomic_uint refs;
};

static uint32_t dev_sge_cap(uint32_t dev_max_sge)
{
	return dev_max_sge < RN_RQ_MAX_SGE ? dev_max_sge : RN_RQ_MAX_SGE;
}

static enum rn_status srq_check_create(const struct rn_srq_attr *a)
{
	if (a->max_wr > a->dev_max_wr)
		return RN_ERR_RQ_WRS_EXCEED;
	if (a->max_sge > dev_sge_cap(a->dev_max_sge))
		return RN_ERR_RQ_SGES_EXCEED;
	if (a->limit > (a->max_wr ? a->max_wr : 1))
		return RN_ERR_SRQ_LIMIT_RANGE;
	return RN_OK;
}

enum rn_status rn_srq_create(const struct rn_srq_attr *attr, struct rn_srq **out,
			     uint32_t *alloc_wr, uint32_t *alloc_sge)
{
	enum rn_status rc = srq_check_create(attr);
	struct rn_srq *srq;

	*out = NULL;
	if (rc)
		return rc;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return RN_ERR_NO_RESOURCES;
	rc = rn_rq_create(attr->max_wr, attr->max_sge, &srq->rq);
	if (rc || pthread_mutex_init(&srq->mod_lock, NULL)) {
		rn_rq_destroy(srq->rq);
		free(srq);
		return rc ? rc : RN_ERR_NO_RESOURCES;
	}
	srq->pd = attr->pd;
	srq->dev_max_wr = attr->dev_max_wr;
	srq->evq = attr->evq;
	srq->context = attr->context;
	rn_event_res_init(&srq->evres, RN_RES_SRQ, srq, attr->id);
	rn_rq_set_limit(srq->rq, attr->limit, 1);   /* armed at create when > 0 (§6.3.8) */
	if (alloc_wr)
		*alloc_wr = rn_rq_max_wr(srq->rq);
	if (alloc_sge)
		*alloc_sge = rn_rq_max_sge(srq->rq);
	*out = srq;
	return RN_OK;
}

enum rn_status rn_srq_destroy(struct rn_srq *srq)
{
	if (!srq)
		return RN_ERR_INVALID_SRQ;
	if (atomic_load(&srq->refs))
		return RN_ERR_SRQ_IN_USE;
	if (srq->evq) {
		rn_evq_purge(srq->evq, &srq->evres);
		rn_evq_wait_acked(srq->evq, &srq->evres, -1);
	}
	pthread_mutex_destroy(&srq->mod_lock);
	rn_rq_destroy(srq->rq);
	free(srq);
	return RN_OK;
}

enum rn_status rn_srq_query(struct rn_srq *srq, struct rn_srq_info *info)
{
	if (!srq)
		return RN_ERR_INVALID_SRQ;
	pthread_mutex_lock(&srq->mod_lock);
	info->max_wr = rn_rq_max_wr(srq->rq);
	info->max_sge = rn_rq_max_sge(srq->rq);
	info->pd = srq->pd;
	rn_rq_limit_state(srq->rq, &info->limit, &info->armed);
	pthread_mutex_unlock(&srq->mod_lock);
	return RN_OK;
}

/* All immediate checks of Modify S-RQ, before anything changes (§8.3.1). */
static enum rn_status srq_check_modify(struct rn_srq *srq, uint32_t mask, uint32_t max_wr,
				       uint32_t limit)
{
	uint32_t cur_limit, new_max = rn_rq_max_wr(srq->rq);
	int armed;

	if (mask & ~(uint32_t)(RN_SRQ_MOD_MAX_WR | RN_SRQ_MOD_LIMIT | RN_SRQ_MOD_ARM))
		return RN_ERR_INVALID_MODIFIER;
	rn_rq_limit_state(srq->rq, &cur_limit, &armed);
	if (mask & RN_SRQ_MOD_MAX_WR) {
		if (max_wr > srq->dev_max_wr)
			return RN_ERR_RQ_WRS_EXCEED;
		new_max = max_wr ? max_wr : 1;
	}
	if (mask & RN_SRQ_MOD_LIMIT) {
		if (limit > new_max)
			return RN_ERR_SRQ_LIMIT_RANGE;
		return RN_OK;
	}
	/* Limit unchanged: shrinking under an armed limit is an invalid modifier (§6.3.8);
	 * arming a stale limit above the (new) size is out of range. */
	if ((mask & RN_SRQ_MOD_MAX_WR) && armed && cur_limit > new_max)
		return RN_ERR_INVALID_MODIFIER;
	if ((mask & RN_SRQ_MOD_ARM) && cur_limit > new_max)
		return RN_ERR_SRQ_LIMIT_RANGE;
	return RN_OK;
}

/* Apply the limit part of a validated Modify: a new value keeps the armed state unless ARM
 * is asked; ARM re-arms (re-arming an armed limit is allowed). */
static void srq_apply_limit(struct rn_srq *srq, uint32_t mask, uint32_t limit)
{
	uint32_t cur;
	int armed;

	rn_rq_limit_state(srq->rq, &cur, &armed);
	if (mask & RN_SRQ_MOD_LIMIT)
		cur = limit;
	if (mask & RN_SRQ_MOD_ARM)
		armed = 1;
	rn_rq_set_limit(srq->rq, cur, armed);
}

enum rn_status rn_srq_modify(struct rn_srq *srq, uint32_t mask, uint32_t max_wr,
			     uint32_t limit, uint32_t *alloc_wr)
{
	enum rn_status rc;

	if (!srq)
		return RN_ERR_INVALID_SRQ;
	pthread_mutex_lock(&srq->mod_lock);
	rc = srq_check_modify(srq, mask, max_wr, limit);
	if (!rc && (mask & RN_SRQ_MOD_MAX_WR))
		rc = rn_rq_resize(srq->rq, max_wr);   /* atomic: SHRINK_FAILED leaves it as is */
	if (!rc)
		srq_apply_limit(srq, mask, limit);
	if (alloc_wr)
		*alloc_wr = rn_rq_max_wr(srq->rq);
	pthread_mutex_unlock(&srq->mod_lock);
	return rc;
}

enum rn_status rn_srq_post(struct rn_srq *srq, const struct rn_recv_wr *wr,
			   const struct rn_recv_wr **bad, uint32_t *posted)
{
	if (!srq) {
		if (bad)
			*bad = wr;
		if (posted)
			*posted = 0;
		return RN_ERR_INVALID_SRQ;
	}
	return rn_rq_post(srq->rq, wr, bad, posted);
}

int rn_srq_take(struct rn_srq *srq, struct rn_rq_limit *qp_lim, struct rn_rqe *out)
{
	enum rn_rq_take_result r = rn_rq_take(srq->rq, out);

	if (r == RN_RQ_EMPTY)
		return 0;
	/* Events are posted after the ring lock is dropped; the one-shot decision was made
	 * under it, so exactly one taker posts. */
	if (r == RN_RQ_TAKEN_LIMIT && srq->evq)
		rn_evq_post(srq->evq, RN_AE_SRQ_LIMIT, &srq->evres);
	if (qp_lim)
		rq_limit_taken(qp_lim);
	return 1;
}

void rn_srq_retire(struct rn_srq *srq, struct rn_rq_limit *qp_lim)
{
	rn_rq_retire(srq->rq, 1);
	if (qp_lim)
		atomic_fetch_sub(&qp_lim->in_progress, 1);
}

enum rn_status rn_srq_check_qp_limit(struct rn_srq *srq, uint32_t limit)
{
	if (!srq)
		return RN_ERR_INVALID_SRQ;
	return limit > rn_rq_max_wr(srq->rq) ? RN_ERR_RQ_LIMIT_RANGE : RN_OK;
}

void rn_srq_ref(struct rn_srq *srq)
{
	atomic_fetch_add(&srq->refs, 1);
}

void rn_srq_unref(struct rn_srq *srq)
{
	atomic_fetch_sub(&srq->refs, 1);
}

uint32_t rn_srq_pd(const struct rn_srq *srq)
{
	return srq->pd;
}

void *rn_srq_context(const struct rn_srq *srq)
{
	return srq->context;
}

void rn_srq_counts(struct rn_srq *srq, uint32_t *avail, uint32_t *in_progress)
{
	rn_rq_counts(srq->rq, avail, in_progress);
}
