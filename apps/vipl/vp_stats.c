/* vp_stats: perftest-style latency and bandwidth lines of the VIPL examples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "vp.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The smallest sample >= fraction q of all (nearest-rank percentile). */
static double pct(const double *v, unsigned long n, double q)
{
	unsigned long k = (unsigned long)ceil(q * (double)n);
	return v[k ? k - 1 : 0];
}

void vp_lat_header(void)
{
	printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
	       "    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]\n");
}

void vp_lat_report(uint32_t size, double *us, unsigned long n)
{
	double sum = 0, sq = 0;
	qsort(us, n, sizeof *us, cmp);
	for (unsigned long i = 0; i < n; i++)
		sum += us[i], sq += us[i] * us[i];
	double avg = sum / (double)n, var = sq / (double)n - avg * avg;
	printf(" %-7u %-10lu %-14.2f %-14.2f %-16.2f %-14.2f %-16.2f %-14.2f\n", size, n, us[0],
	       us[n - 1], pct(us, n, 0.5), avg, var > 0 ? sqrt(var) : 0, pct(us, n, 0.99));
	fflush(stdout);
}

void vp_bw_header(void)
{
	printf(" #bytes     #iterations    BW average[MB/sec]   MsgRate[Mpps]\n");
}

void vp_bw_report(uint32_t size, unsigned long n, uint64_t ns)
{
	double s = (double)ns / 1e9;
	printf(" %-10u %-14lu %-20.2f %-10.6f\n", size, n, (double)size * (double)n / s / 1e6,
	       (double)n / s / 1e6);
	fflush(stdout);
}
