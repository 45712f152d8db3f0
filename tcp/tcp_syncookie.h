/* SYN cookies (RFC 4987 3.6): the initial sequence number of a SYN-ACK sent without a
 * connection carries what the listener needs to open one when the ACK comes back.
 *
 * ISS layout (32 bits):  [31:30] time slot (low 2 bits of now_s / 64)
 *                        [29:27] index of the peer's MSS in a table of 8
 *                        [26:0]  27 bits of SipHash-2-4 over the 4-tuple, the peer's ISN and
 *                                the MSS index, keyed with the slot's own key
 * Each 64-second slot has its own key, derived from the stack's secret and the slot number,
 * so the key rotates every slot and one seen in use tells nothing about the next. A cookie is
 * good in its own slot and the next one (64 to 128 s).
 *
 * What does not fit the sequence number rides in the low 6 bits of the SYN-ACK's TSval,
 * which the peer echoes in TSecr: the peer's window scale (4 bits, 15 = none) and SACK
 * permitted (1 bit). Without timestamps both are lost (docs/tcp.md). Pure functions. */
#ifndef TCP_SYNCOOKIE_H
#define TCP_SYNCOOKIE_H

#include <stdbool.h>
#include <stdint.h>

#define TCP_COOKIE_SLOT_S 64u
#define TCP_COOKIE_LIFE_S (2u * TCP_COOKIE_SLOT_S) /* longest a cookie can still be good */

struct tcp_syncookie {
	uint8_t secret[16];
	uint64_t slot[2];   /* the two slot keys last derived (UINT64_MAX: none) */
	uint8_t key[2][16];
};

/* The 4-tuple in network order (as on the wire) and the peer's ISN. */
struct tcp_cookie_tuple {
	uint32_t laddr, raddr;
	uint16_t lport, rport;
	uint32_t peer_isn;
};

/* secret: 16 octets (the stack's RFC 6528 key; a domain octet keeps the uses apart). */
void tcp_syncookie_init(struct tcp_syncookie *k, const uint8_t secret[16]);
/* The ISS for a SYN from t whose MSS option said peer_mss (536 without one), at now_s. */
uint32_t tcp_syncookie_make(struct tcp_syncookie *k, const struct tcp_cookie_tuple *t,
			    uint16_t peer_mss, uint64_t now_s);
/* cookie: the ACK's acknowledgment number minus 1; t->peer_isn its sequence number minus 1.
 * True when the cookie is one of ours, of this slot or the one before; *peer_mss then holds
 * the MSS it encodes (the table's entry at or below the peer's). */
bool tcp_syncookie_check(struct tcp_syncookie *k, const struct tcp_cookie_tuple *t,
			 uint32_t cookie, uint64_t now_s, uint16_t *peer_mss);
/* The MSS a cookie encodes for peer_mss: the largest table entry not above it. */
uint16_t tcp_syncookie_mss(uint16_t peer_mss);

/* The SYN options kept in TSval. */
struct tcp_cookie_opts {
	bool ws_ok;      /* the peer offered window scaling */
	uint8_t wscale;  /* its shift (0..14) */
	bool sack_ok;
};
/* A TSval for the SYN-ACK at now_ms carrying o; never above now_ms (the TSvals that follow
 * must not go back). */
uint32_t tcp_syncookie_ts_encode(uint32_t now_ms, const struct tcp_cookie_opts *o);
/* The options from an echoed TSecr. */
void tcp_syncookie_ts_decode(uint32_t ts_ecr, struct tcp_cookie_opts *o);

#endif
