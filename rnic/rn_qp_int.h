/* Private to rn_qp*.c and rn_wr.c: the QP object and the helpers its files share. */
#ifndef RN_QP_INT_H
#define RN_QP_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "rn_qp.h"
#include "rn_stats_int.h"

/* ---- Send Queue ------------------------------------------------------------------------ */
struct rn_sqe {
	struct rn_send_wr wr;           /* copy; next = NULL, sg_list = sge */
	struct rn_rq_sge sge[RN_QP_MAX_SGE];
	uint8_t *inl;                   /* this slot's inline buffer (max_inline octets) */
	uint64_t total;                 /* payload octets (sum of SGEs, or inline length) */
	uint8_t op;                     /* enum rn_wr_opcode after SOLICITED folding */
	uint8_t status;                 /* enum rn_wc_status, valid when done */
	bool inline_data;
	bool signaled;
	bool done;                      /* completed (status valid); CQE not yet written */
	bool wait_sync;                 /* completion held until rn_mem_sync_done(ticket) */
	uint64_t ticket;
};

/* An RDMA Read in flight (ORQ), oldest first. */
struct rn_orq_ent {
	uint32_t sq_idx;                /* absolute SQ index of the Read WR */
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t size;
	uint64_t got;                   /* octets of Read Response placed so far */
};

/* An inbound RDMA Read Request accepted into the IRRQ (responses go out in this order). */
struct rn_irq_ent {
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t size;
	uint32_t src_stag;
	uint64_t src_to;
};

/* ---- transmit ---------------------------------------------------------------------------- */
enum tx_msg { TXM_NONE, TXM_SQ, TXM_RRESP };
enum tx_mark_kind { MARK_SQ, MARK_RRESP, MARK_DONE };

#define RN_TX_MARKS 64u
#define RN_TX_BUDGET (256u * 1024u)   /* octets handed to the transport per pump call */
#define RN_TX_BUF (256u * 1024u)      /* octets (copied or referenced) waiting for the transport */
#define RN_TX_ENTS 256u               /* gather entries queued (power of two) */
#define RN_TX_ZC_MIN 1024u            /* smaller segment payloads are copied */
#define RN_TX_SEG_ENTS 40u            /* entries one zero-copy FPDU may need (else it is copied) */
#define RN_TX_HELD 64u                /* sendv_ref batches the transport may hold (power of two) */
#define RN_TX_FPDU_FRAMING 32u        /* MPA + DDP/RDMAP header, pad, CRC: at most (no markers) */
#define RN_TX_SPACE_MIN (RN_TX_ZC_MIN + RN_TX_FPDU_FRAMING) /* less send space: wait for more */

/* One gather entry of the transmit queue: ext NULL = the next len octets of buf (headers,
 * trailers, copied FPDUs), else len octets at ext (payload in registered memory, referenced
 * only until the pump call that queued it returns: see tx_materialize; or, once a transport
 * took it by reference, until that transport released its batch: struct tx_held). */
struct tx_ent {
	const uint8_t *ext;
	size_t len;
};

/* A sendv_ref batch whose referenced payload the transport still reads: octets [start, end)
 * of the stream (sent_total). A message ending after start completes only once it is
 * released (rn_transport.h): the WR's memory must not change before. */
struct tx_held {
	uint64_t batch, start, end;
};

struct tx_mark {
	uint64_t end;                   /* queued_total at the end of the message's last FPDU */
	uint8_t kind;                   /* enum tx_mark_kind */
	uint32_t idx;                   /* MARK_SQ: absolute SQ index */
};

/* A translation a check made, kept for one use later in the same call (a tx pump, an rx_feed):
 * the first copy from an SGE's start then needs no second lookup of the same STag. The call
 * drops it at its end, since a later one may find the registration gone (rn_mem QSBR). */
struct rn_ref_once {
	struct rn_mem_ref ref;
	bool ok;
};

static inline void rn_ref_once_keep(struct rn_ref_once *o, const struct rn_mem_ref *r)
{
	o->ref = *r;
	o->ok = true;
}

