/* VIP_NET_ADDRESS handling (docs/vipl.md): the 6-octet host address is an IPv4 address
 * and the NIC's TCP port, network order; the local one comes from SOFTRNIC_VIPL_ADDR=ip[:port],
 * else the NIC's own address: the DPDK port's IPv4 address when librdmacm carries connections
 * over softrnic's DPDK transport (softrnic_transport_selected), otherwise the first non-loopback IPv4
 * address of the kernel's interfaces; port 7447 + unit, or any free port when another process
 * has that one (vipl_rdv.c). */
#include "softrnic_conf.h"
#include "vipl_int.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <softrnic/verbs_ext.h>

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

/* The DPDK port's IPv4 address. The port is opened here (EAL start on first use) so that a
 * configuration DPDK cannot run fails VipOpenNic with the transport's message (said once on
 * stderr) instead of every later connect. -1 when DPDK cannot run. */
static int dpdk_ipv4(struct in_addr *out)
{
	uint32_t ip;

	if (softrnic_transport_ipv4(&ip) != 0 || ip == htonl(INADDR_ANY))
		return -1;
	out->s_addr = ip;
	return 0;
}

static bool on_dpdk(void)
{
	return softrnic_transport_selected() == SOFTRNIC_TRANSPORT_DPDK;
}

/* The NIC's own IPv4 address when none is configured. */
static int default_ipv4(struct in_addr *out)
{
	return on_dpdk() ? dpdk_ipv4(out) : first_ipv4(out);
}

/* Over DPDK only the port's address can carry connections: SOFTRNIC_VIPL_ADDR naming another
 * one is a configuration error, said at VipOpenNic (the wildcard means the port's address). */
static int check_configured(struct in_addr *a)
{
	struct in_addr port;
	char want[INET_ADDRSTRLEN], got[INET_ADDRSTRLEN];
	if (!on_dpdk())
		return 0;
	if (dpdk_ipv4(&port) != 0)
		return -1;
	if (a->s_addr == htonl(INADDR_ANY))
		*a = port;
	if (a->s_addr == port.s_addr)
		return 0;
	inet_ntop(AF_INET, a, got, sizeof(got));
	inet_ntop(AF_INET, &port, want, sizeof(want));
	fprintf(stderr, "softrnic VIPL: SOFTRNIC_VIPL_ADDR %s is not the DPDK port's address %s "
		"(SOFTRNIC_DPDK_IP): leave the IP out or use %s\n", got, want, want);
	return -1;
}

/* ip[:port] from SOFTRNIC_VIPL_ADDR; the port (default 7447) is the host's well-known VIPL
 * port, and unit N's own port is that plus N. Listeners bind the wildcard IP on kernel sockets
 * when no IP is configured, so this host's every address reaches them (its name may resolve to
 * another address than the NIC's, e.g. Debian's 127.0.1.1). */
int vipl_addr_local(const struct vipl_devname *dev, struct sockaddr_in *sin,
		    struct sockaddr_in *bind, uint16_t *rdv_port)
{
	const char *env = softrnic_conf_get("SOFTRNIC_VIPL_ADDR", NULL, 0);
	char buf[64];
	unsigned long base = VIPL_DEFAULT_PORT;
	int rc;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	if (env != NULL && strlen(env) >= sizeof(buf))
		return -1;
	strcpy(buf, env != NULL ? env : "");
	char *colon = strchr(buf, ':');
	if (colon != NULL) {
		char *end;
		*colon = '\0';
		base = strtoul(colon + 1, &end, 10);
		if (*end != '\0' || base == 0 || base + (unsigned)dev->unit > 65535)
			return -1;
	}
	sin->sin_port = htons((uint16_t)(base + (unsigned)dev->unit));
	*rdv_port = htons((uint16_t)base);
	*bind = *sin;
	if (dev->loopback && !on_dpdk()) { /* M-VIA's via_lo: this host only, whatever the IP */
		sin->sin_addr.s_addr = bind->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return 0;
	}
	if (buf[0] == '\0') {
		rc = default_ipv4(&sin->sin_addr);
		if (on_dpdk())
			bind->sin_addr = sin->sin_addr;
		else
			bind->sin_addr.s_addr = htonl(INADDR_ANY);
		return rc;
	}
	if (inet_pton(AF_INET, buf, &sin->sin_addr) != 1)
		return -1;
	rc = check_configured(&sin->sin_addr);
	bind->sin_addr = sin->sin_addr;
	return rc;
}

/* The name service's rule for the DPDK transport (docs/vipl.md): this host's own name
 * (gethostname, or its first label) stands for the NIC, whose address the kernel's resolver
 * does not know. False on kernel sockets: the resolver answers there. */
bool vipl_addr_own_name(const char *name)
{
	char host[256];
	if (!on_dpdk() || name == NULL || gethostname(host, sizeof(host)) != 0)
		return false;
	host[sizeof(host) - 1] = '\0';
	if (strcasecmp(name, host) == 0)
		return true;
	size_t n = strcspn(host, ".");
	return host[n] == '.' && strlen(name) == n && strncasecmp(name, host, n) == 0;
}

/* ip (network order) is this host's: the NIC's own, a loopback address, or one of the kernel's
 * interfaces (kernel sockets). Names resolve to any of them (D240). */
bool vipl_addr_is_local(const struct vipl_nic *nic, const uint8_t *ip)
{
	struct in_addr a;
	struct ifaddrs *ifa = NULL;
	bool local = false;
	memcpy(&a, ip, 4);
	if (memcmp(ip, nic->addr, 4) == 0)
		return true;
	if (on_dpdk())
		return false;
	if ((ntohl(a.s_addr) >> 24) == 127)
		return true;
	if (getifaddrs(&ifa) != 0)
		return false;
	for (struct ifaddrs *i = ifa; i != NULL && !local; i = i->ifa_next)
		local = i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET &&
			((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr == a.s_addr;
	freeifaddrs(ifa);
	return local;
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
