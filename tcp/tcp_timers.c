/* Connection timers on the stack's wheel: retransmission (RFC 6298 5, SYN retries), persist
 * (zero-window probes with backoff, RFC 9293 3.8.6.1), delayed ACK, and one timer shared by
 * keepalive (3.8.4), TIME_WAIT (2 MSL) and the FIN_WAIT_2 give-up after tcp_close. An
 * orphan (closed by its application, its FIN unacknowledged) retransmits and probes at most
 * orphan_retries times (D278). */
#include <errno.h>

#include <rte_mbuf.h>

#include "tcp_int.h"

/* Every arm goes through here: the stack keeps the earliest due time so that
 * tcp_stack_poll need not scan the wheel on every call (a cancel only makes it early). */
static void arm_us(struct tcp_conn *c, struct tcp_timer *t, uint64_t us)
{
	struct tcp_stack *s = c->s;
	uint64_t now = tcp_now_us(s);

	tcp_timer_arm(&s->wheel, t, now, us);
	if (now + us < s->next_due_us)
		s->next_due_us = now + us;
}

void tcp_timer_arm_ms(struct tcp_conn *c, struct tcp_timer *t, uint64_t ms)
{
	arm_us(c, t, ms * 1000);
}

void tcp_timer_arm_us(struct tcp_conn *c, struct tcp_timer *t, uint64_t us)
{
	arm_us(c, t, us);
}

void tcp_reo_arm(struct tcp_conn *c, uint64_t us)
{
	arm_us(c, &c->t_reo, us);
}

void tcp_rtx_arm(struct tcp_conn *c)
{
	arm_us(c, &c->t_rtx, tcp_rto_get(&c->rto));
}

void tcp_rtx_restart(struct tcp_conn *c)
{
	tcp_rtx_arm(c);
}

/* The application closed it and its FIN is not acknowledged yet: nobody will read an error,
 * so only a bound on retransmissions frees it when the peer has gone (Linux's
 * tcp_orphan_retries). A connection merely shut down still has an owner who can abort it. */
static bool orphan_closing(const struct tcp_conn *c)
{
	return (c->flags & TCPF_CLOSED_BY_USER) &&
	       (c->state == TCP_FIN_WAIT_1 || c->state == TCP_CLOSING ||
		c->state == TCP_LAST_ACK);
}

/* RTO expiries, or unanswered-window probes, a connection takes before it gives up. An orphan
 * never gets more than a connection with an owner. */
static uint32_t retries_limit(const struct tcp_conn *c)
{
	const struct tcp_stack_cfg *cfg = &c->s->cfg;

	if (orphan_closing(c) && cfg->orphan_retries < cfg->data_retries)
		return cfg->orphan_retries;
	return cfg->data_retries;
}

static void give_up(struct tcp_conn *c)
{
	tcp_send_rst_conn(c);
	tcp_conn_finish(c, -ETIMEDOUT);
}

/* ---- retransmission ---- */
static void syn_timeout(struct tcp_conn *c)
{
	if (++c->rtx_count > c->s->cfg.syn_retries) {
		if (c->listener) {
			tcp_conn_release(c); /* the half-open child just goes */
			return;
		}
		c->s->st.attempt_fails++;
		if (tcp_conn_user_alive(c) && c->ops->on_connected)
			c->ops->on_connected(c->arg, c, -ETIMEDOUT);
		if (!(c->flags & (TCPF_DEAD | TCPF_ABORTED)) && c->state != TCP_CLOSED)
			tcp_conn_finish(c, -ETIMEDOUT);
		return;
	}
	tcp_rto_backoff(&c->rto);
	c->flags |= TCPF_SYN_RETX;
	c->flags &= ~TCPF_RTT_TIMING; /* Karn */
	tcp_send_segment(c, c->iss, 0,
			 c->state == TCP_SYN_SENT ? TCP_F_SYN : TCP_F_SYN | TCP_F_ACK);
	tcp_rtx_arm(c);
}

static void data_timeout(struct tcp_conn *c)
{
	if (c->snd_una == c->snd_max)
		return;
	if (++c->rtx_count > retries_limit(c)) {
		give_up(c);
		return;
	}
	c->s->st.rto_expiries++;
	c->st.rto_expiries++;
	if (tcp_recovery_rto(c)) {
		tcp_rtx_arm(c);
		return;
	}
	/* RFC 5681 eq. 4 / RFC 6582 4; RFC 6298 5.5-5.6; RFC 6675 5.1: go back to snd_una. */
	tcp_cc_on_rto(&c->cc, c->snd_max - c->snd_una, c->snd_max, tcp_now_us(c->s));
	tcp_rto_backoff(&c->rto);
	tcp_sack_snd_clear(&c->sack_snd);
	tcp_rack_rto(&c->rack);
	tcp_timer_cancel(&c->s->wheel, &c->t_reo);
	c->flags &= ~(TCPF_IN_RECOVERY | TCPF_RTT_TIMING);
	c->dupacks = 0;
	c->lt_extra = 0;
	c->snd_nxt = c->snd_una;
	tcp_output(c);
	if (c->snd_nxt == c->snd_una && seq_lt(c->snd_una, c->snd_max)) {
		/* nothing went out (window closed): resend the first segment regardless */
		uint32_t len = tcp_seg_len_at(c, c->snd_una, c->snd_mss, c->snd_mss);

		if (len)
			tcp_send_segment(c, c->snd_una, len, TCP_F_ACK);
		else if (c->flags & TCPF_FIN_SENT)
			tcp_send_segment(c, c->snd_una, 0, TCP_F_ACK | TCP_F_FIN);
	}
	tcp_rtx_arm(c);
}

