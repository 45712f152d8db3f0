/* The RNIC device object (RDMA Verbs 1.0 §9.2.1 Open / Query / Close RNIC, §9.4 event
 * handlers, §9.5.3 asynchronous events; acceptance tests T01, T40).
 *
 * A device owns: one rn_mem (PDs, MRs, MWs), one async event queue, one progress engine
 * (rn_progress, its thread started lazily by the first attachment or async handler), and the
 * accounting of CQs, completion channels (the Completion Event Handlers), S-RQs and QPs
 * against the limits Query RNIC reports. Close destroys everything still open.
 *
 * Names and "RNIC in use". Devices are process-local: names are
 * "softrnic0" .. "softrnic7" (NULL = "softrnic0"). An *exclusive* open (the RNIC verbs' Open
 * RNIC, T01) fails with RNIC_IN_USE while the name is open in this process, and any open
 * fails while an exclusive one holds it. A shared open is what libibverbs' ibv_open_device
 * does: every call returns an independent instance (its own PDs, CQs, QPs, engine), the way
 * each ibv_context owns its resources; verbs/ opens shared.
 *
 * Async events. Two consumption modes. Queue mode (libibverbs' ibv_get_async_event, the
 * default): events wait in the bounded queue for rn_device_async_get / _ack, readable through
 * rn_device_async_fd; events raised before anyone looks are kept. Handler mode (§9.4.2), entered
 * by the first rn_device_set_async_handler: the progress engine delivers each event to the
 * handler (events still queued at that moment included) and acks it when the handler returns.
 * Setting another handler replaces the first: once set returns, only the new one is called.
 * Setting NULL turns notification off: events raised meanwhile are lost (T40).
 *
 * Threads: every function may be called from any thread, except close (no other call on the
 * device may be running or follow it). Attachment callbacks run on the engine's thread. */
#ifndef RN_DEVICE_H
#define RN_DEVICE_H

#if !defined(RNIC_H) && !defined(RNIC_INTERNAL)
#error "include rnic.h, the RNIC's public header"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rn_cm.h"
#include "rn_cq.h"
#include "rn_event.h"
#include "rn_mem.h"
#include "rn_progress.h"
#include "rn_srq.h"
#include "rn_status.h"

#define RN_DEVICE_NAME_DEFAULT "softrnic0"
#define RN_DEVICE_UNITS 8

enum rn_pbl_mode { RN_PBL_PAGE_LIST = 0, RN_PBL_BLOCK_LIST = 1 };
enum rn_srq_dequeue { RN_SRQ_DEQUEUE_ARRIVAL = 0, RN_SRQ_DEQUEUE_SEQUENTIAL = 1 };

/* Query RNIC (§9.2.1.2), with the libibverbs extras verbs/ needs. */
struct rn_device_attr {
	char vendor[32];          /* vendor information */
	uint32_t vendor_id, vendor_part_id, hw_ver;
	uint32_t max_qp;
	uint32_t max_qp_wr;       /* outstanding WRs on any SQ or RQ */
	uint32_t max_send_sge;    /* per Send-type WR; also RQ and S-RQ WRs (§9.2.1.2) */
	uint32_t max_write_sge;   /* per RDMA Write WR */
	uint32_t max_recv_sge;    /* = max_send_sge, for libibverbs' max_sge_rd-style users */
	uint32_t max_inline;      /* inline data octets per WR */
	uint32_t max_cq;
	uint32_t max_cqe;         /* entries per CQ */
	uint32_t max_ceh;         /* Completion Event Handlers = completion channels */
	uint32_t max_mr;
	uint32_t max_pbl;         /* entries of one fast-register page list */
	uint64_t max_mr_size;
	uint32_t max_pd;
	uint32_t max_mw;
	uint32_t ird_total;       /* 0: IRD resources are not shared across QPs */
	uint32_t ord_total;       /* 0: ORD resources are not shared */
	uint32_t max_ird, max_ord;/* per QP */
	bool can_modify_ird;      /* after create */
	bool can_increase_ord;
	bool can_resize_qp;       /* max WRs per QP modifiable */
	enum rn_pbl_mode pbl_mode;
	uint64_t page_size_cap;   /* bit n set: pages of 2^n octets supported */
	bool srq_supported;
	uint32_t max_srq;         /* 0 when not supported (§6.3) */
	uint32_t max_srq_wr;      /* 0 when not supported */
	enum rn_srq_dequeue srq_dequeue;
	bool cq_overflow_detection;
	uint32_t max_async_events;/* depth of the async event queue */
	unsigned spin_us;         /* progress engine busy-poll window */
};

