/* Internals of libsoftrnic_vipl (docs/vipl.md). Every name is vipl_-prefixed and hidden.
 *
 * Locking: one global handle-table lock (vipl_handle.c), taken only briefly to turn a handle
 * into a referenced object; then one mutex per NIC guards every object of that NIC (VIs, CQs,
 * regions, requests) and is never held while an application callback runs. Lock order:
 * table lock -> NIC lock. The NIC thread acknowledges every verbs / rdma_cm event before it
 * takes the NIC lock, so destroying ids, QPs and CQs under the NIC lock cannot deadlock. */
#ifndef VIPL_INT_H
#define VIPL_INT_H

#include "vipl.h"

#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VIPL_EXPORT __attribute__((visibility("default")))

#define VIPL_ADDR_LEN 6             /* IPv4 + port */
#define VIPL_MAX_DISC 64
#define VIPL_MAX_SEGS 1024          /* MaxSegmentsPerDesc (bounce copy above the QP SGE limit) */
#define VIPL_MAX_XFER (4u << 20)    /* MaxTransferSize */
#define VIPL_MAX_QDESC 16384        /* MaxDescriptorsPerQueue */
#define VIPL_QP_DEPTH 256           /* WRs in flight per queue; the rest wait in VIPL */
#define VIPL_BACKLOG_MS 10000       /* longest hold of a request before a matching ConnectWait */
#define VIPL_BACKLOG_MAX 128
#define VIPL_ACCEPT_MS 5000         /* wait for the initiator's confirmation (VIA §5.1) */
#define VIPL_PEER_RETRY_MS 20
#define VIPL_RDV_RECHECK_MS 20      /* a request held at the host's well-known port looks for
                                     * its process again */
#define VIPL_RDV_RETAKE_MS 1000     /* a NIC without the well-known port tries to take it */
#define VIPL_MAX_REDIRECTS 4        /* a connect follows at most this many redirections */
#define VIPL_DFC_LOOK_MS 1          /* the NIC thread looks for credits of deferred sends */
#define VIPL_WIRE_FDS 2048        /* sockets of a wire the NIC thread polls (VI/TCP) */
#define VIPL_REGION_BUCKETS 1024    /* memory-handle hash (lookups on every posted segment) */

/* ---- handles ------------------------------------------------------------------------ */
enum vipl_kind { VK_NIC = 1, VK_PTAG, VK_VI, VK_CQ, VK_CONN, VK_EVENT };

struct vipl_obj {
	enum vipl_kind kind;
	atomic_int refs;     /* the table's reference + one per call in progress */
	atomic_bool dead;    /* removed from the table; freed when refs reaches 0 */
	void *handle;        /* the value applications hold */
	struct vipl_nic *nic;
};

void *vipl_handle_add(struct vipl_obj *o);
/* The object behind h if it is live and of kind k, with a reference taken; else NULL. */
struct vipl_obj *vipl_handle_get(void *h, enum vipl_kind k);
void vipl_handle_put(struct vipl_obj *o);
void vipl_handle_remove(struct vipl_obj *o); /* drops the table's reference */
void vipl_obj_free(struct vipl_obj *o);      /* per-kind destructor (vipl_nic.c) */

/* ---- memory ------------------------------------------------------------------------- */
struct vipl_ptag {
	struct vipl_obj o;
	struct ibv_pd *pd;
	unsigned users;      /* regions + VIs */
	struct vipl_ptag *next;
};

struct vipl_region {
	VIP_MEM_HANDLE handle;   /* what the application holds (the first STag) */
	uintptr_t va;            /* as registered by the application */
	uintptr_t lo, hi;        /* page-rounded outwards [lo, hi) (VIA §3.2.1, §9.5.3) */
	struct vipl_ptag *ptag;
	bool rdma_write, rdma_read, writable;
	struct ibv_mr *mr;       /* mr->lkey may differ from handle after SetMemAttributes */
	struct vipl_region *next;
};

struct vipl_region *vipl_region_find(struct vipl_nic *nic, VIP_MEM_HANDLE h);
void vipl_regions_free(struct vipl_nic *nic);
struct vipl_region **vipl_region_bucket(struct vipl_nic *nic, VIP_MEM_HANDLE h);

