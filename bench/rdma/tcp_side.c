/* tcp_side: the kernel TCP baseline interleaved with a softrnic run in the same two processes
 * (rdma_bench's goals). The softrnic run calls tcp_side_block between its blocks (perf.h,
 * between hook); each call moves one block over a kernel TCP connection opened on the first
 * call, so the baseline and softrnic alternate every few tens of milliseconds and share
 * whatever state this shared machine is in (bench_rdma.h, "Interleaved baselines"). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_rdma.h"
#include "vx.h"

#define BULK_CHUNK 65536u

int tcp_side_listen(struct tcp_side *t)
{
	t->fd = -1;
	t->lfd = tcp_listen_lo(&t->port);
	return t->lfd < 0 ? -1 : 0;
}

void tcp_side_close(struct tcp_side *t)
{
	if (t->fd >= 0)
		close(t->fd);
	if (t->lfd >= 0)
		close(t->lfd);
	t->fd = t->lfd = -1;
}

/* Bulk blocks use blocking sockets, as the tcp_bulk baseline does. */
static enum tcp_wait side_wait(const struct tcp_side *t)
{
	return t->bulk ? TCP_BLOCK : t->wait;
}

static int side_open(struct tcp_side *t)
{
	t->fd = t->server ? tcp_accept_one(t->lfd) : tcp_connect_lo(t->port);
	return t->fd < 0 || tcp_set_wait(t->fd, side_wait(t)) ? -1 : 0;
}

/* Moves len bytes (in = read, else write), waiting the way this side waits. */
static int xfer(struct tcp_side *t, void *buf, size_t len, bool in)
{
	return in ? tcp_read_wait(t->fd, buf, len, side_wait(t))
	          : tcp_write_wait(t->fd, buf, len, side_wait(t));
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

	if (xfer(t, &len, sizeof len, false))
		return -1;
	for (uint32_t i = 0; i < t->block; i++)
		if (xfer(t, buf, sizeof buf, false))
			return -1;
	if (xfer(t, &ack, sizeof ack, true) || ack != len)
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
	while (xfer(t, &len, sizeof len, true) == 0) {
		for (uint64_t got = 0; got < len;) {
			ssize_t n = read(t->fd, buf, len - got < sizeof buf ? len - got : sizeof buf);
			if (n <= 0)
				return NULL;
			got += (uint64_t)n;
		}
		if (xfer(t, &len, sizeof len, false))
			return NULL;
	}
	return NULL;
}

int tcp_side_sink_start(struct tcp_side *t, pthread_t *th)
{
	int rc = pthread_create(th, NULL, sink_main, t);

	if (rc)
		fprintf(stderr, "tcp_side sink: %s\n", strerror(rc));
	return rc ? -1 : 0;
}
