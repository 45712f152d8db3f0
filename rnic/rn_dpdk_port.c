/* A DPDK port carrying softrnic's TCP/IP engine (rn_dpdk_port.h): EAL start-up, the ethdev
 * (1 rx / 1 tx queue, its two mbuf pools, offloads), the stack over it, the transmit path with
 * capture, the poll pass, the poll thread (spin while busy, nap when idle) and the
 * process-wide registry that lets two opens of one configuration share the port.
 *
 * Port life: open (EAL once, hot-plug the --vdev again after an earlier close, configure,
 * start, create the stack) -> [start thread / inline polls] -> last close (stop thread,
 * destroy stack, stop + close the ethdev, unplug the vdev, free the pools). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "rn_dpdk_clock.h"
#include "rn_dpdk_fault.h"
#include "rn_dpdk_lcore.h"
#include "rn_dpdk_memif.h"
#include "rn_dpdk_cfg_int.h"
#include "rn_dpdk_pcap.h"
#include "rn_dpdk_port.h"

#define RN_DPDK_BURST 32u
#define RN_DPDK_RING 1024u
/* Transmit attempts for one batch while the ring is full (memif's peer drains slowly). */
#define RN_DPDK_TX_TRIES 64u
#define RN_DPDK_MAX_ARGS 64

