/* Pacing: a congestion control with a rate (BBR) spreads a connection's data segments at that
 * rate instead of sending its window at once. Each segment moves the connection's earliest
 * next send time on by its length over the rate; output stops while that time is ahead and
 * the pacing timer, on the stack's wheel, brings it back (tcp_stack_poll's next due time
 * covers it, so a napping poll loop wakes for it). The time may lag the clock by a bounded
 * allowance, so that what the sender could not send when it should have (the wheel's tick,
 * a poll thread that lost its core for a while) goes out late rather than never: a rate
 * model fed by a sender that falls short of its own rate would shrink round after round. The
 * allowance is a millisecond (the size of the bursts Linux lets a paced sender make), or two
 * segments at low rates; an idle connection saves up no more than that. */
#include <rte_mbuf.h>

#include "tcp_int.h"

#define PACE_LAG_US 1000u
#define PACE_LAG_SEGS 2u

bool tcp_pace_wait(struct tcp_conn *c)
{
	uint64_t now;

	if (!tcp_cc_pacing_rate(&c->cc))
		return false;
	now = tcp_now_us(c->s);
	if (c->pace_next_us <= now)
		return false;
	if (!tcp_timer_armed(&c->t_pace))
		tcp_timer_arm_us(c, &c->t_pace, c->pace_next_us - now);
	return true;
}

void tcp_pace_sent(struct tcp_conn *c, uint32_t len)
{
	uint64_t rate = tcp_cc_pacing_rate(&c->cc), now, seg_us, lag, from;

	if (!rate || !len)
		return;
	now = tcp_now_us(c->s);
	seg_us = (uint64_t)len * 1000000u / rate;
	lag = PACE_LAG_SEGS * seg_us > PACE_LAG_US ? PACE_LAG_SEGS * seg_us : PACE_LAG_US;
	from = now > lag && c->pace_next_us < now - lag ? now - lag : c->pace_next_us;
	c->pace_next_us = from + seg_us;
}

/* The sender's half of the delivery-rate sampler's application-limited marking (tcp_rate.h),
 * called when the application hands over data: if less than a segment was waiting and the
 * window had room, the application (not the path) set the rate of the samples until this
 * flight is delivered. Lost segments waiting to go mean the window limits. Not checked as
 * output empties the queue: an ACK frees room before the application can refill it, so
 * every bulk sender would look limited. */
void tcp_pace_app_limited(struct tcp_conn *c)
{
	if (!c->rack.rate || c->snd_end - c->snd_nxt >= c->snd_mss || c->rack.lost_bytes)
		return; /* no rate samples (not BBR), or the window limits */
	uint32_t flight = tcp_flight(c);
	if (flight < c->cc.cwnd)
		tcp_rate_app_limited(&c->rate, flight);
}

static void pace_fire(struct tcp_timer *t, void *arg)
{
	struct tcp_conn *c = arg;

	(void)t;
	if (c->state >= TCP_ESTABLISHED && c->state != TCP_TIME_WAIT)
		tcp_output(c);
}

void tcp_pace_timer_init(struct tcp_conn *c)
{
	tcp_timer_init(&c->t_pace, pace_fire, c);
}
