/* What adv_target tells each peer in the private data of its MPA Reply: where its regions
 * are and how its QP is set up, so that a raw peer can aim at every edge of them. All fields
 * are big-endian. tests/adversary/hostile.py decodes the same layout. */
#ifndef ADV_PROTO_H
#define ADV_PROTO_H

#include <stdint.h>

#define ADV_MAGIC 0x41445631u  /* "ADV1" */
#define ADV_REGION_LEN 4096u
#define ADV_RECV_COUNT 4u      /* receives posted per connection, each ADV_RECV_LEN */
#define ADV_RECV_LEN 256u
#define ADV_IRD 4u             /* Read Requests the target takes at once */

struct adv_region {
	uint64_t addr;
	uint32_t stag;
	uint32_t len;
};

/* The regions, by what a remote peer may do to them. */
enum adv_region_id {
	ADV_W,      /* remote write and read */
	ADV_R,      /* remote read only: its content must never change */
	ADV_L,      /* local access only: its STag is told, no peer may use it */
	ADV_F,      /* remote write and read, but registered in another PD */
	ADV_NREGIONS,
};

struct adv_info {
	uint32_t magic;
	uint32_t stale_stag;    /* an STag that was deregistered before the Reply */
	uint32_t recv_count;
	uint32_t recv_len;
	uint32_t ird;
	uint32_t reserved;
	struct adv_region region[ADV_NREGIONS];
};

#endif