/* ---- VIPL completion queues ---------------------------------------------------------- */
struct vipl_cqe {
	void *vi;        /* VI handle */
	bool recv;
};

/* A tag registration of a CQ (vipl_tag.c). */
struct vipl_tag {
	VIP_ULONG tag, priority;
	void *ev;                    /* struct vipl_event, referenced */
	struct vipl_tag *next;
};

struct vipl_cq {
	struct vipl_obj o;
	struct vipl_tag *tags;       /* highest priority first */
	struct vipl_cqe *ring;
	size_t cap, head, count;
	unsigned bound;              /* work queues tied to it */
	VIP_CQ_NOTIFY_HANDLER notify;
	void *notify_ctx;
	struct vipl_cq *next;
};

struct vipl_vi;
void vipl_cq_push(struct vipl_cq *cq, const struct vipl_vi *vi, bool recv);
/* vipl_tag.c */
void vipl_tags_signal(struct vipl_cq *cq, const struct vipl_vi *vi);
void vipl_tags_free(struct vipl_cq *cq);
void vipl_event_free(struct vipl_obj *o);

/* ---- work queues --------------------------------------------------------------------- */
enum vipl_wqe_state { WQE_WAIT, WQE_ISSUED, WQE_FINISHED, WQE_DONE };

struct vipl_wqe {
	VIP_DESCRIPTOR *desc;
	enum vipl_wqe_state state;
	uint32_t status;         /* error bits found so far (finished: the final status) */
	uint32_t length, imm;
	bool has_imm;
	unsigned pending;        /* verbs WRs not yet completed */
	unsigned op;             /* VIP_CONTROL_OP_* */
	bool fence, recv;
	uint16_t nseg;           /* SegCount as validated at post (the bounce scatter's bound) */
	uint32_t msgno;          /* VI/TCP: the message number it went out with */
	uint64_t tx_end;         /* VI/TCP: the stream octet its last segment ends at */
	uint32_t filled;         /* VI/TCP: octets placed so far (a receive, a Read) */
	uint64_t rr_seq;         /* RR: this message's number among those that take a receive of
	                          * the peer (vipl_rr.c); 0 for the others */
	void *bounce;            /* copy buffer when the segments exceed the QP's SGE limit */
	struct ibv_mr *bounce_mr;
	struct vipl_wqe *next;
};

struct vipl_wq {
	struct vipl_wqe *head, *tail; /* post order; head is the next to dequeue */
	struct vipl_wqe *issue;       /* first entry not yet given to the QP */
	size_t count;
	unsigned inflight;            /* verbs WRs outstanding on the QP */
	struct vipl_cq *cq;
	VIP_VI_NOTIFY_HANDLER notify;
	void *notify_ctx;
	struct vipl_wqe *spare;       /* recycled entries: no malloc per post in steady state */
	unsigned nspare;
	unsigned nfinished;           /* entries FINISHED, not yet DONE: 0 lets every poll skip
	                               * the in-order completion walk */
};

/* ---- VIs and connections ------------------------------------------------------------- */
struct vipl_conn {
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *ack;            /* RR (vipl_rr.c): [0] read by the peer's acknowledgement Reads,
	                          * [8] the sink of ours, [16] written by the peer: how many of
	                          * our receive-taking messages it completed, [24] the source
	                          * of our own count's Writes */
	struct ibv_mr *ack_mr;
	uint64_t peer_ack_va;
	uint32_t peer_ack_stag;
	uint64_t rr_sent;        /* RR: receive-taking messages issued (the last rr_seq) */
	uint64_t rr_acked;       /* RR: of those, known completed at the peer */
	uint64_t rr_read_covers; /* RR: rr_sent when the acknowledgement Read in flight was
	                          * issued; 0: none in flight */
	unsigned rr_waiting;     /* RR: sends done here, waiting for the peer's acknowledgement */
	uint64_t rr_wait_us;     /* RR: since when the oldest of them waits (about) */
	uint64_t rx_done;        /* RR: receives completed here */
	uint64_t rx_told;        /* RR: the count last written to the peer */
	unsigned ack_writes;     /* RR: acknowledgement Writes in flight */
	bool peer_dfc;           /* the peer defers its sends (vipl_dfc.c): tell it rx_posted */
	uint64_t rx_posted;      /* receives posted to this connection's QP */
	uint64_t credit_told;    /* the count last written to the peer */
	bool credit_writing;     /* a credit Write in flight */
	uint64_t dfc_sent;       /* DFC: receive-taking messages issued */
	bool up;                 /* ESTABLISHED seen */
};

