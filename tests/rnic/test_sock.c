/* Kernel socket transport (rnic/rn_sock.c) over loopback. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include <signal.h>
#include <unistd.h>

#include "test_cm_util.h"

static void close_all(struct rn_conn *l, struct rn_conn *a, struct rn_conn *b)
{
	if (l)
		rn_conn_close(l);
	if (a)
		rn_conn_close(a);
	if (b)
		rn_conn_close(b);
}

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 131u + (i >> 13));
}

/* Push `total` octets from a to b in one thread: a offers everything left in three iovecs of
 * odd sizes each time (so the kernel must accept partially), b drains in odd-sized reads. */
static void bulk(struct rn_conn *a, struct rn_conn *b, size_t total)
{
	uint8_t *src = malloc(total), rbuf[7777];
	size_t sent = 0, got = 0, partial = 0;
	long long end = t_now_ms() + 20000;

	assert_non_null(src);
	for (size_t i = 0; i < total; i++)
		src[i] = pattern(i);
	while (got < total && t_now_ms() < end) {
		if (sent < total) {
			size_t left = total - sent, p1 = left / 3, p2 = left / 5;
			struct iovec iov[3] = { { src + sent, p1 }, { src + sent + p1, p2 },
						{ src + sent + p1 + p2, left - p1 - p2 } };
			ssize_t n = rn_conn_sendv(a, iov, 3);
			assert_true(n > 0 || n == -EAGAIN);
			if (n > 0) {
				if ((size_t)n < left)
					partial++;
				sent += (size_t)n;
			}
		}
		ssize_t m = rn_conn_recv(b, rbuf, sizeof(rbuf) - (got % 13));
		assert_true(m > 0 || m == -EAGAIN);
		for (ssize_t i = 0; i < m; i++)
			assert_int_equal(rbuf[i], pattern(got + (size_t)i));
		if (m > 0)
			got += (size_t)m;
		if (m == -EAGAIN) {
			struct pollfd p[2] = { { rn_conn_fd(a), sent < total ? POLLOUT : 0, 0 },
					       { rn_conn_fd(b), POLLIN, 0 } };
			poll(p, 2, 100);
		}
	}
	assert_int_equal(got, total);
	assert_true(partial > 0); /* the transport did accept partially */
	free(src);
}

static void test_bulk_v4(void **state)
{
	(void)state;
	struct rn_conn *l = NULL, *a = NULL, *b = NULL;
	struct sockaddr_in la = t_addr4("127.0.0.1", 0);

	assert_int_equal(t_pair((struct sockaddr *)&la, sizeof(la), &l, &a, &b), 0);
	bulk(a, b, 16u << 20);
	bulk(b, a, 16u << 20); /* and the other way */
	close_all(l, a, b);
}

static void test_bulk_v6(void **state)
{
	(void)state;
	struct rn_conn *l = NULL, *a = NULL, *b = NULL;
	struct sockaddr_in6 la;

	memset(&la, 0, sizeof(la));
	la.sin6_family = AF_INET6;
	la.sin6_addr = in6addr_loopback;
	int rc = t_pair((struct sockaddr *)&la, sizeof(la), &l, &a, &b);
	if (rc == -EAFNOSUPPORT || rc == -EADDRNOTAVAIL) {
		close_all(l, a, b);
		skip(); /* no IPv6 on this host */
	}
	assert_int_equal(rc, 0);
	struct sockaddr_in6 pa;
	socklen_t plen = sizeof(pa);
	assert_int_equal(rn_conn_peer_addr(b, (struct sockaddr *)&pa, &plen), 0);
	assert_int_equal(pa.sin6_family, AF_INET6);
	assert_memory_equal(&pa.sin6_addr, &in6addr_loopback, sizeof(pa.sin6_addr));
	bulk(a, b, 16u << 20);
	close_all(l, a, b);
}

