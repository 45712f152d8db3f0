/* Small synchronisation helpers shared by rn_event.c and rn_cq.c (internal to rnic/):
 * condition variables on CLOCK_MONOTONIC with millisecond timeouts, and an eventfd used as a
 * level-triggered "something is pending" flag. */
#ifndef RN_SYNC_H
#define RN_SYNC_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* A condvar timed on the monotonic clock, so wall-clock steps do not stretch timeouts. */
static inline int rn_cond_init(pthread_cond_t *c)
{
	pthread_condattr_t a;
	int rc;

	if (pthread_condattr_init(&a))
		return -1;
	rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC) || pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
	return rc ? -1 : 0;
}

/* Absolute monotonic deadline timeout_ms from now (only meaningful for timeout_ms > 0). */
static inline struct timespec rn_deadline(int timeout_ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += timeout_ms / 1000;
	t.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

/* One wait step: timeout_ms < 0 waits unbounded, 0 never waits (returns ETIMEDOUT),
 * > 0 waits until *dl. Returns 0 or ETIMEDOUT; callers re-check their predicate. */
static inline int rn_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, int timeout_ms,
			       const struct timespec *dl)
{
	if (timeout_ms == 0)
		return ETIMEDOUT;
	if (timeout_ms < 0)
		return pthread_cond_wait(c, m);
	return pthread_cond_timedwait(c, m, dl);
}

/* Make the eventfd readable (counter 0 -> 1). Callers only do it on the empty -> pending
 * edge, so the counter never saturates. */
static inline void rn_efd_raise(int fd)
{
	uint64_t one = 1;
	ssize_t n;

	do
		n = write(fd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
}

/* Reset the eventfd counter to 0 (not readable), never sleeping. The fds handed to
 * applications (completion channels, the async event fd) are blocking file descriptions,
 * because libibverbs lets the application choose blocking or non-blocking get-event calls
 * by setting O_NONBLOCK on them; so look before reading. Callers hold the lock that
 * serialises raise and clear, and applications only poll these fds, never read them. */
static inline void rn_efd_clear(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t v;
	ssize_t n;

	if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN))
		return;
	do
		n = read(fd, &v, sizeof(v));
	while (n < 0 && errno == EINTR);
}

/* Sleep until the eventfd is readable, as a blocking read() of the fd would in libibverbs:
 * timeout_ms < 0 waits unbounded, 0 never waits, > 0 until *dl. Returns 0 (readable, or
 * re-check), ETIMEDOUT, or EINTR when a signal handler ran: a pthread condvar wait is
 * never interrupted, so an application whose SIGALRM handler sets a "stop" flag (qperf)
 * would sleep on forever. Call without the lock; callers re-check their predicate. */
static inline int rn_efd_wait(int fd, int timeout_ms, const struct timespec *dl)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int ms = -1;

	if (timeout_ms == 0)
		return ETIMEDOUT;
	if (timeout_ms > 0) {
		struct timespec now;
		long long left;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (long long)(dl->tv_sec - now.tv_sec) * 1000 +
		       (dl->tv_nsec - now.tv_nsec) / 1000000;
		if (left <= 0)
			return ETIMEDOUT;
		ms = left > 0x7fffffff ? 0x7fffffff : (int)left;
	}
	if (poll(&p, 1, ms) < 0)
		return errno == EINTR ? EINTR : 0;
	return 0;
}

#endif
