/* The Queue Pair: create / query / modify / destroy, PostSQ / PostRQ and the data path that
 * turns work requests into RDMAP/DDP/MPA bytes on an rn_conn and incoming bytes into placed
 * data and completions (RDMA Verbs 1.0 §6, §8, §9.2.5, §9.3, §9.5).
 *
 * Layers used: rn_qp_state (every state change and what it must do), rn_mem (STag checks,
 * fast-register, bind, invalidate), rn_cq / rn_srq / rn_event (completions, receive WQEs,
 * async events), ddp / rdmap / mpa (wire), rn_transport (bytes). The QP is public to the rest
 * of rnic/ (rn_device, rn_progress) and to verbs/.
 *
 * Threads and progress
 *   - Every entry point takes the QP's mutex; any thread may call any of them.
 *   - Transmit runs in the caller's context: post_send frames and sends at once when the QP
 *     is in RTS and the transport accepts bytes. What the transport does not take waits in
 *     the QP; the progress engine calls rn_qp_on_writable() when the fd turns writable
 *     (watch EPOLLOUT while rn_qp_wants_write() is true).
 *   - Receive: the progress engine calls rn_qp_on_readable() when rn_qp_fd() is readable. One
 *     call does bounded work (transport reads of at most RN_QP_RX_BUDGET octets in all, all
 *     of it parsed, placed and completed) and returns whether it did anything.
 *   - After a wake-up (init attr `wake`) the engine must re-read rn_qp_fd() and
 *     rn_qp_wants_write(): the fd changes at Idle->RTS and becomes -1 when the stream is
 *     released (closed or reset). An engine that watches the fd holds a lease on it
 *     (rn_qp_fd_hold): the number stays open until the engine lets go, so it drops it from
 *     epoll and releases it before looking at the new one.
 *   - Memory lifetime (rn_mem quiescence): the QP never keeps a translation across a return
 *     from any entry point; every chunk of data is re-validated (rn_mem_check_*) right before
 *     it is copied. The engine's rn_mem_quiescent() between calls is therefore enough. The
 *     one exception is a transport with sendv_ref, which keeps reading payload it took by
 *     reference until the peer acknowledged it: it registers with rn_mem_holder_add, and a
 *     deregistration has it copy that payload out before returning.
 *   - The caller removes the QP from the progress engine before rn_qp_destroy().
 *
 * Completion semantics (docs/decisions.md gives the longer reasons)
 *   - Send / Write complete (Success) when the last octet of their last FPDU was accepted by
 *     the transport (rn_conn sendv), not when the peer acknowledged it (§8.2.2 rule 11);
 *     with zero-copy transmit (sendv_ref) once the transport no longer reads their memory,
 *     i.e. after the acknowledgement.
 *   - RDMA Read completes when its last Read Response segment was placed; Read with
 *     Invalidate after the local invalidate of the sink STag.
 *   - Send / Write with immediate (RFC 7306, docs/rdmap.md) are two wire messages framed back
 *     to back and complete like their base operation, once, after the second. The receiver's
 *     Receive for a Write with immediate completes after the Immediate Data message, so after
 *     every octet of the Write was placed (stream order).
 *   - Tolerant QPs (init attr `tolerant`) drop an incoming message that fails its checks
 *     instead of terminating (rn_qp_rx.c says which errors and how they are reported).
 *   - Bind / Fast-Register / Local Invalidate execute when they reach the head of SQ
 *     processing (after every earlier WR was started, before any later one starts);
 *     Fast-Register and (Read with) Invalidate hold their completion until rn_mem's grace
 *     period (rn_mem_sync_start / _done) is over, so once the WC is seen no placement into the
 *     old mapping runs any more.
 *   - Completions are written in post order per WQ; unsignaled successes produce none. An SQ
 *     slot is free only once the consumer polled a CQE of that WR or of a later WR of the
 *     same SQ (rn_cq_poll retires them; RDMA Verbs §8.2.4); entering Idle frees
 *     all. RQ slots free when their completion is generated.
 */
#ifndef RN_QP_H
#define RN_QP_H

#if !defined(RNIC_H) && !defined(RNIC_INTERNAL)
#error "include rnic.h, the RNIC's public header"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpa.h"
#include "rdmap.h"
#include "rn_cm.h"
#include "rn_cq.h"
#include "rn_event.h"
#include "rn_mem.h"
#include "rn_qp_state.h"
#include "rn_srq.h"
#include "rn_status.h"
#include "rn_wc.h"

