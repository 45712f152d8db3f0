/* The rn_transport over softrnic's TCP engine (dpdk/dpdk_transport.h) between two DPDK ports of one
 * process: two net_memif ports (server and client role on one socket in a temp dir), each
 * with its own stack and poll thread. Listen, connect, sendv/recv both ways with the fds'
 * readiness seen through poll(), EOF, abort -> ECONNRESET, refused connect, record mode;
 * port A sends by reference (key tx_refs): release in order, and a deregistration's copy-out
 * before the memory is unmapped.
 * Exits 77 (skip) when DPDK cannot start here. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include <rte_mbuf.h>

#include "dpdk_transport.h"
#include "rnic.h"
#include "tcp.h"

#define IP_A "198.51.100.1"
#define IP_B "198.51.100.2"
#define WAIT_MS 10000

static char dir[64];
static struct dpdk_port *port_a, *port_b;
static const struct rn_transport *tp_a, *tp_b;

/* ---- helpers ------------------------------------------------------------------------------ */
static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* true when c's fd turns readable within ms (ready_as_readable: readable stands for every
 * change, its writability means nothing). */
static bool wait_ready(struct rn_conn *c, int ms)
{
	struct pollfd p = { .fd = rn_conn_fd(c), .events = POLLIN };
	int n = poll(&p, 1, ms);

	assert_true(rn_conn_ready_as_readable(c));
	assert_true(n >= 0);
	return n == 1 && (p.revents & POLLIN);
}

static struct sockaddr_in in4(const char *ip, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	assert_int_equal(inet_pton(AF_INET, ip, &a.sin_addr), 1);
	return a;
}

static struct rn_conn *listen_b(uint16_t *port)
{
	struct sockaddr_in any = in4("0.0.0.0", 0), got;
	socklen_t len = sizeof(got);
	struct rn_conn *l;

	assert_int_equal(rn_tp_listen(tp_b, (struct sockaddr *)&any, sizeof(any), 8, &l), 0);
	assert_int_equal(rn_conn_local_addr(l, (struct sockaddr *)&got, &len), 0);
	assert_int_equal(got.sin_addr.s_addr, in4(IP_B, 0).sin_addr.s_addr);
	assert_int_not_equal(got.sin_port, 0);
	*port = ntohs(got.sin_port);
	return l;
}

/* A connected pair: *a on port A (active), *b on port B (accepted). */
static void pair(struct rn_conn **a, struct rn_conn **b)
{
	uint16_t port;
	struct rn_conn *l = listen_b(&port);
	struct sockaddr_in dst = in4(IP_B, port);
	uint64_t end = now_ms() + WAIT_MS;
	int st;

	assert_false(wait_ready(l, 0));
	assert_int_equal(rn_tp_connect(tp_a, (struct sockaddr *)&dst, sizeof(dst), a), 0);
	while ((st = rn_conn_connect_status(*a)) == -EINPROGRESS && now_ms() < end)
		wait_ready(*a, 100);
	assert_int_equal(st, 0);
	assert_int_equal(rn_conn_connect_status(*a), 0); /* stable */
	assert_true(wait_ready(l, WAIT_MS));
	assert_int_equal(rn_conn_accept(l, b), 0);
	assert_int_equal(rn_conn_connect_status(*b), 0);
	rn_conn_close(l);

	struct sockaddr_in pa, la;
	socklen_t len = sizeof(pa);
	assert_int_equal(rn_conn_peer_addr(*b, (struct sockaddr *)&pa, &len), 0);
	len = sizeof(la);
	assert_int_equal(rn_conn_local_addr(*a, (struct sockaddr *)&la, &len), 0);
	assert_int_equal(pa.sin_addr.s_addr, la.sin_addr.s_addr);
	assert_int_equal(pa.sin_port, la.sin_port);
	assert_true(rn_conn_mss(*a) >= 536 && rn_conn_mss(*a) <= 1460);
}

static uint8_t pattern(size_t i, unsigned seed)
{
	return (uint8_t)(i * 131u + seed + (i >> 11));
}

