/* Fuzz target: segment input of the TCP engine (tcp/tcp.h) through its real entry points,
 * tcp_stack_input and tcp_stack_poll, on DPDK mbufs (EAL without hugepages or PCI).
 *
 * Every input gets a fresh stack (198.51.100.1) on a fixed virtual clock with a fixed ISN key,
 * transmitting into a function that looks at what we send (to follow our sequence numbers)
 * and frees it; a listener on port 5000; one connection accepted from the peer
 * (198.51.100.2:40000) and one opened towards it (port 6000), both by real handshakes.
 * The input is then a program of operations, each an opcode octet and its operands:
 *   0 a segment for one of the connections: flags, window, options and payload from the
 *     input, sequence and acknowledgement numbers near the live ones, checksum fixed (or
 *     left wrong)
 *   1 a TCP segment as raw octets (addresses right, checksum fixed)
 *   2 a raw Ethernet frame
 *   3 the clock advances (timers: retransmission, delayed ACK, persist, keepalive,
 *     TIME_WAIT), then a poll
 *   4 the application acts: send (copy or zero-copy), record mode, recved, shutdown, close,
 *     abort, keepalive, nagle
 *   5 an IPv4 header from the input around a TCP segment (options, fragments, TTL, bad
 *     checksums)
 *   6 a SYN from another peer port (half-open connections, backlog)
 *   7 poll
 * The last octet also selects NewReno or CUBIC, SACK, timestamps, window scaling and the MTU.
 * Frames are sometimes split into mbuf chains. At the end the stack is destroyed and every
 * mbuf must be back in the pool (no leak); zero-copy completions come once each, all of a
 * connection's before its on_closed, and before tcp_abort returns. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "tcp.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "CHECK failed: %s (line %d)\n", #c, \
					   __LINE__); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define POOL_SIZE 2047u
#define LPORT 5000u
#define PEER_PORT 40000u
#define PEER_LPORT 6000u
#define PEER_ISS 1000000u
#define PEER_ISS2 0xfffff000u /* wraps soon */
#define MAX_FRAME 1600u

/* Triage aid: FUZZ_TCP_SKIP=records,zc leaves those application operations out, so fuzzing
 * can go on past a known bug in one of them. Unset in every kept run. */
static bool skip_records, skip_zc;

static const uint8_t OUR_MAC[6] = {0x02, 0, 0, 0, 0, 1};
static const uint8_t PEER_MAC[6] = {0x02, 0, 0, 0, 0, 2};

static struct rte_mempool *pool;
static uint32_t our_ip, peer_ip;
static uint64_t vnow_ns;

/* What we saw the engine send, per local port. */
struct flow {
	uint16_t lport, rport;
	bool seen;
	uint32_t snd_nxt;   /* highest seq + len we sent */
	uint32_t rcv_ack;   /* the last ACK we sent (what the peer "sent" so far) */
	uint32_t peer_nxt;  /* next sequence number the fake peer uses */
	struct tcp_conn *c;
	bool closing;       /* tcp_close called: wait for on_closed, no more API calls */
	bool closed;
};
static struct flow flows[2];
static struct tcp_stack *stack;
static struct tcp_listener *listener;
static unsigned zc_out[2], zc_done[2]; /* per flow */
static uint8_t zc_mem[65536];

/* ---- input reading ---- */
struct rd {
	const uint8_t *p;
	size_t n;
};
static uint8_t get8(struct rd *r)
{
	if (!r->n)
		return 0;
	r->n--;
	return *r->p++;
}
static uint16_t get16(struct rd *r)
{
	uint8_t hi = get8(r); /* two statements: operand order is unspecified in C */
	return (uint16_t)(hi << 8 | get8(r));
}
static size_t take(struct rd *r, size_t want, const uint8_t **out)
{
	size_t n = want < r->n ? want : r->n;
	*out = r->p;
	r->p += n;
	r->n -= n;
	return n;
}

