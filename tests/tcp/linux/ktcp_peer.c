/* ktcp_peer: the kernel twin of apps/tcp/softrnic-tcp. Same command line, same sessions
 * (apps/tcp/stcp_sess.c), on kernel sockets with one epoll loop, so that either side of a
 * tests/tcp case (or the loopback baseline of scripts/bench-tcp.sh) can be Linux TCP.
 * Exit status: 0 every connection ended as expected, 1 not, 2 --timeout, 3 socket setup
 * failed, 64 usage. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "stcp.h"

#define ECHO_BUF (256u * 1024u)
#define LISTENER_TAG UINT32_MAX

struct kconn {
	struct stcp_sess s;
	int fd;
	uint32_t idx, events;
	bool started, over, connecting, rd_eof, shut, shut_wanted;
	uint8_t *eb;          /* echo ring */
	size_t eh, en;
};

struct kapp {
	struct stcp_opts o;
	struct kconn *cx;
	int ep, lfd;
	uint32_t opened, over, handshakes, established;
	struct sockaddr_in dst;
};

static volatile sig_atomic_t stop_signal;
static void on_signal(int sig) { stop_signal = sig; }

static void kc_over(struct kapp *a, struct kconn *x, bool abort)
{
	if (x->over)
		return;
	if (abort) {
		struct linger l = { 1, 0 };  /* close() sends RST */
		setsockopt(x->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	}
	close(x->fd);  /* also leaves the epoll set */
	x->fd = -1;
	x->over = true;
	a->over++;
	if (x->connecting) {
		x->connecting = false;
		a->handshakes--;
	}
}

static void kc_error(struct kapp *a, struct kconn *x, int err)
{
	stcp_sess_error(&x->s, -err);
	kc_over(a, x, false);
}

static void kc_interest(struct kapp *a, struct kconn *x)
{
	const uint8_t *p;
	uint32_t ev = 0;
	if (x->over)
		return;
	if (!x->rd_eof && (x->s.role != STCP_ECHO || x->en < ECHO_BUF))
		ev |= EPOLLIN;
	if (x->connecting || x->en || (x->started && !x->shut && stcp_sess_tx_peek(&x->s, &p)))
		ev |= EPOLLOUT;
	if (ev != x->events) {
		struct epoll_event e = { .events = ev, .data.u32 = x->idx };
		epoll_ctl(a->ep, EPOLL_CTL_MOD, x->fd, &e);
		x->events = ev;
	}
}

/* KTCP_CC names the congestion control of every connection (root may pick any the kernel
 * has, whatever the namespace's default: bench-impair.sh compares like with like). */
static int set_cc(int fd)
{
	const char *cc = getenv("KTCP_CC");

	if (!cc || !*cc)
		return 0;
	return setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) ? -errno : 0;
}

static int kc_add(struct kapp *a, struct kconn *x, int fd, bool connecting)
{
	int one = 1, rc;
	x->fd = fd;
	x->connecting = connecting;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((rc = set_cc(fd)))
		return rc;
	x->events = EPOLLIN | EPOLLOUT;
	struct epoll_event e = { .events = x->events, .data.u32 = x->idx };
	if (epoll_ctl(a->ep, EPOLL_CTL_ADD, fd, &e))
		return -errno;
	if (!connecting) {
		x->started = true;
		a->established++;
		stcp_sess_start(&x->s);
	}
	return 0;
}

static void kc_read(struct kapp *a, struct kconn *x)
{
	static uint8_t buf[65536];
	while (!x->over && !x->rd_eof) {
		uint8_t *dst = buf;
		size_t room = sizeof(buf);
		if (x->s.role == STCP_ECHO) {  /* straight into the ring's free run */
			size_t tail = (x->eh + x->en) % ECHO_BUF;
			room = ECHO_BUF - x->en;
			room = tail + room > ECHO_BUF ? ECHO_BUF - tail : room;
			dst = x->eb + tail;
			if (!room)
				return;
		}
		ssize_t n = read(x->fd, dst, room);
		if (n > 0) {
			if (x->s.role == STCP_ECHO) {
				x->en += (size_t)n;
				x->s.raw_rx += (uint64_t)n;
			} else {
				stcp_sess_rx(&x->s, dst, (size_t)n);
			}
		} else if (n == 0) {
			x->rd_eof = true;
			stcp_sess_eof(&x->s);
		} else if (errno == EAGAIN || errno == EINTR) {
			return;
		} else {
			kc_error(a, x, errno);
		}
	}
}

