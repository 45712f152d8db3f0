/* Name service (VIPL 1.0 [EXT]): host names to the 6-octet host address and back, with the
 * system resolver. VipNSInit is optional (the other calls work without it, as legacy code
 * assumes). GetHostByName writes only HostAddressLen and the host octets: callers may have set
 * DiscriminatorLen before the call. "name:port" gives a port; otherwise the host's well-known
 * VIPL port (7447 or SOFTRNIC_VIPL_ADDR's, the same on every host of a cluster), where every VIA
 * process of that host is found by discriminator (vipl_rdv.c). Over the DPDK transport this host's own
 * name is the DPDK port's address, which the resolver does not know. */
#include "vipl_int.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

VIPL_EXPORT VIP_RETURN VipNSInit(VIP_NIC_HANDLE NicHandle, VIP_PVOID NSInitInfo)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	(void)NSInitInfo;
	if (nic == NULL)
		return VIP_INVALID_PARAMETER;
	pthread_mutex_lock(&nic->lock);
	nic->ns_init = true;
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&nic->o);
	return VIP_SUCCESS;
}

VIPL_EXPORT VIP_RETURN VipNSShutdown(VIP_NIC_HANDLE NicHandle)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	if (nic == NULL)
		return VIP_INVALID_PARAMETER;
	pthread_mutex_lock(&nic->lock);
	nic->ns_init = false;
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&nic->o);
	return VIP_SUCCESS;
}

VIPL_EXPORT VIP_RETURN VipNSGetHostByName(VIP_NIC_HANDLE NicHandle, VIP_CHAR *Name,
					  VIP_NET_ADDRESS *Address, VIP_ULONG NameIndex)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	char host[256];
	if (nic == NULL || Name == NULL || Address == NULL || strlen(Name) >= sizeof(host))
		goto out;
	strcpy(host, Name);
	uint16_t port = nic->rdv_port; /* the host's well-known port: reaches all its NICs */
	char *colon = strrchr(host, ':');
	if (colon != NULL) {
		char *end;
		unsigned long p = strtoul(colon + 1, &end, 10);
		if (*end != '\0' || p == 0 || p > 65535)
			goto out;
		*colon = '\0';
		port = htons((uint16_t)p);
	}
	if (vipl_addr_own_name(host)) { /* the DPDK port: the resolver does not know it */
		rc = NameIndex == 0 ? VIP_SUCCESS : VIP_ERROR_NAMESERVICE;
		if (rc == VIP_SUCCESS) {
			Address->HostAddressLen = VIPL_ADDR_LEN;
			memcpy(Address->HostAddress, nic->addr, 4);
			memcpy(Address->HostAddress + 4, &port, 2);
		}
		goto out;
	}
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
	if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL) {
		rc = VIP_ERROR_NAMESERVICE;
		goto out;
	}
	/* NameIndex picks among the addresses of a multi-homed name (0: the first). */
	struct addrinfo *ai = res;
	for (VIP_ULONG i = 0; i < NameIndex && ai != NULL; i++)
		ai = ai->ai_next;
	if (ai == NULL) {
		freeaddrinfo(res);
		rc = VIP_ERROR_NAMESERVICE;
		goto out;
	}
	Address->HostAddressLen = VIPL_ADDR_LEN;
	memcpy(Address->HostAddress, &((struct sockaddr_in *)(void *)ai->ai_addr)->sin_addr, 4);
	memcpy(Address->HostAddress + 4, &port, 2);
	freeaddrinfo(res);
	rc = VIP_SUCCESS;
out:
	vipl_handle_put(nic ? &nic->o : NULL);
	return rc;
}

/* The reverse of vipl_addr_own_name: over DPDK the NIC's own IPv4 address (any port) is this
 * host's name, which the resolver cannot find from the port's address. -1 otherwise. */
static int own_addr_name(const struct vipl_nic *nic, const uint8_t *host, char *name, size_t len)
{
	if (memcmp(host, nic->addr, 4) != 0 || gethostname(name, len) != 0)
		return -1;
	name[len - 1] = '\0';
	return vipl_addr_own_name(name) ? 0 : -1;
}

/* NameLen: in, the buffer size; out, the name's length with its NUL (also when it does not
 * fit: VIP_ERROR_RESOURCE, nothing written). */
VIPL_EXPORT VIP_RETURN VipNSGetHostByAddr(VIP_NIC_HANDLE NicHandle, VIP_NET_ADDRESS *Address,
					  VIP_CHAR *Name, VIP_ULONG *NameLen)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	char host[NI_MAXHOST];
	if (nic == NULL || Address == NULL || Name == NULL || NameLen == NULL ||
	    Address->HostAddressLen != VIPL_ADDR_LEN)
		goto out;
	if (own_addr_name(nic, Address->HostAddress, host, sizeof(host)) != 0) {
		struct sockaddr_in sin;
		vipl_addr_sin(Address->HostAddress, &sin);
		if (getnameinfo((struct sockaddr *)&sin, sizeof(sin), host, sizeof(host), NULL, 0,
				NI_NAMEREQD) != 0) {
			rc = VIP_ERROR_NAMESERVICE;
			goto out;
		}
	}
	size_t n = strlen(host) + 1;
	if (n > *NameLen) {
		*NameLen = n;
		rc = VIP_ERROR_RESOURCE;
		goto out;
	}
	memcpy(Name, host, n);
	*NameLen = n;
	rc = VIP_SUCCESS;
out:
	vipl_handle_put(nic ? &nic->o : NULL);
	return rc;
}
