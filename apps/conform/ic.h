/* iwarp-conform: verbs conformance checks between two processes, each on whatever RDMA
 * device its libibverbs gives it (docs/conform.md). Built against the system's
 * <infiniband/verbs.h> and <rdma/rdma_cma.h> only. */
#ifndef IC_H
#define IC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define IC_WAIT_MS 5000  /* longest wait for a completion, an event or the peer */
#define IC_GUARD 64      /* guard octets on each side of every buffer */
#define IC_GUARD_BYTE 0xa5
#define IC_MAXBUF 16
#define IC_WHY 480       /* length of a verdict's reason */
#define IC_NAME 64
#define IC_SGES 3        /* SGEs per WR of every check's QP, where the device has them */

enum ic_verdict { IC_PASS, IC_FAIL, IC_NA };

/* One side's result of one check. */
struct ic_res {
	enum ic_verdict v;
	char why[IC_WHY];
};

/* A buffer with IC_GUARD octets of IC_GUARD_BYTE on each side, verified at the check's end. */
struct ic_buf {
	uint8_t *raw, *p;
	size_t len;
	struct ibv_mr *mr;
};

/* One RDMA connection of a check, with its own CQs. */
struct ic_conn {
	struct rdma_cm_id *id;
	struct ibv_cq *scq, *rcq;
	struct ibv_comp_channel *ch;  /* the Receive CQ's completion channel */
	struct ibv_qp *qp;
	struct ibv_qp_cap cap;  /* what rdma_create_qp gave (max_inline_data among them) */
	bool disc;  /* DISCONNECTED seen */
};

/* What the server offers the client in a check: a region of its memory. */
struct ic_adv {
	uint64_t addr;
	uint32_t rkey, len;
};

/* Control-channel message (TCP side socket). */
enum ic_msg_type { M_HELLO = 1, M_BEGIN, M_READY, M_STEP, M_RESULT };
struct ic_msg {
	uint32_t type, check, code, verdict;
	uint64_t addr, max_msg;
	uint32_t rkey, len;
	char text[IC_WHY];
};

/* Faults a peer can be told to commit, so that a run proves the tool reports FAIL. */
enum ic_fault { F_NONE, F_DEREG_MR };

/* Everything of the run. */
struct ic {
	bool server;
	enum ic_fault fault;
	int ctl;                         /* control socket */
	struct rdma_event_channel *ech;
	struct rdma_cm_id *listen_id;    /* server */
	struct sockaddr_storage dst;     /* client: the server's RDMA address */
	struct ibv_context *ctx;         /* the device under this side */
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	char dev_name[IC_NAME], peer_name[IC_NAME];
	uint64_t max_msg;                /* smaller of both ports' max_msg_sz */
	/* per check */
	struct ic_res res;
	bool peer_done;                  /* the peer's M_RESULT came during our half */
	struct ic_msg peer_res;
	struct ibv_pd *pd, *pd2;          /* the check's PD, and a second one if it needs one */
	struct ibv_mw *mw;                /* the check's memory window, if any */
	struct ibv_srq *srq;              /* the server's S-RQ, for its QP, if the check has one */
	int check;                        /* the index of the check running */
	struct ic_conn conn;
	struct ic_conn conn2;             /* a second connection, for a check that needs one */
	struct ic_buf *bufs[IC_MAXBUF];
	int nbufs;
	struct ic_adv adv;               /* client: what the server offered */
};

/* A check: id, the clauses it tests, and its halves. Local checks run `local` on both sides
 * (each side's own device); connected checks run `srv` and `cli` on a fresh connection,
 * `prep` first on the server (before its QP exists: an S-RQ; or NOT APPLICABLE). `rd` and
 * `inl`, when not 0, are what the connection asks for: ORD and IRD (rdma_conn_param's
 * initiator_depth and responder_resources, on both sides), and the QP's inline octets. */
struct ic_check {
	const char *id;
	const char *clause;
	const char *what;
	int (*prep)(struct ic *ic);
	int (*local)(struct ic *ic);
	int (*srv)(struct ic *ic);
	int (*cli)(struct ic *ic);
	uint8_t rd;
	uint16_t inl;
};

extern const struct ic_check ic_checks[];
extern const int ic_nchecks;

