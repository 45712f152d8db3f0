/* The device's asynchronous event queue (RDMA Verbs 1.0 §8.3.3 Fig. 24, Fig. 25, §9.4.2,
 * §9.5.3 Fig. 37).
 *
 * Producers (progress thread, callers of post_send, verbs that detect a limit) post an event
 * naming one resource; the application takes events with rn_evq_get() or waits on
 * rn_evq_fd() with poll/epoll (what libibverbs' ibv_get_async_event does with the async fd).
 * The fd is an eventfd that is readable exactly while at least one event is queued.
 *
 * Every event taken must be acked (rn_evq_ack) before its resource is destroyed, as libibverbs
 * requires: a resource embeds a struct rn_event_res, and its destroy path calls
 * rn_evq_purge() (drop events never taken) then rn_evq_wait_acked(). The queue is bounded;
 * when full the new event is dropped and counted, and the next rn_evq_get() reports how many
 * were dropped since the previous one, so the loss itself is never silent. */
#ifndef RN_EVENT_H
#define RN_EVENT_H

#if !defined(RNIC_H) && !defined(RNIC_INTERNAL)
#error "include rnic.h, the RNIC's public header"
#endif

#include <stdint.h>

#include "rn_status.h"

/* Event identifiers of Fig. 37. The QP-affiliated ones have, in Fig. 37's order, the same
 * values as enum rn_qp_async of rn_qp_state.h (RN_QPE_*), so a cast converts
 * (tests/rnic/test_event.c asserts it). The comment gives the Terminate code of Fig. 24 where one
 * exists (RDMA Verbs §8.3.3); the resource kind is rn_event_kind(id). */
enum rn_event_id {
	RN_AE_NONE = 0,
	/* QP-affiliated */
	RN_AE_LLP_CLOSE_COMPLETE,         /* informational: Closing -> Idle */
	RN_AE_TERMINATE_RECEIVED,         /* Terminate Message Received */
	RN_AE_LLP_CONN_RESET,             /* incoming RST */
	RN_AE_LLP_CONN_LOST,              /* timeout / retries exhausted */
	RN_AE_LLP_SEGMENT_SIZE,           /* LLP Integrity: segment size invalid (0x1000) */
	RN_AE_LLP_INVALID_CRC,            /* LLP Integrity: invalid CRC (0x0202) */
	RN_AE_LLP_BAD_FPDU,               /* LLP Integrity: bad FPDU (0x0203) */
	RN_AE_REM_INVALID_DDP_VERSION,    /* 0x1206 */
	RN_AE_REM_INVALID_RDMA_VERSION,   /* 0x0205 */
	RN_AE_REM_UNEXPECTED_OPCODE,      /* 0x0206 */
	RN_AE_REM_INVALID_DDP_QN,         /* 0x1201 */
	RN_AE_REM_READ_NOT_ENABLED,       /* Read Request, RDMA Read not enabled */
	RN_AE_REM_WRITE_NOT_ENABLED,      /* Write / Read Response, not enabled */
	RN_AE_REM_READ_REQ_INVALID,       /* Read Request too small or offset non-zero */
	RN_AE_REM_NO_L_BIT,               /* No 'L' bit when expected (0x0207) */
	RN_AE_PROT_INVALID_STAG,          /* tagged: invalid STag (0x1100) */
	RN_AE_PROT_BASE_BOUNDS,           /* tagged: base and bounds (0x1101) */
	RN_AE_PROT_ACCESS,                /* tagged: access rights (0x1102) */
	RN_AE_PROT_INVALID_PD,            /* tagged: invalid PD (0x1102 as extracted) */
	RN_AE_PROT_WRAP,                  /* tagged: wrap (0x1103) */
	RN_AE_BAD_CLOSE,                  /* segment / SQ WQE / read while Closing */
	RN_AE_BAD_LLP_CLOSE,              /* FIN with SQ or IRRQ non-empty (0x0207) */
	RN_AE_RQ_MSN_RANGE,               /* RQ protection: MSN range not valid (0x1202) */
	RN_AE_RQ_MSN_GAP,                 /* RQ protection: gap in MSN (0x1202) */
	RN_AE_IRRQ_TOO_MANY_READS,        /* IRRQ: too many Read Requests (0x1203) */
	RN_AE_IRRQ_MSN_GAP,               /* 0x1203 */
	RN_AE_IRRQ_MSN_RANGE,             /* 0x1203 */
	RN_AE_IRRQ_INVALID_STAG,          /* 0x0100 */
	RN_AE_IRRQ_BASE_BOUNDS,           /* 0x0101 */
	RN_AE_IRRQ_ACCESS,                /* 0x0102 */
	RN_AE_IRRQ_INVALID_PD,            /* 0x0103 */
	RN_AE_IRRQ_WRAP,                  /* 0x0104 */
	RN_AE_CQ_SQ_ERROR,                /* CQ/SQ error: CQ overflow while completing an SQ WR */
	RN_AE_CQ_RQ_ERROR,                /* CQ/RQ error: CQ operation error on an RQ completion */
	RN_AE_SRQ_QP_ERROR,               /* S-RQ error on a QP (0x0207) */
	RN_AE_LOCAL_QP_CATASTROPHIC,      /* Local QP catastrophic error (0x0207) */
	RN_AE_QP_RQ_LIMIT,                /* informational: QP RQ Limit Reached */
	/* CQ-affiliated */
	RN_AE_CQ_OVERFLOW,                /* CQ Overflow Detected (optional in the spec; we do) */
	RN_AE_CQ_OP_ERROR,                /* CQ Operation Error */
	/* S-RQ-affiliated */
	RN_AE_SRQ_LIMIT,                  /* informational: Shared Receive Queue Limit reached */
	RN_AE_SRQ_CATASTROPHIC,           /* Shared Receive Queue Catastrophic Failure */
	/* Device */
	RN_AE_RNIC_CATASTROPHIC,          /* RNIC Catastrophic Failure */
	RN_AE_COUNT
};