/* The kept translation into *r, once; false when there is none. */
static inline bool rn_ref_once_take(struct rn_ref_once *o, struct rn_mem_ref *r)
{
	if (!o->ok)
		return false;
	o->ok = false;
	*r = o->ref;
	return true;
}

static inline void rn_ref_once_drop(struct rn_ref_once *o)
{
	o->ok = false;
}

struct rn_qp_tx {
	struct mpa_tx mpa;
	uint8_t *buf;
	size_t cap, head, tail;         /* [head, tail) not yet accepted by the transport */
	struct tx_ent ent[RN_TX_ENTS];  /* what goes out, in wire order */
	uint32_t ehead, etail;          /* absolute entry counters */
	size_t eoff;                    /* octets of ent[ehead] already accepted */
	size_t ext_bytes;               /* unsent octets of ext entries */
	uint64_t queued_total, sent_total;
	struct tx_mark marks[RN_TX_MARKS];
	uint32_t mhead, mtail;          /* absolute mark counters */
	uint32_t mscan;                 /* marks before it were looked at (tx_marks) */
	struct tx_held held[RN_TX_HELD];
	uint32_t hhead, htail;          /* absolute counters of held batches */
	uint64_t batch_seq;             /* the last sendv_ref batch number used */
	bool space_known;               /* the transport told its send space (send_space) */
	size_t limit;                   /* this fill's queue limit (tx_limit) */
	uint32_t mulpdu, max_fpdu;
	uint8_t *bounce;                /* one segment's payload, gathered */
	/* the message being segmented */
	enum tx_msg cur;
	uint32_t cur_idx;               /* TXM_SQ: absolute SQ index */
	struct ddp_seg_iter it;
	uint8_t body[RDMAP_READ_REQ_LEN];
	bool has_body;                  /* Read Request / Immediate Data: body is the payload */
	bool more;                      /* TXM_SQ: the WR's second message follows this one
	                                 * (immediate-data WRs are two wire messages) */
	uint32_t src_sge;               /* SGE cursor for SQ payload */
	uint64_t src_off;
	struct rn_ref_once src0;        /* check_sgl's translation of SGE 0 */
	uint32_t msn[RDMAP_NQUEUES];    /* next MSN per queue */
	bool rr_turn;                   /* alternate Read Responses and SQ messages */
	bool stopped;                   /* STOP_SQ: no new SQ / IRRQ segment */
	bool term_pending;              /* Terminate built, not yet framed */
	struct rdmap_term term;
	bool close_pending, fin_sent;
	/* Record mode (rn_transport set_records) waits until the streaming-mode octets queued
	 * in front of the FPDUs (rn_qp_tx_queue_raw) are with the transport: they are no record. */
	bool rec_pending;
	uint64_t raw_end;               /* sent_total once the raw octets are accepted */
};

/* RFC 7306 Immediate Data octet 4 (docs/rdmap.md); other values: plain immediate data */
enum { RN_IMM_KIND_WRITE = 0, RN_IMM_KIND_PREFIX = 1 };

/* ---- receive ----------------------------------------------------------------------------- */
/* RXT_SKIP: a later segment of a message a tolerant QP dropped (only DDP's MSN moves). */
enum rx_target { RXT_DROP, RXT_UNTAGGED, RXT_TAGGED, RXT_NONE, RXT_SKIP };

#define RN_RX_DIRECT_MIN 4096u        /* smaller payload remainders are read into rx.buf */

