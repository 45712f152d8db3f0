/* softrnic-tcp: the sessions on softrnic's TCP engine. Callbacks only record what happened
 * (verify received octets, queue echo mbufs, mark the connection dirty); sending and the
 * shutdown / abort / close actions run from eng_service after dpdk_port_poll returns, so
 * no engine API is re-entered from inside its own input path for a state change. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "stcp_eng.h"

/* --zc: per connection, slots of memory lent to the engine until on_zc_done. */
#define ZC_SLOTS 8u
#define ZC_SLOT 16384u

static void mark_dirty(struct eng_conn *x)
{
	if (!x->dirty) {
		x->dirty = true;
		x->app->dirty[x->app->ndirty++] = x->idx;
	}
}

static void snapshot(struct eng_conn *x)
{
	if (x->c) {
		tcp_conn_get_stats(x->c, &x->st);
		x->have_st = true;
	}
}

static void echo_release(struct eng_conn *x)
{
	while (x->echo_n) {
		rte_pktmbuf_free(x->echo[x->echo_head].m);
		x->echo_head = (x->echo_head + 1) % x->echo_cap;
		x->echo_n--;
	}
}

/* The connection is over for us: the handle must not be used again. */
static void conn_over(struct eng_conn *x)
{
	if (x->over)
		return;
	x->over = true;
	x->c = NULL;
	echo_release(x);
	x->app->over++;
	if (x->connecting) {
		x->connecting = false;
		x->app->handshakes--;
	}
}

static void start(struct eng_conn *x)
{
	x->started = true;
	x->app->established++;
	stcp_sess_start(&x->s);
	mark_dirty(x);
}

static void on_connected(void *arg, struct tcp_conn *c, int err)
{
	struct eng_conn *x = arg;
	(void)c;
	if (x->connecting) {
		x->connecting = false;
		x->app->handshakes--;
	}
	if (err)
		stcp_sess_error(&x->s, err);  /* on_closed follows */
	else
		start(x);
}

static bool echo_push(struct eng_conn *x, struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	if (x->echo_n == x->echo_cap) {
		uint32_t cap = x->echo_cap ? x->echo_cap * 2 : 64;
		struct eng_echo_item *q = malloc(cap * sizeof(*q));
		if (!q)
			return false;
		for (uint32_t i = 0; i < x->echo_n; i++)
			q[i] = x->echo[(x->echo_head + i) % x->echo_cap];
		free(x->echo);
		x->echo = q;
		x->echo_head = 0;
		x->echo_cap = cap;
	}
	x->echo[(x->echo_head + x->echo_n) % x->echo_cap] =
		(struct eng_echo_item){ .m = m, .off = off, .len = len };
	x->echo_n++;
	return true;
}

/* Feed len octets of the chain m from off to the session, segment by segment. */
static void feed(struct eng_conn *x, struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	for (; m && len; m = m->next) {
		if (off >= m->data_len) {
			off -= m->data_len;
			continue;
		}
		uint32_t n = m->data_len - off < len ? m->data_len - off : len;
		stcp_sess_rx(&x->s, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), n);
		len -= n;
		off = 0;
	}
}

static void on_recv(void *arg, struct tcp_conn *c, struct rte_mbuf *m, uint32_t off,
		    uint32_t len)
{
	struct eng_conn *x = arg;
	if (x->s.role == STCP_ECHO && !x->shut) {
		x->s.raw_rx += len;
		if (echo_push(x, m, off, len)) {
			mark_dirty(x);
			return;
		}
		stcp_sess_fail(&x->s, STCP_E_OTHER, "out of memory for the echo queue");
		x->s.act = STCP_ACT_ABORT;
	} else {
		feed(x, m, off, len);
	}
	rte_pktmbuf_free(m);
	tcp_conn_recved(c, len);
	mark_dirty(x);
}

static void on_eof(void *arg, struct tcp_conn *c)
{
	struct eng_conn *x = arg;
	(void)c;
	stcp_sess_eof(&x->s);
	mark_dirty(x);
}

static void on_writable(void *arg, struct tcp_conn *c)
{
	(void)c;
	mark_dirty(arg);
}

static void on_zc_done(void *arg, struct tcp_conn *c, void *cookie, int err)
{
	struct eng_conn *x = arg;
	uint32_t slot = (uint32_t)((uintptr_t)cookie - 1);
	(void)c;
	if (slot >= ZC_SLOTS || !(x->zc_busy & (1u << slot))) {
		stcp_sess_fail(&x->s, STCP_E_OTHER, "on_zc_done with an unknown cookie");
		return;
	}
	/* Scribble over the slot: were the engine still to transmit from it (released too
	 * early), the sink would see the damage as a pattern mismatch. */
	memset(x->zc_mem + (size_t)slot * ZC_SLOT, 0xee, ZC_SLOT);
	x->zc_busy &= ~(1u << slot);
	x->zc_done++;
	if (err)
		x->zc_errs++;
	if (!x->over)
		mark_dirty(x);
}

