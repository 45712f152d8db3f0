/* Retransmission timer arithmetic, RFC 6298: SRTT/RTTVAR from RTT samples (callers apply
 * Karn's rule: no sample from a retransmitted segment unless timestamps tell which
 * transmission was acknowledged), RTO bounds and exponential backoff. Times in microseconds. */
#ifndef TCP_RTO_H
#define TCP_RTO_H

#include <stdbool.h>
#include <stdint.h>

struct tcp_rto {
	uint32_t srtt_us, rttvar_us, rto_us;
	uint32_t min_us, max_us;  /* bounds (RFC 6298 2.4, 2.5) */
	uint8_t backoff;          /* doublings since the last good sample */
	bool have_sample;
};

/* init_us: RTO before the first sample (1 s, 2.1); min_us / max_us the clamps (max >= 60 s). */
void tcp_rto_init(struct tcp_rto *r, uint32_t init_us, uint32_t min_us, uint32_t max_us);
/* A valid RTT sample (2.2, 2.3, K=4, alpha=1/8, beta=1/4, G = 1 us). Clears the backoff. */
void tcp_rto_sample(struct tcp_rto *r, uint32_t rtt_us);
/* The timer expired (5.5): double the RTO, up to max. */
void tcp_rto_backoff(struct tcp_rto *r);
/* Current RTO in us, backoff included, clamped. */
uint32_t tcp_rto_get(const struct tcp_rto *r);
/* After a SYN timed out and data starts (5.7): RTO back to 3 s when no sample was taken. */
void tcp_rto_syn_timeout_reset(struct tcp_rto *r);

#endif
