/* The two-stack harness (tcp_pair.h). */
#include "tcp_pair.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#define POOL_N 16383u

static struct rte_mempool *g_pool;

int pair_eal_init(const char *name)
{
	char *argv[] = {(char *)name, "--no-huge", "-m", "128", "--no-shconf", "--no-pci",
			"--no-telemetry", "-l", "0", "--log-level=error", NULL};

	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0]) - 1), argv) < 0)
		return -1;
	g_pool = rte_pktmbuf_pool_create("tcp_core", POOL_N, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					 SOCKET_ID_ANY);
	return g_pool ? 0 : -1;
}

struct rte_mempool *pair_pool(void)
{
	return g_pool;
}

unsigned pair_pool_free(void)
{
	return rte_mempool_avail_count(g_pool);
}

static uint64_t clock_fn(void *arg)
{
	struct tcp_pair *p = arg;

	p->clock_reads++;
	return p->now_ns;
}

static void parse(const struct rte_mbuf *m, struct pair_seg *s)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ipv4_hdr *ip = (const void *)(f + 14);
	const struct rte_tcp_hdr *th;
	unsigned ihl = (ip->version_ihl & 0xf) * 4u, hl;

	memset(s, 0, sizeof(*s));
	if (f[12] != 0x08 || f[13] != 0x00)
		return; /* not IPv4 (ARP): logged with no flags and no length */
	th = (const void *)(f + 14 + ihl);
	hl = (th->data_off >> 4) * 4u;
	s->flags = th->tcp_flags;
	s->seq = rte_be_to_cpu_32(th->sent_seq);
	s->ack = rte_be_to_cpu_32(th->recv_ack);
	s->wnd = rte_be_to_cpu_16(th->rx_win);
	s->len = rte_be_to_cpu_16(ip->total_length) - ihl - hl;
	tcp_opt_parse((const uint8_t *)th + 20, hl - 20, s->flags & 0x02, &s->opts);
	if (s->len >= 2)
		memcpy(s->first, (const uint8_t *)th + hl, 2);
}

static void enqueue(struct tcp_pair *p, int to, struct rte_mbuf *m)
{
	if (p->qn[to] == PAIR_QMAX) {
		rte_pktmbuf_free(m);
		return;
	}
	p->q[to][p->qn[to]++] = m;
}

static void release_held(struct tcp_pair *p, int to)
{
	if (p->held[to]) {
		enqueue(p, to, p->held[to]);
		p->held[to] = NULL;
	}
}

static void one_frame(struct tcp_pair *p, int dir, struct rte_mbuf *m)
{
	int to = !dir;
	struct pair_seg *s = &p->log[p->nlog % PAIR_LOG];
	enum pair_action a = PAIR_PASS;

	parse(m, s);
	s->dir = dir;
	s->t_ns = p->now_ns;
	p->nlog++;
	p->count[dir]++;
	if (p->filter)
		a = p->filter(p->filter_arg, s, p->count[dir]);
	switch (a) {
	case PAIR_DROP:
		s->dropped = true;
		rte_pktmbuf_free(m);
		return;
	case PAIR_DUP: {
		struct rte_mbuf *d = rte_pktmbuf_copy(m, p->pool, 0, UINT32_MAX);

		enqueue(p, to, m);
		if (d)
			enqueue(p, to, d);
		break;
	}
	case PAIR_CORRUPT:
		*rte_pktmbuf_mtod_offset(m, uint8_t *, m->data_len - 1) ^= 0x5a;
		enqueue(p, to, m);
		break;
	case PAIR_HOLD:
		release_held(p, to);
		p->held[to] = m;
		return;
	default:
		enqueue(p, to, m);
	}
	release_held(p, to);
}

static uint16_t tx_fn(void *arg, struct rte_mbuf **pkts, uint16_t n)
{
	struct pair_txctx *x = arg;
	struct tcp_pair *p = x->p;
	uint16_t i;

	for (i = 0; i < n; i++) {
		/* copy and free at once, as a copying PMD does: zero-copy memory is released */
		struct rte_mbuf *c = rte_pktmbuf_copy(pkts[i], p->pool, 0, UINT32_MAX);

		rte_pktmbuf_free(pkts[i]);
		if (c && c->nb_segs > 1 && rte_pktmbuf_linearize(c)) {
			rte_pktmbuf_free(c);
			c = NULL;
		}
		if (c)
			one_frame(p, x->dir, c);
	}
	return n;
}

