/* librdmacm over rn_cm: internal state shared by the files of verbs/rdmacm/.
 *
 * Everything here is static or prefixed rcm_; the only exported names are librdmacm's own
 * (RCM_EXPORT), so the library can become a drop-in librdmacm.so.1.
 *
 * Model (docs/rdmacm.md)
 *   - One library lock (rcm_lock) guards every id, channel and event. API calls take it; the
 *     CM engine thread (rcm_engine.c) takes it while it drives the rn_cm objects, listeners
 *     and QP-less streams, and never holds it while waiting.
 *   - An event channel is a socketpair: the consumer's end is channel->fd (readable while
 *     events are pending, one octet per queued event); rdma_get_cm_event reads one octet with
 *     the fd's own blocking mode, then pops the queue.
 *   - An id is a struct rcm_id whose first member is the public struct rdma_cm_id.
 */
#ifndef RCM_INT_H
#define RCM_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h> /* rdma_create_srq and friends */

#include "mpa.h"
#include "rnic.h"

#define RCM_EXPORT __attribute__((visibility("default")))

/* librdmacm's private_data_len is a uint8_t; the MPA limit (pd_max, mpa_frame.h) counts the
 * 4-octet RFC 6581 block too, so with the default 512-octet PD_Length every length fits. */
#define RCM_PD_MAX 255u

/* Transport backlog of the listener rdma_bind_addr opens: the kernel's own maximum (somaxconn
 * caps it), since the library accepts every connection at once and a small queue would drop
 * the SYNs of clients that connect back to back. rdma_listen's backlog is counted by the
 * library (backlog_full in rcm_conn.c), in connection requests the application has seen. */
#define RCM_BIND_BACKLOG 4096

/* Connections a listener keeps before their MPA Request is complete. They are the peer's
 * word only (anyone who can open a TCP connection makes one), so they never count against
 * the application's backlog; past this many the oldest is dropped for the newest, and each
 * is dropped on its own when its MPA timer (RN_CM_DEFAULT_TIMEOUT_MS) runs out. */
#define RCM_EMBRYONIC_MAX 256
/* Connections a listener accepts per engine pass (progress_listen). */
#define RCM_ACCEPT_BURST 8u

/* Explicit id states. */
enum rcm_state {
	RCM_IDLE,           /* created */
	RCM_BOUND,          /* rdma_bind_addr */
	RCM_ADDR_RESOLVED,  /* ADDR_RESOLVED queued */
	RCM_ROUTE_RESOLVED, /* ROUTE_RESOLVED queued */
	RCM_LISTEN,         /* listener handle open, accepting */
	RCM_CONNECTING,     /* active: rn_cm running */
	RCM_REQ_RECV,       /* child, not yet visible: waiting for the MPA Request */
	RCM_REQ_PENDING,    /* child: CONNECT_REQUEST queued, the consumer decides */
	RCM_ACCEPTING,      /* child: accepted, waiting for ESTABLISHED (RTR) */
	RCM_REJECTING,      /* child: Reject being sent */
	RCM_CONNECTED,      /* ESTABLISHED reported; stream owned by the QP or by us */
	RCM_DISCONNECTED,   /* DISCONNECTED reported */
	RCM_FAILED,         /* attempt ended: REJECTED / UNREACHABLE / CONNECT_ERROR reported */
};

struct rcm_id;

struct rcm_event {
	struct rdma_cm_event ev;      /* first: the consumer's pointer */
	struct rcm_event *next;
	struct rcm_id *owner;         /* whose acks are awaited (the listener for a request) */
	bool delivered;               /* handed to the consumer, not yet acked */
	uint8_t pd[RCM_PD_MAX];       /* copy of the private data ev.param.conn points to */
};

