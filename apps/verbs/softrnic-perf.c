/* softrnic-perf: perftest-style bandwidth and latency tests over rdma_cm (like ib_*_bw /
 * ib_*_lat with -R), in one program.
 *
 *   server: softrnic-perf [-b BIND_ADDR] [-p PORT] [-M MAX] [options]
 *   client: softrnic-perf -t write|read|send [-l] [-s SIZE] [-n ITERS] [options] SERVER
 *
 *   -t TEST   write (default), read or send      -l        latency instead of bandwidth
 *   -s SIZE   message bytes (default 2 for latency, 65536 for bandwidth)
 *   -n ITERS  iterations (default 1000 for latency, 5000 for bandwidth)
 *   -d DEPTH  bandwidth: WRs in flight per QP (default 128; reads also capped by the ORD)
 *   -Q QPS    bandwidth: QPS connections (default 1, at most 64), each its own QP, served in
 *             turn by one thread as perftest's -q does: ITERS messages on each; the result
 *             counts them all (a message rate per core, not per QP)
 *   -p PORT   TCP port (default 18515)           -R        accepted (rdma_cm is always used)
 *   -y        spin with sched_yield() (share a core); default is a pure busy poll
 *   -P        write latency: poll the CQ on every spin on the target byte (both sides; the
 *             server takes it from the client). Without it the target only spins on memory
 *             and reaps its CQ every 4096 spins, as ib_write_lat does.
 *   -T SEC    give up when a wait exceeds SEC seconds (default 30)   -q  no banner
 *   -L SEC    keep the connection SEC seconds after the test (counters read meanwhile)
 *   -M MAX    server: largest message size it accepts from a client (default 64 MiB, at most
 *             2 GiB); it registers two buffers of the client's size, so a client asking for
 *             more is refused (message, exit 1) before anything is allocated
 *
 * The server takes the test parameters from the client. The client prints perftest's result
 * table: #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9% [usec] for latency
 * (write/send: half the round trip, read: whole operation), or #bytes #iterations BW peak,
 * BW average [MiB/sec] and MsgRate [Mpps] for bandwidth (several QPs: of all of them, the
 * peak being the average). Exit status 0 ok, 1 failed, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

static const char usage_text[] =
	"usage: softrnic-perf [-t write|read|send] [-l] [-s SIZE] [-n ITERS] [-d DEPTH] [-p PORT]"
	" [-Q QPS] [-B LIST] [-b ADDR] [-M MAX] [-R] [-y] [-P] [-T SEC] [-L SEC] [-q] [SERVER]\n"
	"  -Q QPS  bandwidth: connections, each its own QP, ITERS messages on each (default 1,"
	" at most 64)\n"
	"  -B LIST bandwidth: post up to LIST WRs in one ibv_post_send (default 1, at most 64)\n"
	"  -M MAX  server: largest message size accepted from a client (default 64 MiB,"
	" at most 2 GiB)\n";

static long num(const char *s, const char *what, long min, long max)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 0);
	if (errno || *end || v < min || v > max) {
		fprintf(stderr, "softrnic-perf: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static enum perf_test test_of(const char *s)
{
	if (!strcmp(s, "write"))
		return PERF_WRITE;
	if (!strcmp(s, "read"))
		return PERF_READ;
	if (!strcmp(s, "send"))
		return PERF_SEND;
	fprintf(stderr, "softrnic-perf: unknown test '%s' (write, read or send)\n", s);
	exit(2);
}

static void parse(struct perf_params *p, bool *quiet, int argc, char **argv)
{
	long size = -1, iters = -1;
	int opt;
	*p = (struct perf_params){ .port = "18515", .tx_depth = 128, .mode = VX_BUSY,
	                           .timeout_ms = 30000, .log = stdout };
	while ((opt = getopt(argc, argv, "t:ls:n:d:Q:B:p:b:M:RyPT:L:qh")) != -1) {
		switch (opt) {
		case 't': p->test = test_of(optarg); break;
		case 'l': p->lat = true; break;
		case 's': size = num(optarg, "size", 1, 1L << 31); break;
		case 'n': iters = num(optarg, "iterations", 1, 100000000); break;
		case 'd': p->tx_depth = (uint32_t)num(optarg, "depth", 1, 256); break;
		case 'Q': p->qps = (uint32_t)num(optarg, "QP count", 1, PERF_MAX_QPS); break;
		case 'B': p->post_list = (uint32_t)num(optarg, "post list", 1, PERF_MAX_POST_LIST); break;
		case 'p': num(optarg, "port", 1, 65535); p->port = optarg; break;
		case 'b': p->addr = optarg; break;
		case 'M': p->max_size = (uint32_t)num(optarg, "max size", 1, 1L << 31); break;
		case 'R': break;
		case 'y': p->mode = VX_YIELD; break;
		case 'P': p->poll_cq = true; break;
		case 'T': p->timeout_ms = (int)num(optarg, "timeout", 1, 86400) * 1000; break;
		case 'q': *quiet = true; break;
		case 'L': p->linger_ms = (int)num(optarg, "linger", 1, 3600) * 1000; break;
		default: fputs(usage_text, stderr); exit(opt == 'h' ? 0 : 2);
		}
	}
	/* latency tests are one message at a time on one connection */
	if (argc - optind > 1 || (argc - optind == 1 && p->addr) || ((p->qps > 1 || p->post_list > 1) && p->lat)) {
		fputs(usage_text, stderr);
		exit(2);
	}
	p->server = optind == argc;
	if (!p->server)
		p->addr = argv[optind];
	p->size = (uint32_t)(size > 0 ? size : p->lat ? 2 : 65536);
	p->iters = (uint32_t)(iters > 0 ? iters : p->lat ? 1000 : 5000);
}

int main(int argc, char **argv)
{
	struct perf_params p;
	struct perf_result r;
	bool quiet = false;
	parse(&p, &quiet, argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (quiet)
		p.log = NULL;
	if (perf_run(&p, &r)) {
		fprintf(stderr, "softrnic-perf: %s FAILED\n", p.server ? "server" : "test");
		return 1;
	}
	if (p.server) {
		if (!quiet)
			printf(" server: test done\n");
		return 0;
	}
	perf_print_header(stdout, r.lat);
	perf_print_result(stdout, &r);
	return 0;
}
