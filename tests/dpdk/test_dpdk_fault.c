/* Guarded bursts (dpdk/dpdk_fault.h) on a net_null port: a fault inside a guarded burst is
 * taken back only while the port's link reads down (the memif disconnect race); a fault with
 * the link up, or outside a burst, still ends the process. Exits 77 (skip) when EAL cannot
 * start here. Plain checks, not cmocka: cmocka catches SIGSEGV itself around every test, which
 * would take the place of the handler under test. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "dpdk_fault.h"

static int failures;
#define CHECK(c)                                                                        \
	do {                                                                            \
		if (!(c)) {                                                             \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
			failures++;                                                     \
		}                                                                       \
	} while (0)

static uint16_t pid;
static volatile char *no_access; /* a PROT_NONE page: touching it faults like an unmapped ring */
static volatile unsigned calls; /* read after the jump: kept in memory, in order */

static uint16_t faulting_burst(uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	(void)port;
	(void)pkts;
	calls++;
	no_access[0] = 1;
	return n;
}

static uint16_t plain_burst(uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(port, 0, pkts, n);
}

static void link_set(bool up)
{
	/* net_null has no link up / down ops: its start and stop set the link */
	int rc = up ? rte_eth_dev_start(pid) : rte_eth_dev_stop(pid);
	struct rte_eth_link l;

	CHECK(rc == 0);
	memset(&l, 0, sizeof(l));
	CHECK(rte_eth_link_get_nowait(pid, &l) == 0);
	CHECK(l.link_status == (up ? RTE_ETH_LINK_UP : RTE_ETH_LINK_DOWN));
}

/* The child's end: 0 when it ran to the end (the fault was swallowed), else its signal or
 * exit status (a sanitizer's handler, chained, exits instead of dying of the signal). */
static int in_child(void (*fn)(void))
{
	int st;
	pid_t c = fork();

	if (c < 0)
		return -1;
	if (c == 0) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		fn();
		_exit(0);
	}
	if (waitpid(c, &st, 0) != c)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_fault_with_link_down_returns(void)
{
	uint64_t before = dpdk_fault_count();

	link_set(false);
	calls = 0;
	CHECK(dpdk_fault_burst(faulting_burst, pid, NULL, 5, 7) == 7);
	/* a second one: the first jump left SIGSEGV unblocked */
	CHECK(dpdk_fault_burst(faulting_burst, pid, NULL, 5, 9) == 9);
	CHECK(calls == 2);
	CHECK(dpdk_fault_count() == before + 2);
	link_set(true);
}

static void fault_in_burst(void)
{
	dpdk_fault_burst(faulting_burst, pid, NULL, 1, 1);
}

static void test_fault_with_link_up_kills(void)
{
	int end = in_child(fault_in_burst);

	printf("child with the link up ended with %d (139: SIGSEGV)\n", end);
	CHECK(end > 0);
}

static uint16_t empty_burst(uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	(void)port;
	(void)pkts;
	(void)n;
	return 0;
}

static void fault_after_burst(void)
{
	dpdk_fault_burst(empty_burst, pid, NULL, 4, 0);
	no_access[0] = 1; /* not in a burst: the guard is disarmed */
}

static void test_fault_outside_burst_kills(void)
{
	link_set(false);
	int end = in_child(fault_after_burst);

	printf("child faulting outside a burst ended with %d\n", end);
	CHECK(end > 0);
	link_set(true);
}

static void test_plain_burst_passes_through(void)
{
	struct rte_mbuf *pkts[8];
	uint64_t before = dpdk_fault_count();
	uint16_t n = dpdk_fault_burst(plain_burst, pid, pkts, 8, 99);

	CHECK(n <= 8);
	rte_pktmbuf_free_bulk(pkts, n);
	CHECK(dpdk_fault_count() == before);
}

static int port_up(void)
{
	struct rte_eth_conf conf;
	struct rte_mempool *mp = rte_pktmbuf_pool_create("fault_mp", 1023, 0, 0,
							 RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);

	memset(&conf, 0, sizeof(conf));
	if (mp == NULL || rte_eth_dev_get_port_by_name("net_null0", &pid) != 0 ||
	    rte_eth_dev_configure(pid, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(pid, 0, 256, SOCKET_ID_ANY, NULL, mp) != 0 ||
	    rte_eth_tx_queue_setup(pid, 0, 256, SOCKET_ID_ANY, NULL) != 0 ||
	    rte_eth_dev_start(pid) != 0)
		return -1;
	return dpdk_fault_install();
}

int main(void)
{
	char *eal[] = { "test_dpdk_fault", "--no-huge", "-m", "64", "--no-pci", "--no-shconf",
			"--log-level=lib.eal:error", "--vdev=net_null0", NULL };
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "test_dpdk_fault: SKIP: EAL cannot start here\n");
		return 77;
	}
	no_access = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (no_access == MAP_FAILED || port_up() != 0) {
		fprintf(stderr, "test_dpdk_fault: net_null port or guard set-up failed\n");
		return 1;
	}
	test_plain_burst_passes_through();
	test_fault_with_link_down_returns();
	test_fault_with_link_up_kills();
	test_fault_outside_burst_kills();
	printf("test_dpdk_fault: %s\n", failures ? "FAILED" : "OK");
	return failures ? 1 : 0;
}
