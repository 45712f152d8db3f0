/* Receive queues: the WQE ring shared by a QP's own RQ and the Shared Receive Queue, the S-RQ
 * itself, and the QP RQ Limit (RDMA Verbs 1.0 §6.3, §9.2.4, §9.3.1.2).
 *
 * Accounting follows §6.3.5 / §8.2.4: a WQE occupies its queue from PostRQ until its WC is
 * reaped. rn_rq_take() moves it out of the ring ("available" -> "in progress") and copies it
 * to the caller; rn_rq_retire() ends its occupancy. The data path may call retire when it
 * pushes the WC (libibverbs behaviour) or the poll layer when the WC is reaped (the
 * spec's behaviour); the ring is correct either way, the choice decides when a repost may succeed.
 *
 * Threads: post (any application thread) and take (the data path of any QP sharing an S-RQ)
 * are safe against each other and among themselves: one short spinlock per ring, held for a
 * WQE copy. Uncontended post + take + retire of a WQE cost far less than receiving one FPDU,
 * so a lock-free MPMC ring is not worth its complexity. */
#ifndef RN_SRQ_H
#define RN_SRQ_H

#if !defined(RNIC_H) && !defined(RNIC_INTERNAL)
#error "include rnic.h, the RNIC's public header"
#endif

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rn_event.h"
#include "rn_status.h"

/* Hard cap of SGEs per receive WQE this module stores (device max must not exceed it). */
#define RN_RQ_MAX_SGE 16

/* Receive SGE: STag, TO, length. Same layout as struct ibv_sge (addr, length, lkey). */
struct rn_rq_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t stag;
};

/* A Receive WR as posted; a NULL-terminated list through next. Same member order as
 * struct ibv_recv_wr so verbs/ can pass lists through. */
struct rn_recv_wr {
	uint64_t wr_id;
	struct rn_recv_wr *next;
	struct rn_rq_sge *sg_list;
	int num_sge;
};

/* A WQE as the data path takes it. */
struct rn_rqe {
	uint64_t wr_id;
	uint32_t num_sge;
	struct rn_rq_sge sge[RN_RQ_MAX_SGE];
};

/* ---- rn_rq: the WQE ring ---- */
struct rn_rq;

enum rn_rq_take_result {
	RN_RQ_EMPTY = 0,        /* nothing available: no WQE for the incoming message */
	RN_RQ_TAKEN,            /* *out filled */
	RN_RQ_TAKEN_LIMIT,      /* *out filled, and this take crossed the armed limit (disarmed) */
};

/* max_wr >= 1 WQEs (allocated = max_wr), max_sge 1..RN_RQ_MAX_SGE (0 is taken as 1).
 * NO_RESOURCES, RQ_SGES_EXCEED. */
enum rn_status rn_rq_create(uint32_t max_wr, uint32_t max_sge, struct rn_rq **out);
void rn_rq_destroy(struct rn_rq *rq);
/* PostRQ: WRs in list order; stops at the first bad one (earlier ones stay posted, §8.2.1).
 * TOO_MANY_WRS when full, INVALID_SGL_LENGTH when num_sge exceeds max_sge or is negative.
 * *bad (optional) = the failing WR, *posted (optional) = WRs posted. */
enum rn_status rn_rq_post(struct rn_rq *rq, const struct rn_recv_wr *wr,
			  const struct rn_recv_wr **bad, uint32_t *posted);
/* The gate of a QP's own RQ: while open, rn_rq_post_if_open posts without the QP's lock.
 * The QP closes it (under its lock) before a state whose posting rule is not "queue the WR"
 * takes effect, so a WR posted past the gate is always one that state's flush sees.
 * A new ring's gate is open. */
void rn_rq_set_open(struct rn_rq *rq, bool open);
/* rn_rq_post when the gate is open (true; *st = its status); false, nothing posted and *st
 * untouched, when it is closed. The check and the posting are one step under the ring's lock. */
bool rn_rq_post_if_open(struct rn_rq *rq, const struct rn_recv_wr *wr,
			const struct rn_recv_wr **bad, uint32_t *posted, enum rn_status *st);
/* Take the oldest available WQE (arrival-order dequeue). */
enum rn_rq_take_result rn_rq_take(struct rn_rq *rq, struct rn_rqe *out);
/* End the occupancy of n taken WQEs. */
void rn_rq_retire(struct rn_rq *rq, uint32_t n);
/* Resize: SHRINK_FAILED when fewer than available + in progress; order kept. */
enum rn_status rn_rq_resize(struct rn_rq *rq, uint32_t max_wr);
/* Set the low-water limit and whether it is armed (never armed when limit is 0). While
 * armed, the first take that leaves fewer than limit available WQEs returns
 * RN_RQ_TAKEN_LIMIT and disarms. */
void rn_rq_set_limit(struct rn_rq *rq, uint32_t limit, int arm);
/* Snapshot: available (posted, not taken) and in progress (taken, not retired). */
void rn_rq_counts(struct rn_rq *rq, uint32_t *avail, uint32_t *in_progress);
uint32_t rn_rq_max_wr(struct rn_rq *rq);
uint32_t rn_rq_max_sge(const struct rn_rq *rq);
/* Armed state and limit. */
void rn_rq_limit_state(struct rn_rq *rq, uint32_t *limit, int *armed);

