/* Test harness for the TCP engine: two stacks (A and B) in one process. Each stack's transmit
 * function copies its frames (as a copying PMD such as memif or af_packet does) into a
 * queue for the other; a virtual clock drives both; impairment hooks drop, duplicate,
 * corrupt or hold back (reorder) frames; every frame is logged with its TCP header. */
#ifndef TCP_PAIR_H
#define TCP_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tcp.h"
#include "tcp_opt.h"

struct rte_mbuf;
struct rte_mempool;

#define PAIR_A 0
#define PAIR_B 1
#define PAIR_QMAX 4096
#define PAIR_LOG 8192

/* One transmitted TCP segment as seen on the wire. */
struct pair_seg {
	int dir;               /* PAIR_A: sent by A */
	uint8_t flags;
	uint32_t seq, ack, len;
	uint16_t wnd;
	struct tcp_opts opts;
	uint8_t first[2];      /* first payload octets (record checks) */
	bool dropped;
	uint64_t t_ns;
};

enum pair_action { PAIR_PASS, PAIR_DROP, PAIR_DUP, PAIR_CORRUPT, PAIR_HOLD };
/* Decide what happens to a frame; n counts frames in this direction from 1. */
typedef enum pair_action (*pair_filter_fn)(void *arg, const struct pair_seg *s, unsigned n);

struct tcp_pair;
struct pair_txctx {
	struct tcp_pair *p;
	int dir;
};

struct tcp_pair {
	struct rte_mempool *pool;
	uint64_t now_ns;
	struct tcp_stack *st[2];
	uint32_t ip[2];
	struct rte_mbuf *q[2][PAIR_QMAX];
	unsigned qn[2];
	struct rte_mbuf *held[2]; /* PAIR_HOLD: delivered after the next frame */
	unsigned count[2];
	pair_filter_fn filter;
	void *filter_arg;
	struct pair_seg log[PAIR_LOG];
	unsigned nlog;
	struct pair_txctx txctx[2];
	unsigned runaway;         /* pair_run calls that did not settle (must stay 0) */
	unsigned clock_reads;     /* of now_ns, by either stack */
};

/* Per-connection test endpoint: the callbacks record everything. */
struct pair_ep {
	struct tcp_conn *c;
	uint8_t *rx;
	size_t rx_len, rx_cap;
	bool auto_recved;      /* call tcp_conn_recved in on_recv (default on) */
	uint32_t held;         /* octets not yet released when !auto_recved */
	bool connected, eof, closed;
	int conn_err, close_err;
	unsigned writable, recv_calls;
	void *zc_done[64];
	int zc_err[64];
	unsigned nzc, zc_errs;
	void *zc_last;
	bool abort_in_recv;
};

extern const struct tcp_conn_ops pair_ops;
extern const struct tcp_listener_ops pair_lops;

/* EAL (once per binary) and the mbuf pool. */
int pair_eal_init(const char *name);
struct rte_mempool *pair_pool(void);
unsigned pair_pool_free(void);

/* cfg_a/cfg_b may be NULL (defaults; fixed ISN key). start_ns: the initial clock. */
void pair_init(struct tcp_pair *p, const struct tcp_stack_cfg *cfg_a,
	       const struct tcp_stack_cfg *cfg_b, uint64_t start_ns);
void pair_fini(struct tcp_pair *p);
void pair_cfg_default(struct tcp_stack_cfg *cfg);

/* Deliver queued frames and poll both stacks until nothing moves (bounded). */
void pair_run(struct tcp_pair *p);
/* Advance the clock by ns in steps no larger than step_ns, running the pair at each. */
void pair_advance(struct tcp_pair *p, uint64_t ns, uint64_t step_ns);
/* Advance (1 ms steps) until cond(arg) or max_ns passed; returns cond's value. */
bool pair_run_until(struct tcp_pair *p, bool (*cond)(void *arg), void *arg, uint64_t max_ns);

/* Establish A -> B on port; eps get the connections. */
void pair_connect(struct tcp_pair *p, uint16_t port, struct pair_ep *ea, struct pair_ep *eb);
void pair_ep_init(struct pair_ep *e);
void pair_ep_fini(struct pair_ep *e);
/* Send len octets of a pattern from offset off through tcp_send as space allows, running the
 * pair until all is acknowledged and received or max_ns; returns octets sent. */
size_t pair_bulk(struct tcp_pair *p, struct pair_ep *tx, struct pair_ep *rx, size_t len,
		 uint64_t max_ns);
uint8_t pair_pattern(size_t i);
bool pair_check_pattern(const struct pair_ep *e, size_t len);
struct pair_inj {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t wnd;
	const struct tcp_opt_out *opts;
	const void *data;
	uint32_t len;
};
/* Queue a hand-made segment to stack `to` (from the other stack's addresses). */
int pair_inject(struct tcp_pair *p, int to, const struct pair_inj *in);
/* The last segment stack dir sent (NULL: none). */
const struct pair_seg *pair_last(const struct tcp_pair *p, int dir);
void pair_dump(const struct tcp_pair *p, unsigned last);
unsigned pair_count(const struct tcp_pair *p, int dir, uint8_t flags_set, bool with_data);

#endif
