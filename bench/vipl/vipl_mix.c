/* vipl_mix: VIPL against raw verbs interleaved in one server and one client process, the
 * method of bench/rdma/interleave.c. Each process opens a VIPL VI connection (apps/vipl vp)
 * and a raw verbs + librdmacm connection (raw_ops.c) to its peer, then runs blocks of the
 * same exchange over them in turn: VIPL, raw, VIPL, ..., VIPL (BLOCKS VIPL blocks, one raw
 * block fewer). Each raw block is compared with the mean of the two VIPL blocks around it, so
 * the slow and quick periods of this shared machine (seconds long) move both sides of a ratio
 * alike; separate runs of each program did not share them (docs/acceptance-vipl.md).
 *   lat: vipl-pingpong's round trip (p50 of a block, one-way us) against raw_lat_exchange;
 *   bw:  vipl-bw's credit-paced stream (MB/s of a block) against raw_bw_*.
 * The client prints one line per run:
 *   vipl_mix lat|bw SIZE: vipl/raw xRATIO [Q1-Q3] vipl V raw R (us or MB/s) pairs N
 * with the median and quartiles of the block ratios and the medians of each side's blocks.
 *
 * usage: vipl_mix lat|bw RAWPORT BLOCKS OPTIONS
 *   OPTIONS are vipl-pingpong's (lat) or vipl-bw's (bw): -s | -c host[:port], -l ip[:port],
 *   -n messages per block, -S size, -w window, -p / -y; the raw side follows -s / -c (host
 *   part), -S, -w, -v and -y, on RAWPORT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_stats.h"
#include "raw_ops.h"
#include "vp.h"

struct mix {
	bool bw;
	unsigned blocks;
	struct vp v;
	struct vp_pp pp;
	struct vp_bw vb;
	struct raw *r;
	double *tmp;                 /* one block's samples */
	double *vblk, *rblk;         /* per block: p50 us (lat) or MB/s (bw) */
};

/* One block of n exchanges over VIPL (vipl true) or raw verbs; *out: the block's p50 one-way
 * latency (us) or its MB/s, on the client. */
static int block(struct mix *m, bool vipl, unsigned long n, uint32_t seq0, double *out)
{
	struct vp_opts *o = &m->v.o;

	if (m->bw) {
		uint64_t ns = 0;
		int rc = vipl ? (o->server ? vp_bw_server(&m->v, &m->vb, o->size, n)
					   : vp_bw_client(&m->v, &m->vb, o->size, n, &ns))
			      : (o->server ? raw_bw_server(m->r, n) : raw_bw_client(m->r, n, &ns));
		if (rc == 0 && !o->server)
			*out = (double)o->size * (double)n / ((double)ns / 1e9) / 1e6;
		return rc;
	}
	for (unsigned long i = 0; i < n; i++) {
		uint64_t t0 = vp_now_ns();
		if (vipl ? vp_pp_exchange(&m->v, &m->pp, o->size, seq0 + (uint32_t)i)
			 : raw_lat_exchange(m->r, seq0 + (uint32_t)i))
			return -1;
		m->tmp[i] = (double)(vp_now_ns() - t0) / 2000.0;
	}
	if (!o->server)
		*out = bench_median(m->tmp, n);
	return 0;
}

/* Ratio k: raw block k against the VIPL blocks k and k + 1 around it. */
static void report(struct mix *m)
{
	unsigned np = m->blocks - 1;
	struct bench_ratios q;

	if (bench_around_ratios(m->vblk, m->rblk, np, &q))
		return;
	double mv = bench_median(m->vblk, m->blocks), mr = bench_median(m->rblk, np);
	printf("vipl_mix %s %u: vipl/raw x%.3f [%.3f-%.3f] vipl %.2f raw %.2f (%s) pairs %u\n",
	       m->bw ? "bw" : "lat", m->v.o.size, q.median, q.q1, q.q3, mv, mr,
	       m->bw ? "MB/s" : "us", np);
}

