/* SYN cookie arithmetic (tcp_syncookie.h): keyed SipHash-2-4 (libsodium crypto_shorthash),
 * one key per 64-second slot derived from the stack's secret. */
#include "tcp_syncookie.h"

#include <sodium.h>
#include <string.h>

enum { DOMAIN_COOKIE_KEY = 3, DOMAIN_COOKIE_MAC = 4 };

enum {
	SLOT_SHIFT = 30,
	MSS_SHIFT = 27,
	MAC_MASK = (1u << MSS_SHIFT) - 1,
	TS_BITS = 6,
	TS_WS_NONE = 0xf,
	TS_SACK = 1u << 4,
};

/* MSS values seen most (Ethernet with and without options or tunnels, IPv6-sized, jumbo):
 * a peer is told it gets the largest entry not above what it offered. */
static const uint16_t mss_table[8] = { 536, 1220, 1300, 1380, 1440, 1460, 4036, 8960 };

void tcp_syncookie_init(struct tcp_syncookie *k, const uint8_t secret[16])
{
	memcpy(k->secret, secret, sizeof(k->secret));
	k->slot[0] = k->slot[1] = UINT64_MAX;
}

static void derive_key(const uint8_t secret[16], uint64_t slot, uint8_t key[16])
{
	uint8_t in[1 + 8 + 1];

	in[0] = DOMAIN_COOKIE_KEY;
	memcpy(in + 1, &slot, 8);
	for (uint8_t half = 0; half < 2; half++) {
		in[9] = half;
		crypto_shorthash(key + 8 * half, in, sizeof(in), secret);
	}
}

/* The key of slot: one of the two cached, or derived into the entry of the older one. */
static const uint8_t *slot_key(struct tcp_syncookie *k, uint64_t slot)
{
	unsigned i;

	for (i = 0; i < 2; i++)
		if (k->slot[i] == slot)
			return k->key[i];
	i = (k->slot[0] == UINT64_MAX || (k->slot[1] != UINT64_MAX && k->slot[0] < k->slot[1]))
		    ? 0 : 1;
	derive_key(k->secret, slot, k->key[i]);
	k->slot[i] = slot;
	return k->key[i];
}

static uint32_t mac(struct tcp_syncookie *k, const struct tcp_cookie_tuple *t, uint64_t slot,
		    unsigned mss_idx)
{
	uint8_t in[1 + 4 + 2 + 4 + 2 + 4 + 1], out[crypto_shorthash_BYTES];
	uint32_t v;

	in[0] = DOMAIN_COOKIE_MAC;
	memcpy(in + 1, &t->laddr, 4);
	memcpy(in + 5, &t->lport, 2);
	memcpy(in + 7, &t->raddr, 4);
	memcpy(in + 11, &t->rport, 2);
	memcpy(in + 13, &t->peer_isn, 4);
	in[17] = (uint8_t)mss_idx;
	crypto_shorthash(out, in, sizeof(in), slot_key(k, slot));
	memcpy(&v, out, sizeof(v));
	return v & MAC_MASK;
}

static unsigned mss_index(uint16_t peer_mss)
{
	unsigned i = 7;

	while (i > 0 && mss_table[i] > peer_mss)
		i--;
	return i;
}

uint16_t tcp_syncookie_mss(uint16_t peer_mss)
{
	return mss_table[mss_index(peer_mss)];
}

uint32_t tcp_syncookie_make(struct tcp_syncookie *k, const struct tcp_cookie_tuple *t,
			    uint16_t peer_mss, uint64_t now_s)
{
	uint64_t slot = now_s / TCP_COOKIE_SLOT_S;
	unsigned idx = mss_index(peer_mss);

	return (uint32_t)(slot & 3) << SLOT_SHIFT | (uint32_t)idx << MSS_SHIFT |
	       mac(k, t, slot, idx);
}

bool tcp_syncookie_check(struct tcp_syncookie *k, const struct tcp_cookie_tuple *t,
			 uint32_t cookie, uint64_t now_s, uint16_t *peer_mss)
{
	uint64_t now_slot = now_s / TCP_COOKIE_SLOT_S;
	unsigned idx = (cookie >> MSS_SHIFT) & 7;
	uint64_t slot;

	/* the slot whose low bits the cookie carries: this one or the one before */
	if ((now_slot & 3) == cookie >> SLOT_SHIFT)
		slot = now_slot;
	else if (now_slot > 0 && ((now_slot - 1) & 3) == cookie >> SLOT_SHIFT)
		slot = now_slot - 1;
	else
		return false;
	if (mac(k, t, slot, idx) != (cookie & MAC_MASK))
		return false;
	*peer_mss = mss_table[idx];
	return true;
}

uint32_t tcp_syncookie_ts_encode(uint32_t now_ms, const struct tcp_cookie_opts *o)
{
	uint32_t bits = o->ws_ok ? o->wscale : TS_WS_NONE;
	uint32_t ts;

	if (o->sack_ok)
		bits |= TS_SACK;
	ts = (now_ms & ~((1u << TS_BITS) - 1)) | bits;
	if ((int32_t)(ts - now_ms) > 0)
		ts -= 1u << TS_BITS;
	return ts;
}

void tcp_syncookie_ts_decode(uint32_t ts_ecr, struct tcp_cookie_opts *o)
{
	uint32_t ws = ts_ecr & 0xf;

	o->ws_ok = ws != TS_WS_NONE;
	o->wscale = o->ws_ok ? (uint8_t)ws : 0;
	o->sack_ok = (ts_ecr & TS_SACK) != 0;
}
