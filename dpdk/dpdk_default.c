/* The process-wide DPDK transport (dpdk_transport.h): one port opened from the environment on first
 * use, its poll thread started, and the addresses librdmacm and the verbs device take from it.
 *
 * Opening happens once. A failure is remembered with its message, so every later caller gets
 * the same answer without a second EAL start (DPDK cannot restart EAL in one process), and the
 * message goes to stderr once: librdmacm callers only see an errno.
 *
 * At exit the port stays open (EAL cannot be torn down safely while threads of the
 * application may still post), but connections that are still closing get a short grace time
 * so the FINs the application asked for leave the port before the process ends. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#include "dpdk_transport.h"
#include "softrnic_conf.h"

#define EXIT_GRACE_MS 500u
/* The poll thread's back-off after a progress-thread pass; the block hook ends it earlier. */
#define ENGINE_HOLD_US 200u
/* Passes per progress iteration at most, while each fills a whole receive burst. */
#define ENGINE_PASSES 8

/* The open port (set once, never cleared: the port stays): g_open always, g_port only when
 * the progress thread drives it). */
static _Atomic(struct dpdk_port *) g_open, g_port;

static struct {
	pthread_mutex_t mtx;
	bool tried;
	int rc;
	char err[512];
	struct dpdk_port *port;
	const struct rn_transport *tp;
	uint32_t ip, mask;
	bool gateway;
	uint8_t mac[6];
} dflt = { .mtx = PTHREAD_MUTEX_INITIALIZER };

/* At exit: wait (bounded) until the stack holds no connection but TIME_WAIT ones. */
static void grace_at_exit(void)
{
	struct timespec nap = { 0, 1000000 };

	for (unsigned ms = 0; ms < EXIT_GRACE_MS; ms++) {
		struct tcp_stack_stats st;
		dpdk_port_lock(dflt.port);
		tcp_stack_get_stats(dpdk_port_stack(dflt.port), &st);
		dpdk_port_unlock(dflt.port);
		if (st.cur_conns <= st.time_wait)
			return;
		nanosleep(&nap, NULL);
	}
}

static uint32_t prefix_mask(uint8_t len)
{
	return len == 0 ? 0 : htonl(~0u << (32 - (len > 32 ? 32 : len)));
}

static void engine_iter(void)
{
	struct dpdk_port *p = atomic_load_explicit(&g_port, memory_order_acquire);

	/* a consumer polling its CQ drives the port already: a second driver on its core only
	 * splits the work into smaller batches */
	if (p == NULL || dpdk_port_held_by(p, DPDK_CONSUMER))
		return;
	dpdk_port_lock(p);
	/* drain what is there (bounded): a full burst means more is waiting in the ring */
	for (int i = 0; i < ENGINE_PASSES && dpdk_port_pass_locked(p, ENGINE_HOLD_US, DPDK_ENGINE) >= 32; i++)
		;
	dpdk_port_unlock(p);
}

static void engine_block(void)
{
	struct dpdk_port *p = atomic_load_explicit(&g_port, memory_order_acquire);

	if (p != NULL)
		dpdk_port_release(p, DPDK_ENGINE);
}

static void engine_consumer_blocks(void)
{
	struct dpdk_port *p = atomic_load_explicit(&g_open, memory_order_acquire);

	if (p != NULL)
		dpdk_port_release(p, DPDK_CONSUMER);
}

/* The device's threads drive the port through these (rn_transport.h). */
static const struct rn_engine_hooks engine_hooks = {
	.iter = engine_iter,
	.block = engine_block,
	.consumer_blocks = engine_consumer_blocks,
};

