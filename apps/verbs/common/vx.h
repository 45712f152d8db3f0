/* vx: the small rdma_cm + verbs helpers shared by softrnic-rping, softrnic-perf and
 * bench/rdma. Only the standard <infiniband/verbs.h> and <rdma/rdma_cma.h> APIs are used, so
 * the programs run the same over softrnic and over any libibverbs provider.
 *
 * A connection is set up in two steps so the caller can register memory and post receives
 * before the peer may send (iWARP has no RNR retry):
 *   vx_setup()     server: bind, listen, wait for a connect request; client: resolve
 *                  address and route. Both then create PD, CQ (+ channel) and an RC QP.
 *   vx_establish() server: rdma_accept; client: rdma_connect; waits for ESTABLISHED.
 * vx_disconnect() then vx_destroy() tear it down (deregister MRs in between).
 */
#ifndef VX_H
#define VX_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* How a waiter waits for a completion. */
enum vx_poll {
	VX_EVENT,   /* ibv_req_notify_cq + block on the completion channel */
	VX_BUSY,    /* spin on ibv_poll_cq */
	VX_YIELD,   /* spin, but sched_yield() between polls (shares a core politely) */
};

struct vx_opts {
	const char *addr;        /* client: server address; server: bind address (NULL = any) */
	const char *port;        /* TCP port (decimal string) */
	bool server;
	uint32_t send_depth;     /* SQ WRs */
	uint32_t recv_depth;     /* RQ WRs */
	uint32_t rd_atom;        /* initiator_depth / responder_resources wanted (capped) */
	bool channel;            /* create a completion channel (VX_EVENT waits) */
	int timeout_ms;          /* per-wait limit for CM events and completions; <0 = none */
	int accept_timeout_ms;   /* server: how long to wait for a client; <0 = forever */
};

struct vx_conn {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_id *id;           /* the connected id */
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	bool server, established, disconnected, armed;
	uint32_t rd_atom;
	int timeout_ms;
	uint8_t peer_data[256];          /* the private data of the last event waited for */
	uint8_t peer_data_len;
};

int vx_setup(struct vx_conn *c, const struct vx_opts *o);
/* Server, one more connection on listener's port (a connection from vx_setup, which keeps
 * listening): waits for the next connect request, gives it c's own event channel, and creates
 * PD, CQ and QP as vx_setup does. vx_establish() then accepts it. */
int vx_accept_next(struct vx_conn *c, struct vx_conn *listener, const struct vx_opts *o);
int vx_establish(struct vx_conn *c);
/* Disconnects (if still connected) and waits briefly for DISCONNECTED. */
void vx_disconnect(struct vx_conn *c);
/* Destroys QP, CQ, channel, PD, ids and the event channel. MRs must be gone. */
void vx_destroy(struct vx_conn *c);

/* Waits for one CM event of type want (timeout: c->timeout_ms, or ms if >= -1 given).
 * On CONNECT_REQUEST *idp receives the new id. Returns 0 or -1 (message printed). */
int vx_cm_wait(struct vx_conn *c, enum rdma_cm_event_type want, int ms, struct rdma_cm_id **idp);
const char *vx_event_name(enum rdma_cm_event_type t);

/* Waits for one work completion. Returns 1 (wc filled), 0 when the peer disconnected
 * before one arrived, -1 on timeout or error (message printed). */
int vx_wait_wc(struct vx_conn *c, struct ibv_wc *wc, enum vx_poll mode);
/* As vx_wait_wc but fails (-1, message) unless the completion is successful. */
int vx_wait_ok(struct vx_conn *c, struct ibv_wc *wc, enum vx_poll mode);

/* Non-blocking look at the CM channel: 1 when the peer has disconnected, else 0. */
int vx_peer_gone(struct vx_conn *c);

/* Page-aligned, zeroed buffer registered with access; NULL on failure (message printed). */
struct ibv_mr *vx_reg(struct vx_conn *c, size_t len, int access);
/* Deregisters and frees a buffer from vx_reg (NULL is fine). */
void vx_unreg(struct ibv_mr *mr);

int vx_post_recv(struct vx_conn *c, uint64_t wr_id, void *addr, uint32_t len, struct ibv_mr *mr);
/* One-SGE send-queue WR: op IBV_WR_SEND / RDMA_WRITE / RDMA_READ; raddr/rkey for RDMA. */
int vx_post(struct vx_conn *c, enum ibv_wr_opcode op, uint64_t wr_id, void *addr, uint32_t len,
            struct ibv_mr *mr, uint64_t raddr, uint32_t rkey, bool signaled);

/* Monotonic time in nanoseconds. */
uint64_t vx_now_ns(void);
/* The process's resident memory (VmRSS) in KiB, -1 when /proc cannot say. */
long vx_rss_kib(void);
/* Pins the calling process to one CPU; returns 0 or -1 (ignored by callers that may run
 * without the permission). */
int vx_pin_cpu(int cpu);

#endif
