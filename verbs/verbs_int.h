/* verbs/ internals: the objects behind the libibverbs handles and the helpers shared by the
 * verbs/ sources. Not installed. Every non-static name here is prefixed sv_ (hidden from the
 * shared library) or softrnic_ (private entry points for our librdmacm layer).
 *
 * Layout. Each libibverbs object is the FIRST member of ours, so a handle converts with a
 * cast. Handles that are not ours (a zeroed or foreign struct, a handle of another kind)
 * are rejected without reading past the libibverbs struct: its `handle` field carries a tag
 * computed from the object's address and kind (sv_tag), checked first; only then is our
 * magic word (cleared on destroy) read. Completion channels have no handle field: each
 * context keeps the list of its own. The context is allocated the way libibverbs providers do it:
 * struct verbs_context (whose last member is struct ibv_context) starts our context, its sz
 * and extended ops are filled and ibv_context.abi_compat marks it extended, so the header's
 * inline helpers (verbs_get_ctx_op) find our ops or fail cleanly with EOPNOTSUPP. */
#ifndef SV_VERBS_INT_H
#define SV_VERBS_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>

#include <infiniband/verbs.h>

#include "rnic.h"
#include "softrnic/verbs_ext.h"

#define SV_HIDDEN __attribute__((visibility("hidden")))


enum sv_magic {
	SV_MAGIC_CTX = 0x73764358u,   /* "svCX" */
	SV_MAGIC_PD = 0x73765044u,
	SV_MAGIC_MR = 0x73764d52u,
	SV_MAGIC_MW = 0x73764d57u,
	SV_MAGIC_CH = 0x73764348u,
	SV_MAGIC_CQ = 0x73764351u,
	SV_MAGIC_SRQ = 0x73765352u,
	SV_MAGIC_QP = 0x73765150u,
};

struct sv_context {
	struct verbs_context vc;      /* vc.context is the application's ibv_context */
	uint32_t magic;
	struct rn_device *dev;        /* a shared open of the RNIC: owns everything below */
	struct rn_mem *mem;
	int cmd_fd;                   /* a real fd nobody reads (an eventfd) */
	struct ibv_device_attr attr;  /* filled at open */
	struct sv_channel *channels;  /* this context's completion channels (vc.context.mutex) */
};

struct sv_pd {
	struct ibv_pd pd;
	uint32_t magic;
	uint32_t id;                  /* the RNIC's PD ID */
};

struct sv_mr {
	struct ibv_mr mr;
	uint32_t magic;
	int dead;                     /* a failed ibv_rereg_mr deallocated it (RDMA Verbs §7.3) */
};

struct sv_mw {
	struct ibv_mw mw;
	uint32_t magic;
};

struct sv_channel {
	struct ibv_comp_channel ch;
	uint32_t magic;
	struct rn_comp_channel *rn;
	struct sv_channel *next;      /* sv_context.channels */
};

struct sv_cq {
	struct ibv_cq cq;
	uint32_t magic;
	struct rn_cq *rn;
	struct rn_event_res *evres;   /* learnt from the first async event taken */
};

struct sv_srq {
	struct ibv_srq srq;
	uint32_t magic;
	struct rn_srq *rn;
	uint32_t max_sge;
	struct rn_event_res *evres;
};

struct sv_qp {
	struct ibv_qp qp;
	uint32_t magic;
	struct rn_qp *rn;
	struct rn_event_res *evres;
	enum ibv_qp_state idle_state; /* RESET / INIT / RTR: what Idle reads as (sv_qp.c) */
	int sq_sig_all;
	/* softrnic_qp_set_close_cb: close_mtx guards the pair and is held while it is called */
	pthread_mutex_t close_mtx;
	void (*close_fn)(void *arg);
	void *close_arg;
};

