/* bench_pair: a measured server/client pair as two pinned child processes. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_rdma.h"
#include "vx.h"

int bench_server_cpu = -1, bench_client_cpu = -1;

static void sleep_ms(unsigned ms)
{
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

static pid_t spawn(int cpu, int (*fn)(void *, int), void *arg, int fd)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	if (cpu >= 0)
		(void)vx_pin_cpu(cpu);
	_exit(fn(arg, fd) ? 1 : 0);
}

struct pair_ctx {
	int (*server)(void *);
	int (*client)(void *, struct bench_out *);
	void *arg;
};

static int run_server(void *p, int fd)
{
	(void)fd;
	struct pair_ctx *c = p;
	return c->server(c->arg);
}

static int run_client(void *p, int fd)
{
	struct pair_ctx *c = p;
	struct bench_out o = { 0 };
	o.ok = c->client(c->arg, &o) == 0;
	return write(fd, &o, sizeof o) == (ssize_t)sizeof o && o.ok ? 0 : -1;
}

/* Reads the client's result within timeout_s; 0 ok. */
static int collect(int fd, unsigned timeout_s, struct bench_out *out)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (poll(&p, 1, (int)timeout_s * 1000) != 1) {
		fprintf(stderr, "bench: a measurement timed out after %u s\n", timeout_s);
		return -1;
	}
	return read(fd, out, sizeof *out) == (ssize_t)sizeof *out && out->ok ? 0 : -1;
}

/* Waits for pid for up to ms, then kills it; 0 if it exited with status 0. */
static int reap(pid_t pid, unsigned ms)
{
	int st;
	for (unsigned waited = 0; waited <= ms; waited += 10) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
		if (r < 0)
			return -1;
		sleep_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

int bench_pair(int (*server)(void *), int (*client)(void *, struct bench_out *), void *arg,
               unsigned delay_ms, unsigned timeout_s, struct bench_out *out)
{
	struct pair_ctx c = { server, client, arg };
	int fds[2];
	if (pipe(fds))
		return perror("pipe"), -1;
	fflush(NULL);
	pid_t spid = spawn(bench_server_cpu, run_server, &c, -1);
	sleep_ms(delay_ms);
	pid_t cpid = spawn(bench_client_cpu, run_client, &c, fds[1]);
	close(fds[1]);
	int rc = spid > 0 && cpid > 0 ? collect(fds[0], timeout_s, out) : -1;
	close(fds[0]);
	if (cpid > 0 && reap(cpid, rc ? 0 : 5000))
		rc = -1;
	if (spid > 0 && reap(spid, rc ? 0 : 5000))
		rc = -1;
	return rc;
}
