/* The interface below TCP: Ethernet II, ARP (RFC 826: cache, requests, replies, expiry),
 * IPv4 (RFC 791/1122: header and checksum checks, TTL, fragments dropped and counted) and ICMP
 * echo replies (RFC 792), on DPDK mbufs. It knows nothing of TCP: upper protocols register an
 * input function per IP protocol number.
 *
 * Single-threaded like the stack that owns it (tcp/tcp.h). Addresses are in network byte
 * order (as in struct in_addr); everything else in host order. */
#ifndef NET_H
#define NET_H

#include <stdbool.h>
#include <stdint.h>

struct rte_mbuf;
struct rte_mempool;
struct net_if;

/* Room every mbuf handed to net_ip_output keeps in front of its data for the IPv4 and
 * Ethernet headers. Upper layers reserve it (RTE_PKTMBUF_HEADROOM is larger). */
#define NET_HDR_ROOM (14u + 20u)

/* Transmit a batch of frames; returns how many the port took (it frees those). */
typedef uint16_t (*net_tx_fn)(void *arg, struct rte_mbuf **pkts, uint16_t n);

struct net_if_cfg {
	uint8_t mac[6];
	uint32_t ip;           /* network order, not 0 */
	uint8_t prefix_len;    /* 1..32 */
	uint32_t gateway;      /* network order; 0 = none (only the subnet is reachable) */
	uint16_t mtu;          /* IP MTU; 0 = 1500; 576..64000 */
	struct rte_mempool *pool; /* mbufs for everything transmitted */
	net_tx_fn tx;
	void *tx_arg;
	/* Offloads the port offers (RTE_ETH_TX_OFFLOAD_*_CKSUM): set ol_flags instead of
	 * computing the checksum in software. */
	bool tx_ip_cksum, tx_tcp_cksum;
	/* The port checked checksums (RTE_MBUF_F_RX_*_CKSUM_GOOD is trusted). */
	bool rx_cksum;
	uint32_t arp_timeout_ms;  /* entry lifetime; 0 = 60000 */
	uint32_t arp_retry_ms;    /* request retransmission; 0 = 1000 */
	uint32_t arp_retries;     /* requests before giving up; 0 = 3 */
	uint64_t (*clock_ns)(void *arg); /* NULL = CLOCK_MONOTONIC */
	void *clock_arg;
};

/* What net hands an upper protocol with each packet. */
struct net_ip_info {
	uint32_t src, dst;     /* network order */
	uint16_t l4_len;       /* octets from the L4 header to the end of the IP payload */
	uint8_t proto, ttl, tos;
	bool l4_cksum_good;    /* the port verified the L4 checksum */
};
/* m's data starts at the L4 header; m->pkt_len == info->l4_len (link padding trimmed). The
 * callee owns m. */
typedef void (*net_l4_input_fn)(void *arg, struct rte_mbuf *m, const struct net_ip_info *info);
/* The peer cannot be reached (ARP gave up): the upper layer may fail connections to it. */
typedef void (*net_unreach_fn)(void *arg, uint32_t dst);

/* CLOCK_MONOTONIC in ns: the default clock_ns of net and of the TCP stack. */
uint64_t net_clock_monotonic_ns(void *arg);

int net_if_create(const struct net_if_cfg *cfg, struct net_if **out);
void net_if_destroy(struct net_if *nif);
/* Register the input for an IP protocol (IPPROTO_TCP ...); fn NULL removes it. Packets for
 * an unregistered protocol are dropped and counted. */
void net_if_set_l4(struct net_if *nif, uint8_t proto, net_l4_input_fn fn, void *arg);
void net_if_set_unreach(struct net_if *nif, net_unreach_fn fn, void *arg);

/* Received Ethernet frames; takes ownership of every mbuf. */
void net_if_input(struct net_if *nif, struct rte_mbuf **pkts, uint16_t n);
/* Send an IP packet whose payload (L4 header first) is m. Takes ownership of m. Resolves the
 * next hop through ARP (packets wait, a few per neighbour, while a request is out). Frames
 * are batched until net_if_flush. 0, -ENETUNREACH (off-link, no gateway), -EMSGSIZE (over
 * the MTU), -ENOBUFS (no mbuf, queue full: dropped and counted). */
int net_ip_output(struct net_if *nif, struct rte_mbuf *m, uint32_t dst, uint8_t proto);
/* Transmit the batched frames. */
void net_if_flush(struct net_if *nif);
/* ARP retries and expiry; ns until the next such event (UINT64_MAX none). */
uint64_t net_if_poll(struct net_if *nif);

/* Static neighbour (tests, or a peer whose MAC is known). */
int net_arp_add(struct net_if *nif, uint32_t ip, const uint8_t mac[6]);
/* true and the MAC when ip is resolved. */
bool net_arp_lookup(const struct net_if *nif, uint32_t ip, uint8_t mac[6]);

uint32_t net_if_ip(const struct net_if *nif);
uint16_t net_if_mtu(const struct net_if *nif);
void net_if_mac(const struct net_if *nif, uint8_t mac[6]);
struct rte_mempool *net_if_pool(const struct net_if *nif);
bool net_if_tx_tcp_cksum(const struct net_if *nif);
bool net_if_rx_cksum(const struct net_if *nif);
/* true when dst is on the subnet or a gateway is set (route lookup). */
bool net_if_reachable(const struct net_if *nif, uint32_t dst);

struct net_if_stats {
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes, tx_drops;
	uint64_t rx_not_for_us, rx_bad_eth, rx_unknown_ethertype;
	uint64_t arp_requests_in, arp_replies_in, arp_requests_out, arp_replies_out;
	uint64_t arp_unresolved_drops, arp_entries;
	uint64_t ip_in, ip_bad_hdr, ip_bad_cksum, ip_frag_drops, ip_not_for_us, ip_ttl_zero;
	uint64_t ip_unknown_proto, ip_out;
	uint64_t icmp_echo_in, icmp_echo_out, icmp_other_in;
};
void net_if_get_stats(const struct net_if *nif, struct net_if_stats *st);

#endif
