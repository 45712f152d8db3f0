/* A DPDK poll-mode port carrying softrnic's TCP/IP engine (tcp/tcp.h): EAL start-up from one
 * configuration, the port (memif, af_packet, ring, pcap, tap or a real NIC the user names),
 * its mbuf pool, the poll loop, per-port counters and pcap capture.
 *
 * Configuration comes from a file (SOFTRNIC_DPDK_CONF=path, lines "key = value", '#'
 * comments) or from the environment (SOFTRNIC_DPDK_<KEY>, which overrides the file):
 *   eal     EAL arguments, e.g. "--vdev=net_memif0,role=server,socket=/tmp/m.sock".
 *           softrnic always adds --no-pci (the machine's own NIC is never taken), --no-shconf,
 *           --no-telemetry, --in-memory when no --no-huge/-m is given, and -l <lcore>.
 *   port    which ethdev: a port number or a device name ("net_memif0"); default 0
 *   ip      198.51.100.1/24 (required)        gw   gateway address (optional)
 *   mac     02:00:00:00:00:01 (default: the port's own)
 *   mtu     IP MTU (default 1500)
 *   pcap    file: capture every frame in and out (libpcap format, Wireshark reads it)
 *   sndbuf, rcvbuf   per-connection octets;   cc   newreno | cubic | bbr
 *   spin_us how long the poll thread keeps polling after the last packet before it naps
 *           (default 200); nap_us the nap (default 50)
 *   mbufs   mbufs in the port's receive pool (default 5119 at MTU 1500): only rx_burst takes
 *           from it
 *   tx_mbufs mbufs in the transmit pool, everything the engine allocates (headers, send
 *           queue copies, clones); default 4095 at MTU 1500; jumbo MTUs get fewer, larger
 *           ones (docs/dpdk.md, Memory)
 *   max_conns  connections (and TIME-WAIT entries) the engine holds at once (default 16384,
 *           64..4194304): a connect or an accept past it fails
 *   link_wait_ms  how long an open waits for the link to come up (default 2000, but 0 for a
 *           memif server: it has no link until a client process connects, and that
 *           process usually starts after it; given explicitly, it holds for every port)
 * EAL can start once per process; a second open of the same configuration returns the same
 * port (reference counted).
 *
 * Driving. Either the port's own poll thread (dpdk_port_start), or the caller's thread in
 * inline mode (dpdk_port_poll). In thread mode every other thread that touches the stack
 * or its connections holds the port lock; callbacks of tcp/tcp.h run with it held. */
#ifndef DPDK_PORT_H
#define DPDK_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tcp.h"

struct dpdk_port;

struct dpdk_cfg {
	char eal[1024];
	char port[64];
	uint32_t ip;          /* network order */
	uint8_t prefix_len;
	uint32_t gateway;     /* network order, 0 none */
	uint8_t mac[6];
	bool mac_set;
	uint16_t mtu;
	char pcap[256];       /* empty: no capture */
	uint32_t snd_buf, rcv_buf;
	enum tcp_cc_algo cc;
	uint32_t spin_us, nap_us;
	uint32_t nb_mbufs;    /* key mbufs (receive pool); 0 = default, from the MTU */
	uint32_t nb_tx_mbufs; /* key tx_mbufs (transmit pool); 0 = default, from the MTU */
	uint32_t link_wait_ms; /* key link_wait_ms; 0 = do not wait */
	bool link_wait_set;   /* link_wait_ms was given (else a memif server does not wait) */
	bool tx_refs;         /* key tx_refs: zero-copy transmit of RDMA payload (off) */
	bool memif_csum_off;  /* key memif_csum = off: a memif link without TCP checksums */
	/* key keepalive = IDLE,INTVL,PROBES (default 5,1,5) or off (ka_idle_s 0): every stream
	 * probes a peer silent for IDLE s, every INTVL s, and ends with -ETIMEDOUT after PROBES
	 * unanswered, whether or not it has data outstanding; while its FIN waits for an ACK,
	 * after as much silence without probes */
	uint32_t ka_idle_s, ka_intvl_s, ka_probes;
	uint32_t max_conns;   /* key max_conns */
	/* key orphan_retries (default 5, 1..100): a stream closed by its application gives up
	 * after as many retransmissions of its unacknowledged FIN, or zero-window probes, with
	 * a RST; key fin_timeout (s, default 60, 1..3600): FIN-WAIT-2 after that close */
	uint32_t orphan_retries, fin_timeout_s;
};

/* 0, or -ENOENT when no configuration is given at all (no SOFTRNIC_DPDK_CONF nor
 * SOFTRNIC_DPDK_* variables), -EINVAL with a message in err naming the bad key. */