static void rtx_fire(struct tcp_timer *t, void *arg)
{
	struct tcp_conn *c = arg;

	(void)t;
	if (c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED)
		syn_timeout(c);
	else
		data_timeout(c);
}

/* ---- tail loss probe ---- */
/* RFC 8985 7, simplified: when a flight of more than one segment gets no ACK for
 * PTO = max(2 SRTT, 10 ms), the first unacknowledged segment goes again. A loss at the tail
 * of a flight brings no duplicate ACKs; without the probe only the RTO (200 ms and more)
 * would repair it. The probe retransmits at SND.UNA (not the last segment) so that it
 * always starts on a record boundary; one probe per ACK that advances SND.UNA. A flight of
 * one segment waits for the RTO (the peer may be delaying its ACK). An ACK that echoes the
 * probe's timestamp and SACKs nothing above shows the tail was lost: the next segment goes
 * at once (tcp_ack.c).
 * With RACK the probe also runs during recovery: when every segment in flight went out after
 * the last one delivered, RACK has nothing to time, and a flight whose ACKs were all lost (or
 * a forwarder holds the last frame until the next) would otherwise wait for the RTO. */
static bool tlp_blocked(const struct tcp_conn *c)
{
	if (c->flags & TCPF_TLP_DONE)
		return true;
	return (c->flags & TCPF_IN_RECOVERY) && !tcp_recovery_on(c);
}

void tcp_tlp_arm(struct tcp_conn *c)
{
	uint64_t pto = 2ull * c->rto.srtt_us;

	if (!c->sack_ok || tlp_blocked(c) ||
	    c->snd_max - c->snd_una <= c->snd_mss || !c->rto.have_sample)
		return;
	if (pto < TCP_TLP_MIN_US)
		pto = TCP_TLP_MIN_US;
	if (pto >= tcp_rto_get(&c->rto))
		return;
	arm_us(c, &c->t_tlp, pto);
}

static void tlp_fire(struct tcp_timer *t, void *arg)
{
	struct tcp_conn *c = arg;
	uint32_t len;

	(void)t;
	if (c->snd_una == c->snd_max || tlp_blocked(c) || c->state < TCP_ESTABLISHED ||
	    c->state == TCP_TIME_WAIT)
		return;
	len = tcp_seg_len_at(c, c->snd_una, c->snd_mss, c->snd_mss);
	if (!len)
		return;
	c->flags |= TCPF_TLP_DONE;
	c->tlp_ts = tcp_now_ms32(c->s);
	tcp_send_segment(c, c->snd_una, len, TCP_F_ACK);
}

/* ---- persist ---- */
void tcp_persist_arm(struct tcp_conn *c)
{
	uint64_t us = (uint64_t)tcp_rto_get(&c->rto) << (c->persist_backoff < 16 ? c->persist_backoff
										  : 16);

	arm_us(c, &c->t_persist, us > TCP_PERSIST_MAX_US ? TCP_PERSIST_MAX_US : us);
}

/* A probe outside the window (SND.UNA - 1, no data) makes any receiver answer with an ACK
 * carrying its current window (the Linux probe; one octet of data would break record
 * alignment). Probing goes on as long as the peer answers (RFC 9293 3.8.6.1), except for an
 * orphan: a receiver that keeps its window shut would hold it, and its send queue, forever. */
static void persist_fire(struct tcp_timer *t, void *arg)
{
	struct tcp_conn *c = arg;

	(void)t;
	if (!seq_lt(c->snd_nxt, c->snd_end) || c->snd_una != c->snd_max)
		return;
	if (orphan_closing(c) && c->persist_backoff >= retries_limit(c)) {
		give_up(c);
		return;
	}
	if (c->snd_wnd) {
		/* A window too small for sender SWS avoidance: the override timeout of RFC 9293
		 * 3.8.6.2.1 sends what fits. */
		c->flags |= TCPF_PROBE_WINDOW;
		tcp_output(c);
		c->flags &= ~TCPF_PROBE_WINDOW;
		if (c->snd_una != c->snd_max)
			return;
		tcp_timer_cancel(&c->s->wheel, &c->t_persist);
	}
	tcp_send_segment(c, c->snd_una - 1, 0, TCP_F_ACK);
	c->persist_backoff++;
	tcp_persist_arm(c);
}

/* ---- delayed ACK ---- */
void tcp_delack_arm(struct tcp_conn *c)
{
	if (!tcp_timer_armed(&c->t_delack))
		arm_us(c, &c->t_delack, c->s->cfg.delack_us);
}

