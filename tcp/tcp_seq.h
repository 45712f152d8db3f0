/* Sequence-number arithmetic modulo 2^32 (RFC 9293 3.4): comparisons are by the sign of the
 * 32-bit difference, so they hold across wraparound for distances below 2^31. */
#ifndef TCP_SEQ_H
#define TCP_SEQ_H

#include <stdbool.h>
#include <stdint.h>

static inline bool seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline bool seq_leq(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }
static inline bool seq_gt(uint32_t a, uint32_t b) { return (int32_t)(a - b) > 0; }
static inline bool seq_geq(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0; }
/* lo <= s < hi */
static inline bool seq_in(uint32_t s, uint32_t lo, uint32_t hi)
{
	return seq_geq(s, lo) && seq_lt(s, hi);
}
static inline uint32_t seq_max(uint32_t a, uint32_t b) { return seq_gt(a, b) ? a : b; }
static inline uint32_t seq_min(uint32_t a, uint32_t b) { return seq_lt(a, b) ? a : b; }

#endif
