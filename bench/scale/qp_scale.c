/* qp_scale: many connected QPs between two processes (scale.h).
 *   qp_scale -s [-b ADDR] [-p PORT] -n NQP
 *   qp_scale -c ADDR [-p PORT] -n NQP [-i ITERS] [-k INFLIGHT] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "scale.h"

int main(int argc, char **argv)
{
	const char *addr = "0.0.0.0", *port = "7471";
	unsigned nqp = 1000, iters = 2000, inflight = 32;
	int server = -1, o;

	while ((o = getopt(argc, argv, "sc:b:p:n:i:k:")) != -1) {
		switch (o) {
		case 's': server = 1; break;
		case 'c': server = 0; addr = optarg; break;
		case 'b': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'n': nqp = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'i': iters = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'k': inflight = (unsigned)strtoul(optarg, NULL, 0); break;
		default: server = -1; optind = argc; break;
		}
	}
	if (server < 0 || nqp == 0 || nqp > 1000000 || iters == 0 || inflight == 0) {
		fputs("usage: qp_scale -s [-b ADDR] [-p PORT] -n NQP\n"
		      "       qp_scale -c ADDR [-p PORT] -n NQP [-i ITERS] [-k INFLIGHT]\n", stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	return server ? scale_server(addr, port, nqp) : scale_client(addr, port, nqp, iters, inflight);
}
