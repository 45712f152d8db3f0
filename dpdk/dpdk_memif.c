/* dpdk_memif: memif --vdev arguments read and completed (dpdk_memif.h says why). */
#include "dpdk_memif.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ETH_HDR_OCTETS 14u
#define BSIZE_ROUND 128u

unsigned dpdk_memif_frame(unsigned mtu)
{
	return mtu + ETH_HDR_OCTETS;
}

bool dpdk_memif_is_vdev(const char *vdev)
{
	return strncmp(vdev, "net_memif", 9) == 0 || strncmp(vdev, "eth_memif", 9) == 0;
}

/* The value of key in a "k=v,k=v" list: its start, and its length in *len; NULL if absent. */
static const char *devarg(const char *args, const char *key, size_t *len)
{
	size_t kl = strlen(key);

	for (const char *p = args; p != NULL && *p != '\0';) {
		const char *end = strchr(p, ',');
		size_t n = end != NULL ? (size_t)(end - p) : strlen(p);

		if (n > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
			*len = n - kl - 1;
			return p + kl + 1;
		}
		p = end != NULL ? end + 1 : NULL;
	}
	return NULL;
}

unsigned dpdk_memif_bsize(const char *args)
{
	char num[16], *end;
	size_t n = 0;
	const char *v = devarg(args, "bsize", &n);
	unsigned long x;

	if (v == NULL)
		return DPDK_MEMIF_BSIZE_DEFAULT;
	if (n == 0 || n >= sizeof(num))
		return 0;
	memcpy(num, v, n);
	num[n] = '\0';
	x = strtoul(num, &end, 0);
	return *end != '\0' || x == 0 || x > DPDK_MEMIF_BSIZE_MAX ? 0 : (unsigned)x;
}

bool dpdk_memif_is_client(const char *args)
{
	size_t n = 0;
	const char *v = devarg(args, "role", &n);

	return v != NULL && ((n == 6 && strncmp(v, "client", 6) == 0) ||
			     (n == 5 && strncmp(v, "slave", 5) == 0));
}

size_t dpdk_memif_socket(const char *args, char *out, size_t outlen)
{
	size_t n = 0;
	const char *v = devarg(args, "socket", &n);

	if (v == NULL) {
		v = DPDK_MEMIF_SOCKET_DEFAULT;
		n = strlen(v);
	}
	if (n >= outlen)
		return 0;
	memcpy(out, v, n);
	out[n] = '\0';
	return n;
}

int dpdk_memif_fit(const char *vdev, unsigned mtu, char *out, size_t outlen)
{
	const char *args = strchr(vdev, ',');
	size_t n = 0;
	unsigned frame = dpdk_memif_frame(mtu), bsize;
	int w;

	if (!dpdk_memif_is_vdev(vdev) || frame <= DPDK_MEMIF_BSIZE_DEFAULT ||
	    (args != NULL && devarg(args + 1, "bsize", &n) != NULL))
		return 0;
	bsize = (frame + BSIZE_ROUND - 1) / BSIZE_ROUND * BSIZE_ROUND;
	if (bsize > DPDK_MEMIF_BSIZE_MAX)
		return -E2BIG;
	w = snprintf(out, outlen, "%s,bsize=%u", vdev, bsize);
	return w < 0 || (size_t)w >= outlen ? -E2BIG : 1;
}