/* ---- limits and defaults --------------------------------------------------------------- */
#define RN_QP_MAX_SGE RN_RQ_MAX_SGE  /* SGEs per SQ WR this implementation can store */
#define RN_QP_DEFAULT_EMSS 1448u     /* TCP payload per segment assumed for the MULPDU when
                                      * neither Modify nor the handoff gives one (the
                                      * transport cannot tell its MSS; 1448 = Ethernet MTU
                                      * 1500 - IP 20 - TCP 20 - timestamps 12, what Linux
                                      * siw uses: MULPDU 1442) */
#define RN_QP_RX_BUF 65536u          /* octets one transport read takes at most */
#define RN_QP_RX_BUDGET (256u * 1024u) /* octets one on_readable call reads at most: at MTU
                                      * 64000 one read is about a frame, and each call costs
                                      * the engine an epoll_wait */

/* Device limits a QP is created against (rn_device fills them from Query RNIC). A zero field
 * takes the default in brackets. */
struct rn_qp_limits {
	uint32_t max_sq_wr;      /* [16384] */
	uint32_t max_rq_wr;      /* [16384] */
	uint32_t max_sge;        /* SGEs per SQ WR (Send and Write) [RN_QP_MAX_SGE] */
	uint32_t max_recv_sge;   /* [RN_RQ_MAX_SGE] */
	uint32_t max_inline;     /* [256] */
	uint32_t max_ord;        /* [128] */
	uint32_t max_ird;        /* [128] */
};

/* ---- Create QP (§9.2.5.1) -------------------------------------------------------------- */
struct rn_qp_init_attr {
	struct rn_mem *mem;           /* the device's PDs and STag table (NULL: INVALID_RNIC) */
	uint32_t pd;                  /* PD ID */
	struct rn_cq *send_cq;        /* SQ completions (NULL: INVALID_CQ) */
	struct rn_cq *recv_cq;        /* RQ completions, may equal send_cq (NULL: INVALID_CQ) */
	struct rn_srq *srq;           /* optional S-RQ; then rq_depth / max_recv_sge are ignored */
	uint32_t rq_limit;            /* QP RQ Limit, S-RQ only; armed at create when > 0 */
	uint32_t sq_depth;            /* max outstanding SQ WRs requested (0 is taken as 1) */
	uint32_t rq_depth;            /* max outstanding RQ WRs requested (0 is taken as 1) */
	uint32_t max_send_sge;        /* SGEs per Send-type WR */
	uint32_t max_write_sge;       /* SGEs per RDMA Write WR */
	uint32_t max_recv_sge;        /* SGEs per Receive WR */
	uint32_t max_inline;          /* octets of inline data per WR (RN_SEND_INLINE) */
	uint32_t ord;                 /* outbound RDMA Reads in flight */
	uint32_t ird;                 /* inbound RDMA Reads in progress (IRRQ depth) */
	bool inbound_read;            /* peer may RDMA Read from us */
	bool inbound_write;           /* peer may RDMA Write to us AND Read Responses may land here
	                               * (one attribute in the spec: a QP that issues RDMA Reads
	                               * needs it) */
	bool bind_mw;                 /* Bind MW WRs allowed on this SQ */
	bool privileged;              /* STag 0 and Fast-Register allowed */
	bool sq_sig_all;              /* every SQ WR is signaled */
	bool tolerant;                /* VIA Unreliable service (SOFTRNIC_QP_TOLERANT): a message
	                               * that fails its receive checks is dropped (WC error or
	                               * async event, QP stays RTS) instead of terminating the
	                               * stream; framing errors still Terminate (rn_qp_rx.c) */
	bool close_to_error;          /* a graceful close ends in Error, flushing both queues,
	                               * instead of Idle (D220: a libibverbs QP, as Linux siw) */
	bool keep_cqes;               /* Destroy QP leaves the CQEs still queued on the CQs, to
	                               * be polled (D221: a libibverbs QP, as Linux siw); the
	                               * device never reuses a QP ID, so no later QP gets them */
	uint32_t qp_id;               /* QP ID chosen by the device; 0: the QP takes one from a
	                               * process-wide counter (tests). Must be unique per rn_mem:
	                               * type-2 windows are bound to it. */
	struct rn_qp_limits limits;   /* device limits */
	struct rn_stats_dev *stats;   /* the device's counters (rn_stats.h); NULL: a QP without a
	                               * device, counted in a process-local record */
	struct rn_evq *evq;           /* the device's async event queue; NULL: events dropped */
	void *ev_handle;              /* Resource Identifier in this QP's events; NULL: the rn_qp */
	void (*wake)(void *arg);      /* "the QP needs the progress engine" (fd changed, bytes wait
	                               * for EPOLLOUT, a completion waits for a grace period);
	                               * may be NULL; called without the QP lock held */
	void *wake_arg;
	void *context;                /* consumer's qp_context, returned by query */
};

