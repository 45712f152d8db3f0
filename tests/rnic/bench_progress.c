/* Measurements behind RN_PROGRESS_SPIN_DEFAULT_US (not a test; prints numbers):
 *   1. wake-up latency, eventfd write on another thread -> fd callback, and the doorbell (a
 *      timer armed for now from another thread) -> timer callback, with the engine blocked vs spinning;
 *   2. CPU burnt by an idle engine after a burst (getrusage), and by sparse traffic;
 *   3. TCP loopback ping-pong between two engines (two "progress threads") with and without
 *      think time at the responder, per busy-poll window. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rn_progress.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	while (now_ns() < end)
		;
}

static void sleep_us(unsigned us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000L };
	nanosleep(&ts, NULL);
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static struct rn_progress *mk_eng(unsigned spin_us)
{
	struct rn_progress_cfg cfg;
	struct rn_progress *eng;

	rn_progress_cfg_default(&cfg);
	cfg.spin_us = spin_us;
	if (rn_progress_create(&cfg, &eng))
		abort();
	return eng;
}

/* ---- 1. latency ------------------------------------------------------------------------- */
static atomic_uint_fast64_t seen;

static void lat_cb(void *arg, int fd, uint32_t ev)
{
	uint64_t v;
	(void)arg;
	(void)ev;
	(void)!read(fd, &v, sizeof(v));
	atomic_store(&seen, now_ns());
}

static void lat_timer(void *arg)
{
	(void)arg;
	atomic_store(&seen, now_ns());
}

static void report(const char *what, uint64_t *s, int n)
{
	qsort(s, (size_t)n, sizeof(*s), cmp_u64);
	printf("  %-44s median %6.2f us  p90 %6.2f us  p99 %6.2f us\n", what, s[n / 2] / 1e3,
	       s[n * 9 / 10] / 1e3, s[n * 99 / 100] / 1e3);
}

static void bench_latency(bool use_wake, unsigned spin_us, const char *label)
{
	enum { N = 2000 };
	static uint64_t s[N];
	struct rn_progress *eng = mk_eng(spin_us);
	struct rn_progress_timer t;
	int fd = eventfd(0, EFD_NONBLOCK);
	uint64_t one = 1;

	rn_progress_timer_init(&t, lat_timer, NULL);
	if (!use_wake)
		rn_progress_add(eng, fd, EPOLLIN, lat_cb, NULL);
	rn_progress_start(eng);
	for (int i = 0; i < N; i++) {
		sleep_us(spin_us ? 20 : 1000); /* blocked case: let it go to sleep */
		atomic_store(&seen, 0);
		uint64_t t0 = now_ns();
		if (use_wake) /* the doorbell path: a timer due now moved to the head */
			rn_progress_timer_arm(eng, &t, 0);
		else
			(void)!write(fd, &one, sizeof(one));
		while (!atomic_load(&seen))
			;
		s[i] = atomic_load(&seen) - t0;
	}
	rn_progress_destroy(eng);
	close(fd);
	report(label, s, N);
}

/* ---- 2. idle CPU -------------------------------------------------------------------------- */
static void noop_cb(void *arg, int fd, uint32_t ev)
{
	uint64_t v;
	(void)arg;
	(void)ev;
	(void)!read(fd, &v, sizeof(v));
}

static void bench_cpu(unsigned spin_us)
{
	struct rn_progress *eng = mk_eng(spin_us);
	int fd = eventfd(0, EFD_NONBLOCK);
	uint64_t one = 1;
	double c0, c1, c2;

	rn_progress_add(eng, fd, EPOLLIN, noop_cb, NULL);
	rn_progress_start(eng);
	(void)!write(fd, &one, sizeof(one));
	sleep_us(10000);
	c0 = cpu_s();
	sleep_us(2000000); /* idle */
	c1 = cpu_s();
	for (int i = 0; i < 1000; i++) { /* sparse traffic: one event per ms */
		(void)!write(fd, &one, sizeof(one));
		sleep_us(1000);
	}
	c2 = cpu_s();
	printf("  window %4u us: idle 2 s -> %6.3f%% CPU; 1 event/ms -> %5.1f%% CPU\n", spin_us,
	       (c1 - c0) / 2.0 * 100, (c2 - c1) / (1000 * 1.1e-3) * 100);
	rn_progress_destroy(eng);
	close(fd);
}

