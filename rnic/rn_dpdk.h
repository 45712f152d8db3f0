/* The RNIC's transport over softrnic's own TCP engine on a DPDK port (docs/dpdk-rdma.md), and
 * the choice between it and kernel sockets for librdmacm and the verbs device.
 *
 * rn_dpdk_transport: an rn_transport (rn_transport.h) over tcp/tcp.h on one rn_dpdk_port.
 * Every operation takes the port lock; the port's poll thread drives the stack. Each handle
 * owns an eventfd inside its own epoll fd, so rn_conn_fd() is readable on any change and never
 * writable (ready_as_readable). Record mode (MPA FPDU alignment) is tcp_conn_set_records.
 *
 * Selection (process-wide): SOFTRNIC_TRANSPORT=dpdk, or a DPDK configuration in the
 * environment (SOFTRNIC_DPDK_CONF, SOFTRNIC_DPDK_IP or SOFTRNIC_DPDK_EAL), makes librdmacm
 * listen and connect through the DPDK transport of a port opened from that configuration on
 * first use, and the device's MAC / GID and addresses are the port's.
 * SOFTRNIC_TRANSPORT=sock forces kernel sockets whatever else is set.
 *
 * Without DPDK at build time (SOFTRNIC_HAVE_DPDK undefined) the selection functions below
 * still exist: asking for DPDK then fails with -ENOTSUP and a message saying why. */
#ifndef RN_DPDK_H
#define RN_DPDK_H

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rn_transport.h"

/* true when the environment asks for the DPDK transport (see above). */
static inline bool rn_dpdk_wanted(void)
{
	const char *t = getenv("SOFTRNIC_TRANSPORT");

	if (t != NULL && *t != '\0')
		return strcmp(t, "dpdk") == 0;
	return getenv("SOFTRNIC_DPDK_CONF") != NULL || getenv("SOFTRNIC_DPDK_IP") != NULL ||
	       getenv("SOFTRNIC_DPDK_EAL") != NULL;
}

#ifdef SOFTRNIC_HAVE_DPDK
#include "rn_dpdk_port.h"

/* The process-wide DPDK transport: the port is opened from the environment
 * (rn_dpdk_cfg_from_env) and its poll thread started on the first call. 0 with *out; -ENOENT
 * when nothing is configured; else the error of rn_dpdk_port_open (the same on every later
 * call) with its message in err (may be NULL) and, once per process, on stderr. */
int rn_dpdk_default(const struct rn_transport **out, char *err, size_t errlen);

/* Addresses of the process-wide port (opening it if needed; errors as rn_dpdk_default). */
int rn_dpdk_default_mac(uint8_t mac[6]);
/* 0 when addr is the port's IPv4 address or the IPv4 wildcard (a listener can bind it);
 * -EADDRNOTAVAIL for another address, -EAFNOSUPPORT for IPv6. */
int rn_dpdk_default_check_local(const struct sockaddr *addr);
/* The source address the port uses towards dst (port 0): -ENETUNREACH when dst is neither on
 * the port's subnet nor behind its gateway, -EAFNOSUPPORT for IPv6. */
int rn_dpdk_default_route(const struct sockaddr *dst, struct sockaddr_in *src);

/* A transport over port p (started with rn_dpdk_port_start: every operation takes the port
 * lock). NULL when out of memory. The caller keeps its port reference. rn_dpdk_transport_free
 * after every handle was closed and BEFORE the port is closed: handles closed but still
 * closing in the engine (FIN exchange) are aborted then. */
const struct rn_transport *rn_dpdk_transport(struct rn_dpdk_port *p);
void rn_dpdk_transport_free(const struct rn_transport *t);
/* Counters of the transport: handles alive, eventfd writes/reads (signal transitions). */
struct rn_dpdk_tp_stats {
	uint64_t handles, signals, unsignals;
	uint64_t ref_drops;  /* deregistrations that had the stack copy out referenced memory */
	uint64_t ref_resets; /* connections reset because that copy found no mbuf */
};
void rn_dpdk_transport_stats(const struct rn_transport *t, struct rn_dpdk_tp_stats *st);

/* The calling thread polls a CQ from now (on) until it says off (rn_device_cq_progress): a
 * DPDK stream's recv that finds its queue empty then runs a port pass right there and the
 * port's poll thread backs off (docs/dpdk-rdma.md G1). Any other thread's recv only takes
 * what the poll thread delivered. */
void rn_dpdk_consumer_mark(bool on);
/* The device's progress thread drives the process-wide port while it is awake (G2): iter runs
 * a port pass (the poll thread backs off), block hands the port back to the poll thread before
 * the progress thread sleeps. No-ops until the port is open. */
void rn_dpdk_engine_iter(void);
void rn_dpdk_engine_block(void);
/* A consumer is about to block (rn_device_consumer_blocks): the process-wide port's poll
 * thread stops holding off for consumers now rather than when the hold runs out. */
void rn_dpdk_consumer_blocks(void);

#else /* built without DPDK: asking for it is an error that says so */
#include <stdio.h>

static inline void rn_dpdk_consumer_mark(bool on)
{
	(void)on;
}
static inline void rn_dpdk_engine_iter(void)
{
}
static inline void rn_dpdk_engine_block(void)
{
}
static inline void rn_dpdk_consumer_blocks(void)
{
}

static inline int rn_dpdk_default(const struct rn_transport **out, char *err, size_t errlen)
{
	(void)out;
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "softrnic was built without DPDK (install dpdk-dev, "
			 "re-run meson setup); unset SOFTRNIC_TRANSPORT / SOFTRNIC_DPDK_*");
	return -ENOTSUP;
}
static inline int rn_dpdk_default_mac(uint8_t mac[6])
{
	(void)mac;
	return -ENOTSUP;
}
static inline int rn_dpdk_default_check_local(const struct sockaddr *addr)
{
	(void)addr;
	return -ENOTSUP;
}
static inline int rn_dpdk_default_route(const struct sockaddr *dst, struct sockaddr_in *src)
{
	(void)dst;
	(void)src;
	return -ENOTSUP;
}
#endif

/* The transport librdmacm uses: the DPDK one when wanted (or its error, reported on stderr
 * once), else kernel sockets. */
static inline int rn_transport_default(const struct rn_transport **out)
{
	if (!rn_dpdk_wanted()) {
		*out = rn_sock_transport();
		return 0;
	}
	return rn_dpdk_default(out, NULL, 0);
}

#endif
