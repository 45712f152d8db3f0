/* Private to dpdk_cfg.c and dpdk_port.c: defaults and the pieces of the parser. */
#ifndef DPDK_CFG_INT_H
#define DPDK_CFG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dpdk_port.h"

/* Poll thread: keep polling this long after the last packet, then nap this long (woken
 * early by dpdk_port_kick). docs/dpdk.md tells how they were chosen. */
#define DPDK_SPIN_US_DEFAULT 200u
#define DPDK_NAP_US_DEFAULT 50u
/* Each pool's default holds this much frame room: 4095 mbufs at MTU 1500 in the transmit
 * pool, and the receive pool a NIC's ring (DPDK_RING) more (dpdk_pool.c); jumbo MTUs get
 * fewer, larger mbufs, never fewer than DPDK_MBUFS_MIN. docs/dpdk.md tells how it was chosen. */
#define DPDK_POOL_FRAME_BYTES (8u << 20)
#define DPDK_MBUFS_MIN 1023u
/* How long an open waits for the link (memif: until the peer connects). */
#define DPDK_LINK_WAIT_MS_DEFAULT 2000u
/* Keepalive on every stream: no kernel answers for a peer process that died (kill -9), so a
 * receiver that never sends would otherwise wait forever; a silent peer is given up after
 * IDLE + PROBES x INTVL = 10 s, the bound a hardware RNIC's keepalive gives. */
#define DPDK_KA_IDLE_S_DEFAULT 5u
#define DPDK_KA_INTVL_S_DEFAULT 1u
#define DPDK_KA_PROBES_DEFAULT 5u
/* A connection closed by its application whose FIN goes unacknowledged gives up after this
 * many retransmissions: from a 200 ms RTO about 12.6 s, near the keepalive's bound for a
 * silent peer and the kernel-socket transport's TCP_USER_TIMEOUT of the same 10 s, which
 * Linux applies to such a connection too. The engine's own default (8, Linux's) takes 102 s. */
#define DPDK_ORPHAN_RETRIES_DEFAULT 5u
/* FIN-WAIT-2 after the close: the peer acknowledged our FIN but has not closed (Linux's
 * tcp_fin_timeout) */
#define DPDK_FIN_TIMEOUT_S_DEFAULT 60u
/* 10,000 QPs with room for their TIME-WAIT entries; the hash costs about 100 octets each */
#define DPDK_MAX_CONNS_DEFAULT 16384u

void dpdk_cfg_defaults(struct dpdk_cfg *c);
int dpdk_cfg_set(struct dpdk_cfg *c, const char *key, const char *val, const char *where,
		    char *err, size_t errlen);
int dpdk_cfg_apply_text(struct dpdk_cfg *c, const char *text, char *err, size_t errlen);
int dpdk_cfg_check(const struct dpdk_cfg *c, char *err, size_t errlen);
/* How long a port's open waits for its link: link_wait_ms, but 0 for a memif server unless
 * link_wait_ms was given (D161). */
uint32_t dpdk_cfg_link_wait_ms(const struct dpdk_cfg *c, bool memif_server);

#endif