/* ---- transmit side ---- */
static void observe(const uint8_t *f, uint32_t len)
{
	if (len < 14 + 20 + 20 || f[12] != 0x08 || f[13] != 0x00)
		return;
	const uint8_t *ip = f + 14;
	unsigned ihl = (ip[0] & 0xf) * 4u;
	if (ip[9] != IPPROTO_TCP || len < 14 + ihl + 20)
		return;
	const uint8_t *th = ip + ihl;
	uint16_t tot = (uint16_t)(ip[2] << 8 | ip[3]);
	uint16_t sport = (uint16_t)(th[0] << 8 | th[1]);
	uint32_t seq, ack;
	memcpy(&seq, th + 4, 4);
	memcpy(&ack, th + 8, 4);
	seq = ntohl(seq);
	ack = ntohl(ack);
	unsigned doff = (th[12] >> 4) * 4u;
	uint32_t plen = tot > ihl + doff ? tot - ihl - doff : 0;
	uint8_t fl = th[13];
	uint32_t end = seq + plen + !!(fl & 0x02) + !!(fl & 0x01);
	for (unsigned i = 0; i < 2; i++) {
		struct flow *w = &flows[i];
		if (w->lport != sport)
			continue;
		if (!w->seen || (int32_t)(end - w->snd_nxt) > 0)
			w->snd_nxt = end;
		if (fl & 0x10)
			w->rcv_ack = ack;
		w->seen = true;
	}
}

static uint16_t tx_fn(void *arg, struct rte_mbuf **pkts, uint16_t n)
{
	(void)arg;
	static uint8_t buf[65536];
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t len = m->pkt_len < sizeof(buf) ? m->pkt_len : sizeof(buf);
		const uint8_t *f = rte_pktmbuf_read(m, 0, len, buf);
		if (f)
			observe(f, len);
		rte_pktmbuf_free(m);
	}
	return n;
}

static uint64_t vclock(void *arg)
{
	(void)arg;
	return vnow_ns;
}

