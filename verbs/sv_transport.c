/* Which transport the RNIC's connections run on, from the environment or softrnic.conf
 * (verbs_ext.h, softrnic_conf.h), and the addresses librdmacm and the device take from it.
 * The DPDK transport is a layer of its own (dpdk/); a build without DPDK still answers, with
 * an error that says why. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softrnic_conf.h"
#include "verbs_int.h"

#ifdef SOFTRNIC_HAVE_DPDK
#include "dpdk_transport.h"
#endif

enum softrnic_transport softrnic_transport_selected(void)
{
	const char *t = softrnic_conf_get("SOFTRNIC_TRANSPORT", NULL, 0);

	if (t != NULL && *t != '\0')
		return strcmp(t, "dpdk") == 0 ? SOFTRNIC_TRANSPORT_DPDK : SOFTRNIC_TRANSPORT_SOCK;
	return softrnic_conf_get("SOFTRNIC_DPDK_CONF", NULL, 0) != NULL ||
			       softrnic_conf_get("SOFTRNIC_DPDK_IP", NULL, 0) != NULL ||
			       softrnic_conf_get("SOFTRNIC_DPDK_EAL", NULL, 0) != NULL
		       ? SOFTRNIC_TRANSPORT_DPDK
		       : SOFTRNIC_TRANSPORT_SOCK;
}

#ifdef SOFTRNIC_HAVE_DPDK

static int dpdk_open(const struct rn_transport **out)
{
	return dpdk_default(out, NULL, 0);
}

int softrnic_transport_check_local(const struct sockaddr *addr)
{
	return dpdk_default_check_local(addr);
}

int softrnic_transport_route(const struct sockaddr *dst, struct sockaddr_in *src)
{
	return dpdk_default_route(dst, src);
}

int softrnic_transport_mac(uint8_t mac[6])
{
	return dpdk_default_mac(mac);
}

static int dpdk_ipv4(uint32_t *addr)
{
	return dpdk_default_ipv4(addr);
}

#else /* built without DPDK: asking for it is an error that says so, once */

static int no_dpdk(void)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;

	if (!atomic_flag_test_and_set(&said))
		fprintf(stderr, "softrnic: DPDK transport unavailable: softrnic was built without "
				"DPDK (install dpdk-dev, re-run meson setup); unset "
				"SOFTRNIC_TRANSPORT / SOFTRNIC_DPDK_*\n");
	return -ENOTSUP;
}

static int dpdk_open(const struct rn_transport **out)
{
	(void)out;
	return no_dpdk();
}

int softrnic_transport_check_local(const struct sockaddr *addr)
{
	(void)addr;
	return no_dpdk();
}

int softrnic_transport_route(const struct sockaddr *dst, struct sockaddr_in *src)
{
	(void)dst;
	(void)src;
	return no_dpdk();
}

int softrnic_transport_mac(uint8_t mac[6])
{
	(void)mac;
	return no_dpdk();
}

static int dpdk_ipv4(uint32_t *addr)
{
	(void)addr;
	return no_dpdk();
}

#endif

/* SOFTRNIC_KEEPALIVE=IDLE,INTVL,PROBES (seconds, seconds, count) or off (key keepalive of
 * softrnic.conf): the kernel-socket streams' keepalive (rn_sock_set_keepalive); unset keeps
 * the default. A bad value fails the open, saying so once, and where it came from. */
static int sock_keepalive_from_env(void)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;
	char where[320];
	const char *v = softrnic_conf_get("SOFTRNIC_KEEPALIVE", where, sizeof(where));
	unsigned idle, intvl, probes;
	char end;

	if (v == NULL || *v == '\0')
		return 0;
	if (strcmp(v, "off") == 0)
		return rn_sock_set_keepalive(0, 0, 0);
	if (sscanf(v, "%u,%u,%u%c", &idle, &intvl, &probes, &end) == 3 && idle &&
	    rn_sock_set_keepalive(idle, intvl, probes) == 0)
		return 0;
	if (!atomic_flag_test_and_set(&said))
		fprintf(stderr, "softrnic: %s: keepalive '%s' is not IDLE,INTVL,PROBES "
				"(1..86400 s, 1..3600 s, 1..100) or off\n", where, v);
	return -EINVAL;
}

int sv_conf_checked(void)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;
	char err[512];

	if (softrnic_conf_check(err, sizeof(err)) == 0)
		return 0;
	if (!atomic_flag_test_and_set(&said))
		fprintf(stderr, "softrnic: %s\n", err);
	return -EINVAL;
}

int softrnic_transport_default(const struct rn_transport **out)
{
	int rc = sv_conf_checked();

	if (rc != 0)
		return rc;
	if (softrnic_transport_selected() == SOFTRNIC_TRANSPORT_SOCK) {
		rc = sock_keepalive_from_env();
		if (rc != 0)
			return rc;
		*out = rn_sock_transport();
		return 0;
	}
	return dpdk_open(out);
}

int softrnic_transport_ipv4(uint32_t *addr)
{
	if (addr == NULL)
		return -EINVAL;
	if (softrnic_transport_selected() == SOFTRNIC_TRANSPORT_SOCK)
		return -ENOTSUP;
	return dpdk_ipv4(addr);
}