struct rn_dpdk_port {
	struct rn_dpdk_port *next;     /* registry */
	int refs;
	struct rn_dpdk_cfg cfg;
	uint16_t pid;
	char name[RTE_ETH_NAME_MAX_LEN];
	bool multi_seg;                /* the port takes mbuf chains */
	bool tx_refs;                  /* frames may reference caller memory (key tx_refs) */
	bool csum_trust;               /* memif_csum off: received TCP checksums are not checked */
	bool tx_prepare;               /* checksum offloads in use: rte_eth_tx_prepare */
	bool csum_partial_told;        /* port_tell_partial_csum spoke */
	struct rte_mempool *pool;      /* receive: only the rx queue takes from it */
	struct rte_mempool *tx_pool;   /* everything the stack allocates (net_if_cfg.pool) */
	bool link_up;                  /* at the last look (port_link_watch) */
	bool memif_client;             /* the link is ours to bring up again (port_link_watch) */
	bool guarded;                  /* memif: bursts under rn_dpdk_fault (peer disconnect) */
	uint64_t link_look_ns;         /* next look at the link */
	uint64_t link_settle_ns;       /* memif client: a connected start's grace (port_link_next) */
	struct tcp_stack *stack;
	struct rn_dpdk_pcap *pcap;
	pthread_mutex_t lock;          /* recursive: callbacks may take it again */
	pthread_t thread;
	bool started;                  /* rte_eth_dev_start done */
	bool running;
	atomic_bool stop, napping, kicked, touched;
	atomic_int waiters;
	_Atomic uint64_t hold_until[RN_DPDK_DRIVERS]; /* ns: others drive the port until then */
	rn_dpdk_pass_fn pass_fn;       /* end-of-pass hook (the transport's -ENOBUFS retry) */
	void *pass_arg;
	int efd;
	struct rn_dpdk_port_stats st;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rn_dpdk_port *g_ports;
static int g_eal_rc = 1;               /* 1 not started, 0 up, <0 failed */
static char g_eal_err[512];
static unsigned g_pool_seq;

static uint64_t port_now_ns(void)
{
	return rn_dpdk_clock_ns();
}

/* ---- EAL ------------------------------------------------------------------------------------ */

#define RN_DPDK_MEMIF_FITS 8 /* memif --vdev values given a bsize (rn_dpdk_memif.h) */

struct eal_args {
	char buf[1024 + 256];
	char *argv[RN_DPDK_MAX_ARGS + 1];
	int argc;
	char fit[RN_DPDK_MEMIF_FITS][320];
	int nfit;
};

static bool eal_has(const struct eal_args *a, const char *opt)
{
	size_t n = strlen(opt);

	for (int i = 1; i < a->argc; i++)
		if (strncmp(a->argv[i], opt, n) == 0 &&
		    (a->argv[i][n] == '\0' || a->argv[i][n] == '='))
			return true;
	return false;
}

static int eal_push(struct eal_args *a, char *s)
{
	if (a->argc >= RN_DPDK_MAX_ARGS)
		return -E2BIG;
	a->argv[a->argc++] = s;
	a->argv[a->argc] = NULL;
	return 0;
}

/* A memif --vdev value whose buffers are too small for a frame of mtu gets a bsize that fits
 * one (rn_dpdk_memif.h: chained frames are corrupted). The value starts at argv[i] + off
 * ("--vdev=net_memif0,..." or a separate "net_memif0,..."); the prefix is kept. */
static int eal_fit_memif(struct eal_args *a, int i, size_t off, unsigned mtu)
{
	char *f = a->fit[a->nfit];
	int rc;

	if (a->nfit >= RN_DPDK_MEMIF_FITS)
		return 0; /* the port's own check refuses what stays too small */
	memcpy(f, a->argv[i], off);
	rc = rn_dpdk_memif_fit(a->argv[i] + off, mtu, f + off, sizeof(a->fit[0]) - off);
	if (rc == 1) {
		a->argv[i] = f;
		a->nfit++;
	}
	return rc < 0 ? -EMSGSIZE : 0;
}

static int eal_fit_vdevs(struct eal_args *a, unsigned mtu)
{
	int rc = 0;

	for (int i = 1; i < a->argc && rc == 0; i++) {
		if (strcmp(a->argv[i], "--vdev") == 0 && i + 1 < a->argc)
			rc = eal_fit_memif(a, ++i, 0, mtu);
		else if (strncmp(a->argv[i], "--vdev=", 7) == 0)
			rc = eal_fit_memif(a, i, 7, mtu);
	}
	return rc;
}

/* Split the user's arguments on blanks (no quoting: EAL values have no blanks). */
static int eal_split(struct eal_args *a, const char *user, unsigned mtu)
{
	char *tok, *save = NULL;

	snprintf(a->buf, sizeof(a->buf), "%s", user);
	a->argc = 0;
	a->nfit = 0;
	eal_push(a, "softrnic");
	for (tok = strtok_r(a->buf, " \t\n", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t\n", &save))
		if (eal_push(a, tok) != 0)
			return -E2BIG;
	return eal_fit_vdevs(a, mtu);
}

static bool hugepages_reserved(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long total = 0;

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Total: %lu", &total) == 1)
			break;
	fclose(f);
	return total > 0;
}

/* The lcore EAL pins its main thread to: the first CPU we may run on (taskset works). */
static int first_cpu(const cpu_set_t *set)
{
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set))
			return c;
	return 0;
}

static int eal_forced(struct eal_args *a, const cpu_set_t *cpus, char *lcore, size_t ll,
		      char *err, size_t errlen)
{
	int rc = 0;

	if (!eal_has(a, "--no-pci"))
		rc |= eal_push(a, "--no-pci");
	if (!eal_has(a, "--no-shconf"))
		rc |= eal_push(a, "--no-shconf");
	if (!eal_has(a, "--no-telemetry"))
		rc |= eal_push(a, "--no-telemetry");
	if (!eal_has(a, "--log-level"))
		rc |= eal_push(a, "--log-level=warning");
	if (eal_has(a, "--no-huge")) {
		if (!eal_has(a, "-m") && !eal_has(a, "--socket-mem")) {
			rc |= eal_push(a, "-m");
			rc |= eal_push(a, "256");
		}
	} else if (!hugepages_reserved()) {
		snprintf(err, errlen, "DPDK needs hugepages and none are reserved: add \"--no-huge "
			 "-m 256\" to key 'eal' (SOFTRNIC_DPDK_EAL), or reserve some (echo 512 > "
			 "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)");
		return -ENOMEM;
	} else if (!eal_has(a, "--in-memory")) {
		rc |= eal_push(a, "--in-memory");
	}
	if (!eal_has(a, "-l") && !eal_has(a, "-c") && !eal_has(a, "--lcores")) {
		snprintf(lcore, ll, "%d", first_cpu(cpus));
		rc |= eal_push(a, "-l");
		rc |= eal_push(a, lcore);
	}
	if (rc != 0) {
		snprintf(err, errlen, "key 'eal': more than %d arguments", RN_DPDK_MAX_ARGS - 10);
		return -E2BIG;
	}
	return 0;
}

static const char *eal_hint(int e)
{
	switch (e) {
	case EACCES:
		return "permission denied: run as root (hugepages, af_packet need privileges)";
	case ENOMEM:
		return "not enough memory: reserve hugepages or use --no-huge -m 256";
	case EINVAL:
		return "an EAL argument is invalid (EAL printed which)";
	case EALREADY:
		return "EAL was already started in this process by someone else";
	case ENOTSUP:
	case ENODEV:
		return "a device could not be probed: check the --vdev (af_packet: does the "
		       "interface exist here? memif: is the socket path in use?)";
	default:
		return "see EAL's messages above";
	}
}

static int eal_start(const struct rn_dpdk_cfg *cfg, bool *tried, char *err, size_t errlen)
{
	struct eal_args a;
	cpu_set_t cpus;
	char lcore[16];
	int rc;

	CPU_ZERO(&cpus);
	pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	rc = eal_split(&a, cfg->eal, cfg->mtu);
	if (rc != 0) {
		if (rc == -EMSGSIZE)
			snprintf(err, errlen, "key 'eal': a memif --vdev too long to add bsize=%u "
				 "for MTU %u: give bsize in it", rn_dpdk_memif_frame(cfg->mtu),
				 cfg->mtu);
		else
			snprintf(err, errlen, "key 'eal': too many arguments");
		return rc;
	}
	rc = eal_forced(&a, &cpus, lcore, sizeof(lcore), err, errlen);
	if (rc != 0)
		return rc;
	*tried = true;
	if (rte_eal_init(a.argc, a.argv) < 0) {
		int e = rte_errno;

		snprintf(err, errlen, "DPDK EAL could not start with '%.300s' (key 'eal'): %s: %s",
			 cfg->eal, rte_strerror(e), eal_hint(e));
		return -(e != 0 ? e : EIO);
	}
	/* EAL pinned this thread to one lcore; the caller's thread is not an lcore worker. */
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	rn_dpdk_clock_init();
	return 0;
}

/* After a close unplugged the --vdev devices, bring back those this configuration names. */
static void vdev_replug(const struct rn_dpdk_cfg *cfg)
{
	struct eal_args a;

	if (eal_split(&a, cfg->eal, cfg->mtu) != 0)
		return;
	for (int i = 1; i < a.argc; i++) {
		char name[RTE_ETH_NAME_MAX_LEN], *comma;
		const char *dev = NULL;
		uint16_t pid;

		if (strncmp(a.argv[i], "--vdev=", 7) == 0)
			dev = a.argv[i] + 7;
		else if (strcmp(a.argv[i], "--vdev") == 0 && i + 1 < a.argc)
			dev = a.argv[++i];
		if (dev == NULL)
			continue;
		snprintf(name, sizeof(name), "%s", dev);
		comma = strchr(name, ',');
		if (comma != NULL)
			*comma = '\0';
		if (rte_eth_dev_get_port_by_name(name, &pid) == 0)
			continue;
		rte_eal_hotplug_add("vdev", name, strchr(dev, ',') ? strchr(dev, ',') + 1 : "");
	}
}

/* EAL's own failure is final (DPDK cannot init twice); a refusal before rte_eal_init (bad
 * arguments, no hugepages) lets a corrected configuration try again. */
static int eal_once(const struct rn_dpdk_cfg *cfg, char *err, size_t errlen)
{
	bool tried = false;
	int rc;

	if (g_eal_rc == 0) {
		vdev_replug(cfg);
		return 0;
	}
	if (g_eal_rc < 0) {
		snprintf(err, errlen, "%s", g_eal_err);
		return g_eal_rc;
	}
	rc = eal_start(cfg, &tried, err, errlen);
	if (rc == 0 || tried) {
		g_eal_rc = rc;
		snprintf(g_eal_err, sizeof(g_eal_err), "%s", err);
	}
	return rc;
}

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

static int port_find(const struct rn_dpdk_cfg *cfg, uint16_t *pid, char *err, size_t errlen)
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

/* Data room of the port's mbufs: jumbo frames in one mbuf, with slack for PMDs that want
 * more than the frame (af_packet's framesz includes its own header). */
static uint16_t port_room(const struct rn_dpdk_port *p)
{
	uint32_t room = RTE_MBUF_DEFAULT_DATAROOM;
	uint32_t frame = (uint32_t)p->cfg.mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;

	if (frame > room)
		room = RTE_ALIGN_CEIL(frame + 256u, 1024u);
	return (uint16_t)(room + RTE_PKTMBUF_HEADROOM);
}

static int port_socket(const struct rn_dpdk_port *p)
{
	int sock = rte_eth_dev_socket_id(p->pid);

	return sock < 0 ? (int)rte_socket_id() : sock;
}

/* Each lcore's cache holds up to 1.5x this: every thread that works the port has one
 * (rn_dpdk_lcore.h: the poll thread, the progress thread, polling consumers), so a pool of
 * n keeps most of its mbufs shared with a sixteenth per cache (a 1023 mbuf receive pool at
 * MTU 64000: 63). */
#define RN_DPDK_POOL_CACHE_MAX 256u

static unsigned pool_cache(uint32_t n)
{
	return n / 16u < RN_DPDK_POOL_CACHE_MAX ? n / 16u : RN_DPDK_POOL_CACHE_MAX;
}

static struct rte_mempool *pool_make(struct rn_dpdk_port *p, const char *kind, uint32_t n)
{
	char nm[RTE_MEMPOOL_NAMESIZE];

