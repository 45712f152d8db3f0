/* Private to the net_*.c files: the interface object, the ARP table, and the calls between
 * the Ethernet, ARP, IPv4 and ICMP parts (tcp/net.h is the public side). */
#ifndef NET_INT_H
#define NET_INT_H

#include <stdint.h>

#include "net.h"

/* ARP table: NET_ARP_BUCKETS buckets of NET_ARP_WAYS entries (256 neighbours). A bucket is
 * scanned linearly; no tombstones, no rehash. A full bucket evicts its oldest dynamic
 * reachable entry, never a static one or one with packets waiting. */
#define NET_ARP_BUCKETS 32u
#define NET_ARP_WAYS 8u
#define NET_ARP_SIZE (NET_ARP_BUCKETS * NET_ARP_WAYS)
/* Packets held per unresolved neighbour: Linux's default (unres_qlen_bytes 212992 holds 101
 * frames), so that a burst of connects to a neighbour not yet resolved (100 SYNs at once)
 * waits for the reply instead of losing SYNs to a 1 s retransmission. All unresolved
 * neighbours together hold at most NET_ARP_HOLD_ALL, so they cannot drain the transmit pool. */
#define NET_ARP_HOLD 101u
#define NET_ARP_HOLD_ALL 512u
/* Frames batched before an automatic flush. */
#define NET_TX_BATCH 64u

#define NET_ETH_HLEN 14u
#define NET_IP_HLEN 20u
#define NET_ARP_PLEN 28u
#define NET_IP_TTL 64u

enum net_arp_state {
	NET_ARP_FREE = 0,
	NET_ARP_INCOMPLETE, /* request out, packets may wait in hold[] */
	NET_ARP_REACHABLE,  /* mac valid until deadline_ns (static: forever); an entry in use
			     * is re-validated then (requests while still used), others freed */
};

struct net_arp_entry {
	uint32_t ip;              /* network order */
	uint8_t mac[6];
	uint8_t state;            /* enum net_arp_state */
	uint8_t is_static;
	uint8_t tries;            /* requests sent (INCOMPLETE, or re-validating) */
	uint8_t nhold;
	uint8_t used;             /* REACHABLE: a packet went to it since it was learned */
	uint64_t deadline_ns;     /* REACHABLE: expiry; INCOMPLETE: next retry */
	struct rte_mbuf *hold[NET_ARP_HOLD]; /* IP packets (no Ethernet header yet) */
};

struct net_l4_slot {
	net_l4_input_fn fn;
	void *arg;
};

struct net_if {
	struct net_if_cfg cfg;    /* defaults filled in */
	uint32_t mask;            /* network order */
	uint16_t ip_id;
	uint64_t next_arp_ns;     /* earliest ARP deadline (UINT64_MAX: none) */
	struct net_arp_entry arp[NET_ARP_SIZE];
	struct net_l4_slot l4[256];
	net_unreach_fn unreach;
	void *unreach_arg;
	struct rte_mbuf *txq[NET_TX_BATCH];
	uint16_t ntx;
	unsigned arp_held;        /* packets in every entry's hold[] */
	struct net_if_stats st;
};

uint64_t net_now(const struct net_if *nif);

/* net_eth.c: prepend the Ethernet header (dst, our source, type in host order) and queue
 * the frame for net_if_flush; m is consumed either way. */
int net_eth_output(struct net_if *nif, struct rte_mbuf *m, const uint8_t dst[6],
		   uint16_t ether_type);
void net_eth_input(struct net_if *nif, struct rte_mbuf *m);
/* net_if.c: queue a complete frame; flushes when the batch is full. */
void net_if_queue(struct net_if *nif, struct rte_mbuf *m);

/* net_arp.c */
void net_arp_input(struct net_if *nif, struct rte_mbuf *m);
/* Send m (an IP packet) to next hop nh: now when resolved, else held while ARP asks. */
int net_arp_output(struct net_if *nif, struct rte_mbuf *m, uint32_t nh);
uint64_t net_arp_poll(struct net_if *nif, uint64_t now);
void net_arp_flush_all(struct net_if *nif);
unsigned net_arp_count(const struct net_if *nif);

/* net_ipv4.c */
void net_ipv4_input(struct net_if *nif, struct rte_mbuf *m);
uint16_t net_cksum_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len);

/* net_icmp.c: m's data at the ICMP header. */
void net_icmp_input(struct net_if *nif, struct rte_mbuf *m, const struct net_ip_info *info);

#endif
