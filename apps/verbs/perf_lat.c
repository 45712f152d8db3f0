/* perf_lat: the latency tests. write and send are ping-pongs (reported as half the round
 * trip, as perftest does); read times each RDMA Read from post to completion.
 * write_lat follows ib_write_lat: each side spins on the last byte of its receive region
 * until the peer's RDMA Write has placed it, with no verbs call in between. */
#include <stdlib.h>

#include "perf_int.h"

static bool signal_this(const struct perf_sess *s, uint32_t i)
{
	return i % SIGNAL_EVERY == 0 || i == s->p.iters;
}

/* The sequence number of the last signaled Write among 1..i. */
static uint64_t last_signaled(const struct perf_sess *s, uint32_t i)
{
	return i == s->p.iters ? i : i - i % SIGNAL_EVERY;
}

/* Spins until the byte at p becomes v, reaping the CQ now and then for errors, or on every
 * spin with -P: on a software RNIC that poll is what runs the engine from this thread, so the
 * Write is placed without waiting for the device's own threads to get the core. */
static int spin_byte(struct perf_sess *s, volatile const char *p, char v)
{
	uint64_t reap_mask = s->p.poll_cq ? 0 : 4095;
	perf_arm_deadline(s);
	while (*p != v)
		if (perf_spin(s) || ((s->spins & reap_mask) == 0 && perf_reap(s) < 0))
			return -1;
	return 0;
}

/* After iteration i: the interleaving hook when due (perf.h), then a new start time so the
 * hook's time counts nowhere. */
static int maybe_between(struct perf_sess *s, uint32_t i, uint64_t *prev)
{
	uint32_t every = s->p.between_every;

	if (!s->p.between || every == 0 || i % every != 0 || i == s->p.iters)
		return 0;
	if (s->p.between(s->p.between_arg))
		return fprintf(stderr, "softrnic-perf: the interleaved step failed\n"), -1;
	*prev = vx_now_ns();
	return 0;
}

static int write_pingpong(struct perf_sess *s, double *ns)
{
	volatile const char *poll_byte = s->rx + s->p.size - 1;
	char *post_byte = s->tx + s->p.size - 1;
	bool client = !s->p.server;
	uint64_t prev = vx_now_ns();
	for (uint32_t i = 1; i <= s->p.iters; i++) {
		if (!client && spin_byte(s, poll_byte, (char)i))
			return -1;
		*post_byte = (char)i;
		if (perf_post(s, IBV_WR_RDMA_WRITE, i, signal_this(s, i)))
			return -1;
		if (client && spin_byte(s, poll_byte, (char)i))
			return -1;
		uint64_t now = vx_now_ns();
		if (ns)
			ns[i - 1] = (double)(now - prev);
		prev = now;
		/* frees SQ slots: only while a signaled Write is not yet seen complete (perftest's
		 * rule). With -P the spin's polls have usually taken it already, and a poll that
		 * finds nothing costs the client a receive attempt between the peer's Write and
		 * its own. */
		if (s->data_done < last_signaled(s, i) && perf_reap(s) < 0)
			return -1;
		if (maybe_between(s, i, &prev))
			return -1;
	}
	return 0;
}

static int send_pingpong(struct perf_sess *s, double *ns)
{
	bool client = !s->p.server;
	uint64_t prev = vx_now_ns();
	for (uint32_t i = 1; i <= s->p.iters; i++) {
		if (!client && (perf_wait(s, K_DATA_RECV, s->p.mode) || perf_post_data_recv(s)))
			return -1;
		if (perf_post(s, IBV_WR_SEND, i, signal_this(s, i)))
			return -1;
		if (client && (perf_wait(s, K_DATA_RECV, s->p.mode) || perf_post_data_recv(s)))
			return -1;
		uint64_t now = vx_now_ns();
		if (ns)
			ns[i - 1] = (double)(now - prev);
		prev = now;
		if (maybe_between(s, i, &prev))
			return -1;
	}
	return 0;
}

static int read_each(struct perf_sess *s, double *ns)
{
	for (uint32_t i = 1; i <= s->p.iters; i++) {
		uint64_t t0 = vx_now_ns();
		if (perf_post(s, IBV_WR_RDMA_READ, i, true) || perf_wait(s, K_DATA, s->p.mode))
			return -1;
		ns[i - 1] = (double)(vx_now_ns() - t0);
	}
	return 0;
}

int perf_lat_client(struct perf_sess *s, struct perf_result *r)
{
	double *ns = calloc(s->p.iters, sizeof *ns);
	if (!ns)
		return fprintf(stderr, "softrnic-perf: out of memory\n"), -1;
	int rc;
	switch (s->p.test) {
	case PERF_WRITE: rc = write_pingpong(s, ns); break;
	case PERF_SEND: rc = send_pingpong(s, ns); break;
	default: rc = read_each(s, ns); break;
	}
	double scale = s->p.test == PERF_READ ? 1.0 : 0.5;
	for (uint32_t i = 0; rc == 0 && s->p.samples && i < s->p.iters; i++)
		s->p.samples[i] = ns[i] * scale / 1000.0;
	if (rc == 0)
		perf_lat_stats(ns, s->p.iters, scale, r);
	free(ns);
	return rc;
}

int perf_lat_server(struct perf_sess *s)
{
	switch (s->p.test) {
	case PERF_WRITE: return write_pingpong(s, NULL);
	case PERF_SEND: return send_pingpong(s, NULL);
	default: return 0;   /* reads need nothing from the server's CPU */
	}
}