static int run(struct mix *m)
{
	unsigned long n = m->v.o.iters, warm = m->bw ? 0 : (n / 10 < 100 ? n / 10 : 100);
	uint32_t seq = 0;
	double dummy;

	for (int vipl = 1; vipl >= 0; vipl--)   /* warm both paths first */
		if (warm && block(m, vipl, warm, seq, &dummy))
			return -1;
	seq += (uint32_t)warm;
	for (unsigned k = 0; k < m->blocks; k++) {
		if (block(m, true, n, seq, &m->vblk[k]))
			return -1;
		seq += (uint32_t)n;
		if (k + 1 < m->blocks && block(m, false, n, seq, &m->rblk[k]))
			return -1;
		seq += (uint32_t)n;
	}
	if (!m->v.o.server)
		report(m);
	return 0;
}

/* The raw connection: same roles, the VIPL peer's host on rawport. */
static int raw_open(struct mix *m, const char *rawport, char *host, size_t hlen)
{
	struct vp_opts *o = &m->v.o;
	const char *addr = NULL;

	if (!o->server) {
		snprintf(host, hlen, "%s", o->peer);
		char *colon = strchr(host, ':');
		if (colon)
			*colon = '\0';
		addr = host;
	}
	m->r->server = o->server;
	m->r->size = o->size;
	m->r->w = o->window;
	m->r->verify = o->verify;
	m->r->yield = o->yield;
	struct vx_opts xo = { .addr = addr, .port = rawport, .server = o->server,
			      .send_depth = raw_send_depth(o->window),
			      .recv_depth = raw_recv_depth(o->window), .timeout_ms = 30000,
			      .accept_timeout_ms = 30000 };
	if (vx_setup(&m->r->c, &xo))
		return -1;
	m->r->mr = vx_reg(&m->r->c, raw_region_len(o->window), IBV_ACCESS_LOCAL_WRITE);
	if (!m->r->mr)
		return -1;
	m->r->base = m->r->mr->addr;
	if (m->bw ? raw_bw_prep(m->r) : raw_lat_prep(m->r))
		return -1;
	return vx_establish(&m->r->c);
}

int main(int argc, char **argv)
{
	static struct raw r;
	struct mix m = { .r = &r };
	char host[256];
	int rc = 1;

	if (argc < 4 || (strcmp(argv[1], "lat") && strcmp(argv[1], "bw")))
		goto usage;
	m.bw = strcmp(argv[1], "bw") == 0;
	m.blocks = (unsigned)strtoul(argv[3], NULL, 0);
	if (m.blocks < 2 || m.blocks > 1000)
		goto usage;
	argv[3] = argv[0];   /* vp_parse reads the rest as the VIPL program's options */
	if (vp_parse(&m.v.o, argc - 3, argv + 3, "vipl_mix", m.bw))
		return 2;
	if (m.v.o.size == 0 || m.v.o.size > VP_MAX_MSG || m.v.o.all_sizes || m.v.o.window > 1024)
		goto usage;
	m.tmp = calloc(m.v.o.iters, sizeof *m.tmp);
	m.vblk = calloc(m.blocks, sizeof *m.vblk);
	m.rblk = calloc(m.blocks, sizeof *m.rblk);
	unsigned nbuf = m.v.o.server ? 2 * m.v.o.window : m.v.o.window;
	size_t mem = m.bw ? (size_t)nbuf * (VP_MAX_MSG + 128) + 64 * 1024 : 2 * VP_MAX_MSG + 4096;
	if (!m.tmp || !m.vblk || !m.rblk || raw_open(&m, argv[2], host, sizeof host) ||
	    vp_open(&m.v, mem) ||
	    (m.bw ? vp_bw_setup(&m.v, &m.vb) : vp_pp_setup(&m.v, &m.pp)) || vp_connect(&m.v) ||
	    (m.bw && vp_bw_grant(&m.v, &m.vb))) /* before any timed block */
		goto out;
	rc = run(&m) ? 1 : 0;
out:
	vp_close(&m.v);
	vp_bw_free(&m.vb);
	if (r.mr) {
		vx_disconnect(&r.c);
		vx_unreg(r.mr);
	}
	vx_destroy(&r.c);
	free(m.tmp);
	free(m.vblk);
	free(m.rblk);
	return rc;
usage:
	fprintf(stderr, "usage: vipl_mix lat|bw RAWPORT BLOCKS [vipl-pingpong / vipl-bw options: "
			"-s | -c host[:port], -l ip[:port], -n per block, -S, -w, -p | -y]\n");
	return 2;
}