static void on_closed(void *arg, struct tcp_conn *c, int err)
{
	struct eng_conn *x = arg;
	(void)c;
	snapshot(x);
	if (err)
		stcp_sess_error(&x->s, err);
	else
		stcp_sess_closed(&x->s);
	conn_over(x);
}

const struct tcp_conn_ops eng_conn_ops = {
	.on_connected = on_connected,
	.on_recv = on_recv,
	.on_eof = on_eof,
	.on_writable = on_writable,
	.on_zc_done = on_zc_done,
	.on_closed = on_closed,
};

static void on_acceptable(void *arg, struct tcp_listener *l)
{
	struct eng_app *a = arg;
	struct tcp_conn *c;
	for (;;) {
		struct eng_conn *x = a->opened < a->o.conns ? &a->cx[a->opened] : NULL;
		if (tcp_accept(l, &eng_conn_ops, x, &c) != 0)
			return;
		if (!x) {  /* more connections than --conns: refuse them */
			tcp_abort(c);
			continue;
		}
		a->opened++;
		x->c = c;
		start(x);
	}
}

const struct tcp_listener_ops eng_listener_ops = { .on_acceptable = on_acceptable };

int eng_app_init(struct eng_app *a)
{
	a->cx = calloc(a->o.conns, sizeof(*a->cx));
	a->dirty = calloc(a->o.conns, sizeof(*a->dirty));
	if (!a->cx || !a->dirty)
		return -ENOMEM;
	for (uint32_t i = 0; i < a->o.conns; i++) {
		a->cx[i].app = a;
		a->cx[i].idx = i;
		int rc = stcp_sess_init(&a->cx[i].s, &a->o, i);
		if (rc)
			return rc;
	}
	return 0;
}

void eng_app_fini(struct eng_app *a)
{
	for (uint32_t i = 0; a->cx && i < a->o.conns; i++) {
		echo_release(&a->cx[i]);
		free(a->cx[i].echo);
		free(a->cx[i].zc_mem);  /* nothing polls the engine any more: never read again */
		stcp_sess_fini(&a->cx[i].s);
	}
	free(a->cx);
	free(a->dirty);
}

void eng_open_more(struct eng_app *a)
{
	/* One handshake alone first (it resolves ARP), then --burst at a time: a thousand SYNs
	 * at once would only overflow the ARP queue and the peer's SYN backlog. */
	uint32_t allowed = a->established || a->over ? a->o.burst : 1;
	while (a->opened < a->o.conns && a->handshakes < allowed && !a->fatal) {
		struct eng_conn *x = &a->cx[a->opened];
		int rc = tcp_connect(a->stack, &a->dst, 0, &eng_conn_ops, x, &x->c);
		a->opened++;
		if (rc) {
			stcp_sess_error(&x->s, rc);
			x->c = NULL;
			conn_over(x);
			continue;
		}
		x->connecting = true;
		a->handshakes++;
	}
}

/* Return queued echo octets; the window reopens by what went out. */
static void echo_drain(struct eng_conn *x)
{
	while (x->echo_n && x->c) {
		struct eng_echo_item *it = &x->echo[x->echo_head];
		struct iovec iov[16];
		unsigned n = 0;
		uint32_t off = it->off, left = it->len;
		for (struct rte_mbuf *m = it->m; m && left && n < 16; m = m->next) {
			if (off >= m->data_len) {
				off -= m->data_len;
				continue;
			}
			uint32_t k = m->data_len - off < left ? m->data_len - off : left;
			iov[n++] = (struct iovec){ rte_pktmbuf_mtod_offset(m, void *, off), k };
			left -= k;
			off = 0;
		}
		ssize_t r = tcp_send(x->c, iov, n);
		if (r == -EAGAIN)
			return;
		if (r == -ENOBUFS) {
			x->retry = true;
			return;
		}
		if (r < 0) {
			stcp_sess_error(&x->s, (int)r);
			return;
		}
		x->s.raw_tx += (uint64_t)r;
		tcp_conn_recved(x->c, (uint32_t)r);
		it->off += (uint32_t)r;
		it->len -= (uint32_t)r;
		if (it->len)
			return;  /* partial: the rest when writable */
		rte_pktmbuf_free(it->m);
		x->echo_head = (x->echo_head + 1) % x->echo_cap;
		x->echo_n--;
	}
}

