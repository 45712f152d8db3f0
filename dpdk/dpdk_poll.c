/* Driving a DPDK port (dpdk_port.h): the transmit path, one poll pass (receive a burst,
 * input, timers, transmit), the passes other threads run while they hold the port, and the
 * poll thread (spin while busy, nap when idle, back off while another driver holds it). */
#include "dpdk_port_int.h"

/* ---- transmit and the poll pass --------------------------------------------------------------- */

/* A port without MULTI_SEGS gets chains copied into one mbuf. NULL when out of mbufs. */
static struct rte_mbuf *tx_linear(struct dpdk_port *p, struct rte_mbuf *m)
{
	struct rte_mbuf *c;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	char *d;

	if (m->nb_segs == 1)
		return m;
	c = rte_pktmbuf_alloc(p->tx_pool);
	if (c == NULL)
		return NULL;
	d = rte_pktmbuf_append(c, (uint16_t)len);
	if (d == NULL || len > UINT16_MAX) {
		rte_pktmbuf_free(c);
		return NULL;
	}
	rte_pktmbuf_read(m, 0, len, d); /* a chain: copies into d */
	/* The checksum offload requests and header lengths travel with the frame. */
	c->ol_flags = m->ol_flags;
	c->tx_offload = m->tx_offload;
	rte_pktmbuf_free(m);
	return c;
}

static uint16_t rx0(uint16_t pid, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(pid, 0, pkts, n);
}

static uint16_t tx0(uint16_t pid, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_tx_burst(pid, 0, pkts, n);
}

/* A burst cut short by the peer's disconnect (dpdk_fault.h) received nothing, and counts
 * as having sent everything: the PMD may have freed some of those mbufs already, so the
 * caller must not free them again (the others leak, one burst's worth). */
static uint16_t port_rx_burst(struct dpdk_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	return p->guarded ? dpdk_fault_burst(rx0, p->pid, pkts, n, 0) : rx0(p->pid, pkts, n);
}

static uint16_t port_tx_burst(struct dpdk_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	return p->guarded ? dpdk_fault_burst(tx0, p->pid, pkts, n, n) : tx0(p->pid, pkts, n);
}

uint16_t dpdk_port_tx(void *arg, struct rte_mbuf **pkts, uint16_t n)
{
	struct dpdk_port *p = arg;
	uint64_t bytes[DPDK_BURST * 2];
	uint16_t ok = n, sent = 0;
	unsigned tries = 0;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = p->multi_seg ? pkts[i] : tx_linear(p, pkts[i]);

		if (m == NULL) {
			ok = i; /* the rest (this one included) are freed by net */
			break;
		}
		pkts[i] = m;
		if (i < RTE_DIM(bytes))
			bytes[i] = rte_pktmbuf_pkt_len(m);
		if (p->pcap != NULL)
			dpdk_pcap_frame(p->pcap, m);
	}
	if (!p->started)
		ok = 0; /* a memif client waiting for its server (dpdk_port_link_watch): a down link */
	if (p->tx_prepare && ok > 0)
		ok = rte_eth_tx_prepare(p->pid, 0, pkts, ok);
	while (sent < ok && tries++ < DPDK_TX_TRIES)
		sent += port_tx_burst(p, pkts + sent, (uint16_t)(ok - sent));
	for (uint16_t i = 0; i < sent && i < RTE_DIM(bytes); i++)
		p->st.tx_bytes += bytes[i];
	p->st.tx_pkts += sent;
	p->st.tx_full_drops += (uint64_t)(n - sent);
	return sent;
}

/* One pass; the lock is held. One clock read serves the whole pass (the stack's clock is the
 * port's, dpdk_clock_cb). */
static int port_pass(struct dpdk_port *p, uint64_t *next_ns)
{
	struct rte_mbuf *pkts[DPDK_BURST];
	uint16_t n = p->started ? port_rx_burst(p, pkts, DPDK_BURST) : 0;
	uint64_t nx;

	tcp_stack_clock_hold(p->stack);
	p->st.polls++;
	if (n > 0) {
		p->st.rx_bursts++;
		p->st.rx_pkts += n;
		for (uint16_t i = 0; i < n; i++) {
			if (p->csum_trust)
				pkts[i]->ol_flags = (pkts[i]->ol_flags & ~RTE_MBUF_F_RX_L4_CKSUM_MASK) |
						    RTE_MBUF_F_RX_L4_CKSUM_GOOD;
			p->st.rx_bytes += rte_pktmbuf_pkt_len(pkts[i]);
			if (p->pcap != NULL)
				dpdk_pcap_frame(p->pcap, pkts[i]);
		}
		tcp_stack_input(p->stack, pkts, n);
	}
	nx = tcp_stack_poll(p->stack);
	if (!p->link_up || p->memif_client)
		dpdk_port_link_watch(p, tcp_stack_now_ns(p->stack));
	dpdk_pool_watch(p, tcp_stack_now_ns(p->stack));
	dpdk_stats_publish(p, tcp_stack_now_ns(p->stack));
	if (p->pass_fn != NULL)
		p->pass_fn(p->pass_arg);
	tcp_stack_clock_release(p->stack);
	if (next_ns != NULL)
		*next_ns = nx;
	return n;
}

