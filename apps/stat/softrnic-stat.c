/* softrnic-stat: the counters of the softrnic processes on this machine, read from their
 * statistics files (docs/stats.md) while they run: once, or every interval with rates. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stat.h"

extern bool stat_print_all;

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: softrnic-stat [-l] [-j] [-a] [-d DIR] [-i SECONDS [-c COUNT]] [PID...]\n"
		   "  -l, --list          the softrnic processes, one line each\n"
		   "  -i, --interval S    every S seconds (fractions allowed), with rates\n"
		   "  -c, --count N       N samples, then exit (default with -i: until interrupted)\n"
		   "  -j, --json          one JSON object per sample\n"
		   "  -a, --all           zero counters too (text)\n"
		   "  -d, --dir DIR       statistics files in DIR (default: stats_dir, /dev/shm)\n");
}

static int parse_pid(const char *s, pid_t *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v <= 0 || v > 0x7fffffff)
		return -1;
	*out = (pid_t)v;
	return 0;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (!stop && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Text with -i: each sample starts with its time, so samples read apart. */
static void sample_heading(void)
{
	time_t t = time(NULL);
	struct tm tm;
	char s[32];

	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("--- %s\n", s);
}

/* 0 when every asked-for process was read (at least one, with no pid given), else 1. */
static int verdict(const struct stat_sample *s, const pid_t *pids, unsigned npids)
{
	int rc = s->nproc ? 0 : 1;

	for (unsigned i = 0; i < s->nproc; i++)
		if (s->proc[i].err)
			rc = 1;
	for (unsigned i = 0; i < npids; i++) {
		bool found = false;
		for (unsigned j = 0; j < s->nproc; j++)
			found |= s->proc[j].pid == pids[i];
		if (!found) {
			fprintf(stderr, "softrnic-stat: pid %d has no statistics file\n", (int)pids[i]);
			rc = 1;
		}
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "list", no_argument, NULL, 'l' },     { "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' }, { "json", no_argument, NULL, 'j' },
		{ "all", no_argument, NULL, 'a' },      { "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },     { NULL, 0, NULL, 0 },
	};
	bool list = false, json = false;
	double interval = 0;
	long count = -1;
	const char *dir = NULL;
	pid_t pids[64];
	unsigned npids = 0;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "li:c:jad:h", opts, NULL)) != -1) {
		switch (c) {
		case 'l': list = true; break;
		case 'j': json = true; break;
		case 'a': stat_print_all = true; break;
		case 'd': dir = optarg; break;
		case 'i':
			interval = strtod(optarg, &end);
			if (*end || !(interval > 0) || interval > 86400) {
				fprintf(stderr, "softrnic-stat: -i: '%s' is not a number of seconds "
						"in (0, 86400]\n", optarg);
				return 2;
			}
			break;
		case 'c':
			count = strtol(optarg, &end, 10);
			if (*end || *optarg < '0' || *optarg > '9' || count < 1) {
				fprintf(stderr, "softrnic-stat: -c: '%s' is not a count >= 1\n", optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	for (; optind < argc; optind++) {
		if (npids == sizeof(pids) / sizeof(pids[0]) || parse_pid(argv[optind], &pids[npids])) {
			fprintf(stderr, "softrnic-stat: '%s' is not a pid (at most 64)\n", argv[optind]);
			return 2;
		}
		npids++;
	}
	if (count > 0 && interval == 0) {
		fprintf(stderr, "softrnic-stat: -c needs -i\n");
		return 2;
	}
	if (!dir)
		dir = rn_stats_dir();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	struct stat_sample prev = { 0 }, cur;
	bool have_prev = false;
	int rc = 0;
	for (long n = 0; !stop && (interval == 0 ? n < 1 : count < 0 || n < count); n++) {
		if (n)
			sleep_s(interval);
		if (stop)
			break;
		int e = stat_sample_take(dir, pids, npids, &cur);
		if (e) {
			fprintf(stderr, "softrnic-stat: %s: %s\n", dir, strerror(-e));
			stat_sample_free(&cur);
			rc = 1;
			break;
		}
		if (interval > 0 && !json)
			sample_heading();
		if (list)
			stat_print_list(&cur, json);
		else
			stat_print(&cur, have_prev ? &prev : NULL, json);
		rc = list ? (npids ? verdict(&cur, pids, npids) : 0) : verdict(&cur, pids, npids);
		if (have_prev)
			stat_sample_free(&prev);
		prev = cur;
		have_prev = true;
	}
	if (have_prev)
		stat_sample_free(&prev);
	return rc;
}
