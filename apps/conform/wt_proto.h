/* What the wire target (iwarp-conform --wire-target, wt_target.c) tells each peer in the
 * private data of its MPA Reply: where its regions are and how its QP is set up, so that a
 * raw peer can aim at every edge of them. All fields are big-endian. The scripted peers
 * (apps/conform/wire/iwcheck.py) decode the same layout. */
#ifndef WT_PROTO_H
#define WT_PROTO_H

#include <stdint.h>

#define WT_MAGIC 0x41445631u  /* "ADV1" */
#define WT_REGION_LEN 4096u
#define WT_RECV_COUNT 4u      /* receives posted per connection, each WT_RECV_LEN */
#define WT_RECV_LEN 256u
#define WT_IRD 4u             /* Read Requests the target takes at once */

struct wt_region {
	uint64_t addr;
	uint32_t stag;
	uint32_t len;
};

/* The regions, by what a remote peer may do to them. */
enum wt_region_id {
	WT_W,      /* remote write and read */
	WT_R,      /* remote read only: its content must never change */
	WT_L,      /* local access only: its STag is told, no peer may use it */
	WT_F,      /* remote write and read, but registered in another PD */
	WT_NREGIONS,
};

struct wt_info {
	uint32_t magic;
	uint32_t stale_stag;    /* an STag that was deregistered before the Reply */
	uint32_t recv_count;
	uint32_t recv_len;
	uint32_t ird;
	uint32_t reserved;
	struct wt_region region[WT_NREGIONS];
};

#endif
