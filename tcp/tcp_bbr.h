/* BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00): a model of the path, the bottleneck
 * bandwidth (the largest delivery rate of the last 10 round trips) and the round-trip
 * propagation time (the smallest RTT of the last 10 seconds), sets the pacing rate
 * (pacing_gain x bandwidth) and cwnd (cwnd_gain x their product). STARTUP doubles the rate
 * each round until the bandwidth stops growing by 25 % for 3 rounds, DRAIN empties the queue
 * that made, PROBE_BW cycles the pacing gain (1.25, 0.75, then 1 for six rounds), PROBE_RTT
 * holds 4 segments in flight for 200 ms and a round when the RTT minimum is 10 s old. Loss
 * does not shrink the model; in recovery cwnd follows packet conservation for a round and is
 * restored when it ends. Pure: octets, octets per second, microseconds. */
#ifndef TCP_BBR_H
#define TCP_BBR_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp_rate.h"

enum tcp_bbr_mode { TCP_BBR_STARTUP, TCP_BBR_DRAIN, TCP_BBR_PROBE_BW, TCP_BBR_PROBE_RTT };

#define TCP_BBR_UNIT 256u                  /* gains in 1/256 */
#define TCP_BBR_BW_ROUNDS 10u              /* the bandwidth filter's window, round trips */
#define TCP_BBR_MIN_RTT_US 10000000u       /* the RTT filter's window */
#define TCP_BBR_PROBE_RTT_US 200000u       /* time PROBE_RTT holds the small window */
#define TCP_BBR_CYCLE_LEN 8u
#define TCP_BBR_AGG_ROUNDS 5u              /* the aggregation filter's half window */

struct tcp_bbr {
	enum tcp_bbr_mode mode;
	uint32_t smss;
	uint32_t pacing_gain, cwnd_gain;
	/* the bandwidth filter: the largest sample of each of the last rounds up to the round of
	 * the latest sample taken (rounds of application-limited samples only age nothing) */
	uint64_t bw_round_max[TCP_BBR_BW_ROUNDS];
	uint64_t bw_round_no[TCP_BBR_BW_ROUNDS];
	uint64_t bw_last_round;
	/* round trips, counted by delivered octets: a round ends when a segment sent after the
	 * previous round's end is delivered */
	uint64_t round_count, next_round_delivered;
	bool round_start;
	uint32_t min_rtt_us;                   /* UINT32_MAX: no sample yet */
	uint64_t min_rtt_stamp_us;
	/* STARTUP's end */
	uint64_t full_bw;
	uint32_t full_bw_cnt;
	bool full_bw_reached;
	/* PROBE_BW's gain cycle */
	uint32_t cycle_idx;
	uint64_t cycle_stamp_us;
	uint32_t rand;                         /* the cycle's random start */
	/* PROBE_RTT */
	uint64_t probe_rtt_done_us;            /* 0: the window has not come down yet */
	bool probe_rtt_round_done;
	/* recovery: the cwnd to restore, packet conservation for the first round */
	uint32_t prior_cwnd;
	bool prev_in_recovery, packet_conservation;
	/* ACK aggregation: octets acknowledged beyond what the bandwidth explains since the
	 * epoch began; the largest of two windows of TCP_BBR_AGG_ROUNDS rounds each */
	uint64_t agg_epoch_us, agg_epoch_acked;
	uint32_t agg_max[2];
	uint32_t agg_idx, agg_rounds;
	bool want_app_limited;                 /* PROBE_RTT: the caller marks the rate sampler */
	uint64_t pacing_rate;                  /* octets per second, 0 before the first estimate */
};

/* What one ACK tells BBR. */
struct tcp_bbr_ack {
	uint64_t now_us;
	uint64_t delivered;        /* the connection's octets delivered so far */
	const struct tcp_rate_sample *rs;
	uint32_t lost;             /* octets newly marked lost */
	uint32_t inflight;         /* octets in flight after the ACK */
	uint32_t prior_inflight;   /* and before it */
	bool in_recovery;
	uint32_t srtt_us;          /* 0: none yet (the first pacing rate assumes 1 ms) */
};

/* rand picks PROBE_BW's first phase (any but the draining one). Returns the first cwnd. */
uint32_t tcp_bbr_init(struct tcp_bbr *b, uint32_t smss, uint32_t rand);
/* The model and the state machine for one ACK; *cwnd is updated. */
void tcp_bbr_on_ack(struct tcp_bbr *b, const struct tcp_bbr_ack *a, uint32_t *cwnd);
/* Recovery or an RTO starts: the cwnd to give back when it ends. rto: the loss was a
 * timeout (no packet conservation; STARTUP's growth check starts again). */
void tcp_bbr_on_loss_event(struct tcp_bbr *b, uint32_t cwnd, bool rto);
/* The bottleneck bandwidth estimate, octets per second. */
uint64_t tcp_bbr_bw(const struct tcp_bbr *b);
/* gain x bandwidth x min RTT (the initial window before any RTT sample). */
uint32_t tcp_bbr_bdp(const struct tcp_bbr *b, uint64_t bw, uint32_t gain);

#endif