static bool kc_write_chunk(struct kapp *a, struct kconn *x, const uint8_t *p, size_t n,
			   size_t *done)
{
	ssize_t w = send(x->fd, p, n, MSG_NOSIGNAL);
	if (w >= 0) {
		*done = (size_t)w;
		return (size_t)w == n;
	}
	*done = 0;
	if (errno != EAGAIN && errno != EINTR)
		kc_error(a, x, errno);
	return false;
}

static void kc_write(struct kapp *a, struct kconn *x)
{
	size_t done;
	const uint8_t *p;
	size_t n;
	if (x->s.role == STCP_ECHO) {
		while (x->en && !x->over) {
			n = x->eh + x->en > ECHO_BUF ? ECHO_BUF - x->eh : x->en;
			bool all = kc_write_chunk(a, x, x->eb + x->eh, n, &done);
			x->eh = (x->eh + done) % ECHO_BUF;
			x->en -= done;
			x->s.raw_tx += done;
			if (!all)
				return;
		}
		return;
	}
	while (!x->over && !x->shut && (n = stcp_sess_tx_peek(&x->s, &p)) > 0) {
		bool all = kc_write_chunk(a, x, p, n, &done);
		stcp_sess_tx_done(&x->s, done);
		if (!all)
			return;
	}
}

static void kc_act(struct kapp *a, struct kconn *x)
{
	switch (stcp_sess_take_act(&x->s)) {
	case STCP_ACT_NONE:
		break;
	case STCP_ACT_SHUTDOWN:
		x->shut_wanted = true;
		break;
	case STCP_ACT_ABORT:
		kc_over(a, x, true);
		return;
	case STCP_ACT_CLOSE:
		kc_over(a, x, false);
		return;
	}
	if (x->shut_wanted && !x->shut && !x->en) {
		shutdown(x->fd, SHUT_WR);
		x->shut = true;
	}
	if (x->shut && x->rd_eof) {  /* both FINs: done */
		stcp_sess_closed(&x->s);
		kc_over(a, x, false);
	}
}

static void kc_connected(struct kapp *a, struct kconn *x)
{
	int err = 0;
	socklen_t len = sizeof(err);
	getsockopt(x->fd, SOL_SOCKET, SO_ERROR, &err, &len);
	x->connecting = false;
	a->handshakes--;
	if (err) {
		kc_error(a, x, err);
		return;
	}
	x->started = true;
	a->established++;
	stcp_sess_start(&x->s);
}