struct rn_qp_rx {
	struct mpa_rx mpa;
	struct ddp_rx_state ddp;
	uint8_t *buf;                   /* RN_QP_RX_BUF */
	uint8_t *stage;                 /* CRC on: the payload waits here until the CRC passed */
	const uint8_t *run_src;         /* CRC on: stage[run_off, + run_len) still lies at */
	size_t run_off, run_len;        /* run_src, in this rx_feed call's input (stage_flush) */
	bool staged;                    /* this stream stages (CRC negotiated) */
	uint8_t *pre;                   /* octets handed over by rn_cm, not yet parsed */
	size_t pre_len, pre_off;
	bool eof, fin_fed, closed_fed;
	bool stopped;                   /* STOP_INBOUND */
	bool mpa_failed;
	bool big;                       /* FPDUs are large: a buffered read stops at the next head */
	uint8_t small_run;              /* small FPDUs in a row since the last large one */
	/* the FPDU being parsed */
	uint8_t head[MPA_RX_HEAD_MAX];
	size_t head_len, ulpdu_len, ddp_hlen;
	struct rdmap_msg msg;
	struct ddp_place pl;
	enum rx_target target;
	uint32_t need;                  /* RXT_TAGGED: access needed */
	bool err_pending;               /* first error of this segment, acted on at END */
	struct rn_qp_error err;
	bool wc_err;                    /* the error completes the RQ WQE with wc_status */
	uint8_t wc_status;
	bool err_tol;                   /* the error is message-level: a tolerant QP drops the
	                                 * message instead of terminating */
	bool err_copy_hdr;              /* its Terminate copies the DDP header although the code
	                                 * (unexpected opcode) normally copies none */
	bool pl_ok;                     /* ddp_place_decide accepted this segment (pl valid) */
	bool ddp_done;                  /* ddp_rx_deliver already ran for this segment */
	/* tolerant QPs: the rest of a dropped message is skipped (untagged by QN / MSN) */
	bool skip, skip_tagged;
	uint8_t skip_op;
	uint32_t skip_qn, skip_msn;
	/* RFC 7306 Immediate Data (docs/rdmap.md): this segment's 8 octets */
	uint32_t imm_cur;
	uint8_t imm_kind;
	/* a "prefix" Immediate Data was received: the next Send carries imm_val */
	bool imm_pending;
	uint32_t imm_val;
	/* the Receive in progress on QN 0 */
	bool have_wqe, wqe_srq;
	struct rn_rqe wqe;
	uint64_t wqe_len;
	bool wqe_imm;                   /* the Send in progress took the prefix value */
	uint32_t wqe_imm_val;
	struct rn_ref_once wqe0;        /* check_wqe's translation of SGE 0 */
	struct rn_ref_once sink0;       /* a tagged head's translation of its whole range */
};

/* ---- the QP ------------------------------------------------------------------------------ */
struct rn_qp {
	pthread_mutex_t lock;
	struct rn_qp_init_attr ia;      /* as created (limits resolved) */
	struct rn_qp_alloc alloc;
	struct rn_qp_sm sm;
	struct rn_event_res res;
	struct rn_mem_qp mq;            /* identity for rn_mem WR execution */
	struct rn_rq *rq;               /* own RQ (NULL with an S-RQ) */
	struct rn_rq_limit rq_lim;
	/* SQ ring, absolute indices: [retired, head) completed (CQE written or none due) but
	 * not yet retired by a poll, [head, proc) started, [proc, tail) waiting. A slot is
	 * reused only once retired (RDMA Verbs §8.2.4); the state machine's "SQ empty" is head ==
	 * tail (completion generated), so unpolled CQEs never hold up Closing or Error->Idle. */
	struct rn_sqe *sq;
	uint8_t *inl;
	uint32_t sq_head, sq_proc, sq_tail;
	struct rn_sq_retire sq_ret;     /* advanced by rn_cq_poll (rn_cq.h) */
	/* ORQ and IRRQ rings, absolute indices */
	struct rn_orq_ent *orq;
	uint32_t orq_cap, orq_head, orq_tail;
	struct rn_irq_ent *irq;
	uint32_t irq_cap, irq_head, irq_next, irq_tail; /* [head,next) being sent, [next,tail) wait */
	/* LLP */
	struct rn_conn *conn;           /* set with set_conn (rn_qp.c) only */
	_Atomic int conn_fd;            /* conn's fd or -1, for the engine without the lock */
	struct rn_cm_handoff llp;       /* params and positions of the associated stream */
	uint32_t emss;
	struct rn_qp_tx tx;
	struct rn_qp_rx rx;
	/* counters (rn_stats_int.h): the QP's record (in the statistics file, else st_own) and
	 * its device's; written with the lock held */
	struct rn_stats_qp *st_qp;
	struct rn_stats_dev *st_dev;
	struct rn_stats_qp st_own;
	/* Terminate message for Query (sent one in tx.term) */
	bool term_rcvd_valid;
	struct rdmap_term term_rcvd;
	/* offending ULPDU of the pending segment error (for rdmap_term_build) */
	uint8_t term_src[MPA_RX_HEAD_MAX];
	size_t term_src_len, term_src_ulpdu;
	bool term_copy_hdr;             /* rn_qp_tx_terminate: copy the DDP header anyway */
	/* rn_qp_limit_inbound: inbound RDMA Writes [0] / Read Requests [1] only to this STag */
	bool in_only[2];
	rn_stag_t in_only_stag[2];
	bool rresp_ok;                  /* Read Responses may land: the create-time inbound
	                                 * Write enable (one attribute in the spec). Modify's
	                                 * RN_QPM_ACCESS changes ia.inbound_write, the gate of
	                                 * inbound Writes only (D218) */
	bool need_wake;
	bool eng_write;                 /* the engine's last look (rn_qp_wants_write) gave it
	                                 * EPOLLOUT interest: a busy tx needs no wake then */
	bool cq_err;                    /* a CQ overflowed while completing: raise after */
	bool cq_err_sq;
};