int dpdk_port_pass_locked(struct dpdk_port *p, unsigned hold_us, enum dpdk_driver who)
{
	_Atomic uint64_t *h = &p->hold_until[who];
	uint64_t until;
	int n;

	tcp_stack_clock_hold(p->stack);   /* the pass's clock read serves the hold too */
	until = tcp_stack_now_ns(p->stack) + (uint64_t)hold_us * 1000u;
	/* a store at most every 10 us: the poll thread reads this line on every loop */
	if (until > atomic_load_explicit(h, memory_order_relaxed) + 10000u)
		atomic_store_explicit(h, until, memory_order_relaxed);
	p->st.ext_passes++;
	n = port_pass(p, NULL);
	tcp_stack_clock_release(p->stack);
	return n;
}

void dpdk_port_release(struct dpdk_port *p, enum dpdk_driver who)
{
	if (atomic_load_explicit(&p->hold_until[who], memory_order_relaxed) == 0)
		return;
	atomic_store_explicit(&p->hold_until[who], 0, memory_order_relaxed);
	for (int i = 0; i < DPDK_DRIVERS; i++)
		if (atomic_load_explicit(&p->hold_until[i], memory_order_relaxed) > dpdk_port_now_ns())
			return; /* still held by the other driver */
	dpdk_port_kick(p); /* wakes a thread sleeping out the hold */
}

bool dpdk_port_held_by(struct dpdk_port *p, enum dpdk_driver who)
{
	return atomic_load_explicit(&p->hold_until[who], memory_order_relaxed) > dpdk_port_now_ns();
}

int dpdk_port_set_pass_hook(struct dpdk_port *p, dpdk_pass_fn fn, void *arg)
{
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	if (fn == NULL && p->pass_arg == arg)
		p->pass_fn = NULL, p->pass_arg = NULL;
	else if (fn != NULL && p->pass_fn != NULL && p->pass_arg != arg)
		rc = -EBUSY;
	else if (fn != NULL)
		p->pass_fn = fn, p->pass_arg = arg;
	pthread_mutex_unlock(&p->lock);
	return rc;
}

int dpdk_port_poll(struct dpdk_port *p, uint64_t *next_ns)
{
	int n;

	if (p->running)
		return -EBUSY;
	pthread_mutex_lock(&p->lock);
	n = port_pass(p, next_ns);
	pthread_mutex_unlock(&p->lock);
	return n;
}

/* ---- the poll thread ------------------------------------------------------------------------ */

/* A sender that leaves the TCP checksum to an offload its link does not do (a memif peer with
 * memif_csum = off; Linux over a veth with tx checksumming on, which af_packet does not
 * report) sends segments whose checksum field holds only the pseudo-header's sum. We drop
 * them as bad, so no connection with that peer ever opens: say why, once, on stderr. Runs
 * before the poll thread sleeps (a try-lock: a consumer's pass goes first). */
static void port_tell_partial_csum(struct dpdk_port *p)
{
	struct tcp_stack_stats ts;
	struct rte_eth_dev_info di;

	if (p->csum_partial_told || pthread_mutex_trylock(&p->lock) != 0)
		return;
	tcp_stack_get_stats(p->stack, &ts);
	pthread_mutex_unlock(&p->lock);
	if (ts.in_csum_partial == 0)
		return;
	p->csum_partial_told = true;
	bool memif = rte_eth_dev_info_get(p->pid, &di) == 0 && dpdk_port_is_memif(&di);
	fprintf(stderr, "softrnic: port %s: dropping TCP segments whose checksum holds only the "
		"pseudo-header's sum (left to an offload): %s (docs/dpdk.md)\n", p->name,
		memif ? "the peer has memif_csum = off; set it on both ends or on neither" :
			"turn the sender's checksum offload off (a Linux veth: ethtool -K DEV tx off)");
}

