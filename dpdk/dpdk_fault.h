/* dpdk_fault: bursts on a port whose PMD may unmap the memory they read while they run.
 *
 * DPDK 22.11's memif PMD handles its peer's disconnect on EAL's interrupt thread:
 * memif_disconnect marks the link down, then unmaps the regions shared with the peer. Its rx
 * and tx bursts check the connected flag only when they start, and nothing makes the unmap
 * wait for a burst in progress, nor tells the application first. A burst caught by that unmap
 * faults (SIGSEGV) in the PMD (docs/dpdk.md, Known problems). A guarded burst turns
 * exactly that fault into the end of the burst: armed for the burst's duration, a fault in
 * the same thread while the port's link already reads down (the PMD's first step) returns to
 * the burst's caller with `if_faulted`; any other fault goes to the previous handler (or the
 * default action), as if the guard were not there. What the interrupted burst held (mbufs
 * taken or not yet freed) is leaked, at most one burst per disconnect; the PMD resets its
 * queues when the peer connects again. */
#ifndef DPDK_FAULT_H
#define DPDK_FAULT_H

#include <stdint.h>

struct rte_mbuf;

typedef uint16_t (*dpdk_burst_fn)(uint16_t port_id, struct rte_mbuf **pkts, uint16_t n);

/* Installs the process's SIGSEGV / SIGBUS handler once (chained to the ones before it).
 * 0, or -errno from sigaction. */
int dpdk_fault_install(void);

/* fn(port_id, pkts, n) under the guard; if_faulted is returned when it was cut short. */
uint16_t dpdk_fault_burst(dpdk_burst_fn fn, uint16_t port_id, struct rte_mbuf **pkts,
			     uint16_t n, uint16_t if_faulted);

/* Bursts cut short so far, in this process. */
uint64_t dpdk_fault_count(void);

#endif
