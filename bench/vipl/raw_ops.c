/* raw_ops: see raw_ops.h. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raw_ops.h"

#define WR_CREDIT (1ull << 40)

static uint8_t *slot(struct raw *r, unsigned i) { return r->base + (size_t)i * RAW_MAX_MSG; }

static void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 8));
}

static bool check(const uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed * 131u + i * 7u + (i >> 8)))
			return fprintf(stderr, "data check failed at %u\n", i), false;
	return true;
}

/* Spins on the CQ for one successful completion. */
static int poll1(struct raw *r, struct ibv_wc *wc)
{
	uint64_t end = 0;
	unsigned spins = 0;
	for (;;) {
		int n = ibv_poll_cq(r->c.cq, 1, wc);
		if (n < 0)
			return fprintf(stderr, "ibv_poll_cq failed\n"), -1;
		if (n == 1) {
			if (wc->status != IBV_WC_SUCCESS)
				return fprintf(stderr, "completion error: %s\n",
					       ibv_wc_status_str(wc->status)), -1;
			return 0;
		}
		/* -y: an empty poll yields, as vipl-pingpong -y does (on two shared cores a pure
		 * spin can starve softrnic's progress thread; README, rdma_bench convention) */
		if (r->yield)
			sched_yield();
		if (++spins % 4096 == 0) {
			uint64_t now = vx_now_ns();
			if (!end)
				end = now + 30000000000ull;
			else if (now > end)
				return fprintf(stderr, "no completion in 30 s\n"), -1;
		}
	}
}

/* The next receive completion (VipRecvDone / VipRecvWait of the VIPL programs). */
static int wait_recv(struct raw *r, struct ibv_wc *wc)
{
	if (r->nstash) {
		*wc = r->stash[r->stash_head];
		r->stash_head = (r->stash_head + 1) % (sizeof r->stash / sizeof r->stash[0]);
		r->nstash--;
		return 0;
	}
	for (;;) {
		if (poll1(r, wc))
			return -1;
		if (wc->opcode & IBV_WC_RECV)
			return 0;
		r->sends_done++;
	}
}

/* The next send completion (VipSendDone / VipSendWait). */
static int wait_send(struct raw *r)
{
	struct ibv_wc wc;
	const unsigned cap = sizeof r->stash / sizeof r->stash[0];
	if (r->sends_done) {
		r->sends_done--;
		return 0;
	}
	for (;;) {
		if (poll1(r, &wc))
			return -1;
		if (!(wc.opcode & IBV_WC_RECV))
			return 0;
		if (r->nstash == cap)
			return fprintf(stderr, "receive stash full\n"), -1;
		r->stash[(r->stash_head + r->nstash) % cap] = wc;
		r->nstash++;
	}
}

int raw_lat_exchange(struct raw *r, uint32_t seq)
{
	uint8_t *sbuf = slot(r, 0), *rbuf = slot(r, 1);
	struct ibv_wc wc;
	if (r->server) {
		if (wait_recv(r, &wc))
			return -1;
		if (wc.byte_len != r->size || (r->verify && !check(rbuf, wc.byte_len, seq)))
			return fprintf(stderr, "server: got %u bytes\n", wc.byte_len), -1;
		if (vx_post_recv(&r->c, 1, rbuf, RAW_MAX_MSG, r->mr))
			return -1;
		if (r->verify)
			fill(sbuf, r->size, seq ^ 0x5555);
		if (vx_post(&r->c, IBV_WR_SEND, 0, sbuf, r->size, r->mr, 0, 0, true))
			return -1;
		return wait_send(r);
	}
	if (r->verify)
		fill(sbuf, r->size, seq);
	if (vx_post(&r->c, IBV_WR_SEND, 0, sbuf, r->size, r->mr, 0, 0, true))
		return -1;
	if (wait_recv(r, &wc))
		return -1;
	if (wc.byte_len != r->size || (r->verify && !check(rbuf, wc.byte_len, seq ^ 0x5555)))
		return fprintf(stderr, "client: got %u bytes\n", wc.byte_len), -1;
	if (vx_post_recv(&r->c, 1, rbuf, RAW_MAX_MSG, r->mr))
		return -1;
	return wait_send(r);
}

