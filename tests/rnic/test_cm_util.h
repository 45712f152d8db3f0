/* Helpers shared by the transport and CM tests (header-only, static). Every wait is bounded. */
#ifndef TEST_CM_UTIL_H
#define TEST_CM_UTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "rn_transport.h"

#include "../lib/t_util.h"

#define T_WAIT_MS 5000

static inline uint16_t t_port_of(const struct rn_conn *c)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (rn_conn_local_addr(c, (struct sockaddr *)&ss, &len) != 0)
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* Poll one handle; returns revents (0 on timeout). */
static inline short t_poll(const struct rn_conn *c, short events, int ms)
{
	struct pollfd p = { .fd = rn_conn_fd(c), .events = events };
	return poll(&p, 1, ms) > 0 ? p.revents : 0;
}

/* Accept one stream, waiting at most T_WAIT_MS. */
static inline int t_accept(struct rn_conn *l, struct rn_conn **out)
{
	long long end = t_now_ms() + T_WAIT_MS;
	int rc;
	while ((rc = rn_conn_accept(l, out)) == -EAGAIN && t_now_ms() < end)
		t_poll(l, POLLIN, 100);
	return rc;
}

/* Wait for connect to finish. */
static inline int t_connected(struct rn_conn *c)
{
	long long end = t_now_ms() + T_WAIT_MS;
	int rc;
	while ((rc = rn_conn_connect_status(c)) == -EINPROGRESS && t_now_ms() < end)
		t_poll(c, POLLOUT, 100);
	return rc;
}

/* Send all of buf (blocking, bounded). Returns 0 or the error. */
static inline int t_send_all(struct rn_conn *c, const void *buf, size_t len)
{
	long long end = t_now_ms() + T_WAIT_MS;
	size_t off = 0;
	while (off < len && t_now_ms() < end) {
		struct iovec iov = { (char *)buf + off, len - off };
		ssize_t n = rn_conn_sendv(c, &iov, 1);
		if (n == -EAGAIN) {
			t_poll(c, POLLOUT, 100);
			continue;
		}
		if (n < 0)
			return (int)n;
		off += (size_t)n;
	}
	return off == len ? 0 : -ETIMEDOUT;
}

/* Receive exactly len octets (bounded). Returns len, fewer at end of stream, or an error. */
static inline ssize_t t_recv_all(struct rn_conn *c, void *buf, size_t len)
{
	long long end = t_now_ms() + T_WAIT_MS;
	size_t off = 0;
	while (off < len && t_now_ms() < end) {
		ssize_t n = rn_conn_recv(c, (char *)buf + off, len - off);
		if (n == -EAGAIN) {
			t_poll(c, POLLIN, 100);
			continue;
		}
		if (n < 0)
			return n;
		if (n == 0)
			break;
		off += (size_t)n;
	}
	return (ssize_t)off;
}

/* Wait for end of stream or an error: returns 0 (EOF) or the negative error; -ETIMEDOUT if
 * neither came. Octets received before it are discarded and counted in *discarded. */
static inline int t_wait_end(struct rn_conn *c, size_t *discarded)
{
	long long end = t_now_ms() + T_WAIT_MS;
	char buf[512];
	if (discarded)
		*discarded = 0;
	while (t_now_ms() < end) {
		ssize_t n = rn_conn_recv(c, buf, sizeof(buf));
		if (n == -EAGAIN) {
			t_poll(c, POLLIN, 100);
			continue;
		}
		if (n <= 0)
			return (int)n;
		if (discarded)
			*discarded += (size_t)n;
	}
	return -ETIMEDOUT;
}

/* A connected pair over loopback (IPv4 or IPv6). Returns 0 or an error. */
static inline int t_pair(const struct sockaddr *la, socklen_t len, struct rn_conn **lis,
			 struct rn_conn **a, struct rn_conn **b)
{
	const struct rn_transport *t = rn_sock_transport();
	struct sockaddr_storage ss;
	int rc = rn_tp_listen(t, la, len, 8, lis);
	if (rc)
		return rc;
	memcpy(&ss, la, len);
	if (ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(t_port_of(*lis));
	else
		((struct sockaddr_in *)&ss)->sin_port = htons(t_port_of(*lis));
	rc = rn_tp_connect(t, (struct sockaddr *)&ss, len, a);
	if (rc)
		return rc;
	rc = t_accept(*lis, b);
	if (rc)
		return rc;
	return t_connected(*a);
}

#endif
