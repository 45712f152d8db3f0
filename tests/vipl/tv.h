/* Shared fixture of the VIPL unit tests (one process): two NICs on loopback (softrnic0 and
 * softrnic1 at SOFTRNIC_VIPL_ADDR=127.0.0.1:<base>, so ports base and base+1), a registered
 * arena for descriptors and buffers, and a connect helper that runs the client side in a
 * thread. */
#ifndef TV_H
#define TV_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "vipl.h"

#define TV_ARENA (1u << 20)

struct tv {
	VIP_NIC_HANDLE nic[2];
	VIP_PROTECTION_HANDLE ptag[2];
	uint8_t *arena[2];
	VIP_MEM_HANDLE mh[2];
	size_t used[2];
	VIP_NIC_ATTRIBUTES attr[2];
};

/* An address buffer: header + 6 host octets + up to 64 discriminator octets. */
struct tv_addr {
	VIP_NET_ADDRESS a;
	uint8_t room[80];
};

/* SOFTRNIC_VIPL_ADDR for this process; TV_FILTER, when set, is cmocka's test filter. */
void tv_env(void);
void tv_open(struct tv *t);
void tv_close(struct tv *t);
void *tv_alloc(struct tv *t, int side, size_t n); /* 64-aligned, from the arena */
VIP_DESCRIPTOR *tv_desc(struct tv *t, int side, unsigned segs);
void tv_addr(struct tv *t, int side, const char *disc, struct tv_addr *out);
VIP_VI_HANDLE tv_vi(struct tv *t, int side, VIP_RELIABILITY_LEVEL rel, VIP_CQ_HANDLE scq,
		    VIP_CQ_HANDLE rcq);
/* Connect a (side 0, client) to b (side 1, server ConnectWait + Accept); both must succeed. */
void tv_connect(struct tv *t, VIP_VI_HANDLE a, VIP_VI_HANDLE b, const char *da, const char *db);
VIP_VI_STATE tv_state(VIP_VI_HANDLE vi); /* VipQueryVi must succeed */
uint64_t tv_ms(void);
void tv_nap(void); /* 1 ms, for bounded polling loops */

#endif
