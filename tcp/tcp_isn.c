/* RFC 6528 initial sequence numbers and the RFC 6056 algorithm 3 port offset, both keyed
 * SipHash-2-4 (libsodium crypto_shorthash, 64-bit output truncated to 32). A leading domain
 * octet keeps the two uses of one key apart. */
#include "tcp_isn.h"

#include <sodium.h>
#include <stdbool.h>
#include <string.h>
#include <sys/random.h>

enum { DOMAIN_ISN = 1, DOMAIN_PORT = 2 };

static bool all_zero(const uint8_t key[16])
{
	uint8_t acc = 0;
	for (unsigned i = 0; i < 16; i++)
		acc |= key[i];
	return acc == 0;
}

static void random_key(uint8_t key[16])
{
	/* getrandom blocks only before the pool is initialised at boot; a short read or an
	 * error falls back to libsodium's generator (which has its own sources). */
	if (getrandom(key, 16, 0) == 16 && !all_zero(key))
		return;
	if (sodium_init() < 0) {
		/* Cannot happen on Linux with getrandom(2); keep a non-constant key anyway. */
		for (unsigned i = 0; i < 16; i++)
			key[i] ^= (uint8_t)(uintptr_t)&key[i];
		return;
	}
	randombytes_buf(key, 16);
}

void tcp_isn_init(struct tcp_isn *g, const uint8_t key[16])
{
	if (key && !all_zero(key))
		memcpy(g->key, key, sizeof(g->key));
	else
		random_key(g->key);
}

static uint32_t hash32(const struct tcp_isn *g, const uint8_t *in, size_t len)
{
	uint8_t out[crypto_shorthash_BYTES];
	crypto_shorthash(out, in, len, g->key);
	uint32_t v;
	memcpy(&v, out, sizeof(v));
	return v;
}

uint32_t tcp_isn_next(const struct tcp_isn *g, uint32_t laddr, uint16_t lport, uint32_t raddr,
		      uint16_t rport, uint64_t now_ns)
{
	uint8_t in[1 + 4 + 2 + 4 + 2];
	in[0] = DOMAIN_ISN;
	memcpy(in + 1, &laddr, 4);
	memcpy(in + 5, &lport, 2);
	memcpy(in + 7, &raddr, 4);
	memcpy(in + 11, &rport, 2);
	/* M: a timer ticking every 4 microseconds (RFC 6528 section 3, as RFC 793 had it). */
	uint32_t m = (uint32_t)(now_ns / 4000u);
	return m + hash32(g, in, sizeof(in));
}

uint32_t tcp_isn_port_offset(const struct tcp_isn *g, uint32_t laddr, uint32_t raddr,
			     uint16_t rport)
{
	uint8_t in[1 + 4 + 4 + 2];
	in[0] = DOMAIN_PORT;
	memcpy(in + 1, &laddr, 4);
	memcpy(in + 5, &raddr, 4);
	memcpy(in + 9, &rport, 2);
	return hash32(g, in, sizeof(in));
}