enum vipl_connect_mode { CM_NONE, CM_CLIENT, CM_ACCEPT, CM_PEER_ACTIVE, CM_PEER_PASSIVE };

struct vipl_vi {
	struct vipl_obj o;
	VIP_VI_ATTRIBUTES attr;      /* requested attributes (ReliabilityLevel without DFC) */
	bool dfc;                    /* VIP_SERVICE_DFC: sends wait for the peer's receives */
	bool dfc_interrupt;          /* the NIC thread issues deferred sends (vipl_dfc.c) */
	void *user_data;             /* VipSetUserData */
	struct vipl_ptag *ptag;
	VIP_VI_STATE state;
	VIP_ULONG granted_mtu;
	VIP_VI_ATTRIBUTES remote;    /* the peer's attributes (granted MTU) */
	struct vipl_wq sq, rq;
	struct vipl_conn c;
	/* connection in progress */
	enum vipl_connect_mode mode;
	VIP_RETURN result;           /* VIP_NOT_DONE while the connect is pending */
	bool peer;                   /* a peer connect's outcome not yet taken (PeerDone/Wait) */
	uint8_t local_disc[VIPL_MAX_DISC], remote_disc[VIPL_MAX_DISC];
	uint16_t local_disc_len, remote_disc_len;
	uint8_t remote_host[VIPL_ADDR_LEN]; /* as the application named it */
	uint8_t conn_host[VIPL_ADDR_LEN];   /* where this attempt goes (after redirections) */
	unsigned redirects;          /* redirections followed by this attempt */
	uint64_t deadline_ms;        /* connect: give up at (the client's is told to the
	                              * server, vipl_cm.c); 0 none */
	uint64_t retry_ms;           /* peer connect (active): reconnect at; 0 none */
	unsigned sge_max, rsge_max;
	uint64_t inline_us;          /* last inline poll by the application (vipl_arm.c) */
	uint64_t inline_polls;       /* inline polls so far (vipl_arm.c) */
	uint64_t polls_seen;         /* unarmed: inline_polls when the thread last looked */
	uint64_t rearm_us;           /* unarmed: the thread looks again (re-arms or waits) then */
	uint32_t rearm_gap_us;       /* unarmed: the current look interval (doubles) */
	bool unarmed;                /* the verbs CQ is not armed (the application polls) */
	unsigned waiters;            /* application threads inside a Done / Wait loop on it */
	struct vt_conn *vt;          /* VI/TCP: the connection (vitcp.h); NULL on iWARP */
	struct vipl_vi *next;
};

/* ---- pending connection requests (ConnHandle) ------------------------------------------ */
struct vipl_req {
	struct vipl_obj o;           /* handle only once a ConnectWait returned it */
	struct rdma_cm_id *id;
	uint64_t expires_ms;         /* unclaimed: rejected with NO_MATCH then */
	uint64_t recheck_ms;         /* held at the well-known port for another process: look
	                              * it up again then (0: ours to serve) */
	bool claimed, dead;
	uint8_t rel, flags;
	uint32_t mtu;
	uint64_t ack_va;
	uint32_t ack_stag;
	uint8_t host[VIPL_ADDR_LEN];
	uint8_t calling[VIPL_MAX_DISC], called[VIPL_MAX_DISC];
	uint8_t calling_len, called_len;
	struct vt_conn *vt;          /* VI/TCP: the connection the request came on */
	uint16_t read_window;        /* VI/TCP: the requester's RDMA Read window */
	uint16_t peer_posted;        /* VI/TCP: the requester's Rx Descriptors Posted */
	struct vipl_req *next;
};