static void test_fin(void **state)
{
	(void)state;
	struct rn_conn *l = NULL, *a = NULL, *b = NULL;
	struct sockaddr_in la = t_addr4("127.0.0.1", 0);
	char buf[16];

	assert_int_equal(t_pair((struct sockaddr *)&la, sizeof(la), &l, &a, &b), 0);
	assert_int_equal(t_send_all(a, "hello", 5), 0);
	assert_int_equal(rn_conn_shutdown_write(a), 0);
	assert_int_equal(t_recv_all(b, buf, 5), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(t_recv_all(b, buf, 1), 0); /* FIN: end of stream, not an error */
	assert_int_equal(rn_conn_recv(b, buf, 1), 0);
	/* the half-closed side still receives */
	assert_int_equal(t_send_all(b, "back", 4), 0);
	assert_int_equal(t_recv_all(a, buf, 4), 4);
	assert_memory_equal(buf, "back", 4);
	close_all(l, a, b);
}

static void test_rst(void **state)
{
	(void)state;
	struct rn_conn *l = NULL, *a = NULL, *b = NULL;
	struct sockaddr_in la = t_addr4("127.0.0.1", 0);
	char buf[16];

	assert_int_equal(t_pair((struct sockaddr *)&la, sizeof(la), &l, &a, &b), 0);
	assert_int_equal(t_send_all(a, "x", 1), 0);
	rn_conn_abort(a);
	/* The octet sent before the RST may or may not still be readable; then the reset. */
	assert_int_equal(t_wait_end(b, NULL), -ECONNRESET);
	/* Sending into a reset stream fails with an error, never SIGPIPE. */
	struct iovec iov = { buf, sizeof(buf) };
	ssize_t n = rn_conn_sendv(b, &iov, 1);
	assert_true(n == -EPIPE || n == -ECONNRESET);
	close_all(l, NULL, b);
}

static void test_sigpipe_after_peer_close(void **state)
{
	(void)state;
	struct rn_conn *l = NULL, *a = NULL, *b = NULL;
	struct sockaddr_in la = t_addr4("127.0.0.1", 0);
	static char big[1 << 16];

	assert_int_equal(t_pair((struct sockaddr *)&la, sizeof(la), &l, &a, &b), 0);
	rn_conn_close(a);
	/* First sends may still be accepted; the RST they provoke makes later ones fail. */
	ssize_t n = 1;
	long long end = t_now_ms() + T_WAIT_MS;
	while (n > 0 && t_now_ms() < end) {
		struct iovec iov = { big, sizeof(big) };
		n = rn_conn_sendv(b, &iov, 1);
		if (n == -EAGAIN) {
			t_poll(b, POLLOUT, 50);
			n = 1;
		}
	}
	assert_true(n == -EPIPE || n == -ECONNRESET);
	close_all(l, NULL, b);
}

static void test_refused(void **state)
{
	(void)state;
	const struct rn_transport *t = rn_sock_transport();
	struct rn_conn *l = NULL, *c = NULL;
	struct sockaddr_in la = t_addr4("127.0.0.1", 0);

	/* find a free port, then close it */
	assert_int_equal(rn_tp_listen(t, (struct sockaddr *)&la, sizeof(la), 1, &l), 0);
	struct sockaddr_in ca = t_addr4("127.0.0.1", t_port_of(l));
	rn_conn_close(l);
	int rc = rn_tp_connect(t, (struct sockaddr *)&ca, sizeof(ca), &c);
	if (rc == 0) {
		rc = t_connected(c);
		assert_int_equal(rn_conn_connect_status(c), rc); /* stable */
		rn_conn_close(c);
	}
	assert_int_equal(rc, -ECONNREFUSED);
}

static void test_accept_and_addresses(void **state)
{
	(void)state;
	const struct rn_transport *t = rn_sock_transport();
	struct rn_conn *l = NULL, *a = NULL, *b = NULL, *none = NULL;
	struct sockaddr_in la = t_addr4("127.0.0.1", 0);
	struct sockaddr_in x, y;
	socklen_t xl = sizeof(x), yl = sizeof(y);

	assert_int_equal(rn_tp_listen(t, (struct sockaddr *)&la, sizeof(la), 4, &l), 0);
	assert_string_equal(t->ops->name, "sock");
	assert_int_equal(rn_conn_accept(l, &none), -EAGAIN);
	assert_null(none);
	/* stream operations on a listener are refused */
	struct iovec iov = { "z", 1 };
	assert_int_equal(rn_conn_sendv(l, &iov, 1), -EINVAL);
	assert_int_equal(rn_conn_recv(l, &x, 1), -EINVAL);
	rn_conn_close(l);
	assert_int_equal(t_pair((struct sockaddr *)&la, sizeof(la), &l, &a, &b), 0);
	assert_int_equal(rn_conn_local_addr(a, (struct sockaddr *)&x, &xl), 0);
	assert_int_equal(rn_conn_peer_addr(b, (struct sockaddr *)&y, &yl), 0);
	assert_int_equal(x.sin_port, y.sin_port);
	assert_int_equal(x.sin_addr.s_addr, y.sin_addr.s_addr);
	assert_int_equal(rn_conn_connect_status(b), 0);
	/* nothing to read yet */
	char c;
	assert_int_equal(rn_conn_recv(a, &c, 1), -EAGAIN);
	/* the same port can be listened on again right after close (SO_REUSEADDR) */
	uint16_t port = t_port_of(l);
	close_all(l, a, b);
	struct sockaddr_in again = t_addr4("127.0.0.1", port);
	assert_int_equal(rn_tp_listen(t, (struct sockaddr *)&again, sizeof(again), 4, &l), 0);
	rn_conn_close(l);
}

int main(void)
{
	signal(SIGPIPE, SIG_DFL); /* a raised SIGPIPE kills the test: it must never come */
	alarm(60);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bulk_v4),
		cmocka_unit_test(test_bulk_v6),
		cmocka_unit_test(test_fin),
		cmocka_unit_test(test_rst),
		cmocka_unit_test(test_sigpipe_after_peer_close),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_accept_and_addresses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
