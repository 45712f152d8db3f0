/* Code written in the style of each vipl.h VIA applications used (docs/vipl.md "One header for
 * three stacks"), compiled against ours with -Wpedantic -Werror. compat_pair.c is the shared
 * harness (two NICs of this process, a client / server connection); compat_intel.c,
 * compat_mvia.c and compat_clan.c use only their header's spellings, run one exchange and return
 * 0 when the data and the status words are right. */
#ifndef COMPAT_H
#define COMPAT_H

#include <vipl.h>

struct compat_side {
	VIP_NIC_HANDLE nic;
	VIP_NIC_ATTRIBUTES attr;
	VIP_PROTECTION_HANDLE ptag;
	VIP_VI_HANDLE vi;
	VIP_MEM_HANDLE mh;
	char *mem;                 /* 8 KiB registered: descriptors below 4096, data above */
};

struct compat_pair {
	struct compat_side s, c;   /* server, client */
};

/* Open both sides on devices sdev / cdev; VIs of level rel (remote Write enabled). */
int compat_open(struct compat_pair *p, const char *sdev, const char *cdev,
		VIP_RELIABILITY_LEVEL rel);
/* Client / server connect on discriminator disc; the server's address as the client names
 * it is server_addr (NULL: the server NIC's own). */
int compat_connect(struct compat_pair *p, const char *disc, const VIP_NET_ADDRESS *server_addr);
void compat_close(struct compat_pair *p);

int compat_intel_run(void);
int compat_mvia_run(void);
int compat_clan_run(void);

#endif