	snprintf(nm, sizeof(nm), "srn_%s%u_%u", kind, p->pid, g_pool_seq++);
	return rte_pktmbuf_pool_create(nm, n, pool_cache(n), 0, port_room(p),
				       rte_eth_dev_socket_id(p->pid)); /* -1: any socket */
}

/* The transmit pool's default: enough for RN_DPDK_TX_CONNS connections with full send
 * buffers (snd_buf / data room mbufs each), at most RN_DPDK_TX_MBUFS_CAP, and no more than
 * fits in what EAL's heap has left after the receive pool, keeping a reserve for the rest
 * of EAL and the PMDs (so `-m 128` still opens, with a smaller pool). */
#define RN_DPDK_TX_CONNS 4096u
#define RN_DPDK_TX_MBUFS_CAP 65535u
#define RN_DPDK_TX_MBUFS_MIN 1023u
#define RN_DPDK_HEAP_RESERVE (16u << 20)

static uint32_t tx_pool_default(const struct rn_dpdk_port *p)
{
	struct rte_malloc_socket_stats ms;
	struct rte_mempool_objsz sz;
	uint64_t snd = p->cfg.snd_buf != 0 ? p->cfg.snd_buf : TCP_BUF_DEFAULT;
	uint64_t want = RN_DPDK_TX_CONNS * (snd / RTE_MBUF_DEFAULT_DATAROOM);
	uint64_t per, freeb, reserve, fit;
	long pg = sysconf(_SC_PAGESIZE);

	if (want > RN_DPDK_TX_MBUFS_CAP)
		want = RN_DPDK_TX_MBUFS_CAP;
	/* element + mempool header/trailer, + the ring slot and some rounding */
	per = rte_mempool_calc_obj_size(sizeof(struct rte_mbuf) + port_room(p), 0, &sz) + 16u;
	/* Without hugepages a mempool object may not cross a 4 KiB page: one 2 KiB mbuf
	 * takes a whole page (measured: 45085 mbufs did not fit in 124 MB free). */
	if (!rte_eal_has_hugepages() && pg > 0 && per <= (uint64_t)pg)
		per = (uint64_t)pg / ((uint64_t)pg / per);
	if (rte_malloc_get_socket_stats(port_socket(p), &ms) != 0)
		return (uint32_t)want;
	freeb = ms.heap_freesz_bytes;
	reserve = freeb / 8 > RN_DPDK_HEAP_RESERVE ? freeb / 8 : RN_DPDK_HEAP_RESERVE;
	fit = freeb > reserve ? (freeb - reserve) / per : 0;
	if (fit < want)
		want = fit;
	return want < RN_DPDK_TX_MBUFS_MIN ? RN_DPDK_TX_MBUFS_MIN : (uint32_t)want;
}

/* Two pools, so that data queued for sending (which may hold every transmit mbuf until it
 * is acknowledged) can never keep the port from receiving those acknowledgements. */
static int port_pool(struct rn_dpdk_port *p, char *err, size_t errlen)
{
	p->pool = pool_make(p, "rx", p->cfg.nb_mbufs);
	if (p->pool == NULL) {
		snprintf(err, errlen, "receive mbuf pool of %u mbufs: %s (key 'mbufs'; or give EAL "
			 "more memory: -m in key 'eal')", p->cfg.nb_mbufs, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	if (p->cfg.nb_tx_mbufs == 0)
		p->cfg.nb_tx_mbufs = tx_pool_default(p);
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

static bool port_is_memif(const struct rte_eth_dev_info *di);

/* Key memif_csum = off: two processes on one host share the memif ring, so nothing on the
 * way can corrupt a frame; like Linux on loopback, the stack then neither computes the TCP
 * checksum on transmit (it leaves the pseudo-header's sum, as for an offload, and the frame
 * carries that) nor checks it on receive. Both ends must say so: a peer that checks would
 * drop every segment. The IPv4 header's checksum is still made and checked (20 octets).
 * MPA's CRC32c, when negotiated, still covers the RDMA payload end to end. memif only. */
static void port_csum_trust(struct rn_dpdk_port *p, const struct rte_eth_dev_info *di,
			    struct net_if_cfg *nc)
{
	if (!p->cfg.memif_csum_off)
		return;
	if (!port_is_memif(di)) {
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
static void port_offloads(struct rn_dpdk_port *p, const struct rte_eth_dev_info *di,
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

static int port_mtu_mac(struct rn_dpdk_port *p, struct net_if_cfg *nc, char *err, size_t el)
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
 * adding fd N epoll_ctl"). On a loaded machine that thread took more than 250 ms to accept,
 * and restarts every 250 ms crashed the server (docs/dpdk-port.md). */
#define PORT_LINK_SETTLE_NS 1000000000ull
#define PORT_LINK_SETTLE_MAX_NS 4000000000ull

static bool port_link_get(struct rn_dpdk_port *p)
{
	struct rte_eth_link l;

	memset(&l, 0, sizeof(l));
	if (rte_eth_link_get_nowait(p->pid, &l) != 0)
		return true; /* unknown: treat as up */
	return l.link_status == RTE_ETH_LINK_UP;
}

/* The next look after a memif client's start: soon when it failed (no server socket, no
 * connection made), after the settle time when it connected. */
static void port_link_next(struct rn_dpdk_port *p, uint64_t now)
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
static void port_link_watch(struct rn_dpdk_port *p, uint64_t now)
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
 * later (a memif server waits for its client). A PMD that cannot tell is not waited for. */
static void port_link_wait(struct rn_dpdk_port *p)
{
	uint64_t end = port_now_ns() + (uint64_t)p->cfg.link_wait_ms * 1000000u, now;
	struct timespec ms = { .tv_sec = 0, .tv_nsec = 1000000L };

	if (p->memif_client)
		port_link_next(p, port_now_ns()); /* the first connect's time */
	else
		p->link_look_ns = port_now_ns() + PORT_LINK_LOOK_NS;
	for (;;) {
		now = port_now_ns();
		port_link_watch(p, now);
		p->link_up = port_link_get(p);
		if (p->link_up || now >= end)
			return;
		nanosleep(&ms, NULL);
	}
}

static bool port_is_memif(const struct rte_eth_dev_info *di)
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
	if (port_is_memif(di))
		return strstr(port_devargs(di), "zero-copy=yes") == NULL;
	return strcmp(di->driver_name, "net_af_packet") == 0;
}

/* Key tx_refs asks for zero-copy transmit; the driver decides whether it may have it. */
static void port_tx_refs(struct rn_dpdk_port *p, const struct rte_eth_dev_info *di)
{
	p->tx_refs = p->cfg.tx_refs && p->multi_seg && port_tx_copies(di);
	if (p->cfg.tx_refs && !p->tx_refs)
		fprintf(stderr, "softrnic: port %s: tx_refs: driver %s does not copy frames at "
			"transmit (or takes no mbuf chains); payload is copied\n", p->name,
			di->driver_name ? di->driver_name : "?");
}

bool rn_dpdk_port_tx_refs(const struct rn_dpdk_port *p)
{
	return p->tx_refs;
}

/* memif must carry every frame in one buffer (rn_dpdk_memif.h). */
static int port_memif_check(struct rn_dpdk_port *p, const struct rte_eth_dev_info *di,
			    char *err, size_t el)
{
	unsigned bsize = rn_dpdk_memif_bsize(port_devargs(di));
	unsigned frame = rn_dpdk_memif_frame(p->cfg.mtu);

	if (bsize >= frame)
		return 0;
	snprintf(err, el, "port %s: memif buffers of %u octets (bsize) cannot hold a frame of "
		 "MTU %u (%u octets), and DPDK's memif corrupts frames chained over buffers: "
		 "give bsize=%u or more in the --vdev arguments, or leave bsize out", p->name,
		 bsize, p->cfg.mtu, frame, frame);
	return -EINVAL;
}

static int port_setup(struct rn_dpdk_port *p, struct net_if_cfg *nc, char *err, size_t el)
{
	struct rte_eth_dev_info di;
	struct rte_eth_conf conf;
	uint16_t nrx = RN_DPDK_RING, ntx = RN_DPDK_RING;
	int sock = rte_eth_dev_socket_id(p->pid), rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(p->pid, &di);
	if (rc != 0)
		return port_fail(err, el, "device info", rc, p->name);
	if (port_is_memif(&di)) {
		rc = port_memif_check(p, &di, err, el);
		if (rc != 0)
			return rc;
		p->memif_client = rn_dpdk_memif_is_client(port_devargs(&di));
		p->guarded = rn_dpdk_fault_install() == 0;
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
	 * port_link_watch brings up once the server is there (its rx/tx do nothing until then) */
	if (rc != 0 && !p->memif_client)
		return port_fail(err, el, "start", rc, p->name);
	p->started = rc == 0;
	rte_eth_promiscuous_disable(p->pid); /* not every PMD has the notion */
	if (p->started)
		rte_eth_dev_set_link_up(p->pid);
	port_link_wait(p);
	return 0;
}

/* ---- transmit and the poll pass --------------------------------------------------------------- */

/* A port without MULTI_SEGS gets chains copied into one mbuf. NULL when out of mbufs. */
static struct rte_mbuf *tx_linear(struct rn_dpdk_port *p, struct rte_mbuf *m)
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

/* A burst cut short by the peer's disconnect (rn_dpdk_fault.h) received nothing, and counts
 * as having sent everything: the PMD may have freed some of those mbufs already, so the
 * caller must not free them again (the others leak, one burst's worth). */
static uint16_t port_rx_burst(struct rn_dpdk_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	return p->guarded ? rn_dpdk_fault_burst(rx0, p->pid, pkts, n, 0) : rx0(p->pid, pkts, n);
}

static uint16_t port_tx_burst(struct rn_dpdk_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	return p->guarded ? rn_dpdk_fault_burst(tx0, p->pid, pkts, n, n) : tx0(p->pid, pkts, n);
}

static uint16_t port_tx(void *arg, struct rte_mbuf **pkts, uint16_t n)
{
	struct rn_dpdk_port *p = arg;
	uint64_t bytes[RN_DPDK_BURST * 2];
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
			rn_dpdk_pcap_frame(p->pcap, m);
	}
	if (!p->started)
		ok = 0; /* a memif client waiting for its server (port_link_watch): a down link */
	if (p->tx_prepare && ok > 0)
		ok = rte_eth_tx_prepare(p->pid, 0, pkts, ok);
	while (sent < ok && tries++ < RN_DPDK_TX_TRIES)
		sent += port_tx_burst(p, pkts + sent, (uint16_t)(ok - sent));
	for (uint16_t i = 0; i < sent && i < RTE_DIM(bytes); i++)
		p->st.tx_bytes += bytes[i];
	p->st.tx_pkts += sent;
	p->st.tx_full_drops += (uint64_t)(n - sent);
	return sent;
}

/* One pass; the lock is held. One clock read serves the whole pass (the stack's clock is the
 * port's, rn_dpdk_clock_cb). */
static int port_pass(struct rn_dpdk_port *p, uint64_t *next_ns)
{
	struct rte_mbuf *pkts[RN_DPDK_BURST];
	uint16_t n = p->started ? port_rx_burst(p, pkts, RN_DPDK_BURST) : 0;
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
				rn_dpdk_pcap_frame(p->pcap, pkts[i]);
		}
		tcp_stack_input(p->stack, pkts, n);
	}
	nx = tcp_stack_poll(p->stack);
	if (!p->link_up || p->memif_client)
		port_link_watch(p, tcp_stack_now_ns(p->stack));
	if (p->pass_fn != NULL)
		p->pass_fn(p->pass_arg);
	tcp_stack_clock_release(p->stack);
	if (next_ns != NULL)
		*next_ns = nx;
	return n;
}

int rn_dpdk_port_pass_locked(struct rn_dpdk_port *p, unsigned hold_us, enum rn_dpdk_driver who)
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

void rn_dpdk_port_release(struct rn_dpdk_port *p, enum rn_dpdk_driver who)
{
	if (atomic_load_explicit(&p->hold_until[who], memory_order_relaxed) == 0)
		return;
	atomic_store_explicit(&p->hold_until[who], 0, memory_order_relaxed);
	for (int i = 0; i < RN_DPDK_DRIVERS; i++)
		if (atomic_load_explicit(&p->hold_until[i], memory_order_relaxed) > port_now_ns())
			return; /* still held by the other driver */
	rn_dpdk_port_kick(p); /* wakes a thread sleeping out the hold */
}

bool rn_dpdk_port_held_by(struct rn_dpdk_port *p, enum rn_dpdk_driver who)
{
	return atomic_load_explicit(&p->hold_until[who], memory_order_relaxed) > port_now_ns();
}

int rn_dpdk_port_set_pass_hook(struct rn_dpdk_port *p, rn_dpdk_pass_fn fn, void *arg)
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

int rn_dpdk_port_poll(struct rn_dpdk_port *p, uint64_t *next_ns)
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
static void port_tell_partial_csum(struct rn_dpdk_port *p)
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
	bool memif = rte_eth_dev_info_get(p->pid, &di) == 0 && port_is_memif(&di);
	fprintf(stderr, "softrnic: port %s: dropping TCP segments whose checksum holds only the "
		"pseudo-header's sum (left to an offload): %s (docs/dpdk-port.md)\n", p->name,
		memif ? "the peer has memif_csum = off; set it on both ends or on neither" :
			"turn the sender's checksum offload off (a Linux veth: ethtool -K DEV tx off)");
}

/* Sleep up to ns, unless a kick came in since the last pass. */
static void port_sleep(struct rn_dpdk_port *p, uint64_t ns)
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
static void port_nap(struct rn_dpdk_port *p, uint64_t next_ns)
{
	uint64_t ns = (uint64_t)p->cfg.nap_us * 1000u;

	p->st.naps++;
	port_sleep(p, next_ns < ns ? next_ns : ns);
}

/* Consumers drive the port (rn_dpdk_port_pass_locked): stay out of their way until the hold
 * ends - they run the passes and the timers - instead of taking the lock and a core from
 * them. true when the thread slept. */
static bool port_held(struct rn_dpdk_port *p)
{
	uint64_t now = port_now_ns(), until = 0;

	for (int i = 0; i < RN_DPDK_DRIVERS; i++) {
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
 * an RDMA Write to land (the ib_write_lat pattern; the kernel-socket engine's rule D7b in
 * docs/rnic-decisions.md). Spinning then only makes each packet wait for the spinner's time
 * slice, so for PORT_NOSPIN_NS the thread naps after every idle pass: the wake-up from a nap
 * preempts the spinner. */
#define PORT_STALL_NS 300000ull
#define PORT_NOSPIN_NS 50000000ull
/* Stalls that come back as soon as a window ends double it, up to this: an application that
 * spins on memory for every message (ib_write_lat) would otherwise pay a few milliseconds
 * of time-slice waits every window (Debian's ib_write_lat over memif: t_typical 250 us with
 * 50 ms windows only, 78-84 us with doubling ones). */
#define PORT_NOSPIN_MAX_NS 1600000000ull

static void *port_thread(void *arg)
{
	struct rn_dpdk_port *p = arg;
	uint64_t idle_since = port_now_ns(), next = 0, now, t0, slept, nospin_until = 0;
	uint64_t window = PORT_NOSPIN_NS;
	int n;

	rn_dpdk_lcore_claim();
	/* A nap is a promise to look again after nap_us: the default 50 us timer slack would
	 * add as much again to every wake-up (and so to a packet's wait when no one spins). */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

	while (!atomic_load(&p->stop)) {
		if (port_held(p)) {
			idle_since = port_now_ns(); /* spin a while after a hold, as after traffic */
			continue;
		}
		t0 = port_now_ns();
		slept = 0;
		pthread_mutex_lock(&p->lock);
		n = port_pass(p, &next);
		pthread_mutex_unlock(&p->lock);
		now = port_now_ns();
		/* Packets, or another thread's API calls, keep the thread spinning. */
		if (n > 0 || atomic_exchange(&p->touched, false) ||
		    atomic_exchange(&p->kicked, false)) {
			idle_since = now;
		} else if (now < nospin_until ||
			   now - idle_since >= (uint64_t)p->cfg.spin_us * 1000u) {
			port_nap(p, next);
			slept = port_now_ns() - now;
		}
		/* A spinning holder starves lock waiters (mutexes are not fair). */
		if (atomic_load(&p->waiters) > 0)
			sched_yield();
		now = port_now_ns();
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
	rn_dpdk_lcore_release(); /* its cached mbufs back to the pools before they are freed */
	return NULL;
}

int rn_dpdk_port_start(struct rn_dpdk_port *p)
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

void rn_dpdk_port_stop(struct rn_dpdk_port *p)
{
	if (!p->running)
		return;
	atomic_store(&p->stop, true);
	rn_dpdk_port_kick(p);
	pthread_join(p->thread, NULL);
	p->running = false;
}

void rn_dpdk_port_kick(struct rn_dpdk_port *p)
{
	uint64_t one = 1;

	atomic_store(&p->kicked, true);
	if (atomic_load(&p->napping) && write(p->efd, &one, sizeof(one)) < 0)
		return; /* the counter is full: the thread wakes anyway */
}

void rn_dpdk_port_lock(struct rn_dpdk_port *p)
{
	rn_dpdk_lcore_claim(); /* whoever works the port takes and returns its mbufs */
	atomic_fetch_add(&p->waiters, 1);
	pthread_mutex_lock(&p->lock);
	atomic_fetch_sub(&p->waiters, 1);
}

void rn_dpdk_port_unlock(struct rn_dpdk_port *p)
{
	/* a hint for the poll thread's nap; a consumer polling in a loop must not write the
	 * line (and order the store) on every pass */
	if (!atomic_load_explicit(&p->touched, memory_order_relaxed))
		atomic_store_explicit(&p->touched, true, memory_order_relaxed);
	pthread_mutex_unlock(&p->lock);
}

/* ---- open / close ------------------------------------------------------------------------- */

static int port_stack(struct rn_dpdk_port *p, struct net_if_cfg *nc, char *err, size_t el)
{
	struct tcp_stack_cfg sc;
	int rc;

	tcp_stack_cfg_default(&sc);
	nc->ip = p->cfg.ip;
	nc->prefix_len = p->cfg.prefix_len;
	nc->gateway = p->cfg.gateway;
	nc->mtu = p->cfg.mtu;
	nc->pool = p->tx_pool;
	nc->tx = port_tx;
	nc->tx_arg = p;
	sc.nif = *nc;
	sc.snd_buf = p->cfg.snd_buf;
	sc.rcv_buf = p->cfg.rcv_buf;
	sc.cc = p->cfg.cc;
	sc.clock_ns = rn_dpdk_clock_cb;
	rc = tcp_stack_create(&sc, &p->stack);
	if (rc != 0)
		snprintf(err, el, "port %s: TCP stack: %s (keys ip, gw, mtu, mac)", p->name,
			 strerror(-rc));
	return rc;
}

static void port_free(struct rn_dpdk_port *p)
{
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
	rn_dpdk_pcap_close(p->pcap);
	if (p->efd >= 0)
		close(p->efd);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* RN_DPDK_MBUFS_DEFAULT, or fewer in the same memory when frames exceed MTU 9000's. */
static uint32_t rx_pool_default(const struct rn_dpdk_port *p)
{
	const uint64_t room9000 = RTE_ALIGN_CEIL(9000u + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN +
						 256u, 1024u);
	uint64_t room = port_room(p) - RTE_PKTMBUF_HEADROOM;
	uint64_t n = RN_DPDK_MBUFS_DEFAULT * room9000 / room;

	if (room <= room9000)
		return RN_DPDK_MBUFS_DEFAULT;
	return n < RN_DPDK_MBUFS_MIN ? RN_DPDK_MBUFS_MIN : (uint32_t)n;
}

static struct rn_dpdk_port *port_alloc(const struct rn_dpdk_cfg *cfg)
{
	struct rn_dpdk_port *p = calloc(1, sizeof(*p));
	pthread_mutexattr_t ma;

	if (p == NULL)
		return NULL;
	p->cfg = *cfg;
	if (p->cfg.mtu == 0)
		p->cfg.mtu = 1500;
	if (p->cfg.nb_mbufs == 0)
		p->cfg.nb_mbufs = rx_pool_default(p);
	if (p->cfg.nap_us == 0)
		p->cfg.nap_us = RN_DPDK_NAP_US_DEFAULT;
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

static int port_build(struct rn_dpdk_port *p, char *err, size_t el)
{
	struct net_if_cfg nc;
	int rc;

	memset(&nc, 0, sizeof(nc));
	rc = port_find(&p->cfg, &p->pid, err, el);
	if (rc != 0)
		return rc;
	rte_eth_dev_get_name_by_port(p->pid, p->name);
	if (p->cfg.pcap[0] != '\0' &&
	    (rc = rn_dpdk_pcap_open(p->cfg.pcap, &p->pcap, err, el)) != 0)
		return rc;
	rc = port_pool(p, err, el);
	if (rc == 0)
		rc = port_setup(p, &nc, err, el);
	if (rc != 0)
		return rc;
	return port_stack(p, &nc, err, el);
}

static struct rn_dpdk_port *port_shared(const struct rn_dpdk_cfg *cfg, char *err, size_t el)
{
	for (struct rn_dpdk_port *p = g_ports; p != NULL; p = p->next) {
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

int rn_dpdk_port_open(const struct rn_dpdk_cfg *cfg, struct rn_dpdk_port **out, char *err,
		      size_t errlen)
{
	struct rn_dpdk_port *p;
	char dummy[8];
	int rc;

	if (err == NULL || errlen == 0) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (cfg == NULL || out == NULL || rn_dpdk_cfg_check(cfg, err, errlen) != 0)
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
	rc = eal_once(cfg, err, errlen);
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

void rn_dpdk_port_close(struct rn_dpdk_port *p)
{
	struct rn_dpdk_port **pp;

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
	rn_dpdk_port_stop(p);
	port_free(p);
	pthread_mutex_unlock(&g_lock);
}

struct tcp_stack *rn_dpdk_port_stack(struct rn_dpdk_port *p)
{
	return p->stack;
}

void rn_dpdk_port_get_stats(struct rn_dpdk_port *p, struct rn_dpdk_port_stats *st)
{
	struct rte_eth_stats es;

	pthread_mutex_lock(&p->lock);
	*st = p->st;
	st->pcap_frames = rn_dpdk_pcap_count(p->pcap);
	st->link_up = p->link_up;
	st->burst_faults = rn_dpdk_fault_count();
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
