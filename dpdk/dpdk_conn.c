/* rn_transport over softrnic's TCP engine (tcp/tcp.h) on a DPDK port (dpdk_transport.h).
 *
 * Threads. The port's poll thread runs the stack and so every tcp callback, with the port
 * lock held; every operation here takes the same lock. So the handle's state below is only
 * ever touched under the port lock.
 *
 * Readiness. A handle's fd is an eventfd: readable while its counter is non-zero; its
 * writability means nothing, readable stands for every change (ready_as_readable), so one
 * descriptor is all a stream costs the process's open-file limit. After each callback and each
 * operation the handle's readiness is recomputed (hd_update); the eventfd is written or
 * drained only when it changes, so a stream of packets costs no syscall while the consumer
 * has not caught up.
 *
 * Lifetimes. The engine's tcp_conn lives until on_closed; the handle until close/abort. A
 * handle closed while its tcp_conn still runs (orderly close: FIN, retransmissions) turns
 * into a zombie with no fds that on_closed frees. An abort ends both at once (tcp_abort
 * promises no further callback). A listener's accepted-but-not-taken connections belong to
 * the engine (tcp_listener_close resets them). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_mbuf.h>

#include "dpdk_transport.h"
#include "softrnic_conf.h"

/* How long the port's poll thread stays away after a consumer's own pass, so that the
 * consumer drives the port alone: longer than a consumer's gap between two CQ polls
 * (softrnic-perf reaps every 4096 memory spins). The thread wakes once per hold to look, and
 * that wake-up takes the consumer's core, so a short hold would make RDMA Write latency
 * jitter (docs/dpdk.md). The device's own hold (RN_DEVICE_HOLD_US) is 2 ms for the same
 * reason; the price is the same too: a consumer that stops polling without blocking waits up
 * to 2 ms, once. */
#define DP_HOLD_US 2000u

struct dp_tp {
	struct rn_transport pub; /* first: the public pointer */
	struct dpdk_port *port;
	uint16_t next_port;      /* ephemeral listener ports, when asked for port 0 */
	struct dp_conn *zombies; /* closed handles whose tcp_conn still runs */
	struct dp_conn *nobufs;  /* handles made send-ready after the next pass */
	bool hooked;             /* our pass hook is on the port (retries nobufs) */
	bool holder;             /* registered with rn_mem: dereg copies our references out */
	struct dpdk_tp_stats st;
};

enum hd_kind { HD_LISTENER, HD_STREAM };

struct rx_ent {
	struct rte_mbuf *m;
	uint32_t off, len;
};

struct dp_conn {
	struct rn_conn base; /* first: handles are cast back */
	struct dp_tp *tp;
	enum hd_kind kind;
	int efd;             /* the handle's fd; -1 for a zombie */
	bool signalled;      /* efd's counter is non-zero */
	bool defer;          /* in our own recv's port pass: its end decides the eventfd */
	bool nb_wait;        /* on tp->nobufs */
	bool nb_refused;     /* a send was refused for want of mbufs: ready after the next pass */
	bool write_soft;     /* ready after the next pass unless a sendv/recv came first */
	struct dp_conn *nb_next;
	bool zombie;         /* the user closed it; waits for on_closed */
	/* listener */
	struct tcp_listener *lis;
	bool acceptable;     /* on_acceptable seen, no -EAGAIN from tcp_accept since */
	struct dp_conn *spare; /* a ready handle for the next accept (fds made once) */
	/* stream */
	struct tcp_conn *tc; /* NULL after on_closed (or abort) */
	int cstatus;         /* connect_status: -EINPROGRESS, 0 or the failure */
	bool cstatus_new;    /* connect finished, not yet looked at */
	bool write_wait;     /* sendv said -EAGAIN: on_writable will follow */
	bool write_ready;    /* on_writable came; cleared by the next sendv or recv */
	bool eof;            /* the peer's FIN arrived (after all its data) */
	uint64_t ref_done;   /* sendv_ref: the last batch released */
	bool ref_new;        /* a batch was released since ref_released was last asked */
	int err;             /* on_closed's error (0: orderly) once tc is NULL */
	struct rx_ent *rxq;  /* ring of received payload pieces */
	uint32_t rx_cap, rx_head, rx_n;
	struct sockaddr_in local, peer;
	struct dp_conn *znext, **zpprev; /* tp->zombies */
};

static const struct rn_transport_ops dp_ops, dp_ops_ref;

static struct dp_conn *to_dp(const struct rn_conn *c)
{
	return (struct dp_conn *)c;
}

static void tp_lock(struct dp_tp *tp)
{
	dpdk_port_lock(tp->port);
}

static void tp_unlock(struct dp_tp *tp)
{
	dpdk_port_unlock(tp->port);
}

