/* Async event queue: a mutex-guarded ring (events are rare; producers are any thread),
 * a condvar for blocking gets, and an eventfd mirroring "ring non-empty" for poll/epoll. */
#include "rn_event.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "rn_sync.h"

struct rn_evq_slot {
	enum rn_event_id id;
	struct rn_event_res *res;
};

struct rn_evq {
	pthread_mutex_t lock;
	pthread_cond_t cond;     /* signalled on post and on ack */
	int efd;
	uint32_t depth;
	uint32_t head;           /* index of the oldest event */
	uint32_t count;
	uint32_t dropped_since;  /* dropped since the last get; reported in-band */
	uint64_t dropped_total;
	struct rn_evq_slot *ring;
};

static const char *const rn_event_names[RN_AE_COUNT] = {
	[RN_AE_NONE] = "none",
	[RN_AE_LLP_CLOSE_COMPLETE] = "LLP Close Complete",
	[RN_AE_TERMINATE_RECEIVED] = "Terminate Message Received",
	[RN_AE_LLP_CONN_RESET] = "LLP Connection Reset",
	[RN_AE_LLP_CONN_LOST] = "LLP Connection Lost",
	[RN_AE_LLP_SEGMENT_SIZE] = "LLP Integrity Error: Segment size invalid",
	[RN_AE_LLP_INVALID_CRC] = "LLP Integrity Error: Invalid CRC",
	[RN_AE_LLP_BAD_FPDU] = "LLP Integrity Error: Bad FPDU",
	[RN_AE_REM_INVALID_DDP_VERSION] = "Remote Operation Error: Invalid DDP version",
	[RN_AE_REM_INVALID_RDMA_VERSION] = "Remote Operation Error: Invalid RDMA version",
	[RN_AE_REM_UNEXPECTED_OPCODE] = "Remote Operation Error: Unexpected Opcode",
	[RN_AE_REM_INVALID_DDP_QN] = "Remote Operation Error: Invalid DDP Queue Number",
	[RN_AE_REM_READ_NOT_ENABLED] = "Invalid RDMA Read Request Message, RDMA Read not enabled",
	[RN_AE_REM_WRITE_NOT_ENABLED] =
		"Invalid RDMA Write or RDMA Read Response Message, not enabled",
	[RN_AE_REM_READ_REQ_INVALID] =
		"Invalid RDMA Read Request Message, size too small or Offset non-zero",
	[RN_AE_REM_NO_L_BIT] = "No 'L' bit when expected",
	[RN_AE_PROT_INVALID_STAG] = "Protection Error: Invalid STag",
	[RN_AE_PROT_BASE_BOUNDS] = "Protection Error: Tagged Base and bounds violation",
	[RN_AE_PROT_ACCESS] = "Protection Error: Tagged Access Rights violation",
	[RN_AE_PROT_INVALID_PD] = "Protection Error: Tagged Invalid PD",
	[RN_AE_PROT_WRAP] = "Protection Error: Wrap error",
	[RN_AE_BAD_CLOSE] = "Bad Close",
	[RN_AE_BAD_LLP_CLOSE] = "Bad LLP Close",
	[RN_AE_RQ_MSN_RANGE] = "RQ Protection Error: Invalid MSN - MSN range not valid",
	[RN_AE_RQ_MSN_GAP] = "RQ Protection Error: Invalid MSN - gap in MSN",
	[RN_AE_IRRQ_TOO_MANY_READS] =
		"IRRQ Protection Error: Invalid MSN - too many RDMA Read Requests in progress",
	[RN_AE_IRRQ_MSN_GAP] = "IRRQ Protection Error: Invalid MSN - gap in MSN",
	[RN_AE_IRRQ_MSN_RANGE] = "IRRQ Protection Error: Invalid MSN - MSN range not valid",
	[RN_AE_IRRQ_INVALID_STAG] = "IRRQ Protection Error: Invalid STag",
	[RN_AE_IRRQ_BASE_BOUNDS] = "IRRQ Protection Error: Tagged Base and bounds violation",
	[RN_AE_IRRQ_ACCESS] = "IRRQ Protection Error: Tagged Access Rights violation",
	[RN_AE_IRRQ_INVALID_PD] = "IRRQ Protection Error: Tagged Invalid PD",
	[RN_AE_IRRQ_WRAP] = "IRRQ Protection Error: Wrap error",
	[RN_AE_CQ_SQ_ERROR] = "CQ/SQ Error: CQ Overflow",
	[RN_AE_CQ_RQ_ERROR] = "CQ/RQ Error: CQ Operation error",
	[RN_AE_SRQ_QP_ERROR] = "S-RQ error on a QP",
	[RN_AE_LOCAL_QP_CATASTROPHIC] = "Local QP Catastrophic Error",
	[RN_AE_QP_RQ_LIMIT] = "QP RQ Limit Reached",
	[RN_AE_CQ_OVERFLOW] = "CQ Overflow Detected",
	[RN_AE_CQ_OP_ERROR] = "CQ Operation Error",
	[RN_AE_SRQ_LIMIT] = "Shared Receive Queue Limit reached",
	[RN_AE_SRQ_CATASTROPHIC] = "Shared Receive Queue Catastrophic Failure",
	[RN_AE_RNIC_CATASTROPHIC] = "RNIC Catastrophic Failure",
};

