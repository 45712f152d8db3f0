/* The RNIC's transport over softrnic's own TCP engine on a DPDK port.
 *
 * dpdk_transport: an rn_transport (rn_transport.h) over tcp/tcp.h on one dpdk_port.
 * Every operation takes the port lock; the port's poll thread drives the stack. Each handle's
 * rn_conn_fd() is an eventfd of its own, readable on any change; its writability means nothing
 * (ready_as_readable). Record mode (MPA FPDU alignment) is tcp_conn_set_records.
 *
 * dpdk_default: the process-wide transport that librdmacm and the verbs device use when the
 * environment asks for DPDK (verbs/ decides that): one port opened from SOFTRNIC_DPDK_CONF /
 * SOFTRNIC_DPDK_* on first use, its poll thread started, and the device's threads lent to it
 * (rn_engine_register). */
#ifndef DPDK_TRANSPORT_H
#define DPDK_TRANSPORT_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "dpdk_port.h"
#include "rn_transport.h"

/* The process-wide DPDK transport: the port is opened from the environment
 * (dpdk_cfg_from_env) and its poll thread started on the first call. 0 with *out (may be
 * NULL); -ENOENT when nothing is configured; else the error of dpdk_port_open (the same on
 * every later call) with its message in err (may be NULL) and, once per process, on stderr. */
int dpdk_default(const struct rn_transport **out, char *err, size_t errlen);

/* Addresses of the process-wide port (opening it if needed; errors as dpdk_default). */
int dpdk_default_mac(uint8_t mac[6]);
/* The port's IPv4 address, network order. */
int dpdk_default_ipv4(uint32_t *ip);
/* 0 when addr is the port's IPv4 address or the IPv4 wildcard (a listener can bind it);
 * -EADDRNOTAVAIL for another address, -EAFNOSUPPORT for IPv6. */
int dpdk_default_check_local(const struct sockaddr *addr);
/* The source address the port uses towards dst (port 0): -ENETUNREACH when dst is neither on
 * the port's subnet nor behind its gateway, -EAFNOSUPPORT for IPv6. */
int dpdk_default_route(const struct sockaddr *dst, struct sockaddr_in *src);

/* A transport over port p (started with dpdk_port_start: every operation takes the port
 * lock). NULL when out of memory. The caller keeps its port reference. dpdk_transport_free
 * after every handle was closed and BEFORE the port is closed: handles closed but still
 * closing in the engine (FIN exchange) are aborted then. */
const struct rn_transport *dpdk_transport(struct dpdk_port *p);
void dpdk_transport_free(const struct rn_transport *t);
/* Counters of the transport: handles alive, eventfd writes/reads (signal transitions). */
struct dpdk_tp_stats {
	uint64_t handles, signals, unsignals;
	uint64_t ref_drops;  /* deregistrations that had the stack copy out referenced memory */
	uint64_t ref_resets; /* connections reset because that copy found no mbuf */
};
void dpdk_transport_stats(const struct rn_transport *t, struct dpdk_tp_stats *st);

#endif