/* verdicts (ic_res.c): each returns -1, so a half ends with `return ic_fail(...)` */
int ic_fail(struct ic *ic, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ic_na(struct ic *ic, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *ic_side(const struct ic *ic);
const char *ic_verdict_str(enum ic_verdict v);
#define EXPECT(ic, cond, ...)                                                                \
	do {                                                                                 \
		if (!(cond))                                                                 \
			return ic_fail(ic, __VA_ARGS__);                                     \
	} while (0)

/* guarded buffers (ic_buf.c) */
struct ic_buf *ic_buf_new(struct ic *ic, size_t len, int access, int fill);
struct ic_buf *ic_buf_new_pd(struct ic *ic, struct ibv_pd *pd, size_t len, int access,
			     int fill);
bool ic_buf_guards_ok(const struct ic_buf *b);
void ic_buf_pattern(struct ic_buf *b, unsigned seed);
size_t ic_buf_pattern_diff(const struct ic_buf *b, size_t off, size_t n, unsigned seed);
size_t ic_buf_fill_diff(const struct ic_buf *b, size_t off, size_t n, uint8_t v);
int ic_bufs_free(struct ic *ic);

/* completions, posting, async events (ic_wait.c) */
long long ic_now_ms(void);
int ic_post_wr(struct ic *ic, struct ibv_send_wr *wr);
int ic_expect_wc(struct ic *ic, struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status st,
		 struct ibv_wc *out);
int ic_expect_wc_qp(struct ic *ic, struct ibv_cq *cq, const struct ibv_qp *qp, uint64_t wr_id,
		    enum ibv_wc_status st, struct ibv_wc *out);
int ic_expect_no_wc(struct ic *ic, struct ibv_cq *cq, int ms);
int ic_next_wc(struct ic *ic, struct ibv_cq *cq, struct ibv_wc *wc);
int ic_next_wc_qp(struct ic *ic, struct ibv_cq *cq, const struct ibv_qp *qp, struct ibv_wc *wc);
int ic_post_send(struct ic *ic, enum ibv_wr_opcode op, uint64_t wr_id, unsigned flags,
		 struct ibv_sge *sg, int nsge, uint64_t raddr, uint32_t rkey);
int ic_post_recv(struct ic *ic, uint64_t wr_id, struct ic_buf *b, size_t off, uint32_t len);
int ic_expect_async(struct ic *ic, enum ibv_event_type type);
int ic_expect_async_on(struct ic *ic, enum ibv_event_type type, const void *res);
int ic_expect_no_async(struct ic *ic, int ms);
bool ic_async_within(struct ic *ic, int ms, enum ibv_event_type *type);
void ic_drain_async(struct ic *ic);
int ic_expect_qp_state(struct ic *ic, struct ibv_qp *qp, enum ibv_qp_state want);
int ic_expect_qp_idle(struct ic *ic, struct ibv_qp *qp);
int ic_expect_qp_error(struct ic *ic, struct ibv_qp *qp);
int ic_expect_qp_not_rts(struct ic *ic, struct ibv_qp *qp);
struct ibv_sge ic_sge(const struct ic_buf *b, size_t off, uint32_t len);

/* control channel (ic_ctl.c) */
struct addrinfo *ic_lookup(const char *addr, const char *port, bool passive);
int ic_ctl_listen(const char *addr, const char *port);
int ic_ctl_accept(int lfd);
int ic_ctl_connect(const char *addr, const char *port);
int ic_ctl_send(struct ic *ic, const struct ic_msg *m);
int ic_ctl_recv(struct ic *ic, struct ic_msg *m, int ms);
int ic_step_send(struct ic *ic, uint32_t code, const struct ic_adv *a);
int ic_step_recv(struct ic *ic, uint32_t code, struct ic_adv *a);

/* rdma_cm (ic_cm.c) */
int ic_cm_listen(struct ic *ic, const char *addr, const char *port);
int ic_cm_resolve(struct ic *ic, const char *addr, const char *port);
int ic_cm_accept(struct ic *ic, uint32_t check);
int ic_cm_connect(struct ic *ic, uint32_t check);
int ic_cm_accept2(struct ic *ic);
int ic_cm_connect2(struct ic *ic);
int ic_cm_wait_disconnect(struct ic *ic, int ms);
void ic_conn_free(struct ic *ic);

/* reports (ic_report.c) */
struct ic_row {
	const struct ic_check *check;
	enum ic_verdict v;
	char why[2 * IC_WHY + 64];
};
int ic_report_md(const char *path, const struct ic *ic, const struct ic_row *rows, int n);
int ic_report_junit(const char *path, const struct ic *ic, const struct ic_row *rows, int n);

#endif
