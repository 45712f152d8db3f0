/* bench_stats: the statistics shared by the benchmarks (bench/rdma, bench/vipl): sorting,
 * medians, and the block ratios of an interleaved run (bench/rdma/interleave.c,
 * bench/vipl/vipl_mix.c). */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stddef.h>

/* Sorts v ascending. */
void bench_sort(double *v, size_t n);
/* The median of v[0..n) (n > 0); sorts v. */
double bench_median(double *v, size_t n);

/* An interleaved run: n "between" blocks, each run between "around" blocks k and k + 1 (so
 * n + 1 of those). Ratio k = the mean of around[k] and around[k + 1] over between[k]. */
struct bench_ratios {
	double median, q1, q3;
};
/* 0, or -1 when n is 0 or memory is short. */
int bench_around_ratios(const double *around, const double *between, size_t n,
			struct bench_ratios *out);

#endif
