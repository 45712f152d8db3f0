/* vipl_raw: the exchanges of vipl-pingpong -p and vipl-bw written with raw verbs + librdmacm,
 * the baseline of scripts/bench-vipl.sh. It does exactly what the VIPL programs do:
 *   lat: client posts the send, polls for its receive, re-posts the receive, reaps the send;
 *        the server polls for the receive, re-posts it, sends the echo, reaps the send.
 *        One-way latency = round trip / 2 (perftest-style line).
 *   bw:  the client keeps up to -w sends posted; the server keeps 2*w receives posted and
 *        sends a 4-byte credit message per w/2 re-posted receives.
 * Completions are polled (ibv_poll_cq spin; -y: sched_yield between empty polls), like
 * vipl-pingpong -p / -y.
 * usage: vipl_raw lat|bw -s | -c host  -P port [-S size] [-n iters] [-w window] [-v] [-y] */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vx.h"

#define MAX_MSG 65536
#define CREDIT_RECVS 8
#define WR_CREDIT (1ull << 40)

struct raw {
	struct vx_conn c;
	bool server, bw, verify, yield;
	uint32_t size, w;
	unsigned long iters;
	struct ibv_mr *mr;          /* all buffers: 2*w (+1) slots of MAX_MSG, credit slots */
	uint8_t *base;
	/* One CQ serves both queues: receive completions seen while waiting for a send (and
	 * send completions seen while waiting for a receive) are kept for the next wait, the
	 * way VIPL's separate work queues keep them. */
	struct ibv_wc stash[2 * 1024 + 16];
	unsigned nstash, stash_head, sends_done;
};

static uint8_t *slot(struct raw *r, unsigned i) { return r->base + (size_t)i * MAX_MSG; }

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