/* ---- frames in ---- */
static uint16_t fold_sum(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static uint32_t sum_be(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static void tcp_cksum(uint8_t *tcp, size_t len, uint32_t src, uint32_t dst)
{
	uint8_t ph[12];
	memcpy(ph, &src, 4);
	memcpy(ph + 4, &dst, 4);
	ph[8] = 0;
	ph[9] = IPPROTO_TCP;
	ph[10] = (uint8_t)(len >> 8);
	ph[11] = (uint8_t)len;
	tcp[16] = tcp[17] = 0;
	uint16_t c = (uint16_t)~fold_sum(sum_be(ph, 12) + sum_be(tcp, len));
	tcp[16] = (uint8_t)(c >> 8);
	tcp[17] = (uint8_t)c;
}

/* A frame into the stack, split into a two-mbuf chain at `split` when 0 < split < len. */
static void inject(const uint8_t *f, size_t len, size_t split)
{
	if (len == 0 || len > MAX_FRAME)
		return;
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	if (!m)
		return;
	size_t first = split > 0 && split < len ? split : len;
	memcpy(rte_pktmbuf_append(m, (uint16_t)first), f, first);
	if (first < len) {
		struct rte_mbuf *t = rte_pktmbuf_alloc(pool);
		if (!t) {
			rte_pktmbuf_free(m);
			return;
		}
		memcpy(rte_pktmbuf_append(t, (uint16_t)(len - first)), f + first, len - first);
		if (rte_pktmbuf_chain(m, t) != 0) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(t);
			return;
		}
	}
	tcp_stack_input(stack, &m, 1);
}

/* Ethernet + IPv4 (20 octets, or the caller's header) around l4. */
static void inject_ip(const uint8_t *l4, size_t l4len, const uint8_t *iphdr, size_t iplen,
		      bool fix_ip_cksum, size_t split)
{
	static uint8_t f[MAX_FRAME];
	if (14 + 60 + l4len > sizeof(f))
		return;
	memcpy(f, OUR_MAC, 6);
	memcpy(f + 6, PEER_MAC, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	uint8_t *ip = f + 14;
	if (iphdr) {
		memcpy(ip, iphdr, iplen);
	} else {
		iplen = 20;
		memset(ip, 0, 20);
		ip[0] = 0x45;
		ip[6] = 0x40; /* DF */
		ip[8] = 64;
		ip[9] = IPPROTO_TCP;
		memcpy(ip + 12, &peer_ip, 4);
		memcpy(ip + 16, &our_ip, 4);
		uint16_t tot = (uint16_t)(iplen + l4len);
		ip[2] = (uint8_t)(tot >> 8);
		ip[3] = (uint8_t)tot;
	}
	if (fix_ip_cksum) {
		ip[10] = ip[11] = 0;
		uint16_t c = (uint16_t)~fold_sum(sum_be(ip, iplen));
		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
	}
	memcpy(ip + iplen, l4, l4len);
	inject(f, 14 + iplen + l4len, split);
}

static size_t build_tcp(uint8_t *t, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack,
			uint8_t flags, uint16_t wnd, const uint8_t *opt, size_t olen,
			const uint8_t *pay, size_t plen)
{
	size_t opad = (olen + 3) & ~(size_t)3;
	if (opad > 40)
		opad = olen = 40;
	memset(t, 0, 20 + opad);
	t[0] = (uint8_t)(sport >> 8);
	t[1] = (uint8_t)sport;
	t[2] = (uint8_t)(dport >> 8);
	t[3] = (uint8_t)dport;
	uint32_t nseq = htonl(seq), nack = htonl(ack);
	memcpy(t + 4, &nseq, 4);
	memcpy(t + 8, &nack, 4);
	t[12] = (uint8_t)(((20 + opad) / 4) << 4);
	t[13] = flags;
	t[14] = (uint8_t)(wnd >> 8);
	t[15] = (uint8_t)wnd;
	if (olen)
		memcpy(t + 20, opt, olen);
	if (plen)
		memcpy(t + 20 + opad, pay, plen);
	return 20 + opad + plen;
}

static void send_tcp(uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
		     uint16_t wnd, const uint8_t *opt, size_t olen, const uint8_t *pay,
		     size_t plen, bool good_cksum, size_t split)
{
	static uint8_t t[MAX_FRAME];
	if (plen > 1400)
		plen = 1400;
	size_t len = build_tcp(t, sport, dport, seq, ack, flags, wnd, opt, olen, pay, plen);
	tcp_cksum(t, len, peer_ip, our_ip);
	if (!good_cksum)
		t[16] ^= 0x5a;
	inject_ip(t, len, NULL, 0, true, split);
}

/* ---- callbacks ---- */
static struct flow *flow_of(struct tcp_conn *c)
{
	for (unsigned i = 0; i < 2; i++)
		if (flows[i].c == c)
			return &flows[i];
	return NULL;
}

static void on_connected(void *arg, struct tcp_conn *c, int err)
{
	(void)arg;
	(void)c;
	(void)err;
}
static void on_recv(void *arg, struct tcp_conn *c, struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	(void)arg;
	CHECK((uint64_t)off + len <= m->pkt_len);
	rte_pktmbuf_free(m);
	tcp_conn_recved(c, len);
}
static void on_eof(void *arg, struct tcp_conn *c)
{
	(void)arg;
	(void)c;
}
static void on_writable(void *arg, struct tcp_conn *c)
{
	(void)arg;
	(void)c;
}
static void on_zc_done(void *arg, struct tcp_conn *c, void *cookie, int err)
{
	(void)arg;
	(void)c;
	(void)err;
	/* The cookie names the flow (zc_mem + index). */
	CHECK(cookie == zc_mem || cookie == zc_mem + 1);
	unsigned i = (unsigned)((uint8_t *)cookie - zc_mem);
	zc_done[i]++;
	CHECK(zc_done[i] <= zc_out[i]);
}
static void on_closed(void *arg, struct tcp_conn *c, int err)
{
	(void)arg;
	(void)err;
	struct flow *w = flow_of(c);
	CHECK(w != NULL && !w->closed);
	/* on_closed is the last callback: every zero-copy send was reported before. */
	CHECK(zc_done[w - flows] == zc_out[w - flows]);
	w->closed = true;
	w->c = NULL;
}
static const struct tcp_conn_ops conn_ops = {
	.on_connected = on_connected, .on_recv = on_recv, .on_eof = on_eof,
	.on_writable = on_writable, .on_zc_done = on_zc_done, .on_closed = on_closed,
};
static void on_acceptable(void *arg, struct tcp_listener *l)
{
	(void)arg;
	(void)l;
}
static const struct tcp_listener_ops lst_ops = {.on_acceptable = on_acceptable};

/* ---- set-up ---- */
static bool eal_init_once(void)
{
	static int state; /* 0 not tried, 1 up, -1 failed */
	if (state)
		return state > 0;
	char *argv[] = {"fuzz_tcp_input", "--no-huge", "-m", "128", "--no-shconf", "--no-pci",
			"--no-telemetry", "-l", "0", "--log-level=lib.eal:error"};
	state = -1;
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])), argv) < 0)
		return false;
	pool = rte_pktmbuf_pool_create("fuzz_tcp", POOL_SIZE, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	if (!pool)
		return false;
	const char *skip = getenv("FUZZ_TCP_SKIP");
	skip_records = skip && strstr(skip, "records");
	skip_zc = skip && strstr(skip, "zc");
	our_ip = inet_addr("198.51.100.1");
	peer_ip = inet_addr("198.51.100.2");
	state = 1;
	return true;
}

