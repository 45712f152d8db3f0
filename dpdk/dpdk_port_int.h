/* Inside the DPDK port (dpdk_port.h): the port object and what its files share. Sections
 * follow the files: dpdk_eal.c (EAL start-up), dpdk_port.c (the ethdev, link, open / close,
 * the registry), dpdk_pool.c (the mbuf pools), dpdk_poll.c (transmit, the poll pass, the poll
 * thread). */
#ifndef DPDK_PORT_INT_H
#define DPDK_PORT_INT_H

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

#include "dpdk_clock.h"
#include "dpdk_fault.h"
#include "dpdk_lcore.h"
#include "dpdk_memif.h"
#include "dpdk_memif_guard.h"
#include "dpdk_cfg_int.h"
#include "dpdk_pcap.h"
#include "dpdk_port.h"

#define DPDK_BURST 32u
#define DPDK_RING 1024u
/* Transmit attempts for one batch while the ring is full (memif's peer drains slowly). */
#define DPDK_TX_TRIES 64u
#define DPDK_MAX_ARGS 64

struct dpdk_port {
	struct dpdk_port *next;     /* registry */
	int refs;
	struct dpdk_cfg cfg;
	uint16_t pid;
	char name[RTE_ETH_NAME_MAX_LEN];
	bool multi_seg;                /* the port takes mbuf chains */
	bool tx_refs;                  /* frames may reference caller memory (key tx_refs) */
	bool csum_trust;               /* memif_csum off: received TCP checksums are not checked */
	bool tx_prepare;               /* checksum offloads in use: rte_eth_tx_prepare */
	bool csum_partial_told;        /* the checksum warning was said */
	bool rx_dry_told;              /* the empty receive pool was said (dpdk_pool_watch) */
	bool tx_dry_told;              /* the full send queues were said (dpdk_pool_watch) */
	uint64_t pool_look_ns;         /* next look at the pools (dpdk_pool_watch) */
	struct rte_mempool *pool;      /* receive: only the rx queue takes from it */
	struct rte_mempool *tx_pool;   /* everything the stack allocates (net_if_cfg.pool) */
	bool link_up;                  /* at the last look (port_link_watch) */
	bool memif_client;             /* the link is ours to bring up again (port_link_watch) */
	bool memif_server;             /* the link comes when a client connects (port_link_wait) */
	bool guarded;                  /* memif: bursts under dpdk_fault (peer disconnect) */
	struct dpdk_memif_guard *memif_guard; /* memif server: a client gone before hello */
	uint64_t link_look_ns;         /* next look at the link */
	uint64_t link_settle_ns;       /* memif client: a connected start's grace (port_link_next) */
	struct tcp_stack *stack;
	struct dpdk_pcap *pcap;
	pthread_mutex_t lock;          /* recursive: callbacks may take it again */
	pthread_t thread;
	bool started;                  /* rte_eth_dev_start done */
	bool running;
	atomic_bool stop, napping, kicked, touched;
	atomic_int waiters;
	_Atomic uint64_t hold_until[DPDK_DRIVERS]; /* ns: others drive the port until then */
	dpdk_pass_fn pass_fn;       /* end-of-pass hook (the transport's -ENOBUFS retry) */
	void *pass_arg;
	int efd;
	struct dpdk_port_stats st;
	struct rn_stats_port *st_rec;  /* the port's record of the statistics file (dpdk_stats.c) */
	uint64_t st_pub_ns;            /* its next update */
};

static inline uint64_t dpdk_port_now_ns(void)
{
	return dpdk_clock_ns();
}

/* ---- dpdk_eal.c ------------------------------------------------------------------------ */
/* Start EAL for cfg once per process (later calls plug cfg's --vdev devices again). EAL's own
 * failure is final; a refusal before rte_eal_init lets a corrected configuration try again. */
int dpdk_eal_once(const struct dpdk_cfg *cfg, char *err, size_t errlen);

/* ---- dpdk_port.c ----------------------------------------------------------------------- */
bool dpdk_port_is_memif(const struct rte_eth_dev_info *di);
/* Look at the link when due (a memif client brings its link up again). Lock held. */
void dpdk_port_link_watch(struct dpdk_port *p, uint64_t now);

/* ---- dpdk_pool.c ----------------------------------------------------------------------- */
/* Data room (headroom included) of the mbufs of a port of this MTU: a frame in one mbuf. */
uint16_t dpdk_pool_room(uint16_t mtu);
/* Default sizes of the receive (key mbufs) and transmit (key tx_mbufs) pools. */
uint32_t dpdk_pool_rx_default(uint16_t mtu);
uint32_t dpdk_pool_tx_default(uint16_t mtu);
/* A pktmbuf pool of n mbufs of room; NULL with rte_errno set. */
struct rte_mempool *dpdk_pool_make(const char *name, uint32_t n, uint16_t room, int socket);
/* Says once when the receive pool is empty, once when the send queues fill the transmit
 * pool. Lock held. */
void dpdk_pool_watch(struct dpdk_port *p, uint64_t now);

/* ---- dpdk_stats.c ---------------------------------------------------------------------- */
/* The port's record of the statistics file: taken at open (NULL when the file has no room),
 * refreshed by the pass when due (lock held), given back at close. */
struct rn_stats_port;
void dpdk_stats_open(struct dpdk_port *p);
void dpdk_stats_publish(struct dpdk_port *p, uint64_t now);
void dpdk_stats_close(struct dpdk_port *p);

/* ---- dpdk_telemetry.c ------------------------------------------------------------------ */
/* The /softrnic/ telemetry commands, once per process. */
void dpdk_telemetry_register(void);

/* ---- dpdk_poll.c ----------------------------------------------------------------------- */
/* The stack's transmit (net_if_cfg.tx): capture, linearise, burst with bounded retries. */
uint16_t dpdk_port_tx(void *arg, struct rte_mbuf **pkts, uint16_t n);

#endif
