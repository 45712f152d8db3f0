/* soak: options and the choice of role (see soak.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "soak.h"

static int usage(void)
{
	fprintf(stderr,
	        "usage: soak -s [-a BIND_ADDR] -p PORT [options]   (server)\n"
	        "       soak -c -a SERVER_ADDR -p PORT [options]   (client)\n"
	        "  -q QPS      connections at once (1..%d, default 2; both ends alike)\n"
	        "  -S          server: receives from one shared receive queue\n"
	        "  -t SECONDS  client: how long to post work; both: warm-up is 20 %% of it\n"
	        "  -x SEED     client: the mix and the Send contents (default 1)\n"
	        "  -w MS       stall limit for one operation (default 5000)\n"
	        "  -i SECONDS  progress line interval (default 10)\n"
	        "  -k          the peer will be killed: pass when the QPs reach Error and every\n"
	        "              work request comes back\n"
	        "  -K SECONDS  -k: how long the QPs may take to get there (default 60)\n"
	        "  -r KIB      VmRSS growth allowed after warm-up (default 8192; -1: unchecked)\n",
	        SOAK_MAX_QPS);
	return 2;
}

static int parse(int argc, char **argv, struct soak_opts *o)
{
	int ch;
	while ((ch = getopt(argc, argv, "sca:p:q:St:x:w:i:kK:r:")) != -1) {
		switch (ch) {
		case 's': o->server = true; break;
		case 'c': o->server = false; break;
		case 'a': o->addr = optarg; break;
		case 'p': o->port = optarg; break;
		case 'q': o->qps = atoi(optarg); break;
		case 'S': o->srq = true; break;
		case 't': o->seconds = atof(optarg); break;
		case 'x': o->seed = strtoull(optarg, NULL, 0); break;
		case 'w': o->stall_ms = atoi(optarg); break;
		case 'i': o->progress_s = atoi(optarg); break;
		case 'k': o->expect_kill = true; break;
		case 'K': o->kill_wait_s = atoi(optarg); break;
		case 'r': o->rss_bound_kib = atol(optarg); break;
		default: return -1;
		}
	}
	if (optind != argc || !o->port || (!o->server && !o->addr))
		return -1;
	if (o->qps < 1 || o->qps > SOAK_MAX_QPS || o->seconds <= 0 || o->stall_ms <= 0 ||
	    o->progress_s <= 0 || o->kill_wait_s <= 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct soak_opts o = { .qps = 2, .seconds = 60, .seed = 1, .stall_ms = 5000,
	                       .progress_s = 10, .kill_wait_s = 60, .rss_bound_kib = 8192,
	                       .server = true };
	bool role = false;
	for (int i = 1; i < argc; i++)
		role |= !strcmp(argv[i], "-s") || !strcmp(argv[i], "-c");
	if (!role || parse(argc, argv, &o))
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	return o.server ? soak_server(&o) : soak_client(&o);
}
