/* The control channel: a TCP side socket between the two sides, independent of the RDMA
 * devices under test, so that the sides stay in step and exchange their views (offers,
 * verdicts) even when a check has broken its RDMA connection. Messages are fixed-size, with
 * every integer in network order. */
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include "ic.h"

/* addr (NULL: every address, when passive) and port, for a stream socket or rdma_cm */
struct addrinfo *ic_lookup(const char *addr, const char *port, bool passive)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = passive ? AI_PASSIVE : 0 }, *ai = NULL;
	int rc = getaddrinfo(addr, port, &hints, &ai);
	if (rc != 0) {
		fprintf(stderr, "iwarp-conform: %s port %s: %s\n", addr ? addr : "*", port,
			gai_strerror(rc));
		return NULL;
	}
	return ai;
}

int ic_ctl_listen(const char *addr, const char *port)
{
	struct addrinfo *ai = ic_lookup(addr, port, true);
	if (!ai)
		return -1;
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 1) != 0) {
		fprintf(stderr, "iwarp-conform: control port %s: %s\n", port, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

int ic_ctl_accept(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), one = 1;
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* The server may still be starting: connection refused is tried again for 20 s. */
int ic_ctl_connect(const char *addr, const char *port)
{
	struct addrinfo *ai = ic_lookup(addr, port, false);
	if (!ai)
		return -1;
	int fd = -1, one = 1;
	for (int tries = 0; tries < 200 && fd < 0; tries++) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
			int e = errno;
			close(fd);
			fd = -1;
			if (e != ECONNREFUSED) {
				fprintf(stderr, "iwarp-conform: control connection to %s:%s: %s\n",
					addr, port, strerror(e));
				break;
			}
			usleep(100000);
		}
	}
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	else
		fprintf(stderr, "iwarp-conform: no control connection to %s:%s\n", addr, port);
	freeaddrinfo(ai);
	return fd;
}

static void to_wire(struct ic_msg *m)
{
	m->type = htobe32(m->type);
	m->check = htobe32(m->check);
	m->code = htobe32(m->code);
	m->verdict = htobe32(m->verdict);
	m->addr = htobe64(m->addr);
	m->max_msg = htobe64(m->max_msg);
	m->rkey = htobe32(m->rkey);
	m->len = htobe32(m->len);
}

static void from_wire(struct ic_msg *m)
{
	m->type = be32toh(m->type);
	m->check = be32toh(m->check);
	m->code = be32toh(m->code);
	m->verdict = be32toh(m->verdict);
	m->addr = be64toh(m->addr);
	m->max_msg = be64toh(m->max_msg);
	m->rkey = be32toh(m->rkey);
	m->len = be32toh(m->len);
	m->text[sizeof(m->text) - 1] = 0;
}

int ic_ctl_send(struct ic *ic, const struct ic_msg *msg)
{
	struct ic_msg m = *msg;
	to_wire(&m);
	const uint8_t *p = (const uint8_t *)&m;
	size_t left = sizeof(m);
	while (left) {
		ssize_t n = send(ic->ctl, p, left, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		left -= (size_t)n;
	}
	return 0;
}

/* One message within ms: 0, or -1 on timeout, end of stream or error. */
int ic_ctl_recv(struct ic *ic, struct ic_msg *m, int ms)
{
	uint8_t *p = (uint8_t *)m;
	size_t got = 0;
	struct pollfd pfd = { ic->ctl, POLLIN, 0 };
	while (got < sizeof(*m)) {
		if (poll(&pfd, 1, ms) != 1)
			return -1;
		ssize_t n = recv(ic->ctl, p + got, sizeof(*m) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	from_wire(m);
	return 0;
}

/* A step of a check's halves: code says which, a the server's offer (or NULL). */
int ic_step_send(struct ic *ic, uint32_t code, const struct ic_adv *a)
{
	struct ic_msg m;
	memset(&m, 0, sizeof(m));
	m.type = M_STEP;
	m.code = code;
	if (a) {
		m.addr = a->addr;
		m.rkey = a->rkey;
		m.len = a->len;
	}
	EXPECT(ic, ic_ctl_send(ic, &m) == 0, "control channel: cannot send step %u", code);
	return 0;
}

/* Wait for step `code` of the peer. When the peer's verdict comes instead, its half ended
 * early (it failed or found the check not applicable): kept for the row, and this half
 * ends without a verdict of its own. */
int ic_step_recv(struct ic *ic, uint32_t code, struct ic_adv *a)
{
	struct ic_msg m;
	EXPECT(ic, ic_ctl_recv(ic, &m, 2 * IC_WAIT_MS) == 0,
	       "expected step %u from the %s, saw nothing in %d ms", code,
	       ic->server ? "client" : "server", 2 * IC_WAIT_MS);
	if (m.type == M_RESULT) {
		ic->peer_done = true;
		ic->peer_res = m;
		return -1;
	}
	EXPECT(ic, m.type == M_STEP && m.code == code,
	       "control channel: expected step %u, saw message %u code %u", code, m.type,
	       m.code);
	if (a) {
		a->addr = m.addr;
		a->rkey = m.rkey;
		a->len = m.len;
	}
	return 0;
}
