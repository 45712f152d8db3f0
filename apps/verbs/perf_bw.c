/* perf_bw: the bandwidth tests. The client keeps up to tx_depth WRs in flight (RDMA Reads:
 * no more than the ORD), signals one in `mod` and measures from the first post to the last
 * completion. send_bw uses credits as perftest does on iWARP (no RNR retry there): the
 * server RDMA-writes the number of receives it has posted into the client's credit record.
 * Several QPs (perf_params.qps): one thread visits each in turn, posting what its depth and
 * credits allow and reaping its CQ, as perftest's -q does; the rate counts every QP's
 * messages from the first post to the last completion. */
#include <stdio.h>
#include <stdlib.h>

#include "perf_int.h"

#define MIB (1024.0 * 1024.0)

struct bw_samples {
	uint64_t *t, *done;
	uint32_t n;
	uint64_t paused;       /* ns spent in the interleaving hook, left out of every time */
	uint64_t block_t0;     /* interleaving: start of the current block (paused-adjusted) */
};

static uint64_t credit_now(struct perf_sess *s)
{
	volatile struct perf_credit *c = &s->ctl->credit;
	uint64_t count = c->count, check = c->check;
	if ((count ^ CREDIT_CHECK) == check && count > s->credits)
		s->credits = count;
	return s->credits;
}

static uint32_t depth_of(const struct perf_sess *s)
{
	uint32_t d = s->p.tx_depth ? s->p.tx_depth : 1;
	if (d > 256)
		d = 256;
	if (s->p.test == PERF_READ && s->c.rd_atom && d > s->c.rd_atom)
		d = s->c.rd_atom;
	return d;
}

/* Where posting stops for now: the end of the run, or of the current interleaving block. */
static uint64_t post_limit(const struct perf_sess *s)
{
	uint64_t every = s->p.between ? s->p.between_every : 0;

	if (every == 0)
		return s->p.iters;
	uint64_t end = (s->data_done / every + 1) * every;
	return end < s->p.iters ? end : s->p.iters;
}

static bool may_post(struct perf_sess *s, uint64_t posted, uint32_t depth)
{
	if (posted >= post_limit(s) || posted - s->data_done >= depth)
		return false;
	return s->p.test != PERF_SEND || posted + 1 <= credit_now(s);
}

static void sample(struct bw_samples *b, uint64_t done)
{
	b->t[b->n] = vx_now_ns() - b->paused;
	b->done[b->n++] = done;
}

/* A block of between_every messages is complete and nothing is in flight: its rate, then the
 * hook, whose time is left out (perf.h). */
static int block_done(struct perf_sess *s, struct bw_samples *b)
{
	uint64_t every = s->p.between_every, t = vx_now_ns() - b->paused;

	if (s->p.samples)
		s->p.samples[s->data_done / every - 1] =
			(double)every * s->p.size / ((double)(t - b->block_t0) / 1e9) / MIB;
	if (s->data_done == s->p.iters)
		return 0;
	uint64_t t0 = vx_now_ns();
	if (s->p.between(s->p.between_arg))
		return fprintf(stderr, "softrnic-perf: the interleaved step failed\n"), -1;
	b->paused += vx_now_ns() - t0;
	b->block_t0 = vx_now_ns() - b->paused;
	perf_arm_deadline(s);
	return 0;
}

/* One WR in mod is signaled: half the depth, at most 64. */
static uint32_t mod_of(uint32_t depth)
{
	return depth / 2 ? (depth / 2 < 64 ? depth / 2 : 64) : 1;
}

/* Posts what the depth, the credits and the block allow, p.post_list WRs a call at most;
 * *posted counts the run's WRs. */