const char *rn_event_str(enum rn_event_id id)
{
	if ((unsigned)id >= RN_AE_COUNT)
		return "unknown event";
	return rn_event_names[id];
}

enum rn_res_kind rn_event_kind(enum rn_event_id id)
{
	if (id >= RN_AE_CQ_OVERFLOW && id <= RN_AE_CQ_OP_ERROR)
		return RN_RES_CQ;
	if (id >= RN_AE_SRQ_LIMIT && id <= RN_AE_SRQ_CATASTROPHIC)
		return RN_RES_SRQ;
	if (id == RN_AE_RNIC_CATASTROPHIC)
		return RN_RES_RNIC;
	return RN_RES_QP;
}

int rn_event_is_error(enum rn_event_id id)
{
	return id != RN_AE_LLP_CLOSE_COMPLETE && id != RN_AE_SRQ_LIMIT &&
	       id != RN_AE_QP_RQ_LIMIT && id != RN_AE_NONE;
}

void rn_event_res_init(struct rn_event_res *r, enum rn_res_kind kind, void *handle, uint32_t id)
{
	r->kind = kind;
	r->handle = handle;
	r->id = id;
	r->queued = 0;
	r->unacked = 0;
}

enum rn_status rn_evq_create(uint32_t depth, struct rn_evq **out)
{
	struct rn_evq *q = calloc(1, sizeof(*q));

	*out = NULL;
	if (!q)
		return RN_ERR_NO_RESOURCES;
	q->depth = depth ? depth : 1;
	q->ring = calloc(q->depth, sizeof(*q->ring));
	q->efd = eventfd(0, EFD_CLOEXEC);
	if (!q->ring || q->efd < 0 || pthread_mutex_init(&q->lock, NULL)) {
		if (q->efd >= 0)
			close(q->efd);
		free(q->ring);
		free(q);
		return RN_ERR_NO_RESOURCES;
	}
	if (rn_cond_init(&q->cond)) {
		pthread_mutex_destroy(&q->lock);
		close(q->efd);
		free(q->ring);
		free(q);
		return RN_ERR_NO_RESOURCES;
	}
	*out = q;
	return RN_OK;
}

void rn_evq_destroy(struct rn_evq *q)
{
	if (!q)
		return;
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	close(q->efd);
	free(q->ring);
	free(q);
}

int rn_evq_fd(const struct rn_evq *q)
{
	return q->efd;
}

enum rn_status rn_evq_post(struct rn_evq *q, enum rn_event_id id, struct rn_event_res *r)
{
	enum rn_status rc = RN_OK;

