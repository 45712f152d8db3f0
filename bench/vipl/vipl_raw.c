/* vipl_raw: the exchanges of vipl-pingpong -p and vipl-bw written with raw verbs + librdmacm,
 * the baseline of scripts/bench-vipl.sh (exchanges in raw_ops.c). It does exactly what the VIPL
 * programs do:
 *   lat: client posts the send, polls for its receive, re-posts the receive, reaps the send;
 *        the server polls for the receive, re-posts it, sends the echo, reaps the send.
 *        One-way latency = round trip / 2 (perftest-style line).
 *   bw:  the client keeps up to -w sends posted; the server keeps 2*w receives posted and
 *        sends a 4-byte credit message per w/2 re-posted receives.
 * Completions are polled (ibv_poll_cq spin; -y: sched_yield between empty polls), like
 * vipl-pingpong -p / -y.
 * usage: vipl_raw lat|bw -s | -c host  -P port [-S size] [-n iters] [-w window] [-v] [-y] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_stats.h"
#include "raw_ops.h"

static int run_lat(struct raw *r, unsigned long n)
{
	unsigned long warm = n / 10 < 100 ? n / 10 : 100;
	double *us = calloc(n, sizeof *us), sum = 0;
	if (!us || raw_lat_prep(r))
		return free(us), -1;
	if (vx_establish(&r->c))
		return free(us), -1;
	for (unsigned long i = 0; i < warm + n; i++) {
		uint64_t t0 = vx_now_ns();
		if (raw_lat_exchange(r, (uint32_t)i))
			return free(us), -1;
		if (i >= warm)
			us[i - warm] = (double)(vx_now_ns() - t0) / 2000.0;
	}
	if (!r->server) {
		bench_sort(us, n);
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

static int run_bw(struct raw *r, unsigned long n)
{
	uint64_t ns = 0;
	if (raw_bw_prep(r) || vx_establish(&r->c))
		return -1;
	if (r->server)
		return raw_bw_server(r, n);
	if (raw_bw_client(r, n, &ns))
		return -1;
	double s = (double)ns / 1e9;
	printf(" #bytes     #iterations    BW average[MB/sec]   MsgRate[Mpps]\n");
	printf(" %-10u %-14lu %-20.2f %-10.6f\n", r->size, n, (double)r->size * (double)n / s / 1e6,
	       (double)n / s / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	static struct raw r;
	unsigned long iters = 1000;
	bool bw;
	r.size = 8, r.w = 64;
	const char *host = NULL, *port = "7480";
	if (argc < 2 || (strcmp(argv[1], "lat") && strcmp(argv[1], "bw")))
		goto usage;
	bw = strcmp(argv[1], "bw") == 0;
	int ch;
	optind = 2;
	while ((ch = getopt(argc, argv, "sc:P:S:n:w:vy")) != -1) {
		switch (ch) {
		case 's': r.server = true; break;
		case 'c': host = optarg; break;
		case 'P': port = optarg; break;
		case 'S': r.size = (uint32_t)atoi(optarg); break;
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 'w': r.w = (uint32_t)atoi(optarg); break;
		case 'v': r.verify = true; break;
		case 'y': r.yield = true; break;
		default: goto usage;
		}
	}
	if (r.server == (host != NULL) || r.size == 0 || r.size > RAW_MAX_MSG || !iters || !r.w ||
	    r.w > 1024)
		goto usage;
	struct vx_opts o = { .addr = host, .port = port, .server = r.server,
			     .send_depth = raw_send_depth(r.w), .recv_depth = raw_recv_depth(r.w),
			     .timeout_ms = 30000, .accept_timeout_ms = 30000 };
	if (vx_setup(&r.c, &o))
		return 1;
	r.mr = vx_reg(&r.c, raw_region_len(r.w), IBV_ACCESS_LOCAL_WRITE);
	if (!r.mr)
		return 1;
	r.base = r.mr->addr;
	int rc = bw ? run_bw(&r, iters) : run_lat(&r, iters);
	vx_disconnect(&r.c);
	vx_unreg(r.mr);
	vx_destroy(&r.c);
	return rc ? 1 : 0;
usage:
	fprintf(stderr, "usage: vipl_raw lat|bw -s | -c host  [-P port] [-S size] [-n iters] "
			"[-w window] [-v] [-y]\n");
	return 2;
}
