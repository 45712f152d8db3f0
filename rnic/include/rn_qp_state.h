/* The iWARP QP state machine (RDMA Verbs 1.0 §6.1-§6.6, §8.3.3, §9.5.3). Pure: no I/O, no
 * locks, no allocation. rn_qp feeds it Modify-QP requests and events from the data path and
 * the LLP; every step returns the new state plus the ordered list of
 * actions the QP must carry out (flush, send a Terminate, close or reset the LLP, raise an
 * async event...). The rules are tables in rn_qp_state.c; the decisions the spec leaves open
 * are listed there, at the top.
 *
 * Facts the QP owns (queue occupancy, inbound Read Requests in flight, S-RQ size) are passed
 * in as a snapshot (struct rn_qp_cond) with each step, so conditional rules (remote FIN with
 * the SQ non-empty, Error->Idle while flushing) are decided on current facts, never on a copy
 * that may have gone stale. */
#ifndef RN_QP_STATE_H
#define RN_QP_STATE_H

#if !defined(RNIC_H) && !defined(RNIC_INTERNAL)
#error "include rnic.h, the RNIC's public header"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "rdmap.h"
#include "rn_status.h"

enum rn_qp_state {
	RN_QPS_IDLE,
	RN_QPS_RTS,
	RN_QPS_CLOSING,
	RN_QPS_TERMINATE,
	RN_QPS_ERROR,
	RN_QPS_COUNT
};

/* QP-affiliated asynchronous event identifiers (RDMA Verbs §9.5.3, Fig. 37, in its order). The
 * state machine raises the LLP ones itself; for local and incoming-segment errors the data path
 * names the event (it knows the cause) and the state machine decides whether it is raised.
 * The values equal the QP-affiliated ones of enum rn_event_id (rn_event.h), in the same order
 * (tests/rnic/test_event.c checks it): never reorder one list without the other. */
enum rn_qp_async {
	RN_QPE_NONE = 0,
	RN_QPE_LLP_CLOSE_COMPLETE,   /* informational */
	RN_QPE_TERM_RECEIVED,        /* Terminate Message Received */
	RN_QPE_LLP_RESET,            /* LLP Connection Reset (incoming RST) */
	RN_QPE_LLP_LOST,             /* LLP Connection Lost (timeout / retries) */
	RN_QPE_LLP_SEG_SIZE,         /* LLP Integrity Error: Segment size invalid */
	RN_QPE_LLP_CRC,              /* LLP Integrity Error: Invalid CRC */
	RN_QPE_LLP_BAD_FPDU,         /* LLP Integrity Error: Bad FPDU */
	RN_QPE_DDP_VERSION,          /* Remote Operation Error: Invalid DDP version */
	RN_QPE_RDMA_VERSION,         /* Invalid RDMA version */
	RN_QPE_UNEXPECTED_OPCODE,
	RN_QPE_DDP_QN,               /* Invalid DDP Queue Number */
	RN_QPE_READ_DISABLED,        /* RDMA Read Request, RDMA Read not enabled */
	RN_QPE_WRITE_DISABLED,       /* RDMA Write / Read Response, not enabled */
	RN_QPE_READ_REQ_INVALID,     /* Read Request too small or offset non-zero */
	RN_QPE_NO_L_BIT,
	RN_QPE_STAG_INVALID,         /* Protection Error: Invalid STag */
	RN_QPE_BASE_BOUNDS,          /* Tagged Base and bounds violation */
	RN_QPE_ACCESS,               /* Tagged Access Rights violation */
	RN_QPE_INVALID_PD,           /* Tagged Invalid PD */
	RN_QPE_WRAP,
	RN_QPE_BAD_CLOSE,
	RN_QPE_BAD_LLP_CLOSE,
	RN_QPE_RQ_MSN_RANGE,         /* RQ Protection Error: Invalid MSN - range not valid */
	RN_QPE_RQ_MSN_GAP,
	RN_QPE_IRRQ_TOO_MANY,        /* IRRQ: Invalid MSN - too many Read Requests */
	RN_QPE_IRRQ_MSN_GAP,
	RN_QPE_IRRQ_MSN_RANGE,
	RN_QPE_IRRQ_STAG,
	RN_QPE_IRRQ_BASE_BOUNDS,
	RN_QPE_IRRQ_ACCESS,
	RN_QPE_IRRQ_INVALID_PD,
	RN_QPE_IRRQ_WRAP,
	RN_QPE_CQ_SQ_ERROR,          /* CQ/SQ Error: CQ Overflow */
	RN_QPE_CQ_RQ_ERROR,          /* CQ/RQ Error: CQ Operation error */
	RN_QPE_SRQ_ERROR,            /* S-RQ error on a QP */
	RN_QPE_LOCAL_CATASTROPHIC,   /* Local QP Catastrophic Error */
	RN_QPE_RQ_LIMIT_REACHED,     /* QP RQ Limit Reached (informational; not raised here) */
	RN_QPE_COUNT
};