static void kc_event(struct kapp *a, struct kconn *x, uint32_t ev)
{
	if (x->over)
		return;
	if (x->connecting) {
		if (!(ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		kc_connected(a, x);
		if (x->over)
			return;
	}
	for (int round = 0; round < 4 && !x->over; round++) {
		kc_read(a, x);
		if (!x->over)
			kc_write(a, x);
		if (!x->over)
			kc_act(a, x);
	}
	kc_interest(a, x);
}

static void k_accept(struct kapp *a)
{
	for (;;) {
		int fd = accept4(a->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (a->opened >= a->o.conns) {
			close(fd);
			continue;
		}
		struct kconn *x = &a->cx[a->opened++];
		int rc = kc_add(a, x, fd, false);
		if (rc) {
			stcp_sess_error(&x->s, rc);
			close(fd);
			x->over = true;
			a->over++;
			continue;
		}
		kc_event(a, x, EPOLLIN | EPOLLOUT);
	}
}

static void k_open_more(struct kapp *a)
{
	uint32_t allowed = a->established || a->over ? a->o.burst : 1;
	while (a->opened < a->o.conns && a->handshakes < allowed) {
		struct kconn *x = &a->cx[a->opened++];
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		int rc = fd < 0 ? -errno : 0;
		if (!rc && connect(fd, (struct sockaddr *)&a->dst, sizeof(a->dst)) &&
		    errno != EINPROGRESS)
			rc = -errno;
		if (!rc) {
			a->handshakes++;
			rc = kc_add(a, x, fd, true);
			if (rc)
				a->handshakes--;
		}
		if (rc) {
			stcp_sess_error(&x->s, rc);
			if (fd >= 0)
				close(fd);
			x->over = true;
			a->over++;
		}
	}
}

static int k_setup(struct kapp *a)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;  /* --conns 1000 needs more than the usual 1024 */
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	a->ep = epoll_create1(EPOLL_CLOEXEC);
	a->lfd = -1;
	if (a->ep < 0)
		return -errno;
	if (!a->o.listen) {
		a->dst.sin_family = AF_INET;
		a->dst.sin_port = htons(a->o.port);
		inet_pton(AF_INET, a->o.host, &a->dst.sin_addr);
		return 0;
	}
	int one = 1;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(a->o.port) };
	a->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (a->lfd < 0)
		return -errno;
	setsockopt(a->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(a->lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(a->lfd, a->o.conns > 128 ? (int)a->o.conns : 128))
		return -errno;
	struct epoll_event e = { .events = EPOLLIN, .data.u32 = LISTENER_TAG };
	return epoll_ctl(a->ep, EPOLL_CTL_ADD, a->lfd, &e) ? -errno : 0;
}

static bool k_run(struct kapp *a)
{
	uint64_t deadline = a->o.timeout_s > 0 ? stcp_now_ns() + (uint64_t)(a->o.timeout_s * 1e9)
					       : UINT64_MAX;
	struct epoll_event ev[256];
	while (a->over < a->o.conns && !stop_signal) {
		if (!a->o.listen)
			k_open_more(a);
		uint64_t now = stcp_now_ns();
		if (now > deadline)
			return true;
		uint64_t left_ms = deadline == UINT64_MAX ? 100 : (deadline - now) / 1000000 + 1;
		int n = epoll_wait(a->ep, ev, 256, left_ms < 100 ? (int)left_ms : 100);
		for (int i = 0; i < n; i++) {
			if (ev[i].data.u32 == LISTENER_TAG)
				k_accept(a);
			else
				kc_event(a, &a->cx[ev[i].data.u32], ev[i].events);
		}
	}
	return false;
}

int main(int argc, char **argv)
{
	struct kapp a;
	memset(&a, 0, sizeof(a));
	if (stcp_opts_parse(&a.o, argc, argv, "ktcp_peer"))
		return 64;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	a.cx = calloc(a.o.conns, sizeof(*a.cx));
	if (!a.cx)
		return 1;
	for (uint32_t i = 0; i < a.o.conns; i++) {
		a.cx[i].idx = i;
		a.cx[i].fd = -1;
		if (stcp_sess_init(&a.cx[i].s, &a.o, i) ||
		    (a.o.role == STCP_ECHO && !(a.cx[i].eb = malloc(ECHO_BUF)))) {
			fprintf(stderr, "ktcp_peer: out of memory\n");
			return 1;
		}
	}
	int rc = k_setup(&a);
	if (rc) {
		fprintf(stderr, "ktcp_peer: socket setup: %s\n", strerror(-rc));
		return 3;
	}
	bool timed_out = k_run(&a);
	for (uint32_t i = 0; i < a.o.conns; i++) {
		struct kconn *x = &a.cx[i];
		if (x->s.out == STCP_PENDING)
			stcp_sess_fail(&x->s, timed_out ? STCP_E_TIMEOUT : STCP_E_OTHER,
				       timed_out ? "still open at the --timeout" : "interrupted");
		if (!x->over && x->fd >= 0)
			close(x->fd);
		if (timed_out && i < 5 && !x->over)
			fprintf(stderr, "ktcp_peer: conn %u open at timeout: rx %llu tx %llu\n", i,
				(unsigned long long)x->s.raw_rx, (unsigned long long)x->s.raw_tx);
	}
	rc = stcp_report("ktcp_peer", &a.o, &a.cx[0].s, sizeof(a.cx[0]), a.o.conns, timed_out);
	for (uint32_t i = 0; i < a.o.conns; i++) {
		stcp_sess_fini(&a.cx[i].s);
		free(a.cx[i].eb);
	}
	free(a.cx);
	if (a.lfd >= 0)
		close(a.lfd);
	close(a.ep);
	return rc;
}
