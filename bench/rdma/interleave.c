/* interleave: one softrnic run with its kernel TCP baseline in between its blocks, in the same
 * two processes (bench_rdma.h). The goal ratios come from here: each TCP block is compared
 * with the softrnic blocks just before and after it, so a change of the machine's state (this
 * shared machine has slow periods lasting seconds, with the same exchange 1.5x slower) moves
 * both sides of a ratio alike, where separate back-to-back runs judged it as a difference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rdma.h"
#include "perf.h"

struct mix {
	struct perf_params p;
	struct tcp_side t;
};

static int mix_server(void *arg)
{
	struct mix m = *(struct mix *)arg;
	struct perf_result r;
	pthread_t sink;

	m.p.server = true;
	m.t.server = true;
	if (m.t.bulk) {
		if (tcp_side_sink_start(&m.t, &sink))
			return -1;
	} else {
		m.p.between = tcp_side_block;
		m.p.between_arg = &m.t;
	}
	return perf_run(&m.p, &r);   /* the sink thread dies with the process */
}

/* The figure of block k of v: one value per block already (bandwidth), or the p50 of the
 * block's `every` samples (latency), taken in tmp. */
static double block_figure(const double *v, bool per_block, uint32_t every, uint32_t k,
			   double *tmp)
{
	if (per_block)
		return v[k];
	memcpy(tmp, v + (size_t)k * every, every * sizeof *tmp);
	bench_sort(tmp, every);
	return tmp[every / 2];
}

/* nb softrnic blocks and nb - 1 TCP blocks between them: TCP block k is judged against the
 * mean of softrnic blocks k and k + 1. */
static int summarize(const struct mix *m, const double *samples, struct bench_out *out)
{
	uint32_t nb = m->p.iters / m->p.between_every;
	double *r = calloc(nb, sizeof *r), *t = calloc(nb, sizeof *t);
	double *tmp = calloc(m->p.between_every, sizeof *tmp);
	struct bench_ratios q;
	int rc = -1;

	if (!r || !t || !tmp || nb < 2 || m->t.nout < (m->t.bulk ? nb - 1 : (nb - 1) *
							     m->t.block))
		goto out;
	for (uint32_t k = 0; k < nb; k++)
		r[k] = block_figure(samples, !m->p.lat, m->p.between_every, k, tmp);
	for (uint32_t k = 0; k + 1 < nb; k++)
		t[k] = block_figure(m->t.out, m->t.bulk, m->t.block, k, tmp);
	if (bench_around_ratios(r, t, nb - 1, &q))
		goto out;
	out->ratio = q.median;
	out->ratio_q1 = q.q1;
	out->ratio_q3 = q.q3;
	out->rdma_med = bench_median(r, nb);
	out->tcp_med = bench_median(t, nb - 1);
	rc = 0;
out:
	free(r);
	free(t);
	free(tmp);
	return rc;
}

static int mix_client(void *arg, struct bench_out *out)
{
	struct mix m = *(struct mix *)arg;
	struct perf_result r;
	uint32_t nb = m.p.iters / m.p.between_every;
	int rc = -1;

	m.p.server = false;
	m.t.server = false;
	m.t.cap = m.t.bulk ? nb : nb * m.t.block;
	m.t.out = calloc(m.t.cap, sizeof *m.t.out);
	m.p.samples = calloc(m.p.lat ? m.p.iters : nb, sizeof *m.p.samples);
	m.p.between = tcp_side_block;
	m.p.between_arg = &m.t;
	if (m.t.out && m.p.samples && perf_run(&m.p, &r) == 0)
		rc = summarize(&m, m.p.samples, out);
	tcp_side_close(&m.t);
	free(m.t.out);
	free(m.p.samples);
	return rc;
}

int bench_interleaved(const struct perf_params *p, uint32_t every, enum tcp_wait wait,
		      struct bench_out *out)
{
	struct mix m = { .p = *p };

	if (every == 0 || p->iters % every != 0 || p->iters / every < 2)
		return -1;
	m.p.between_every = every;
	m.t = (struct tcp_side){ .bulk = !p->lat, .size = p->size, .block = every, .wait = wait };
	if (tcp_side_listen(&m.t))
		return -1;
	int rc = bench_pair(mix_server, mix_client, &m, 300, 300, out);
	tcp_side_close(&m.t);
	return rc;
}