struct vipl_grave {
	struct rdma_cm_id *id;       /* a rejected request's id, or NULL */
	struct vipl_conn c;          /* or a whole connection given up by an API call */
	uint64_t at_ms;
	struct vipl_grave *next;
};

/* ---- deferred callbacks (run by the NIC thread without locks) ------------------------ */
struct vipl_call {
	enum { CALL_VI, CALL_CQ, CALL_ERR } kind;
	struct vipl_vi *vi;          /* CALL_VI: the VI whose handler it is (cancel) */
	struct vipl_cq *cq;
	VIP_VI_NOTIFY_HANDLER vih;
	VIP_CQ_NOTIFY_HANDLER cqh;
	void *ctx;
	void *vi_handle;
	VIP_DESCRIPTOR *desc;
	bool recv;
	VIP_ERROR_DESCRIPTOR err;
	bool orderly;                /* CALL_ERR: the peer disconnected (not logged by default) */
	struct vipl_call *next;
};

/* The wire a NIC speaks (docs/vipl.md "Two wires"): VIPL's handles, descriptors, queues, CQs,
 * memory and VIA semantics are shared; connection setup, posting and the receive side are the
 * wire's. Chosen at VipOpenNic, fixed for the NIC's life. NIC lock held in every call. */
struct pollfd;
struct vipl_wire {
	const char *name;
	int (*open)(struct vipl_nic *nic);            /* VipOpenNic: listen at once */
	int (*listen)(struct vipl_nic *nic);          /* the NIC's listener (idempotent) */
	int (*connect)(struct vipl_vi *vi);           /* to vi->remote_host (client / peer) */
	int (*accept)(struct vipl_vi *vi, struct vipl_req *r);
	void (*reject)(struct vipl_nic *nic, struct vipl_req *r, uint8_t kind); /* PD_* */
	void (*req_release)(struct vipl_req *r);      /* its transport, unanswered */
	/* a request held at the host's well-known port goes on to the process now waiting for
	 * it (D241): 0 when it went */
	int (*redirect)(struct vipl_nic *nic, struct vipl_req *r);
	void (*conn_end)(struct vipl_vi *vi, uint64_t linger_ms); /* abort the connection */
	void (*sq_pump)(struct vipl_vi *vi);
	void (*rq_pump)(struct vipl_vi *vi);
	/* the thread's descriptors beside its own three, and their events (optional) */
	int (*fds)(struct vipl_nic *nic, struct pollfd *p, int max);
	void (*io)(struct vipl_nic *nic, const struct pollfd *p, int n);
	void (*timers)(struct vipl_nic *nic, uint64_t now, uint64_t *next);
	void (*close)(struct vipl_nic *nic);          /* VipCloseNic, after the VIs went */
};
extern const struct vipl_wire vipl_wire_iwarp, vipl_wire_vitcp;
/* The wire of a NIC opened as dev: the device name's, else SOFTRNIC_VIPL_WIRE, else iWARP;
 * NULL when the setting names no wire. */
struct vipl_devname;
const struct vipl_wire *vipl_wire_choose(const struct vipl_devname *dev);

