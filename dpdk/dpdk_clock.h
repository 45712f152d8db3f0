/* dpdk_clock: the DPDK port's clock, CLOCK_MONOTONIC nanoseconds read from the TSC.
 * The engine reads its clock several times per pass (timers, ARP, RTT samples, the poll
 * thread's windows); a TSC read and a multiply cost a fraction of a clock_gettime call. */
#ifndef DPDK_CLOCK_H
#define DPDK_CLOCK_H

#include <stdint.h>

/* After rte_eal_init (which measures the TSC rate); until then, and where the TSC rate is
 * unknown, dpdk_clock_ns falls back to clock_gettime. Idempotent. */
void dpdk_clock_init(void);

uint64_t dpdk_clock_ns(void);

/* The same, as a tcp_stack_cfg / net_if_cfg clock (arg unused). */
uint64_t dpdk_clock_cb(void *arg);

#endif