/* An ACK is due within us at the latest: an armed delayed-ACK timer moves earlier only. */
void tcp_ack_within(struct tcp_conn *c, uint64_t us)
{
	struct tcp_wheel *w = &c->s->wheel;

	if (tcp_timer_armed(&c->t_delack) &&
	    tcp_timer_due_us(w, &c->t_delack) <= tcp_now_us(c->s) + us)
		return;
	arm_us(c, &c->t_delack, us);
}

static void delack_fire(struct tcp_timer *t, void *arg)
{
	struct tcp_conn *c = arg;

	(void)t;
	if (c->state >= TCP_ESTABLISHED && c->state != TCP_TIME_WAIT)
		tcp_send_ack(c);
}

/* ---- keepalive / TIME_WAIT / FIN_WAIT_2 ---- */
void tcp_ka_reset(struct tcp_conn *c)
{
	if (c->ka_idle_s && (c->state == TCP_ESTABLISHED || c->state == TCP_CLOSE_WAIT))
		tcp_timer_arm_ms(c, &c->t_ka, (uint64_t)c->ka_idle_s * 1000);
}

/* Waiting for the ACK of our FIN (FIN-WAIT-1, CLOSING, LAST-ACK), owner or not, keepalive's
 * bound still holds: the FIN's retransmissions are the probes, and a peer silent for IDLE +
 * PROBES x INTVL is gone, as in the open states and as TCP_USER_TIMEOUT ends such a kernel
 * socket (D278). */
static bool fin_unacked(const struct tcp_conn *c)
{
	return c->state == TCP_FIN_WAIT_1 || c->state == TCP_CLOSING || c->state == TCP_LAST_ACK;
}

static uint64_t ka_silence_end_us(const struct tcp_conn *c)
{
	return c->last_rcv_us +
	       ((uint64_t)c->ka_idle_s + (uint64_t)c->ka_intvl_s * c->ka_probes) * 1000000;
}

void tcp_ka_closing(struct tcp_conn *c)
{
	uint64_t now = tcp_now_us(c->s), end = ka_silence_end_us(c);

	if (!c->ka_idle_s || !fin_unacked(c)) {
		tcp_timer_cancel(&c->s->wheel, &c->t_ka);
		return;
	}
	arm_us(c, &c->t_ka, end > now ? end - now : 1);
}

static void closing_silence(struct tcp_conn *c)
{
	if (tcp_now_us(c->s) >= ka_silence_end_us(c))
		give_up(c);
	else
		tcp_ka_closing(c);
}

static void keepalive(struct tcp_conn *c)
{
	uint64_t now = tcp_now_us(c->s), idle = now - c->last_rcv_us;
	uint64_t idle_us = (uint64_t)c->ka_idle_s * 1000000;

	if (c->ka_idle_s && fin_unacked(c)) {
		closing_silence(c);
		return;
	}
	if (!c->ka_idle_s || (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT))
		return;
	if (c->ka_sent == 0 && idle < idle_us) {
		arm_us(c, &c->t_ka, idle_us - idle);
		return;
	}
	if (c->ka_sent >= c->ka_probes) {
		give_up(c);
		return;
	}
	/* RFC 9293 3.8.4: SEG.SEQ = SND.NXT - 1, no data: the peer answers with an ACK. */
	tcp_send_segment(c, c->snd_nxt - 1, 0, TCP_F_ACK);
	c->ka_sent++;
	tcp_timer_arm_ms(c, &c->t_ka, (uint64_t)c->ka_intvl_s * 1000);
}

static void ka_fire(struct tcp_timer *t, void *arg)
{
	struct tcp_conn *c = arg;

	(void)t;
	if (c->state == TCP_TIME_WAIT) {
		tcp_conn_release(c); /* 2 MSL are over */
		return;
	}
	if (c->state == TCP_FIN_WAIT_2 && (c->flags & TCPF_CLOSED_BY_USER)) {
		give_up(c); /* as Linux: the peer learns we are gone */
		return;
	}
	keepalive(c);
}

void tcp_timers_init(struct tcp_conn *c)
{
	tcp_timer_init(&c->t_rtx, rtx_fire, c);
	tcp_timer_init(&c->t_persist, persist_fire, c);
	tcp_timer_init(&c->t_delack, delack_fire, c);
	tcp_timer_init(&c->t_ka, ka_fire, c);
	tcp_timer_init(&c->t_tlp, tlp_fire, c);
	tcp_recovery_timer_init(c);
	tcp_pace_timer_init(c);
}

void tcp_timers_cancel_all(struct tcp_conn *c)
{
	tcp_timer_cancel(&c->s->wheel, &c->t_rtx);
	tcp_timer_cancel(&c->s->wheel, &c->t_persist);
	tcp_timer_cancel(&c->s->wheel, &c->t_delack);
	tcp_timer_cancel(&c->s->wheel, &c->t_ka);
	tcp_timer_cancel(&c->s->wheel, &c->t_tlp);
	tcp_timer_cancel(&c->s->wheel, &c->t_reo);
	tcp_timer_cancel(&c->s->wheel, &c->t_pace);
}
