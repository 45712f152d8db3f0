/* An lcore id for every thread that works a DPDK port (dpdk_lcore.h).
 *
 * The release flushes before it unregisters: an id nobody holds keeps its cache, and the
 * mbufs in it would be lost to everyone until a later thread got the same id (a pool of 1023
 * receive buffers, a cache of up to 1.5x its size per id: a few threads that come and go
 * would empty it). The flush walks every mempool, not only the ports' pools: the thread may
 * have used any of them through the engine. */
#include "dpdk_lcore.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <rte_lcore.h>
#include <rte_mempool.h>

enum lcore_state { LC_UNTRIED = 0, LC_CLAIMED, LC_EAL, LC_REFUSED };

static _Thread_local enum lcore_state tl_state;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static bool key_ok;
static atomic_uint n_held, n_refused;

static void flush_one(struct rte_mempool *mp, void *arg)
{
	struct rte_mempool_cache *c = rte_mempool_default_cache(mp, *(unsigned *)arg);

	if (c != NULL)
		rte_mempool_cache_flush(c, mp);
}

static void release_claimed(void)
{
	unsigned id = rte_lcore_id();

	if (id != LCORE_ID_ANY)
		rte_mempool_walk(flush_one, &id);
	rte_thread_unregister();
	atomic_fetch_sub(&n_held, 1);
}

/* Thread exit (the key's destructor): only for a thread that still holds a claimed id. */
static void at_thread_exit(void *v)
{
	(void)v;
	if (tl_state == LC_CLAIMED) {
		release_claimed();
		tl_state = LC_UNTRIED;
	}
}

static void make_key(void)
{
	key_ok = pthread_key_create(&exit_key, at_thread_exit) == 0;
}

bool dpdk_lcore_claim(void)
{
	if (tl_state != LC_UNTRIED)
		return tl_state != LC_REFUSED;
	if (rte_lcore_id() != LCORE_ID_ANY) {
		tl_state = LC_EAL; /* started by EAL, or registered by someone else */
		return true;
	}
	pthread_once(&key_once, make_key);
	/* without the exit hook the id and the cache's mbufs would outlive the thread */
	if (!key_ok || pthread_setspecific(exit_key, &tl_state) != 0 ||
	    rte_thread_register() != 0) {
		if (key_ok)
			pthread_setspecific(exit_key, NULL);
		tl_state = LC_REFUSED;
		atomic_fetch_add(&n_refused, 1);
		return false;
	}
	tl_state = LC_CLAIMED;
	atomic_fetch_add(&n_held, 1);
	return true;
}

void dpdk_lcore_release(void)
{
	if (tl_state == LC_CLAIMED) {
		release_claimed();
		pthread_setspecific(exit_key, NULL);
	}
	if (tl_state != LC_EAL)
		tl_state = LC_UNTRIED;
}

void dpdk_lcore_counts(unsigned *held, unsigned *refused)
{
	if (held != NULL)
		*held = atomic_load(&n_held);
	if (refused != NULL)
		*refused = atomic_load(&n_refused);
}
