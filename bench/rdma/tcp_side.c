/* tcp_side: the kernel TCP baseline interleaved with a softrnic run in the same two processes
 * (rdma_bench's goals). The softrnic run calls tcp_side_block between its blocks (perf.h,
 * between hook); each call moves one block over a kernel TCP connection opened on the first
 * call, so the baseline and softrnic alternate every few tens of milliseconds and share
 * whatever state this shared machine is in (bench_rdma.h, "Interleaved baselines"). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_rdma.h"
#include "vx.h"

#define BULK_CHUNK 65536u

int tcp_side_listen(struct tcp_side *t)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;

	t->fd = -1;
	t->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (t->lfd < 0 || bind(t->lfd, (struct sockaddr *)&a, sizeof a) || listen(t->lfd, 1) ||
	    getsockname(t->lfd, (struct sockaddr *)&a, &len)) {
		perror("tcp_side listen");
		tcp_side_close(t);
		return -1;
	}
	t->port = ntohs(a.sin_port);
	return 0;
}

void tcp_side_close(struct tcp_side *t)
{
	if (t->fd >= 0)
		close(t->fd);
	if (t->lfd >= 0)
		close(t->lfd);
	t->fd = t->lfd = -1;
}

static int side_open(struct tcp_side *t)
{
	int one = 1;

	if (t->server) {
		t->fd = accept(t->lfd, NULL, NULL);
	} else {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(t->port),
		                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		t->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (t->fd >= 0 && connect(t->fd, (struct sockaddr *)&a, sizeof a)) {
			close(t->fd);
			t->fd = -1;
		}
	}
	if (t->fd < 0)
		return perror("tcp_side open"), -1;
	setsockopt(t->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (t->bulk || t->wait == TCP_BLOCK)
		return 0;
	int fl = fcntl(t->fd, F_GETFL);
	return fl < 0 || fcntl(t->fd, F_SETFL, fl | O_NONBLOCK) ? -1 : 0;
}

/* Moves len bytes (in = read, else write), waiting the way the baseline waits. */
static int xfer(struct tcp_side *t, char *buf, size_t len, bool in)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = in ? read(t->fd, buf + done, len - done)
		               : write(t->fd, buf + done, len - done);
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return -1;
		if (t->wait == TCP_POLL_YIELD)
			sched_yield();
	}
	return 0;
}

static int pingpong_block(struct tcp_side *t)
{
	char buf[4096];

	memset(buf, 'p', sizeof buf);
	for (uint32_t i = 0; i < t->block; i++) {
		uint64_t t0 = vx_now_ns();
		if (xfer(t, buf, t->size, t->server) || xfer(t, buf, t->size, !t->server))
			return -1;
		if (!t->server && t->nout < t->cap)
			t->out[t->nout++] = (double)(vx_now_ns() - t0) / 2000.0;
	}
	return 0;
}

/* Client: one block of 64 KiB blocking writes, announced by its length and ended by the
 * sink's acknowledgement of the last byte; the rate counts until then. */
static int bulk_block(struct tcp_side *t)
{
	static char buf[BULK_CHUNK];
	uint64_t len = (uint64_t)t->block * BULK_CHUNK, ack = 0, t0 = vx_now_ns();

	if (xfer(t, (char *)&len, sizeof len, false))
		return -1;
	for (uint32_t i = 0; i < t->block; i++)
		if (xfer(t, buf, sizeof buf, false))
			return -1;
	if (xfer(t, (char *)&ack, sizeof ack, true) || ack != len)
		return -1;
	if (t->nout < t->cap)
		t->out[t->nout++] = (double)len / ((double)(vx_now_ns() - t0) / 1e9) / (1024.0 * 1024.0);
	return 0;
}

int tcp_side_block(void *arg)
{
	struct tcp_side *t = arg;

	if (t->fd < 0 && side_open(t))
		return -1;
	return t->bulk ? bulk_block(t) : pingpong_block(t);
}

/* The bulk server's sink: the softrnic bandwidth server is passive (nothing calls its hook),
 * so a thread takes the blocks, asleep in read() while softrnic runs. */
static void *sink_main(void *arg)
{
	struct tcp_side *t = arg;
	static char buf[BULK_CHUNK];
	uint64_t len;

	if (side_open(t))
		return NULL;
	while (xfer(t, (char *)&len, sizeof len, true) == 0) {
		for (uint64_t got = 0; got < len;) {
			ssize_t n = read(t->fd, buf, len - got < sizeof buf ? len - got : sizeof buf);
			if (n <= 0)
				return NULL;
			got += (uint64_t)n;
		}
		if (xfer(t, (char *)&len, sizeof len, false))
			return NULL;
	}
	return NULL;
}

int tcp_side_sink_start(struct tcp_side *t, pthread_t *th)
{
	int rc = pthread_create(th, NULL, sink_main, t);

	return rc ? (errno = rc, perror("tcp_side sink"), -1) : 0;
}
