/* Guarded bursts (dpdk_fault.h): sigsetjmp before the burst, a thread-local pointer to the
 * armed guard, and a SIGSEGV / SIGBUS handler that jumps back only for an armed thread whose
 * port's link reads down. Unrelated faults never reach DPDK from the handler. */
#include "dpdk_fault.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

struct guard {
	sigjmp_buf jb;
	uint16_t port_id;
};

/* The armed burst's guard (on its stack), NULL outside bursts. initial-exec: the handler
 * reads it with one %fs-relative load, where a dynamic TLS access in a shared library could
 * allocate, in a thread that may have faulted inside malloc. */
static _Thread_local struct guard *volatile t_armed __attribute__((tls_model("initial-exec")));
static struct sigaction prev_segv, prev_bus;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int install_rc;
static atomic_uint_fast64_t faults;

/* The PMD marks the link down before it unmaps (memif_disconnect); a fault while it still
 * reads up is not that race. rte_eth_link_get_nowait only reads the device's link word for
 * memif (its link_update does nothing in a primary process). */
static bool link_down(uint16_t port_id)
{
	struct rte_eth_link l;

	memset(&l, 0, sizeof(l));
	return rte_eth_link_get_nowait(port_id, &l) == 0 && l.link_status == RTE_ETH_LINK_DOWN;
}

/* Hand the fault on: the previous handler, or the previous disposition for the re-executed
 * instruction (the default one dumps core as before). */
static void chain(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *pr = sig == SIGSEGV ? &prev_segv : &prev_bus;

	if (pr->sa_flags & SA_SIGINFO) {
		pr->sa_sigaction(sig, si, uc);
	} else if (pr->sa_handler != SIG_DFL && pr->sa_handler != SIG_IGN) {
		pr->sa_handler(sig);
	} else {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigaction(sig, &dfl, NULL);
	}
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	struct guard *g = t_armed;

	if (g != NULL && link_down(g->port_id)) {
		t_armed = NULL;
		atomic_fetch_add_explicit(&faults, 1, memory_order_relaxed);
		siglongjmp(g->jb, 1);
	}
	chain(sig, si, uc);
}

static void install_once(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &prev_segv) != 0 || sigaction(SIGBUS, &sa, &prev_bus) != 0)
		install_rc = -errno;
}

int dpdk_fault_install(void)
{
	pthread_once(&once, install_once);
	return install_rc;
}

uint16_t dpdk_fault_burst(dpdk_burst_fn fn, uint16_t port_id, struct rte_mbuf **pkts,
			     uint16_t n, uint16_t if_faulted)
{
	struct guard g;
	uint16_t done;

	/* savesigs 0: no syscall per burst. The handler runs with SIGSEGV / SIGBUS blocked
	 * and the jump skips the return that would unblock them: unblocked here instead, else
	 * the thread's next fault would kill the process without a handler. */
	if (sigsetjmp(g.jb, 0) != 0) {
		sigset_t s;

		sigemptyset(&s);
		sigaddset(&s, SIGSEGV);
		sigaddset(&s, SIGBUS);
		pthread_sigmask(SIG_UNBLOCK, &s, NULL);
		if (dpdk_fault_count() == 1) /* once: a peer that comes and goes says it once */
			fprintf(stderr, "softrnic: DPDK port %u: its peer disconnected during a burst "
				"(the PMD unmapped the shared rings); burst abandoned, link down\n",
				port_id);
		return if_faulted;
	}
	/* The handler reads g: the signal fences keep the compiler from sinking the store of
	 * port_id past the arming or the burst (with LTO it sees a burst that never reads it,
	 * and dropped it: the handler read a stale port and let the fault kill the process). */
	g.port_id = port_id;
	atomic_signal_fence(memory_order_seq_cst);
	t_armed = &g;
	atomic_signal_fence(memory_order_seq_cst);
	done = fn(port_id, pkts, n);
	atomic_signal_fence(memory_order_seq_cst);
	t_armed = NULL;
	return done;
}

uint64_t dpdk_fault_count(void)
{
	return atomic_load_explicit(&faults, memory_order_relaxed);
}
