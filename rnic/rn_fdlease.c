/* Descriptors shared between a stream's owner and the progress engine (rn_transport.h
 * "descriptor leases"). The engine used to register a dup() of each stream's fd so that the
 * owner could close its number at any time; that doubled the descriptors a QP costs, and a
 * process's open-file limit is what bounds the number of QPs. A lease keeps the number open
 * instead: the owner's close while the engine holds it only marks it, and the engine's last
 * release closes it. The number cannot be reused while held, so epoll and the engine's fd
 * table never see two files under one number.
 *
 * One table indexed by fd number, under one mutex: leases change when a stream is
 * registered or goes, never per message. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "rn_fdlease.h"
#include "rn_transport.h"

struct lease {
	unsigned holds;
	bool closing; /* the owner closed it while held: the last release closes */
};

static pthread_mutex_t lease_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lease *leases;   /* indexed by fd */
static size_t lease_cap;

/* Lock held: room for fd. */
static bool lease_grow(int fd)
{
	size_t cap = lease_cap ? lease_cap : 256;
	struct lease *t;

	while (cap <= (size_t)fd)
		cap *= 2;
	if (cap == lease_cap)
		return true;
	t = realloc(leases, cap * sizeof(*t));
	if (!t)
		return false;
	for (size_t i = lease_cap; i < cap; i++)
		t[i] = (struct lease){ 0 };
	leases = t;
	lease_cap = cap;
	return true;
}

int rn_fd_hold(int fd)
{
	int rc = 0;

	if (fd < 0)
		return -EBADF;
	pthread_mutex_lock(&lease_lock);
	if (lease_grow(fd))
		leases[fd].holds++;
	else
		rc = -ENOMEM;
	pthread_mutex_unlock(&lease_lock);
	return rc;
}

void rn_fd_release(int fd)
{
	bool close_now = false;

	if (fd < 0)
		return;
	pthread_mutex_lock(&lease_lock);
	if ((size_t)fd < lease_cap && leases[fd].holds > 0 && --leases[fd].holds == 0 &&
	    leases[fd].closing) {
		leases[fd].closing = false;
		close_now = true;
	}
	pthread_mutex_unlock(&lease_lock);
	if (close_now)
		close(fd);
}

void rn_fd_close(int fd)
{
	bool held = false;

	if (fd < 0)
		return;
	pthread_mutex_lock(&lease_lock);
	if ((size_t)fd < lease_cap && leases[fd].holds > 0) {
		leases[fd].closing = true;
		held = true;
	}
	pthread_mutex_unlock(&lease_lock);
	/* close() is not retried on EINTR: on Linux the descriptor is released either way. */
	if (!held)
		close(fd);
}

bool rn_fd_close_pending(int fd)
{
	bool pending;

	pthread_mutex_lock(&lease_lock);
	pending = fd >= 0 && (size_t)fd < lease_cap && leases[fd].closing;
	pthread_mutex_unlock(&lease_lock);
	return pending;
}