/* ---- QP RQ Limit (§6.3.8): per QP sharing an S-RQ; embed in the QP ---- */
struct rn_rq_limit {
	atomic_uint in_progress;     /* WQEs this QP took from the S-RQ, not yet retired */
	atomic_uint limit;
	atomic_int armed;
	struct rn_evq *evq;          /* where RN_AE_QP_RQ_LIMIT goes (may be NULL) */
	struct rn_event_res *qp_res; /* the QP's event identity (kind RN_RES_QP) */
};

/* Armed when limit > 0 (armed at Create QP). */
void rn_rq_limit_init(struct rn_rq_limit *l, uint32_t limit, struct rn_evq *evq,
		      struct rn_event_res *qp_res);
/* Modify QP: set the limit and (re)arm; limit 0 disarms. Range is checked by
 * rn_srq_check_qp_limit() first. */
void rn_rq_limit_set(struct rn_rq_limit *l, uint32_t limit);
int rn_rq_limit_armed(const struct rn_rq_limit *l);

/* ---- S-RQ ---- */
struct rn_srq;

struct rn_srq_attr {
	uint32_t max_wr;       /* requested outstanding WRs */
	uint32_t max_sge;      /* requested SGEs per WR */
	uint32_t limit;        /* S-RQ Limit; armed at create when > 0 */
	uint32_t pd;           /* PD ID, validated by the caller (rn_mem owns PDs) */
	uint32_t dev_max_wr;   /* device limits (Query RNIC) */
	uint32_t dev_max_sge;
	struct rn_evq *evq;    /* device async queue; NULL = none */
	uint32_t id;           /* S-RQ number carried by events */
	void *context;         /* consumer's srq_context */
};

struct rn_srq_info {
	uint32_t max_wr, max_sge, pd, limit;
	int armed;
};

/* Modify S-RQ attribute mask. */
enum rn_srq_mod_mask {
	RN_SRQ_MOD_MAX_WR = 1u << 0,   /* resize to max_wr */
	RN_SRQ_MOD_LIMIT = 1u << 1,    /* set limit (does not arm by itself) */
	RN_SRQ_MOD_ARM = 1u << 2,      /* (re-)arm the limit event */
};

/* Create S-RQ (§9.2.4.1). RQ_WRS_EXCEED, RQ_SGES_EXCEED, SRQ_LIMIT_RANGE (limit > max_wr),
 * NO_RESOURCES. Outputs allocated WRs and SGEs (>= requested). */
enum rn_status rn_srq_create(const struct rn_srq_attr *attr, struct rn_srq **out,
			     uint32_t *alloc_wr, uint32_t *alloc_sge);
/* Destroy S-RQ: SRQ_IN_USE while a QP is associated. WQEs still posted are dropped; blocks
 * until async events taken for the S-RQ are acked. */
enum rn_status rn_srq_destroy(struct rn_srq *srq);
enum rn_status rn_srq_query(struct rn_srq *srq, struct rn_srq_info *info);
/* Modify S-RQ (§9.2.4.3, §6.3.8). Validates everything before changing anything:
 * INVALID_MODIFIER (unknown mask bit; or shrinking max_wr below an armed limit),
 * RQ_WRS_EXCEED, SRQ_LIMIT_RANGE (limit > max WRs, or arming such a limit),
 * SHRINK_FAILED, NO_RESOURCES. *alloc_wr (optional) = allocated WRs after the call. */
enum rn_status rn_srq_modify(struct rn_srq *srq, uint32_t mask, uint32_t max_wr,
			     uint32_t limit, uint32_t *alloc_wr);
/* PostRQ on the S-RQ handle. As rn_rq_post; INVALID_SRQ for NULL. */
enum rn_status rn_srq_post(struct rn_srq *srq, const struct rn_recv_wr *wr,
			   const struct rn_recv_wr **bad, uint32_t *posted);
/* Data path of a QP (any thread): take the next WQE for an incoming untagged message.
 * Raises RN_AE_SRQ_LIMIT once when the S-RQ crosses its armed limit, and RN_AE_QP_RQ_LIMIT
 * once when qp_lim (optional) goes over its armed limit. Returns 0 when the S-RQ is empty. */
int rn_srq_take(struct rn_srq *srq, struct rn_rq_limit *qp_lim, struct rn_rqe *out);
/* The WC of a WQE taken for qp_lim's QP was reaped (or the data path's choice, see top). */
void rn_srq_retire(struct rn_srq *srq, struct rn_rq_limit *qp_lim);
/* QP RQ Limit range check for Create/Modify QP: RQ_LIMIT_RANGE when limit > S-RQ max WRs. */
enum rn_status rn_srq_check_qp_limit(struct rn_srq *srq, uint32_t limit);
/* Create QP / Destroy QP association. */
void rn_srq_ref(struct rn_srq *srq);
void rn_srq_unref(struct rn_srq *srq);
uint32_t rn_srq_pd(const struct rn_srq *srq);
void *rn_srq_context(const struct rn_srq *srq);
/* Snapshot of available / in-progress WQEs. */
void rn_srq_counts(struct rn_srq *srq, uint32_t *avail, uint32_t *in_progress);

#endif
