/* raw_ops: vipl-pingpong's and vipl-bw's exchanges written with raw verbs + librdmacm (the
 * baselines of scripts/bench-vipl.sh), as blocks a caller repeats on one connection:
 *   lat: client posts the send, polls for its receive, re-posts the receive, reaps the send;
 *        the server polls for the receive, re-posts it, sends the echo, reaps the send.
 *   bw:  the client keeps up to w sends posted; the server keeps 2*w receives posted and
 *        sends a 4-byte credit message per w/2 re-posted receives; each block ends with every
 *        receive re-posted and every credit returned.
 * Completions are polled (ibv_poll_cq spin; yield: sched_yield between empty polls), like
 * vipl-pingpong -p / -y. The *_prep calls post the first receives, before vx_establish. */
#ifndef RAW_OPS_H
#define RAW_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "vx.h"

#define RAW_MAX_MSG 65536
#define RAW_CREDIT_RECVS 8

struct raw {
	struct vx_conn c;
	bool server, verify, yield;
	uint32_t size, w;
	struct ibv_mr *mr;          /* all buffers: 2*w (+1) slots of RAW_MAX_MSG, credit slots */
	uint8_t *base;
	/* One CQ serves both queues: receive completions seen while waiting for a send (and
	 * send completions seen while waiting for a receive) are kept for the next wait, the
	 * way VIPL's separate work queues keep them. */
	struct ibv_wc stash[2 * 1024 + 16];
	unsigned nstash, stash_head, sends_done;
};

/* Queue depths and the registered region for window w (vx_setup options; vx_reg length). */
uint32_t raw_send_depth(uint32_t w);
uint32_t raw_recv_depth(uint32_t w);
size_t raw_region_len(uint32_t w);

int raw_lat_prep(struct raw *r);
int raw_lat_exchange(struct raw *r, uint32_t seq);
int raw_bw_prep(struct raw *r);
int raw_bw_server(struct raw *r, unsigned long n);
/* *ns: from the first post to the last credit */
int raw_bw_client(struct raw *r, unsigned long n, uint64_t *ns);

#endif
