/* Private to tcp_cc.c and tcp_cubic.c: CUBIC's hooks into the common congestion control
 * (slow start, fast recovery and the RTO response are RFC 5681/6582 for both algorithms;
 * CUBIC changes the decrease factor and the congestion-avoidance growth). */
#ifndef TCP_CC_IMPL_H
#define TCP_CC_IMPL_H

#include "tcp_cc.h"

/* CUBIC constants (RFC 9438 4.1, 4.6): C = 0.4, beta = 0.7. */
#define TCP_CUBIC_C 0.4
#define TCP_CUBIC_BETA 0.7

/* Forget the epoch and the window history (connection start). */
void tcp_cubic_reset(struct tcp_cc *cc);
/* A congestion event (4.6, 4.7 fast convergence): records W_max and cwnd_prior, ends the
 * epoch, returns the new ssthresh (cwnd * beta, at least 2 SMSS). */
uint32_t tcp_cubic_loss(struct tcp_cc *cc);
/* Congestion-avoidance growth for acked octets (4.2 - 4.5). */
void tcp_cubic_ca(struct tcp_cc *cc, uint32_t acked, uint64_t now_us, uint32_t srtt_us);
/* The epoch restarts after idle (the cubic curve would otherwise jump). */
void tcp_cubic_idle(struct tcp_cc *cc);

#endif