/* dflt.mtx held. */
static int open_default(void)
{
	struct dpdk_cfg cfg;
	struct dpdk_port *p = NULL;
	int rc = dpdk_cfg_from_env(&cfg, dflt.err, sizeof(dflt.err));

	if (rc == -ENOENT)
		snprintf(dflt.err, sizeof(dflt.err),
			 "SOFTRNIC_TRANSPORT=dpdk but no DPDK configuration: set SOFTRNIC_DPDK_CONF "
			 "or SOFTRNIC_DPDK_EAL and SOFTRNIC_DPDK_IP, or dpdk_conf or dpdk_eal and "
			 "dpdk_ip in softrnic.conf (docs/dpdk.md, docs/config.md)");
	if (rc == 0)
		rc = dpdk_port_open(&cfg, &p, dflt.err, sizeof(dflt.err));
	if (rc == 0 && (rc = dpdk_port_start(p)) != 0)
		snprintf(dflt.err, sizeof(dflt.err), "cannot start the DPDK poll thread: %s",
			 strerror(-rc));
	if (rc == 0 && (dflt.tp = dpdk_transport(p)) == NULL) {
		rc = -ENOMEM;
		snprintf(dflt.err, sizeof(dflt.err), "out of memory");
	}
	if (rc != 0) {
		if (p != NULL)
			dpdk_port_close(p);
		fprintf(stderr, "softrnic: DPDK transport unavailable: %s\n", dflt.err);
		return rc;
	}
	dflt.port = p;
	dpdk_port_lock(p);
	struct net_if *nif = tcp_stack_netif(dpdk_port_stack(p));
	dflt.ip = net_if_ip(nif);
	net_if_mac(nif, dflt.mac);
	dpdk_port_unlock(p);
	dflt.mask = prefix_mask(cfg.prefix_len);
	dflt.gateway = cfg.gateway != 0;
	atomic_store(&g_open, p);
	/* The progress thread drives the port while awake and no consumer does;
	 * SOFTRNIC_DPDK_ENGINE_DRIVE=0 leaves it to the poll thread (for comparisons). */
	const char *ed = softrnic_conf_get("SOFTRNIC_DPDK_ENGINE_DRIVE", NULL, 0);
	if (ed == NULL || strcmp(ed, "0") != 0)
		atomic_store(&g_port, p);
	rn_engine_register(&engine_hooks);
	atexit(grace_at_exit);
	return 0;
}

int dpdk_default(const struct rn_transport **out, char *err, size_t errlen)
{
	int rc;

	pthread_mutex_lock(&dflt.mtx);
	if (!dflt.tried) {
		dflt.tried = true;
		dflt.rc = open_default();
	}
	rc = dflt.rc;
	if (rc == 0 && out != NULL)
		*out = dflt.tp;
	if (rc != 0 && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", dflt.err);
	pthread_mutex_unlock(&dflt.mtx);
	return rc;
}

int dpdk_default_mac(uint8_t mac[6])
{
	int rc = dpdk_default(NULL, NULL, 0);

	if (rc == 0)
		memcpy(mac, dflt.mac, 6); /* constant once opened */
	return rc;
}

int dpdk_default_ipv4(uint32_t *ip)
{
	int rc = dpdk_default(NULL, NULL, 0);

	if (rc == 0)
		*ip = dflt.ip; /* constant once opened */
	return rc;
}

int dpdk_default_check_local(const struct sockaddr *addr)
{
	int rc = dpdk_default(NULL, NULL, 0);

	if (rc != 0)
		return rc;
	if (addr == NULL)
		return -EINVAL;
	if (addr->sa_family != AF_INET)
		return -EAFNOSUPPORT;
	uint32_t a = ((const struct sockaddr_in *)addr)->sin_addr.s_addr;
	return a == htonl(INADDR_ANY) || a == dflt.ip ? 0 : -EADDRNOTAVAIL;
}

int dpdk_default_route(const struct sockaddr *dst, struct sockaddr_in *src)
{
	int rc = dpdk_default(NULL, NULL, 0);

	if (rc != 0)
		return rc;
	if (dst == NULL || src == NULL)
		return -EINVAL;
	if (dst->sa_family != AF_INET)
		return -EAFNOSUPPORT;
	uint32_t d = ((const struct sockaddr_in *)dst)->sin_addr.s_addr;
	bool on_link = (d & dflt.mask) == (dflt.ip & dflt.mask);
	if (d == htonl(INADDR_ANY) || (!on_link && !dflt.gateway))
		return -ENETUNREACH;
	*src = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = dflt.ip };
	return 0;
}
