/* soak_pattern: the bytes and lengths of the soak's operations, derived from keys so that the
 * receiver of a Send can tell what it should have got without being told. */
#include <stdio.h>
#include <string.h>

#include "soak.h"

/* splitmix64: a good 64-bit mix for counters */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t soak_rand(uint64_t *state)
{
	*state += 1;
	return mix(*state);
}

uint64_t soak_key(uint64_t seed, unsigned kind, unsigned qp, uint64_t seq)
{
	return mix(mix(seed ^ ((uint64_t)kind << 56) ^ ((uint64_t)qp << 48)) ^ seq);
}

uint32_t soak_len(uint64_t key)
{
	uint64_t x = mix(key ^ 0x1e57);
	unsigned bits = (unsigned)(x % 21);           /* 2^0 .. 2^20 */
	uint32_t len = (1u << bits) + (uint32_t)((x >> 8) % (1u << bits));
	return len > SOAK_MAX_LEN ? SOAK_MAX_LEN : len;
}

void soak_fill(uint8_t *p, uint32_t len, uint64_t key)
{
	uint32_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w = mix(key + i);
		memcpy(p + i, &w, 8);
	}
	if (i < len) {
		uint64_t w = mix(key + i);
		memcpy(p + i, &w, len - i);
	}
}

long soak_check(const uint8_t *p, uint32_t len, uint64_t key)
{
	for (uint32_t i = 0; i < len; i += 8) {
		uint64_t w = mix(key + i);
		uint32_t n = len - i < 8 ? len - i : 8;
		if (memcmp(p + i, &w, n)) {
			const uint8_t *e = (const uint8_t *)&w;
			for (uint32_t j = 0; j < n; j++)
				if (p[i + j] != e[j])
					return (long)(i + j);
		}
	}
	return -1;
}

void soak_send_fill(uint8_t *p, uint32_t len, uint64_t key, unsigned qp, uint32_t seq)
{
	soak_fill(p, len, key);
	if (len >= SOAK_HDR_LEN) {
		struct soak_hdr h = { SOAK_DATA_MAGIC, qp, seq, len };
		memcpy(p, &h, sizeof h);
	}
}

_Static_assert(SOAK_HDR_LEN % 8 == 0, "the header must end on a pattern word");

int soak_send_check(const uint8_t *p, uint32_t got, uint32_t want, uint64_t key, unsigned qp,
                    uint32_t seq)
{
	uint32_t skip = 0;
	if (got != want) {
		fprintf(stderr, "soak: FAIL: qp %u send %u: %u bytes, want %u\n", qp, seq, got, want);
		return -1;
	}
	if (want >= SOAK_HDR_LEN) {
		struct soak_hdr h;
		memcpy(&h, p, sizeof h);
		if (h.magic != SOAK_DATA_MAGIC || h.qp != qp || h.seq != seq || h.len != want) {
			fprintf(stderr, "soak: FAIL: qp %u send %u: header says magic 0x%x qp %u "
			        "seq %u len %u\n", qp, seq, h.magic, h.qp, h.seq, h.len);
			return -1;
		}
		skip = SOAK_HDR_LEN;
	}
	/* the pattern is positional and the header a whole number of words: the rest of the
	 * message is the pattern of key + skip */
	long bad = soak_check(p + skip, want - skip, key + skip);
	if (bad >= 0) {
		uint8_t e[8];
		uint32_t at = skip + (uint32_t)bad;
		soak_fill(e, 8, key + (at & ~7u));
		fprintf(stderr, "soak: FAIL: qp %u send %u (%u bytes): byte %u is 0x%02x, want 0x%02x\n",
		        qp, seq, want, at, p[at], e[at & 7u]);
		return -1;
	}
	return 0;
}
