/* What the device tells a transport about its threads (rn_transport.h): the hooks of a
 * user-space engine, and which thread polls a CQ. Process-wide, as the engine is. */
#include <stdatomic.h>
#include <stddef.h>

#include "rn_transport.h"

static _Atomic(const struct rn_engine_hooks *) g_engine;
static _Thread_local bool tl_cq_poller;

void rn_engine_register(const struct rn_engine_hooks *h)
{
	atomic_store_explicit(&g_engine, h, memory_order_release);
}

static const struct rn_engine_hooks *engine(void)
{
	return atomic_load_explicit(&g_engine, memory_order_acquire);
}

void rn_engine_iter(void)
{
	const struct rn_engine_hooks *h = engine();

	if (h != NULL)
		h->iter();
}

void rn_engine_block(void)
{
	const struct rn_engine_hooks *h = engine();

	if (h != NULL)
		h->block();
}

void rn_engine_consumer_blocks(void)
{
	const struct rn_engine_hooks *h = engine();

	if (h != NULL)
		h->consumer_blocks();
}

void rn_thread_set_cq_poller(bool on)
{
	tl_cq_poller = on;
}

bool rn_thread_is_cq_poller(void)
{
	return tl_cq_poller;
}