static const uint8_t SYN_OPTS[] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0,
				   1, 3, 3, 7};

static void ts_opt(uint8_t o[12], uint32_t ecr)
{
	uint32_t val = htonl((uint32_t)(vnow_ns / 1000000) + 1), e = htonl(ecr);
	o[0] = o[1] = 1;
	o[2] = 8;
	o[3] = 10;
	memcpy(o + 4, &val, 4);
	memcpy(o + 8, &e, 4);
}

/* The last input octet also picks the configuration (it does not shift the program):
 * bit 0 CUBIC, 1 no SACK, 2 no timestamps, 3 no window scaling, 4-5 the MTU. */
static bool setup_stack(uint8_t conf)
{
	static const uint16_t mtus[4] = {1500, 576, 1280, 1500};
	struct tcp_stack_cfg cfg;
	tcp_stack_cfg_default(&cfg);
	cfg.cc = (conf & 1) ? TCP_CC_CUBIC : TCP_CC_NEWRENO;
	cfg.no_sack = conf & 2;
	cfg.no_timestamps = conf & 4;
	cfg.no_wscale = conf & 8;
	cfg.nif.mtu = mtus[(conf >> 4) & 3];
	memcpy(cfg.nif.mac, OUR_MAC, 6);
	cfg.nif.ip = our_ip;
	cfg.nif.prefix_len = 24;
	cfg.nif.pool = pool;
	cfg.nif.tx = tx_fn;
	cfg.max_conns = 64;
	cfg.snd_buf = 64 * 1024;
	cfg.rcv_buf = 64 * 1024;
	cfg.clock_ns = vclock;
	for (unsigned i = 0; i < 16; i++)
		cfg.isn_key[i] = (uint8_t)(i + 1);
	if (tcp_stack_create(&cfg, &stack) != 0)
		return false;
	CHECK(net_arp_add(tcp_stack_netif(stack), peer_ip, PEER_MAC) == 0);
	CHECK(tcp_listen(stack, LPORT, 8, &lst_ops, NULL, &listener) == 0);
	return true;
}

/* The peer connects to our listener: SYN, our SYN-ACK (observed), ACK, accept. */
static void passive_open(void)
{
	struct flow *w = &flows[0];
	*w = (struct flow){.lport = LPORT, .rport = PEER_PORT, .peer_nxt = PEER_ISS + 1};
	send_tcp(PEER_PORT, LPORT, PEER_ISS, 0, 0x02, 65535, SYN_OPTS, sizeof(SYN_OPTS), NULL, 0,
		 true, 0);
	tcp_stack_poll(stack);
	if (!w->seen)
		return;
	uint8_t o[12];
	ts_opt(o, 0);
	send_tcp(PEER_PORT, LPORT, w->peer_nxt, w->snd_nxt, 0x10, 512, o, 12, NULL, 0, true, 0);
	tcp_stack_poll(stack);
	if (tcp_accept(listener, &conn_ops, NULL, &w->c) != 0)
		w->c = NULL;
}

/* We connect to the peer: our SYN (observed), its SYN-ACK, our ACK. */
static void active_open(void)
{
	struct flow *w = &flows[1];
	*w = (struct flow){.rport = PEER_LPORT, .peer_nxt = PEER_ISS2 + 1};
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(PEER_LPORT),
				  .sin_addr.s_addr = peer_ip};
	if (tcp_connect(stack, &dst, 0, &conn_ops, NULL, &w->c) != 0) {
		w->c = NULL;
		return;
	}
	struct sockaddr_in local, peer;
	tcp_conn_addrs(w->c, &local, &peer);
	w->lport = ntohs(local.sin_port);
	tcp_stack_poll(stack);
	if (!w->seen)
		return;
	send_tcp(PEER_LPORT, w->lport, PEER_ISS2, w->snd_nxt, 0x12, 65535, SYN_OPTS,
		 sizeof(SYN_OPTS), NULL, 0, true, 0);
	tcp_stack_poll(stack);
}

