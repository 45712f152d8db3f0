/* bench_rdma: kernel TCP on loopback against softrnic (kernel-socket transport) between two
 * processes, one per core. See rdma_bench.c. */
#ifndef BENCH_RDMA_H
#define BENCH_RDMA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench_stats.h"

/* What a measuring child sends back to the parent. */
struct bench_out {
	int ok;
	double p50_us, p99_us;   /* latency (half round trip for ping-pongs) */
	double mib_s;            /* bandwidth */
	/* interleaved runs (rdma_bench goals): softrnic / TCP per block pair, median and
	 * quartiles, and the medians of the block figures (p50 us or MiB/s) of each side */
	double ratio, ratio_q1, ratio_q3, rdma_med, tcp_med;
};

/* Runs server(arg) pinned to CPU server_cpu and client(arg, out) pinned to client_cpu in two
 * child processes; the client's result comes back through a pipe. delay_ms: how long the
 * client starts after the server. Returns 0 with *out filled, -1 on failure or timeout. */
int bench_pair(int (*server)(void *), int (*client)(void *, struct bench_out *), void *arg,
               unsigned delay_ms, unsigned timeout_s, struct bench_out *out);

extern int bench_server_cpu, bench_client_cpu;

/* How a TCP ping-pong side waits for the peer's message. */
enum tcp_wait {
	TCP_BLOCK,       /* blocking recv(): sleeps in the kernel, woken per message */
	TCP_POLL_YIELD,  /* non-blocking recv() until data, sched_yield() between tries */
	TCP_POLL_BUSY,   /* non-blocking recv() until data, no yield */
};

/* tcp_base.c: kernel TCP on 127.0.0.1 (TCP_NODELAY on every connection). The listener (port 0:
 * the kernel picks; *port gets it), connect and accept return the fd or -1 (printed);
 * set_wait makes a polled fd non-blocking; read_wait / write_wait move len bytes waiting as
 * wait says (0, or -1 on EOF or error). */
int tcp_listen_lo(uint16_t *port);
int tcp_connect_lo(uint16_t port);
int tcp_accept_one(int lfd);
int tcp_set_wait(int fd, enum tcp_wait wait);
int tcp_read_wait(int fd, void *buf, size_t len, enum tcp_wait wait);
int tcp_write_wait(int fd, const void *buf, size_t len, enum tcp_wait wait);
/* The baselines. Both ping-pong sides use wait. */
int tcp_pingpong(uint32_t size, uint32_t iters, enum tcp_wait wait, struct bench_out *out);
int tcp_bulk(uint32_t chunk, double seconds, struct bench_out *out);

/* Interleaved baselines (tcp_side.c). A softrnic run calls tcp_side_block as its between
 * hook (perf.h) every `block` iterations: each call moves one block over a kernel TCP
 * connection between the same two processes, opened on the first call (the parent makes the
 * listener before the fork). Latency (bulk false): `block` ping-pong rounds of `size` bytes
 * waiting as `wait` says, on both sides at the same iteration. Bandwidth (bulk true): the
 * client writes `block` x 64 KiB with blocking writes and waits for the sink's
 * acknowledgement; the server side is a sink thread (tcp_side_sink_start), as the softrnic
 * bandwidth server calls no hook. The client appends each ping-pong round's half round trip
 * (us) or each bulk block's MiB/s to out (room for cap). */
struct tcp_side {
	int lfd, fd;
	uint16_t port;
	bool server, bulk;
	uint32_t size, block;
	enum tcp_wait wait;
	double *out;
	uint32_t nout, cap;
};
int tcp_side_listen(struct tcp_side *t);
/* interleave.c: one softrnic run of p (server and client pinned like bench_pair) with its
 * baseline in between every `every` iterations (p->iters a multiple, at least two blocks):
 * fills out's ratio fields from the block pairs. 0 ok, -1 failed. */
struct perf_params;
int bench_interleaved(const struct perf_params *p, uint32_t every, enum tcp_wait wait,
		      struct bench_out *out);
int tcp_side_block(void *arg);
int tcp_side_sink_start(struct tcp_side *t, pthread_t *th);
void tcp_side_close(struct tcp_side *t);

#endif
