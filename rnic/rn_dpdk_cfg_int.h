/* Private to rn_dpdk_cfg.c and rn_dpdk_port.c: defaults and the pieces of the parser. */
#ifndef RN_DPDK_CFG_INT_H
#define RN_DPDK_CFG_INT_H

#include <stddef.h>

#include "rn_dpdk_port.h"

/* Poll thread: keep polling this long after the last packet, then nap this long (woken
 * early by rn_dpdk_port_kick). docs/dpdk-port.md has the measurements. */
#define RN_DPDK_SPIN_US_DEFAULT 200u
#define RN_DPDK_NAP_US_DEFAULT 50u
/* mbufs in the port's receive pool (2^n - 1 is what rte_mempool sizes best); above MTU
 * 9000 the default shrinks so that the pool's memory stays what it is at 9000 (it would
 * otherwise need 1 GiB at MTU 64000). */
#define RN_DPDK_MBUFS_DEFAULT 16383u
#define RN_DPDK_MBUFS_MIN 1023u
/* How long an open waits for the link (memif: until the peer connects). */
#define RN_DPDK_LINK_WAIT_MS_DEFAULT 2000u

void rn_dpdk_cfg_defaults(struct rn_dpdk_cfg *c);
int rn_dpdk_cfg_set(struct rn_dpdk_cfg *c, const char *key, const char *val, const char *where,
		    char *err, size_t errlen);
int rn_dpdk_cfg_apply_text(struct rn_dpdk_cfg *c, const char *text, char *err, size_t errlen);
int rn_dpdk_cfg_check(const struct rn_dpdk_cfg *c, char *err, size_t errlen);

#endif
