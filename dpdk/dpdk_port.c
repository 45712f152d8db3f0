/* A DPDK port carrying softrnic's TCP/IP engine (dpdk_port.h): the ethdev (1 rx / 1 tx queue,
 * its two mbuf pools, offloads, the link), the stack over it, and the process-wide registry
 * that lets two opens of one configuration share the port. EAL start-up is dpdk_eal.c, the
 * poll pass and thread dpdk_poll.c.
 *
 * Port life: open (EAL once, hot-plug the --vdev again after an earlier close, configure,
 * start, create the stack) -> [start thread / inline polls] -> last close (stop thread,
 * destroy stack, stop + close the ethdev, unplug the vdev, free the pools). */
#include "dpdk_port_int.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dpdk_port *g_ports;
static unsigned g_pool_seq;

/* ---- the ethdev ------------------------------------------------------------------------------ */

/* What usually keeps a virtual device from probing. */
static const char *vdev_hint(const char *eal)
{
	if (strstr(eal, "net_af_packet") != NULL)
		return "; af_packet: the interface must exist in this network namespace and "
		       "opening it needs root (CAP_NET_RAW)";
	if (strstr(eal, "net_memif") != NULL)
		return "; memif: the socket's directory must exist, and a server's socket path "
		       "must not be in use";
	if (strstr(eal, "net_pcap") != NULL)
		return "; pcap: the rx_pcap file must exist and be readable";
	return "";
}

static int port_find(const struct dpdk_cfg *cfg, uint16_t *pid, char *err, size_t errlen)
{
	char *end, list[256] = "";
	unsigned long n = strtoul(cfg->port, &end, 10);
	uint16_t p;
	size_t off = 0;

	if (end != cfg->port && *end == '\0' && n < RTE_MAX_ETHPORTS &&
	    rte_eth_dev_is_valid_port((uint16_t)n)) {
		*pid = (uint16_t)n;
		return 0;
	}
	if ((end == cfg->port || *end != '\0') &&
	    rte_eth_dev_get_port_by_name(cfg->port, pid) == 0)
		return 0;
	RTE_ETH_FOREACH_DEV(p) {
		char nm[RTE_ETH_NAME_MAX_LEN];

		if (rte_eth_dev_get_name_by_port(p, nm) == 0 && off < sizeof(list))
			off += (size_t)snprintf(list + off, sizeof(list) - off, " %u=%s", p, nm);
	}
	snprintf(err, errlen, "key 'port': no DPDK port '%s' (ports:%s); give the device with "
		 "--vdev in key 'eal' (a --vdev that failed to probe leaves no port: see EAL's "
		 "messages)%s", cfg->port, off != 0 ? list : " none", vdev_hint(cfg->eal));
	return -ENODEV;
}

static struct rte_mempool *pool_make(struct dpdk_port *p, const char *kind, uint32_t n)
{
	char nm[RTE_MEMPOOL_NAMESIZE];

	snprintf(nm, sizeof(nm), "srn_%s%u_%u", kind, p->pid, g_pool_seq++);
	return dpdk_pool_make(nm, n, dpdk_pool_room(p->cfg.mtu),
			      rte_eth_dev_socket_id(p->pid)); /* -1: any socket */
}

/* Two pools, so that data queued for sending (which may hold every transmit mbuf until it
 * is acknowledged) can never keep the port from receiving those acknowledgements. */
