/* bench_rdma: kernel TCP on loopback against softrnic (kernel-socket transport) between two
 * processes, one per core. See rdma_bench.c. */
#ifndef BENCH_RDMA_H
#define BENCH_RDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a measuring child sends back to the parent. */
struct bench_out {
	int ok;
	double p50_us, p99_us;   /* latency (half round trip for ping-pongs) */
	double mib_s;            /* bandwidth */
};

/* Runs server(arg) pinned to CPU server_cpu and client(arg, out) pinned to client_cpu in two
 * child processes; the client's result comes back through a pipe. delay_ms: how long the
 * client starts after the server. Returns 0 with *out filled, -1 on failure or timeout. */
int bench_pair(int (*server)(void *), int (*client)(void *, struct bench_out *), void *arg,
               unsigned delay_ms, unsigned timeout_s, struct bench_out *out);

extern int bench_server_cpu, bench_client_cpu;

/* Sorts v ascending (percentiles of a run, medians of repetitions). */
void bench_sort(double *v, size_t n);

/* How a TCP ping-pong side waits for the peer's message. */
enum tcp_wait {
	TCP_BLOCK,       /* blocking recv(): sleeps in the kernel, woken per message */
	TCP_POLL_YIELD,  /* non-blocking recv() until data, sched_yield() between tries */
	TCP_POLL_BUSY,   /* non-blocking recv() until data, no yield */
};

/* tcp_base.c: kernel TCP baselines on 127.0.0.1. Both ping-pong sides use wait. */
int tcp_pingpong(uint32_t size, uint32_t iters, enum tcp_wait wait, struct bench_out *out);
int tcp_bulk(uint32_t chunk, double seconds, struct bench_out *out);

#endif
