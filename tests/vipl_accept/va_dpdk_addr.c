/* va_dpdk_addr: the VIPL NIC's address on the DPDK transport (docs/vipl.md), one process.
 * Run with SOFTRNIC_TRANSPORT=dpdk, SOFTRNIC_DPDK_EAL (a port that needs no peer, e.g.
 * net_ring) and SOFTRNIC_DPDK_IP=IP/len; argument: IP. Checks, each printed:
 *   1 VipQueryNic: LocalNicAddress = IP and port 7447 (no SOFTRNIC_VIPL_ADDR)
 *   2 VipNSGetHostByName(this host's name) = IP, the NIC's port; NameIndex 1 has none
 *   3 VipNSGetHostByAddr(IP) = this host's name
 *   4 SOFTRNIC_VIPL_ADDR=":7500" keeps IP with port 7500; "0.0.0.0:7501" means IP
 *   5 SOFTRNIC_VIPL_ADDR naming another address: VipOpenNic fails (VIP_ERROR_RESOURCE)
 * Exit 0 when all hold, 1 on the first failure, 77 when the DPDK port cannot open. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vipl.h"

static int fails;

#define CHECK(cond, ...)                                                                    \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "va_dpdk_addr: FAIL: " __VA_ARGS__);                \
			fprintf(stderr, "\n");                                              \
			fails++;                                                            \
		}                                                                           \
	} while (0)

/* The NIC's 6-octet address as ip:port. */
static void nic_addr(VIP_NIC_HANDLE nic, struct in_addr *ip, uint16_t *port)
{
	VIP_NIC_ATTRIBUTES a;
	memset(&a, 0, sizeof(a));
	if (VipQueryNic(nic, &a) != VIP_SUCCESS || a.NicAddressLen != 6 || !a.LocalNicAddress) {
		ip->s_addr = 0, *port = 0;
		return;
	}
	memcpy(ip, a.LocalNicAddress, 4);
	memcpy(port, a.LocalNicAddress + 4, 2);
	*port = ntohs(*port);
}

static int open_with(const char *vipl_addr, VIP_NIC_HANDLE *nic)
{
	if (vipl_addr != NULL)
		setenv("SOFTRNIC_VIPL_ADDR", vipl_addr, 1);
	else
		unsetenv("SOFTRNIC_VIPL_ADDR");
	return VipOpenNic((VIP_CHAR *)"softrnic0", nic);
}

static void check_ns(VIP_NIC_HANDLE nic, struct in_addr want)
{
	char host[256], back[256];
	union { VIP_NET_ADDRESS a; uint8_t raw[sizeof(VIP_NET_ADDRESS) + 16]; } u;
	VIP_ULONG len = sizeof(back);
	struct in_addr got;
	uint16_t port;

	CHECK(gethostname(host, sizeof(host)) == 0, "gethostname");
	memset(&u, 0, sizeof(u));
	VIP_RETURN rc = VipNSGetHostByName(nic, host, &u.a, 0);
	memcpy(&got, u.a.HostAddress, 4);
	memcpy(&port, u.a.HostAddress + 4, 2);
	CHECK(rc == VIP_SUCCESS && u.a.HostAddressLen == 6 && got.s_addr == want.s_addr &&
		      ntohs(port) == 7447,
	      "2 GetHostByName(%s): rc %d len %u %s:%u", host, (int)rc, u.a.HostAddressLen,
	      inet_ntoa(got), ntohs(port));
	rc = VipNSGetHostByName(nic, host, &u.a, 1);
	CHECK(rc == VIP_ERROR_NAMESERVICE, "2 GetHostByName(%s, index 1): rc %d", host, (int)rc);
	u.a.HostAddressLen = 6;
	memcpy(u.a.HostAddress, &want, 4);
	rc = VipNSGetHostByAddr(nic, &u.a, back, &len);
	CHECK(rc == VIP_SUCCESS && strcmp(back, host) == 0, "3 GetHostByAddr: rc %d '%s'",
	      (int)rc, rc == VIP_SUCCESS ? back : "");
	printf("2-3 name service: %s <-> %s\n", host, inet_ntoa(want));
}

int main(int argc, char **argv)
{
	VIP_NIC_HANDLE nic;
	struct in_addr want, got;
	uint16_t port;

	if (argc != 2 || inet_pton(AF_INET, argv[1], &want) != 1) {
		fprintf(stderr, "usage: va_dpdk_addr IP (the DPDK port's address)\n");
		return 2;
	}
	if (open_with(NULL, &nic) != VIP_SUCCESS) {
		fprintf(stderr, "va_dpdk_addr: VipOpenNic failed (DPDK port: see above)\n");
		return 77;
	}
	nic_addr(nic, &got, &port);
	CHECK(got.s_addr == want.s_addr && port == 7447, "1 VipQueryNic: %s:%u", inet_ntoa(got),
	      port);
	printf("1 VipQueryNic: %s:%u\n", inet_ntoa(got), port);
	check_ns(nic, want);
	VipCloseNic(nic);

	const char *cases[] = { ":7500", "0.0.0.0:7501" };
	for (int i = 0; i < 2; i++) {
		CHECK(open_with(cases[i], &nic) == VIP_SUCCESS, "4 VipOpenNic(%s)", cases[i]);
		nic_addr(nic, &got, &port);
		CHECK(got.s_addr == want.s_addr && port == 7500 + i, "4 %s: %s:%u", cases[i],
		      inet_ntoa(got), port);
		printf("4 SOFTRNIC_VIPL_ADDR=%s: %s:%u\n", cases[i], inet_ntoa(got), port);
		VipCloseNic(nic);
	}
	VIP_RETURN rc = open_with("192.0.2.7", &nic);
	CHECK(rc == VIP_ERROR_RESOURCE, "5 VipOpenNic(192.0.2.7): rc %d", (int)rc);
	printf("5 SOFTRNIC_VIPL_ADDR=192.0.2.7: rc %d (refused)\n", (int)rc);
	if (rc == VIP_SUCCESS)
		VipCloseNic(nic);
	printf("va_dpdk_addr: %s\n", fails ? "FAIL" : "OK");
	return fails ? 1 : 0;
}
