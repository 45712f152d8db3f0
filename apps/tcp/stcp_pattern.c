/* The deterministic pattern: octet off of stream id is octet (off % 8) (little-endian) of
 * splitmix64(id << 40 ^ off / 8). Keyed by stream and offset, so a lost, duplicated,
 * reordered or misplaced segment - even one shifted by a whole MSS or a power of two - does
 * not match; one 64-bit mix per 8 octets keeps it cheap enough for the benchmark. */
#include <endian.h>
#include <string.h>

#include "stcp.h"

static inline uint64_t mix(uint32_t id, uint64_t word)
{
	uint64_t z = ((uint64_t)id << 40) ^ word ^ 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void stcp_pattern_fill(uint32_t id, uint64_t off, uint8_t *buf, size_t len)
{
	size_t i = 0;
	/* leading octets up to an 8-octet boundary of the stream */
	while (i < len && ((off + i) & 7)) {
		buf[i] = (uint8_t)(mix(id, (off + i) >> 3) >> (((off + i) & 7) * 8));
		i++;
	}
	for (; i + 8 <= len; i += 8) {
		uint64_t w = htole64(mix(id, (off + i) >> 3));
		memcpy(buf + i, &w, 8);
	}
	for (; i < len; i++)
		buf[i] = (uint8_t)(mix(id, (off + i) >> 3) >> (((off + i) & 7) * 8));
}

size_t stcp_pattern_check(uint32_t id, uint64_t off, const uint8_t *buf, size_t len)
{
	size_t i = 0;
	while (i < len && ((off + i) & 7)) {
		if (buf[i] != (uint8_t)(mix(id, (off + i) >> 3) >> (((off + i) & 7) * 8)))
			return i;
		i++;
	}
	for (; i + 8 <= len; i += 8) {
		uint64_t w = htole64(mix(id, (off + i) >> 3));
		if (memcmp(buf + i, &w, 8) != 0)
			break;  /* the octet loop below finds which one */
	}
	for (; i < len; i++) {
		if (buf[i] != (uint8_t)(mix(id, (off + i) >> 3) >> (((off + i) & 7) * 8)))
			return i;
	}
	return len;
}
