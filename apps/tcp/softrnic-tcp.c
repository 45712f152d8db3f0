/* softrnic-tcp: softrnic's TCP/IP engine on a DPDK port, as a test and benchmark tool.
 * The port comes from SOFTRNIC_DPDK_* / SOFTRNIC_DPDK_CONF (dpdk/dpdk_port.h) and runs in
 * inline mode: this thread polls it, so no lock is taken. Modes and actions: stcp_usage().
 * Exit status: 0 every connection ended as expected (--expect, default: every octet
 * verified), 1 not, 2 --timeout hit, 3 the port could not start, 64 usage. */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "stcp_eng.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int open_port(struct eng_app *a)
{
	struct dpdk_cfg cfg;
	char err[512] = "";
	int rc = dpdk_cfg_from_env(&cfg, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "softrnic-tcp: configuration: %s\n",
			rc == -ENOENT ? "none given (set SOFTRNIC_DPDK_EAL, SOFTRNIC_DPDK_IP ... or "
					"SOFTRNIC_DPDK_CONF)"
				      : err);
		return -1;
	}
	rc = dpdk_port_open(&cfg, &a->port, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "softrnic-tcp: port: %s (%s)\n", err, strerror(-rc));
		return -1;
	}
	a->stack = dpdk_port_stack(a->port);
	a->spin_ns = (uint64_t)cfg.spin_us * 1000u;
	a->nap_ns = (uint64_t)cfg.nap_us * 1000u;
	return 0;
}

static int setup(struct eng_app *a)
{
	if (a->o.listen) {
		int backlog = a->o.conns > 128 ? (int)a->o.conns : 128;
		int rc = tcp_listen(a->stack, a->o.port, backlog, &eng_listener_ops, a, &a->lis);
		if (rc) {
			fprintf(stderr, "softrnic-tcp: listen %u: %s\n", a->o.port, strerror(-rc));
			return -1;
		}
		/* Scripts wait for this line before they start the peer. */
		printf("softrnic-tcp: listening on port %u\n", a->o.port);
		fflush(stdout);
		return 0;
	}
	a->dst.sin_family = AF_INET;
	a->dst.sin_port = htons(a->o.port);
	inet_pton(AF_INET, a->o.host, &a->dst.sin_addr);
	return 0;
}

/* Naps until the next timer, at most nap_ns. */
static void nap(const struct eng_app *a, uint64_t next_ns)
{
	uint64_t ns = next_ns < a->nap_ns ? next_ns : a->nap_ns;
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	nanosleep(&ts, NULL);
}

/* Time-bounded poll loop, with the port poll thread's rule (dpdk_poll.c): spin while packets
 * come and for spin_us after the last, then nap until the next timer, at most nap_us. Two
 * engines and a forwarder on one small machine otherwise take every core by spinning, and
 * each packet then waits for a time slice. */
static bool run(struct eng_app *a)
{
	uint64_t deadline = a->o.timeout_s > 0 ? stcp_now_ns() + (uint64_t)(a->o.timeout_s * 1e9)
					       : UINT64_MAX;
	uint64_t busy_at = stcp_now_ns(), now;

	/* a nap lasts what it asks: the default 50 us timer slack would add as much again */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	while (!eng_done(a) && !stop_signal) {
		uint64_t next = UINT64_MAX;
		if (!a->o.listen)
			eng_open_more(a);
		int n = dpdk_port_poll(a->port, &next);
		eng_service(a);
		tcp_stack_flush(a->stack);
		now = stcp_now_ns();
		if (now > deadline)
			return true;
		if (n > 0)
			busy_at = now;
		else if (now - busy_at >= a->spin_ns && next > 0)
			nap(a, next);
	}
	return false;
}

/* A few more polls after the last connection ended: its final ACK is still to go out. */
static void linger(struct eng_app *a, uint64_t ns)
{
	uint64_t end = stcp_now_ns() + ns;
	while (stcp_now_ns() < end) {
		dpdk_port_poll(a->port, NULL);
		tcp_stack_flush(a->stack);
	}
}

static void timeout_dump(struct eng_app *a)
{
	unsigned shown = 0;
	fprintf(stderr, "softrnic-tcp: timeout after %.1f s: %u of %u connections over\n",
		a->o.timeout_s, a->over, a->o.conns);
	for (uint32_t i = 0; i < a->o.conns; i++) {
		struct eng_conn *x = &a->cx[i];
		if (x->over)
			continue;
		const char *st = x->c ? tcp_state_name(tcp_conn_state(x->c)) : "not opened";
		if (shown++ < 5)
			fprintf(stderr, "  conn %u: %s, rx %llu tx %llu octets\n", i, st,
				(unsigned long long)x->s.raw_rx, (unsigned long long)x->s.raw_tx);
		if (x->c) {
			tcp_conn_get_stats(x->c, &x->st);
			x->have_st = true;
		}
		stcp_sess_fail(&x->s, STCP_E_TIMEOUT, "still %s at the --timeout", st);
	}
}

int main(int argc, char **argv)
{
	struct eng_app a;
	memset(&a, 0, sizeof(a));
	if (stcp_opts_parse(&a.o, argc, argv, "softrnic-tcp"))
		return 64;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (eng_app_init(&a)) {
		fprintf(stderr, "softrnic-tcp: out of memory\n");
		return 1;
	}
	if (open_port(&a)) {
		eng_app_fini(&a);
		return 3;
	}
	int status = 1;
	if (setup(&a) == 0) {
		bool timed_out = run(&a);
		if (timed_out)
			timeout_dump(&a);
		else
			linger(&a, 50000000);
		for (uint32_t i = 0; i < a.o.conns; i++)
			if (a.cx[i].s.out == STCP_PENDING)
				stcp_sess_fail(&a.cx[i].s, STCP_E_OTHER, "interrupted");
		if (a.o.stats)
			eng_print_stats(&a);
		status = stcp_report("softrnic-tcp", &a.o, &a.cx[0].s, sizeof(a.cx[0]), a.o.conns,
				     timed_out);
	}
	/* The port stays open to the end of the process (as the RNIC's process-wide port does):
	 * DPDK 22.11's memif can crash in its interrupt thread when a device is closed while
	 * the peer process disconnects, which both tools do at the same moment here. Port
	 * teardown is tested on its own (tests/tcp/net test_dpdk_port). */
	eng_app_fini(&a);
	return status;
}