static int post_some(struct perf_sess *s, uint64_t *posted, uint32_t depth, uint32_t mod)
{
	static const enum ibv_wr_opcode ops[] = { IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_SEND };
	uint32_t list = s->p.post_list > 1 ? s->p.post_list : 1, n = 0;
	bool signaled[PERF_MAX_POST_LIST];

	while (may_post(s, *posted + n, depth) && n < list) {
		uint64_t seq = *posted + ++n;
		/* signaled: every mod-th, and the last of the run or of a block, whose completion
		 * ends it */
		signaled[n - 1] = seq % mod == 0 || seq == post_limit(s);
		if (n == list || !may_post(s, seq, depth)) {
			if (perf_post_list(s, ops[s->p.test], *posted + 1, n, signaled))
				return -1;
			*posted = seq;
			n = 0;
		}
	}
	return 0;
}

static int bw_loop(struct perf_sess *s, struct bw_samples *b)
{
	uint32_t depth = depth_of(s), mod = mod_of(depth);
	uint64_t posted = 0;
	perf_arm_deadline(s);
	sample(b, 0);
	b->block_t0 = b->t[0];
	while (s->data_done < s->p.iters) {
		if (post_some(s, &posted, depth, mod))
			return -1;
		uint64_t before = s->data_done;
		int n = perf_reap(s);
		if (n < 0)
			return -1;
		if (s->data_done != before) {
			sample(b, s->data_done);
			perf_arm_deadline(s);
			if (s->p.between && s->p.between_every &&
			    s->data_done % s->p.between_every == 0 && block_done(s, b))
				return -1;
		} else if (n == 0 && perf_spin(s)) {
			return -1;
		}
	}
	return 0;
}

/* send_bw: the closing message needs the credit of the receive posted for it. */
static int wait_final_credit(struct perf_sess *s)
{
	perf_arm_deadline(s);
	while (credit_now(s) < (uint64_t)s->p.iters + 1)
		if (perf_spin(s) || ((s->spins & 4095) == 0 && perf_reap(s) < 0))
			return -1;
	return 0;
}

static void bw_result(const struct perf_sess *s, const struct bw_samples *b,
                      struct perf_result *r)
{
	double secs = (double)(b->t[b->n - 1] - b->t[0]) / 1e9;
	double bytes = (double)s->p.iters * s->p.size;
	uint64_t win = s->p.iters / 20 > depth_of(s) ? s->p.iters / 20 : depth_of(s);
	if (secs <= 0)
		secs = 1e-9;
	r->bw_avg = bytes / secs / MIB;
	r->msg_rate = s->p.iters / secs / 1e6;
	r->bw_peak = perf_peak_rate(b->t, b->done, b->n, win) * s->p.size / MIB;
	if (r->bw_peak < r->bw_avg)   /* too few samples for a window: the average is the peak */
		r->bw_peak = r->bw_avg;
}

int perf_bw_client(struct perf_sess *s, struct perf_result *r)
{
	struct bw_samples b = { .t = calloc(s->p.iters + 2, sizeof *b.t),
	                        .done = calloc(s->p.iters + 2, sizeof *b.done) };
	int rc = -1;
	if (!b.t || !b.done)
		fprintf(stderr, "softrnic-perf: out of memory\n");
	else
		rc = bw_loop(s, &b);
	if (rc == 0)
		bw_result(s, &b, r);
	if (rc == 0 && s->p.test == PERF_SEND)
		rc = wait_final_credit(s);
	free(b.t);
	free(b.done);
	return rc;
}

/* One visit to a QP of a multi-QP run: post, then reap. *moved: a completion came. */
static int visit(struct perf_sess *s, uint64_t *posted, uint32_t depth, bool *moved)
{
	uint64_t before = s->data_done;
	if (post_some(s, posted, depth, mod_of(depth)) || perf_reap(s) < 0)
		return -1;
	*moved |= s->data_done != before;
	return 0;
}