/* ---- 3. ping-pong -------------------------------------------------------------------------- */
struct pp {
	int fd;
	uint64_t think_ns;
	atomic_int *left;  /* initiator only */
	atomic_int *done;
};

static void pp_cb(void *arg, int fd, uint32_t ev)
{
	struct pp *p = arg;
	char b[64];
	ssize_t n = read(fd, b, sizeof(b));
	(void)ev;
	if (n <= 0)
		return;
	if (p->left && atomic_fetch_sub(p->left, 1) <= 1) {
		atomic_store(p->done, 1);
		return;
	}
	if (p->think_ns)
		spin_ns(p->think_ns);
	(void)!write(fd, "x", 1);
}

static void tcp_pair(int sv[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int one = 1, lis = socket(AF_INET, SOCK_STREAM, 0);

	bind(lis, (struct sockaddr *)&a, sizeof(a));
	listen(lis, 1);
	getsockname(lis, (struct sockaddr *)&a, &l);
	sv[0] = socket(AF_INET, SOCK_STREAM, 0);
	connect(sv[0], (struct sockaddr *)&a, sizeof(a));
	sv[1] = accept(lis, NULL, NULL);
	close(lis);
	setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(sv[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void bench_pingpong(unsigned spin_us, unsigned think_us)
{
	enum { N = 20000 };
	atomic_int left = N, done = 0;
	int sv[2];
	struct rn_progress *a = mk_eng(spin_us), *b = mk_eng(spin_us);
	struct rn_progress_stats sa, sb;

	tcp_pair(sv);
	struct pp pa = { sv[0], 0, &left, &done }, pb = { sv[1], think_us * 1000u, NULL, NULL };
	rn_progress_add(a, sv[0], EPOLLIN, pp_cb, &pa);
	rn_progress_add(b, sv[1], EPOLLIN, pp_cb, &pb);
	rn_progress_start(a);
	rn_progress_start(b);
	double c0 = cpu_s();
	uint64_t t0 = now_ns();
	(void)!write(sv[0], "x", 1);
	while (!atomic_load(&done))
		sleep_us(1000);
	uint64_t t = now_ns() - t0;
	double c = cpu_s() - c0;
	rn_progress_get_stats(a, &sa);
	rn_progress_get_stats(b, &sb);
	printf("  window %4u us, think %2u us: RTT %6.2f us, blocking waits/msg %.2f, CPU %.0f%% "
	       "of one core\n",
	       spin_us, think_us, t / 1e3 / N, (double)(sa.blocks + sb.blocks) / (2.0 * N),
	       c / (t / 1e9) * 100);
	rn_progress_destroy(a);
	rn_progress_destroy(b);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	static const unsigned wins[] = { 0, 5, 20, 50, 100, 200 };

	printf("1. wake-up latency\n");
	bench_latency(false, 0, "eventfd write -> fd callback, blocked");
	bench_latency(false, 1000000, "eventfd write -> fd callback, spinning");
	bench_latency(true, 0, "doorbell (timer armed from a thread), blocked");
	bench_latency(true, 1000000, "doorbell (timer armed from a thread), spinning");
	printf("2. CPU of one engine\n");
	for (unsigned i = 0; i < sizeof(wins) / sizeof(wins[0]); i++)
		bench_cpu(wins[i]);
	printf("3. TCP loopback ping-pong between two engines (2 threads, 2 cores)\n");
	for (unsigned think = 0; think <= 20; think += 20)
		for (unsigned i = 0; i < sizeof(wins) / sizeof(wins[0]); i++)
			bench_pingpong(wins[i], think);
	return 0;
}
