/* rn_fault: reads and writes of registered memory that a fault cannot turn into a crash.
 *
 * Registration checks that the range is mapped (rn_mem_mr.c), but the application may unmap
 * or mprotect it later, while the MR stays registered; a peer's Write or Read, or a local
 * Send, then touches memory that is gone. A kernel RNIC fails such an access; softrnic runs
 * in the application's process, where the same access is a SIGSEGV (or SIGBUS: a truncated
 * file mapping). So every copy into or out of registered memory that the RNIC makes itself
 * goes through a guard: sigsetjmp before it, a per-thread pointer to the armed guard, and a
 * process-wide SIGSEGV / SIGBUS handler that jumps back for a fault in an armed thread. The
 * copy then reports failure and the caller turns it into a protection error (Terminate,
 * async event or completion error). Any other fault goes to the handler installed before
 * ours (or the default action, a core dump), as if the guard were not there; the approach is
 * dpdk/dpdk_fault.c's.
 *
 * Cost on the data path: sigsetjmp with savemask 0 (no syscall) and two thread-local stores
 * per copy. A handler installed after ours that does not chain to it defeats the guard. */
#ifndef RN_FAULT_H
#define RN_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Installs the handler unless it is already the current one (rn_qp_create calls it); it
 * chains to the one it replaces. 0, or -errno. */
int rn_fault_install(void);

/* memcpy(dst, src, n) under the guard: true, or false when it faulted (part copied). */
bool rn_copy_guarded(void *dst, const void *src, size_t n);

/* fn(arg) under the guard: true, or false when it faulted. fn must only read or write memory
 * (no locks, no allocation, nothing left half-done if it stops anywhere). */
bool rn_call_guarded(void (*fn)(void *arg), void *arg);

/* Copies cut short by a fault so far, in this process. */
uint64_t rn_fault_count(void);

#endif