/* Send n pattern octets from s while r receives and checks them (one thread, both sides
 * non-blocking: waits on the fds). */
static void transfer(struct rn_conn *s, struct rn_conn *r, size_t n, unsigned seed)
{
	static uint8_t out[65536], in[40000];
	size_t sent = 0, got = 0;
	uint64_t end = now_ms() + 4 * WAIT_MS;

	while (got < n) {
		assert_true(now_ms() < end);
		if (sent < n) {
			size_t k = n - sent < sizeof(out) ? n - sent : sizeof(out);
			for (size_t i = 0; i < k; i++)
				out[i] = pattern(sent + i, seed);
			struct iovec iov[2] = { { out, k / 3 }, { out + k / 3, k - k / 3 } };
			ssize_t w = rn_conn_sendv(s, iov, 2);
			if (w > 0)
				sent += (size_t)w;
			else
				assert_int_equal(w, -EAGAIN);
		}
		ssize_t m = rn_conn_recv(r, in, sizeof(in));
		if (m > 0) {
			for (ssize_t i = 0; i < m; i++)
				assert_int_equal(in[i], pattern(got + (size_t)i, seed));
			got += (size_t)m;
		} else {
			assert_int_equal(m, -EAGAIN);
			struct pollfd p[2] = { { rn_conn_fd(r), POLLIN, 0 }, { rn_conn_fd(s), POLLIN, 0 } };
			assert_true(poll(p, 2, 100) >= 0);
		}
	}
	assert_int_equal(sent, n);
}

/* ---- tests ------------------------------------------------------------------------------ */
static void test_data_both_ways(void **state)
{
	struct rn_conn *a, *b;
	uint8_t buf[16];
	(void)state;

	pair(&a, &b);
	assert_int_equal(rn_conn_recv(b, buf, sizeof(buf)), -EAGAIN);
	assert_int_equal(rn_conn_recv(b, buf, 0), -EINVAL);
	transfer(a, b, 3u << 20, 1); /* 3 MiB: more than the send and receive buffers */
	/* less than b's send buffer, in 64 KiB sends: b's last sendv takes everything and leaves
	 * room whatever the peer acknowledged by then (with 1 MiB from b into a 1 MiB buffer,
	 * the last send could fill it, and readiness waited for an ACK: 3 failures in 15 runs) */
	transfer(b, a, TCP_BUF_DEFAULT / 2, 2);
	/* b sent last with room left: ready (a socket would be writable) until it tries again;
	 * a recv with nothing to read ends that, and b is quiet */
	assert_true(wait_ready(b, 0));
	assert_int_equal(rn_conn_recv(b, buf, sizeof(buf)), -EAGAIN);
	assert_false(wait_ready(b, 0));
	assert_false(wait_ready(a, 0)); /* a read everything and sent nothing since */
	rn_conn_close(a);
	rn_conn_close(b);
}

/* Send space: after a partial or refused sendv, the sender's fd turns readable once the
 * receiver has made room, and not before. */
static void test_send_space(void **state)
{
	static uint8_t big[1 << 20], in[65536];
	struct rn_conn *a, *b;
	ssize_t w;
	(void)state;

	pair(&a, &b);
	memset(big, 0x5a, sizeof(big));
	struct iovec iov = { big, sizeof(big) };
	/* fill the sender's buffer and the receiver's window: send until a refused or partial
	 * sendv is followed by 300 ms without readiness (b reads nothing meanwhile) */
	uint64_t stop = now_ms() + WAIT_MS;
	do {
		do {
			w = rn_conn_sendv(a, &iov, 1);
		} while (w == (ssize_t)sizeof(big));
		assert_true(w == -EAGAIN || (w > 0 && w < (ssize_t)sizeof(big)));
		assert_true(now_ms() < stop);
	} while (wait_ready(a, 300));
	assert_false(wait_ready(a, 0));
	uint64_t end = now_ms() + WAIT_MS;
	bool ready = false;
	while (!ready && now_ms() < end) {
		ssize_t n = rn_conn_recv(b, in, sizeof(in));
		if (n < 0)
			wait_ready(b, 20);
		ready = wait_ready(a, 0);
	}
	assert_true(ready);
	rn_conn_abort(a);
	rn_conn_abort(b);
}

