/* Congestion control common to the algorithms: RFC 5681 slow start and fast recovery with
 * RFC 6582 NewReno partial ACKs, RFC 3465 byte counting, and NewReno's congestion avoidance.
 * CUBIC (tcp_cubic.c) replaces the decrease factor and the avoidance growth only; BBR
 * (tcp_bbr.c) replaces the window's growth and its response to loss. */
#include "tcp_cc.h"

#include <string.h>

#include "tcp_cc_impl.h"
#include "tcp_seq.h"

#define SSTHRESH_INFINITE 0x7fffffffu
#define ABC_L_SEGS 2u  /* RFC 3465 2.2: slow start grows by at most L = 2 SMSS per ACK */

static uint32_t initial_window(uint32_t smss)
{
	uint32_t two = 2 * smss, four = 4 * smss;
	uint32_t hi = two > 4380 ? two : 4380;
	return four < hi ? four : hi;
}

static uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }
static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

void tcp_cc_init(struct tcp_cc *cc, enum tcp_cc_algo algo, uint32_t smss)
{
	memset(cc, 0, sizeof(*cc));
	cc->algo = algo;
	cc->smss = smss ? smss : 536;
	cc->cwnd = initial_window(cc->smss);
	cc->ssthresh = SSTHRESH_INFINITE;
	if (algo == TCP_CC_CUBIC)
		tcp_cubic_reset(cc);
	if (algo == TCP_CC_BBR)
		cc->cwnd = tcp_bbr_init(&cc->bbr, cc->smss, 0);
}

void tcp_cc_seed(struct tcp_cc *cc, uint32_t rand)
{
	cc->bbr.rand = rand;
}

void tcp_cc_bbr_ack(struct tcp_cc *cc, const struct tcp_bbr_ack *a)
{
	if (cc->algo == TCP_CC_BBR)
		tcp_bbr_on_ack(&cc->bbr, a, &cc->cwnd);
}

uint64_t tcp_cc_pacing_rate(const struct tcp_cc *cc)
{
	return cc->algo == TCP_CC_BBR ? cc->bbr.pacing_rate : 0;
}

/* RFC 7661's idea, simplified: the window only grows while the sender uses at least half of
 * it, so an application-limited sender does not build a window it never tested. */
static bool cwnd_limited(const struct tcp_cc *cc, uint32_t flight)
{
	return (uint64_t)flight * 2 >= cc->cwnd;
}

static void reno_ca(struct tcp_cc *cc, uint32_t acked)
{
	/* RFC 5681 3.1 with byte counting (RFC 3465 2.1): one SMSS per cwnd of acked octets. */
	cc->bytes_acked += acked;
	if (cc->bytes_acked >= cc->cwnd) {
		cc->bytes_acked -= cc->cwnd;
		cc->cwnd += cc->smss;
	}
}

/* Grows cwnd towards ssthresh; returns the acked octets left for congestion avoidance. */
static uint32_t slow_start(struct tcp_cc *cc, uint32_t acked)
{
	uint32_t room = cc->ssthresh - cc->cwnd;
	uint32_t inc = min_u32(acked, ABC_L_SEGS * cc->smss);
	if (inc >= room) {
		cc->cwnd = cc->ssthresh;
		return acked - room;
	}
	cc->cwnd += inc;
	return 0;
}

void tcp_cc_on_ack(struct tcp_cc *cc, uint32_t acked, uint64_t now_us, uint32_t srtt_us,
		   uint32_t flight)
{
	if (acked == 0 || !cwnd_limited(cc, flight) || cc->algo == TCP_CC_BBR)
		return;
	if (cc->cwnd < cc->ssthresh) {
		acked = slow_start(cc, acked);
		if (acked == 0)
			return;
	}
	if (cc->algo == TCP_CC_CUBIC)
		tcp_cubic_ca(cc, acked, now_us, srtt_us);
	else
		reno_ca(cc, acked);
}

