/* perf_int: the session shared by perf_conn.c, perf_lat.c and perf_bw.c. */
#ifndef PERF_INT_H
#define PERF_INT_H

#include "perf.h"

/* Work request kinds (wr_id bits 56..63; the low bits count data WRs). */
enum { K_CTL_RECV = 1, K_CTL_SEND, K_DATA_RECV, K_DATA, K_CREDIT, K_COUNT };
#define WR_ID(kind, n) (((uint64_t)(kind) << 56) | (uint64_t)(n))
#define WR_KIND(id) ((unsigned)((id) >> 56))
#define WR_SEQ(id) ((id) & ((1ull << 56) - 1))

#define PERF_MAGIC 0x53525046u   /* "SRPF" */
#define SIGNAL_EVERY 16u         /* latency tests: one signaled WR in this many */
#define SEND_BW_RQ 512u          /* send_bw: receives the server keeps posted */

/* The control message (a Send), every field big-endian. */
struct perf_ctl {
	uint32_t magic, test, lat, size, iters, depth, credits, poll_cq;
	uint64_t addr;            /* the sender's receive region (Write target / Read source) */
	uint32_t rkey, len;
	uint64_t credit_addr;     /* client: where the server writes send_bw credits */
	uint32_t credit_rkey;
	uint32_t qps;             /* connections in the run (0 from an older client: one) */
};

/* send_bw credit record: receives posted so far, and a check against torn reads. */
struct perf_credit {
	uint64_t count, check;
};
#define CREDIT_CHECK 0x5a5aa5a5c3c33c3cull

struct perf_ctl_area {
	struct perf_ctl rx, tx;
	struct perf_credit credit;       /* written by the peer (client side) */
	struct perf_credit credit_src;   /* source of the server's credit writes */
};

struct perf_sess {
	struct perf_params p;            /* the server adopts the client's test parameters */
	struct vx_conn c;
	struct ibv_mr *ctl_mr, *data_mr;
	struct perf_ctl_area *ctl;
	char *tx, *rx;                   /* local data regions of p.size bytes each */
	uint64_t raddr, credit_raddr;    /* the peer's regions */
	uint32_t rkey, credit_rkey;
	uint64_t credits;                /* client: receives the server had posted at start */
	uint32_t rq_out;                 /* receives outstanding */
	unsigned have[K_COUNT];          /* completions seen and not yet consumed, per kind */
	uint64_t data_done;              /* highest completed data WR sequence number */
	uint64_t deadline;
	uint64_t spins;
};

/* perf_conn.c */
int perf_reap(struct perf_sess *s);
int perf_spin(struct perf_sess *s);
void perf_arm_deadline(struct perf_sess *s);
int perf_wait(struct perf_sess *s, unsigned kind, enum vx_poll mode);
int perf_post_data_recv(struct perf_sess *s);
int perf_post(struct perf_sess *s, enum ibv_wr_opcode op, uint64_t seq, bool signaled);
/* Posts n WRs as one list, sequence numbers first..first+n-1; signaled[i] for the i-th. */
int perf_post_list(struct perf_sess *s, enum ibv_wr_opcode op, uint64_t first, uint32_t n,
                   const bool *signaled);

/* perf_lat.c / perf_bw.c: the client measures into r; the server serves. */
int perf_lat_client(struct perf_sess *s, struct perf_result *r);
int perf_lat_server(struct perf_sess *s);
int perf_bw_client(struct perf_sess *s, struct perf_result *r);
int perf_bw_server(struct perf_sess *s);
/* perf_bw.c, several QPs (perf_params.qps): s[0..n-1] served in turn by this thread. */
int perf_bw_multi_client(struct perf_sess **s, uint32_t n, struct perf_result *r);
int perf_bw_multi_server(struct perf_sess **s, uint32_t n);

#endif