/* Receive n pattern octets (seed) on r, checking each. */
static void drain_check(struct rn_conn *r, size_t n, unsigned seed)
{
	static uint8_t in[65536];
	size_t got = 0;
	uint64_t end = now_ms() + 4 * WAIT_MS;

	while (got < n) {
		ssize_t m = rn_conn_recv(r, in, sizeof(in));

		assert_true(now_ms() < end);
		if (m <= 0) {
			assert_int_equal(m, -EAGAIN);
			wait_ready(r, 50);
			continue;
		}
		for (ssize_t i = 0; i < m; i++)
			assert_int_equal(in[i], pattern(got + (size_t)i, seed));
		got += (size_t)m;
	}
}

/* The last batch released on c, waiting (bounded) until it reaches want. */
static uint64_t released_by(struct rn_conn *c, uint64_t want)
{
	uint64_t end = now_ms() + WAIT_MS, r;

	while ((r = rn_conn_ref_released(c)) < want && now_ms() < end)
		wait_ready(c, 20);
	return r;
}

/* Zero-copy transmit: a header copied and the payload referenced, released in order once
 * acknowledged. Then with B not reading, what A still holds (its send buffer behind B's
 * closed window) is copied out by a deregistration (rn_mem holder): the memory is unmapped
 * right after, and B still receives every octet as it was. */
static void test_send_ref(void **state)
{
	const size_t chunk = 60000, total = 12u << 20; /* more than both buffers grown (4 MiB) */
	struct rn_mem_limits lim = { .max_pd = 1, .max_mr = 4, .max_mw = 1, .max_pbl = 4 };
	struct dpdk_tp_stats st0, st1;
	struct rn_conn *a, *b;
	struct rn_mem *mem;
	uint32_t pd;
	rn_stag_t mr;
	uint64_t batch = 0;
	size_t sent = 0;
	uint8_t hdr[16];
	bool held = false;
	(void)state;

	uint8_t *buf = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(buf != MAP_FAILED);
	memset(hdr, 0, sizeof(hdr));
	pair(&a, &b);
	assert_true(rn_conn_can_ref(a));
	assert_false(rn_conn_can_ref(b)); /* port B copies (tx_refs off) */
	/* one batch, released after the ACK */
	for (size_t i = 0; i < chunk; i++)
		buf[i] = pattern(sizeof(hdr) + i, 3);
	for (size_t i = 0; i < sizeof(hdr); i++)
		hdr[i] = pattern(i, 3);
	struct iovec iov2[2] = { { hdr, sizeof(hdr) }, { buf, chunk } };
	bool ref2[2] = { false, true };
	assert_int_equal(rn_conn_sendv_ref(a, iov2, 2, ref2, 1, &held), (ssize_t)(chunk + 16));
	assert_true(held);
	memset(hdr, 0xee, sizeof(hdr)); /* copied: free to change */
	drain_check(b, chunk + 16, 3);
	assert_int_equal(released_by(a, 1), 1);
	batch = 1;
	/* fill A's send buffer behind B's window, by reference, from buf */
	for (size_t i = 0; i < total; i++)
		buf[i] = pattern(i, 4);
	uint64_t end = now_ms() + WAIT_MS;
	while (sent < total && now_ms() < end) {
		size_t k = total - sent < chunk ? total - sent : chunk;
		struct iovec iov = { buf + sent, k };
		bool ref = true;
		ssize_t w = rn_conn_sendv_ref(a, &iov, 1, &ref, batch + 1, &held);

		if (w > 0) {
			sent += (size_t)w;
			assert_true(held);
			batch++;
		} else {
			assert_int_equal(w, -EAGAIN);
			if (!wait_ready(a, 300))
				break; /* no more room: B's window and A's buffer are full */
		}
	}
	assert_true(sent < total);
	assert_true(rn_conn_ref_released(a) < batch); /* some still read from buf */
	/* a deregistration copies them out before it returns */
	dpdk_transport_stats(tp_a, &st0);
	assert_int_equal(rn_mem_create(&lim, &mem), RN_OK);
	assert_int_equal(rn_mem_pd_alloc(mem, &pd), RN_OK);
	assert_int_equal(rn_mem_reg_mr(mem, pd, buf, total, (uintptr_t)buf, 0, &mr), RN_OK);
	assert_int_equal(rn_mem_dereg(mem, mr), RN_OK);
	dpdk_transport_stats(tp_a, &st1);
	assert_int_equal(st1.ref_drops, st0.ref_drops + 1);
	assert_int_equal(st1.ref_resets, st0.ref_resets);
	assert_int_equal(released_by(a, batch), batch);
	assert_int_equal(munmap(buf, total), 0);
	drain_check(b, sent, 4);
	rn_mem_pd_dealloc(mem, pd);
	rn_mem_destroy(mem);
	rn_conn_close(a);
	rn_conn_close(b);
}