struct rn_device_open_attr {
	const char *name;             /* NULL = RN_DEVICE_NAME_DEFAULT */
	enum rn_pbl_mode pbl_mode;    /* BLOCK_LIST: BLOCK_LIST_UNSUPPORTED */
	bool exclusive;               /* see "RNIC in use" above */
	bool inline_progress;         /* no engine thread: the application calls
	                               * rn_device_progress() (busy-polling applications) */
	const struct rn_device_attr *limits; /* NULL = defaults; otherwise every non-zero
	                                      * count field overrides the default (may only
	                                      * lower it); for tests and small footprints */
	int spin_us;                  /* busy-poll window: 0 = RN_PROGRESS_SPIN_DEFAULT_US,
	                               * < 0 = none (block at once) */
};
void rn_device_open_attr_default(struct rn_device_open_attr *a);

struct rn_device;

/* Open RNIC. INVALID_MODIFIER (unknown name), BLOCK_LIST_UNSUPPORTED, RNIC_IN_USE,
 * NO_RESOURCES. a NULL = defaults (shared open of softrnic0). */
enum rn_status rn_device_open(const struct rn_device_open_attr *a, struct rn_device **out);
enum rn_status rn_device_query(struct rn_device *dev, struct rn_device_attr *attr);
/* Close RNIC: stops the engine, destroys every QP, CM attachment, S-RQ, CQ, completion
 * channel, MW, MR and PD still open (acknowledging events the consumer took and did not ack),
 * then the device. INVALID_RNIC for NULL or a device already closed. */
enum rn_status rn_device_close(struct rn_device *dev);
const char *rn_device_name(const struct rn_device *dev);

/* The device's parts (never NULL on an open device). rn_device_engine starts the engine's
 * thread when it is not running yet (not in inline mode). */
struct rn_mem *rn_device_mem(struct rn_device *dev);
struct rn_evq *rn_device_evq(struct rn_device *dev);
struct rn_progress *rn_device_engine(struct rn_device *dev);
/* Inline mode: drive the engine (rn_progress_poll); -EBUSY when the engine has a thread. */
int rn_device_progress(struct rn_device *dev, int timeout_ms);

/* Consumer-side progress: an application found cq empty. Runs the
 * receive / transmit work of the QPs that complete into cq in the caller's thread (a try-lock
 * per QP: one the engine or another poller works on is skipped; one read per QP, at most
 * RN_DEVICE_POLL_QPS QPs per call), as an rn_mem reader for the duration. RN_DEVICE_STREAK_RUN
 * polls in a row (empty ones, ones that received, ones that reaped: rn_device_cq_reaped), each
 * starting within RN_DEVICE_STREAK_NS of the end of the consumer's call before (a poll or a
 * post: rn_device_consumer_posted), mark a busy-polling consumer: the engine's thread is put on
 * hold (rn_progress_hold) for RN_DEVICE_HOLD_US, so it does not compete for the core
 * (docs/decisions.md). Returns the number of QPs that did something (then poll
 * again). */
#define RN_DEVICE_POLL_QPS 8
#define RN_DEVICE_POLL_ALL 64     /* up to this many QPs, also those of other CQs */
#define RN_DEVICE_STREAK_NS 10000u
#define RN_DEVICE_STREAK_RUN 4u
#define RN_DEVICE_HOLD_US 2000u
int rn_device_cq_progress(struct rn_device *dev, const struct rn_cq *cq);
/* A poll of a CQ returned completions: it counts in the busy-poll run above as well. */
void rn_device_cq_reaped(struct rn_device *dev);
/* The consumer posted work requests (started at `start`, rn_progress_now_ns): a post that
 * starts long after the consumer's last call ends the busy-poll run; one right behind it
 * keeps the run going, however long the post took. Worth telling for posts of at least
 * RN_DEVICE_LONG_POST octets: a shorter one is over too soon to matter. */