static void pump(struct eng_conn *x)
{
	const uint8_t *p;
	size_t n;
	while (x->c && (n = stcp_sess_tx_peek(&x->s, &p)) > 0) {
		struct iovec iov = { (void *)(uintptr_t)p, n };
		ssize_t r = tcp_send(x->c, &iov, 1);
		if (r == -EAGAIN || r == 0)
			return;
		if (r == -ENOBUFS) {  /* mbuf pool empty for now: ACKs refill it, try again */
			x->retry = true;
			return;
		}
		if (r < 0) {
			stcp_sess_error(&x->s, (int)r);
			return;
		}
		stcp_sess_tx_done(&x->s, (size_t)r);
	}
}

/* Zero-copy source: copy the next pattern piece into a free slot and lend it to the engine
 * (all or nothing; the slot comes back through on_zc_done once acknowledged). */
static void pump_zc(struct eng_conn *x)
{
	const uint8_t *p;
	size_t n;
	if (!x->zc_mem && !(x->zc_mem = malloc((size_t)ZC_SLOTS * ZC_SLOT))) {
		stcp_sess_fail(&x->s, STCP_E_OTHER, "out of memory for --zc slots");
		x->s.act = STCP_ACT_ABORT;
		return;
	}
	while (x->c && (n = stcp_sess_tx_peek(&x->s, &p)) > 0) {
		uint32_t slot = (uint32_t)__builtin_ctz(~x->zc_busy);
		if (slot >= ZC_SLOTS)
			return;  /* every slot lent: on_zc_done brings one back */
		uint32_t space = tcp_conn_send_space(x->c);
		size_t k = n < ZC_SLOT ? n : ZC_SLOT;
		if (space && space < k)
			k = space;  /* at zero space the call below fails and on_writable follows */
		uint8_t *mem = x->zc_mem + (size_t)slot * ZC_SLOT;
		memcpy(mem, p, k);
		struct iovec iov = { mem, k };
		int rc = tcp_send_zc(x->c, &iov, 1, (void *)(uintptr_t)(slot + 1));
		if (rc == -EAGAIN)
			return;
		if (rc == -ENOBUFS) {
			x->retry = true;
			return;
		}
		if (rc) {
			stcp_sess_error(&x->s, rc);
			return;
		}
		x->zc_busy |= 1u << slot;
		stcp_sess_tx_done(&x->s, k);
	}
}

/* Carry out what the session asked for. */
static void act(struct eng_conn *x, enum stcp_act what)
{
	switch (what) {
	case STCP_ACT_NONE:
		break;
	case STCP_ACT_SHUTDOWN:
		x->shut_wanted = true;
		break;
	case STCP_ACT_ABORT:
		snapshot(x);
		tcp_abort(x->c);
		conn_over(x);
		break;
	case STCP_ACT_CLOSE:
		snapshot(x);
		tcp_close(x->c);  /* on_closed follows */
		x->shut = true;
		break;
	}
	if (x->c && x->shut_wanted && !x->shut && !x->echo_n) {
		int rc = tcp_shutdown(x->c);
		if (rc == -ENOBUFS) {
			x->retry = true;
			return;
		}
		x->shut = true;
		if (rc && rc != -ENOTCONN)
			stcp_sess_error(&x->s, rc);
	}
}

static void service_one(struct eng_conn *x)
{
	for (int round = 0; round < 4 && x->c; round++) {
		if (x->started) {
			if (x->s.role == STCP_ECHO)
				echo_drain(x);
			else if (x->s.role == STCP_SOURCE && x->app->o.zc)
				pump_zc(x);
			else
				pump(x);
		}
		enum stcp_act w = stcp_sess_take_act(&x->s);
		act(x, w);
		if (w == STCP_ACT_NONE)
			break;
	}
}

void eng_service(struct eng_app *a)
{
	/* Engine API calls never call back (tcp/tcp.h), so servicing marks nothing new. */
	uint32_t n = a->ndirty, again = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct eng_conn *x = &a->cx[a->dirty[i]];
		x->dirty = false;
		service_one(x);
		if (x->retry && x->c)  /* keep it for the next pass, in place */
			a->dirty[again++] = x->idx;
		x->retry = false;
	}
	a->ndirty = again;
	for (uint32_t i = 0; i < again; i++)
		a->cx[a->dirty[i]].dirty = true;
}

bool eng_done(const struct eng_app *a)
{
	return a->over == a->o.conns;
}