/* What Create QP allocated (Create QP outputs). */
struct rn_qp_alloc {
	uint32_t qp_id;
	uint32_t sq_depth, rq_depth;  /* rq_depth 0 with an S-RQ */
	uint32_t max_send_sge, max_write_sge, max_recv_sge, max_inline;
	uint32_t ord, ird;
};

struct rn_qp;

/* Statuses (§1.5): INVALID_RNIC, INVALID_CQ, INVALID_SRQ (srq given but mem NULL is not a
 * case), ORD_EXCEEDS, IRD_EXCEEDS, SQ_WRS_EXCEED, RQ_WRS_EXCEED, SQ_SGES_EXCEED,
 * RQ_SGES_EXCEED, INVALID_MODIFIER (max_inline over the limit), RQ_LIMIT_RANGE,
 * INVALID_PD, NO_RESOURCES; checked in that order. Nothing is created on failure. out_alloc
 * may be NULL. The QP takes references on its PD, CQs and S-RQ. */
enum rn_status rn_qp_create(const struct rn_qp_init_attr *attr, struct rn_qp **out,
			    struct rn_qp_alloc *out_alloc);

/* ---- Query QP (§9.2.5.2) --------------------------------------------------------------- */
struct rn_qp_info {
	enum rn_qp_state state;
	uint32_t qp_id, pd;
	struct rn_cq *send_cq, *recv_cq;
	struct rn_srq *srq;
	struct rn_qp_alloc alloc;     /* depths, SGE limits, ORD / IRD now in force */
	bool inbound_read, inbound_write, bind_mw, privileged, sq_sig_all, tolerant;
	uint32_t rq_limit;            /* S-RQ only */
	bool rq_limit_armed;
	bool has_llp;                 /* an LLP stream is associated (not Idle) */
	struct mpa_conn_params mpa;   /* with has_llp: what was negotiated */
	/* Terminate or Error only, when one was sent or received (rn_qp_term_queryable): */
	bool term_valid;
	bool term_local;              /* true: we sent it; false: the peer sent it */
	struct rdmap_term term;
	void *context;
};

enum rn_status rn_qp_query(struct rn_qp *qp, struct rn_qp_info *info);

/* ---- Modify QP (§9.2.5.3) --------------------------------------------------------------- */
struct rn_qp_mod {
	enum rn_qp_state next;        /* same state: attribute change only */
	unsigned mask;                /* enum rn_qp_attr_mask (rn_qp_state.h) */
	struct rn_qp_attr attr;       /* fields named by mask; RN_QPM_ACCESS: inbound_read and
	                               * inbound_write (Writes only: Read Responses keep the
	                               * create-time gate, so our own Reads keep working) */
	/* RN_QPM_LLP_HANDLE (Idle->RTS): a connection rn_cm reported ESTABLISHED and handed over
	 * (rn_cm_handoff). On RN_OK the QP owns h->conn and h->rx (frees it) and clears both in
	 * *h; on failure *h is untouched and still the caller's. A NULL conn is
	 * INVALID_LLP_HANDLE. */
	struct rn_cm_handoff *llp;
	/* RN_QPM_STREAM_MSG (Idle->RTS): the last streaming-mode message, sent as plain TCP
	 * payload before the first FPDU (§6.2.1.2; rn_cm already did the MPA exchange, so this
	 * is only for ULPs that stream before iWARP mode). Copied. */
	const void *stream_msg;
	size_t stream_msg_len;
	uint32_t emss;                /* Idle->RTS: TCP payload per segment for the MULPDU;
	                               * 0 = llp->emss (the stream's MSS at handoff), and
	                               * RN_QP_DEFAULT_EMSS when that is 0 too. Clamped to
	                               * [256, MPA_MAX_ULPDU]. Only our FPDU size depends on it:
	                               * a receiver takes any ULPDU_Length (MPA negotiates none) */
};

/* Statuses of rn_qp_modify (rn_qp_state.h, D45/D46) plus INVALID_QP for NULL.
 * Every action of the transition (flush, Terminate, LLP close / reset, async events) is
 * carried out before it returns. out_alloc (optional): what is in force afterwards. */
