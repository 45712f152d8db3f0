/* SACK (RFC 2018) on both sides.
 * Receiver: the out-of-order ranges held, reported most recent first (2018 section 4).
 * Sender: the scoreboard of RFC 6675 - which ranges the peer holds, IsLost, the pipe estimate
 * and NextSeg - over sequence numbers only (the engine keeps the data). Fixed capacity, no
 * allocation. */
#ifndef TCP_SACK_H
#define TCP_SACK_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp_opt.h"

#define TCP_SACK_RCV_MAX 16u  /* out-of-order ranges the receiver tracks */
#define TCP_SACK_SND_MAX 32u  /* SACKed ranges the sender's scoreboard tracks */

/* ---- receiver ---- */
struct tcp_sack_rcv {
	uint8_t n;
	struct tcp_sack_block blk[TCP_SACK_RCV_MAX]; /* blk[0] = most recently changed */
};
void tcp_sack_rcv_init(struct tcp_sack_rcv *r);
/* An out-of-order segment [start, end) arrived (merges, moves the range to the front). */
void tcp_sack_rcv_add(struct tcp_sack_rcv *r, uint32_t start, uint32_t end);
/* Whether [start, end) would join the most recently changed range (blk[0]). */
bool tcp_sack_rcv_joins_front(const struct tcp_sack_rcv *r, uint32_t start, uint32_t end);
/* rcv_nxt advanced: drop ranges now below it. */
void tcp_sack_rcv_advance(struct tcp_sack_rcv *r, uint32_t rcv_nxt);
/* Up to max blocks for the next ACK, most recent first. Returns the count. */
unsigned tcp_sack_rcv_blocks(const struct tcp_sack_rcv *r, struct tcp_sack_block *out,
			     unsigned max);

/* ---- sender scoreboard (RFC 6675) ---- */
struct tcp_sack_snd {
	uint8_t n;
	struct tcp_sack_block blk[TCP_SACK_SND_MAX]; /* sorted, disjoint, all above snd_una */
	uint32_t high_rxt;      /* HighRxt */
	uint32_t rescue_rxt;    /* RescueRxt */
	uint32_t dupthresh;     /* DupThresh, 3 */
};
void tcp_sack_snd_init(struct tcp_sack_snd *s);
/* Blocks from an incoming ACK, validated against [snd_una, snd_max) (bad ones ignored, RFC
 * 2018 and 6675 D-SACK-safe). Returns the number of newly SACKed octets. */
uint32_t tcp_sack_snd_update(struct tcp_sack_snd *s, uint32_t snd_una, uint32_t snd_max,
			     const struct tcp_sack_block *blk, unsigned n);
/* snd_una advanced: drop what is below it. */
void tcp_sack_snd_advance(struct tcp_sack_snd *s, uint32_t snd_una);
bool tcp_sack_snd_is_sacked(const struct tcp_sack_snd *s, uint32_t seq);
/* IsLost(seq) of 6675 section 4, with smss. */
bool tcp_sack_snd_is_lost(const struct tcp_sack_snd *s, uint32_t seq, uint32_t smss);
/* SetPipe (section 4): octets in flight given snd_una, snd_max. */
uint32_t tcp_sack_snd_pipe(const struct tcp_sack_snd *s, uint32_t snd_una, uint32_t snd_max,
			   uint32_t smss);
/* NextSeg (section 4) rules 1 and 3 (rule 2, new data, is the engine's): true with *seq and
 * *len (<= smss, stopping at the next SACKed octet) of what to retransmit. */
bool tcp_sack_snd_next_seg(const struct tcp_sack_snd *s, uint32_t snd_una, uint32_t snd_max,
			   uint32_t smss, uint32_t *seq, uint32_t *len);
/* Octets above snd_una the peer has SACKed (for loss detection: > (dupthresh-1)*smss). */
uint32_t tcp_sack_snd_sacked_bytes(const struct tcp_sack_snd *s);
/* Forget everything (after an RTO the scoreboard is only advisory, 6675 section 5.1). */
void tcp_sack_snd_clear(struct tcp_sack_snd *s);

#endif