struct rcm_channel {
	struct rdma_event_channel pub; /* first: fd = the consumer's end */
	int wfd;                       /* our end: one octet per queued event */
	struct rcm_event *head, *tail; /* queued, not yet taken */
	bool signalled;                /* the octet is in the socket, or a getter holds it */
	unsigned ids;                  /* ids on this channel (destroy refuses while > 0) */
	struct rcm_channel *next_dead; /* destroyed, kept for reuse (rcm_channel.c) */
};

struct rcm_id {
	struct rdma_cm_id pub;   /* first */
	enum rcm_state state;
	struct rcm_channel *ch;
	bool sync;               /* created with a NULL channel: calls wait for their event */
	bool bound;              /* route.addr.src_addr set by bind or resolve */
	struct rcm_id *next, *prev; /* all ids (rcm_ids) */
	struct rcm_id *bnext, *bprev; /* ids the engine drives (rcm_busy) */
	bool busy;               /* on rcm_busy */
	struct rcm_id *dnext, *dprev; /* quiet ids whose QP's stream ended (rcm_down_lock) */
	bool down_queued;        /* on that list (rcm_down_lock) */
	struct rcm_id *listener; /* children: the listening id (NULL once detached) */
	bool evicted;            /* hidden child dropped for a newer one (RCM_EMBRYONIC_MAX) */
	struct rn_cm *cm;
	struct rn_conn *conn;    /* listener handle (BOUND, LISTEN) or QP-less stream (CONNECTED) */
	bool qp_linked;          /* the stream went to the QP (rcm_qp.c) */
	atomic_bool llp_down;    /* set by the QP's LLP close callback (any thread, no lock) */
	unsigned events_out;     /* events delivered and not acked that name this id as owner */
	int backlog;
	int reuseaddr, afonly;
	uint8_t tos;
	bool tos_set;
	uint8_t ird, ord;        /* requested in connect / accept (0xFF: device maximum) */
	struct rcm_event *req_event; /* sync child: its CONNECT_REQUEST, acked on accept */
	struct ibv_qp_init_attr *ep_attr; /* rdma_create_ep passive: QP attrs for children */
	bool own_cqs;            /* send/recv CQs and channels created by rdma_create_qp */
	bool own_pd;             /* pd is the device default (not ours to free) */
};

static inline struct rcm_id *rcm_id_of(struct rdma_cm_id *id)
{
	return (struct rcm_id *)id;
}

static inline struct rcm_channel *rcm_ch_of(struct rdma_event_channel *ch)
{
	return (struct rcm_channel *)ch;
}

/* ---- rcm_lib.c: lock, id list, errno helper ------------------------------------------ */

extern pthread_mutex_t rcm_lock;
extern pthread_cond_t rcm_cond; /* broadcast when an event is acked or an id changes state */
extern struct rcm_id *rcm_ids;
/* The ids the engine drives: all but connected ones whose QP carries the stream (they need
 * it again only when the stream ends), so that a process with 10,000 connections does not
 * walk them on every wake-up. */
extern struct rcm_id *rcm_busy;

/* rcm_ids and rcm_busy (rcm_lock held); unlink also takes id off the down list */
void rcm_id_link(struct rcm_id *id);
void rcm_id_unlink(struct rcm_id *id);
void rcm_busy_link(struct rcm_id *id);
void rcm_busy_unlink(struct rcm_id *id);
/* The QP's close callback sets llp_down and queues its id for the engine (any thread, under
 * the QP's lock: a leaf lock of its own, never rcm_lock); the engine takes them back
 * (rcm_lock held). */
void rcm_down_queue(struct rcm_id *id);
void rcm_down_take(void);

/* librdmacm convention: return -1 with errno = err (a positive value). */
int rcm_err(int err);

/* ---- rcm_channel.c: events ----------------------------------------------------------- */

struct rcm_channel *rcm_channel_new(void);
void rcm_channel_free(struct rcm_channel *ch);

/* Queue an event for id on its channel (caller holds rcm_lock). pd is copied. A
 * CONNECT_REQUEST names the child as ev.id and its listener as owner and listen_id. */
