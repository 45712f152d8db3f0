/* The keys of softrnic.conf: one for every SOFTRNIC_* variable the libraries read. The few
 * whose values nothing else checks before use are checked here, when the file is read; the
 * others by the layer that uses them, whose message names the file and line (where). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sc_int.h"

static int check_transport(const char *v, char *why, size_t wl)
{
	if (strcmp(v, "sock") == 0 || strcmp(v, "dpdk") == 0)
		return 0;
	snprintf(why, wl, "'%s' is not a transport (allowed: sock, dpdk)", v);
	return -EINVAL;
}

static int check_uint(const char *v, unsigned long max, char *why, size_t wl)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(v, &end, 10);
	if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 || x > max) {
		snprintf(why, wl, "'%s' is not a number in 0..%lu", v, max);
		return -EINVAL;
	}
	return 0;
}

static int check_spin_us(const char *v, char *why, size_t wl)
{
	return check_uint(v, 1000000, why, wl);
}

static int check_vipl_wire(const char *v, char *why, size_t wl)
{
	if (strcmp(v, "iwarp") == 0 || strcmp(v, "vitcp") == 0)
		return 0;
	snprintf(why, wl, "'%s' is not a VIPL wire (allowed: iwarp, vitcp)", v);
	return -EINVAL;
}

static int check_stats_qps(const char *v, char *why, size_t wl)
{
	return check_uint(v, 65536, why, wl);   /* RN_STATS_QPS_MAX, max_qp (D77) */
}

static int check_bool01(const char *v, char *why, size_t wl)
{
	return check_uint(v, 1, why, wl);
}

const struct sc_key sc_keys[SC_NKEYS] = {
	/* the device's transport and its kernel sockets (verbs/sv_transport.c) */
	{ "transport", check_transport },
	{ "keepalive", NULL },
	/* MPA options of rdma_cm connections (verbs/rdmacm/rcm_mpa_env.c) */
	{ "mpa", NULL },
	/* VIPL (vipl/vipl_addr.c, vipl/vipl_comp.c, vipl/vipl_registry.c, vipl/vipl_wire_ops.c,
	 * vipl/vitcp_conn.c) */
	{ "vipl_addr", NULL },
	{ "vipl_wire", check_vipl_wire },
	{ "vipl_spin_us", check_spin_us },
	{ "vipl_rundir", NULL },
	{ "vitcp_crc", check_bool01 },
	/* the statistics file softrnic-stat reads (rnic/rn_stats.c, docs/stats.md) */
	{ "stats_dir", NULL },
	{ "stats_qps", check_stats_qps },
	/* the DPDK port (dpdk/dpdk_cfg.c): a file of its own, then each key of it */
	{ "dpdk_conf", NULL },
	{ "dpdk_eal", NULL },
	{ "dpdk_port", NULL },
	{ "dpdk_ip", NULL },
	{ "dpdk_gw", NULL },
	{ "dpdk_mac", NULL },
	{ "dpdk_mtu", NULL },
	{ "dpdk_pcap", NULL },
	{ "dpdk_sndbuf", NULL },
	{ "dpdk_rcvbuf", NULL },
	{ "dpdk_cc", NULL },
	{ "dpdk_spin_us", NULL },
	{ "dpdk_nap_us", NULL },
	{ "dpdk_mbufs", NULL },
	{ "dpdk_tx_mbufs", NULL },
	{ "dpdk_link_wait_ms", NULL },
	{ "dpdk_tx_refs", NULL },
	{ "dpdk_memif_csum", NULL },
	{ "dpdk_keepalive", NULL },
	{ "dpdk_max_conns", NULL },
	{ "dpdk_orphan_retries", NULL },
	{ "dpdk_fin_timeout", NULL },
	/* the DPDK transport's listeners, one line each, for scripts (dpdk/dpdk_conn.c) */
	{ "dpdk_listen_log", NULL },
	/* 0: the progress thread never drives the port (dpdk/dpdk_default.c) */
	{ "dpdk_engine_drive", check_bool01 },
};

int sc_key_find(const char *name)
{
	for (int i = 0; i < SC_NKEYS; i++)
		if (strcmp(sc_keys[i].name, name) == 0)
			return i;
	return -1;
}

int sc_key_of_env(const char *env)
{
	static const char prefix[] = "SOFTRNIC_";

	if (strncmp(env, prefix, sizeof(prefix) - 1) != 0)
		return -1;
	env += sizeof(prefix) - 1;
	for (int i = 0; i < SC_NKEYS; i++)
		if (strcasecmp(sc_keys[i].name, env) == 0)
			return i;
	return -1;
}