/* Sleep up to ns, unless a kick came in since the last pass. */
static void port_sleep(struct dpdk_port *p, uint64_t ns)
{
	struct pollfd pfd = { .fd = p->efd, .events = POLLIN };
	struct timespec ts;
	uint64_t v;

	if (ns == 0)
		return;
	port_tell_partial_csum(p);
	atomic_store(&p->napping, true);
	if (!atomic_exchange(&p->kicked, false)) {
		ts.tv_sec = (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		if (ppoll(&pfd, 1, &ts, NULL) > 0 && read(p->efd, &v, sizeof(v)) < 0)
			v = 0;
	}
	atomic_store(&p->napping, false);
}

/* Sleep up to the nap or the next timer. */
static void port_nap(struct dpdk_port *p, uint64_t next_ns)
{
	uint64_t ns = (uint64_t)p->cfg.nap_us * 1000u;

	p->st.naps++;
	port_sleep(p, next_ns < ns ? next_ns : ns);
}

/* Consumers drive the port (dpdk_port_pass_locked): stay out of their way until the hold
 * ends - they run the passes and the timers - instead of taking the lock and a core from
 * them. true when the thread slept. */
static bool port_held(struct dpdk_port *p)
{
	uint64_t now = dpdk_port_now_ns(), until = 0;

	for (int i = 0; i < DPDK_DRIVERS; i++) {
		uint64_t u = atomic_load_explicit(&p->hold_until[i], memory_order_relaxed);
		until = u > until ? u : until;
	}

	if (now >= until)
		return false;
	p->st.holds++;
	port_sleep(p, until - now);
	return true;
}

/* An iteration that took this much longer than its own naps: the thread was off its core,
 * which another thread keeps busy without calling us - an application spinning on memory for
 * an RDMA Write to land (the ib_write_lat pattern; the kernel-socket engine has the same rule:
 * rn_progress.c engine_yield). Spinning then only makes each packet wait for the spinner's time
 * slice, so for PORT_NOSPIN_NS the thread naps after every idle pass: the wake-up from a nap
 * preempts the spinner. */
#define PORT_STALL_NS 300000ull
#define PORT_NOSPIN_NS 50000000ull
/* Stalls that come back as soon as a window ends double it, up to this: an application that
 * spins on memory for every message (ib_write_lat) would otherwise pay a few milliseconds
 * of time-slice waits every window, which dominates its typical latency. */
#define PORT_NOSPIN_MAX_NS 1600000000ull

static void *port_thread(void *arg)
{
	struct dpdk_port *p = arg;
	uint64_t idle_since = dpdk_port_now_ns(), next = 0, now, t0, slept, nospin_until = 0;
	uint64_t window = PORT_NOSPIN_NS;
	int n;

	dpdk_lcore_claim();
	/* A nap is a promise to look again after nap_us: the default 50 us timer slack would
	 * add as much again to every wake-up (and so to a packet's wait when no one spins). */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

	while (!atomic_load(&p->stop)) {
		if (port_held(p)) {
			idle_since = dpdk_port_now_ns(); /* spin a while after a hold, as after traffic */
			continue;
		}
		t0 = dpdk_port_now_ns();
		slept = 0;
		pthread_mutex_lock(&p->lock);
		n = port_pass(p, &next);
		pthread_mutex_unlock(&p->lock);
		now = dpdk_port_now_ns();
		/* Packets, or another thread's API calls, keep the thread spinning. */
		if (n > 0 || atomic_exchange(&p->touched, false) ||
		    atomic_exchange(&p->kicked, false)) {
			idle_since = now;
		} else if (now < nospin_until ||
			   now - idle_since >= (uint64_t)p->cfg.spin_us * 1000u) {
			port_nap(p, next);
			slept = dpdk_port_now_ns() - now;
		}
		/* A spinning holder starves lock waiters (mutexes are not fair). */
		if (atomic_load(&p->waiters) > 0)
			sched_yield();
		now = dpdk_port_now_ns();
		if (now - t0 - slept > PORT_STALL_NS && now >= nospin_until) {
			/* a spinner that is back right after a window is there to stay */
			if (now - nospin_until >= 2 * window)
				window = PORT_NOSPIN_NS;
			else if (window < PORT_NOSPIN_MAX_NS)
				window *= 2;
			nospin_until = now + window;
			p->st.nospins++;
		}
	}
	dpdk_lcore_release(); /* its cached mbufs back to the pools before they are freed */
	return NULL;
}

int dpdk_port_start(struct dpdk_port *p)
{
	int rc;

	if (p->running)
		return 0;
	atomic_store(&p->stop, false);
	rc = pthread_create(&p->thread, NULL, port_thread, p);
	if (rc != 0)
		return -rc;
	pthread_setname_np(p->thread, "srn-dpdk-poll");
	p->running = true;
	return 0;
}

void dpdk_port_stop(struct dpdk_port *p)
{
	if (!p->running)
		return;
	atomic_store(&p->stop, true);
	dpdk_port_kick(p);
	pthread_join(p->thread, NULL);
	p->running = false;
}

void dpdk_port_kick(struct dpdk_port *p)
{
	uint64_t one = 1;

	atomic_store(&p->kicked, true);
	if (atomic_load(&p->napping) && write(p->efd, &one, sizeof(one)) < 0)
		return; /* the counter is full: the thread wakes anyway */
}

void dpdk_port_lock(struct dpdk_port *p)
{
	dpdk_lcore_claim(); /* whoever works the port takes and returns its mbufs */
	atomic_fetch_add(&p->waiters, 1);
	pthread_mutex_lock(&p->lock);
	atomic_fetch_sub(&p->waiters, 1);
}

void dpdk_port_unlock(struct dpdk_port *p)
{
	/* a hint for the poll thread's nap; a consumer polling in a loop must not write the
	 * line (and order the store) on every pass */
	if (!atomic_load_explicit(&p->touched, memory_order_relaxed))
		atomic_store_explicit(&p->touched, true, memory_order_relaxed);
	pthread_mutex_unlock(&p->lock);
}