/* What the QP must do, in the order listed in a step. */
enum rn_qp_act {
	RN_QPA_APPLY_ATTRS,      /* resize / re-arm per sm->attr (already committed there) */
	RN_QPA_RESET_LAYERS,     /* RDMAP/DDP/MPA to initial conditions: MSNs of RQ and IRRQ, markers */
	RN_QPA_LLP_RX_HOLD,      /* stop taking bytes from the stream (start race, §6.2.1.2) */
	RN_QPA_SEND_STREAM_MSG,  /* send the Stream Message Buffer in streaming mode, reliably */
	RN_QPA_ASSOCIATE_LLP,    /* bind the stream to the layers, enable iWARP mode */
	RN_QPA_LLP_RX_RESUME,    /* take bytes again: the first FPDU is parsed as iWARP */
	RN_QPA_START_SQ,         /* process the WQEs on the SQ */
	RN_QPA_STOP_SQ,          /* stop SQ WRs and Read Responses on a DDP segment boundary (§6.4) */
	RN_QPA_STOP_INBOUND,     /* place / deliver no further inbound segment (§6.4 item 2);
	                          * keep reading the stream: in Closing an arrival is still fed as
	                          * RN_QPI_SEGMENT / TERM_RECEIVED (Bad Close), in Terminate dropped */
	RN_QPA_SEND_TERMINATE,   /* action.term: build (rdmap_term_build) and send the Terminate */
	RN_QPA_LLP_CLOSE,        /* graceful close: FIN after everything queued (incl. Terminate) */
	RN_QPA_LLP_RESET,        /* abortive close (RST); harmless on a stream already reset */
	RN_QPA_DISASSOCIATE_LLP, /* drop the stream and its context from the QP */
	RN_QPA_FLUSH_SQ,         /* complete every incomplete SQ WQE as Flushed, then FLUSH_DONE */
	RN_QPA_FLUSH_RQ,         /* same for the RQ (never S-RQ WQEs, §6.3.6) */
	RN_QPA_RAISE_ASYNC,      /* action.event, affiliated with this QP */
	RN_QPA_COUNT
};

struct rn_qp_action {
	enum rn_qp_act kind;
	enum rn_qp_async event;  /* RN_QPA_RAISE_ASYNC */
	struct iwarp_err term;   /* RN_QPA_SEND_TERMINATE */
};

#define RN_QP_MAX_ACTIONS 12

struct rn_qp_step {
	enum rn_status status;   /* of a Modify; RN_OK for events */
	enum rn_qp_state from, to;
	unsigned n;
	struct rn_qp_action act[RN_QP_MAX_ACTIONS];
};

