/* TCP options (RFC 9293 3.2, RFC 7323, RFC 2018): parsing that never trusts a length, and
 * building in the layouts Linux uses (NOP padding to 32-bit alignment). Pure functions. */
#ifndef TCP_OPT_H
#define TCP_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TCP_OPT_MAX_LEN 40u    /* data offset 15 minus the 20-octet header */
#define TCP_SACK_MAX_BLOCKS 4u /* 4 without timestamps, 3 with them fit 40 octets */

struct tcp_sack_block {
	uint32_t start, end; /* [start, end) */
};

struct tcp_opts {
	bool has_mss, has_wscale, sack_ok, has_ts;
	uint16_t mss;
	uint8_t wscale;      /* as received; the caller clamps to 14 (RFC 7323 2.3) */
	uint32_t ts_val, ts_ecr;
	uint8_t nsack;       /* SACK blocks present */
	struct tcp_sack_block sack[TCP_SACK_MAX_BLOCKS];
};

/* Parse the options area (len octets, 0..40). Unknown options are skipped by their length.
 * -EINVAL for a malformed area: a length below 2, running past the end, or a known option with
 * the wrong length (RFC 9293 3.1: such a segment is dropped... the caller decides); *o holds
 * what parsed before the fault. 0 otherwise. syn tells whether SYN-only options (MSS,
 * window scale, SACK-permitted) count; on other segments they are ignored. */
int tcp_opt_parse(const uint8_t *p, size_t len, bool syn, struct tcp_opts *o);

/* What to put in an outgoing segment. */
struct tcp_opt_out {
	bool mss, wscale, sack_ok, ts; /* the first three on SYN / SYN-ACK only */
	uint16_t mss_val;
	uint8_t wscale_val;
	uint32_t ts_val, ts_ecr;
	uint8_t nsack;                 /* SACK blocks to add (as many as fit) */
	const struct tcp_sack_block *sack;
};
/* Write the options into out (room for 40 octets). Returns the octets written, a multiple
 * of 4. Layout as Linux: MSS, SACK-permitted + timestamps as NOP NOP / combined, window scale
 * NOP + 3; SACK blocks NOP NOP + 2 + 8n. */
size_t tcp_opt_build(const struct tcp_opt_out *in, uint8_t out[TCP_OPT_MAX_LEN]);
/* Octets tcp_opt_build would write. */
size_t tcp_opt_len(const struct tcp_opt_out *in);

#endif
