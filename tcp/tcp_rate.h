/* Delivery rate estimation (draft-cheng-iccrg-delivery-rate-estimation): each transmission
 * records how much the connection had delivered by then, when, and when the current sampling
 * interval began; each ACK turns the most recently sent segment it delivers into one rate
 * sample, the octets delivered between that segment's send and its delivery over the longer of
 * the send and the ACK intervals. Samples taken while the application left the window unused
 * are marked application-limited. Pure: no clock of its own; octets, times in microseconds. */
#ifndef TCP_RATE_H
#define TCP_RATE_H

#include <stdbool.h>
#include <stdint.h>

/* What a transmission records (the draft's per-packet state, P.*). */
struct tcp_rate_snap {
	uint64_t delivered;         /* C.delivered when it left */
	uint64_t delivered_us;      /* C.delivered_time */
	uint64_t first_sent_us;     /* C.first_sent_time */
	bool app_limited;           /* C.app_limited was set */
};

/* One ACK's sample. */
struct tcp_rate_sample {
	bool valid;                 /* delivered and interval_us hold a rate */
	uint64_t delivered;         /* octets delivered over the interval */
	uint64_t interval_us;
	uint64_t prior_delivered;   /* the snapshot of the segment it came from */
	bool app_limited;
	uint32_t acked;             /* octets this ACK delivered (cumulatively or SACKed) */
	int64_t rtt_us;             /* the newest original transmission it delivered; -1: none */
};

struct tcp_rate {
	uint64_t delivered;         /* octets delivered so far */
	uint64_t delivered_us;      /* when the latest of them was */
	uint64_t first_sent_us;     /* send time of the segment that opened the interval */
	uint64_t app_limited;       /* 0, or the delivered count until which samples are limited */
	/* the ACK being processed: the segment with the newest snapshot it delivered */
	bool have;
	struct tcp_rate_snap prior;
	uint64_t send_elapsed_us;
	uint32_t acked;
	int64_t rtt_us;
};

void tcp_rate_init(struct tcp_rate *rt);
/* A segment leaves at now_us; idle: nothing was outstanding, so a new interval starts. */
void tcp_rate_sent(struct tcp_rate *rt, bool idle, uint64_t now_us, struct tcp_rate_snap *snap);
/* A segment of len octets sent at xmit_us (its latest transmission, retrans when it was one)
 * was delivered: it counts, and the newest of an ACK's segments gives the sample. */
void tcp_rate_delivered(struct tcp_rate *rt, const struct tcp_rate_snap *snap, uint32_t len,
			uint64_t xmit_us, bool retrans, uint64_t now_us);
/* len octets of a segment were delivered without the whole of it: counted, no sample. */
void tcp_rate_count(struct tcp_rate *rt, uint32_t len, uint64_t now_us);
/* The ACK is processed: its sample. An interval shorter than min_rtt_us (0: unknown) is no
 * sample (ACK compression would overstate the rate). */
void tcp_rate_sample(struct tcp_rate *rt, uint32_t min_rtt_us, uint64_t now_us,
		     struct tcp_rate_sample *rs);
/* The sender has less to send than the window allows: samples until what is in flight now
 * has been delivered do not show the path's rate. */
void tcp_rate_app_limited(struct tcp_rate *rt, uint32_t inflight);

#endif
