/* Kernel TCP socket transport (rn_transport.h): non-blocking sockets, TCP_NODELAY and
 * keepalive on every stream, SO_REUSEADDR on listeners, IPv4 and IPv6. Needs no privilege;
 * works on loopback and across network namespaces. EINTR is retried, EAGAIN/EWOULDBLOCK becomes -EAGAIN, and sends
 * use MSG_NOSIGNAL so a dead peer gives -EPIPE instead of SIGPIPE. */
#include "rn_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

enum sock_kind {
	SOCK_LISTENER,
	SOCK_CONNECTING, /* connect() returned EINPROGRESS, result not seen yet */
	SOCK_STREAM_UP,  /* connected (accepted, or connect finished) */
	SOCK_FAILED,     /* connect failed: err */
};

struct rn_sock_conn {
	struct rn_conn base; /* first: handles are cast back */
	int fd;
	enum sock_kind kind;
	int err; /* SOCK_FAILED: negative errno */
};

static const struct rn_transport_ops sock_ops;

static struct rn_sock_conn *to_sock(const struct rn_conn *c)
{
	return (struct rn_sock_conn *)c;
}

static int neg_errno(void)
{
	if (errno == EWOULDBLOCK)
		return -EAGAIN;
	return errno > 0 ? -errno : -EIO;
}

static int wrap_fd(int fd, enum sock_kind kind, struct rn_conn **out)
{
	struct rn_sock_conn *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		close(fd);
		return -ENOMEM;
	}
	s->base.ops = &sock_ops;
	s->fd = fd;
	s->kind = kind;
	*out = &s->base;
	return 0;
}

static int new_socket(const struct sockaddr *addr, socklen_t len)
{
	if (addr == NULL || len < (socklen_t)sizeof(sa_family_t))
		return -EINVAL;
	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	return fd < 0 ? neg_errno() : fd;
}

static int set_int_opt(int fd, int level, int name, int val)
{
	return setsockopt(fd, level, name, &val, sizeof(val)) < 0 ? neg_errno() : 0;
}

static struct {
	_Atomic unsigned idle_s, intvl_s, probes;
} sock_ka = { RN_SOCK_KA_IDLE_S, RN_SOCK_KA_INTVL_S, RN_SOCK_KA_PROBES };

int rn_sock_set_keepalive(unsigned idle_s, unsigned intvl_s, unsigned probes)
{
	if (idle_s && (!intvl_s || !probes || idle_s > RN_SOCK_KA_IDLE_MAX ||
		       intvl_s > RN_SOCK_KA_INTVL_MAX || probes > RN_SOCK_KA_PROBES_MAX))
		return -EINVAL;
	atomic_store(&sock_ka.idle_s, idle_s);
	atomic_store(&sock_ka.intvl_s, intvl_s);
	atomic_store(&sock_ka.probes, probes);
	return 0;
}

/* Every stream: no Nagle (an RNIC sends whole FPDUs), and keepalive with a user timeout of
 * the same length, so a peer that vanished ends the stream whether or not data is out. */
static int stream_opts(int fd)
{
	unsigned idle = atomic_load(&sock_ka.idle_s), intvl = atomic_load(&sock_ka.intvl_s);
	unsigned probes = atomic_load(&sock_ka.probes);
	int rc = set_int_opt(fd, IPPROTO_TCP, TCP_NODELAY, 1);

	if (rc != 0 || idle == 0)
		return rc;
	rc = set_int_opt(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
	if (rc == 0)
		rc = set_int_opt(fd, IPPROTO_TCP, TCP_KEEPIDLE, (int)idle);
	if (rc == 0)
		rc = set_int_opt(fd, IPPROTO_TCP, TCP_KEEPINTVL, (int)intvl);
	if (rc == 0)
		rc = set_int_opt(fd, IPPROTO_TCP, TCP_KEEPCNT, (int)probes);
	if (rc == 0)
		rc = set_int_opt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT,
				 (int)((idle + intvl * probes) * 1000u));
	return rc;
}

static int sock_listen(const struct rn_transport *t, const struct sockaddr *addr, socklen_t len,
		       int backlog, struct rn_conn **out)
{
	(void)t;
	int fd = new_socket(addr, len);
	if (fd < 0)
		return fd;
	int rc = set_int_opt(fd, SOL_SOCKET, SO_REUSEADDR, 1);
	if (rc == 0 && bind(fd, addr, len) < 0)
		rc = neg_errno();
	if (rc == 0 && listen(fd, backlog) < 0)
		rc = neg_errno();
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return wrap_fd(fd, SOCK_LISTENER, out);
}

static int sock_accept(struct rn_conn *listener, struct rn_conn **out)
{
	struct rn_sock_conn *l = to_sock(listener);
	int fd;

	if (l->kind != SOCK_LISTENER)
		return -EINVAL;
	do {
		fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	} while (fd < 0 && (errno == EINTR || errno == ECONNABORTED));
	if (fd < 0)
		return neg_errno();
	int rc = stream_opts(fd);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return wrap_fd(fd, SOCK_STREAM_UP, out);
}

/* connect() on a non-blocking socket is not restarted after EINTR: the attempt goes on in
 * the background, exactly as after EINPROGRESS. */