/* RFC 5681 equation 4 (NewReno) or CUBIC's beta. */
static uint32_t loss_ssthresh(struct tcp_cc *cc, uint32_t flight)
{
	if (cc->algo == TCP_CC_CUBIC)
		return tcp_cubic_loss(cc);
	return max_u32(flight / 2, 2 * cc->smss);
}

void tcp_cc_enter_recovery(struct tcp_cc *cc, uint32_t flight, uint32_t snd_max,
			   uint64_t now_us)
{
	(void)now_us; /* the CUBIC epoch starts at the first ACK after recovery */
	cc->recover = snd_max;
	if (cc->algo == TCP_CC_BBR) {
		tcp_bbr_on_loss_event(&cc->bbr, cc->cwnd, false);
		cc->in_recovery = true;
		return;
	}
	cc->ssthresh = loss_ssthresh(cc, flight);
	cc->cwnd = cc->ssthresh + 3 * cc->smss;
	cc->in_recovery = true;
	cc->bytes_acked = 0;
}

void tcp_cc_dupack_in_recovery(struct tcp_cc *cc)
{
	if (cc->in_recovery)
		cc->cwnd += cc->smss;
}

bool tcp_cc_recovery_ack(struct tcp_cc *cc, uint32_t ack, uint32_t acked, uint32_t flight)
{
	if (!cc->in_recovery)
		return true;
	if (seq_geq(ack, cc->recover)) {
		/* Full ACK (6582 3.2 step 3, option 1): no burst larger than flight + SMSS. */
		cc->cwnd = min_u32(cc->ssthresh, max_u32(flight, cc->smss) + cc->smss);
		cc->in_recovery = false;
		cc->bytes_acked = 0;
		return true;
	}
	/* Partial ACK (step 4): deflate by what was acked, add back one SMSS if that was at
	 * least one SMSS, so about ssthresh stays in flight while holes are repaired. */
	cc->cwnd = cc->cwnd > acked ? cc->cwnd - acked : 0;
	if (acked >= cc->smss)
		cc->cwnd += cc->smss;
	cc->cwnd = max_u32(cc->cwnd, cc->smss);
	return false;
}

void tcp_cc_on_rto(struct tcp_cc *cc, uint32_t flight, uint32_t snd_max, uint64_t now_us)
{
	(void)now_us;
	/* A timeout repeated before the window grew again (cwnd still one segment) must not
	 * shrink ssthresh further: the flight then is only the retransmission (5681 eq. 4 is
	 * meant for the first timeout of a window). */
	if (cc->algo == TCP_CC_BBR)
		tcp_bbr_on_loss_event(&cc->bbr, cc->cwnd, true);
	else if (cc->cwnd > cc->smss || cc->in_recovery)
		cc->ssthresh = loss_ssthresh(cc, flight);
	cc->cwnd = cc->smss;
	cc->recover = snd_max;
	cc->in_recovery = false;
	cc->bytes_acked = 0;
}

void tcp_cc_after_idle(struct tcp_cc *cc)
{
	/* 5681 4.1: cwnd = min(RW, cwnd), RW = min(IW, cwnd). */
	cc->cwnd = min_u32(cc->cwnd, initial_window(cc->smss));
	cc->bytes_acked = 0;
	if (cc->algo == TCP_CC_CUBIC)
		tcp_cubic_idle(cc);
}

void tcp_cc_set_smss(struct tcp_cc *cc, uint32_t smss)
{
	if (smss == 0 || smss == cc->smss)
		return;
	/* Untouched initial window: recompute it for the negotiated MSS (RFC 5681 3.1 defines
	 * IW by SMSS). Otherwise keep the octet count but never below one segment. */
	bool at_iw = cc->cwnd == initial_window(cc->smss);
	cc->smss = smss;
	if (cc->algo == TCP_CC_BBR)
		cc->bbr.smss = smss;
	if (at_iw)
		cc->cwnd = initial_window(smss);
	cc->cwnd = max_u32(cc->cwnd, smss);
	cc->ssthresh = max_u32(cc->ssthresh, 2 * smss);
}