struct vipl_nic {
	struct vipl_obj o;
	const struct vipl_wire *wire;
	int vt_listen_fd;            /* VI/TCP: the NIC's listener's fd, -1 */
	struct rn_conn *vt_listener; /* VI/TCP: the NIC's listener (rn_transport.h) */
	const struct rn_transport *vt_tp; /* VI/TCP: kernel sockets or the DPDK port */
	struct rn_conn *vt_rdv;      /* VI/TCP: the host's well-known port, held apart */
	int vt_rdv_fd;
	uint64_t vt_rdv_retry_ms;    /* VI/TCP: try to take the well-known port then; 0 never */
	struct vt_conn *vt_conns, *vt_dead; /* VI/TCP: every connection; closed, to free */
	struct vt_conn **vt_polled;  /* VI/TCP: the thread's poll set (vitcp_io.c) */
	unsigned vt_npolled, vt_cap;
	pthread_mutex_t lock;
	pthread_cond_t cv;           /* any completion, connection change or call finished */
	struct ibv_context *ctx;     /* librdmacm's device context (PDs must match its ids) */
	struct ibv_device_attr dattr;
	struct ibv_comp_channel *cch;
	struct rdma_event_channel *ech;
	struct rdma_cm_id *listener; /* at the NIC's own address */
	struct rdma_cm_id *rdv;      /* the host's well-known port, when this NIC holds it apart
	                              * from its own (vipl_rdv.c) */
	uint64_t rdv_retry_ms;       /* try to take the well-known port then; 0 never */
	struct sockaddr_in bind_sin; /* what the listeners bind (wildcard IP on kernel sockets
	                              * when none is configured) */
	uint16_t rdv_port;           /* the host's well-known VIPL port, network order */
	struct vipl_reg *regs;       /* discriminators this NIC waits for (vipl_registry.c) */
	int wake_fd;
	pthread_t thread;
	bool thread_started, stopping;
	uint8_t addr[VIPL_ADDR_LEN]; /* IPv4 + port, network order */
	struct sockaddr_in sin;
	char name[64];
	struct vipl_region *regions[VIPL_REGION_BUCKETS]; /* hashed by memory handle */
	struct vipl_ptag *ptags;
	struct vipl_vi *vis;
	struct vipl_cq *cqs;
	struct vipl_req *reqs;
	unsigned nreqs;
	unsigned npeer;              /* VIs with a peer connect in progress (timers) */
	unsigned burying;            /* graves the thread is destroying outside the lock */
	unsigned nunarmed;           /* VIs whose CQ the thread left unarmed */
	struct vipl_grave *graves;   /* rejected ids, destroyed once the Reject had time to go */
	struct vipl_call *calls, **calls_tail;
	struct vipl_vi *cb_vi;       /* the VI whose handler the thread is running */
	struct vipl_cq *cb_cq;
	VIP_ERROR_HANDLER err_handler;
	void *err_ctx;
	bool ns_init;
};

/* vipl_devname.c: VipOpenNic's device names (D110) */
struct vipl_devname {
	int unit;        /* softrnic<unit> */
	bool vitcp;      /* vitcp<unit>: the VI/TCP wire whatever the setting */
	bool loopback;   /* M-VIA's /dev/via_lo: the loopback address */
};
int vipl_devname_parse(const char *name, struct vipl_devname *out);

/* vipl_registry.c: this host's directory of discriminators and the process NIC serving each
 * (docs/vipl.md "Several processes per host"). NIC lock held. */
struct vipl_reg {
	uint8_t disc[VIPL_MAX_DISC];
	uint8_t len;
	unsigned users;              /* ConnectWaits / passive peer connects waiting for it */
	struct vipl_reg *next;
};
int vipl_reg_add(struct vipl_nic *nic, const uint8_t *disc, size_t len);
void vipl_reg_del(struct vipl_nic *nic, const uint8_t *disc, size_t len);
bool vipl_reg_local(const struct vipl_nic *nic, const uint8_t *disc, size_t len);
/* Another NIC of this host waiting for disc: 0 and its host address, else -1. */
int vipl_reg_lookup(const struct vipl_nic *nic, const uint8_t *disc, size_t len,
		    uint8_t host[VIPL_ADDR_LEN]);
void vipl_reg_clear(struct vipl_nic *nic);

/* vipl_rdv.c: the host's well-known port (rendezvous) */
int vipl_nic_listen_all(struct vipl_nic *nic);
bool vipl_rdv_is(const struct vipl_nic *nic, const struct rdma_cm_id *listen_id);
void vipl_rdv_timers(struct vipl_nic *nic, uint64_t now, uint64_t *next);
bool vipl_rdv_named(const struct vipl_nic *nic, const uint8_t *host);

/* vipl_nic.c */
struct vipl_nic *vipl_nic_get(void *h);
void vipl_nic_wake(struct vipl_nic *nic);
void vipl_call_queue(struct vipl_nic *nic, struct vipl_call *c);
/* Drop the queued handler calls of one VI (vi) or CQ (cq; the other NULL) and wait for the one
 * the NIC thread is running for it, unless this is that thread (destroying from inside the
 * handler). NIC lock held. */
