/* librdmacm's rsocket API (<rdma/rsocket.h>, RDMACM_1.0) in librdmacm.so.1: softrnic does
 * not implement rsockets (a socket-like byte stream over RDMA; docs/dropin.md "Gaps"), so
 * rsocket() fails with ENOSYS and no descriptor is ever an rsocket: every call on one fails
 * with EBADF, as librdmacm answers for a descriptor that is not an rsocket. rpoll and rselect
 * accept ordinary descriptors too (rping and ucmatose use rpoll on their event channel's fd),
 * and every descriptor is ordinary here, so they are poll() and select(). */
#include <errno.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <rdma/rsocket.h>

int rsocket(int domain, int type, int protocol)
{
	(void)domain, (void)type, (void)protocol;
	errno = ENOSYS;
	return -1;
}

int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}

int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	    struct timeval *timeout)
{
	return select(nfds, readfds, writefds, exceptfds, timeout);
}

/* ---- calls on an rsocket: none exists ------------------------------------------------------ */
static int sv_not_rsocket(void)
{
	errno = EBADF;
	return -1;
}

/* The parameters are the API's; none is read: the descriptor is never an rsocket. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	return sv_not_rsocket();
}

int rlisten(int socket, int backlog)
{
	return sv_not_rsocket();
}

int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return sv_not_rsocket();
}

int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	return sv_not_rsocket();
}

int rshutdown(int socket, int how)
{
	return sv_not_rsocket();
}

int rclose(int socket)
{
	return sv_not_rsocket();
}

ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	return sv_not_rsocket();
}

ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
		  socklen_t *addrlen)
{
	return sv_not_rsocket();
}

ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	return sv_not_rsocket();
}

ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	return sv_not_rsocket();
}

ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
		const struct sockaddr *dest_addr, socklen_t addrlen)
{
	return sv_not_rsocket();
}

ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	return sv_not_rsocket();
}

ssize_t rread(int socket, void *buf, size_t count)
{
	return sv_not_rsocket();
}

ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	return sv_not_rsocket();
}

ssize_t rwrite(int socket, const void *buf, size_t count)
{
	return sv_not_rsocket();
}

ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	return sv_not_rsocket();
}

int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return sv_not_rsocket();
}

int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return sv_not_rsocket();
}

int rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	return sv_not_rsocket();
}

int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	return sv_not_rsocket();
}

int rfcntl(int socket, int cmd, ...)
{
	return sv_not_rsocket();
}

off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	return sv_not_rsocket();
}

int riounmap(int socket, void *buf, size_t len)
{
	return sv_not_rsocket();
}

/* riowrite's result is a size_t: librdmacm returns (size_t)-1 on an error before any byte. */
size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	return (size_t)sv_not_rsocket();
}