/* Modify-QP attributes (§2.3, Figs. 4-5). */
enum rn_qp_attr_mask {
	RN_QPM_ORD = 1u << 0,
	RN_QPM_IRD = 1u << 1,
	RN_QPM_SQ_DEPTH = 1u << 2,
	RN_QPM_RQ_DEPTH = 1u << 3,
	RN_QPM_RQ_LIMIT = 1u << 4,    /* QP RQ Limit and its armed flag (S-RQ QPs only) */
	RN_QPM_LLP_HANDLE = 1u << 5,  /* Idle->RTS only */
	RN_QPM_STREAM_MSG = 1u << 6,  /* Idle->RTS only */
	RN_QPM_ACCESS = 1u << 7,      /* inbound RDMA Read / Write enables: an extension over
	                               * Figs. 4-5 (which fix them at create) for libibverbs'
	                               * IBV_QP_ACCESS_FLAGS, as Linux siw allows; Idle->Idle,
	                               * Idle->RTS and RTS->RTS (D218) */
	RN_QPM_ALL = (1u << 8) - 1
};

struct rn_qp_attr {
	uint32_t ord, ird;
	uint32_t sq_depth, rq_depth;
	uint32_t rq_limit;
	bool rq_limit_armed;
	bool inbound_read, inbound_write;   /* RN_QPM_ACCESS */
};

struct rn_qp_modify {
	enum rn_qp_state next;       /* same state: attribute-only change */
	unsigned mask;               /* enum rn_qp_attr_mask */
	struct rn_qp_attr attr;      /* the fields named by mask */
	bool llp_established;        /* with RN_QPM_LLP_HANDLE: the stream is Established */
};

/* Device limits and which Fig. 5 (RI-optional) changes the device supports. */
struct rn_qp_caps {
	uint32_t max_ord, max_ird, max_sq_wr, max_rq_wr;
	bool grow_ord;   /* ORD may be raised (lowering it is mandatory, §6.5) */
	bool mod_ird;    /* IRD may be changed */
	bool resize_wq;  /* SQ / RQ depths may be changed */
};

/* Facts of the QP at the time of the step. */
struct rn_qp_cond {
	uint32_t sq_wqes;     /* SQ WQEs not yet completed (queued, in flight or being flushed) */
	uint32_t rq_wqes;     /* same for the RQ (0 with an S-RQ) */
	bool irrq_busy;       /* inbound Read Requests not yet fully answered (Remote RDMA Read) */
	uint32_t srq_max_wr;  /* the S-RQ's current max WRs: range of the QP RQ Limit */
};

/* Events from the data path and the LLP. */
enum rn_qp_input {
	RN_QPI_LLP_FIN,        /* remote LLP close without a Terminate (TCP FIN) */
	RN_QPI_LLP_CLOSED,     /* LLP close complete (both directions) */
	RN_QPI_LLP_RESET,      /* incoming LLP reset (TCP RST) */
	RN_QPI_LLP_LOST,       /* LLP failure preventing transmission: timeout, retries, final
	                        * close timeout */
	RN_QPI_TERM_RECEIVED,  /* a Terminate message was delivered */
	RN_QPI_LOCAL_ERROR,    /* locally detected error (WQ processing, CQ, local catastrophic);
	                        * needs struct rn_qp_error */
	RN_QPI_SEGMENT_ERROR,  /* an incoming segment failed (delivered by the LLP, §6.4 item 7),
	                        * incl. MPA CRC / bad FPDU; needs struct rn_qp_error */
	RN_QPI_SEGMENT,        /* any other iWARP segment arrived */
	RN_QPI_SQ_POSTED,      /* a WQE was enqueued on the SQ (after the post policy accepted it) */
	RN_QPI_RQ_POSTED,      /* same for the RQ */
	RN_QPI_FLUSH_DONE,     /* the flushes this QP was told to do are finished */
	RN_QPI_COUNT
};

struct rn_qp_error {
	struct iwarp_err term;   /* Terminate code to send (Figs. 23-24) */
	enum rn_qp_async event;  /* async event naming the error (RN_QPE_NONE: none) */
	bool in_wc;              /* the error was reported in a Work Completion: no async event */
};