/* ---- operations ---- */
static void op_segment(struct rd *r)
{
	uint8_t sel = get8(r);
	struct flow *w = &flows[sel & 1];
	uint8_t flags = get8(r);
	int16_t dseq = (int16_t)get16(r), dack = (int16_t)get16(r);
	uint16_t wnd = get16(r);
	const uint8_t *opt, *pay;
	size_t olen = take(r, get8(r) % 41, &opt);
	size_t plen = take(r, get8(r), &pay);
	/* Mostly exact numbers (the interesting paths need them), sometimes off by the input. */
	uint32_t seq = w->peer_nxt + ((sel & 2) ? (uint32_t)(int32_t)dseq : 0);
	uint32_t ack = w->snd_nxt + ((sel & 4) ? (uint32_t)(int32_t)dack : 0);
	if (!(sel & 8))
		flags = (uint8_t)((flags & ~0x02u) | 0x10u); /* plain ACK-carrying segment */
	send_tcp(w->rport, w->lport, seq, ack, flags, wnd, opt, olen, pay, plen, !(sel & 16),
		 (sel & 32) ? (size_t)get8(r) : 0);
	/* In-order data moves the peer on, as a real one would. */
	if (!(sel & 2) && !(sel & 64))
		w->peer_nxt += (uint32_t)plen + !!(flags & 0x01);
}

static void op_raw_tcp(struct rd *r)
{
	const uint8_t *p;
	size_t n = take(r, get16(r) % 1460, &p);
	static uint8_t t[1460];
	memcpy(t, p, n);
	if (n >= 18)
		tcp_cksum(t, n, peer_ip, our_ip);
	inject_ip(t, n, NULL, 0, true, 0);
}

static void op_raw_frame(struct rd *r)
{
	uint8_t split = get8(r);
	const uint8_t *p;
	size_t n = take(r, get16(r) % MAX_FRAME, &p);
	inject(p, n, split);
}

static void op_clock(struct rd *r)
{
	uint16_t v = get16(r);
	/* Up to ~65 ms in microseconds, or up to ~18 h in seconds (TIME_WAIT, keepalive). */
	uint64_t d = (v & 1) ? (uint64_t)(v >> 1) * 1000000000ull / 2 : (uint64_t)v * 1000;
	vnow_ns += d;
	tcp_stack_poll(stack);
}

static size_t rec_len(const uint8_t hdr[2])
{
	/* MPA-like: a 2-octet length of the ULPDU, plus header and CRC. */
	return (size_t)(hdr[0] << 8 | hdr[1]) % 2048 + 6;
}

static void op_app(struct rd *r)
{
	uint8_t sel = get8(r);
	struct flow *w = &flows[sel & 1];
	struct tcp_conn *c = w->c;
	uint16_t n = get16(r);
	if (!c || w->closing)
		return;
	switch ((sel >> 1) % 10) {
	case 0:
	case 1: {
		static uint8_t buf[65536];
		for (size_t i = 0; i < n; i += 2) {
			/* records of whatever the first octets say */
			buf[i] = (uint8_t)(i >> 3);
			if (i + 1 < sizeof(buf))
				buf[i + 1] = (uint8_t)i;
		}
		struct iovec iov = {.iov_base = buf, .iov_len = n};
		(void)tcp_send(c, &iov, 1);
		break;
	}
	case 2: {
		if (skip_zc)
			break;
		struct iovec iov = {.iov_base = zc_mem, .iov_len = n % sizeof(zc_mem) + 1};
		if (tcp_send_zc(c, &iov, 1, zc_mem + (w - flows)) == 0)
			zc_out[w - flows]++;
		break;
	}
	case 3:
		if (!skip_records)
			tcp_conn_set_records(c, (n & 1) ? rec_len : NULL);
		break;
	case 4:
		tcp_conn_recved(c, n);
		break;
	case 5:
		(void)tcp_shutdown(c);
		break;
	case 6:
		w->closing = true;
		tcp_close(c);
		break;
	case 7:
		w->c = NULL; /* the handle is gone once tcp_abort returns */
		w->closed = true;
		tcp_abort(c);
		/* outstanding zero-copy sends completed (-ECONNABORTED) before it returned */
		CHECK(zc_done[w - flows] == zc_out[w - flows]);
		break;
	case 8:
		(void)tcp_conn_set_keepalive(c, n % 8, 1 + n % 3, 1 + n % 4);
		break;
	default: {
		tcp_conn_set_nagle(c, n & 1);
		struct tcp_conn_stats st;
		tcp_conn_get_stats(c, &st);
		(void)tcp_conn_state(c);
		(void)tcp_conn_mss(c);
		(void)tcp_conn_send_space(c);
		break;
	}
	}
	tcp_stack_flush(stack);
}