static void test_eof(void **state)
{
	struct rn_conn *a, *b;
	uint8_t buf[64];
	(void)state;

	pair(&a, &b);
	struct iovec iov = { (void *)"last words", 10 };
	assert_int_equal(rn_conn_sendv(a, &iov, 1), 10);
	assert_int_equal(rn_conn_shutdown_write(a), 0);
	size_t got = 0;
	ssize_t n = -EAGAIN;
	uint64_t end = now_ms() + WAIT_MS;
	while (now_ms() < end) {
		wait_ready(b, 100);
		n = rn_conn_recv(b, buf + got, sizeof(buf) - got);
		if (n > 0)
			got += (size_t)n;
		else if (n != -EAGAIN)
			break;
	}
	assert_int_equal(n, 0);
	assert_int_equal(got, 10);
	assert_memory_equal(buf, "last words", 10);
	assert_true(wait_ready(b, 0)); /* end of stream stays readable */
	assert_int_equal(rn_conn_recv(b, buf, sizeof(buf)), 0);
	/* half close: the other direction still works */
	transfer(b, a, 5000, 3);
	rn_conn_close(b);
	rn_conn_close(a);
}

/* Check the runs of a lent view against the pattern from stream offset *at. */
static size_t check_view(const struct rn_rx_view *v, size_t *at, unsigned seed)
{
	size_t total = 0;

	assert_true(v->n >= 1 && v->n <= RN_RX_VIEW_RUNS);
	assert_true(v->owners >= 1 && v->owners <= v->n);
	for (unsigned i = 0; i < v->n; i++) {
		const uint8_t *p = v->run[i].iov_base;

		assert_true(v->run[i].iov_len > 0);
		for (size_t k = 0; k < v->run[i].iov_len; k++)
			assert_int_equal(p[k], pattern(*at + k, seed));
		*at += v->run[i].iov_len;
		total += v->run[i].iov_len;
	}
	return total;
}

/* recv_lend: the stream's octets in place, in order, within the budget; mixed with recv;
 * a view outlives its handle's close; then end of stream and bad arguments. */
