/* RACK (RFC 8985 6): time-based loss detection. The sender logs every segment it transmits
 * (sequence range, the time of its latest transmission, whether it was retransmitted, SACKed
 * or marked lost), in sequence order over [SND.UNA, SND.MAX). A segment is lost once a segment
 * sent after it has been delivered and it has itself been out for longer than that one's RTT
 * plus a reordering window; the window adapts to the reordering the path shows (DSACK, RFC
 * 2883) and is zero while no reordering has been seen and the duplicate-ACK threshold is
 * met. Pure: no clock of its own; times in microseconds. */
#ifndef TCP_RACK_H
#define TCP_RACK_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp_rate.h"

enum {
	TCP_RSEG_SACKED = 1u << 0,
	TCP_RSEG_LOST = 1u << 1,
	TCP_RSEG_RETRANS = 1u << 2, /* sent more than once */
};

struct tcp_rack_seg {
	uint32_t seq, len;
	uint64_t xmit_us;           /* the latest transmission */
	uint32_t order;             /* its place among all transmissions (serial) */
	uint8_t flags;
	struct tcp_rate_snap rate;  /* delivery-rate snapshot of that transmission */
};

struct tcp_rack {
	struct tcp_rack_seg *seg;   /* ring: cap entries from head, cnt used, sequence order */
	uint32_t cap, head, cnt;
	struct tcp_rate *rate;      /* NULL: no delivery-rate sampling */
	bool broken;                /* the log could not grow: loss detection falls back */
	uint32_t sacked_bytes;      /* octets of SACKed entries */
	uint32_t lost_bytes;        /* octets of entries marked lost, not resent since */
	/* the most recently sent segment delivered so far (RACK.xmit_ts, RACK.end_seq) */
	bool have;
	uint64_t xmit_us;
	uint32_t order;             /* "sent after" is by transmission order: one clock value
				     * may cover a whole burst */
	uint32_t end_seq;
	uint32_t next_order;
	uint32_t rtt_us;            /* RACK.rtt: that segment's round trip */
	uint32_t min_rtt_us;        /* 0: no sample yet */
	uint32_t fack;              /* highest sequence delivered (RACK.fack), once fack_set */
	bool fack_set;
	bool reordering_seen;
	uint8_t reo_wnd_mult;       /* RACK.reo_wnd_mult, from 1 */
	uint8_t reo_wnd_persist;    /* recoveries left before the multiplier goes back to 1 */
	bool dsack_round_set;
	uint32_t dsack_round;       /* SND.MAX when the multiplier last grew */
	uint32_t spurious;          /* DSACKs seen (statistics) */
	/* Where walks start, so that a peer's ACKs cost the entries that can change, not the
	 * whole flight: every entry below scan_seq is SACKed or lost (scan_set), and none below
	 * lost_seq is lost (while lost_bytes) */
	bool scan_set;
	uint32_t scan_seq;
	uint32_t lost_seq;
	uint64_t walked;            /* entries those walks looked at (statistics, tests) */
};

/* What the ACK that delivered segments says about them (for RFC 8985 6.2 step 2). */
struct tcp_rack_ack {
	uint64_t now_us;
	bool has_ts;
	uint32_t ts_ecr;            /* ms clock of the sender, as in TSval */
};

int tcp_rack_init(struct tcp_rack *r);
void tcp_rack_free(struct tcp_rack *r);
/* [seq, seq + len) went out at now_us; octets below snd_max are retransmissions. */
void tcp_rack_sent(struct tcp_rack *r, uint32_t seq, uint32_t len, uint32_t snd_max,
		   uint64_t now_us);
/* The cumulative ACK moved to una: entries below it were delivered. */
void tcp_rack_acked(struct tcp_rack *r, uint32_t una, const struct tcp_rack_ack *a);
/* A SACK block [start, end): the entries it covers whole were delivered. */
void tcp_rack_sacked(struct tcp_rack *r, uint32_t start, uint32_t end,
		     const struct tcp_rack_ack *a);
/* A DSACK arrived: widen the reordering window, once per round trip (until SND.UNA passes
 * what SND.MAX was at the last widening). */
void tcp_rack_dsack(struct tcp_rack *r, uint32_t snd_una, uint32_t snd_max);
/* A recovery ended: the widened window persists for 16 recoveries after the last DSACK. */
void tcp_rack_recovery_done(struct tcp_rack *r);
/* RACK.reo_wnd (RFC 8985 6.2 step 4), never above srtt_us. */
uint32_t tcp_rack_reo_wnd(const struct tcp_rack *r, bool in_recovery, uint32_t smss,
			  uint32_t srtt_us);
/* Marks what is lost now; returns the octets newly marked. *timeout_us: 0, or how long until
 * the next entry would be lost if nothing else arrives (the reordering timer). The walk
 * stops at the first original transmission not yet overdue: everything above it in sequence
 * went out later (retransmissions later still), so nothing there can be overdue either. */
uint32_t tcp_rack_detect(struct tcp_rack *r, uint64_t now_us, uint32_t reo_wnd_us,
			 uint64_t *timeout_us);
/* The first entry marked lost: its range. */
bool tcp_rack_next_lost(struct tcp_rack *r, uint32_t *seq, uint32_t *len);
/* Octets in flight (RFC 8985's "pipe" as Linux counts it): outstanding less SACKed and lost. */
uint32_t tcp_rack_pipe(const struct tcp_rack *r, uint32_t snd_una, uint32_t snd_max);
/* After a retransmission timeout: every entry is unSACKed and unmarked (go-back-N resends
 * them all), times kept. */
void tcp_rack_rto(struct tcp_rack *r);
/* After a retransmission timeout with SACK kept: every entry not SACKed is lost. Returns the
 * octets marked. */
uint32_t tcp_rack_mark_all_lost(struct tcp_rack *r);

#endif
