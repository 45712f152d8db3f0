/* CUBIC window growth, RFC 9438. Windows in the cubic function are in segments (the RFC's
 * unit), cwnd itself stays in octets. W_max and cwnd_prior are kept as segments x 1024 in
 * w_max / w_last_max; K in milliseconds. Double arithmetic for the curve; no libm (the cube
 * root for K is an integer one, on milliseconds cubed). */
#include <stdint.h>

#include "tcp_cc_impl.h"

#define FIX 1024.0
/* alpha_cubic = 3 (1 - beta) / (1 + beta) (4.3) */
#define CUBIC_ALPHA (3.0 * (1.0 - TCP_CUBIC_BETA) / (1.0 + TCP_CUBIC_BETA))

static uint32_t to_fix(double segs)
{
	double v = segs * FIX;
	return v >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint32_t sat_add(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* An increase of inc octets was earned by acc acked octets and whole of it applied: the
 * acked octets that earned the unapplied fraction. */
static uint32_t carry(uint32_t acc, double whole, double inc)
{
	return (uint32_t)((double)acc * (inc - whole) / inc);
}

static double segs(const struct tcp_cc *cc, double octets) { return octets / cc->smss; }

/* Largest r with r^3 <= x, bit by bit (x < 2^64). */
static uint64_t icbrt(uint64_t x)
{
	uint64_t r = 0;
	for (int s = 63; s >= 0; s -= 3) {
		r <<= 1;
		uint64_t b = 3 * r * (r + 1) + 1;
		if ((x >> s) >= b) {
			x -= b << s;
			r++;
		}
	}
	return r;
}

void tcp_cubic_reset(struct tcp_cc *cc)
{
	cc->w_max = 0;
	cc->w_last_max = 0;
	cc->epoch_start_us = 0;
	cc->k_ms = 0;
	cc->w_est = 0;
	cc->cubic_ack_bytes = 0;
	cc->w_est_ack_bytes = 0;
}

uint32_t tcp_cubic_loss(struct tcp_cc *cc)
{
	double cwnd_seg = segs(cc, cc->cwnd);
	double prev_wmax = cc->w_max / FIX;
	/* 4.7 fast convergence: a loss before the previous W_max was reached means competition
	 * grew; give up a further (1 - beta) / 2. */
	if (cwnd_seg < prev_wmax)
		cc->w_max = to_fix(cwnd_seg * (1.0 + TCP_CUBIC_BETA) / 2.0);
	else
		cc->w_max = to_fix(cwnd_seg);
	cc->w_last_max = to_fix(cwnd_seg); /* cwnd_prior (4.6) */
	cc->epoch_start_us = 0;
	cc->cubic_ack_bytes = 0;
	/* 4.6 uses cwnd (Linux, Windows): robust when the sender was application-limited. */
	double ss = cc->cwnd * TCP_CUBIC_BETA;
	uint32_t min = 2 * cc->smss;
	return ss < min ? min : (uint32_t)ss;
}

void tcp_cubic_idle(struct tcp_cc *cc)
{
	cc->epoch_start_us = 0;
}

/* A new congestion-avoidance epoch (4.2): K from W_max and the window it starts with. */
static void start_epoch(struct tcp_cc *cc, uint64_t now_us)
{
	cc->epoch_start_us = now_us ? now_us : 1; /* 0 means "no epoch" */
	cc->cubic_ack_bytes = 0;
	cc->w_est = cc->cwnd;
	cc->w_est_ack_bytes = 0;
	double cwnd_seg = segs(cc, cc->cwnd);
	double wmax = cc->w_max / FIX;
	if (wmax <= cwnd_seg) {
		/* Above the old maximum (or none): the curve starts at its plateau (convex). */
		cc->w_max = to_fix(cwnd_seg);
		cc->k_ms = 0;
		return;
	}
	double k3_ms = (wmax - cwnd_seg) / TCP_CUBIC_C * 1e9; /* s^3 -> ms^3 */
	cc->k_ms = (uint32_t)icbrt(k3_ms >= 1.8e19 ? UINT64_MAX : (uint64_t)k3_ms);
}

/* W_cubic(t) in segments (4.2, equation 1), t in seconds. */
static double w_cubic(const struct tcp_cc *cc, double t)
{
	double d = t - cc->k_ms / 1000.0;
	return TCP_CUBIC_C * d * d * d + cc->w_max / FIX;
}

void tcp_cubic_ca(struct tcp_cc *cc, uint32_t acked, uint64_t now_us, uint32_t srtt_us)
{
	if (cc->epoch_start_us == 0)
		start_epoch(cc, now_us);
	uint64_t start = cc->epoch_start_us;
	double t = now_us > start ? (double)(now_us - start) / 1e6 : 0.0;
	double rtt = srtt_us / 1e6;
	double cwnd = cc->cwnd;

	/* 4.3 Reno-friendly estimate, alpha 1 once it passed cwnd_prior. */
	double alpha = cc->w_est >= cc->w_last_max / FIX * cc->smss ? 1.0 : CUBIC_ALPHA;
	cc->w_est_ack_bytes = sat_add(cc->w_est_ack_bytes, acked);
	double est_inc = alpha * cc->w_est_ack_bytes * (double)cc->smss / cwnd;
	if (est_inc >= 1.0) {
		/* Whole octets only; the acked octets behind the fraction stay for next time. */
		double whole = (double)(uint64_t)est_inc;
		double w = cc->w_est + whole;
		cc->w_est = w >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)w;
		cc->w_est_ack_bytes = carry(cc->w_est_ack_bytes, whole, est_inc);
	}
	double w_est = cc->w_est;

	double wc_now = w_cubic(cc, t) * cc->smss;
	if (wc_now < w_est) {
		/* Reno-friendly region: at least what standard TCP would have. */
		if (w_est > cwnd)
			cc->cwnd = cc->w_est;
		cc->cubic_ack_bytes = 0;
		return;
	}
	/* 4.4 / 4.5: target one RTT ahead, within [cwnd, 1.5 cwnd]; grow by
	 * (target - cwnd) / cwnd per acked segment. Acked octets accumulate until the increase
	 * reaches one octet, so slow growth near the plateau is not lost to rounding. */
	double target = w_cubic(cc, t + rtt) * cc->smss;
	if (target < cwnd)
		target = cwnd;
	if (target > 1.5 * cwnd)
		target = 1.5 * cwnd;
	if (target <= cwnd) {
		cc->cubic_ack_bytes = 0; /* on the plateau: nothing to accumulate towards */
		return;
	}
	cc->cubic_ack_bytes = sat_add(cc->cubic_ack_bytes, acked);
	double inc = (target - cwnd) * cc->cubic_ack_bytes / cwnd;
	if (inc >= 1.0) {
		double whole = (double)(uint64_t)inc;
		double nw = cwnd + whole;
		cc->cwnd = nw >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)nw;
		cc->cubic_ack_bytes = carry(cc->cubic_ack_bytes, whole, inc);
	}
}
