/* End-of-run report of softrnic-tcp and ktcp_peer. The "result:" and "latency:" lines are
 * what tests/tcp and scripts/bench-tcp.sh parse: keep their key=value form. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stcp.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

#define SESS(i) ((struct stcp_sess *)((char *)first + (size_t)(i) * stride))

static void report_latency(struct stcp_sess *first, size_t stride, uint32_t n)
{
	uint64_t cnt = 0;
	for (uint32_t i = 0; i < n; i++)
		cnt += SESS(i)->ping_k;
	if (!cnt)
		return;
	uint64_t *all = malloc(cnt * sizeof(*all));
	if (!all) {
		fprintf(stderr, "latency: out of memory\n");
		return;
	}
	uint64_t k = 0, sum = 0;
	for (uint32_t i = 0; i < n; i++) {
		for (uint64_t j = 0; j < SESS(i)->ping_k; j++) {
			all[k++] = SESS(i)->lat[j];
			sum += SESS(i)->lat[j];
		}
	}
	qsort(all, cnt, sizeof(*all), cmp_u64);
	printf("latency: n=%llu size=%u min_us=%.2f p50_us=%.2f p99_us=%.2f max_us=%.2f "
	       "mean_us=%.2f\n",
	       (unsigned long long)cnt, first->o->size, all[0] / 1e3, all[cnt / 2] / 1e3,
	       all[(cnt * 99) / 100 < cnt ? (cnt * 99) / 100 : cnt - 1] / 1e3, all[cnt - 1] / 1e3,
	       (double)sum / (double)cnt / 1e3);
	free(all);
}

static void aggregate(struct stcp_sess_agg *a, const struct stcp_opts *o,
		      struct stcp_sess *first, size_t stride, uint32_t n)
{
	memset(a, 0, sizeof(*a));
	a->t_first = UINT64_MAX;
	for (uint32_t i = 0; i < n; i++) {
		const struct stcp_sess *s = SESS(i);
		a->n++;
		a->by_outcome[s->out]++;
		if (s->out == o->expect)
			a->expected++;
		/* octets verified (sink), sent (source, pingpong) or returned (echo) */
		a->payload += s->role == STCP_SINK   ? s->rx_off
			      : s->role == STCP_ECHO ? s->raw_tx
						     : s->tx_off;
		a->raw_rx += s->raw_rx;
		a->raw_tx += s->raw_tx;
		if (s->t_start && s->t_start < a->t_first)
			a->t_first = s->t_start;
		if (s->t_end > a->t_last)
			a->t_last = s->t_end;
	}
}

int stcp_report(const char *tool, const struct stcp_opts *o, struct stcp_sess *first,
		size_t stride, uint32_t n, bool timed_out)
{
	struct stcp_sess_agg a;
	aggregate(&a, o, first, stride, n);
	unsigned shown = 0;
	for (uint32_t i = 0; i < n && shown < 10; i++) {
		if (SESS(i)->out == o->expect && o->quiet)
			continue;
		if (SESS(i)->out != o->expect || (n <= 4 && !o->quiet)) {
			printf("%s: conn %u: %s%s%s\n", tool, i, stcp_outcome_name(SESS(i)->out),
			       SESS(i)->why[0] ? ": " : "", SESS(i)->why);
			shown++;
		}
	}
	double secs = a.t_last > a.t_first && a.t_first != UINT64_MAX
			      ? (double)(a.t_last - a.t_first) / 1e9
			      : 0;
	printf("outcomes:");
	for (int k = STCP_PENDING; k <= STCP_E_OTHER; k++) {
		if (a.by_outcome[k])
			printf(" %s=%u", stcp_outcome_name((enum stcp_outcome)k), a.by_outcome[k]);
	}
	printf("\n");
	bool pass = !timed_out && a.expected == a.n;
	printf("result: %s expect=%s conns=%u as_expected=%u payload_bytes=%llu secs=%.6f "
	       "gbit_s=%.3f\n",
	       timed_out ? "timeout" : pass ? "pass" : "fail", stcp_outcome_name(o->expect), a.n,
	       a.expected, (unsigned long long)a.payload, secs,
	       secs > 0 ? (double)a.payload * 8 / secs / 1e9 : 0.0);
	if (o->role == STCP_PING)
		report_latency(first, stride, n);
	fflush(stdout);
	return timed_out ? 2 : pass ? 0 : 1;
}