void vipl_calls_cancel(struct vipl_nic *nic, const struct vipl_vi *vi, const struct vipl_cq *cq);
void vipl_async_error(struct vipl_nic *nic, struct vipl_vi *vi, VIP_ERROR_CODE code,
		      VIP_RESOURCE_CODE res, VIP_DESCRIPTOR *d, VIP_ULONG op);
/* The same; orderly: the peer ended the connection (the default handler does not log it). */
void vipl_async_error_as(struct vipl_nic *nic, struct vipl_vi *vi, VIP_ERROR_CODE code,
			 VIP_RESOURCE_CODE res, VIP_DESCRIPTOR *d, VIP_ULONG op, bool orderly);
uint64_t vipl_now_ms(void);

/* vipl_thread.c */
int vipl_thread_start(struct vipl_nic *nic);
void vipl_thread_stop(struct vipl_nic *nic);

/* vipl_wq.c: queue bookkeeping and completion (NIC lock held) */
struct vipl_wqe *vipl_wqe_new(struct vipl_wq *q, VIP_DESCRIPTOR *d, bool recv);
void vipl_wqe_finish(struct vipl_vi *vi, struct vipl_wqe *e, uint32_t err);
void vipl_wq_complete_some(struct vipl_vi *vi, struct vipl_wq *q);
/* In-order completion of q's finished entries and its one-shot notify. Every post and poll
 * calls it, mostly with nothing to do: the test is inline, the walk is not. */
static inline void vipl_wq_complete_ready(struct vipl_vi *vi, struct vipl_wq *q)
{
	if (q->nfinished > 0 || q->notify != NULL)
		vipl_wq_complete_some(vi, q);
}
void vipl_wq_flush(struct vipl_vi *vi, struct vipl_wq *q);
VIP_DESCRIPTOR *vipl_wq_dequeue(struct vipl_wq *q);
/* The next entry of q still to give to the wire (q->issue moved past the others), or NULL. */
struct vipl_wqe *vipl_wq_next_wait(struct vipl_wq *q);
void vipl_wqe_free(struct vipl_wqe *e);

/* vipl_post.c */
void vipl_sq_pump(struct vipl_vi *vi);
void vipl_rq_pump(struct vipl_vi *vi);
/* Copy len octets between buf and e's data segments from octet off (to_desc: into them),
 * each segment re-validated; 0 or a VIP_STATUS_ error bit. */
uint32_t vipl_seg_copy(struct vipl_vi *vi, struct vipl_wqe *e, size_t off, void *buf, size_t len,
		       bool to_desc);
/* Every data segment of e is still usable (sink: written into); else PROTECTION_ERROR. */
uint32_t vipl_segs_usable(struct vipl_vi *vi, struct vipl_wqe *e, bool sink);
unsigned vipl_wq_unfinished_before(struct vipl_wq *q, struct vipl_wqe *upto);
bool vipl_wq_read_before(struct vipl_wq *q, struct vipl_wqe *upto);
uint32_t vipl_check_send(struct vipl_vi *vi, VIP_DESCRIPTOR *d, struct vipl_wqe *e);

/* vipl_rr.c: Reliable Reception's acknowledgements (NIC lock held) */
#define VIPL_RR_ACK_WRITES 4        /* acknowledgement Writes in flight at most */
/* The library's own work requests a QP may hold beside the queues' VIPL_QP_DEPTH: RR's
 * acknowledgement Writes and Read (vipl_rr.c), DFC's credit Write (vipl_dfc.c). */
#define VIPL_OWN_WRS (VIPL_RR_ACK_WRITES + 2)
bool vipl_rr(const struct vipl_vi *vi);
/* e takes one of the peer's receives (a Send, an RDMA Write with immediate): its completion
 * waits for the peer's count instead of a Read. */
bool vipl_rr_counted(const struct vipl_wqe *e);
/* An acknowledgement Write of the receives completed here, to go before the caller's own work
 * request in one post (1), or none due (0); vipl_rr_ack_posted once it was posted. */