static int sock_connect(const struct rn_transport *t, const struct sockaddr *addr,
			socklen_t len, struct rn_conn **out)
{
	(void)t;
	int fd = new_socket(addr, len);
	if (fd < 0)
		return fd;
	int rc = stream_opts(fd);
	enum sock_kind kind = SOCK_STREAM_UP;
	if (rc == 0 && connect(fd, addr, len) < 0) {
		if (errno == EINPROGRESS || errno == EINTR)
			kind = SOCK_CONNECTING;
		else
			rc = neg_errno();
	}
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return wrap_fd(fd, kind, out);
}

static int sock_connect_status(struct rn_conn *c)
{
	struct rn_sock_conn *s = to_sock(c);

	switch (s->kind) {
	case SOCK_LISTENER:
		return -EINVAL;
	case SOCK_STREAM_UP:
		return 0;
	case SOCK_FAILED:
		return s->err;
	case SOCK_CONNECTING:
		break;
	}
	struct pollfd p = { .fd = s->fd, .events = POLLOUT };
	int n = poll(&p, 1, 0);
	if (n < 0)
		return errno == EINTR ? -EINPROGRESS : neg_errno();
	if (n == 0)
		return -EINPROGRESS;
	int err = 0;
	socklen_t elen = sizeof(err);
	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
		err = errno;
	if (err == 0) {
		s->kind = SOCK_STREAM_UP;
		return 0;
	}
	s->kind = SOCK_FAILED;
	s->err = -err;
	return s->err;
}

static ssize_t sock_sendv(struct rn_conn *c, const struct iovec *iov, unsigned iovcnt)
{
	struct rn_sock_conn *s = to_sock(c);
	struct msghdr msg = {
		.msg_iov = (struct iovec *)iov,
		.msg_iovlen = iovcnt > IOV_MAX ? IOV_MAX : iovcnt, /* partial send is allowed */
	};
	ssize_t n;

	if (s->kind == SOCK_LISTENER)
		return -EINVAL;
	if (iovcnt > 0 && iov == NULL)
		return -EINVAL;
	do {
		n = sendmsg(s->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		int rc = neg_errno();
		/* Still connecting: the stream is simply not writable yet. */
		return (rc == -ENOTCONN && s->kind == SOCK_CONNECTING) ? -EAGAIN : rc;
	}
	return n;
}

static ssize_t sock_recv(struct rn_conn *c, void *buf, size_t len)
{
	struct rn_sock_conn *s = to_sock(c);
	ssize_t n;

	if (s->kind == SOCK_LISTENER)
		return -EINVAL;
	if (len == 0)
		return -EINVAL; /* 0 is reserved for end of stream */
	do {
		n = recv(s->fd, buf, len, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		int rc = neg_errno();
		return (rc == -ENOTCONN && s->kind == SOCK_CONNECTING) ? -EAGAIN : rc;
	}
	return n;
}

static int sock_shutdown_write(struct rn_conn *c)
{
	struct rn_sock_conn *s = to_sock(c);

	if (s->kind == SOCK_LISTENER)
		return -EINVAL;
	return shutdown(s->fd, SHUT_WR) < 0 ? neg_errno() : 0;
}

static void sock_free(struct rn_sock_conn *s)
{
	rn_fd_close(s->fd); /* the engine may still watch it (rn_transport.h) */
	free(s);
}

static void sock_close(struct rn_conn *c)
{
	sock_free(to_sock(c));
}

static void sock_abort(struct rn_conn *c)
{
	struct rn_sock_conn *s = to_sock(c);
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	(void)setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	sock_free(s);
}

static int sock_fd(const struct rn_conn *c)
{
	return to_sock(c)->fd;
}

static int sock_local_addr(const struct rn_conn *c, struct sockaddr *addr, socklen_t *len)
{
	return getsockname(to_sock(c)->fd, addr, len) < 0 ? neg_errno() : 0;
}

static int sock_peer_addr(const struct rn_conn *c, struct sockaddr *addr, socklen_t *len)
{
	return getpeername(to_sock(c)->fd, addr, len) < 0 ? neg_errno() : 0;
}

/* The kernel's current MSS for the connection (path MTU and TCP options already taken off;
 * 65483 on loopback, 1448 on Ethernet with timestamps). */
static int sock_mss(const struct rn_conn *c)
{
	int v = 0;
	socklen_t len = sizeof(v);

	if (getsockopt(to_sock(c)->fd, IPPROTO_TCP, TCP_MAXSEG, &v, &len) < 0)
		return neg_errno();
	return v > 0 ? v : -EINVAL;
}

static const struct rn_transport_ops sock_ops = {
	.name = "sock",
	.listen = sock_listen,
	.accept = sock_accept,
	.connect = sock_connect,
	.connect_status = sock_connect_status,
	.sendv = sock_sendv,
	.recv = sock_recv,
	.shutdown_write = sock_shutdown_write,
	.close = sock_close,
	.abort = sock_abort,
	.fd = sock_fd,
	.local_addr = sock_local_addr,
	.peer_addr = sock_peer_addr,
	.mss = sock_mss,
};

static const struct rn_transport sock_transport = { .ops = &sock_ops, .ctx = NULL };

const struct rn_transport *rn_sock_transport(void)
{
	return &sock_transport;
}