static void op_ip(struct rd *r)
{
	uint8_t ip[60];
	uint8_t ihl_sel = get8(r);
	size_t iplen = 20 + 4u * (ihl_sel % 11);
	const uint8_t *p;
	size_t got = take(r, iplen, &p);
	memset(ip, 0, sizeof(ip));
	memcpy(ip, p, got);
	/* Keep the version and addresses mostly right so the packet gets that far. */
	if (!(ihl_sel & 0x80)) {
		ip[0] = (uint8_t)(0x40 | iplen / 4);
		memcpy(ip + 12, &peer_ip, 4);
		memcpy(ip + 16, &our_ip, 4);
		ip[9] = IPPROTO_TCP;
	}
	const uint8_t *t;
	size_t n = take(r, get8(r), &t);
	static uint8_t seg[256];
	memcpy(seg, t, n);
	if (n >= 18)
		tcp_cksum(seg, n, peer_ip, our_ip);
	if (!(ihl_sel & 0x40)) {
		uint16_t tot = (uint16_t)(iplen + n);
		ip[2] = (uint8_t)(tot >> 8);
		ip[3] = (uint8_t)tot;
	}
	inject_ip(seg, n, ip, iplen, !(ihl_sel & 0x20), 0);
}

static void op_syn(struct rd *r)
{
	uint16_t port = get16(r);
	uint32_t seq = (uint32_t)get16(r) << 16;
	const uint8_t *opt;
	size_t olen = take(r, get8(r) % 41, &opt);
	send_tcp(port, LPORT, seq, 0, 0x02, 8192, opt, olen, NULL, 0, true, 0);
	tcp_stack_poll(stack);
	struct tcp_conn *c;
	/* Accepting keeps the backlog moving; these connections are aborted right away. */
	if (get8(r) & 1 && tcp_accept(listener, &conn_ops, NULL, &c) == 0) {
		tcp_abort(c);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!eal_init_once())
		abort();
	unsigned free_before = rte_mempool_avail_count(pool);
	vnow_ns = 1000000000ull;
	memset(zc_out, 0, sizeof(zc_out));
	memset(zc_done, 0, sizeof(zc_done));
	memset(flows, 0, sizeof(flows));
	if (!setup_stack(size ? data[size - 1] : 0))
		abort();
	passive_open();
	active_open();
	bool verbose = getenv("FUZZ_TCP_VERBOSE") != NULL;
	if (verbose)
		for (unsigned i = 0; i < 2; i++)
			fprintf(stderr, "flow %u: port %u conn %s state %s snd_nxt %u\n", i,
				flows[i].lport, flows[i].c ? "yes" : "no",
				flows[i].c ? tcp_state_name(tcp_conn_state(flows[i].c)) : "-",
				flows[i].snd_nxt);

	struct rd r = {data, size};
	for (unsigned ops = 0; r.n > 0 && ops < 256; ops++) {
		switch (get8(&r) & 7) {
		case 0: op_segment(&r); break;
		case 1: op_raw_tcp(&r); break;
		case 2: op_raw_frame(&r); break;
		case 3: op_clock(&r); break;
		case 4: op_app(&r); break;
		case 5: op_ip(&r); break;
		case 6: op_syn(&r); break;
		default: tcp_stack_poll(stack); break;
		}
		tcp_stack_poll(stack);
	}
	if (verbose) {
		struct tcp_stack_stats st;
		tcp_stack_get_stats(stack, &st);
		fprintf(stderr, "in %lu out %lu rst_out %lu retrans %lu conns %lu csum_err %lu\n",
			(unsigned long)st.in_segs, (unsigned long)st.out_segs,
			(unsigned long)st.out_rsts, (unsigned long)st.retrans_segs,
			(unsigned long)st.cur_conns, (unsigned long)st.in_csum_errs);
		for (unsigned i = 0; i < 2; i++)
			if (flows[i].c)
				fprintf(stderr, "flow %u end state %s\n", i,
					tcp_state_name(tcp_conn_state(flows[i].c)));
	}
	tcp_stack_destroy(stack);
	stack = NULL;
	listener = NULL;
	/* tcp_stack_destroy makes no callbacks (zero-copy memory is released silently). */
	CHECK(rte_mempool_avail_count(pool) == free_before);
	return 0;
}
