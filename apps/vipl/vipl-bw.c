/* vipl-bw: one-way VIPL send bandwidth. The client keeps up to its -w sends posted; the
 * server keeps 2 x its own -w receives posted, grants them once connected and returns a
 * 4-byte credit message for every w/2 receives it has re-posted, so no send ever finds an
 * empty receive queue (RD/RR would break the connection, VIA §2.5). The server takes the
 * test (-n, -S, -a, -v, -r) from its client, as vipl-pingpong's does. MB/s = 10^6 bytes per
 * second; -v checks every message's pattern. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vp.h"

int main(int argc, char **argv)
{
	struct vp v;
	struct vp_bw b;
	memset(&v, 0, sizeof v);
	memset(&b, 0, sizeof b);
	if (vp_parse(&v.o, argc, argv, "vipl-bw", true))
		return 2;
	if (v.o.size > VP_MAX_MSG || v.o.size == 0)
		return fprintf(stderr, "vipl-bw: -S between 1 and %d\n", VP_MAX_MSG), 2;
	unsigned nbuf = v.o.server ? 2 * v.o.window : v.o.window;
	int rc = 1;
	/* the server's receive for the parameters goes up first, so it takes the first message */
	if (vp_open(&v, (size_t)nbuf * (VP_MAX_MSG + 128) + 64 * 1024) || vp_params_post(&v) ||
	    vp_bw_setup(&v, &b) || vp_connect(&v) || vp_params_exchange(&v))
		goto out;
	if (v.o.size == 0) {
		fprintf(stderr, "vipl-bw: server: the client asked for 0-byte messages\n");
		goto out;
	}
	if (vp_bw_grant(&v, &b))
		goto out;
	uint32_t sizes[32];
	unsigned nsz = vp_sizes(&v, sizes, 32);
	if (!v.o.server) {
		printf("VIPL send bandwidth: window %u, %lu messages per size%s\n", b.w,
		       v.o.iters, v.o.verify ? ", verified" : "");
		vp_bw_header();
	}
	for (unsigned i = 0; i < nsz; i++) {
		uint64_t ns = 0;
		if (v.o.server ? vp_bw_server(&v, &b, sizes[i], v.o.iters)
			       : vp_bw_client(&v, &b, sizes[i], v.o.iters, &ns))
			goto out;
		if (!v.o.server)
			vp_bw_report(sizes[i], v.o.iters, ns);
	}
	rc = 0;
out:
	vp_close(&v);
	vp_bw_free(&b);
	return rc;
}
