/* Helpers the MPA tests share (header-only, static; include after <cmocka.h>): the MPA frame
 * keys as hex, hex to octets, and the xorshift generator of the randomised cases. */
#ifndef MPA_TEST_UTIL_H
#define MPA_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* "MPA ID Req Frame" and "MPA ID Rep Frame" (RFC 5044 §7.1) as hex, the start of every
 * Request / Reply payload of the /work/shared/traces captures. */
#define KEYREQ "4d504120494420526571204672616d65"
#define KEYREP "4d504120494420526570204672616d65"

/* The octets of hex into out (at most cap of them); returns how many. */
static inline size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = strlen(hex) / 2;
	assert_true(n <= cap);
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

/* One xorshift64 step of *state; the upper 32 bits. */
static inline uint32_t mpa_xorshift(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (uint32_t)(*state >> 32);
}

#endif