void pair_cfg_default(struct tcp_stack_cfg *cfg)
{
	tcp_stack_cfg_default(cfg);
	memset(cfg->isn_key, 0x5a, sizeof(cfg->isn_key));
}

void pair_init(struct tcp_pair *p, const struct tcp_stack_cfg *cfg_a,
	       const struct tcp_stack_cfg *cfg_b, uint64_t start_ns)
{
	const struct tcp_stack_cfg *in[2] = {cfg_a, cfg_b};
	uint8_t mac[2][6] = {{0x02, 0, 0, 0, 0, 1}, {0x02, 0, 0, 0, 0, 2}};
	int i;

	memset(p, 0, sizeof(*p));
	p->pool = g_pool;
	p->now_ns = start_ns;
	p->ip[0] = rte_cpu_to_be_32(0xc6336401); /* 198.51.100.1 */
	p->ip[1] = rte_cpu_to_be_32(0xc6336402);
	for (i = 0; i < 2; i++) {
		struct tcp_stack_cfg cfg;

		if (in[i])
			cfg = *in[i];
		else
			pair_cfg_default(&cfg);
		memcpy(cfg.nif.mac, mac[i], 6);
		cfg.nif.ip = p->ip[i];
		cfg.nif.prefix_len = 24;
		cfg.nif.pool = g_pool;
		cfg.nif.tx = tx_fn;
		p->txctx[i].p = p;
		p->txctx[i].dir = i;
		cfg.nif.tx_arg = &p->txctx[i];
		cfg.clock_ns = clock_fn;
		cfg.clock_arg = p;
		if (tcp_stack_create(&cfg, &p->st[i])) {
			fprintf(stderr, "tcp_stack_create failed\n");
			abort();
		}
	}
	net_arp_add(tcp_stack_netif(p->st[0]), p->ip[1], mac[1]);
	net_arp_add(tcp_stack_netif(p->st[1]), p->ip[0], mac[0]);
}

void pair_fini(struct tcp_pair *p)
{
	int i;

	p->filter = NULL;
	for (i = 0; i < 2; i++)
		tcp_stack_destroy(p->st[i]); /* may send RSTs into the other queue */
	for (i = 0; i < 2; i++) {
		while (p->qn[i])
			rte_pktmbuf_free(p->q[i][--p->qn[i]]);
		rte_pktmbuf_free(p->held[i]);
		p->held[i] = NULL;
	}
}

void pair_run(struct tcp_pair *p)
{
	unsigned rounds;

	for (rounds = 0; rounds < 100000; rounds++) {
		bool moved = false;
		int i;

		for (i = 0; i < 2; i++) {
			tcp_stack_poll(p->st[i]);
		}
		for (i = 0; i < 2; i++) {
			struct rte_mbuf *batch[PAIR_QMAX];
			unsigned n = p->qn[i], k;

			if (!n)
				continue;
			memcpy(batch, p->q[i], n * sizeof(batch[0]));
			p->qn[i] = 0;
			for (k = 0; k < n; k += 32) {
				uint16_t m = (uint16_t)(n - k < 32 ? n - k : 32);

				tcp_stack_input(p->st[i], &batch[k], m);
			}
			moved = true;
		}
		if (!moved && !p->qn[0] && !p->qn[1]) {
			tcp_stack_poll(p->st[0]);
			tcp_stack_poll(p->st[1]);
			if (!p->qn[0] && !p->qn[1])
				return;
		}
	}
	p->runaway++; /* frames never stopped flowing at a fixed time: an ACK war */
}

void pair_advance(struct tcp_pair *p, uint64_t ns, uint64_t step_ns)
{
	uint64_t end = p->now_ns + ns;

	pair_run(p);
	while (p->now_ns < end) {
		uint64_t d = end - p->now_ns < step_ns ? end - p->now_ns : step_ns;

		p->now_ns += d;
		pair_run(p);
	}
}

bool pair_run_until(struct tcp_pair *p, bool (*cond)(void *arg), void *arg, uint64_t max_ns)
{
	uint64_t end = p->now_ns + max_ns;

	pair_run(p);
	while (!cond(arg) && p->now_ns < end) {
		p->now_ns += 1000000;
		pair_run(p);
	}
	return cond(arg);
}

