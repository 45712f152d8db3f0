/* Proportional Rate Reduction (RFC 6937): how much a sender in fast recovery may send on each
 * ACK, so that the flight falls smoothly from its size at the loss to ssthresh (while the
 * pipe is above ssthresh, in proportion to what the receiver reports delivered), and climbs
 * back towards ssthresh by slow start (PRR-SSRB) when more was lost than the reduction asks.
 * Pure: octets only. */
#ifndef TCP_PRR_H
#define TCP_PRR_H

#include <stdint.h>

struct tcp_prr {
	uint32_t recover_fs;  /* RecoverFS: the flight when recovery began */
	uint64_t delivered;   /* prr_delivered: octets the receiver reported since then */
	uint64_t out;         /* prr_out: octets sent since then */
};

/* Recovery begins with recover_fs octets outstanding (SND.MAX - SND.UNA). */
void tcp_prr_init(struct tcp_prr *p, uint32_t recover_fs);
/* An ACK reported delivered octets (SND.UNA's advance plus the change of SACKed octets): the
 * octets that may be sent now (sndcnt), given the pipe after the ACK. */
uint32_t tcp_prr_sndcnt(struct tcp_prr *p, uint32_t delivered, uint32_t pipe,
			uint32_t ssthresh, uint32_t smss);
/* len octets went out (new data or retransmission) during the recovery. */
void tcp_prr_sent(struct tcp_prr *p, uint32_t len);

#endif
