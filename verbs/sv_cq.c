/* Completion channels and CQs over rn_cq (docs/verbs.md "Completion queues"). ibv_poll_cq and
 * ibv_req_notify_cq are static inline in the header and reach us through context->ops. */
#include <errno.h>
#include <stdlib.h>

#include "verbs_int.h"

#define SV_POLL_BATCH 16

/* ---- completion channels ---------------------------------------------------------------- */
struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct sv_channel *ch;
	int rc;

	if (!sv_ctx(context)) {
		errno = EINVAL;
		return NULL;
	}
	ch = sv_obj_alloc(SV_OBJ_CH, sizeof(*ch));
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	rc = sv_errno(rn_device_channel_create(sv_ctx(context)->dev, &ch->rn));
	if (rc) {
		sv_obj_free(SV_OBJ_CH, ch);
		errno = rc;
		return NULL;
	}
	ch->ch.context = context;
	ch->ch.fd = rn_comp_channel_fd(ch->rn);
	ch->ch.refcnt = 0;
	ch->magic = SV_MAGIC_CH;
	pthread_mutex_lock(&context->mutex);
	ch->next = sv_ctx(context)->channels;
	sv_ctx(context)->channels = ch;
	pthread_mutex_unlock(&context->mutex);
	return &ch->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct sv_channel *ch = sv_channel(channel);
	int rc;

	if (!ch)
		return EINVAL;
	pthread_mutex_lock(&channel->context->mutex);
	rc = channel->refcnt ? EBUSY
			     : sv_errno(rn_device_channel_destroy(sv_ctx(channel->context)->dev,
								  ch->rn));
	for (struct sv_channel **p = &sv_ctx(channel->context)->channels; !rc && *p;
	     p = &(*p)->next)
		if (*p == ch) {
			*p = ch->next;
			break;
		}
	pthread_mutex_unlock(&channel->context->mutex);
	if (rc)
		return rc;
	ch->magic = 0;
	sv_obj_free(SV_OBJ_CH, ch);
	return 0;
}

static void sv_channel_ref(struct ibv_comp_channel *channel, int d)
{
	if (!channel)
		return;
	pthread_mutex_lock(&channel->context->mutex);
	channel->refcnt += d;
	pthread_mutex_unlock(&channel->context->mutex);
}

/* ---- CQs ---------------------------------------------------------------------------------- */
static int sv_cq_args(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
		      int comp_vector)
{
	struct sv_context *c = sv_ctx(context);

	if (!c || cqe < 1 || comp_vector < 0 || comp_vector >= context->num_comp_vectors)
		return EINVAL;
	if (channel && (!sv_channel(channel) || channel->context != context))
		return EINVAL;
	if (cqe > c->attr.max_cqe)
		return EINVAL;
	return 0;
}

static void sv_cq_init(struct sv_cq *q, struct ibv_context *context, void *cq_context,
		       struct ibv_comp_channel *channel, uint32_t size)
{

	q->cq.context = context;
	q->cq.channel = channel;
	q->cq.cq_context = cq_context;
	q->cq.handle = sv_tag(q, SV_MAGIC_CQ);
	q->cq.cqe = (int)size;
	pthread_mutex_init(&q->cq.mutex, NULL);
	pthread_cond_init(&q->cq.cond, NULL);
	q->magic = SV_MAGIC_CQ;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	int rc = sv_cq_args(context, cqe, channel, comp_vector);
	struct sv_context *c;
	struct sv_cq *q;
	uint32_t size;
	enum rn_status st;

	if (rc) {
		errno = rc;
		return NULL;
	}
	c = sv_ctx(context);
	q = sv_obj_alloc(SV_OBJ_CQ, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	st = rn_device_cq_create(c->dev, (uint32_t)cqe, channel ? sv_channel(channel)->rn : NULL,
				 q, &q->rn, &size);
	if (st) {
		sv_obj_free(SV_OBJ_CQ, q);
		errno = sv_errno(st);
		return NULL;
	}
	sv_cq_init(q, context, cq_context, channel, size);
	sv_channel_ref(channel, 1);
	return &q->cq;
}

int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct sv_cq *q = sv_cq(cq);
	uint32_t size;
	enum rn_status st;