/* ---- endpoints ---- */
static void ep_connected(void *arg, struct tcp_conn *c, int err)
{
	struct pair_ep *e = arg;

	(void)c;
	e->connected = err == 0;
	e->conn_err = err;
}

static void ep_recv(void *arg, struct tcp_conn *c, struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	struct pair_ep *e = arg;

	e->recv_calls++;
	if (e->rx_len + len > e->rx_cap) {
		size_t cap = (e->rx_len + len) * 2 + 4096;
		uint8_t *n = realloc(e->rx, cap);

		if (!n)
			abort();
		e->rx = n;
		e->rx_cap = cap;
	}
	{
		const void *src = rte_pktmbuf_read(m, off, len, e->rx + e->rx_len);

		if (!src)
			abort(); /* the engine handed a range outside the mbuf */
		if (src != e->rx + e->rx_len)
			memcpy(e->rx + e->rx_len, src, len);
	}
	e->rx_len += len;
	rte_pktmbuf_free(m);
	if (e->auto_recved)
		tcp_conn_recved(c, len);
	else
		e->held += len;
	if (e->abort_in_recv) {
		e->abort_in_recv = false;
		tcp_abort(c);
		e->c = NULL;
		e->closed = true;
	}
}

static void ep_eof(void *arg, struct tcp_conn *c)
{
	(void)c;
	((struct pair_ep *)arg)->eof = true;
}

static void ep_writable(void *arg, struct tcp_conn *c)
{
	(void)c;
	((struct pair_ep *)arg)->writable++;
}

static void ep_zc(void *arg, struct tcp_conn *c, void *cookie, int err)
{
	struct pair_ep *e = arg;

	(void)c;
	if (e->nzc < 64) {
		e->zc_done[e->nzc] = cookie;
		e->zc_err[e->nzc] = err;
	}
	if (err)
		e->zc_errs++;
	/* completions come in send order: cookies are increasing in the tests */
	if (e->zc_last && (uintptr_t)cookie < (uintptr_t)e->zc_last)
		e->zc_errs += 1000;
	e->zc_last = cookie;
	e->nzc++;
}

static void ep_closed(void *arg, struct tcp_conn *c, int err)
{
	struct pair_ep *e = arg;

	(void)c;
	e->closed = true;
	e->close_err = err;
	e->c = NULL;
}

const struct tcp_conn_ops pair_ops = {
	.on_connected = ep_connected,
	.on_recv = ep_recv,
	.on_eof = ep_eof,
	.on_writable = ep_writable,
	.on_zc_done = ep_zc,
	.on_closed = ep_closed,
};

static void l_acceptable(void *arg, struct tcp_listener *l)
{
	struct pair_ep *e = arg;

	if (e && !e->c)
		tcp_accept(l, &pair_ops, e, &e->c);
}

const struct tcp_listener_ops pair_lops = {.on_acceptable = l_acceptable};

void pair_ep_init(struct pair_ep *e)
{
	memset(e, 0, sizeof(*e));
	e->auto_recved = true;
}

void pair_ep_fini(struct pair_ep *e)
{
	free(e->rx);
	e->rx = NULL;
}

void pair_connect(struct tcp_pair *p, uint16_t port, struct pair_ep *ea, struct pair_ep *eb)
{
	struct tcp_listener *l;
	struct sockaddr_in dst = {.sin_family = AF_INET};

	dst.sin_addr.s_addr = p->ip[1];
	dst.sin_port = rte_cpu_to_be_16(port);
	if (tcp_listen(p->st[1], port, 16, &pair_lops, eb, &l))
		abort();
	if (tcp_connect(p->st[0], &dst, 0, &pair_ops, ea, &ea->c))
		abort();
	tcp_stack_flush(p->st[0]);
	pair_run(p);
	tcp_listener_close(l);
}

uint8_t pair_pattern(size_t i)
{
	return (uint8_t)((i * 7u) ^ (i >> 8) ^ (i >> 16));
}

bool pair_check_pattern(const struct pair_ep *e, size_t len)
{
	size_t i;

	if (e->rx_len != len)
		return false;
	for (i = 0; i < len; i++)
		if (e->rx[i] != pair_pattern(i))
			return false;
	return true;
}