static int lat_exchange(struct raw *r, uint32_t seq)
{
	uint8_t *sbuf = slot(r, 0), *rbuf = slot(r, 1);
	struct ibv_wc wc;
	if (r->server) {
		if (wait_recv(r, &wc))
			return -1;
		if (wc.byte_len != r->size || (r->verify && !check(rbuf, wc.byte_len, seq)))
			return fprintf(stderr, "server: got %u bytes\n", wc.byte_len), -1;
		if (vx_post_recv(&r->c, 1, rbuf, MAX_MSG, r->mr))
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
	if (vx_post_recv(&r->c, 1, rbuf, MAX_MSG, r->mr))
		return -1;
	return wait_send(r);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int run_lat(struct raw *r)
{
	unsigned long n = r->iters, warm = n / 10 < 100 ? n / 10 : 100;
	double *us = calloc(n, sizeof *us), sum = 0;
	if (!us || vx_post_recv(&r->c, 1, slot(r, 1), MAX_MSG, r->mr))
		return free(us), -1;
	if (vx_establish(&r->c))
		return free(us), -1;
	for (unsigned long i = 0; i < warm + n; i++) {
		uint64_t t0 = vx_now_ns();
		if (lat_exchange(r, (uint32_t)i))
			return free(us), -1;
		if (i >= warm)
			us[i - warm] = (double)(vx_now_ns() - t0) / 2000.0;
	}
	if (!r->server) {
		qsort(us, n, sizeof *us, cmp);
		for (unsigned long i = 0; i < n; i++)
			sum += us[i];
		unsigned long k99 = (unsigned long)((double)n * 0.99 + 0.999999);
		printf(" #bytes #iterations  t_typical[usec]  t_avg[usec]  99%% percentile[usec]\n");
		printf(" %-7u %-12lu %-16.2f %-12.2f %-12.2f\n", r->size, n, us[n / 2],
		       sum / (double)n, us[k99 ? k99 - 1 : 0]);
	}
	free(us);
	return 0;
}

static int bw_server(struct raw *r)
{
	unsigned nrecv = 2 * r->w, batch = r->w / 2 ? r->w / 2 : 1, since = 0;
	uint32_t *cbuf = (uint32_t *)slot(r, nrecv);
	struct ibv_wc wc;
	for (unsigned i = 0; i < nrecv; i++)
		if (vx_post_recv(&r->c, i, slot(r, i), MAX_MSG, r->mr))
			return -1;
	if (vx_establish(&r->c))
		return -1;
	for (unsigned long i = 0; i < r->iters; i++) {
		if (wait_recv(r, &wc))
			return -1;
		if (wc.byte_len != r->size ||
		    (r->verify && !check(slot(r, (unsigned)wc.wr_id), r->size, (uint32_t)i)))
			return fprintf(stderr, "message %lu: %u bytes\n", i, wc.byte_len), -1;
		if (vx_post_recv(&r->c, wc.wr_id, slot(r, (unsigned)wc.wr_id), MAX_MSG, r->mr))
			return -1;
		if (++since == batch || i + 1 == r->iters) {
			*cbuf = since;
			since = 0;
			if (vx_post(&r->c, IBV_WR_SEND, WR_CREDIT, cbuf, 4, r->mr, 0, 0, true) ||
			    wait_send(r))
				return -1;
		}
	}
	return 0;
}

static int bw_client(struct raw *r)
{
	unsigned long credits = 2 * r->w, acked = 0, n = r->iters, i = 0;
	unsigned outstanding = 0, head = 0;
	uint8_t *cb = slot(r, r->w);
	struct ibv_wc wc;
	for (unsigned k = 0; k < CREDIT_RECVS; k++)
		if (vx_post_recv(&r->c, WR_CREDIT + k, cb + 64 * k, 64, r->mr))
			return -1;
	if (vx_establish(&r->c))
		return -1;
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
	double s = (double)(vx_now_ns() - t0) / 1e9;
	printf(" #bytes     #iterations    BW average[MB/sec]   MsgRate[Mpps]\n");
	printf(" %-10u %-14lu %-20.2f %-10.6f\n", r->size, n, (double)r->size * (double)n / s / 1e6,
	       (double)n / s / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	static struct raw r;
	r.size = 8, r.iters = 1000, r.w = 64;
	const char *host = NULL, *port = "7480";
	if (argc < 2 || (strcmp(argv[1], "lat") && strcmp(argv[1], "bw")))
		goto usage;
	r.bw = strcmp(argv[1], "bw") == 0;
	int ch;
	optind = 2;
	while ((ch = getopt(argc, argv, "sc:P:S:n:w:vy")) != -1) {
		switch (ch) {
		case 's': r.server = true; break;
		case 'c': host = optarg; break;
		case 'P': port = optarg; break;
		case 'S': r.size = (uint32_t)atoi(optarg); break;
		case 'n': r.iters = strtoul(optarg, NULL, 0); break;
		case 'w': r.w = (uint32_t)atoi(optarg); break;
		case 'v': r.verify = true; break;
		case 'y': r.yield = true; break;
		default: goto usage;
		}
	}
	if (r.server == (host != NULL) || r.size == 0 || r.size > MAX_MSG || !r.iters || !r.w ||
	    r.w > 1024)
		goto usage;
	struct vx_opts o = { .addr = host, .port = port, .server = r.server,
			     .send_depth = r.w + 8, .recv_depth = 2 * r.w + CREDIT_RECVS + 8,
			     .timeout_ms = 30000, .accept_timeout_ms = 30000 };
	if (vx_setup(&r.c, &o))
		return 1;
	r.mr = vx_reg(&r.c, (size_t)(2 * r.w + 2) * MAX_MSG, IBV_ACCESS_LOCAL_WRITE);
	if (!r.mr)
		return 1;
	r.base = r.mr->addr;
	int rc = r.bw ? (r.server ? bw_server(&r) : bw_client(&r)) : run_lat(&r);
	vx_disconnect(&r.c);
	vx_unreg(r.mr);
	vx_destroy(&r.c);
	return rc ? 1 : 0;
usage:
	fprintf(stderr, "usage: vipl_raw lat|bw -s | -c host  [-P port] [-S size] [-n iters] "
			"[-w window] [-v] [-y]\n");
	return 2;
}
