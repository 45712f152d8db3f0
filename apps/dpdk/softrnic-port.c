/* softrnic-port: open a DPDK port from the softrnic configuration (SOFTRNIC_DPDK_CONF /
 * SOFTRNIC_DPDK_*; docs/dpdk.md), run its stack inline for N seconds or until SIGINT
 * (answering ARP and ping), optionally ping an address, and print the counters at the end.
 *
 *   softrnic-port [--seconds N] [--ping IP [--count N] [--interval MS]] [--thread] [--quiet]
 *
 * With --ping it ends once every echo request was answered, or after --seconds. The stack
 * runs inline (this thread polls), or with --thread on the port's poll thread.
 *
 * Exit status: 0, or 1 when --ping got no reply at all (ping's rule), 2 on a bad option or
 * when the port cannot open (the reason on stderr). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "net.h"
#include "dpdk_port.h"
#include "tcp.h"

struct opts {
	double seconds;      /* 0: until SIGINT */
	uint32_t ping;       /* network order; 0 none */
	unsigned count, interval_ms;
	bool quiet;
	bool thread;         /* the port's poll thread instead of inline polls */
};

struct pinger {
	struct net_if *nif;
	uint32_t dst;
	uint16_t ident;
	unsigned sent, replies;
	uint64_t *rtt;       /* per reply, for min / median / max */
	uint64_t rtt_sum_ns;
	bool quiet;
};

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void usage(void)
{
	fprintf(stderr, "usage: softrnic-port [--seconds N] [--ping IP [--count N] "
		"[--interval MS]] [--thread] [--quiet]\n"
		"configuration: SOFTRNIC_DPDK_CONF=<file> or SOFTRNIC_DPDK_EAL, _IP, _PORT, ... "
		"(docs/dpdk.md)\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "seconds", required_argument, NULL, 's' }, { "ping", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'c' },   { "interval", required_argument, NULL, 'i' },
		{ "quiet", no_argument, NULL, 'q' },         { "help", no_argument, NULL, 'h' },
		{ "thread", no_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct in_addr a;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->count = 5;
	o->interval_ms = 200;
	while ((c = getopt_long(argc, argv, "s:p:c:i:qth", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			o->seconds = strtod(optarg, &end);
			if (*end != '\0' || o->seconds < 0 || o->seconds > 86400)
				return -1;
			break;
		case 'p':
			if (inet_pton(AF_INET, optarg, &a) != 1)
				return -1;
			o->ping = a.s_addr;
			break;
		case 'c':
			o->count = (unsigned)strtoul(optarg, &end, 10);
			if (*end != '\0' || o->count == 0 || o->count > 100000)
				return -1;
			break;
		case 'i':
			o->interval_ms = (unsigned)strtoul(optarg, &end, 10);
			if (*end != '\0' || o->interval_ms == 0 || o->interval_ms > 60000)
				return -1;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 't':
			o->thread = true;
			break;
		default:
			return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

/* ---- ping ------------------------------------------------------------------------------------ */

static void ping_input(void *arg, struct rte_mbuf *m, const struct net_ip_info *in)
{
	struct pinger *pg = arg;
	const struct rte_icmp_hdr *h = rte_pktmbuf_mtod(m, const struct rte_icmp_hdr *);
	uint64_t t0, rtt;
	char ip[INET_ADDRSTRLEN];

	if (h->icmp_type != RTE_IP_ICMP_ECHO_REPLY || ntohs(h->icmp_ident) != pg->ident ||
	    in->src != pg->dst || in->l4_len < sizeof(*h) + sizeof(t0)) {
		rte_pktmbuf_free(m);
		return;
	}
	memcpy(&t0, rte_pktmbuf_mtod_offset(m, const uint8_t *, sizeof(*h)), sizeof(t0));
	rtt = now_ns() - t0;
	if (pg->replies < pg->sent)
		pg->rtt[pg->replies] = rtt;
	pg->replies++;
	pg->rtt_sum_ns += rtt;
	if (!pg->quiet) {
		inet_ntop(AF_INET, &in->src, ip, sizeof(ip));
		printf("%u bytes from %s: icmp_seq=%u ttl=%u time=%.1f us\n", in->l4_len, ip,
		       ntohs(h->icmp_seq_nb), in->ttl, (double)rtt / 1e3);
		fflush(stdout);
	}
	rte_pktmbuf_free(m);
}

static void ping_send(struct pinger *pg)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(net_if_pool(pg->nif));
	struct rte_icmp_hdr *h;
	uint8_t *d;
	uint64_t t = now_ns();

	if (m == NULL)
		return;
	d = (uint8_t *)rte_pktmbuf_append(m, sizeof(*h) + 56);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	h = (struct rte_icmp_hdr *)d;
	memset(d, 0, sizeof(*h) + 56);
	h->icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
	h->icmp_ident = htons(pg->ident);
	h->icmp_seq_nb = htons((uint16_t)(pg->sent + 1));
	memcpy(d + sizeof(*h), &t, sizeof(t));
	for (unsigned i = sizeof(*h) + sizeof(t); i < sizeof(*h) + 56; i++)
		d[i] = (uint8_t)i;
	h->icmp_cksum = (uint16_t)~rte_raw_cksum(d, sizeof(*h) + 56);
	pg->sent++;
	if (net_ip_output(pg->nif, m, pg->dst, IPPROTO_ICMP) == 0)
		net_if_flush(pg->nif);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void print_ping(struct pinger *pg)
{
	unsigned n = pg->replies < pg->sent ? pg->replies : pg->sent;

	qsort(pg->rtt, n, sizeof(*pg->rtt), cmp_u64);
	printf("ping: %u sent, %u received, rtt min/median/avg/max %.1f/%.1f/%.1f/%.1f us\n",
	       pg->sent, pg->replies, n ? (double)pg->rtt[0] / 1e3 : 0.0,
	       n ? (double)pg->rtt[n / 2] / 1e3 : 0.0,
	       pg->replies ? (double)pg->rtt_sum_ns / pg->replies / 1e3 : 0.0,
	       n ? (double)pg->rtt[n - 1] / 1e3 : 0.0);
}

/* ---- run ------------------------------------------------------------------------------------- */

static void print_stats(struct dpdk_port *p, struct net_if *nif)
{
	struct dpdk_port_stats ps;
	struct net_if_stats ns;
	struct tcp_stack_stats ts;

	dpdk_port_get_stats(p, &ps);
	dpdk_port_lock(p);
	net_if_get_stats(nif, &ns);
	tcp_stack_get_stats(dpdk_port_stack(p), &ts);
	dpdk_port_unlock(p);
	printf("port: rx_pkts=%" PRIu64 " rx_bytes=%" PRIu64 " tx_pkts=%" PRIu64
	       " tx_bytes=%" PRIu64 " tx_full_drops=%" PRIu64 " polls=%" PRIu64 " naps=%" PRIu64
	       " pcap_frames=%" PRIu64 " eth_ipackets=%" PRIu64 " eth_opackets=%" PRIu64
	       " eth_ierrors=%" PRIu64 " eth_imissed=%" PRIu64 " link_restarts=%" PRIu64
	       " link_up=%d\n",
	       ps.rx_pkts, ps.rx_bytes, ps.tx_pkts, ps.tx_bytes, ps.tx_full_drops, ps.polls, ps.naps,
	       ps.pcap_frames, ps.eth_ipackets, ps.eth_opackets, ps.eth_ierrors, ps.eth_imissed,
	       ps.link_restarts, ps.link_up);
	printf("net: rx_frames=%" PRIu64 " tx_frames=%" PRIu64 " tx_drops=%" PRIu64
	       " not_for_us=%" PRIu64 " unknown_ethertype=%" PRIu64 " arp_requests_in=%" PRIu64
	       " arp_replies_in=%" PRIu64 " arp_requests_out=%" PRIu64 " arp_replies_out=%" PRIu64
	       " arp_entries=%" PRIu64 " arp_unresolved_drops=%" PRIu64 "\n",
	       ns.rx_frames, ns.tx_frames, ns.tx_drops, ns.rx_not_for_us, ns.rx_unknown_ethertype,
	       ns.arp_requests_in, ns.arp_replies_in, ns.arp_requests_out, ns.arp_replies_out,
	       ns.arp_entries, ns.arp_unresolved_drops);
	printf("ip: in=%" PRIu64 " out=%" PRIu64 " bad_hdr=%" PRIu64 " bad_cksum=%" PRIu64
	       " frag_drops=%" PRIu64 " not_for_us=%" PRIu64 " unknown_proto=%" PRIu64
	       " icmp_echo_in=%" PRIu64 " icmp_echo_out=%" PRIu64 " icmp_other_in=%" PRIu64 "\n",
	       ns.ip_in, ns.ip_out, ns.ip_bad_hdr, ns.ip_bad_cksum, ns.ip_frag_drops,
	       ns.ip_not_for_us, ns.ip_unknown_proto, ns.icmp_echo_in, ns.icmp_echo_out,
	       ns.icmp_other_in);
	printf("tcp: in_segs=%" PRIu64 " out_segs=%" PRIu64 " in_errs=%" PRIu64
	       " in_csum_errs=%" PRIu64 " in_csum_partial=%" PRIu64 " no_port_rsts=%" PRIu64
	       " syn_backlog_drops=%" PRIu64 " syncookies_sent=%" PRIu64 " syncookies_ok=%" PRIu64
	       " syncookies_failed=%" PRIu64 "\n",
	       ts.in_segs, ts.out_segs, ts.in_errs, ts.in_csum_errs, ts.in_csum_partial,
	       ts.no_port_rsts, ts.syn_backlog_drops, ts.syncookies_sent, ts.syncookies_ok,
	       ts.syncookies_failed);
}

static void announce(struct net_if *nif)
{
	uint32_t ip = net_if_ip(nif);
	uint8_t mac[6];
	char s[INET_ADDRSTRLEN];

	net_if_mac(nif, mac);
	inet_ntop(AF_INET, &ip, s, sizeof(s));
	printf("softrnic-port: up, ip %s mac %02x:%02x:%02x:%02x:%02x:%02x mtu %u\n", s, mac[0],
	       mac[1], mac[2], mac[3], mac[4], mac[5], net_if_mtu(nif));
	fflush(stdout);
}

/* Ping upkeep at time t: send the next request when due. true when all are answered. In
 * thread mode the caller holds the port lock (ping_input runs on the poll thread). */
static bool ping_step(struct pinger *pg, const struct opts *o, uint64_t t, uint64_t *next_ping)
{
	if (pg->dst == 0)
		return false;
	if (pg->replies == 1 && *next_ping > t + (uint64_t)o->interval_ms * 1000000ull)
		*next_ping = t;
	if (pg->sent < o->count && t >= *next_ping) {
		ping_send(pg);
		/* Until the first reply (ARP, a memif link still coming up) one request a
		 * second, so that none is lost in the ARP hold queue. */
		*next_ping = t + (pg->replies == 0 ? 1000000000ull
						  : (uint64_t)o->interval_ms * 1000000ull);
	}
	return pg->replies >= o->count;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	nanosleep(&ts, NULL);
}

/* Thread mode: the port's poll thread drives the stack; this thread only pings, under the
 * lock, and kicks the thread after queuing a request. */
static void run_thread(struct dpdk_port *p, const struct opts *o, struct pinger *pg,
		       uint64_t end)
{
	uint64_t next_ping = now_ns();

	while (!g_stop && now_ns() < end) {
		unsigned sent;
		bool done;

		/* Nothing to do here: leave the lock alone (taking it keeps the thread spinning). */
		if (pg->dst == 0) {
			sleep_ns(10000000);
			continue;
		}
		dpdk_port_lock(p);
		sent = pg->sent;
		done = ping_step(pg, o, now_ns(), &next_ping);
		dpdk_port_unlock(p);
		if (pg->sent != sent)
			dpdk_port_kick(p);
		if (done)
			break;
		sleep_ns(1000000);
	}
}

/* Inline loop: poll while busy; when idle for spin_us, sleep up to nap_us or the next timer. */
static void run_inline(struct dpdk_port *p, const struct opts *o, struct pinger *pg,
		       const struct dpdk_cfg *cfg, uint64_t end)
{
	uint64_t idle_since = now_ns(), next_ping = idle_since, next = 0;

	while (!g_stop) {
		uint64_t t = now_ns(), nap;
		unsigned sent = pg->sent;

		if (t >= end || ping_step(pg, o, t, &next_ping))
			break;
		if (pg->sent != sent || dpdk_port_poll(p, &next) > 0) {
			idle_since = t;
		} else if (t - idle_since > (uint64_t)cfg->spin_us * 1000u) {
			nap = (uint64_t)(cfg->nap_us ? cfg->nap_us : 50) * 1000u;
			sleep_ns(next < nap ? next : nap);
		}
	}
}

static int run(struct dpdk_port *p, const struct opts *o, struct pinger *pg,
	       const struct dpdk_cfg *cfg)
{
	uint64_t end = o->seconds > 0 ? now_ns() + (uint64_t)(o->seconds * 1e9) : UINT64_MAX;
	int rc;

	if (!o->thread) {
		run_inline(p, o, pg, cfg, end);
		return 0;
	}
	rc = dpdk_port_start(p);
	if (rc != 0) {
		fprintf(stderr, "softrnic-port: poll thread: %s\n", strerror(-rc));
		return rc;
	}
	run_thread(p, o, pg, end);
	dpdk_port_stop(p);
	return 0;
}

int main(int argc, char **argv)
{
	struct dpdk_cfg cfg;
	struct dpdk_port *p;
	struct pinger pg;
	struct opts o;
	char err[1024];
	int rc;

	if (parse_opts(argc, argv, &o) != 0) {
		usage();
		return 2;
	}
	rc = dpdk_cfg_from_env(&cfg, err, sizeof(err));
	if (rc == 0)
		rc = dpdk_port_open(&cfg, &p, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "softrnic-port: %s\n", err);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	memset(&pg, 0, sizeof(pg));
	pg.nif = tcp_stack_netif(dpdk_port_stack(p));
	pg.dst = o.ping;
	pg.ident = (uint16_t)getpid();
	pg.quiet = o.quiet;
	if (o.ping != 0) {
		pg.rtt = calloc(o.count, sizeof(*pg.rtt));
		if (pg.rtt == NULL) {
			fprintf(stderr, "softrnic-port: out of memory\n");
			dpdk_port_close(p);
			return 2;
		}
		net_if_set_l4(pg.nif, IPPROTO_ICMP, ping_input, &pg);
	}
	announce(pg.nif);
	if (run(p, &o, &pg, &cfg) != 0) {
		dpdk_port_close(p);
		free(pg.rtt);
		return 2;
	}
	if (o.ping != 0) {
		print_ping(&pg);
		net_if_set_l4(pg.nif, IPPROTO_ICMP, NULL, NULL);
	}
	print_stats(p, pg.nif);
	fflush(stdout);
	dpdk_port_close(p);
	free(pg.rtt);
	return o.ping != 0 && pg.replies == 0 ? 1 : 0;
}