static void test_lend(void **state)
{
	static uint8_t out[300000];
	struct rn_conn *a, *b;
	struct rn_rx_view v, kept;
	uint8_t in[777];
	size_t sent = 0, got = 0, lends = 0, budget_hits = 0;
	uint64_t end = now_ms() + 4 * WAIT_MS;
	(void)state;

	pair(&a, &b);
	assert_true(rn_conn_can_lend(a) && rn_conn_can_lend(b));
	assert_int_equal(rn_conn_recv_lend(b, &v, 100), -EAGAIN);
	assert_int_equal(rn_conn_recv_lend(b, &v, 0), -EINVAL);
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = pattern(i, 7);
	while (got < sizeof(out)) {
		assert_true(now_ms() < end);
		if (sent < sizeof(out)) {
			struct iovec iov = { out + sent, sizeof(out) - sent };
			ssize_t w = rn_conn_sendv(a, &iov, 1);
			if (w > 0)
				sent += (size_t)w;
		}
		/* every third receive copies; the lends alternate a small and a large budget */
		size_t budget = (lends & 1) ? 65536 : 1000;
		ssize_t n;
		if (lends % 3 == 2) {
			n = rn_conn_recv(b, in, sizeof(in));
			if (n > 0) {
				for (ssize_t k = 0; k < n; k++)
					assert_int_equal(in[k], pattern(got + (size_t)k, 7));
				got += (size_t)n;
			}
		} else {
			n = rn_conn_recv_lend(b, &v, budget);
			if (n > 0) {
				assert_true((size_t)n <= budget);
				assert_int_equal(check_view(&v, &got, 7), (size_t)n);
				budget_hits += (size_t)n == budget;
				rn_rx_view_release(&v);
			}
		}
		if (n > 0) {
			lends++;
		} else {
			assert_int_equal(n, -EAGAIN);
			wait_ready(b, 50);
		}
	}
	assert_true(budget_hits > 0);   /* partly lent entries were taken */
	/* a view taken, then its handle closed (a reset: octets were unread): still readable */
	struct iovec iov = { out, 5000 };
	assert_int_equal(rn_conn_sendv(a, &iov, 1), 5000);
	size_t at = 0;
	ssize_t n;
	while ((n = rn_conn_recv_lend(b, &kept, 1200)) == -EAGAIN) {
		assert_true(now_ms() < end);
		wait_ready(b, 50);
	}
	assert_true(n > 0 && n <= 1200);
	if (n == 1200) /* the budget cut a segment: the view and the queue share its mbuf */
		assert_int_equal(rte_mbuf_refcnt_read(kept.owner[kept.owners - 1]), 2);
	rn_conn_close(b);
	rn_conn_close(a);
	/* receive on a new pair, so that mbufs freed by mistake would be filled again */
	pair(&a, &b);
	transfer(a, b, 1u << 20, 9);
	assert_int_equal(check_view(&kept, &at, 7), (size_t)n);
	rn_rx_view_release(&kept);
	rn_conn_close(b);
	rn_conn_close(a);

	/* end of stream: 0, as recv */
	pair(&a, &b);
	assert_int_equal(rn_conn_shutdown_write(a), 0);
	while ((n = rn_conn_recv_lend(b, &v, 100)) == -EAGAIN) {
		assert_true(now_ms() < end);
		wait_ready(b, 50);
	}
	assert_int_equal(n, 0);
	rn_conn_close(b);
	rn_conn_close(a);
}

static void test_abort_reset(void **state)
{
	struct rn_conn *a, *b;
	uint8_t buf[64];
	(void)state;

	pair(&a, &b);
	rn_conn_abort(b);
	ssize_t n = -EAGAIN;
	uint64_t end = now_ms() + WAIT_MS;
	while (n == -EAGAIN && now_ms() < end) {
		wait_ready(a, 100);
		n = rn_conn_recv(a, buf, sizeof(buf));
	}
	assert_int_equal(n, -ECONNRESET);
	struct iovec iov = { buf, 1 };
	assert_int_equal(rn_conn_sendv(a, &iov, 1), -ECONNRESET);
	rn_conn_close(a);
}

static void test_refused(void **state)
{
	struct sockaddr_in dst = in4(IP_B, 9);
	struct rn_conn *a;
	int st = 0;
	uint64_t end = now_ms() + WAIT_MS;
	(void)state;

	assert_int_equal(rn_tp_connect(tp_a, (struct sockaddr *)&dst, sizeof(dst), &a), 0);
	while ((st = rn_conn_connect_status(a)) == -EINPROGRESS && now_ms() < end)
		wait_ready(a, 100);
	assert_int_equal(st, -ECONNREFUSED);
	assert_int_equal(rn_conn_connect_status(a), -ECONNREFUSED);
	rn_conn_close(a);
}

