/* Delivery rate estimation: the sampler (tcp_rate.h). The per-segment snapshot rides on the
 * RACK log's entries (tcp_rack.c calls in here as it logs and delivers them). */
#include "tcp_rate.h"

#include <string.h>

void tcp_rate_init(struct tcp_rate *rt)
{
	memset(rt, 0, sizeof(*rt));
	rt->rtt_us = -1;
}

void tcp_rate_sent(struct tcp_rate *rt, bool idle, uint64_t now_us, struct tcp_rate_snap *snap)
{
	/* After idle the interval starts with this segment: the gap says nothing of the path. */
	if (idle) {
		rt->first_sent_us = now_us;
		rt->delivered_us = now_us;
	}
	*snap = (struct tcp_rate_snap){
		.delivered = rt->delivered,
		.delivered_us = rt->delivered_us,
		.first_sent_us = rt->first_sent_us,
		.app_limited = rt->app_limited != 0,
	};
}

void tcp_rate_count(struct tcp_rate *rt, uint32_t len, uint64_t now_us)
{
	rt->delivered += len;
	rt->delivered_us = now_us;
	rt->acked += len;
}

void tcp_rate_delivered(struct tcp_rate *rt, const struct tcp_rate_snap *snap, uint32_t len,
			uint64_t xmit_us, bool retrans, uint64_t now_us)
{
	tcp_rate_count(rt, len, now_us);
	if (!retrans) {
		int64_t rtt = now_us > xmit_us ? (int64_t)(now_us - xmit_us) : 0;

		if (rt->rtt_us < 0 || rtt < rt->rtt_us)
			rt->rtt_us = rtt;
	}
	/* The segment sent last among those delivered (the largest snapshot) defines the
	 * interval; its send time opens the next one. */
	if (rt->have && snap->delivered < rt->prior.delivered)
		return;
	rt->have = true;
	rt->prior = *snap;
	rt->send_elapsed_us = xmit_us > snap->first_sent_us ? xmit_us - snap->first_sent_us : 0;
	rt->first_sent_us = xmit_us;
}

void tcp_rate_sample(struct tcp_rate *rt, uint32_t min_rtt_us, uint64_t now_us,
		     struct tcp_rate_sample *rs)
{
	uint64_t ack_elapsed;

	if (rt->app_limited && rt->delivered > rt->app_limited)
		rt->app_limited = 0;
	*rs = (struct tcp_rate_sample){ .acked = rt->acked, .rtt_us = rt->rtt_us };
	if (rt->have) {
		ack_elapsed = now_us > rt->prior.delivered_us ? now_us - rt->prior.delivered_us : 0;
		rs->prior_delivered = rt->prior.delivered;
		rs->delivered = rt->delivered - rt->prior.delivered;
		rs->app_limited = rt->prior.app_limited;
		/* the longer interval: the slower of sending and acknowledging is the path's */
		rs->interval_us = ack_elapsed > rt->send_elapsed_us ? ack_elapsed
								    : rt->send_elapsed_us;
		rs->valid = rs->interval_us > 0 && rs->interval_us >= min_rtt_us;
	}
	rt->have = false;
	rt->acked = 0;
	rt->rtt_us = -1;
}

void tcp_rate_app_limited(struct tcp_rate *rt, uint32_t inflight)
{
	uint64_t mark = rt->delivered + inflight;

	rt->app_limited = mark ? mark : 1;
}