/* ---- handle lifetime (sv_obj.c) -------------------------------------------------------- *
 * Clearing the magic on destroy cannot by itself make a second destroy fail: were the
 * memory freed, the second call's check would read freed memory (a use after free: ASan
 * reports it, and a reallocation can put anything there). So the objects below are allocated
 * with sv_obj_alloc and released with sv_obj_free, which keeps their memory, magic cleared,
 * type-stable: a destroyed handle reads as dead (EINVAL) until SV_OBJ_REUSE_AFTER more of its
 * kind were destroyed. Callers clear the magic (and destroy any mutex) before sv_obj_free. */
enum sv_obj_kind { SV_OBJ_PD, SV_OBJ_MR, SV_OBJ_MW, SV_OBJ_CH, SV_OBJ_CQ, SV_OBJ_SRQ,
		   SV_OBJ_QP, SV_OBJ_KINDS };
/* Zeroed memory for an object of kind k (always the same size per kind); NULL: no memory. */
void *sv_obj_alloc(enum sv_obj_kind k, size_t size) SV_HIDDEN;
void sv_obj_free(enum sv_obj_kind k, void *obj) SV_HIDDEN;

/* ---- handle checks: NULL and foreign handles are rejected ------------------------------ */
static inline uint32_t sv_tag(const void *obj, uint32_t magic)
{
	return (uint32_t)(((uintptr_t)obj >> 3) * 2654435761u) ^ magic;
}

struct sv_context *sv_ctx(struct ibv_context *c) SV_HIDDEN;
struct sv_pd *sv_pd(struct ibv_pd *pd) SV_HIDDEN;
struct sv_mr *sv_mr(struct ibv_mr *mr) SV_HIDDEN;
struct sv_mw *sv_mw(struct ibv_mw *mw) SV_HIDDEN;
struct sv_cq *sv_cq(struct ibv_cq *cq) SV_HIDDEN;
struct sv_srq *sv_srq(struct ibv_srq *srq) SV_HIDDEN;
struct sv_channel *sv_channel(struct ibv_comp_channel *ch) SV_HIDDEN;
struct sv_qp *sv_qp(struct ibv_qp *qp) SV_HIDDEN;
/* The context of an object (its ->context), checked. */
struct sv_context *sv_ctx_of(struct ibv_context *c) SV_HIDDEN;

/* ---- mappings --------------------------------------------------------------------------- */
int sv_errno(enum rn_status s) SV_HIDDEN;                     /* sv_errno.c */
void sv_wc_from_cqe(const struct rn_cqe *e, struct ibv_wc *wc) SV_HIDDEN;  /* sv_wc.c */
uint32_t sv_access(unsigned ibv_access) SV_HIDDEN;            /* sv_mem.c: IBV_ACCESS_* -> RN_ACC_* */

/* ---- ops installed in the context (the static inline verbs call through them) ----------- */
int sv_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc) SV_HIDDEN;
int sv_req_notify_cq(struct ibv_cq *cq, int solicited_only) SV_HIDDEN;
int sv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad) SV_HIDDEN;
int sv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad) SV_HIDDEN;
int sv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) SV_HIDDEN;
/* v_post.c: the immediate checks a post makes of one WR, without state and space (errno) */
int sv_check_send(struct ibv_qp *qp, const struct ibv_send_wr *wr) SV_HIDDEN;
int sv_check_recv(struct ibv_qp *qp, const struct ibv_recv_wr *wr) SV_HIDDEN;
struct ibv_mw *sv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type) SV_HIDDEN;
int sv_dealloc_mw(struct ibv_mw *mw) SV_HIDDEN;
int sv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind) SV_HIDDEN;

/* ---- QPs (sv_qp.c) and the device (sv_device.c) ------------------------------------------ */
int sv_event_type(enum rn_event_id id) SV_HIDDEN;             /* sv_event.c: -1 = not delivered */
/* A QP with extension flags (verbs_ext.h SOFTRNIC_QP_*). */
struct ibv_qp *sv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *init,
			    unsigned ext_flags) SV_HIDDEN;

enum ibv_qp_state sv_qp_state(struct sv_qp *q) SV_HIDDEN;

