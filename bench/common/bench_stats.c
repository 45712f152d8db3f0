/* bench_stats: see bench_stats.h. */
#include "bench_stats.h"

#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void bench_sort(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
}

double bench_median(double *v, size_t n)
{
	bench_sort(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_around_ratios(const double *around, const double *between, size_t n,
			struct bench_ratios *out)
{
	double *q = n ? calloc(n, sizeof *q) : NULL;

	if (!q)
		return -1;
	for (size_t k = 0; k < n; k++)
		q[k] = (around[k] + around[k + 1]) / 2 / between[k];
	out->median = bench_median(q, n);   /* sorted from here */
	out->q1 = q[n / 4];
	out->q3 = q[(3 * n) / 4];
	free(q);
	return 0;
}
