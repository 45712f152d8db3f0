/* soak: a long random mix of Send / RDMA Write / RDMA Read between two processes, every byte
 * verified, every completion timed (tests/soak/soak.sh runs it; docs/testing.md describes it).
 * Only <infiniband/verbs.h> and <rdma/rdma_cma.h>, so it runs over any iWARP provider.
 *
 * The client drives: on each of its QPs a few slots each carry one operation at a time, a
 * Send (content and length derived from seed, QP and sequence number, checked by the server)
 * or a Write to a random offset of the server's region that is then Read back and compared.
 * iWARP has no RNR retry, so Sends are credited: the server grants one credit per receive it
 * has reposted by an RDMA Write of a counter into the client's memory. */
#ifndef SOAK_H
#define SOAK_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "vx.h"

#define SOAK_MAX_QPS 8
#define SOAK_SLOTS 4                      /* operations in flight per client QP */
#define SOAK_RECVS 4                      /* receives (credits) per server QP */
#define SOAK_MAX_LEN (1u << 20)           /* longest Send / Write / Read */
#define SOAK_SPAN (SOAK_MAX_LEN + 65536)  /* a slot's window: room for random offsets */
#define SOAK_HELLO_MAGIC 0x534f414bu      /* "SOAK" */
#define SOAK_DATA_MAGIC 0x44415441u       /* "DATA": header of a Send of >= 16 bytes */
#define SOAK_END_MAGIC 0x454e4421u        /* "END!": the last Send of a QP */
#define SOAK_HDR_LEN 16u

struct soak_opts {
	bool server;
	const char *addr, *port;
	int qps;
	bool srq;              /* server: receives from one shared receive queue */
	double seconds;        /* client: how long to post; both: warm-up is 20 % of it */
	uint64_t seed;         /* client: the mix and the Send contents (told to the server) */
	int stall_ms;          /* an operation outstanding longer is a stall */
	int progress_s;        /* a progress line every this many seconds */
	bool expect_kill;      /* the peer will be killed: pass when everything flushes */
	int kill_wait_s;       /* expect_kill: how long the QPs may take to reach Error */
	long rss_bound_kib;    /* VmRSS growth after warm-up allowed; < 0: not checked */
};

/* Connect-time private data: client -> server, then server -> client. Both ends run on one
 * kind of host, so fields are in host order. */
struct soak_hello {
	uint32_t magic, qp, qps, credit_rkey;
	uint64_t seed, credit_addr;
};
struct soak_welcome {
	uint32_t magic, rkey;
	uint64_t addr, span;   /* QP i owns [addr + i * SOAK_SLOTS * span, ...) */
};

/* The credit word the server writes: granted receives; check == ~granted, so that a torn
 * read of a word being placed is never taken for a grant. */
struct soak_credit {
	volatile uint32_t granted, check;
};

/* The header at the start of a Send of at least SOAK_HDR_LEN bytes. */
struct soak_hdr {
	uint32_t magic, qp, seq, len;
};

enum soak_kind { SOAK_SEND, SOAK_WRITE, SOAK_READ, SOAK_RECV, SOAK_CREDIT, SOAK_END, SOAK_KINDS };

/* What a run did; reported at the end. */
struct soak_stats {
	uint64_t ops[SOAK_KINDS], bytes[SOAK_KINDS];
	uint64_t max_lat_ns;
	uint64_t posted, completed, flushed;   /* WRs of the QPs' own queues */
};