static int port_pool(struct dpdk_port *p, char *err, size_t errlen)
{
	p->pool = pool_make(p, "rx", p->cfg.nb_mbufs);
	if (p->pool == NULL) {
		snprintf(err, errlen, "receive mbuf pool of %u mbufs: %s (key 'mbufs'; or give EAL "
			 "more memory: -m in key 'eal')", p->cfg.nb_mbufs, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	p->tx_pool = pool_make(p, "tx", p->cfg.nb_tx_mbufs);
	if (p->tx_pool == NULL) {
		snprintf(err, errlen, "transmit mbuf pool of %u mbufs: %s (key 'tx_mbufs'; or give "
			 "EAL more memory: -m in key 'eal')", p->cfg.nb_tx_mbufs,
			 rte_strerror(rte_errno));
		return -ENOMEM;
	}
	return 0;
}

static int port_fail(char *err, size_t errlen, const char *what, int rc, const char *name)
{
	snprintf(err, errlen, "port %s: %s: %s", name, what, rte_strerror(-rc));
	return rc < 0 ? rc : -EIO;
}


/* Key memif_csum = off: two processes on one host share the memif ring, so nothing on the
 * way can corrupt a frame; like Linux on loopback, the stack then neither computes the TCP
 * checksum on transmit (it leaves the pseudo-header's sum, as for an offload, and the frame
 * carries that) nor checks it on receive. Both ends must say so: a peer that checks would
 * drop every segment. The IPv4 header's checksum is still made and checked (20 octets).
 * MPA's CRC32c, when negotiated, still covers the RDMA payload end to end. memif only. */
static void port_csum_trust(struct dpdk_port *p, const struct rte_eth_dev_info *di,
			    struct net_if_cfg *nc)
{
	if (!p->cfg.memif_csum_off)
		return;
	if (!dpdk_port_is_memif(di)) {
		fprintf(stderr, "softrnic: port %s: memif_csum = off is for memif ports only; "
			"driver %s keeps TCP checksums\n", p->name,
			di->driver_name ? di->driver_name : "?");
		return;
	}
	p->csum_trust = true;
	nc->tx_tcp_cksum = true;
	nc->rx_cksum = true;  /* the L4 flag below; the IPv4 flag stays unknown: checked */
	p->tx_prepare = nc->tx_ip_cksum; /* memif has no tx_prepare for the TCP sum */
}

/* Offloads: use what the port offers; tell the stack through its net_if_cfg. */
static void port_offloads(struct dpdk_port *p, const struct rte_eth_dev_info *di,
			  struct rte_eth_conf *conf, struct net_if_cfg *nc)
{
	const uint64_t rx_ck = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM;

	if (di->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) {
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
		p->multi_seg = true;
	}
	if (di->tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) {
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
		nc->tx_ip_cksum = true;
	}
	if (di->tx_offload_capa & RTE_ETH_TX_OFFLOAD_TCP_CKSUM) {
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
		nc->tx_tcp_cksum = true;
	}
	if ((di->rx_offload_capa & rx_ck) == rx_ck) {
		conf->rxmode.offloads |= rx_ck;
		nc->rx_cksum = true;
	}
	p->tx_prepare = nc->tx_ip_cksum || nc->tx_tcp_cksum;
	port_csum_trust(p, di, nc);
}

static int port_mtu_mac(struct dpdk_port *p, struct net_if_cfg *nc, char *err, size_t el)
{
	struct rte_ether_addr ea;
	int rc = rte_eth_dev_set_mtu(p->pid, p->cfg.mtu);

	/* "When the PMD allows": virtual ports often cannot change it (af_packet in 22.11
	 * reports a 1518-octet maximum whatever its framesz) yet pass larger frames when the
	 * device under them does; the stack keeps our MTU, the user is told. */
	if (rc != 0 && rc != -ENOTSUP && p->cfg.mtu != 1500)
		fprintf(stderr, "softrnic: port %s: the PMD refuses MTU %u (%s); sending frames "
			"of up to %u octets anyway: make sure the device passes them (key 'mtu')\n",
			p->name, p->cfg.mtu, rte_strerror(-rc), p->cfg.mtu + RTE_ETHER_HDR_LEN);
	if (p->cfg.mac_set) {
		memcpy(ea.addr_bytes, p->cfg.mac, 6);
		rc = rte_eth_dev_default_mac_addr_set(p->pid, &ea);
		(void)rc; /* af_packet / memif: the port still passes our MAC's frames */
		memcpy(nc->mac, p->cfg.mac, 6);
	} else {
		rc = rte_eth_macaddr_get(p->pid, &ea);
		if (rc != 0)
			return port_fail(err, el, "MAC address", rc, p->name);
		/* net_ring has none (all zero): a random locally administered one. */
		if (!rte_is_valid_assigned_ether_addr(&ea)) {
			rte_eth_random_addr(ea.addr_bytes);
			rte_eth_dev_default_mac_addr_set(p->pid, &ea);
		}
		memcpy(nc->mac, ea.addr_bytes, 6);
	}
	return 0;
}

#define PORT_LINK_LOOK_NS 250000000ull  /* a link that is down is looked at this often */
/* A memif client's start that reached its server is not restarted for this long, doubling
 * up to PORT_LINK_SETTLE_MAX_NS while the link stays down. DPDK 22.11's memif server takes
 * a connection in its EAL interrupt thread, registers it, then sends hello; when the client
 * has closed it by then (a restart), the send fails and memif_listener_handler closes the fd
 * without unregistering it, and EAL's interrupt thread panics on the closed fd ("Error
 * adding fd N epoll_ctl"). On a loaded machine that thread can be slow to accept, and a
 * client that restarts before the accept would crash a server without the guard of
 * dpdk_memif_guard.h (docs/dpdk.md, D163, D279). */
#define PORT_LINK_SETTLE_NS 1000000000ull
#define PORT_LINK_SETTLE_MAX_NS 4000000000ull

static bool port_link_get(struct dpdk_port *p)
{
	struct rte_eth_link l;

	memset(&l, 0, sizeof(l));
	if (rte_eth_link_get_nowait(p->pid, &l) != 0)
		return true; /* unknown: treat as up */
	return l.link_status == RTE_ETH_LINK_UP;
}

/* The next look after a memif client's start: soon when it failed (no server socket, no
 * connection made), after the settle time when it connected. */
static void port_link_next(struct dpdk_port *p, uint64_t now)
{
	if (!p->started) {
		p->link_settle_ns = 0;
		p->link_look_ns = now + PORT_LINK_LOOK_NS;
		return;
	}
	p->link_settle_ns = p->link_settle_ns == 0 ? PORT_LINK_SETTLE_NS
			    : p->link_settle_ns * 2 > PORT_LINK_SETTLE_MAX_NS ? PORT_LINK_SETTLE_MAX_NS
									      : p->link_settle_ns * 2;
	p->link_look_ns = now + p->link_settle_ns;
}

/* A memif client connects once, at start: a server whose socket exists but whose interface
 * is not started yet answers "ID not found" and DPDK's client gives up for good (both
 * processes starting at once, or the server restarting). So a memif client whose link is
 * down restarts its device, which connects again: PORT_LINK_LOOK_NS after a start that
 * failed, the settle time after one that connected. Lock held (or the port not running
 * yet). */
void dpdk_port_link_watch(struct dpdk_port *p, uint64_t now)
{
	if (now < p->link_look_ns)
		return;
	p->link_look_ns = now + PORT_LINK_LOOK_NS;
	p->link_up = port_link_get(p);
	if (p->link_up)
		p->link_settle_ns = 0;
	if (p->link_up || !p->memif_client)
		return;
	p->st.link_restarts++;
	if (p->started && rte_eth_dev_stop(p->pid) != 0)
		return;
	/* the server's socket is abstract by default (no file to look for first): a start that
	 * finds none fails and would log so four times a second */
	int lt = rte_log_register("pmd.net.memif"), level = lt >= 0 ? rte_log_get_level(lt) : -1;
	if (level >= 0)
		rte_log_set_level((uint32_t)lt, RTE_LOG_CRIT);
	p->started = rte_eth_dev_start(p->pid) == 0;
	if (level >= 0)
		rte_log_set_level((uint32_t)lt, (uint32_t)level);
	port_link_next(p, now);
}

/* memif has no link until its peer connects, af_packet follows the interface: a SYN sent
 * before that is lost and costs the engine a 1 s RTO. Wait up to link_wait_ms, polling every
 * millisecond (ring and pcap are up at once); still down is no error, the peer may come
 * later. A memif server waits only when link_wait_ms is given: its client is another process
 * that usually starts after it, so the wait would only hold back the server's listener
 * (D161). A PMD that cannot tell is not waited for. */
static void port_link_wait(struct dpdk_port *p)
{
	uint32_t wait_ms = dpdk_cfg_link_wait_ms(&p->cfg, p->memif_server);
	uint64_t end = dpdk_port_now_ns() + (uint64_t)wait_ms * 1000000u, now;
	struct timespec ms = { .tv_sec = 0, .tv_nsec = 1000000L };

	if (p->memif_client)
		port_link_next(p, dpdk_port_now_ns()); /* the first connect's time */
	else
		p->link_look_ns = dpdk_port_now_ns() + PORT_LINK_LOOK_NS;
	for (;;) {
		now = dpdk_port_now_ns();
		dpdk_port_link_watch(p, now);
		p->link_up = port_link_get(p);
		if (p->link_up || now >= end)
			return;
		nanosleep(&ms, NULL);
	}
}

bool dpdk_port_is_memif(const struct rte_eth_dev_info *di)
{
	return di->driver_name != NULL && strcmp(di->driver_name, "net_memif") == 0;
}

static const char *port_devargs(const struct rte_eth_dev_info *di)
{
	const struct rte_devargs *da = di->device ? rte_dev_devargs(di->device) : NULL;

	return da != NULL && da->args != NULL ? da->args : "";
}

/* Drivers whose transmit copies every frame out of its mbufs and frees them before the
 * burst returns (memif in copy mode, af_packet): the only ones whose frames may reference a
 * caller's memory. A NIC would DMA from it (not mapped for the device) and free the mbufs
 * later; net_ring hands the mbufs themselves to the other end, which may keep them. */
static bool port_tx_copies(const struct rte_eth_dev_info *di)
{
	if (di->driver_name == NULL)
		return false;
	if (dpdk_port_is_memif(di))
		return strstr(port_devargs(di), "zero-copy=yes") == NULL;
	return strcmp(di->driver_name, "net_af_packet") == 0;
}

/* Key tx_refs asks for zero-copy transmit; the driver decides whether it may have it. */
static void port_tx_refs(struct dpdk_port *p, const struct rte_eth_dev_info *di)
{
	p->tx_refs = p->cfg.tx_refs && p->multi_seg && port_tx_copies(di);
	if (p->cfg.tx_refs && !p->tx_refs)
		fprintf(stderr, "softrnic: port %s: tx_refs: driver %s does not copy frames at "
			"transmit (or takes no mbuf chains); payload is copied\n", p->name,
			di->driver_name ? di->driver_name : "?");
}

bool dpdk_port_tx_refs(const struct dpdk_port *p)
{
	return p->tx_refs;
}

void dpdk_port_conn_setup(const struct dpdk_port *p, struct tcp_conn *c)
{
	(void)tcp_conn_set_keepalive(c, p->cfg.ka_idle_s, p->cfg.ka_intvl_s, p->cfg.ka_probes);
}

/* memif must carry every frame in one buffer (dpdk_memif.h). */
/* A memif server's listener gets the guard (dpdk_memif_guard.h); without it the port runs as
 * before, and says so. */
static void port_memif_guard(struct dpdk_port *p, const struct rte_eth_dev_info *di)
{
	char path[108];

	if (!p->memif_server || p->memif_guard != NULL ||
	    dpdk_memif_socket(port_devargs(di), path, sizeof(path)) == 0)
		return;
	p->memif_guard = dpdk_memif_guard_arm(path);
	if (p->memif_guard == NULL)
		fprintf(stderr, "softrnic: port %s: no guard on memif socket %s: a client that "
			"leaves before the server's hello crashes DPDK 22.11 (docs/dpdk.md)\n",
			p->name, path);
}

static int port_memif_check(struct dpdk_port *p, const struct rte_eth_dev_info *di,
			    char *err, size_t el)
{
	unsigned bsize = dpdk_memif_bsize(port_devargs(di));
	unsigned frame = dpdk_memif_frame(p->cfg.mtu);

	if (bsize >= frame)
		return 0;
	snprintf(err, el, "port %s: memif buffers of %u octets (bsize) cannot hold a frame of "
		 "MTU %u (%u octets), and DPDK's memif corrupts frames chained over buffers: "
		 "give bsize=%u or more in the --vdev arguments, or leave bsize out", p->name,
		 bsize, p->cfg.mtu, frame, frame);
	return -EINVAL;
}

static int port_setup(struct dpdk_port *p, struct net_if_cfg *nc, char *err, size_t el)
{
	struct rte_eth_dev_info di;
	struct rte_eth_conf conf;
	uint16_t nrx = DPDK_RING, ntx = DPDK_RING;
	int sock = rte_eth_dev_socket_id(p->pid), rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(p->pid, &di);
	if (rc != 0)
		return port_fail(err, el, "device info", rc, p->name);
	if (dpdk_port_is_memif(&di)) {
		rc = port_memif_check(p, &di, err, el);
		if (rc != 0)
			return rc;
		p->memif_client = dpdk_memif_is_client(port_devargs(&di));
		p->memif_server = !p->memif_client;
		p->guarded = dpdk_fault_install() == 0;
		port_memif_guard(p, &di);
	}
	port_offloads(p, &di, &conf, nc);
	port_tx_refs(p, &di);
	rc = rte_eth_dev_configure(p->pid, 1, 1, &conf);
	if (rc != 0)
		return port_fail(err, el, "configure (1 rx, 1 tx queue)", rc, p->name);
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(p->pid, &nrx, &ntx);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(p->pid, 0, nrx, sock < 0 ? 0 : (unsigned)sock, NULL,
					    p->pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(p->pid, 0, ntx, sock < 0 ? 0 : (unsigned)sock, NULL);
	if (rc != 0)
		return port_fail(err, el, "queue setup", rc, p->name);
	rc = port_mtu_mac(p, nc, err, el);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_start(p->pid);
	/* a memif client's start fails while its server has no socket yet: down link, which
	 * dpdk_port_link_watch brings up once the server is there (its rx/tx do nothing until then) */
	if (rc != 0 && !p->memif_client)
		return port_fail(err, el, "start", rc, p->name);
	p->started = rc == 0;
	rte_eth_promiscuous_disable(p->pid); /* not every PMD has the notion */
	if (p->started)
		rte_eth_dev_set_link_up(p->pid);
	port_link_wait(p);
	return 0;
}

/* ---- open / close ------------------------------------------------------------------------- */

static int port_stack(struct dpdk_port *p, struct net_if_cfg *nc, char *err, size_t el)
{
	struct tcp_stack_cfg sc;
	int rc;

	tcp_stack_cfg_default(&sc);
	nc->ip = p->cfg.ip;
	nc->prefix_len = p->cfg.prefix_len;
	nc->gateway = p->cfg.gateway;
	nc->mtu = p->cfg.mtu;
	nc->pool = p->tx_pool;
	nc->tx = dpdk_port_tx;
	nc->tx_arg = p;
	sc.nif = *nc;
	sc.snd_buf = p->cfg.snd_buf;
	sc.rcv_buf = p->cfg.rcv_buf;
	sc.cc = p->cfg.cc;
	sc.max_conns = p->cfg.max_conns;
	sc.orphan_retries = p->cfg.orphan_retries;
	sc.fin_timeout_ms = p->cfg.fin_timeout_s * 1000;
	sc.clock_ns = dpdk_clock_cb;
	rc = tcp_stack_create(&sc, &p->stack);
	if (rc != 0)
		snprintf(err, el, "port %s: TCP stack: %s (keys ip, gw, mtu, mac)", p->name,
			 strerror(-rc));
	return rc;
}

static void port_free(struct dpdk_port *p)
{
	dpdk_stats_close(p);
	dpdk_memif_guard_disarm(p->memif_guard); /* before memif closes its listener */
	if (p->stack != NULL) {
		pthread_mutex_lock(&p->lock);
		tcp_stack_destroy(p->stack);
		pthread_mutex_unlock(&p->lock);
	}
	if (p->started)
		rte_eth_dev_stop(p->pid);
	if (p->name[0] != '\0') {
		rte_eth_dev_close(p->pid);
		/* A vdev goes too, so a later open can plug it again (vdev_replug). */
		rte_eal_hotplug_remove("vdev", p->name);
	}
	rte_mempool_free(p->pool);
	rte_mempool_free(p->tx_pool);
	dpdk_pcap_close(p->pcap);
	if (p->efd >= 0)
		close(p->efd);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static struct dpdk_port *port_alloc(const struct dpdk_cfg *cfg)
{
	struct dpdk_port *p = calloc(1, sizeof(*p));
	pthread_mutexattr_t ma;

	if (p == NULL)
		return NULL;
	p->cfg = *cfg;
	if (p->cfg.mtu == 0)
		p->cfg.mtu = 1500;
	if (p->cfg.nb_mbufs == 0)
		p->cfg.nb_mbufs = dpdk_pool_rx_default(p->cfg.mtu);
	if (p->cfg.nb_tx_mbufs == 0)
		p->cfg.nb_tx_mbufs = dpdk_pool_tx_default(p->cfg.mtu);
	if (p->cfg.nap_us == 0)
		p->cfg.nap_us = DPDK_NAP_US_DEFAULT;
	p->refs = 1;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&p->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	p->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->efd < 0) {
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	return p;
}

static int port_build(struct dpdk_port *p, char *err, size_t el)
{
	struct net_if_cfg nc;
	int rc;

	memset(&nc, 0, sizeof(nc));
	rc = port_find(&p->cfg, &p->pid, err, el);
	if (rc != 0)
		return rc;
	rte_eth_dev_get_name_by_port(p->pid, p->name);
	if (p->cfg.pcap[0] != '\0' &&
	    (rc = dpdk_pcap_open(p->cfg.pcap, &p->pcap, err, el)) != 0)
		return rc;
	rc = port_pool(p, err, el);
	if (rc == 0)
		rc = port_setup(p, &nc, err, el);
	if (rc != 0)
		return rc;
	rc = port_stack(p, &nc, err, el);
	if (rc == 0)
		dpdk_stats_open(p);
	return rc;
}

static struct dpdk_port *port_shared(const struct dpdk_cfg *cfg, char *err, size_t el)
{
	for (struct dpdk_port *p = g_ports; p != NULL; p = p->next) {
		if (strcmp(p->cfg.port, cfg->port) != 0)
			continue;
		if (p->cfg.ip != cfg->ip || p->cfg.prefix_len != cfg->prefix_len ||
		    p->cfg.gateway != cfg->gateway || p->cfg.mac_set != cfg->mac_set ||
		    (cfg->mac_set && memcmp(p->cfg.mac, cfg->mac, 6) != 0)) {
			snprintf(err, el, "port %s is already open with another ip/gw/mac", p->name);
			return NULL;
		}
		return p;
	}
	return NULL;
}

int dpdk_port_open(const struct dpdk_cfg *cfg, struct dpdk_port **out, char *err,
		      size_t errlen)
{
	struct dpdk_port *p;
	char dummy[8];
	int rc;

	if (err == NULL || errlen == 0) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (cfg == NULL || out == NULL || dpdk_cfg_check(cfg, err, errlen) != 0)
		return -EINVAL;
	pthread_mutex_lock(&g_lock);
	p = port_shared(cfg, err, errlen);
	if (p != NULL || err[0] != '\0') {
		if (p != NULL)
			p->refs++;
		pthread_mutex_unlock(&g_lock);
		*out = p;
		return p != NULL ? 0 : -EBUSY;
	}
	rc = dpdk_eal_once(cfg, err, errlen);
	p = rc == 0 ? port_alloc(cfg) : NULL;
	if (rc == 0 && p == NULL) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
	}
	if (rc == 0 && (rc = port_build(p, err, errlen)) != 0) {
		port_free(p);
		p = NULL;
	}
	if (p != NULL) {
		p->next = g_ports;
		g_ports = p;
	}
	pthread_mutex_unlock(&g_lock);
	*out = p;
	return rc;
}

void dpdk_port_close(struct dpdk_port *p)
{
	struct dpdk_port **pp;

	if (p == NULL)
		return;
	pthread_mutex_lock(&g_lock);
	if (--p->refs > 0) {
		pthread_mutex_unlock(&g_lock);
		return;
	}
	for (pp = &g_ports; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	dpdk_port_stop(p);
	port_free(p);
	pthread_mutex_unlock(&g_lock);
}

struct tcp_stack *dpdk_port_stack(struct dpdk_port *p)
{
	return p->stack;
}

void dpdk_port_get_stats(struct dpdk_port *p, struct dpdk_port_stats *st)
{
	struct rte_eth_stats es;

	pthread_mutex_lock(&p->lock);
	*st = p->st;
	st->pcap_frames = dpdk_pcap_count(p->pcap);
	st->link_up = p->link_up;
	st->burst_faults = dpdk_fault_count();
	pthread_mutex_unlock(&p->lock);
	if (rte_eth_stats_get(p->pid, &es) == 0) {
		st->eth_ipackets = es.ipackets;
		st->eth_opackets = es.opackets;
		st->eth_ierrors = es.ierrors;
		st->eth_oerrors = es.oerrors;
		st->eth_imissed = es.imissed;
	}
	st->rx_pool_size = p->pool->size;
	st->rx_pool_free = rte_mempool_avail_count(p->pool);
	st->tx_pool_size = p->tx_pool->size;
	st->tx_pool_free = rte_mempool_avail_count(p->tx_pool);
}