/* rn_qp.c: state machine plumbing and completions */
struct rn_qp_cond rn_qp_cond_now(const struct rn_qp *qp);
void rn_qp_input(struct rn_qp *qp, enum rn_qp_input in, const struct rn_qp_error *err);
void rn_qp_local_error(struct rn_qp *qp, struct iwarp_err term, enum rn_qp_async ev, bool in_wc);
void rn_qp_push_cqe(struct rn_qp *qp, bool sq, uint64_t wr_id, enum rn_wc_status st,
		    enum rn_wc_opcode op, uint32_t byte_len, uint16_t flags, uint32_t inv_stag);
/* A successful Receive completion carrying immediate data (RN_CQE_F_IMM is added). */
void rn_qp_push_recv_imm(struct rn_qp *qp, uint64_t wr_id, enum rn_wc_opcode op,
			 uint32_t byte_len, uint16_t flags, uint32_t inv_stag, uint32_t imm);
void rn_qp_push_cqe_tolerated(struct rn_qp *qp, uint64_t wr_id, enum rn_wc_status st,
			      enum rn_wc_opcode op);
/* An async event without a state change (tolerant QPs' dropped messages). */
void rn_qp_raise_async(struct rn_qp *qp, enum rn_qp_async ev);
void rn_qp_sq_complete(struct rn_qp *qp);
void rn_qp_llp_failed(struct rn_qp *qp, long err);
void rn_qp_llp_send_failed(struct rn_qp *qp, long err);
void rn_qp_check_closed(struct rn_qp *qp);
static inline struct rn_sqe *rn_qp_sqe(struct rn_qp *qp, uint32_t idx)
{
	return &qp->sq[idx % qp->alloc.sq_depth];
}

/* rn_qp_tx.c */
void rn_qp_tx_reset(struct rn_qp *qp);
void rn_qp_tx_pump(struct rn_qp *qp);
bool rn_qp_tx_busy(struct rn_qp *qp);
void rn_qp_tx_queue_raw(struct rn_qp *qp, const void *p, size_t n);
/* Entering RTS without markers: ask the transport to keep FPDUs whole (see rn_qp_tx.c). */
void rn_qp_tx_use_records(struct rn_qp *qp);
void rn_qp_tx_terminate(struct rn_qp *qp, struct iwarp_err e);
void rn_qp_tx_drop(struct rn_qp *qp);
void rn_qp_read_done(struct rn_qp *qp, struct rn_orq_ent *o);

/* rn_qp_rx.c */
void rn_qp_rx_reset(struct rn_qp *qp);
int rn_qp_rx_run(struct rn_qp *qp);
void rn_qp_rx_drop_wqe(struct rn_qp *qp, enum rn_wc_status st);

/* rn_wr.c: immediate validation of one WR (no side effects) */
enum rn_status rn_wr_check_send(const struct rn_qp *qp, const struct rn_send_wr *wr);
uint8_t rn_wr_effective_op(const struct rn_send_wr *wr);
bool rn_wr_is_memory(uint8_t op);   /* Bind, Local Invalidate, Fast-Register */
enum rn_wc_opcode rn_wr_wc_opcode(uint8_t op);

#endif
