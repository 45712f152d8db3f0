/* VIP_NET_ADDRESS handling (docs/vipl.md V2): the 6-octet host address is an IPv4 address and
 * the NIC's TCP port, network order; the local one comes from SOFTRNIC_VIPL_ADDR=ip[:port] or
 * the first non-loopback IPv4 address, port 7447 + unit. */
#include "vipl_int.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#define VIPL_DEFAULT_PORT 7447

static int first_ipv4(struct in_addr *out)
{
	struct ifaddrs *ifa = NULL, *i;
	out->s_addr = htonl(INADDR_LOOPBACK);
	if (getifaddrs(&ifa) != 0)
		return 0;
	for (i = ifa; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
		    (i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP))
			continue;
		*out = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
		break;
	}
	freeifaddrs(ifa);
	return 0;
}

/* ip[:port] from the environment; unit is added to the default port only. */
int vipl_addr_local(unsigned unit, struct sockaddr_in *sin)
{
	const char *env = getenv("SOFTRNIC_VIPL_ADDR");
	char buf[64];

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)(VIPL_DEFAULT_PORT + unit));
	if (env == NULL || *env == '\0')
		return first_ipv4(&sin->sin_addr);
	if (strlen(env) >= sizeof(buf))
		return -1;
	strcpy(buf, env);
	char *colon = strchr(buf, ':');
	if (colon != NULL) {
		char *end;
		*colon = '\0';
		unsigned long p = strtoul(colon + 1, &end, 10);
		if (*end != '\0' || p == 0 || p > 65535)
			return -1;
		sin->sin_port = htons((uint16_t)(p + unit));
	}
	if (buf[0] == '\0')
		return first_ipv4(&sin->sin_addr);
	return inet_pton(AF_INET, buf, &sin->sin_addr) == 1 ? 0 : -1;
}

/* A caller's address: host part of our length (or none, when !need_host), discriminator of at
 * most 64 octets. */
int vipl_addr_check(const VIP_NET_ADDRESS *a, bool need_host)
{
	if (a == NULL || a->DiscriminatorLen > VIPL_MAX_DISC)
		return -1;
	if (need_host && a->HostAddressLen != VIPL_ADDR_LEN)
		return -1;
	if (!need_host && a->HostAddressLen != 0 && a->HostAddressLen != VIPL_ADDR_LEN)
		return -1;
	return 0;
}

void vipl_addr_sin(const uint8_t *host, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	memcpy(&sin->sin_addr, host, 4);
	memcpy(&sin->sin_port, host + 4, 2);
}

/* Byte-wise, then shorter first: the order the peer-to-peer tie-break uses. */
int vipl_disc_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	size_t n = al < bl ? al : bl;
	int c = n ? memcmp(a, b, n) : 0;
	if (c != 0)
		return c;
	return al < bl ? -1 : al > bl ? 1 : 0;
}