uint32_t raw_send_depth(uint32_t w) { return w + 8; }
uint32_t raw_recv_depth(uint32_t w) { return 2 * w + RAW_CREDIT_RECVS + 8; }
size_t raw_region_len(uint32_t w) { return (size_t)(2 * w + 2) * RAW_MAX_MSG; }

int raw_lat_prep(struct raw *r)
{
	return vx_post_recv(&r->c, 1, slot(r, 1), RAW_MAX_MSG, r->mr);
}

int raw_bw_prep(struct raw *r)
{
	uint8_t *cb = slot(r, r->w);
	if (r->server) {
		for (unsigned i = 0; i < 2 * r->w; i++)
			if (vx_post_recv(&r->c, i, slot(r, i), RAW_MAX_MSG, r->mr))
				return -1;
		return 0;
	}
	for (unsigned k = 0; k < RAW_CREDIT_RECVS; k++)
		if (vx_post_recv(&r->c, WR_CREDIT + k, cb + 64 * k, 64, r->mr))
			return -1;
	return 0;
}

int raw_bw_server(struct raw *r, unsigned long n)
{
	unsigned nrecv = 2 * r->w, batch = r->w / 2 ? r->w / 2 : 1, since = 0;
	uint32_t *cbuf = (uint32_t *)slot(r, nrecv);
	struct ibv_wc wc;
	for (unsigned long i = 0; i < n; i++) {
		if (wait_recv(r, &wc))
			return -1;
		if (wc.byte_len != r->size ||
		    (r->verify && !check(slot(r, (unsigned)wc.wr_id), r->size, (uint32_t)i)))
			return fprintf(stderr, "message %lu: %u bytes\n", i, wc.byte_len), -1;
		if (vx_post_recv(&r->c, wc.wr_id, slot(r, (unsigned)wc.wr_id), RAW_MAX_MSG, r->mr))
			return -1;
		if (++since == batch || i + 1 == n) {
			*cbuf = since;
			since = 0;
			if (vx_post(&r->c, IBV_WR_SEND, WR_CREDIT, cbuf, 4, r->mr, 0, 0, true) ||
			    wait_send(r))
				return -1;
		}
	}
	return 0;
}

int raw_bw_client(struct raw *r, unsigned long n, uint64_t *ns)
{
	unsigned long credits = 2 * r->w, acked = 0, i = 0;
	unsigned outstanding = 0, head = 0;
	uint8_t *cb = slot(r, r->w);
	struct ibv_wc wc;
	uint64_t t0 = vx_now_ns();
	while (i < n || outstanding || acked < n) {
		/* the order of vipl-bw: reap when the window is full or all is posted, else post
		 * while credits last, else wait for a credit message */
		if (outstanding && (outstanding == r->w || i == n)) {
			if (wait_send(r))
				return -1;
			head = (head + 1) % r->w;
			outstanding--;
			continue;
		}
		if (i < n && credits > 0) {
			unsigned k = (head + outstanding) % r->w;
			if (r->verify)
				fill(slot(r, k), r->size, (uint32_t)i);
			if (vx_post(&r->c, IBV_WR_SEND, k, slot(r, k), r->size, r->mr, 0, 0, true))
				return -1;
			outstanding++, credits--, i++;
			continue;
		}
		if (wait_recv(r, &wc))
			return -1;
		uint8_t *c = cb + 64 * (wc.wr_id - WR_CREDIT);
		credits += *(uint32_t *)c, acked += *(uint32_t *)c;
		if (vx_post_recv(&r->c, wc.wr_id, c, 64, r->mr))
			return -1;
	}
	*ns = vx_now_ns() - t0;
	return 0;
}
