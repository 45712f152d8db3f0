/* Guarded copies of registered memory (rn_fault.h). */
#include "rn_fault.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

struct guard {
	sigjmp_buf jb;
};

/* The armed copy's guard (on its stack), NULL outside. initial-exec: the handler reads it
 * with one thread-pointer-relative load, where a dynamic TLS access in a shared library could
 * allocate in a thread that faulted inside malloc. */
static _Thread_local struct guard *volatile t_armed __attribute__((tls_model("initial-exec")));
static struct sigaction prev_segv, prev_bus;
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t faults;

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

	if (g != NULL) {
		t_armed = NULL;
		atomic_fetch_add_explicit(&faults, 1, memory_order_relaxed);
		siglongjmp(g->jb, 1);
	}
	chain(sig, si, uc);
}

/* Ours for sig unless it already is; the one it replaces becomes the one chained to. */
static int install_one(int sig, struct sigaction *prev)
{
	struct sigaction sa, cur;

	if (sigaction(sig, NULL, &cur) != 0)
		return -errno;
	if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	/* prev is read by the handler: store it before ours can run */
	*prev = cur;
	atomic_signal_fence(memory_order_seq_cst);
	return sigaction(sig, &sa, NULL) != 0 ? -errno : 0;
}

/* Not a once: a handler installed after ours without chaining (a test framework's, a crash
 * reporter's) would otherwise disable the guard for good; each call puts ours back on top,
 * chaining to that one. Two sigaction calls per signal: for the control path only. */
int rn_fault_install(void)
{
	int rc;

	pthread_mutex_lock(&install_lock);
	rc = install_one(SIGSEGV, &prev_segv);
	if (rc == 0)
		rc = install_one(SIGBUS, &prev_bus);
	pthread_mutex_unlock(&install_lock);
	return rc;
}

/* After the jump: the handler ran with SIGSEGV / SIGBUS blocked and the jump skipped the
 * return that would unblock them (savesigs 0: no syscall per copy); unblock them here, or
 * the thread's next fault would kill the process without a handler. */
static void after_fault(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGSEGV);
	sigaddset(&s, SIGBUS);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
}

/* The signal fences keep the compiler from moving the copy's accesses out of the armed
 * window (the handler reads t_armed). */
bool rn_copy_guarded(void *dst, const void *src, size_t n)
{
	struct guard g;

	if (sigsetjmp(g.jb, 0) != 0) {
		after_fault();
		return false;
	}
	atomic_signal_fence(memory_order_seq_cst);
	t_armed = &g;
	atomic_signal_fence(memory_order_seq_cst);
	memcpy(dst, src, n);
	atomic_signal_fence(memory_order_seq_cst);
	t_armed = NULL;
	return true;
}

bool rn_call_guarded(void (*fn)(void *arg), void *arg)
{
	struct guard g;

	if (sigsetjmp(g.jb, 0) != 0) {
		after_fault();
		return false;
	}
	atomic_signal_fence(memory_order_seq_cst);
	t_armed = &g;
	atomic_signal_fence(memory_order_seq_cst);
	fn(arg);
	atomic_signal_fence(memory_order_seq_cst);
	t_armed = NULL;
	return true;
}

uint64_t rn_fault_count(void)
{
	return atomic_load_explicit(&faults, memory_order_relaxed);
}