#define RN_DEVICE_LONG_POST 16384u
void rn_device_consumer_posted(struct rn_device *dev, uint64_t start);
/* The consumer posted to qp (created by rn_device_qp_create): a poll of qp's CQs tries qp
 * first. With many QPs on one CQ, a poll tries only a few of them (one on an armed CQ);
 * the one just posted to is the one whose completion the consumer waits for next. */
struct rn_qp;
void rn_device_qp_posted(struct rn_qp *qp);
/* The consumer is about to block (it armed a CQ): end any hold, the engine watches again. */
void rn_device_consumer_blocks(struct rn_device *dev);

/* ---- resources counted against the limits ----------------------------------------------- */
/* Create CQ (§9.2.3.1) with the device's max_cqe and async queue. NO_RESOURCES at max_cq,
 * CQ_TOO_BIG, INVALID_RNIC. channel may be NULL. */
enum rn_status rn_device_cq_create(struct rn_device *dev, uint32_t min_cqe,
				   struct rn_comp_channel *channel, void *context,
				   struct rn_cq **out, uint32_t *allocated);
/* INVALID_CQ when the CQ is not this device's; then rn_cq_destroy's statuses. */
enum rn_status rn_device_cq_destroy(struct rn_device *dev, struct rn_cq *cq);
/* Completion channels (Completion Event Handler identifiers): NO_RESOURCES at max_ceh. */
enum rn_status rn_device_channel_create(struct rn_device *dev, struct rn_comp_channel **out);
/* INVALID_CEH when not this device's, CQ_IN_USE while a CQ uses it. */
enum rn_status rn_device_channel_destroy(struct rn_device *dev, struct rn_comp_channel *ch);
/* Create S-RQ (§9.2.4.1): attr->pd is checked and referenced, the device limits, async queue
 * and an S-RQ number are filled in. NO_RESOURCES at max_srq, INVALID_PD, then rn_srq_create's
 * statuses. */
enum rn_status rn_device_srq_create(struct rn_device *dev, const struct rn_srq_attr *attr,
				    struct rn_srq **out, uint32_t *alloc_wr,
				    uint32_t *alloc_sge);
enum rn_status rn_device_srq_destroy(struct rn_device *dev, struct rn_srq *srq);

/* Counts of live objects, for tests and verbs/ (PDs, MRs and MWs are counted by rn_mem). */
struct rn_device_counts {
	uint32_t qp, cq, channel, srq, cm;
};
void rn_device_counts(struct rn_device *dev, struct rn_device_counts *c);

/* ---- async events ------------------------------------------------------------------------ */
/* Queue mode: take / ack one event (rn_evq_get semantics: 0 or EAGAIN; EINVAL in handler
 * mode). The device remembers events taken and not acked, so close never waits for them. */
int rn_device_async_get(struct rn_device *dev, struct rn_async_event *ev, int timeout_ms);
void rn_device_async_ack(struct rn_device *dev, const struct rn_async_event *ev);
int rn_device_async_fd(struct rn_device *dev);
/* Set Asynchronous Event Handler (§9.4.2): see the top of this file. Starts the engine. */
typedef void (*rn_device_async_fn)(struct rn_device *dev, const struct rn_async_event *ev,
				   void *arg);
enum rn_status rn_device_set_async_handler(struct rn_device *dev, rn_device_async_fn fn,
					   void *arg);
/* Post an event on the device's own resource (RNIC Catastrophic Failure). */
enum rn_status rn_device_post_event(struct rn_device *dev, enum rn_event_id id);

/* ---- connections driven by the engine --------------------------------------------------- */
/* What the engine calls for an attached connection object; rn_qp's entry points in
 * production (rn_device_qp_create), anything with the same contract in tests. fd may change
 * or become -1 at any time; the object then calls rn_device_conn_wake. */