size_t pair_bulk(struct tcp_pair *p, struct pair_ep *tx, struct pair_ep *rx, size_t len,
		 uint64_t max_ns)
{
	uint8_t buf[16384];
	size_t sent = 0;
	uint64_t end = p->now_ns + max_ns;
	size_t base = rx->rx_len;

	while (p->now_ns < end && (sent < len || rx->rx_len - base < len)) {
		while (sent < len && tx->c) {
			size_t n = len - sent < sizeof(buf) ? len - sent : sizeof(buf), i;
			struct iovec iov;
			ssize_t r;

			for (i = 0; i < n; i++)
				buf[i] = pair_pattern(sent + i);
			iov.iov_base = buf;
			iov.iov_len = n;
			r = tcp_send(tx->c, &iov, 1);
			if (r <= 0)
				break;
			sent += (size_t)r;
		}
		tcp_stack_flush(p->st[0]);
		tcp_stack_flush(p->st[1]);
		pair_run(p);
		if (sent < len || rx->rx_len - base < len)
			p->now_ns += 100000; /* 100 us */
	}
	return sent;
}

void pair_dump(const struct tcp_pair *p, unsigned last)
{
	unsigned i = p->nlog > last ? p->nlog - last : 0;

	for (; i < p->nlog; i++) {
		const struct pair_seg *s = &p->log[i % PAIR_LOG];

		fprintf(stderr, "%c %10.6f fl %02x seq %u ack %u len %u wnd %u ts %u/%u%s\n",
			s->dir ? 'B' : 'A', (double)s->t_ns / 1e9, s->flags, s->seq, s->ack, s->len,
			s->wnd, s->opts.ts_val, s->opts.ts_ecr, s->dropped ? " DROP" : "");
	}
}

unsigned pair_count(const struct tcp_pair *p, int dir, uint8_t flags_set, bool with_data)
{
	unsigned i, n = 0, lo = p->nlog > PAIR_LOG ? p->nlog - PAIR_LOG : 0;

	for (i = lo; i < p->nlog; i++) {
		const struct pair_seg *s = &p->log[i % PAIR_LOG];

		if (s->dir != dir || (s->flags & flags_set) != flags_set)
			continue;
		if (with_data && !s->len)
			continue;
		n++;
	}
	return n;
}

/* A hand-made segment from the other stack's address to stack `to`. */
int pair_inject(struct tcp_pair *p, int to, const struct pair_inj *in)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	uint8_t opts[TCP_OPT_MAX_LEN];
	size_t olen = in->opts ? tcp_opt_build(in->opts, opts) : 0;
	size_t tot = 14 + 20 + 20 + olen + in->len;
	uint8_t *f;
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;
	uint8_t mac[2][6] = {{0x02, 0, 0, 0, 0, 1}, {0x02, 0, 0, 0, 0, 2}};

	if (!m)
		return -ENOBUFS;
	f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)tot);
	if (!f) {
		rte_pktmbuf_free(m);
		return -ENOSPC;
	}
	memset(f, 0, tot);
	memcpy(f, mac[to], 6);
	memcpy(f + 6, mac[!to], 6);
	f[12] = 0x08;
	ip = (void *)(f + 14);
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(tot - 14));
	ip->time_to_live = 64;
	ip->next_proto_id = 6;
	ip->src_addr = p->ip[!to];
	ip->dst_addr = p->ip[to];
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	th = (void *)(ip + 1);
	th->src_port = rte_cpu_to_be_16(in->sport);
	th->dst_port = rte_cpu_to_be_16(in->dport);
	th->sent_seq = rte_cpu_to_be_32(in->seq);
	th->recv_ack = rte_cpu_to_be_32(in->ack);
	th->data_off = (uint8_t)(((20 + olen) / 4) << 4);
	th->tcp_flags = in->flags;
	th->rx_win = rte_cpu_to_be_16(in->wnd);
	memcpy(th + 1, opts, olen);
	if (in->len)
		memcpy((uint8_t *)(th + 1) + olen, in->data, in->len);
	th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	enqueue(p, to, m);
	return 0;
}

const struct pair_seg *pair_last(const struct tcp_pair *p, int dir)
{
	unsigned i = p->nlog, lo = p->nlog > PAIR_LOG ? p->nlog - PAIR_LOG : 0;

	while (i-- > lo)
		if (p->log[i % PAIR_LOG].dir == dir)
			return &p->log[i % PAIR_LOG];
	return NULL;
}