/* The state shared by both roles: connections, memory, time, progress. */
struct soak_run {
	const struct soak_opts *o;
	struct rdma_event_channel *ec;
	struct vx_conn cm;                     /* setup: vx_cm_wait's state (ec, private data) */
	struct rdma_cm_id *listen_id;
	struct rdma_cm_id *id[SOAK_MAX_QPS];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_mr *mr[4];                  /* soak_reg's, deregistered by soak_teardown */
	int nmr;
	unsigned cq_events;                    /* to ack before the CQ is destroyed */
	bool armed;
	int disconnected;                      /* DISCONNECTED events seen */
	bool qp_dead[SOAK_MAX_QPS];            /* Error seen (event, flush or disconnect) */
	const char *dead_why;                  /* the first sign the peer went away */
	uint64_t dead_ns;
	uint64_t start_ns, next_progress_ns, next_rss_ns;
	struct soak_stats st;
	long rss_start, rss_warm, rss_max_after, rss_last;
	bool warm;
};

/* soak_pattern.c: contents and lengths, all derived from keys. */
uint64_t soak_key(uint64_t seed, unsigned kind, unsigned qp, uint64_t seq);
uint32_t soak_len(uint64_t key);              /* 1 .. SOAK_MAX_LEN, log-uniform */
void soak_fill(uint8_t *p, uint32_t len, uint64_t key);
long soak_check(const uint8_t *p, uint32_t len, uint64_t key);   /* first bad byte or -1 */
void soak_send_fill(uint8_t *p, uint32_t len, uint64_t key, unsigned qp, uint32_t seq);
/* Checks a received Send (header and pattern); prints what differs; 0 or -1. */
int soak_send_check(const uint8_t *p, uint32_t got, uint32_t want, uint64_t key, unsigned qp,
                    uint32_t seq);
uint64_t soak_rand(uint64_t *state);

/* soak_util.c: progress, RSS samples, events, teardown (time and RSS: vx.h). */
void soak_tick(struct soak_run *r, const char *role);   /* progress line, RSS sample */
int soak_rss_verdict(const struct soak_run *r);           /* 0 within the bound, else -1 */
void soak_report(const struct soak_run *r, const char *role);
int soak_qp_index(const struct soak_run *r, uint32_t qp_num);
/* Takes pending async and CM events (non-blocking); marks dead QPs. -1 on an event that
 * must not happen (then the run fails unless the peer is expected to die). */
int soak_events(struct soak_run *r);
void soak_mark_dead(struct soak_run *r, int qp, const char *why);
/* Polls up to n completions; when none, waits for the completion channel or an event for at
 * most ms. Returns how many, or -1. */
int soak_poll(struct soak_run *r, struct ibv_wc *wc, int n, int ms);
/* Every QP in IBV_QPS_ERR (queried)? */
/* One turn of a main loop: completions (each to on_wc) and events, waiting up to 100 ms for
 * either. -1 when on_wc fails or an event must not happen. */
int soak_take(struct soak_run *r, int (*on_wc)(void *arg, const struct ibv_wc *wc), void *arg);
bool soak_all_qps_error(const struct soak_run *r);
void soak_print_states(const struct soak_run *r, const char *role);
void soak_note_completion(struct soak_run *r, enum soak_kind k, uint32_t bytes, uint64_t t0);
void soak_teardown(struct soak_run *r);
/* After the run: QP states, totals, the RSS verdict (when rc is 0), teardown, OK or FAIL.
 * Returns the exit status. */
int soak_finish(struct soak_run *r, const char *role, int rc);

/* soak_conn.c */
int soak_channel(struct soak_run *r);   /* the CM event channel, non-blocking */
int soak_common_setup(struct soak_run *r, struct ibv_context *ctx);
int soak_create_qp(struct soak_run *r, struct rdma_cm_id *id, int depth_send, int depth_recv);
/* A zeroed, page-aligned buffer registered in the run's PD (vx_reg), kept for teardown. */
struct ibv_mr *soak_reg(struct soak_run *r, size_t len, int access);
/* Waits for one CM event during setup (vx_cm_wait); copies its private data to pdata. */
int soak_cm_wait(struct soak_run *r, enum rdma_cm_event_type want, int ms,
                 struct rdma_cm_id **idp, void *pdata, size_t pdata_len);

int soak_server(const struct soak_opts *o);
int soak_client(const struct soak_opts *o);

#endif