	if (!q || cqe < 1)
		return EINVAL;
	if (cqe > sv_ctx(cq->context)->attr.max_cqe)
		return EINVAL;
	st = rn_cq_resize(q->rn, (uint32_t)cqe, &size);
	if (st)
		return sv_errno(st);
	cq->cqe = (int)size;
	return 0;
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct sv_cq *q = sv_cq(cq);
	enum rn_status st;

	if (!q)
		return EINVAL;
	st = rn_device_cq_destroy(sv_ctx(cq->context)->dev, q->rn);   /* waits for taken
									 * events to be acked */
	if (st)
		return sv_errno(st);
	sv_channel_ref(cq->channel, -1);
	q->magic = 0;
	pthread_mutex_destroy(&cq->mutex);
	pthread_cond_destroy(&cq->cond);
	sv_obj_free(SV_OBJ_CQ, q);
	return 0;
}

/* Blocks unless the application made the channel fd non-blocking, as libibverbs' read()
 * does; -1 with errno EAGAIN then. */
int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct sv_channel *ch = sv_channel(channel);
	struct rn_cq *rcq;
	struct sv_cq *q;
	void *ctx;
	int rc;

	if (!ch || !cq || !cq_context) {
		errno = EINVAL;
		return -1;
	}
	rc = rn_comp_channel_get(ch->rn, &rcq, &ctx, sv_fd_timeout(channel->fd));
	if (rc) {
		errno = rc;
		return -1;
	}
	q = ctx;   /* rn_cq's context is our sv_cq */
	*cq = &q->cq;
	*cq_context = q->cq.cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	struct sv_cq *q = sv_cq(cq);

	if (!q || !nevents)
		return;
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_mutex_unlock(&cq->mutex);
	rn_cq_ack_events(q->rn, nevents);
}

/* ops.poll_cq: the number of WCs, or a negative errno for bad arguments. */
int sv_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct sv_cq *q = sv_cq(cq);
	struct rn_cqe e[SV_POLL_BATCH];
	uint32_t got;
	int done = 0;

	if (!q || n < 0 || (n > 0 && !wc))
		return -EINVAL;
	while (done < n) {
		uint32_t want = (uint32_t)(n - done) < SV_POLL_BATCH ? (uint32_t)(n - done)
								      : SV_POLL_BATCH;

		if (rn_cq_poll(q->rn, e, want, &got) != RN_OK)
			break;
		for (uint32_t i = 0; i < got; i++)
			sv_wc_from_cqe(&e[i], &wc[done++]);
		if (got < want)
			break;
	}
	/* a reaping poll of an armed CQ is an event-driven consumer's: it waits next */
	if (done > 0 && !rn_cq_armed(q->rn))
		rn_device_cq_reaped(sv_ctx(cq->context)->dev);
	/* empty: receive for the QPs feeding this CQ here, rather than wait for the engine's
	 * thread (consumer-side progress, rn_device_cq_progress) */
	if (done == 0 && n > 0 && rn_device_cq_progress(sv_ctx(cq->context)->dev, q->rn) > 0 &&
	    rn_cq_poll(q->rn, e, (uint32_t)n < SV_POLL_BATCH ? (uint32_t)n : SV_POLL_BATCH,
		       &got) == RN_OK) {
		for (uint32_t i = 0; i < got; i++)
			sv_wc_from_cqe(&e[i], &wc[done++]);
	}
	return done;
}

int sv_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct sv_cq *q = sv_cq(cq);

	if (!q)
		return EINVAL;
	rn_device_consumer_blocks(sv_ctx(cq->context)->dev); /* it waits for the engine now */
	return sv_errno(rn_cq_req_notify(q->rn, solicited_only ? RN_NOTIFY_SOLICITED
							       : RN_NOTIFY_NEXT));
}
