/* Which attached objects complete into which CQ (rn_device_feed.c): a consumer's poll of a
 * CQ runs the work of the objects feeding it (rn_device_cq_progress) without walking every
 * attachment of the device, so an empty poll costs the same with 10,000 QPs open as with
 * one. A pointer-keyed hash of CQs, each with the array of its feeders; a feeder keeps its
 * index in that array (pos) so that leaving is O(1). Under dev->lock. */
#ifndef RN_DEVICE_FEED_H
#define RN_DEVICE_FEED_H

#include <stdatomic.h>

struct rn_feed_member {
	void *item;
	atomic_uint *pos; /* where the item keeps its index in the array (read without the
	                   * lock as a hint: rn_device_qp_posted) */
};

struct rn_feed {
	const void *cq;  /* NULL: never used; rn_feed_tomb: emptied */
	struct rn_feed_member *v;
	unsigned n, cap;
	unsigned turn;   /* where the next take starts: every feeder gets its turn */
};

struct rn_feed_tab {
	struct rn_feed *slot;
	unsigned cap;    /* a power of two, or 0 */
	unsigned used;   /* slots not NULL (live and emptied) */
};

/* item joins cq's feeders; 0 or -ENOMEM. */
int rn_feed_add(struct rn_feed_tab *t, const void *cq, void *item, atomic_uint *pos);
/* The item at *pos leaves cq's feeders. */
void rn_feed_del(struct rn_feed_tab *t, const void *cq, unsigned pos);
/* Up to max of cq's feeders into out: first the one at index hint - 1 (hint 0: none; an
 * index past the end is ignored, a stale one names another feeder), then the others from
 * where the last take ended; their number. */
unsigned rn_feed_take(struct rn_feed_tab *t, const void *cq, unsigned hint, void **out,
		      unsigned max);
void rn_feed_free(struct rn_feed_tab *t);

#endif