int perf_bw_multi_client(struct perf_sess **s, uint32_t n, struct perf_result *r)
{
	uint64_t posted[PERF_MAX_QPS] = { 0 }, iters = s[0]->p.iters;
	uint32_t depth = depth_of(s[0]), left = n;
	uint64_t t0 = vx_now_ns();
	perf_arm_deadline(s[0]);
	while (left > 0) {
		bool moved = false;
		left = 0;
		for (uint32_t i = 0; i < n; i++) {
			if (s[i]->data_done < iters && visit(s[i], &posted[i], depth, &moved))
				return -1;
			left += s[i]->data_done < iters;
		}
		/* the first session keeps the deadline and watches for a disconnect for all */
		if (moved)
			perf_arm_deadline(s[0]);
		else if (left > 0 && perf_spin(s[0]))
			return -1;
	}
	double secs = (double)(vx_now_ns() - t0) / 1e9, msgs = (double)iters * n;
	if (secs <= 0)
		secs = 1e-9;
	r->msg_rate = msgs / secs / 1e6;
	r->bw_avg = r->bw_peak = msgs * s[0]->p.size / secs / MIB;
	for (uint32_t i = 0; i < n; i++)
		if (s[i]->p.test == PERF_SEND && wait_final_credit(s[i]))
			return -1;
	return 0;
}

static int write_credit(struct perf_sess *s, uint64_t posted)
{
	struct perf_credit *c = &s->ctl->credit_src;
	c->count = posted;
	c->check = posted ^ CREDIT_CHECK;
	return vx_post(&s->c, IBV_WR_RDMA_WRITE, WR_ID(K_CREDIT, posted), c, sizeof *c, s->ctl_mr,
	               s->credit_raddr, s->credit_rkey, true);
}

/* A send_bw server's receive ring: iters + 1 receives in all, the last for the closing
 * message; credits go back every quarter of the ring. */
struct serve {
	uint64_t got, posted, credited;
};

static struct serve serve_start(const struct perf_sess *s)
{
	return (struct serve){ .posted = s->rq_out, .credited = s->rq_out };
}

/* One Send received: post a receive in its place and return credits when due. */
static int served_one(struct perf_sess *s, struct serve *v)
{
	uint64_t total = (uint64_t)s->p.iters + 1;
	v->got++;
	if (v->posted < total) {
		if (perf_post_data_recv(s))
			return -1;
		v->posted++;
	}
	if (v->posted - v->credited >= SEND_BW_RQ / 4 || (v->posted == total && v->credited != total)) {
		if (write_credit(s, v->posted))
			return -1;
		v->credited = v->posted;
	}
	return 0;
}

static int serve_sends(struct perf_sess *s)
{
	struct serve v = serve_start(s);
	while (v.got < s->p.iters)
		if (perf_wait(s, K_DATA_RECV, s->p.mode) || served_one(s, &v))
			return -1;
	return 0;
}

int perf_bw_server(struct perf_sess *s)
{
	return s->p.test == PERF_SEND ? serve_sends(s) : 0;   /* Write / Read: nothing to do */
}

/* Several QPs: a send_bw server visits each in turn (a blocking wait on one would leave the
 * others' rings empty); Write and Read need nothing from it. */
int perf_bw_multi_server(struct perf_sess **s, uint32_t n)
{
	struct serve v[PERF_MAX_QPS];
	uint32_t left = s[0]->p.test == PERF_SEND ? n : 0;
	for (uint32_t i = 0; i < n; i++)
		v[i] = serve_start(s[i]);
	perf_arm_deadline(s[0]);
	while (left > 0) {
		bool moved = false;
		left = 0;
		for (uint32_t i = 0; i < n; i++) {
			if (v[i].got < s[i]->p.iters && perf_reap(s[i]) < 0)
				return -1;
			while (s[i]->have[K_DATA_RECV] > 0 && v[i].got < s[i]->p.iters) {
				s[i]->have[K_DATA_RECV]--;
				moved = true;
				if (served_one(s[i], &v[i]))
					return -1;
			}
			left += v[i].got < s[i]->p.iters;
		}
		if (moved)
			perf_arm_deadline(s[0]);
		else if (left > 0 && perf_spin(s[0]))
			return -1;
	}
	return 0;
}