unsigned vipl_rr_ack_wr(struct vipl_vi *vi, struct ibv_send_wr *wr, struct ibv_sge *sg);
void vipl_rr_ack_posted(struct vipl_vi *vi);
void vipl_rr_flush(struct vipl_vi *vi);     /* the acknowledgement due, on its own */
void vipl_rr_check(struct vipl_vi *vi);     /* completes sends the peer's count covers */
void vipl_rr_read(struct vipl_vi *vi);      /* a Read that completes every waiting send */
/* A Done / Wait on the send queue found nothing: after spin_us of waiting, the Read. */
void vipl_rr_idle_sender(struct vipl_vi *vi, uint64_t spin_us);
/* VipDisconnect: the acknowledgement still due goes out first; how long the connection must
 * outlive the call so it can leave (ms, 0: no need). */
uint64_t vipl_rr_last_ack(struct vipl_vi *vi);
/* A send's own work request completed: it waits for the acknowledgement (true) or is done. */
bool vipl_rr_wait_ack(struct vipl_vi *vi, struct vipl_wqe *e);
/* A completion of vipl_rr's own work requests (true: it was one); ok: success. */
bool vipl_rr_wc(struct vipl_vi *vi, const struct ibv_wc *wc, bool *ok);
void vipl_rr_thread(struct vipl_vi *vi);    /* the NIC thread polled vi's CQ */

/* vipl_dfc.c: descriptor flow control (NIC lock held) */
bool vipl_dfc_allows(const struct vipl_vi *vi, const struct vipl_wqe *e);
void vipl_dfc_issued(struct vipl_vi *vi, const struct vipl_wqe *e);
void vipl_dfc_credit(struct vipl_vi *vi);   /* the peer defers: receives posted here */
bool vipl_dfc_wc(struct vipl_vi *vi, const struct ibv_wc *wc, bool *ok);
bool vipl_dfc_deferred(const struct vipl_vi *vi);
void vipl_dfc_timers(struct vipl_nic *nic, uint64_t now, uint64_t *next);

/* vipl_comp.c */
void vipl_poll_cq(struct vipl_vi *vi);          /* drain the connection's verbs CQ */
void vipl_vi_fail(struct vipl_vi *vi, VIP_ERROR_CODE code, bool async, bool ended);
struct vipl_vi *vipl_vi_by_cq(struct vipl_nic *nic, struct ibv_cq *cq);
int vipl_wait(struct vipl_nic *nic, uint64_t deadline_ms); /* 0 woke, ETIMEDOUT */
uint64_t vipl_deadline(VIP_ULONG timeout_ms);

/* vipl_arm.c: adaptive CQ arming (NIC lock held) */
uint64_t vipl_now_us(void);
void vipl_poll_inline(struct vipl_vi *vi);
/* The application is polling vi (a Done, or Wait's inline phase) though nothing needed
 * polling: the NIC thread must still see it as polling (vipl_cq_event). */
void vipl_note_polling(struct vipl_vi *vi);
void vipl_arm(struct vipl_vi *vi);
void vipl_arm_forget(struct vipl_vi *vi);
void vipl_cq_event(struct vipl_vi *vi);
void vipl_rearm_due(struct vipl_nic *nic, uint64_t *next_ms);

/* the iWARP wire's own (vipl_cm.c, vipl_post.c) behind vipl_wire_iwarp */
int vipl_iwarp_connect(struct vipl_vi *vi);
int vipl_iwarp_accept(struct vipl_vi *vi, struct vipl_req *r);
void vipl_iwarp_reject(struct vipl_nic *nic, struct vipl_req *r, uint8_t kind);
void vipl_iwarp_req_release(struct vipl_req *r);
int vipl_iwarp_redirect(struct vipl_nic *nic, struct vipl_req *r);
void vipl_iwarp_bury_after(struct vipl_vi *vi, uint64_t after_ms);
void vipl_iwarp_sq_pump(struct vipl_vi *vi);
void vipl_iwarp_rq_pump(struct vipl_vi *vi);

/* vipl_conn.c / vipl_cm.c */
int vipl_conn_setup(struct vipl_vi *vi, struct rdma_cm_id *id);
void vipl_conn_teardown(struct vipl_vi *vi);
void vipl_conn_bury(struct vipl_vi *vi);
/* How long a grave keeps what it holds: a Reject, or the Terminate of a failed connection, has
 * time to leave before the stream goes. */
