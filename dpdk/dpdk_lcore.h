/* An lcore id for every thread that works a DPDK port, so that mempool caches serve it.
 *
 * DPDK keeps a mempool cache per lcore id. A thread DPDK did not start (the device's progress
 * thread, the application's threads) has none (LCORE_ID_ANY): every mbuf it takes or returns
 * goes through the pool's shared ring, first in first out, so the receive pool's buffers
 * cycle through all of their memory (64 MiB at MTU 64000) and every frame the PMD copies in
 * lands in memory that left the cache long ago. With an id, the cache hands out the buffer
 * freed last, still in the cache (docs/dpdk.md). */
#ifndef DPDK_LCORE_H
#define DPDK_LCORE_H

#include <stdbool.h>

/* Once per thread, after rte_eal_init: a thread without an lcore id registers for one
 * (rte_thread_register). It keeps it until it exits; then its caches are flushed back into
 * their pools and the id is released. When none is free (RTE_MAX_LCORE) or EAL refuses
 * (multi-process), the thread works without caches, as before; it does not try again.
 * Cheap after the first call (a thread-local test). True when the thread has an id now. */
bool dpdk_lcore_claim(void);

/* Flush this thread's caches into every pool and release the id it claimed (no-op for an
 * id it did not claim, EAL's own threads included). Thread exit does this by itself; a
 * thread calls it to let go earlier. It may claim again afterwards. */
void dpdk_lcore_release(void);

/* Threads holding an id claimed here now, and claims refused since start (for tests). */
void dpdk_lcore_counts(unsigned *held, unsigned *refused);

#endif