struct rn_dev_conn_ops {
	int (*fd)(void *obj);
	int (*on_readable)(void *obj);
	int (*on_writable)(void *obj);
	bool (*wants_write)(void *obj);
	void (*destroy)(struct rn_device *dev, void *obj); /* close of the device: destroy obj
	                                                    * (NULL: nothing) */
	/* Consumer-side progress (rn_device_cq_progress); both NULL: never. cqs: the CQs obj
	 * completes into (send, receive; fixed for its life, read once at attach). try_progress:
	 * on_readable + on_writable work from an application thread if obj is free now: < 0
	 * busy, else as on_readable. */
	void (*cqs)(void *obj, const struct rn_cq *out[2]);
	int (*try_progress)(void *obj);
	/* fd(obj) with a descriptor lease on it (rn_transport.h), taken atomically with obj's
	 * close of that fd; -1: none. NULL: the device leases fd(obj) itself, for an object
	 * that closes its fd only after detach. */
	int (*fd_hold)(void *obj);
};
struct rn_dev_conn;

/* Two steps because the object needs the wake target before it exists (rn_qp_init_attr's
 * wake / wake_arg = rn_device_conn_wake / the conn): alloc, create the object, attach. */
enum rn_status rn_device_conn_alloc(struct rn_device *dev, const struct rn_dev_conn_ops *ops,
				    struct rn_dev_conn **out);
/* Register obj with the engine (its fd, leased; EPOLLOUT while wants_write) and start the
 * engine if needed. */
enum rn_status rn_device_conn_attach(struct rn_dev_conn *c, void *obj);
/* "Look at me again" (fd changed, bytes wait): any thread, any time until conn_free;
 * a no-op once detached. Signature of rn_qp_init_attr.wake. */
void rn_device_conn_wake(void *conn);
/* Remove from the engine. Afterwards no callback for it runs (unless called from one). The
 * conn stays valid for wakes until rn_device_conn_free. */
void rn_device_conn_detach(struct rn_dev_conn *c);
void rn_device_conn_free(struct rn_dev_conn *c);

/* rn_qp bound to the above (rn_device_qp.c). Create fills attr's mem, evq, limits, qp_id,
 * wake and wake_arg (the caller's values of those are ignored), counts the QP (NO_RESOURCES at
 * max_qp) and attaches it; destroy detaches, then rn_qp_destroy (MW_BOUND_TO_QP: still
 * attached and counted). */
struct rn_qp;
struct rn_qp_init_attr;
struct rn_qp_alloc;
enum rn_status rn_device_qp_create(struct rn_device *dev, struct rn_qp_init_attr *attr,
				   struct rn_qp **out, struct rn_qp_alloc *alloc);
enum rn_status rn_device_qp_destroy(struct rn_device *dev, struct rn_qp *qp);

/* ---- connection setup driven by the engine ---------------------------------------------- */
struct rn_dev_cm;
/* Called on the engine thread whenever the state was seen to change (intermediate states
 * may be skipped): WAIT_ACCEPT (passive: decide with rn_device_cm_accept / _reject),
 * ESTABLISHED (detach, then rn_cm_handoff to a QP), REJECTED, FAILED (detach and destroy).
 * It may call any rn_device_cm_* function, including detach. */
typedef void (*rn_device_cm_fn)(void *arg, struct rn_dev_cm *att, enum rn_cm_state state);
/* Drive cm (from rn_cm_connect or rn_cm_passive) from the engine: its fd events and its
 * state timeout (through an engine timer). The device owns cm until detach. NO_RESOURCES. */
enum rn_status rn_device_attach_cm(struct rn_device *dev, struct rn_cm *cm, rn_device_cm_fn fn,
				   void *arg, struct rn_dev_cm **out);
/* rn_cm_accept / rn_cm_reject under the attachment's lock; the engine continues. */
int rn_device_cm_accept(struct rn_dev_cm *att, const void *pd, size_t pd_len);
int rn_device_cm_reject(struct rn_dev_cm *att, const void *pd, size_t pd_len);
/* The CM, for reading (state, private data, errors) from the callback or after detach. */
struct rn_cm *rn_device_cm_get(struct rn_dev_cm *att);
/* Stop driving; returns the CM (now the caller's) and frees att. Afterwards no callback runs
 * for it (unless detach was called from that callback). */
struct rn_cm *rn_device_detach_cm(struct rn_dev_cm *att);

#endif
