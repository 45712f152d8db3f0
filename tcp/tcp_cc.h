/* Congestion control: RFC 5681 (slow start, congestion avoidance, fast retransmit / fast
 * recovery) with NewReno partial-ACK handling (RFC 6582), or CUBIC (RFC 9438) for the
 * window growth, or BBR (tcp_bbr.h), which sets cwnd and a pacing rate from a model of the
 * path and is fed every ACK's delivery-rate sample (tcp_cc_bbr_ack) instead of tcp_cc_on_ack.
 * The engine reports events; this module owns cwnd and ssthresh. Byte counts, times in
 * microseconds. Pure: no clock of its own. */
#ifndef TCP_CC_H
#define TCP_CC_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp.h"
#include "tcp_bbr.h"

struct tcp_cc {
	enum tcp_cc_algo algo;
	uint32_t cwnd, ssthresh, smss;
	uint32_t bytes_acked;     /* appropriate byte counting in congestion avoidance (RFC 3465) */
	bool in_recovery;
	uint32_t recover;         /* NewReno "recover" (RFC 6582 3.2): highest seq sent at entry */
	/* CUBIC state (RFC 9438 4) */
	uint32_t w_max, w_last_max; /* segments x 1024 (fixed point) */
	uint64_t epoch_start_us;
	uint32_t k_ms;            /* time to reach w_max */
	uint32_t w_est;           /* Reno-friendly estimate, bytes */
	uint32_t cubic_ack_bytes;
	uint32_t w_est_ack_bytes; /* acked octets not yet counted in w_est (rounding carry) */
	struct tcp_bbr bbr;       /* BBR's model and state */
};

/* Initial window per RFC 5681 3.1 (IW = min(4*SMSS, max(2*SMSS, 4380)), ssthresh "arbitrarily
 * high" (the peer's window is the real limit). BBR starts with 10 segments (RFC 6928), as its
 * STARTUP measures the path from the first round. */
void tcp_cc_init(struct tcp_cc *cc, enum tcp_cc_algo algo, uint32_t smss);
/* A random value for choices a flow should not share with its neighbours (BBR's phase). */
void tcp_cc_seed(struct tcp_cc *cc, uint32_t rand);
/* BBR: one ACK's rate sample and what it changed (every ACK, in recovery too). */
void tcp_cc_bbr_ack(struct tcp_cc *cc, const struct tcp_bbr_ack *a);
/* Octets per second the sender paces at; 0: no pacing (NewReno, CUBIC). */
uint64_t tcp_cc_pacing_rate(const struct tcp_cc *cc);
/* New data acknowledged (not a duplicate): acked octets, now_us, current srtt_us, and the
 * sender's flight size before the ACK. Grows cwnd (slow start or avoidance). Not called in
 * recovery (tcp_cc_recovery_ack handles those ACKs). */
void tcp_cc_on_ack(struct tcp_cc *cc, uint32_t acked, uint64_t now_us, uint32_t srtt_us,
		   uint32_t flight);
/* Third duplicate ACK (or SACK loss detection): enter fast recovery. flight = octets in
 * flight, snd_max = highest sequence sent (becomes "recover"). Sets ssthresh (5681 eq. 4, or
 * CUBIC's beta 0.7) and cwnd = ssthresh + 3*SMSS; BBR keeps both and saves cwnd for the end
 * of recovery. */
void tcp_cc_enter_recovery(struct tcp_cc *cc, uint32_t flight, uint32_t snd_max,
			   uint64_t now_us);
/* Further duplicate ACK in recovery: inflate cwnd by SMSS (5681 3.2 step 4). */
void tcp_cc_dupack_in_recovery(struct tcp_cc *cc);
/* An ACK in recovery covering new data up to ack: returns true when recovery is over (ack
 * covers "recover": deflate cwnd, RFC 6582 3.2 step 3) or false for a partial ACK (deflate by
 * the acked amount, add back SMSS; the caller retransmits the next hole). */
bool tcp_cc_recovery_ack(struct tcp_cc *cc, uint32_t ack, uint32_t acked, uint32_t flight);
/* Retransmission timeout (5681 eq. 4 then cwnd = 1 SMSS, 6582 recover = snd_max; BBR keeps
 * ssthresh and saves cwnd). */
void tcp_cc_on_rto(struct tcp_cc *cc, uint32_t flight, uint32_t snd_max, uint64_t now_us);
/* After an idle period longer than an RTO (5681 4.1): restart window. */
void tcp_cc_after_idle(struct tcp_cc *cc);
/* The MSS changed (e.g., after the handshake). */
void tcp_cc_set_smss(struct tcp_cc *cc, uint32_t smss);

#endif