int rcm_post(struct rcm_id *id, enum rdma_cm_event_type type, int status, const void *pd,
	     size_t pd_len, const struct mpa_conn_params *params);

/* Drop the queued (not yet taken) events naming id as ev.id or owner; children found in
 * dropped CONNECT_REQUESTs are returned through the callback (caller holds rcm_lock). */
void rcm_drop_events(struct rcm_id *id, void (*child)(struct rcm_id *c));

/* Move id's queued events to channel to (rdma_migrate_id). */
void rcm_move_events(struct rcm_id *id, struct rcm_channel *to);

/* Sync ids: wait for the next event on id's own channel; 0 if it is `want` (acked unless
 * keep != NULL, which receives it unacked), else -1 with errno. */
int rcm_sync_wait(struct rcm_id *id, enum rdma_cm_event_type want, struct rdma_cm_event **keep);

/* ---- rcm_engine.c: the thread that drives connections -------------------------------- */

int rcm_engine_get(void);  /* start (or reference) the engine; 0 or -errno */
void rcm_engine_put(void); /* drop a reference; the last one stops and joins the thread */
void rcm_engine_kick(void); /* something to drive changed: rebuild the wait set */

/* ---- rcm_conn.c: per-state progress, called by the engine with rcm_lock held --------- */

/* What id waits on now: fd (-1: nothing), poll events, ms until its timer (-1: none). */
int rcm_conn_wait(const struct rcm_id *id, short *events, int *timeout_ms);
/* Connected with the stream on its QP and nothing to report, or disconnected and reported:
 * the engine can leave it (rcm_busy) until the stream ends (rcm_down_queue). */
bool rcm_conn_quiet(const struct rcm_id *id);
/* rcm_mpa_env.c: SOFTRNIC_MPA's options applied to p; -1 (said on stderr) when unknown */
int rcm_mpa_env(struct mpa_policy *p);
void rcm_conn_progress(struct rcm_id *id);
void rcm_id_teardown(struct rcm_id *id); /* release CM / stream / listener state */

/* ---- rcm_dev.c: the softrnic device, default PD, QP link ----------------------------- */

struct ibv_context *rcm_dev_context(void); /* opened once; NULL if no device */
struct ibv_pd *rcm_dev_pd(struct ibv_context *ctx);
/* The id gets the device (id->verbs) and, unless it has one, the device's default PD as
 * id->pd, as librdmacm's ucma_get_device does when an id is bound to a device (bind to a
 * local address, address resolution, a connection request): rdma_reg_msgs(id) needs it. */
void rcm_dev_attach(struct rdma_cm_id *id);
void rcm_dev_max_rd(struct ibv_context *ctx, uint8_t *ird_max, uint8_t *ord_max);

/* Hand an ESTABLISHED connection to id's QP (-errno on failure; h is consumed either way). */
int rcm_qp_start(struct rcm_id *id, struct rn_cm_handoff *h);
/* The QP's state as libibverbs reports it (IBV_QPS_UNKNOWN when unreadable). */
enum ibv_qp_state rcm_qp_state(struct rcm_id *id);
/* Graceful disconnect of a QP-owned stream (modify to SQD = iWARP Closing). */
int rcm_qp_disconnect(struct rcm_id *id);
/* Stop the QP's LLP close notifications to id (rcm_qp_start registers them); on return no
 * callback naming id runs. Any thread; rcm_lock may be held. */
void rcm_qp_unwatch(struct rcm_id *id);

/* DISCONNECTED for a QP-owned stream: the verbs layer calls back when the QP's stream ends
 * (softrnic_qp_set_close_cb: the peer's FIN, reset, Terminate, local error or close); the
 * callback sets id->llp_down and rings the engine's doorbell, and the engine reports
 * DISCONNECTED under rcm_lock. No polling of the QP's state. */

#endif