#define VIPL_GRAVE_MS 2000
void vipl_conn_bury_after(struct vipl_vi *vi, uint64_t after_ms);
void vipl_rq_requeue(struct vipl_vi *vi);
void vipl_cm_event(struct vipl_nic *nic, struct rdma_cm_event *ev);
void vipl_cm_timers(struct vipl_nic *nic, uint64_t now, uint64_t *next);
int vipl_listen(struct vipl_nic *nic);
int vipl_start_connect(struct vipl_vi *vi);
void vipl_req_free(struct vipl_req *r);
/* What a request tells the server of the requester's wait (ms left, PD_TIMEOUT_INFINITE), and
 * how long the server holds an unmatched one for it: half that, at most VIPL_BACKLOG_MS. */
uint32_t vipl_requester_timeout(const struct vipl_vi *vi);
uint64_t vipl_hold_ms(uint32_t timeout_ms);
void vipl_reject(struct vipl_nic *nic, struct rdma_cm_id *id, uint8_t kind);
/* Reject id with a redirection to host (another process of this host). */
void vipl_redirect(struct vipl_nic *nic, struct rdma_cm_id *id, const uint8_t *host);
void vipl_graves_free(struct vipl_nic *nic, bool all);
struct vipl_grave *vipl_graves_take(struct vipl_nic *nic, bool all);
void vipl_graves_destroy(struct vipl_grave *g);
void vipl_attrs_of(const struct vipl_vi *vi, VIP_VI_ATTRIBUTES *a);
void vipl_connect_done(struct vipl_vi *vi, VIP_RETURN rc);
void vipl_call_run(struct vipl_nic *nic, struct vipl_call *c);
/* Copy len arrived octets from the bounce buffer into the descriptor's segments, each
 * re-validated now (a region deregistered since the post is a protection error at access,
 * VIA §3.2.1). 0, or VIP_STATUS_PROTECTION_ERROR when a segment is no longer usable. */
uint32_t vipl_bounce_scatter(struct vipl_vi *vi, struct vipl_wqe *e, uint32_t len);

/* vipl_wire.c: the private data of the MPA Request / Reply / Reject */
enum { PD_REQUEST = 1, PD_ACCEPT = 2, PD_REJECT = 3, PD_NO_MATCH = 4, PD_PEER = 5,
       PD_REDIRECT = 6 };
#define PD_TIMEOUT_INFINITE 0xFFFFFFFFu
#define PD_F_RDMAW 0x01
#define PD_F_RDMAR 0x02
#define PD_F_DFC 0x04
struct vipl_pdata {
	uint8_t kind, rel, flags;
	uint32_t mtu;
	uint64_t ack_va;
	uint32_t ack_stag;
	uint8_t host[VIPL_ADDR_LEN];  /* the sender's NIC; PD_REDIRECT: where to go instead */
	uint32_t timeout_ms;          /* request: how long the requester still waits */
	uint8_t calling_len, called_len;
	uint8_t calling[VIPL_MAX_DISC], called[VIPL_MAX_DISC];
};
size_t vipl_pdata_encode(const struct vipl_pdata *p, uint8_t *out, size_t cap);
int vipl_pdata_decode(const void *buf, size_t len, struct vipl_pdata *p);

/* vipl_addr.c */
/* The NIC's address (sin) and what its listeners bind (bind); *rdv_port the host's
 * well-known VIPL port (network order). */
int vipl_addr_local(const struct vipl_devname *dev, struct sockaddr_in *sin,
		    struct sockaddr_in *bind, uint16_t *rdv_port);
int vipl_addr_check(const VIP_NET_ADDRESS *a, bool need_host);
void vipl_addr_sin(const uint8_t *host, struct sockaddr_in *sin);
/* true when name is this host's own name and the NIC is the DPDK port */
bool vipl_addr_own_name(const char *name);
int vipl_disc_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl);
bool vipl_addr_is_local(const struct vipl_nic *nic, const uint8_t *ip);

#endif