enum rn_status rn_qp_modify_qp(struct rn_qp *qp, const struct rn_qp_mod *m,
			       struct rn_qp_alloc *out_alloc);

/* Destroy QP (§9.2.5.4, §6.1.4): MW_BOUND_TO_QP while a type-2 window is bound to it (QP
 * unchanged); otherwise succeeds in any state: resets the LLP (RST) if one is associated,
 * drops its CQEs still queued in both CQs (rn_cq_purge_qp; with keep_cqes they stay to be
 * polled, rn_cq_orphan_qp, D221), its async events never taken,
 * waits until taken ones were acked, releases its S-RQ WQEs in progress and its references. */
enum rn_status rn_qp_destroy(struct rn_qp *qp);
/* Inbound RDMA Writes (read false) or RDMA Read Requests (read true) are taken only when
 * they name stag; any other is refused as on a QP that does not allow them (RDMAP
 * protection error, access; Terminate). For a consumer that needs one region of its own
 * written or read by its peer on a QP whose user allows no other (VIPL's acknowledgement
 * block on a VI with RDMA Write or Read disabled). INVALID_QP. */
enum rn_status rn_qp_limit_inbound(struct rn_qp *qp, bool read, rn_stag_t stag);

/* ---- Work requests (§9.3.1) ------------------------------------------------------------- */
enum rn_wr_opcode {
	RN_WR_SEND = 0,
	RN_WR_SEND_SE,
	RN_WR_SEND_INV,          /* wr.send.inv_stag invalidated at the peer */
	RN_WR_SEND_SE_INV,
	RN_WR_RDMA_WRITE,        /* wr.rdma */
	RN_WR_RDMA_READ,         /* wr.rdma; sg_list: the sink, 0 or 1 SGE */
	RN_WR_RDMA_READ_INV,     /* Read with Invalidate Local STag: invalidates sg_list[0].stag */
	RN_WR_BIND_MW,           /* wr.bind (type-2 window); needs bind_mw */
	RN_WR_LOCAL_INV,         /* wr.inv.stag */
	RN_WR_FAST_REG,          /* wr.fast_reg; needs privileged (else WC "QP not privileged") */
	/* RFC 7306 Immediate Data (docs/rdmap.md "Immediate Data"); imm_data is the value. */
	RN_WR_SEND_IMM,          /* Immediate Data "prefix" then the Send (SE on the Send when
	                          * SOLICITED); completes as RN_WC_OP_SEND */
	RN_WR_RDMA_WRITE_IMM,    /* wr.rdma: the Write, then Immediate Data "follows a Write"
	                          * (0xD when SOLICITED); completes as RN_WC_OP_RDMA_WRITE */
	RN_WR_OPCODE_COUNT
};

enum rn_send_flag {
	RN_SEND_SIGNALED = 1u << 0,
	RN_SEND_SOLICITED = 1u << 1,  /* Send types: use the SE opcode (SEND -> SEND_SE, ...) */
	RN_SEND_INLINE = 1u << 2,     /* Send types and Write: copy the data at post time; SGE
	                               * STags are not used (total <= max_inline) */
	RN_SEND_FENCE = 1u << 3,      /* Read Fence: start only after every earlier Read-type WR
	                               * completed */
	RN_SEND_LOCAL_FENCE = 1u << 4,/* start only after every earlier WR completed (meant for
	                               * Invalidate Local STag, accepted on every type) */
	RN_SEND_FLAGS_ALL = (1u << 5) - 1
};

/* A Send Queue WR; member order close to struct ibv_send_wr. SGEs are struct rn_rq_sge
 * (addr, length, stag), the layout of struct ibv_sge. The QP copies the WR, the SGE list and
 * inline data at post time. The fast-register page list is read when the WR executes and
 * must stay valid until it completes. */
struct rn_send_wr {
	uint64_t wr_id;
	struct rn_send_wr *next;
	struct rn_rq_sge *sg_list;
	int num_sge;
	enum rn_wr_opcode opcode;
	unsigned flags;               /* enum rn_send_flag */
	uint32_t imm_data;            /* RN_WR_*_IMM: the immediate value, its 4 bytes in memory
	                               * order go on the wire as they are (verbs' __be32) */
	union {
		struct {
			uint64_t remote_addr;  /* TO */
			uint32_t rkey;         /* remote STag */
		} rdma;
		struct {
			uint32_t inv_stag;
		} send;
		struct {
			uint32_t stag;
		} inv;
		struct rn_bind_wr bind;
		struct rn_fr_wr fast_reg;
	} wr;
};

