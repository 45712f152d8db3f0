/* vipl-pingpong: VIPL ping-pong latency between a server (-s) and a client (-c host[:port]).
 * Each iteration the client sends a message and waits for the server's echo of the same
 * size; one-way latency = round trip / 2, printed perftest-style (t_typical = p50, avg, p99).
 * Completions: blocking VipRecvWait / VipSendWait, or -p spinning on VipRecvDone/SendDone.
 * -v checks a per-message data pattern on both sides. The server takes the test's parameters
 * (-n, -S, -a, -v, -r) from its client. */
#include <stdio.h>
#include <stdlib.h>

#include "vp.h"

struct pp {
	struct vp v;
	struct vp_pp x;
};

static int run_size(struct pp *p, uint32_t size, double *us)
{
	unsigned long n = p->v.o.iters, warm = n / 10 < 100 ? n / 10 : 100;
	for (unsigned long i = 0; i < warm; i++)
		if (vp_pp_exchange(&p->v, &p->x, size, (uint32_t)i))
			return -1;
	for (unsigned long i = 0; i < n; i++) {
		uint64_t t0 = vp_now_ns();
		if (vp_pp_exchange(&p->v, &p->x, size, (uint32_t)(warm + i)))
			return -1;
		us[i] = (double)(vp_now_ns() - t0) / 2000.0;
	}
	if (!p->v.o.server)
		vp_lat_report(size, us, n);
	return 0;
}

int main(int argc, char **argv)
{
	struct pp p = { 0 };
	if (vp_parse(&p.v.o, argc, argv, "vipl-pingpong", false))
		return 2;
	if (p.v.o.size > VP_MAX_MSG)
		return fprintf(stderr, "vipl-pingpong: -S at most %d\n", VP_MAX_MSG), 2;
	double *us = NULL;
	int rc = 1;
	if (vp_open(&p.v, 2 * VP_MAX_MSG + 4096) || vp_params_post(&p.v) ||
	    vp_pp_setup(&p.v, &p.x) || vp_connect(&p.v) || vp_params_exchange(&p.v))
		goto out;
	us = calloc(p.v.o.iters, sizeof *us);
	if (!us)
		goto out;
	uint32_t sizes[32];
	unsigned ns = vp_sizes(&p.v, sizes, 32);
	if (!p.v.o.server) {
		printf("VIPL ping-pong: %s, %s, %lu iterations\n",
		       p.v.o.rel == VIP_SERVICE_UNRELIABLE ? "Unreliable"
		       : p.v.o.rel == VIP_SERVICE_RELIABLE_DELIVERY ? "Reliable Delivery"
								   : "Reliable Reception",
		       p.v.o.poll ? "polling VipRecvDone" : "blocking VipRecvWait", p.v.o.iters);
		vp_lat_header();
	}
	for (unsigned i = 0; i < ns; i++)
		if (run_size(&p, sizes[i], us))
			goto out;
	rc = 0;
out:
	vp_close(&p.v);
	free(us);
	return rc;
}