/* ---- for our librdmacm layer -------------------------------------------------------------- */
/* Move an Idle QP (RESET / INIT / RTR) to RTS on an ESTABLISHED connection: ORD is
 * lowered to the peer's IRD when MPA negotiated one (h->params), the stream goes to the QP
 * (rn_qp_modify_qp with RN_QPM_LLP_HANDLE; on success h->conn and h->rx are the QP's and
 * cleared in *h, on failure still the caller's). The QP is attached to the device's progress
 * engine since its creation and picks the new fd up by itself. 0 or an errno value. */
int softrnic_qp_connect(struct ibv_qp *qp, struct rn_cm_handoff *h);

/* LLP close notification, for DISCONNECTED without watching the QP's state. fn(arg) is called
 * once per connection handed over by softrnic_qp_connect, as soon as the QP's stream ends:
 * end of stream (the peer's FIN, after every octet before it was processed), a reset or
 * other transport error, our own FIN (Closing / Terminate), or the release of the stream
 * (close / abort: Error, Idle, destroy). softrnic_qp_connect wraps the stream (an
 * rn_transport conn forwarding every operation) to see this at the transport boundary, since
 * rn_qp and the device engine call the transport for every such change.
 *   fn runs on the thread that drives the QP at that moment (the device engine, or an API
 * thread in ibv_modify_qp / ibv_destroy_qp / a post) with the QP's lock held: it must not
 * block, call into the QP or take any lock a verbs caller may hold while it calls into the
 * QP; it should only record the fact and post a wake-up (an eventfd write), and do the work
 * on its own thread.
 *   A NULL fn unregisters. Registration and unregistration synchronise with a running fn: once
 * the call returns, the old fn is not running and will not be called again (so its arg may be
 * freed). Never call this from fn. 0, or EINVAL for a handle that is not a QP. */
int softrnic_qp_set_close_cb(struct ibv_qp *qp, void (*fn)(void *arg), void *arg);
/* The wrapper's side: call the registered fn, if any (sv_connect.c). */
void sv_qp_llp_closed(struct sv_qp *q) SV_HIDDEN;

/* Blocking behaviour of the libibverbs get-event calls: O_NONBLOCK on the fd -> 0 ms. */
int sv_fd_timeout(int fd) SV_HIDDEN;

/* ---- the device behind a context (sv_rnic.c) ------------------------------------------ */
#define SV_FW_VER "0.1.0"

/* Open the device for a context (a shared rn_device_open): fills c->dev and c->mem. 0 or an
 * errno value. */
int sv_dev_open(struct sv_context *c) SV_HIDDEN;
/* Close it: rn_device_close destroys whatever the application left open. */
void sv_dev_close(struct sv_context *c) SV_HIDDEN;
/* The device's attributes as ibv_device_attr (limits, vendor ids, capability flags). */
void sv_dev_limits(struct rn_device *d, struct ibv_device_attr *a) SV_HIDDEN;

/* ---- the transport connections run on (sv_transport.c) -------------------------------- */
/* The process's choice (softrnic_transport_selected, verbs_ext.h) made into a transport for
 * librdmacm: kernel sockets, or the process-wide DPDK port (its error, said on stderr once).
 * Exported for our librdmacm.so.1 only. 0 or a negative errno. */
int softrnic_transport_default(const struct rn_transport **out);
/* 0, or -EINVAL when softrnic.conf has an error (softrnic_conf.h), said once on stderr with
 * its file and line: a device, a transport, a connection of a bad configuration never opens. */
int sv_conf_checked(void) SV_HIDDEN;
/* On DPDK: 0 when addr is the port's address or the wildcard, -EADDRNOTAVAIL otherwise. */
int softrnic_transport_check_local(const struct sockaddr *addr);
/* On DPDK: the port's source address towards dst, -ENETUNREACH when it has no route. */
int softrnic_transport_route(const struct sockaddr *dst, struct sockaddr_in *src);
/* On DPDK: the port's MAC. */
int softrnic_transport_mac(uint8_t mac[6]);

#endif