static void test_bad_input(void **state)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in other = in4("198.51.100.77", 0);
	struct rn_conn *c;
	(void)state;

	assert_int_equal(rn_tp_listen(tp_a, (struct sockaddr *)&a6, sizeof(a6), 4, &c),
			 -EAFNOSUPPORT);
	assert_int_equal(rn_tp_connect(tp_a, (struct sockaddr *)&a6, sizeof(a6), &c),
			 -EAFNOSUPPORT);
	assert_int_equal(rn_tp_listen(tp_a, (struct sockaddr *)&other, sizeof(other), 4, &c),
			 -EADDRNOTAVAIL);
	assert_int_equal(rn_tp_listen(tp_a, NULL, 0, 4, &c), -EINVAL);
	uint16_t port;
	struct rn_conn *l = listen_b(&port);
	struct sockaddr_in same = in4(IP_B, port);
	assert_int_equal(rn_tp_listen(tp_b, (struct sockaddr *)&same, sizeof(same), 4, &c),
			 -EADDRINUSE);
	assert_int_equal(rn_conn_accept(l, &c), -EAGAIN);
	assert_int_equal(rn_conn_set_records(l, NULL), -EINVAL);
	rn_conn_close(l);
}

/* MPA FPDU length from ULPDU_Length (markers off): 2 + ULPDU + pad + CRC. */
static size_t fpdu_len(const uint8_t hdr[2])
{
	size_t u = (size_t)hdr[0] << 8 | hdr[1];

	return 2 + u + ((4 - ((2 + u) & 3)) & 3) + 4;
}

/* Record mode: sendv takes whole records only, and the records arrive intact. */
static void test_records(void **state)
{
	static uint8_t out[200000], in[200000];
	struct rn_conn *a, *b;
	size_t len = 0, whole;
	(void)state;

	pair(&a, &b);
	assert_int_equal(rn_conn_set_records(a, fpdu_len), 0);
	for (unsigned i = 0; len < sizeof(out) - 4000; i++) {
		size_t u = 1 + (i * 977u) % 1400u, f;
		out[len] = (uint8_t)(u >> 8);
		out[len + 1] = (uint8_t)u;
		f = fpdu_len(out + len);
		for (size_t k = 2; k < f; k++)
			out[len + k] = (uint8_t)(i + k);
		len += f;
	}
	whole = len;
	len += 700; /* the start of one more record that is not all there */
	out[whole] = 0x05, out[whole + 1] = 0x00;
	size_t sent = 0, got = 0;
	uint64_t end = now_ms() + WAIT_MS;
	while (got < whole && now_ms() < end) {
		if (sent < whole) {
			struct iovec iov = { out + sent, len - sent };
			ssize_t w = rn_conn_sendv(a, &iov, 1);
			if (w > 0) {
				sent += (size_t)w;
				assert_true(sent <= whole); /* never part of a record */
			}
		}
		ssize_t n = rn_conn_recv(b, in + got, sizeof(in) - got);
		if (n > 0)
			got += (size_t)n;
		else
			wait_ready(b, 50);
	}
	assert_int_equal(got, whole);
	assert_memory_equal(in, out, whole);
	rn_conn_abort(a);
	rn_conn_abort(b);
}

/* One poller: on a thread marked as a CQ consumer, a recv that finds nothing runs a port pass
 * itself (counted as ext_passes) and the poll thread backs off (holds) while such recvs go on;
 * data arrives intact either way. Unmarked recvs never pass. */
