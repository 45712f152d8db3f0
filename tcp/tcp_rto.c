/* RFC 6298 retransmission timer arithmetic. The base RTO (from SRTT and RTTVAR, clamped) and
 * the backoff count are kept apart: the doubled RTO of 5.5 holds until a fresh measurement
 * (which Karn's rule only allows from a segment sent once) recomputes it. 64-bit
 * intermediate values: a 32-bit RTT times K would overflow. */
#include "tcp_rto.h"

#include <string.h>

#define RTO_K 4u
#define RTO_G_US 1u          /* clock granularity: we measure in microseconds */
#define RTO_SYN_FALLBACK_US 3000000u
#define RTO_MAX_BACKOFF 31u  /* shifting a 32-bit value further is meaningless */

static uint32_t clamp(const struct tcp_rto *r, uint64_t v)
{
	if (v < r->min_us)
		v = r->min_us;
	if (v > r->max_us)
		v = r->max_us;
	return (uint32_t)v;
}

void tcp_rto_init(struct tcp_rto *r, uint32_t init_us, uint32_t min_us, uint32_t max_us)
{
	memset(r, 0, sizeof(*r));
	if (max_us < min_us)
		max_us = min_us;
	r->min_us = min_us;
	r->max_us = max_us;
	r->rto_us = clamp(r, init_us);
}

static uint32_t absdiff(uint32_t a, uint32_t b) { return a > b ? a - b : b - a; }

void tcp_rto_sample(struct tcp_rto *r, uint32_t rtt_us)
{
	if (!r->have_sample) {
		/* 2.2: SRTT <- R, RTTVAR <- R/2 */
		r->srtt_us = rtt_us;
		r->rttvar_us = rtt_us / 2;
		r->have_sample = true;
	} else {
		/* 2.3: RTTVAR first (it uses the old SRTT), beta = 1/4, alpha = 1/8; rounded. */
		uint64_t var = (3ull * r->rttvar_us + absdiff(r->srtt_us, rtt_us) + 2) / 4;
		uint64_t srtt = (7ull * r->srtt_us + rtt_us + 4) / 8;
		r->rttvar_us = (uint32_t)var;
		r->srtt_us = (uint32_t)srtt;
	}
	uint64_t kvar = (uint64_t)RTO_K * r->rttvar_us;
	r->rto_us = clamp(r, (uint64_t)r->srtt_us + (kvar > RTO_G_US ? kvar : RTO_G_US));
	r->backoff = 0;
}

uint32_t tcp_rto_get(const struct tcp_rto *r)
{
	uint64_t v = (uint64_t)r->rto_us << r->backoff;
	return clamp(r, v);
}

void tcp_rto_backoff(struct tcp_rto *r)
{
	/* Stop counting once the maximum is reached: further doublings change nothing and the
	 * shift must stay defined. */
	if (r->backoff < RTO_MAX_BACKOFF && tcp_rto_get(r) < r->max_us)
		r->backoff++;
}

void tcp_rto_syn_timeout_reset(struct tcp_rto *r)
{
	if (r->have_sample)
		return;
	r->rto_us = clamp(r, RTO_SYN_FALLBACK_US);
	r->backoff = 0;
}
