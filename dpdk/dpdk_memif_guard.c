/* dpdk_memif_guard: a memif server survives a client that closes before its hello
 * (dpdk_memif_guard.h says what goes wrong in DPDK 22.11 and why this mends it). */
/* An interrupt handle is opaque since DPDK 21.11 and its accessors are still experimental in
 * 22.11: the only way to name an fd to EAL's interrupt thread. */
#define ALLOW_EXPERIMENTAL_API 1

#include "dpdk_memif_guard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_interrupts.h>

/* Free fd numbers looked at per call. The one memif closed was the lowest free when it was
 * accepted; only fds other threads closed since can be lower. */
#define GUARD_FREE_LOOKS 64

struct dpdk_memif_guard {
	struct rte_intr_handle *listener; /* memif's listening fd: our callback joins its source */
	struct rte_intr_handle *probe;    /* asks EAL whether it has a source for an fd */
	int plug;                         /* an eventfd nobody writes: never readable */
};

/* Never registered: unregistering it only tells whether EAL has a source for the fd. */
static void never_called(void *arg)
{
	(void)arg;
}

static bool eal_has_source(struct dpdk_memif_guard *g, int fd)
{
	int rc;

	if (rte_intr_fd_set(g->probe, fd) != 0)
		return false;
	rc = rte_intr_callback_unregister(g->probe, never_called, g);
	return rc >= 0 || rc == -EAGAIN;
}

/* The lowest free number at or above fd is fd itself, atomically, or someone took it. */
static void plug_fd(struct dpdk_memif_guard *g, int fd)
{
	int got = fcntl(g->plug, F_DUPFD_CLOEXEC, fd);

	if (got == fd) {
		fprintf(stderr, "softrnic: memif: a client left before the server's hello; fd %d "
			"kept open so that DPDK's interrupt thread survives it (docs/dpdk.md)\n", fd);
		return;
	}
	if (got >= 0)
		close(got);
}

/* EAL's interrupt thread, right after memif_listener_handler and before the thread rebuilds
 * its epoll set: a closed fd with a source is the connection memif dropped. */
static void guard_after_accept(void *arg)
{
	struct dpdk_memif_guard *g = arg;
	long max = sysconf(_SC_OPEN_MAX);
	unsigned looks = 0;

	for (int fd = 0; fd < max && looks < GUARD_FREE_LOOKS; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		looks++;
		if (eal_has_source(g, fd))
			plug_fd(g, fd);
	}
}

/* A listening SOCK_SEQPACKET AF_UNIX socket bound to path (abstract or in the file system). */
static bool is_listener_at(int fd, const char *path)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	int type = 0, acc = 0;
	socklen_t il = sizeof(int);
	size_t plen = strlen(path), nlen;

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &il) != 0 || type != SOCK_SEQPACKET)
		return false;
	il = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &il) != 0 || !acc)
		return false;
	memset(&sa, 0, sizeof(sa));
	if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0 || sa.sun_family != AF_UNIX ||
	    len <= offsetof(struct sockaddr_un, sun_path))
		return false;
	nlen = len - offsetof(struct sockaddr_un, sun_path);
	if (sa.sun_path[0] == '\0') /* abstract: the name follows the zero, unterminated */
		return nlen - 1 == plen && memcmp(sa.sun_path + 1, path, plen) == 0;
	return strncmp(sa.sun_path, path, sizeof(sa.sun_path)) == 0;
}

static int find_listener(const char *path)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1;

	if (d == NULL)
		return -1;
	while (found < 0 && (e = readdir(d)) != NULL) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (*end == '\0' && end != e->d_name && fd != dirfd(d) &&
		    is_listener_at((int)fd, path))
			found = (int)fd;
	}
	closedir(d);
	return found;
}

static struct rte_intr_handle *ext_handle(int fd)
{
	struct rte_intr_handle *h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);

	if (h != NULL && (rte_intr_fd_set(h, fd) != 0 ||
			  rte_intr_type_set(h, RTE_INTR_HANDLE_EXT) != 0)) {
		rte_intr_instance_free(h);
		h = NULL;
	}
	return h;
}

static void guard_free(struct dpdk_memif_guard *g)
{
	rte_intr_instance_free(g->listener);
	rte_intr_instance_free(g->probe);
	if (g->plug >= 0)
		close(g->plug); /* the plugs are dups: they stay */
	free(g);
}

struct dpdk_memif_guard *dpdk_memif_guard_arm(const char *path)
{
	struct dpdk_memif_guard *g = calloc(1, sizeof(*g));
	int lfd = find_listener(path);

	if (g == NULL)
		return NULL;
	g->plug = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (lfd >= 0 && g->plug >= 0) {
		g->listener = ext_handle(lfd);
		g->probe = ext_handle(lfd);
	}
	if (g->listener == NULL || g->probe == NULL ||
	    rte_intr_callback_register(g->listener, guard_after_accept, g) != 0) {
		guard_free(g);
		return NULL;
	}
	return g;
}

void dpdk_memif_guard_disarm(struct dpdk_memif_guard *g)
{
	if (g == NULL)
		return;
	/* -EAGAIN while the interrupt thread runs the listener's callbacks: wait it out */
	struct timespec ms = { .tv_sec = 0, .tv_nsec = 1000000L };

	while (rte_intr_callback_unregister(g->listener, guard_after_accept, g) == -EAGAIN)
		nanosleep(&ms, NULL);
	guard_free(g);
}
