/* dpdk_clock: CLOCK_MONOTONIC anchored once, advanced by the TSC at the rate EAL
 * calibrated. The TSC is the kernel's clocksource on the machines we run on (constant and
 * synchronised across cores), so the two clocks only drift apart by the error of that rate,
 * which TCP timers and the poll thread's windows do not notice. */
#include "dpdk_clock.h"

#include <stdatomic.h>
#include <time.h>

#include <rte_cycles.h>

__extension__ typedef unsigned __int128 rn_u128;

struct dpdk_clock {
	uint64_t base_tsc;
	uint64_t base_ns;
	uint64_t mult;      /* ns per cycle, 32.32 fixed point */
};

static struct dpdk_clock g_clock;
static atomic_bool g_ready;

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void dpdk_clock_init(void)
{
	uint64_t hz = rte_get_tsc_hz();

	if (atomic_load(&g_ready) || hz == 0)
		return;
	g_clock.mult = (uint64_t)(((rn_u128)1000000000u << 32) / hz);
	g_clock.base_ns = monotonic_ns();
	g_clock.base_tsc = rte_rdtsc();
	atomic_store(&g_ready, true); /* release: the fields above are set */
}

uint64_t dpdk_clock_ns(void)
{
	if (!atomic_load_explicit(&g_ready, memory_order_acquire))
		return monotonic_ns();
	uint64_t d = rte_rdtsc() - g_clock.base_tsc;
	return g_clock.base_ns + (uint64_t)(((rn_u128)d * g_clock.mult) >> 32);
}

uint64_t dpdk_clock_cb(void *arg)
{
	(void)arg;
	return dpdk_clock_ns();
}