int dpdk_cfg_from_env(struct dpdk_cfg *cfg, char *err, size_t errlen);
/* Parse "key = value" lines (the file format) into cfg. */
int dpdk_cfg_parse(struct dpdk_cfg *cfg, const char *text, char *err, size_t errlen);

/* Start EAL (once per process) and the port. On failure err says what went wrong and what to
 * do (no hugepages: use --no-huge or reserve them; no such device; permission denied: run
 * as root or give CAP_NET_RAW for af_packet; memif socket in use ...). */
int dpdk_port_open(const struct dpdk_cfg *cfg, struct dpdk_port **out, char *err,
		      size_t errlen);
/* Drops a reference; the last one stops the thread, destroys the stack (aborting its
 * connections) and stops the port. EAL itself stays (DPDK cannot restart it). */
void dpdk_port_close(struct dpdk_port *p);

struct tcp_stack *dpdk_port_stack(struct dpdk_port *p);
/* Key tx_refs is on and the port's transmit copies frames out of their mbufs within the
 * burst (memif in copy mode, af_packet), so the stack may send payload straight from a
 * caller's memory (tcp_send_ref): no reference survives the burst but the stack's queue's. */
bool dpdk_port_tx_refs(const struct dpdk_port *p);
/* A new stream's per-connection settings from the configuration (keepalive). Port lock held. */
void dpdk_port_conn_setup(const struct dpdk_port *p, struct tcp_conn *c);

/* Thread mode. */
int dpdk_port_start(struct dpdk_port *p);
void dpdk_port_stop(struct dpdk_port *p);
void dpdk_port_lock(struct dpdk_port *p);
void dpdk_port_unlock(struct dpdk_port *p);
/* Make a napping poll thread look at the stack now (after queuing work from another
 * thread). Cheap when it polls. */
void dpdk_port_kick(struct dpdk_port *p);

/* Inline mode: one pass (receive a burst, input, timers, transmit). Returns the number of
 * packets received; *next_ns (may be NULL) the ns until the next timer. -EBUSY while the
 * thread runs. */
int dpdk_port_poll(struct dpdk_port *p, uint64_t *next_ns);

/* Consumer-driven mode (thread mode): a thread that already holds the port lock and
 * found nothing to do (a transport recv with its queue empty) runs one pass itself instead of
 * waiting for the poll thread; the poll thread then backs off for hold_us (sleeps, waking for
 * dpdk_port_kick / stop) while such passes keep coming, so consumer and poll thread do not
 * fight for a core. Returns packets received. The lock must be held (it is recursive). */
enum dpdk_driver { DPDK_CONSUMER, DPDK_ENGINE, DPDK_DRIVERS };
int dpdk_port_pass_locked(struct dpdk_port *p, unsigned hold_us, enum dpdk_driver who);
/* Driver `who` that held the poll thread off is about to sleep: its hold ends now (another
 * driver's hold stays: a progress thread that sleeps while a consumer polls must not wake the
 * poll thread into that consumer's core). */
void dpdk_port_release(struct dpdk_port *p, enum dpdk_driver who);
/* true while driver who's hold runs (any thread, no lock). */
bool dpdk_port_held_by(struct dpdk_port *p, enum dpdk_driver who);
/* Called at the end of every pass (poll thread, inline or consumer pass), lock held: the
 * transport retries sends refused for want of mbufs (-ENOBUFS) there. One hook per port;
 * fn NULL removes it. -EBUSY when another arg holds it. */
typedef void (*dpdk_pass_fn)(void *arg);
int dpdk_port_set_pass_hook(struct dpdk_port *p, dpdk_pass_fn fn, void *arg);

struct dpdk_port_stats {
	uint64_t rx_bursts, rx_pkts, rx_bytes, tx_pkts, tx_bytes, tx_full_drops;
	uint64_t polls, naps, pcap_frames;
	uint64_t ext_passes, holds;      /* consumer passes; poll thread hold sleeps */
	uint64_t nospins;                /* spin windows turned off by a stalled iteration */
	/* rte_eth_stats of the port */
	uint64_t eth_ipackets, eth_opackets, eth_ierrors, eth_oerrors, eth_imissed;
	/* the two pools: size and mbufs free now (cached ones count as free) */
	uint64_t rx_pool_size, rx_pool_free, tx_pool_size, tx_pool_free;
	uint64_t link_restarts;          /* a memif client's reconnects (link down) */
	uint64_t burst_faults;           /* bursts the peer's disconnect cut short (process-wide,
	                                  * dpdk_fault.h) */
	bool link_up;         /* at the last look (every 250 ms while down, or a memif client) */
};
void dpdk_port_get_stats(struct dpdk_port *p, struct dpdk_port_stats *st);

#endif
