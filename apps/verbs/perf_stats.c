/* perf_stats: latency statistics, peak bandwidth and perftest-style output. */
#include <math.h>
#include <stdlib.h>

#include "perf.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Value at percentile q (0..1) of sorted v: the smallest sample >= q of all. */
static double percentile(const double *v, uint32_t n, double q)
{
	uint32_t k = (uint32_t)ceil(q * n);
	return v[k ? k - 1 : 0];
}

void perf_lat_stats(double *ns, uint32_t n, double scale, struct perf_result *r)
{
	double sum = 0, sq = 0;
	if (n == 0)
		return;
	for (uint32_t i = 0; i < n; i++)
		ns[i] = ns[i] * scale / 1000.0;   /* -> microseconds */
	qsort(ns, n, sizeof *ns, cmp_double);
	for (uint32_t i = 0; i < n; i++) {
		sum += ns[i];
		sq += ns[i] * ns[i];
	}
	r->t_min = ns[0];
	r->t_max = ns[n - 1];
	r->t_typical = ns[n / 2];
	r->t_avg = sum / n;
	double var = sq / n - r->t_avg * r->t_avg;
	r->t_stdev = var > 0 ? sqrt(var) : 0;
	r->p99 = percentile(ns, n, 0.99);
	r->p999 = percentile(ns, n, 0.999);
}

double perf_peak_rate(const uint64_t *t, const uint64_t *done, uint32_t n, uint64_t win)
{
	double best = 0;
	uint32_t i = 0;
	for (uint32_t j = 1; j < n; j++) {
		while (i + 1 < j && done[j] - done[i + 1] >= win)
			i++;
		if (done[j] - done[i] < win || t[j] <= t[i])
			continue;
		double rate = (double)(done[j] - done[i]) * 1e9 / (double)(t[j] - t[i]);
		if (rate > best)
			best = rate;
	}
	return best;
}

const char *perf_test_name(enum perf_test t, bool lat)
{
	static const char *const names[2][3] = {
		{ "RDMA_Write BW Test", "RDMA_Read BW Test", "Send BW Test" },
		{ "RDMA_Write Latency Test", "RDMA_Read Latency Test", "Send Latency Test" },
	};
	return (unsigned)t < 3 ? names[lat][t] : "?";
}

static const char rule[] =
	"---------------------------------------------------------------------------------------\n";

void perf_print_header(FILE *f, bool lat)
{
	fputs(rule, f);
	if (lat)
		fprintf(f, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
		           "    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]"
		           "   99.9%% percentile[usec] \n");
	else
		fprintf(f, " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]"
		           "   MsgRate[Mpps]\n");
}

void perf_print_result(FILE *f, const struct perf_result *r)
{
	if (r->lat)
		fprintf(f, " %-7u %-10u    %-7.2f        %-7.2f      %-7.2f          %-7.2f"
		           "        %-7.2f          %-7.2f                 %-7.2f\n",
		        r->size, r->iters, r->t_min, r->t_max, r->t_typical, r->t_avg, r->t_stdev,
		        r->p99, r->p999);
	else
		fprintf(f, " %-10u %-10u     %-10.2f          %-10.2f             %-10.6f\n",
		        r->size, r->iters, r->bw_peak, r->bw_avg, r->msg_rate);
	fputs(rule, f);
}