/* PostSQ (§9.3.1.1, §8.2.1): WRs in list order; the first failing WR stops the list (earlier
 * ones stay posted) and is returned in *bad (optional); *posted (optional) counts the posted.
 * Immediate statuses, checked per WR in this order: INVALID_QP (NULL), INVALID_QP_STATE
 * (rn_qp_post_policy REJECT: Terminate, Error), TOO_MANY_WRS (SQ full), INVALID_OPCODE
 * (unknown; Bind MW without bind_mw), INVALID_MODIFIER (unknown flag bits; INLINE on a type
 * that has no data, or more than max_inline octets), INVALID_SGL_LENGTH (num_sge < 0 or over
 * the QP's limit for the type; Read: more than 1), INVALID_SGL_FORMAT (sg_list NULL with
 * num_sge > 0). In RTS the WRs are processed at once; in Idle they wait; in Closing the WR
 * is enqueued and the QP goes to Error (Bad Close, D35). Everything else (STags,
 * lengths, ORD = 0, fast-register / bind parameters) is a completion error. */
enum rn_status rn_qp_post_send(struct rn_qp *qp, struct rn_send_wr *wr, struct rn_send_wr **bad,
			       uint32_t *posted);

/* PostRQ on the QP (§9.3.1.2): RQ_HAS_SRQ with an S-RQ (post to the S-RQ instead),
 * INVALID_QP_STATE (Terminate, Error), then rn_rq_post's statuses (TOO_MANY_WRS,
 * INVALID_SGL_LENGTH). In Closing the WRs are enqueued and flushed. */
enum rn_status rn_qp_post_recv(struct rn_qp *qp, const struct rn_recv_wr *wr,
			       const struct rn_recv_wr **bad, uint32_t *posted);

/* The immediate checks of one WR that a post makes in RTS, without the state and queue-space
 * ones: RN_OK or the status the post would return for it (rn_qp_post_send's order; receive:
 * INVALID_SGL_LENGTH, INVALID_SGL_FORMAT). The verbs layer validates with them what it
 * completes as flushed in Error (libibverbs' rule, verbs/v_post_err.c). */
enum rn_status rn_qp_check_send(struct rn_qp *qp, const struct rn_send_wr *wr);
enum rn_status rn_qp_check_recv(struct rn_qp *qp, const struct rn_recv_wr *wr);

/* ---- progress engine entry points -------------------------------------------------------- */
/* The stream's fd, or -1 when no stream is associated. */
int rn_qp_fd(struct rn_qp *qp);
/* rn_qp_fd with a descriptor lease taken on it (rn_transport.h), atomically with the QP's
 * own close of its stream; -1: none (or no memory for the lease). */
int rn_qp_fd_hold(struct rn_qp *qp);
/* Read once from the transport (handed-over bytes first), parse, place, complete, answer
 * (Read Responses, Terminate), feed FIN / RST to the state machine. Returns 1 when something
 * was read or done, 0 when the transport had nothing. */
int rn_qp_on_readable(struct rn_qp *qp);
/* Continue transmission (queued FPDUs, SQ WRs, Read Responses, Terminate, FIN); also finishes
 * completions that waited for a grace period. Returns 1 when something moved, else 0. */
int rn_qp_on_writable(struct rn_qp *qp);
/* Whether the engine should watch EPOLLOUT (octets wait for the transport, or a completion
 * waits for an rn_mem grace period: the engine then simply calls on_writable again after its
 * next quiescent point). Never on a stream that signals all as readable (rn_transport.h
 * ready_as_readable): readable stands for send space there. */
bool rn_qp_wants_write(struct rn_qp *qp);

/* The same work from an application thread (receive, then transmit and completions), only
 * when the QP's lock is free: -EBUSY when another thread holds it, else as on_readable. */
int rn_qp_try_progress(struct rn_qp *qp);
/* The CQs qp completes into: its SQ's, then its RQ's. */
void rn_qp_cqs(const struct rn_qp *qp, const struct rn_cq *out[2]);

/* ---- small accessors ---------------------------------------------------------------------- */
uint32_t rn_qp_id(const struct rn_qp *qp);
/* The wake_arg it was created with (rn_qp_init_attr). */
void *rn_qp_wake_arg(const struct rn_qp *qp);
enum rn_qp_state rn_qp_get_state(struct rn_qp *qp);
void *rn_qp_context(const struct rn_qp *qp);
/* The QP's event identity (for rn_evq_ack bookkeeping in verbs/). */
struct rn_event_res *rn_qp_event_res(struct rn_qp *qp);

#endif
