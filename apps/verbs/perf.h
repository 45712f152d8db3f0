/* perf: the measuring engine of softrnic-perf (perftest-style tests over rdma_cm), also used
 * by bench/rdma. One connection (bandwidth tests: one or several, each its own QP), one test
 * per run: write/read/send x bandwidth/latency, message size, iterations.
 * The client drives and measures; the server takes its parameters from the client's first
 * message (so the server needs no test options), answers, and reports nothing but success.
 */
#ifndef PERF_H
#define PERF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "vx.h"

enum perf_test { PERF_WRITE, PERF_READ, PERF_SEND };

/* Largest message size a server accepts from a client (perf_params.max_size 0): the server
 * registers two buffers of that size on the client's word, so a larger one is refused. */
#define PERF_MAX_SIZE_DEFAULT (64u << 20)
/* Most connections (perf_params.qps) one run opens: the server takes the count from the
 * client, so it is bounded as the size is. */
#define PERF_MAX_QPS 64u
/* Longest post list (perf_params.post_list). */
#define PERF_MAX_POST_LIST 64u

struct perf_params {
	enum perf_test test;
	bool lat;               /* latency (ping-pong / one at a time) instead of bandwidth */
	uint32_t size;          /* message bytes */
	uint32_t iters;
	uint32_t tx_depth;      /* bandwidth: WRs in flight per QP (reads: also capped by ORD) */
	uint32_t post_list;     /* bandwidth, client: WRs per ibv_post_send, a linked list (perftest's
	                         * --post_list): the RNIC frames a list in one pass and hands it
	                         * to TCP in one send. 0 or 1: one WR per call */
	uint32_t qps;           /* bandwidth: connections, each its own QP and CQ, served in
	                         * turn by one thread as perftest's -q does; iters is per QP.
	                         * 0 or 1: one (the only choice for latency and interleaving) */
	bool server;
	const char *addr;       /* client: server address; server: bind address or NULL */
	const char *port;
	enum vx_poll mode;      /* VX_BUSY (perftest's way) or VX_YIELD (shares a core) */
	bool poll_cq;           /* write_lat: poll the CQ on every spin on the target byte */
	int timeout_ms;         /* limit for any single wait */
	uint32_t max_size;      /* server: largest size taken from a client; 0 = PERF_MAX_SIZE_DEFAULT */
	FILE *log;              /* banner and connection lines; NULL = quiet */
	int linger_ms;          /* after the closing handshake, keep the connection this long
	                         * (softrnic-stat reads the final counters meanwhile) */
	/* Interleaving (bench/rdma): every `between_every` iterations, outside the measured
	 * time, call between(between_arg); non-zero fails the run. Latency tests call it on both
	 * sides at the same iteration (after it, not after the last; Write and Send, not Read);
	 * bandwidth tests on the client only, with nothing in flight. 0 = never. */
	uint32_t between_every;
	int (*between)(void *arg);
	void *between_arg;
	/* Client, NULL or room for iters values: latency tests store each iteration's latency
	 * (us, as t_typical), in run order; bandwidth tests with between_every store the MiB/s
	 * of each block of between_every messages. */
	double *samples;
};

struct perf_result {
	enum perf_test test;
	bool lat;
	uint32_t size, iters;
	/* latency, microseconds (write/send: half round trip; read: whole operation) */
	double t_min, t_max, t_typical, t_avg, t_stdev, p99, p999;
	/* bandwidth (client): MiB/s and millions of messages per second, of all QPs together
	 * (several QPs: the peak is the average, no per-window samples are kept) */
	double bw_peak, bw_avg, msg_rate;
};

/* Runs one test; 0 on success (result filled on the client), -1 on failure (printed). */
int perf_run(const struct perf_params *p, struct perf_result *res);

const char *perf_test_name(enum perf_test t, bool lat);
/* perftest's result table: header line and one result line. */
void perf_print_header(FILE *f, bool lat);
void perf_print_result(FILE *f, const struct perf_result *r);

/* Statistics helpers (perf_stats.c). ns: per-iteration times in nanoseconds, sorted in place. */
void perf_lat_stats(double *ns, uint32_t n, double scale, struct perf_result *r);
/* Peak rate over windows of at least win messages; t in ns, done cumulative. */
double perf_peak_rate(const uint64_t *t, const uint64_t *done, uint32_t n, uint64_t win);

#endif