/* The Resource Indicator of the Event Record (§9.4.2). */
enum rn_res_kind {
	RN_RES_QP = 0,
	RN_RES_CQ,
	RN_RES_SRQ,
	RN_RES_RNIC,
};

/* Embedded in every resource that can be named by an event. kind/handle/id are set by the
 * owner before the first post and not changed after; the counters are guarded by the queue
 * the events were posted on (one queue per device). */
struct rn_event_res {
	enum rn_res_kind kind;
	void *handle;      /* the resource object, returned to the consumer as the Resource Identifier */
	uint32_t id;       /* QP ID / CQ / S-RQ number, for logs and verbs/ */
	uint32_t queued;   /* posted, not yet taken */
	uint32_t unacked;  /* taken, not yet acked */
};

/* The Event Record as rn_evq_get() returns it. */
struct rn_async_event {
	enum rn_event_id id;
	enum rn_res_kind kind;
	void *handle;
	uint32_t res_id;
	uint32_t dropped;          /* events lost to a full queue since the previous get */
	struct rn_event_res *res;  /* for rn_evq_ack */
};

struct rn_evq;

/* The resource kind an event identifier applies to (Fig. 37 grouping). */
enum rn_res_kind rn_event_kind(enum rn_event_id id);
/* Fig. 37 marks three events as non-errors (close complete and the two limit events). */
int rn_event_is_error(enum rn_event_id id);
const char *rn_event_str(enum rn_event_id id);

/* Bind a resource's event identity; counters start at zero. */
void rn_event_res_init(struct rn_event_res *r, enum rn_res_kind kind, void *handle, uint32_t id);

/* depth = events the queue holds (at least 1). NO_RESOURCES when memory or the fd is missing. */
enum rn_status rn_evq_create(uint32_t depth, struct rn_evq **out);
/* Frees the queue; events still queued are discarded. Resources must not post afterwards. */
void rn_evq_destroy(struct rn_evq *q);
/* The eventfd: readable (POLLIN) while at least one event is queued. Do not read it. */
int rn_evq_fd(const struct rn_evq *q);

/* Any thread. RN_OK, or NO_RESOURCES when the queue was full (event dropped and counted) or
 * the identifier does not belong to r's resource kind (INVALID_MODIFIER). */
enum rn_status rn_evq_post(struct rn_evq *q, enum rn_event_id id, struct rn_event_res *r);
/* Take the oldest event. timeout_ms: 0 = do not wait, < 0 = wait forever.
 * Returns 0, or EAGAIN when nothing arrived in time. */
int rn_evq_get(struct rn_evq *q, struct rn_async_event *ev, int timeout_ms);
/* Acknowledge an event taken by rn_evq_get. */
void rn_evq_ack(struct rn_evq *q, const struct rn_async_event *ev);
/* Remove r's events that were never taken (resource being destroyed); returns how many. */
uint32_t rn_evq_purge(struct rn_evq *q, struct rn_event_res *r);
/* Wait until every event taken for r was acked. timeout_ms as for get; 0 or ETIMEDOUT. */
int rn_evq_wait_acked(struct rn_evq *q, struct rn_event_res *r, int timeout_ms);
/* Counts for r: queued (not taken) and taken-but-unacked. */
void rn_evq_res_counts(struct rn_evq *q, const struct rn_event_res *r, uint32_t *queued,
		       uint32_t *unacked);
/* Events currently queued, and the total ever dropped because the queue was full. */
uint32_t rn_evq_pending(struct rn_evq *q);
uint64_t rn_evq_dropped_total(struct rn_evq *q);

#endif