static struct tcp_stack *tp_stack(struct dp_tp *tp)
{
	return dpdk_port_stack(tp->port);
}

/* After an operation that queued work for the engine: transmit now, and make a napping poll
 * thread look at timers (a SYN's or a FIN's retransmission). */
static void tp_push(struct dp_tp *tp)
{
	tcp_stack_flush(tp_stack(tp));
	dpdk_port_kick(tp->port);
}

/* ---- readiness ------------------------------------------------------------------------- */
static bool hd_ready(const struct dp_conn *h)
{
	if (h->kind == HD_LISTENER)
		return h->acceptable;
	return h->rx_n > 0 || h->eof || h->tc == NULL || h->write_ready || h->cstatus_new ||
	       h->ref_new;
}

/* Lock held: bring the eventfd in line with the handle's state (transitions only). */
static void hd_update(struct dp_conn *h)
{
	bool want = hd_ready(h);
	uint64_t v = 1;

	if (h->efd < 0 || want == h->signalled || h->defer)
		return;
	if (want) {
		if (write(h->efd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			return; /* cannot happen (counter far from its limit); retried next change */
		h->tp->st.signals++;
	} else {
		if (read(h->efd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			return;
		h->tp->st.unsignals++;
	}
	h->signalled = want;
}

/* ---- handles -------------------------------------------------------------------------- */
static int hd_new(struct dp_tp *tp, enum hd_kind kind, struct dp_conn **out)
{
	struct dp_conn *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return -ENOMEM;
	h->base.ops = tp->pub.ops;
	h->tp = tp;
	h->kind = kind;
	h->cstatus = -EINPROGRESS;
	h->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (h->efd < 0) {
		int rc = errno == ENOMEM ? -ENOMEM : -EMFILE; /* ENFILE too: no descriptor */
		free(h);
		return rc;
	}
	tp->st.handles++;
	*out = h;
	return 0;
}

static void rx_drop_all(struct dp_conn *h)
{
	while (h->rx_n > 0) {
		rte_pktmbuf_free(h->rxq[h->rx_head].m);
		h->rx_head = (h->rx_head + 1) % h->rx_cap;
		h->rx_n--;
	}
}

/* Lock held: release the fd (the handle's user is gone). */
static void hd_drop_fds(struct dp_conn *h)
{
	rn_fd_close(h->efd); /* the device's engine may still watch it (rn_transport.h) */
	h->efd = -1;
}

/* Lock held: take h off tp->nobufs (short list: handles refused for want of mbufs). */
static void nb_remove(struct dp_conn *h)
{
	struct dp_conn **pp = &h->tp->nobufs;

	if (!h->nb_wait)
		return;
	while (*pp != NULL && *pp != h)
		pp = &(*pp)->nb_next;
	if (*pp == h)
		*pp = h->nb_next;
	h->nb_wait = false;
	h->nb_next = NULL;
}

static void hd_free(struct dp_conn *h)
{
	nb_remove(h);
	if (h->zpprev != NULL) { /* off the zombie list */
		*h->zpprev = h->znext;
		if (h->znext != NULL)
			h->znext->zpprev = h->zpprev;
	}
	hd_drop_fds(h);
	rx_drop_all(h);
	free(h->rxq);
	h->tp->st.handles--;
	free(h);
}

/* ---- engine callbacks (poll thread, port lock held) ------------------------------------- */
static void cb_connected(void *arg, struct tcp_conn *c, int err)
{
	struct dp_conn *h = arg;

	if (h->zombie)
		return;
	h->cstatus = err;
	h->cstatus_new = true;
	if (err == 0)
		tcp_conn_addrs(c, &h->local, &h->peer);
	hd_update(h);
}

static bool rx_grow(struct dp_conn *h)
{
	uint32_t cap = h->rx_cap ? h->rx_cap * 2 : 64;
	struct rx_ent *q = malloc(cap * sizeof(*q));

	if (q == NULL)
		return false;
	for (uint32_t i = 0; i < h->rx_n; i++)
		q[i] = h->rxq[(h->rx_head + i) % h->rx_cap];
	free(h->rxq);
	h->rxq = q;
	h->rx_cap = cap;
	h->rx_head = 0;
	return true;
}

/* The consumer is gone or cannot hold more: the payload is dropped. A live stream that lost
 * octets must not go on with a hole in it, so it ends (ECONNRESET to the peer, -ENOMEM
 * here). */
static void rx_refuse(struct dp_conn *h, struct tcp_conn *c, struct rte_mbuf *m, uint32_t len)
{
	rte_pktmbuf_free(m);
	if (h->zombie) {
		tcp_conn_recved(c, len);
		return;
	}
	tcp_abort(c);
	h->tc = NULL;
	h->err = -ENOMEM;
	hd_update(h);
}

static void cb_recv(void *arg, struct tcp_conn *c, struct rte_mbuf *m, uint32_t off,
		    uint32_t len)
{
	struct dp_conn *h = arg;

	if (len == 0) {
		rte_pktmbuf_free(m);
		return;
	}
	if (h->zombie || (h->rx_n == h->rx_cap && !rx_grow(h))) {
		rx_refuse(h, c, m, len);
		return;
	}
	h->rxq[(h->rx_head + h->rx_n) % h->rx_cap] = (struct rx_ent){ m, off, len };
	h->rx_n++;
	hd_update(h);
}

static void cb_eof(void *arg, struct tcp_conn *c)
{
	struct dp_conn *h = arg;
	(void)c;

	h->eof = true;
	hd_update(h);
}

static void cb_writable(void *arg, struct tcp_conn *c)
{
	struct dp_conn *h = arg;
	(void)c;

	if (!h->write_wait)
		return;
	h->write_wait = false;
	h->write_ready = true;
	hd_update(h);
}

/* The cookie is the batch number (rn_transport.h sendv_ref). An error needs no report of its
 * own: the memory is released either way, and a failed stream reports itself (on_closed). */
_Static_assert(sizeof(void *) >= sizeof(uint64_t), "batch numbers travel as cookies");

static void cb_zc_done(void *arg, struct tcp_conn *c, void *cookie, int err)
{
	struct dp_conn *h = arg;

	(void)c, (void)err;
	h->ref_done = (uint64_t)(uintptr_t)cookie;
	h->ref_new = true;
	hd_update(h);
}

static void cb_closed(void *arg, struct tcp_conn *c, int err)
{
	struct dp_conn *h = arg;
	(void)c;

	h->tc = NULL;
	if (h->zombie) {
		hd_free(h);
		return;
	}
	if (h->cstatus == -EINPROGRESS) { /* failed open: on_connected came first, normally */
		h->cstatus = err != 0 ? err : -ECONNABORTED;
		h->cstatus_new = true;
	}
	h->err = err;
	h->write_wait = false;
	hd_update(h);
}

static const struct tcp_conn_ops dp_conn_ops = {
	.on_connected = cb_connected,
	.on_recv = cb_recv,
	.on_eof = cb_eof,
	.on_writable = cb_writable,
	.on_zc_done = cb_zc_done,
	.on_closed = cb_closed,
};

static void cb_acceptable(void *arg, struct tcp_listener *l)
{
	struct dp_conn *h = arg;
	(void)l;

	h->acceptable = true;
	hd_update(h);
}

static const struct tcp_listener_ops dp_listener_ops = { .on_acceptable = cb_acceptable };

/* ---- addresses ------------------------------------------------------------------------ */
static int want_in4(const struct sockaddr *addr, socklen_t len, const struct sockaddr_in **out)
{
	if (addr == NULL || len < (socklen_t)sizeof(sa_family_t))
		return -EINVAL;
	if (addr->sa_family != AF_INET)
		return -EAFNOSUPPORT; /* the engine is IPv4 only */
	if (len < (socklen_t)sizeof(struct sockaddr_in))
		return -EINVAL;
	*out = (const struct sockaddr_in *)addr;
	return 0;
}

static int put_addr(const struct sockaddr_in *a, struct sockaddr *addr, socklen_t *len)
{
	if (addr == NULL || len == NULL)
		return -EINVAL;
	memcpy(addr, a, *len < sizeof(*a) ? *len : sizeof(*a));
	*len = sizeof(*a);
	return 0;
}

/* ---- listen / accept --------------------------------------------------------------------- */
/* Lock held: listen on port, or (port 0) on the first free port of the ephemeral range. */
static int listen_port(struct dp_tp *tp, uint16_t port, int backlog, struct dp_conn *h)
{
	struct tcp_stack *s = tp_stack(tp);
	int rc;

	if (port != 0)
		return tcp_listen(s, port, backlog, &dp_listener_ops, h, &h->lis);
	for (unsigned i = 0; i < 28232u; i++) { /* 32768..60999, as Linux picks */
		uint16_t p = (uint16_t)(32768u + (tp->next_port++ % 28232u));
		rc = tcp_listen(s, p, backlog, &dp_listener_ops, h, &h->lis);
		if (rc != -EADDRINUSE)
			return rc;
	}
	return -EADDRINUSE;
}

/* A listener on the engine is invisible to ss(8) and /proc/net/tcp: SOFTRNIC_DPDK_LISTEN_LOG
 * names a file that gets one line, the port, for every listener opened, so a script can wait
 * until a server listens instead of sleeping a guess. */
static void listen_log(uint16_t port)
{
	const char *path = softrnic_conf_get("SOFTRNIC_DPDK_LISTEN_LOG", NULL, 0);
	char line[16];

	if (path == NULL || *path == '\0')
		return;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	int n = snprintf(line, sizeof(line), "%u\n", port);
	if (write(fd, line, (size_t)n) != n) {
		/* nothing to do: the log is a convenience for scripts */
	}
	close(fd);
}

/* A listener's children are whole connections: it holds at most this many half-open and as
 * many not yet accepted, whatever its owner asks. Past the half-open ones it answers with
 * SYN cookies, which hold nothing (docs/tcp.md). */
#define DP_LISTEN_BACKLOG_MAX 128

static int dp_listen(const struct rn_transport *t, const struct sockaddr *addr, socklen_t len,
		     int backlog, struct rn_conn **out)
{
	struct dp_tp *tp = (struct dp_tp *)t;
	const struct sockaddr_in *a;
	struct dp_conn *h;
	int rc = want_in4(addr, len, &a);

	if (rc != 0)
		return rc;
	if (backlog <= 0)
		backlog = 1;
	if (backlog > DP_LISTEN_BACKLOG_MAX)
		backlog = DP_LISTEN_BACKLOG_MAX;
	tp_lock(tp);
	uint32_t ip = net_if_ip(tcp_stack_netif(tp_stack(tp)));
	if (a->sin_addr.s_addr != htonl(INADDR_ANY) && a->sin_addr.s_addr != ip)
		rc = -EADDRNOTAVAIL;
	if (rc == 0)
		rc = hd_new(tp, HD_LISTENER, &h);
	if (rc == 0) {
		rc = listen_port(tp, ntohs(a->sin_port), backlog, h);
		if (rc != 0) {
			hd_free(h);
		} else {
			h->local = (struct sockaddr_in){ .sin_family = AF_INET,
				.sin_port = htons(tcp_listener_port(h->lis)),
				.sin_addr.s_addr = ip };
			*out = &h->base;
		}
	}
	tp_unlock(tp);
	if (rc == 0)
		listen_log(ntohs(h->local.sin_port));
	return rc;
}

static int dp_accept(struct rn_conn *listener, struct rn_conn **out)
{
	struct dp_conn *l = to_dp(listener);
	struct dp_tp *tp = l->tp;
	int rc = 0;

	if (l->kind != HD_LISTENER)
		return -EINVAL;
	tp_lock(tp);
	if (l->spare == NULL)
		rc = hd_new(tp, HD_STREAM, &l->spare);
	if (rc == 0)
		rc = tcp_accept(l->lis, &dp_conn_ops, l->spare, &l->spare->tc);
	if (rc == 0) {
		struct dp_conn *h = l->spare;
		l->spare = NULL;
		h->cstatus = 0;
		dpdk_port_conn_setup(tp->port, h->tc);
		tcp_conn_addrs(h->tc, &h->local, &h->peer);
		*out = &h->base;
		dpdk_port_kick(tp->port); /* early data is delivered at the next poll */
	} else if (rc == -EAGAIN) {
		l->acceptable = false;
	}
	hd_update(l);
	tp_unlock(tp);
	return rc;
}

/* ---- connect ---------------------------------------------------------------------------- */
static int dp_connect(const struct rn_transport *t, const struct sockaddr *addr, socklen_t len,
		      struct rn_conn **out)
{
	struct dp_tp *tp = (struct dp_tp *)t;
	const struct sockaddr_in *a;
	struct dp_conn *h;
	int rc = want_in4(addr, len, &a);

	if (rc != 0)
		return rc;
	tp_lock(tp);
	rc = hd_new(tp, HD_STREAM, &h);
	if (rc == 0) {
		rc = tcp_connect(tp_stack(tp), a, 0, &dp_conn_ops, h, &h->tc);
		if (rc != 0) {
			hd_free(h);
		} else {
			dpdk_port_conn_setup(tp->port, h->tc);
			tcp_conn_addrs(h->tc, &h->local, &h->peer);
			*out = &h->base;
			tp_push(tp);
		}
	}
	tp_unlock(tp);
	return rc;
}

static int dp_connect_status(struct rn_conn *c)
{
	struct dp_conn *h = to_dp(c);
	int st;

	if (h->kind != HD_STREAM)
		return -EINVAL;
	tp_lock(h->tp);
	st = h->cstatus;
	if (h->cstatus_new) {
		h->cstatus_new = false;
		hd_update(h);
	}
	tp_unlock(h->tp);
	return st;
}

/* ---- data ------------------------------------------------------------------------------- */
/* Lock held: why a stream without a tcp_conn cannot send. */
static int dead_send_err(const struct dp_conn *h)
{
	return h->err == -ECONNRESET || h->err == -ETIMEDOUT ? h->err : -EPIPE;
}

static size_t iov_total(const struct iovec *iov, unsigned iovcnt)
{
	size_t t = 0;

	for (unsigned i = 0; i < iovcnt; i++)
		t += iov[i].iov_len;
	return t;
}

/* Lock held: *flag, and send-ready at the end of the next port pass (tp_pass) if *flag is
 * still set then; without our hook on the port (a second transport on it), ready now. */
static void after_pass(struct dp_conn *h, bool *flag)
{
	if (!h->tp->hooked) {
		h->write_ready = true;
		return;
	}
	*flag = true;
	if (!h->nb_wait) {
		h->nb_wait = true;
		h->nb_next = h->tp->nobufs;
		h->tp->nobufs = h;
	}
}

/* Lock held: the send-space state after tcp_send returned n of total octets. */
static void note_send(struct dp_conn *h, ssize_t n, size_t total)
{
	if (h->cstatus != 0)
		return; /* connecting: the connect result is what wakes the consumer */
	/* the engine calls on_writable after any send it could not take whole */
	if (n == -EAGAIN || (n > 0 && (size_t)n < total))
		h->write_wait = true;
	/* Took everything and there is room for more: a socket would stay writable, and a
	 * consumer that stopped early (a QP at its per-pass budget, or one that frames more
	 * only on the next writable event) counts on that: ready until its next sendv or
	 * recv. After a send of at most one segment, ready only from the end of the next port
	 * pass: a consumer that polls right after its send (a ping-pong) takes that back
	 * first, which saves an eventfd write and read per message. Larger sends keep the
	 * signal at once: a streaming sender deferred to the end of a pass loses bandwidth. */
	else if (n > 0 && tcp_conn_send_space(h->tc) > 0 && total > tcp_conn_mss(h->tc))
		h->write_ready = true; /* streaming: the next writable event is due now */
	else if (n > 0 && tcp_conn_send_space(h->tc) > 0)
		after_pass(h, &h->write_soft);
}

/* Lock held: tcp_send found the port's pool empty. Not a stream failure: the mbufs come
 * back as the peer acknowledges and as consumers read, so the handle turns ready after the
 * next port pass (tp_pass) and the consumer tries again. Without our hook on the port (a
 * second transport on it) the handle turns ready at once instead. */
static ssize_t nobufs_wait(struct dp_conn *h)
{
	after_pass(h, &h->nb_refused);
	return -EAGAIN;
}

/* End of every port pass, lock held: retry the sends refused for want of mbufs. */
static void tp_pass(void *arg)
{
	struct dp_tp *tp = arg;

	while (tp->nobufs != NULL) {
		struct dp_conn *h = tp->nobufs;
		tp->nobufs = h->nb_next;
		h->nb_next = NULL;
		h->nb_wait = false;
		if (h->nb_refused || h->write_soft)
			h->write_ready = true;
		h->nb_refused = h->write_soft = false;
		hd_update(h);
	}
}

/* sendv and sendv_ref: ref NULL copies everything. */
static ssize_t send_any(struct dp_conn *h, const struct iovec *iov, unsigned iovcnt,
			const bool *ref, uint64_t batch, bool *held)
{
	ssize_t n;

	if (h->kind != HD_STREAM || (iovcnt > 0 && iov == NULL))
		return -EINVAL;
	tp_lock(h->tp);
	h->write_ready = h->write_soft = false;
	if (h->tc == NULL) {
		n = dead_send_err(h);
	} else {
		n = ref ? tcp_send_ref(h->tc, iov, iovcnt, ref, (void *)(uintptr_t)batch, held)
			: tcp_send(h->tc, iov, iovcnt);
		if (n == -ENOTCONN && h->cstatus == -EINPROGRESS)
			n = -EAGAIN; /* still connecting: simply not writable yet */
		else if (n > 0)
			tcp_stack_flush(tp_stack(h->tp));
		if (n == -ENOBUFS)
			n = nobufs_wait(h);
		else
			note_send(h, n, iov_total(iov, iovcnt));
	}
	hd_update(h);
	tp_unlock(h->tp);
	return n;
}

static ssize_t dp_sendv(struct rn_conn *c, const struct iovec *iov, unsigned iovcnt)
{
	return send_any(to_dp(c), iov, iovcnt, NULL, 0, NULL);
}

/* Only in dp_ops_ref, which a transport gets when its port's transmit copies
 * (dpdk_port_tx_refs) and it is an rn_mem holder (tp->holder). */
static ssize_t dp_sendv_ref(struct rn_conn *c, const struct iovec *iov, unsigned iovcnt,
			    const bool *ref, uint64_t batch, bool *held)
{
	struct dp_conn *h = to_dp(c);

	*held = false;
	if (ref == NULL)
		return send_any(h, iov, iovcnt, NULL, 0, NULL);
	return send_any(h, iov, iovcnt, ref, batch, held);
}

static uint64_t dp_ref_released(struct rn_conn *c)
{
	struct dp_conn *h = to_dp(c);
	uint64_t v;

	tp_lock(h->tp);
	v = h->ref_done;
	h->ref_new = false;
	hd_update(h);
	tp_unlock(h->tp);
	return v;
}

/* rn_mem holder: a deregistration takes memory away; copy out what the stack references. */
static void tp_drop_refs(void *arg)
{
	struct dp_tp *tp = arg;

	tp_lock(tp);
	tp->st.ref_drops++;
	tp->st.ref_resets += tcp_stack_zc_unref(tp_stack(tp));
	tcp_stack_flush(tp_stack(tp));
	tp_unlock(tp);
}

/* Lock held: copy up to len queued octets into buf; the octets consumed. */
static size_t rx_copy(struct dp_conn *h, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len && h->rx_n > 0) {
		struct rx_ent *e = &h->rxq[h->rx_head];
		uint32_t n = e->len < len - got ? e->len : (uint32_t)(len - got);
		const void *p = rte_pktmbuf_read(e->m, e->off, n, buf + got);

		if (p != NULL && p != buf + got)
			memcpy(buf + got, p, n);
		got += n;
		e->off += n;
		e->len -= n;
		if (e->len == 0) {
			rte_pktmbuf_free(e->m);
			h->rx_head = (h->rx_head + 1) % h->rx_cap;
			h->rx_n--;
		}
	}
	return got;
}

/* Less than need arms the send-space signal as a refused sendv does (note_send): the engine
 * calls on_writable after the next acknowledgement that leaves room. */
static ssize_t dp_send_space(struct rn_conn *c, size_t need)
{
	struct dp_conn *h = to_dp(c);
	ssize_t n;

	if (h->kind != HD_STREAM)
		return -EINVAL;
	tp_lock(h->tp);
	h->write_ready = h->write_soft = false;   /* as dp_sendv: this asks again */
	if (h->tc == NULL) {
		n = dead_send_err(h);
	} else if (h->cstatus != 0) {
		n = 0; /* connecting: the connect result is what wakes the consumer */
	} else {
		n = tcp_conn_send_space(h->tc);
		if ((size_t)n < need) {
			h->write_wait = true;
			tcp_conn_want_writable(h->tc);
		}
	}
	hd_update(h);
	tp_unlock(h->tp);
	return n;
}

/* Lock held: the run of the queue's head entry that starts at its offset, as runs of its
 * segments, at most want octets; the octets put into v. */
static uint32_t rx_lend_ent(const struct rx_ent *e, struct rn_rx_view *v, uint32_t want)
{
	struct rte_mbuf *s = e->m;
	uint32_t off = e->off, got = 0;

	while (s != NULL && off >= s->data_len) {
		off -= s->data_len;
		s = s->next;
	}
	for (; s != NULL && got < want && v->n < RN_RX_VIEW_RUNS; s = s->next, off = 0) {
		uint32_t k = s->data_len - off < want - got ? s->data_len - off : want - got;

		if (k == 0)
			continue;
		v->run[v->n++] = (struct iovec){ rte_pktmbuf_mtod_offset(s, uint8_t *, off), k };
		got += k;
	}
	return got;
}

/* Lock held: lend up to len queued octets in v; the octets taken. A whole entry moves into
 * the view; a partly lent one stays queued with one more reference (rx_ent offsets are into
 * the packet, so its mbuf is never trimmed). */
static size_t rx_lend(struct dp_conn *h, struct rn_rx_view *v, size_t len)
{
	size_t got = 0;

	while (got < len && h->rx_n > 0 && v->n < RN_RX_VIEW_RUNS) {
		struct rx_ent *e = &h->rxq[h->rx_head];
		uint32_t want = e->len < len - got ? e->len : (uint32_t)(len - got);
		uint32_t n = rx_lend_ent(e, v, want);

		if (n == 0)
			break;
		got += n;
		if (n < e->len) {
			rte_pktmbuf_refcnt_update(e->m, 1);
			v->owner[v->owners++] = e->m;
			e->off += n;
			e->len -= n;
			break;   /* the view is full, or len is reached */
		}
		v->owner[v->owners++] = e->m;
		h->rx_head = (h->rx_head + 1) % h->rx_cap;
		h->rx_n--;
	}
	return got;
}

/* Not under the lock: the rx pool is multi-producer, and an lcore's mempool cache belongs
 * to one thread (the consumer that called rte_eal_init, or none). */
static void dp_view_release(struct rn_rx_view *v)
{
	for (unsigned i = 0; i < v->owners; i++)
		rte_pktmbuf_free((struct rte_mbuf *)v->owner[i]);
	v->n = v->owners = 0;
}

/* Lock held: nothing is queued and a consumer asks: run the port here rather than wait for
 * the poll thread (a consumer that polls drives the port itself), and keep the eventfd out of
 * it (this receive takes what comes). */
static void rx_consumer_pass(struct dp_conn *h)
{
	if (h->rx_n > 0 || !rn_thread_is_cq_poller() || h->tc == NULL || h->eof)
		return;
	h->defer = true;
	dpdk_port_pass_locked(h->tp->port, DP_HOLD_US, DPDK_CONSUMER);
	h->defer = false;
}

/* Lock held: a receive took got octets (copied or lent); its return value. */
static ssize_t rx_result(struct dp_conn *h, size_t got)
{
	if (got > 0) {
		if (h->tc != NULL) {
			tcp_conn_recved(h->tc, (uint32_t)got); /* may send a window update */
			tcp_stack_flush(tp_stack(h->tp));
		}
		return (ssize_t)got;
	}
	if (h->eof)
		return 0;
	if (h->tc == NULL)
		return h->err != 0 ? h->err : 0;
	return -EAGAIN;
}

static ssize_t dp_recv(struct rn_conn *c, void *buf, size_t len)
{
	struct dp_conn *h = to_dp(c);
	ssize_t n;

	if (h->kind != HD_STREAM || len == 0 || buf == NULL)
		return -EINVAL; /* 0 is reserved for end of stream */
	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	tp_lock(h->tp);
	/* consumers try both directions per readiness (ready_as_readable): a recv also consumes
	 * the send-space signal, so one that has nothing left to send does not spin on it */
	h->write_ready = h->write_soft = false;
	rx_consumer_pass(h);
	n = rx_result(h, rx_copy(h, buf, len));
	hd_update(h);
	tp_unlock(h->tp);
	return n;
}

static ssize_t dp_recv_lend(struct rn_conn *c, struct rn_rx_view *v, size_t len)
{
	struct dp_conn *h = to_dp(c);
	ssize_t n;

	if (v == NULL)
		return -EINVAL;
	v->n = v->owners = 0;
	v->release = dp_view_release;
	if (h->kind != HD_STREAM || len == 0)
		return -EINVAL;
	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	tp_lock(h->tp);
	h->write_ready = h->write_soft = false;   /* as dp_recv */
	rx_consumer_pass(h);
	n = rx_result(h, rx_lend(h, v, len));
	hd_update(h);
	tp_unlock(h->tp);
	return n;
}

static int dp_shutdown_write(struct rn_conn *c)
{
	struct dp_conn *h = to_dp(c);
	int rc;

	if (h->kind != HD_STREAM)
		return -EINVAL;
	tp_lock(h->tp);
	rc = h->tc != NULL ? tcp_shutdown(h->tc) : -ENOTCONN;
	if (rc == 0)
		tp_push(h->tp);
	tp_unlock(h->tp);
	return rc;
}

/* ---- close ------------------------------------------------------------------------------ */
static void listener_close(struct dp_conn *l)
{
	tcp_listener_close(l->lis);
	if (l->spare != NULL)
		hd_free(l->spare);
	hd_free(l);
}

static void dp_close(struct rn_conn *c)
{
	struct dp_conn *h = to_dp(c);
	struct dp_tp *tp = h->tp;

	tp_lock(tp);
	if (h->kind == HD_LISTENER) {
		listener_close(h);
	} else if (h->tc == NULL) {
		hd_free(h);
	} else if (h->rx_n > 0) { /* unread octets: a reset, as a socket's close (rn_transport.h) */
		tcp_abort(h->tc);
		h->tc = NULL;
		tcp_stack_flush(tp_stack(tp));
		hd_free(h);
	} else {
		/* the TCB lives on (queued octets, FIN, TIME_WAIT); on_closed frees the zombie */
		h->zombie = true;
		h->znext = tp->zombies;
		if (h->znext != NULL)
			h->znext->zpprev = &h->znext;
		h->zpprev = &tp->zombies;
		tp->zombies = h;
		hd_drop_fds(h);
		rx_drop_all(h);
		tcp_close(h->tc);
		tp_push(tp);
	}
	tp_unlock(tp);
}

static void dp_abort(struct rn_conn *c)
{
	struct dp_conn *h = to_dp(c);
	struct dp_tp *tp = h->tp;

	tp_lock(tp);
	if (h->kind == HD_LISTENER) {
		listener_close(h);
	} else {
		if (h->tc != NULL) {
			tcp_abort(h->tc); /* RST; no callback follows */
			h->tc = NULL;
			tcp_stack_flush(tp_stack(tp));
		}
		hd_free(h);
	}
	tp_unlock(tp);
}

/* ---- queries ------------------------------------------------------------------------------ */
static int dp_fd(const struct rn_conn *c)
{
	return to_dp(c)->efd;
}

static int dp_local_addr(const struct rn_conn *c, struct sockaddr *addr, socklen_t *len)
{
	struct dp_conn *h = to_dp(c);
	struct sockaddr_in a;

	tp_lock(h->tp);
	a = h->local;
	tp_unlock(h->tp);
	return put_addr(&a, addr, len);
}

static int dp_peer_addr(const struct rn_conn *c, struct sockaddr *addr, socklen_t *len)
{
	struct dp_conn *h = to_dp(c);
	struct sockaddr_in a;

	if (h->kind != HD_STREAM)
		return -ENOTCONN;
	tp_lock(h->tp);
	a = h->peer;
	tp_unlock(h->tp);
	return a.sin_family == AF_INET ? put_addr(&a, addr, len) : -ENOTCONN;
}

static int dp_mss(const struct rn_conn *c)
{
	struct dp_conn *h = to_dp(c);
	int v;

	if (h->kind != HD_STREAM)
		return -EINVAL;
	tp_lock(h->tp);
	v = h->tc != NULL ? (int)tcp_conn_mss(h->tc) : -ENOTCONN;
	tp_unlock(h->tp);
	return v;
}

static int dp_set_records(struct rn_conn *c, size_t (*rec_len)(const uint8_t hdr[2]))
{
	struct dp_conn *h = to_dp(c);
	int rc = 0;

	if (h->kind != HD_STREAM)
		return -EINVAL;
	tp_lock(h->tp);
	if (h->tc != NULL)
		tcp_conn_set_records(h->tc, rec_len);
	else
		rc = -ENOTCONN;
	tp_unlock(h->tp);
	return rc;
}

#define DP_OPS_COMMON                          \
	.name = "dpdk",                        \
	.listen = dp_listen,                   \
	.accept = dp_accept,                   \
	.connect = dp_connect,                 \
	.connect_status = dp_connect_status,   \
	.sendv = dp_sendv,                     \
	.recv = dp_recv,                       \
	.recv_lend = dp_recv_lend,             \
	.shutdown_write = dp_shutdown_write,   \
	.close = dp_close,                     \
	.abort = dp_abort,                     \
	.fd = dp_fd,                           \
	.local_addr = dp_local_addr,           \
	.peer_addr = dp_peer_addr,             \
	.mss = dp_mss,                         \
	.set_records = dp_set_records,         \
	.ready_as_readable = true

static const struct rn_transport_ops dp_ops = { DP_OPS_COMMON };

/* Zero-copy transmit (key tx_refs, on a port whose transmit copies): the QP frames only what
 * the stack takes now (send_space), so that its payload goes by reference, not through the
 * copy of what was refused. */
static const struct rn_transport_ops dp_ops_ref = {
	DP_OPS_COMMON,
	.sendv_ref = dp_sendv_ref,
	.ref_released = dp_ref_released,
	.send_space = dp_send_space,
};

/* ---- the transport ------------------------------------------------------------------------ */
const struct rn_transport *dpdk_transport(struct dpdk_port *p)
{
	struct dp_tp *tp;

	if (p == NULL)
		return NULL;
	tp = calloc(1, sizeof(*tp));
	if (tp == NULL)
		return NULL;
	tp->pub.ctx = tp;
	tp->port = p;
	tp->next_port = (uint16_t)((uintptr_t)tp >> 4); /* spread listeners of several processes */
	tp->hooked = dpdk_port_set_pass_hook(p, tp_pass, tp) == 0;
	/* references only with a deregistration able to end them (RN_MEM_HOLDERS transports) */
	tp->holder = dpdk_port_tx_refs(p) && rn_mem_holder_add(tp_drop_refs, tp) == 0;
	tp->pub.ops = tp->holder ? &dp_ops_ref : &dp_ops;
	return &tp->pub;
}

void dpdk_transport_free(const struct rn_transport *t)
{
	struct dp_tp *tp = (struct dp_tp *)t;

	if (tp == NULL)
		return;
	if (tp->holder)
		rn_mem_holder_del(tp_drop_refs, tp);
	tp_lock(tp);
	while (tp->zombies != NULL) { /* still closing: cut them short, nobody waits for them */
		struct dp_conn *h = tp->zombies;
		tcp_abort(h->tc);
		hd_free(h);
	}
	tcp_stack_flush(tp_stack(tp));
	tp_unlock(tp);
	if (tp->hooked)
		dpdk_port_set_pass_hook(tp->port, NULL, tp);
	free(tp);
}

void dpdk_transport_stats(const struct rn_transport *t, struct dpdk_tp_stats *st)
{
	struct dp_tp *tp = (struct dp_tp *)t;

	tp_lock(tp);
	*st = tp->st;
	tp_unlock(tp);
}