	if (id <= RN_AE_NONE || id >= RN_AE_COUNT || !r || rn_event_kind(id) != r->kind)
		return RN_ERR_INVALID_MODIFIER;
	pthread_mutex_lock(&q->lock);
	if (q->count == q->depth) {
		q->dropped_since++;
		q->dropped_total++;
		rc = RN_ERR_NO_RESOURCES;
	} else {
		struct rn_evq_slot *s = &q->ring[(q->head + q->count) % q->depth];

		s->id = id;
		s->res = r;
		r->queued++;
		if (q->count++ == 0)
			rn_efd_raise(q->efd);
		pthread_cond_broadcast(&q->cond);
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

/* Pop the head into ev; lock held, count > 0. */
static void evq_pop_locked(struct rn_evq *q, struct rn_async_event *ev)
{
	struct rn_evq_slot *s = &q->ring[q->head];

	ev->id = s->id;
	ev->res = s->res;
	ev->kind = s->res->kind;
	ev->handle = s->res->handle;
	ev->res_id = s->res->id;
	ev->dropped = q->dropped_since;
	q->dropped_since = 0;
	s->res->queued--;
	s->res->unacked++;
	q->head = (q->head + 1) % q->depth;
	if (--q->count == 0)
		rn_efd_clear(q->efd);
}

int rn_evq_get(struct rn_evq *q, struct rn_async_event *ev, int timeout_ms)
{
	struct timespec dl = { 0, 0 };
	int rc = 0;

	if (timeout_ms > 0)
		dl = rn_deadline(timeout_ms);
	pthread_mutex_lock(&q->lock);
	while (q->count == 0 && rc == 0)
		rc = rn_cond_wait(&q->cond, &q->lock, timeout_ms, &dl);
	if (q->count) {
		evq_pop_locked(q, ev);
		rc = 0;
	} else {
		rc = EAGAIN;
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

void rn_evq_ack(struct rn_evq *q, const struct rn_async_event *ev)
{
	pthread_mutex_lock(&q->lock);
	if (ev->res && ev->res->unacked) {
		ev->res->unacked--;
		pthread_cond_broadcast(&q->cond);
	}
	pthread_mutex_unlock(&q->lock);
}

/* Compact the ring in place, keeping the order of the events that stay. */
uint32_t rn_evq_purge(struct rn_evq *q, struct rn_event_res *r)
{
	uint32_t kept = 0, removed;

	pthread_mutex_lock(&q->lock);
	for (uint32_t i = 0; i < q->count; i++) {
		struct rn_evq_slot s = q->ring[(q->head + i) % q->depth];

		if (s.res != r)
			q->ring[(q->head + kept++) % q->depth] = s;
	}
	removed = q->count - kept;
	q->count = kept;
	r->queued -= removed;
	if (removed && kept == 0)
		rn_efd_clear(q->efd);
	pthread_mutex_unlock(&q->lock);
	return removed;
}

int rn_evq_wait_acked(struct rn_evq *q, struct rn_event_res *r, int timeout_ms)
{
	struct timespec dl = { 0, 0 };
	int rc = 0;

	if (timeout_ms > 0)
		dl = rn_deadline(timeout_ms);
	pthread_mutex_lock(&q->lock);
	while (r->unacked && rc == 0)
		rc = rn_cond_wait(&q->cond, &q->lock, timeout_ms, &dl);
	rc = r->unacked ? ETIMEDOUT : 0;
	pthread_mutex_unlock(&q->lock);
	return rc;
}

void rn_evq_res_counts(struct rn_evq *q, const struct rn_event_res *r, uint32_t *queued,
		       uint32_t *unacked)
{
	pthread_mutex_lock(&q->lock);
	if (queued)
		*queued = r->queued;
	if (unacked)
		*unacked = r->unacked;
	pthread_mutex_unlock(&q->lock);
}

uint32_t rn_evq_pending(struct rn_evq *q)
{
	uint32_t n;

	pthread_mutex_lock(&q->lock);
	n = q->count;
	pthread_mutex_unlock(&q->lock);
	return n;
}

uint64_t rn_evq_dropped_total(struct rn_evq *q)
{
	uint64_t n;

	pthread_mutex_lock(&q->lock);
	n = q->dropped_total;
	pthread_mutex_unlock(&q->lock);
	return n;
}
