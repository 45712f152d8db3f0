/* Completion queues and completion channels (RDMA Verbs 1.0 §5.3, §8.2.4–§8.2.5, §9.2.3,
 * §9.3.2).
 *
 * A CQ is a ring of struct rn_cqe (rn_wc.h). Producers are the data path (the caller of
 * post_send and the progress thread may complete into the same CQ at once): rn_cq_push() is
 * multi-producer safe. The consumer side (rn_cq_poll) never takes the producers' lock, and an
 * empty poll is two loads with no store, so busy-pollers cost producers nothing.
 *
 * Notification (§3.8): rn_cq_req_notify() arms the CQ once; the next qualifying completion
 * disarms it and queues exactly one event on the CQ's completion channel, whose eventfd then
 * becomes readable (ibv_comp_channel). Nothing is written to the fd unless the CQ is armed.
 * Poll-until-empty, arm, poll-again never misses a completion.
 *
 * Lifetime: QPs and S-RQs that complete into a CQ hold a reference (rn_cq_ref/unref); destroy
 * fails with CQ_IN_USE while any is held. Destroy waits until every channel event and async
 * event taken for the CQ was acked, as ibv_destroy_cq does. */
#ifndef RN_CQ_H
#define RN_CQ_H

#if !defined(RNIC_H) && !defined(RNIC_INTERNAL)
#error "include rnic.h, the RNIC's public header"
#endif

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rn_event.h"
#include "rn_status.h"
#include "rn_wc.h"

struct rn_cq;
struct rn_comp_channel;

/* Request Completion Notification types (§9.3.2.2). */
enum rn_notify {
	RN_NOTIFY_NEXT = 1,       /* any completion */
	RN_NOTIFY_SOLICITED = 2,  /* Receive of a Send with SE, or any completion in error */
};

/* Result of rn_cq_push for the data path. On OVERFLOW the CQE was not stored, the CQ's
 * overflow was counted and (once per episode) RN_AE_CQ_OVERFLOW posted; the QP that
 * completed must treat it as its CQ/SQ or CQ/RQ error. */
enum rn_cq_push_result {
	RN_CQ_PUSH_OK = 0,
	RN_CQ_PUSH_OVERFLOW,
};

struct rn_cq_attr {
	uint32_t min_cqe;                /* requested minimum entries (0 is taken as 1) */
	uint32_t max_cqe;                /* device limit: max entries per CQ */
	struct rn_comp_channel *channel; /* completion event handler; NULL = none */
	struct rn_evq *evq;              /* device async queue for CQ events; NULL = none */
	uint32_t id;                     /* CQ number carried by async events */
	void *context;                   /* handed back by rn_comp_channel_get (cq_context) */
	uint64_t *overruns;              /* the device's count of CQEs lost to overflow
	                                  * (rn_stats.h), added to atomically; NULL = none */
};

/* Create CQ. *allocated = entries the CQ holds (>= min_cqe, <= max_cqe).
 * CQ_TOO_BIG when min_cqe > max_cqe; NO_RESOURCES when memory is short. */
enum rn_status rn_cq_create(const struct rn_cq_attr *attr, struct rn_cq **out,
			    uint32_t *allocated);
/* Destroy CQ. INVALID_CQ (NULL), CQ_IN_USE while referenced. CQEs still queued are discarded;
 * channel events never taken are removed; blocks until taken events are acked. */
enum rn_status rn_cq_destroy(struct rn_cq *cq);
/* Query CQ (§9.2.3.2): allocated size and completion channel. */
enum rn_status rn_cq_query(struct rn_cq *cq, uint32_t *size, struct rn_comp_channel **channel);
/* Modify CQ (resize, §5.3.3): atomic; no CQE lost, duplicated or reordered, also while
 * producers run. CQ_TOO_BIG over the device limit; SHRINK_FAILED when the new size would not
 * hold the CQEs queued now (CQ unchanged); NO_RESOURCES. */
enum rn_status rn_cq_resize(struct rn_cq *cq, uint32_t min_cqe, uint32_t *allocated);
/* Poll CQ: copy up to max CQEs, oldest first. *got = number copied; CQ_EMPTY when none.
 * Retires the SQ slots the copied CQEs stand for (struct rn_sq_retire). */