static void test_consumer_drives(void **state)
{
	struct dpdk_port_stats st0, st1, st2;
	struct rn_conn *a, *b;
	uint8_t buf[64], in[64];
	size_t got = 0;
	(void)state;

	pair(&a, &b);
	dpdk_port_get_stats(port_b, &st0);
	assert_int_equal(rn_conn_recv(b, in, sizeof(in)), -EAGAIN);
	dpdk_port_get_stats(port_b, &st1);
	assert_int_equal(st1.ext_passes, st0.ext_passes);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = pattern(i, 7);
	struct iovec iov = { buf, sizeof(buf) };
	assert_int_equal(rn_conn_sendv(a, &iov, 1), (ssize_t)sizeof(buf));
	rn_thread_set_cq_poller(true);
	uint64_t end = now_ms() + WAIT_MS, hold_end = now_ms() + 30;
	while (got < sizeof(buf) || now_ms() < hold_end) {
		assert_true(now_ms() < end);
		ssize_t n = rn_conn_recv(b, in + got, sizeof(in) - got > 0 ? sizeof(in) - got : 1);
		if (got == sizeof(in)) {
			assert_int_equal(n, -EAGAIN); /* nothing more was sent */
			continue;
		}
		if (n > 0)
			got += (size_t)n;
		else
			assert_int_equal(n, -EAGAIN);
	}
	rn_thread_set_cq_poller(false);
	assert_memory_equal(in, buf, sizeof(buf));
	dpdk_port_get_stats(port_b, &st2);
	assert_true(st2.ext_passes > st1.ext_passes);
	assert_true(st2.holds > st1.holds); /* 30 ms of consumer passes: the thread held off */
	/* abort, not close: see docs/dpdk.md Known problems (zombie at transport free) */
	rn_conn_abort(a);
	rn_conn_abort(b);
}

/* ---- set-up ------------------------------------------------------------------------------ */
static int open_port(const char *name, const char *ip, bool refs, struct dpdk_port **p,
		     const struct rn_transport **t)
{
	struct dpdk_cfg cfg;
	char text[1024], err[512];
	int rc;

	snprintf(text, sizeof(text),
		 "eal = --no-huge -m 256 --vdev=net_memif0,role=server,socket=%s/m.sock "
		 "--vdev=net_memif1,role=client,socket=%s/m.sock\n"
		 "port = %s\nip = %s/24\n"
		 /* two ports share EAL's 256 MiB: the transmit pool's default (sized to the free
		  * heap at open) would leave the second port nothing */
		 "tx_mbufs = 8191\ntx_refs = %s\n",
		 dir, dir, name, ip, refs ? "on" : "off");
	memset(&cfg, 0, sizeof(cfg));
	rc = dpdk_cfg_parse(&cfg, text, err, sizeof(err));
	if (rc == 0)
		rc = dpdk_port_open(&cfg, p, err, sizeof(err));
	if (rc == 0)
		rc = dpdk_port_start(*p);
	if (rc != 0) {
		fprintf(stderr, "test_dpdk_transport: port %s: %s (%d)\n", name, err, rc);
		return rc;
	}
	*t = dpdk_transport(*p);
	return *t != NULL ? 0 : -ENOMEM;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_data_both_ways),
		cmocka_unit_test(test_send_space),
		cmocka_unit_test(test_eof),
		cmocka_unit_test(test_lend),
		cmocka_unit_test(test_abort_reset),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_consumer_drives),
		cmocka_unit_test(test_send_ref),
	};
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/srn-dpdk-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return 1;
	if (open_port("net_memif0", IP_A, true, &port_a, &tp_a) != 0) {
		rc = 77; /* DPDK cannot start here */
	} else if (open_port("net_memif1", IP_B, false, &port_b, &tp_b) != 0) {
		rc = 1;  /* it started: a second port must open too */
	} else {
		rc = cmocka_run_group_tests(tests, NULL, NULL);
	}
	if (tp_a)
		dpdk_transport_free(tp_a);
	if (tp_b)
		dpdk_transport_free(tp_b);
	/* The ports stay open until exit. Closing one end of a memif link that has its other
	 * end in the same process lets DPDK 22.11's memif interrupt thread free the link's
	 * memory twice now and then (SIGSEGV in rte_free from the memif disconnect handler,
	 * after every test passed: seen 2 times in ~80 runs). Port close is covered by the
	 * port's own tests and by every two-process test here. */
	char path[128];
	snprintf(path, sizeof(path), "%s/m.sock", dir);
	unlink(path);
	rmdir(dir);
	return rc;
}