/* At most one non-Flushed error completion per error (§6.2.4, trap 4). The QP passes every
 * completion it is about to write; the helper returns the status kind to write. */
enum rn_wc_kind { RN_WCK_SUCCESS, RN_WCK_FLUSHED, RN_WCK_ERROR };

struct rn_qp_errwc {
	bool error_done;  /* the one error completion has been written */
};

/* k == ERROR: the first one is written as ERROR, any later one as FLUSHED. SUCCESS and FLUSHED
 * pass unchanged (work that really completed may still complete, §6.2.4). *flush_rest (may be
 * NULL) becomes true once the error completion is written: every incomplete WQE must be
 * flushed. */
enum rn_wc_kind rn_qp_errwc_note(struct rn_qp_errwc *e, enum rn_wc_kind k, bool *flush_rest);

struct rn_qp_sm {
	enum rn_qp_state state;
	struct rn_qp_attr attr;
	struct rn_qp_caps caps;
	bool has_srq;
	bool close_to_error;   /* a graceful close ends in Error, not Idle (D220) */
	bool llp_closed;       /* Closing: LLP close finished, waiting for the RQ flush */
	bool flush_pending;    /* Error: FLUSH_* issued, RN_QPI_FLUSH_DONE not yet seen */
	bool term_sent;        /* a Terminate was sent on this stream (local buffer) */
	bool term_received;    /* a Terminate was received on this stream (remote buffer) */
	struct iwarp_err term; /* the one sent, when term_sent */
	struct rn_qp_errwc errwc;
};

/* A new QP: Idle, no stream, the allocated attributes of Create QP. */
void rn_qp_sm_init(struct rn_qp_sm *sm, const struct rn_qp_caps *caps,
		   const struct rn_qp_attr *attr, bool has_srq);

/* Modify QP. On failure nothing in *sm changes, out->n == 0, and the status is returned (also
 * in out->status). On success out lists the actions, out->to the state reached. */
enum rn_status rn_qp_modify(struct rn_qp_sm *sm, const struct rn_qp_modify *m,
			    const struct rn_qp_cond *c, struct rn_qp_step *out);

/* An event. err is read for LOCAL_ERROR and SEGMENT_ERROR (NULL: local catastrophic, no
 * event). Events that do not apply in the current state leave everything unchanged. */
void rn_qp_event(struct rn_qp_sm *sm, enum rn_qp_input in, const struct rn_qp_error *err,
		 const struct rn_qp_cond *c, struct rn_qp_step *out);

/* Posting rules (§2.4): what PostSQ / PostRQ do in a state. */
enum rn_wq { RN_WQ_SQ, RN_WQ_RQ };

enum rn_post_policy {
	RN_POST_REJECT,   /* Immediate Error RN_ERR_INVALID_QP_STATE, nothing enqueued */
	RN_POST_HOLD,     /* enqueue, do not process, no CQE (Idle) */
	RN_POST_PROCESS,  /* enqueue and process (RTS) */
	RN_POST_FLUSH,    /* enqueue, then flush it (RQ in Closing) */
	RN_POST_ABORT,    /* enqueue; the QP then feeds RN_QPI_SQ_POSTED: Bad Close (SQ in Closing) */
};

enum rn_post_policy rn_qp_post_policy(enum rn_qp_state s, enum rn_wq wq);
/* The immediate status of that policy: RN_OK, or RN_ERR_INVALID_QP_STATE for REJECT. */
enum rn_status rn_qp_post_status(enum rn_qp_state s, enum rn_wq wq);

/* Query QP: the Terminate buffer is queryable only in Terminate / Error and only if one was
 * sent or received; *local tells which (a sent one wins). */
bool rn_qp_term_queryable(const struct rn_qp_sm *sm, bool *local);

const char *rn_qp_state_str(enum rn_qp_state s);
const char *rn_qp_act_str(enum rn_qp_act a);

#endif