enum rn_status rn_cq_poll(struct rn_cq *cq, struct rn_cqe *out, uint32_t max, uint32_t *got);
/* Arm notification (one-shot). INVALID_NOTIFY_TYPE for anything but the two types. */
enum rn_status rn_cq_req_notify(struct rn_cq *cq, enum rn_notify type);

/* Data path: append one CQE. Multi-producer safe; never blocks on the consumer. */
enum rn_cq_push_result rn_cq_push(struct rn_cq *cq, const struct rn_cqe *e);
/* Destroy QP (§6.1.4, §8.2.4): drop the CQEs of qp_id still queued, so a QP that reuses the
 * ID never sees them. Returns how many were removed; order of the others is kept. */
uint32_t rn_cq_purge_qp(struct rn_cq *cq, uint32_t qp_id);
/* Destroy of a QP that keeps its CQEs (D221): the CQEs of qp_id still queued stay, to be
 * polled like any other, but no longer point at the QP (its SQ retire counter goes with it).
 * Returns how many there are. */
uint32_t rn_cq_orphan_qp(struct rn_cq *cq, uint32_t qp_id);

/* SQ space is returned when the consumer polls, as libibverbs providers do (RDMA Verbs
 * §8.2.4: an unsignaled WR is complete only once a later WR's completion on the
 * same SQ was retrieved). The QP owns one counter: SQ sequence numbers before `retired` are
 * free. Each SQ CQE names the counter and its WR's sequence number; rn_cq_poll advances the
 * counter past the last CQE of each QP it returns, under the consumer lock. rn_qp_destroy
 * purges the QP's CQEs under that same lock before freeing the counter, so a polled CQE never
 * names a freed one. */
struct rn_sq_retire {
	atomic_uint retired;   /* sequence numbers below this (mod 2^32) are retired */
};

void rn_sq_retire_init(struct rn_sq_retire *r, uint32_t v);
/* Advance to upto unless already at or past it (mod 2^32; never moves back). */
void rn_sq_retire_to(struct rn_sq_retire *r, uint32_t upto);
uint32_t rn_sq_retired(struct rn_sq_retire *r);

/* Work-queue association (QP SQ/RQ, S-RQ). */
void rn_cq_ref(struct rn_cq *cq);
void rn_cq_unref(struct rn_cq *cq);

/* Introspection: CQEs queued now (a snapshot), pushes lost to overflow, the user context. */
uint32_t rn_cq_count(struct rn_cq *cq);
uint64_t rn_cq_overflows(struct rn_cq *cq);
void *rn_cq_context(const struct rn_cq *cq);
/* Armed (rn_cq_req_notify) and not fired since: its consumer is about to wait on the
 * channel rather than poll on (a snapshot). */
bool rn_cq_armed(const struct rn_cq *cq);
/* A number the device keeps with the CQ for its consumer-side progress (rn_device.h
 * rn_device_qp_posted): which of the CQ's feeders a poll tries first. 0: none. */
void rn_cq_set_feed_hint(struct rn_cq *cq, unsigned hint);
unsigned rn_cq_feed_hint(const struct rn_cq *cq);

/* Completion channel: one eventfd shared by any number of CQs (ibv_comp_channel).
 * These calls return errno values (0, ENOMEM, EBUSY, EAGAIN, EINTR) as libibverbs does. */
int rn_comp_channel_create(struct rn_comp_channel **out);
/* EBUSY while a CQ still uses the channel. */
int rn_comp_channel_destroy(struct rn_comp_channel *ch);
/* Readable (POLLIN) while an event is waiting to be taken. Do not read it yourself. */
int rn_comp_channel_fd(const struct rn_comp_channel *ch);
/* Take one event: which CQ fired and its context. timeout_ms: 0 = no wait, < 0 = forever.
 * 0, EAGAIN, or EINTR if a signal handler ran while it waited (libibverbs' read() of the
 * channel fd). Each event taken must be acked with rn_cq_ack_events. */
int rn_comp_channel_get(struct rn_comp_channel *ch, struct rn_cq **cq, void **context,
			int timeout_ms);
void rn_cq_ack_events(struct rn_cq *cq, uint32_t n);
/* Channel events taken for cq and not yet acked. */
uint32_t rn_cq_unacked_events(struct rn_cq *cq);

#endif
