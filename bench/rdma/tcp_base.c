/* tcp_base: the kernel TCP baselines on loopback, measured the way the RDMA tests are:
 * ping-pong latency (TCP_NODELAY, half the round trip) with either blocking sockets or
 * non-blocking sockets polled like the RDMA applications poll their CQ (recv until data, with
 * or without sched_yield between tries), and one-stream bulk bandwidth (iperf3-like: blocking
 * 64 KiB writes for a fixed time, counted by the receiver). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_rdma.h"
#include "vx.h"

struct tcp_arg {
	int lfd;
	uint16_t port;
	uint32_t size, iters;
	enum tcp_wait wait;
	double seconds;
};

int tcp_listen_lo(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 1) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		perror("tcp listen");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static void nodelay(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int tcp_connect_lo(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
		perror("tcp connect");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	nodelay(fd);
	return fd;
}

int tcp_accept_one(int lfd)
{
	int fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		perror("tcp accept");
	else
		nodelay(fd);
	return fd;
}

/* Sets up fd for the waiting policy: polled sockets are non-blocking. 0 ok. */
int tcp_set_wait(int fd, enum tcp_wait wait)
{
	int fl = fcntl(fd, F_GETFL);
	if (wait == TCP_BLOCK)
		return 0;
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		return perror("tcp O_NONBLOCK"), -1;
	return 0;
}

/* After a read or write failed (n < 0): 0 to try again (a polled socket had nothing yet, or
 * a signal), -1 on a real error. */
static int try_again(enum tcp_wait wait)
{
	if (errno == EINTR)
		return 0;
	if (wait == TCP_BLOCK || (errno != EAGAIN && errno != EWOULDBLOCK))
		return -1;
	if (wait == TCP_POLL_YIELD)
		sched_yield();
	return 0;
}

int tcp_read_wait(int fd, void *buf, size_t len, enum tcp_wait wait)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n > 0)
			got += (size_t)n;
		else if (n == 0 || try_again(wait))
			return -1;
	}
	return 0;
}

int tcp_write_wait(int fd, const void *buf, size_t len, enum tcp_wait wait)
{
	for (size_t put = 0; put < len;) {
		ssize_t n = write(fd, (const char *)buf + put, len - put);
		if (n > 0)
			put += (size_t)n;
		else if (n == 0 || try_again(wait))
			return -1;
	}
	return 0;
}

static int read_full(int fd, void *buf, size_t len)
{
	return tcp_read_wait(fd, buf, len, TCP_BLOCK);
}

static int write_full(int fd, const void *buf, size_t len)
{
	return tcp_write_wait(fd, buf, len, TCP_BLOCK);
}

static int echo_server(void *p)
{
	struct tcp_arg *a = p;
	char buf[4096];
	int fd = tcp_accept_one(a->lfd);
	if (fd < 0)
		return -1;
	if (tcp_set_wait(fd, a->wait))
		return close(fd), -1;
	while (tcp_read_wait(fd, buf, a->size, a->wait) == 0)   /* until the client closes */
		if (tcp_write_wait(fd, buf, a->size, a->wait))
			break;
	close(fd);
	return 0;
}

static int pingpong_rounds(int fd, const struct tcp_arg *a, double *ns)
{
	char buf[4096];
	memset(buf, 'p', sizeof buf);
	for (uint32_t i = 0; i < a->iters; i++) {
		uint64_t t0 = vx_now_ns();
		if (tcp_write_wait(fd, buf, a->size, a->wait) || tcp_read_wait(fd, buf, a->size, a->wait))
			return -1;
		ns[i] = (double)(vx_now_ns() - t0) / 2;
	}
	return 0;
}

static int pingpong_client(void *p, struct bench_out *out)
{
	struct tcp_arg *a = p;
	double *ns = calloc(a->iters, sizeof *ns);
	int fd = tcp_connect_lo(a->port);
	int rc = ns && fd >= 0 && tcp_set_wait(fd, a->wait) == 0 ? pingpong_rounds(fd, a, ns) : -1;
	if (rc == 0) {
		bench_sort(ns, a->iters);
		out->p50_us = ns[a->iters / 2] / 1000;
		out->p99_us = ns[(uint32_t)(a->iters * 0.99)] / 1000;
	}
	if (fd >= 0)
		close(fd);
	free(ns);
	return rc;
}

int tcp_pingpong(uint32_t size, uint32_t iters, enum tcp_wait wait, struct bench_out *out)
{
	struct tcp_arg a = { .size = size, .iters = iters, .wait = wait };
	if (size > 4096 || (a.lfd = tcp_listen_lo(&a.port)) < 0)
		return -1;
	int rc = bench_pair(echo_server, pingpong_client, &a, 0, 120, out);
	close(a.lfd);
	return rc;
}

/* Counts bytes until EOF, then answers with the count. */
static int sink_server(void *p)
{
	struct tcp_arg *a = p;
	char *buf = malloc(a->size);
	int fd = tcp_accept_one(a->lfd);
	uint64_t total = 0;
	ssize_t n = -1;
	while (buf && fd >= 0 && (n = read(fd, buf, a->size)) > 0)
		total += (uint64_t)n;
	int rc = n == 0 && write_full(fd, &total, sizeof total) == 0 ? 0 : -1;
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

static int bulk_client(void *p, struct bench_out *out)
{
	struct tcp_arg *a = p;
	char *buf = malloc(a->size);
	int fd = tcp_connect_lo(a->port);
	uint64_t total = 0, t0 = vx_now_ns();
	uint64_t end = t0 + (uint64_t)(a->seconds * 1e9);
	if (!buf || fd < 0)
		goto fail;
	memset(buf, 'b', a->size);
	while (vx_now_ns() < end)
		if (write_full(fd, buf, a->size))
			goto fail;
	if (shutdown(fd, SHUT_WR) || read_full(fd, &total, sizeof total))
		goto fail;
	out->mib_s = (double)total / ((double)(vx_now_ns() - t0) / 1e9) / (1024.0 * 1024.0);
	close(fd);
	free(buf);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return -1;
}

int tcp_bulk(uint32_t chunk, double seconds, struct bench_out *out)
{
	struct tcp_arg a = { .size = chunk, .seconds = seconds };
	if ((a.lfd = tcp_listen_lo(&a.port)) < 0)
		return -1;
	int rc = bench_pair(sink_server, bulk_client, &a, 0, 60, out);
	close(a.lfd);
	return rc;
}
