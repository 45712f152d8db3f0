/* dpdk/dpdk_port.c on net_ring (one process, the port's transmit loops back to its own
 * receive): open errors, sharing by reference count, inline polls, the poll thread (naps,
 * kick, lock, -EBUSY for inline polls), transmit/receive counters and pcap capture, a
 * re-open after the last close (the vdev is plugged again), and the lcore ids of the
 * threads that work the port (dpdk_lcore.h: mempool caches, released at thread exit,
 * no cache once every id is taken). */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <pcap/pcap.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "net.h"
#include "dpdk_lcore.h"
#include "dpdk_port.h"
#include "../../lib/t_util.h"

static char pcap_path[64];

static void mk_cfg(struct dpdk_cfg *c, const char *extra)
{
	char err[512];
	char text[1024];

	snprintf(text, sizeof(text),
		 "eal = --no-huge -m 128 --vdev=net_ring0\nport = net_ring0\n"
		 "ip = 198.51.100.1/24\nmac = 02:00:00:00:0c:01\nmbufs = 2047\n%s", extra);
	if (dpdk_cfg_parse(c, text, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static bool have_hugepages(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long n = 0;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Total: %lu", &n) == 1)
			break;
	if (f != NULL)
		fclose(f);
	return n > 0;
}

/* Runs first: EAL is not up yet. Without hugepages and without --no-huge the open says what
 * to do, and EAL stays startable for a corrected configuration. */
static void test_no_hugepages(void **state)
{
	struct dpdk_cfg c;
	struct dpdk_port *p;
	char err[512];

	(void)state;
	if (have_hugepages())
		skip();
	mk_cfg(&c, "");
	snprintf(c.eal, sizeof(c.eal), "--vdev=net_ring0");
	assert_int_equal(dpdk_port_open(&c, &p, err, sizeof(err)), -ENOMEM);
	assert_non_null(strstr(err, "--no-huge"));
	assert_non_null(strstr(err, "nr_hugepages"));
}

static void test_open_errors(void **state)
{
	struct dpdk_cfg c;
	struct dpdk_port *p;
	char err[512];

	(void)state;
	mk_cfg(&c, "port = net_nothere\n");
	assert_int_equal(dpdk_port_open(&c, &p, err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "'port'"));
	assert_non_null(strstr(err, "net_ring0")); /* the ports that exist are listed */
	mk_cfg(&c, "port = 7\n");
	assert_int_equal(dpdk_port_open(&c, &p, err, sizeof(err)), -ENODEV);
	c.ip = 0;
	assert_int_equal(dpdk_port_open(&c, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'ip'"));
}

/* Inline: an ARP request for an unknown neighbour goes out and loops back (our own MAC: not
 * learned); both frames are counted and captured. */
static void test_inline_and_capture(void **state)
{
	struct dpdk_cfg c;
	struct dpdk_port *p, *q;
	struct dpdk_port_stats st;
	struct net_if_stats ns;
	struct net_if *nif;
	struct rte_mbuf *m;
	char err[512], extra[128], eb[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	pcap_t *pc;
	int n = 0, narp = 0, big = 0;

	(void)state;
	snprintf(extra, sizeof(extra), "pcap = %s\n", pcap_path);
	mk_cfg(&c, extra);
	if (dpdk_port_open(&c, &p, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	/* The same configuration shares the port; another address for it is refused. */
	assert_int_equal(dpdk_port_open(&c, &q, err, sizeof(err)), 0);
	assert_ptr_equal(p, q);
	dpdk_port_close(q);
	c.ip = htonl(0xc6336409);
	assert_int_equal(dpdk_port_open(&c, &q, err, sizeof(err)), -EBUSY);
	nif = tcp_stack_netif(dpdk_port_stack(p));
	m = rte_pktmbuf_alloc(net_if_pool(nif));
	assert_non_null(m);
	assert_non_null(rte_pktmbuf_append(m, 8));
	memset(rte_pktmbuf_mtod(m, void *), 0, 8);
	assert_int_equal(net_ip_output(nif, m, htonl(0xc6336409), 253), 0);
	net_if_flush(nif);
	for (int i = 0; i < 100 && n == 0; i++)
		n = dpdk_port_poll(p, NULL);
	assert_int_equal(n, 1);
	dpdk_port_get_stats(p, &st);
	assert_int_equal(st.tx_pkts, 1);
	assert_int_equal(st.rx_pkts, 1);
	assert_int_equal(st.tx_bytes, 14 + 28);
	assert_int_equal(st.pcap_frames, 2);
	assert_true(st.polls >= 1);
	net_if_get_stats(nif, &ns);
	assert_int_equal(ns.arp_requests_out, 1);
	assert_int_equal(ns.rx_bad_eth, 1); /* our own ARP request is not learned */
	/* The neighbour becomes static: the packet held for it goes out, and so does a chained
	 * one (100 + 200 octets), whole (as a chain or copied into one mbuf, whichever the port
	 * takes); both loop back and are not for our MAC. */
	{
		static const uint8_t nmac[6] = { 0x02, 0, 0, 0, 0x0c, 0x09 };
		struct rte_mbuf *t = rte_pktmbuf_alloc(net_if_pool(nif));

		m = rte_pktmbuf_alloc(net_if_pool(nif));
		assert_non_null(m);
		assert_non_null(t);
		assert_non_null(rte_pktmbuf_append(m, 100));
		assert_non_null(rte_pktmbuf_append(t, 200));
		assert_int_equal(rte_pktmbuf_chain(m, t), 0);
		assert_int_equal(net_arp_add(nif, htonl(0xc6336409), nmac), 0);
		assert_int_equal(net_ip_output(nif, m, htonl(0xc6336409), 253), 0);
		net_if_flush(nif);
		n = 0;
		for (int i = 0; i < 100 && n < 2; i++)
			n += dpdk_port_poll(p, NULL);
		assert_int_equal(n, 2);
		dpdk_port_get_stats(p, &st);
		assert_int_equal(st.tx_bytes, 42 + 42 + 334);
		assert_int_equal(st.rx_bytes, 42 + 42 + 334);
		assert_int_equal(st.pcap_frames, 6);
		net_if_get_stats(nif, &ns);
		assert_int_equal(ns.rx_not_for_us, 2);
	}
	dpdk_port_close(p);
	/* The capture: the ARP request out and back, the two IPv4 packets out and back. */
	pc = pcap_open_offline(pcap_path, eb);
	assert_non_null(pc);
	assert_int_equal(pcap_datalink(pc), DLT_EN10MB);
	for (n = 0; pcap_next_ex(pc, &h, &d) == 1; n++) {
		assert_int_equal(d[12], 0x08);
		if (d[13] == 0x06) {
			narp++;
			assert_int_equal(h->caplen, 42);
		} else {
			assert_int_equal(d[13], 0x00);
			assert_true(h->caplen == 42 || h->caplen == 334);
			big += h->caplen == 334;
		}
	}
	assert_int_equal(n, 6);
	assert_int_equal(narp, 2);
	assert_int_equal(big, 2);
	pcap_close(pc);
	unlink(pcap_path);
}

static void test_thread(void **state)
{
	struct dpdk_cfg c;
	struct dpdk_port *p;
	struct dpdk_port_stats a, b;
	char err[512];

	(void)state;
	/* Re-open after the last close: the ring vdev is plugged again. */
	mk_cfg(&c, "spin_us = 100\nnap_us = 200\n");
	if (dpdk_port_open(&c, &p, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(dpdk_port_start(p), 0);
	assert_int_equal(dpdk_port_start(p), 0); /* already running */
	assert_int_equal(dpdk_port_poll(p, NULL), -EBUSY);
	/* Idle: it naps (about 200 us each), so far fewer than one pass a microsecond. Wait
	 * for the naps rather than a fixed time: a loaded machine may not run the thread. */
	for (int i = 0; i < 400; i++) {
		sleep_ms(5);
		dpdk_port_get_stats(p, &a);
		if (a.naps > 10)
			break;
	}
	assert_true(a.naps > 10);
	assert_true(a.polls < 50000 + 10 * a.naps); /* the first spin, then a pass per nap */
	/* The lock excludes the thread: no pass while we hold it. */
	dpdk_port_lock(p);
	dpdk_port_get_stats(p, &a); /* recursive: get_stats locks again */
	sleep_ms(20);
	dpdk_port_get_stats(p, &b);
	assert_int_equal(a.polls, b.polls);
	dpdk_port_unlock(p);
	/* A kick wakes it. */
	dpdk_port_kick(p);
	sleep_ms(20);
	dpdk_port_get_stats(p, &b);
	assert_true(b.polls > a.polls);
	dpdk_port_stop(p);
	dpdk_port_get_stats(p, &a);
	sleep_ms(10);
	dpdk_port_get_stats(p, &b);
	assert_int_equal(a.polls, b.polls);
	/* Inline again once the thread is gone. */
	assert_int_equal(dpdk_port_poll(p, NULL), 0);
	dpdk_port_close(p);
}

/* An ARP request from 198.51.100.9 for our address, as a pcap file for net_pcap's rx. */
static void write_arp_pcap(const char *path)
{
	static const uint8_t f[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0x0c, 0x09, 0x08, 0x06,
		0, 1, 0x08, 0, 6, 4, 0, 1, 0x02, 0, 0, 0, 0x0c, 0x09, 198, 51, 100, 9,
		0, 0, 0, 0, 0, 0, 198, 51, 100, 1,
	};
	struct pcap_pkthdr h = { .caplen = sizeof(f), .len = sizeof(f) };
	pcap_t *pd = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d = pcap_dump_open(pd, path);

	assert_non_null(d);
	pcap_dump((u_char *)d, &h, f);
	pcap_dump_close(d);
	pcap_close(pd);
}

/* Receive has its own pool: with every transmit mbuf taken (as by send queues waiting for
 * acknowledgements), a frame still arrives and is counted. net_pcap allocates each received
 * frame from the rx queue's pool (net_ring would only pass mbuf pointers along), so with one
 * shared pool this frame would be lost. Also: a tx_mbufs that does not fit is refused naming
 * the key, the default tx pool fits the memory, and an open does not wait for a port whose
 * link is up at once. */
static void test_rx_pool_when_tx_exhausted(void **state)
{
	char in[64], out[64], err[512], text[512];
	struct dpdk_port_stats st;
	struct rte_mempool *tx;
	struct dpdk_port *p;
	struct dpdk_cfg c;
	struct rte_mbuf **held;
	long long t0;
	unsigned nheld = 0;
	int n = 0;

	(void)state;
	snprintf(in, sizeof(in), "/tmp/srn-port-in-%d.pcap", (int)getpid());
	snprintf(out, sizeof(out), "/tmp/srn-port-out-%d.pcap", (int)getpid());
	write_arp_pcap(in);
	snprintf(text, sizeof(text), "eal = --no-huge -m 128 --vdev=net_pcap0,rx_pcap=%s,"
		 "tx_pcap=%s\nport = net_pcap0\nip = 198.51.100.1/24\nmbufs = 2047\n"
		 "tx_mbufs = 1048575\n", in, out);
	assert_int_equal(dpdk_cfg_parse(&c, text, err, sizeof(err)), 0);
	assert_int_equal(dpdk_port_open(&c, &p, err, sizeof(err)), -ENOMEM);
	assert_non_null(strstr(err, "tx_mbufs"));
	c.nb_tx_mbufs = 0; /* the default: sized to what EAL has left */
	t0 = t_now_ms();
	if (dpdk_port_open(&c, &p, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	/* link_wait_ms is 2000: not waited for. Milliseconds, not tv_sec alone: an open of a few
	 * ms across a second's boundary can differ by 1 in tv_sec. */
	assert_true(t_now_ms() - t0 < 1500);
	dpdk_port_get_stats(p, &st);
	assert_true(st.link_up);
	assert_int_equal(st.rx_pool_size, 2047);
	assert_true(st.tx_pool_size >= 1023 && st.tx_pool_size <= 65535);
	print_message("default pools at -m 128: rx %lu, tx %lu mbufs\n",
		      (unsigned long)st.rx_pool_size, (unsigned long)st.tx_pool_size);
	tx = net_if_pool(tcp_stack_netif(dpdk_port_stack(p)));
	held = calloc(st.tx_pool_size, sizeof(*held));
	assert_non_null(held);
	while (nheld < st.tx_pool_size && (held[nheld] = rte_pktmbuf_alloc(tx)) != NULL)
		nheld++;
	assert_int_equal(nheld, st.tx_pool_size);
	assert_null(rte_pktmbuf_alloc(tx));
	for (int i = 0; i < 100 && n == 0; i++)
		n = dpdk_port_poll(p, NULL);
	assert_int_equal(n, 1);
	dpdk_port_get_stats(p, &st);
	assert_int_equal(st.rx_pkts, 1);
	assert_int_equal(st.tx_pool_free, 0);
	assert_true(st.rx_pool_free > 0);
	while (nheld > 0)
		rte_pktmbuf_free(held[--nheld]);
	free(held);
	dpdk_port_close(p);
	unlink(in);
	unlink(out);
}

/* ---- lcore ids for the threads that work a port ---------------------------------------- */
/* Workers wait here, each holding its id, until all n have one: more threads then hold ids at
 * once than there are. A cancelled gate (a thread could not be created) sends them home. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned n, arrived;
	bool cancelled;
};

static void gate_init(struct gate *g, unsigned n)
{
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	g->n = n;
	g->arrived = 0;
	g->cancelled = false;
}

/* false: cancelled */
static bool gate_wait(struct gate *g)
{
	bool go;

	pthread_mutex_lock(&g->lock);
	if (++g->arrived == g->n)
		pthread_cond_broadcast(&g->cond);
	while (g->arrived < g->n && !g->cancelled)
		pthread_cond_wait(&g->cond, &g->lock);
	go = !g->cancelled;
	pthread_mutex_unlock(&g->lock);
	return go;
}

static void gate_cancel(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->cancelled = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

struct worker {
	struct dpdk_port *p;
	struct rte_mempool *pool;
	struct gate *gate;              /* NULL: no wait */
	unsigned id;                    /* its lcore id while it ran */
	unsigned cached;                /* mbufs in its cache when it ended */
	bool reused;                    /* a freed mbuf came back at the next alloc */
	bool alloc_ok;
};

/* Takes 40 mbufs, frees them and takes one back. */
static void worker_use_pool(struct worker *w)
{
	struct rte_mbuf *m[40], *last;
	unsigned n = 0;

	while (n < 40 && (m[n] = rte_pktmbuf_alloc(w->pool)) != NULL)
		n++;
	w->alloc_ok = n == 40;
	for (unsigned i = 0; i < n; i++)
		rte_pktmbuf_free(m[i]);
	if (!w->alloc_ok)
		return;
	last = m[n - 1];
	m[0] = rte_pktmbuf_alloc(w->pool);
	w->reused = m[0] != NULL && m[0] == last;
	rte_pktmbuf_free(m[0]);
	if (w->id != LCORE_ID_ANY)
		w->cached = rte_mempool_default_cache(w->pool, w->id)->len;
}

/* The workers use the pool one at a time. DPDK's multi-producer/consumer ring is not
 * preemptible: a thread preempted between moving a ring's head and its tail makes every
 * other thread on that ring spin until it runs again, and a hundred threads spinning on two
 * cores turned a second's work into minutes. They still hold their ids all at once. */
static pthread_mutex_t pool_turn = PTHREAD_MUTEX_INITIALIZER;

/* Takes the port's lock (which claims the id), then uses the pool in its turn. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;

	dpdk_port_lock(w->p);
	dpdk_port_unlock(w->p);
	w->id = rte_lcore_id();
	if (w->gate != NULL && !gate_wait(w->gate))
		return NULL;
	pthread_mutex_lock(&pool_turn);
	worker_use_pool(w);
	pthread_mutex_unlock(&pool_turn);
	return NULL;
}

/* Joins t[0..n) until deadline (CLOCK_REALTIME); returns how many are still running. */
static unsigned join_until(pthread_t *t, unsigned n, const struct timespec *deadline)
{
	unsigned late = 0;

	for (unsigned i = 0; i < n; i++)
		late += pthread_timedjoin_np(t[i], NULL, deadline) != 0;
	return late;
}

#define WORKERS_MAX_S 30

/* Runs n workers (through gate g when not NULL) and waits for them. Fails the test, never
 * hangs: when a thread cannot be created (the environment's memory or thread limit) the
 * gate sends the others home; workers still running after WORKERS_MAX_S are left to the
 * process's exit, with w and g, which the caller then must not free. */
static void run_workers(struct worker *w, unsigned n, struct gate *g)
{
	pthread_t *t = calloc(n, sizeof(*t));
	struct timespec deadline;
	unsigned made = 0, late;
	int rc = 0;

	assert_non_null(t);
	while (made < n && rc == 0) {
		w[made].gate = g;
		rc = pthread_create(&t[made], NULL, worker_main, &w[made]);
		made += rc == 0;
	}
	if (rc != 0 && g != NULL)
		gate_cancel(g);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += WORKERS_MAX_S;
	late = join_until(t, made, &deadline);
	free(t);
	if (rc != 0)
		fail_msg("worker %u of %u: pthread_create: %s (memory or thread limit)", made + 1,
			 n, strerror(rc));
	if (late > 0)
		fail_msg("%u of %u workers still running after %d s", late, n, WORKERS_MAX_S);
}

/* A thread that takes the lock gets an lcore id and a cache: the mbuf it freed last comes
 * back first (without one the pool's ring is first in first out: another mbuf). At its exit
 * the cache is flushed and the id released. With more threads than ids, the rest work
 * without caches. The poll thread holds one id while it runs; EAL's own thread keeps its. */
static void test_lcore_caches(void **state)
{
	struct dpdk_cfg c;
	struct dpdk_port *p;
	struct worker w = { 0 };
	unsigned held0, refused0, held, refused;
	char err[512];

	(void)state;
	mk_cfg(&c, "");
	if (dpdk_port_open(&c, &p, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	w.p = p;
	w.pool = net_if_pool(tcp_stack_netif(dpdk_port_stack(p)));
	dpdk_lcore_counts(&held0, &refused0);
	/* this thread ran rte_eal_init: its own id, not claimed, not released */
	assert_true(dpdk_lcore_claim());
	assert_int_equal(rte_lcore_id(), rte_get_main_lcore());
	dpdk_lcore_release();
	assert_int_equal(rte_lcore_id(), rte_get_main_lcore());

	run_workers(&w, 1, NULL);
	assert_int_not_equal(w.id, LCORE_ID_ANY);
	assert_true(w.alloc_ok);
	assert_true(w.reused);
	assert_true(w.cached > 0);
	assert_int_equal(rte_mempool_default_cache(w.pool, w.id)->len, 0); /* flushed */
	assert_false(rte_lcore_has_role(w.id, ROLE_NON_EAL));             /* released */
	dpdk_lcore_counts(&held, &refused);
	assert_int_equal(held, held0);

	/* the poll thread: one id while it runs */
	assert_int_equal(dpdk_port_start(p), 0);
	for (int i = 0; i < 200 && held == held0; i++) {
		sleep_ms(5);
		dpdk_lcore_counts(&held, NULL);
	}
	assert_int_equal(held, held0 + 1);
	dpdk_port_stop(p);
	dpdk_lcore_counts(&held, NULL);
	assert_int_equal(held, held0);

	/* More threads at once than there are ids. Each thread with an id keeps up to its cache
	 * plus the 40 it takes: with the port's pool (cache 256) that is more than the pool, and a
	 * thread that finds it empty would fail for want of mbufs, not ids. A pool whose caches
	 * all fit at once (release flushes every pool's caches, this one's too). */
	enum { N = RTE_MAX_LCORE + 8, MANY_CACHE = 16, MANY_MBUFS = N * (MANY_CACHE + 41) };
	struct rte_mempool *mp = rte_pktmbuf_pool_create("t_many", MANY_MBUFS, MANY_CACHE, 0,
							  64, SOCKET_ID_ANY);
	struct worker *many = calloc(N, sizeof(*many));
	struct gate *g = calloc(1, sizeof(*g));
	unsigned with = 0;

	if (mp == NULL)
		fail_msg("pool t_many: %s", rte_strerror(rte_errno));
	assert_non_null(many);
	assert_non_null(g);
	gate_init(g, N);
	for (unsigned i = 0; i < N; i++)
		many[i] = (struct worker){ .p = p, .pool = mp };
	run_workers(many, N, g);
	free(g);
	for (unsigned i = 0; i < N; i++) {
		assert_true(many[i].alloc_ok);
		with += many[i].id != LCORE_ID_ANY;
	}
	dpdk_lcore_counts(&held, &refused);
	assert_true(with < RTE_MAX_LCORE);
	assert_int_equal(refused - refused0, N - with);
	assert_int_equal(held, held0);
	assert_int_equal(rte_mempool_avail_count(mp), MANY_MBUFS); /* every cache flushed */
	rte_mempool_free(mp);
	free(many);
	/* every id is free again */
	run_workers(&w, 1, NULL);
	assert_int_not_equal(w.id, LCORE_ID_ANY);
	dpdk_port_close(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_hugepages),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_inline_and_capture),
		cmocka_unit_test(test_thread),
		cmocka_unit_test(test_rx_pool_when_tx_exhausted),
		cmocka_unit_test(test_lcore_caches),
	};

	snprintf(pcap_path, sizeof(pcap_path), "/tmp/srn-port-%d.pcap", (int)getpid());
	return cmocka_run_group_tests(tests, NULL, NULL);
}
