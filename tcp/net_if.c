/* The interface object: configuration, protocol registration, the transmit batch, upkeep
 * and counters (tcp/net.h). Frame parsing lives in net_eth/arp/ipv4/icmp.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include "net_int.h"

uint64_t net_clock_monotonic_ns(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t net_now(const struct net_if *nif)
{
	return nif->cfg.clock_ns(nif->cfg.clock_arg);
}

static int net_cfg_check(const struct net_if_cfg *c)
{
	static const uint8_t zero[6];

	if (c->ip == 0 || c->prefix_len < 1 || c->prefix_len > 32)
		return -EINVAL;
	if (c->mtu != 0 && (c->mtu < 576 || c->mtu > 64000))
		return -EINVAL;
	if (c->pool == NULL || c->tx == NULL)
		return -EINVAL;
	/* A group (multicast) or all-zero source MAC cannot be ours. */
	if ((c->mac[0] & 1u) != 0 || memcmp(c->mac, zero, 6) == 0)
		return -EINVAL;
	return 0;
}

int net_if_create(const struct net_if_cfg *cfg, struct net_if **out)
{
	struct net_if *nif;
	int rc;

	if (cfg == NULL || out == NULL)
		return -EINVAL;
	rc = net_cfg_check(cfg);
	if (rc != 0)
		return rc;
	nif = calloc(1, sizeof(*nif));
	if (nif == NULL)
		return -ENOMEM;
	nif->cfg = *cfg;
	if (nif->cfg.mtu == 0)
		nif->cfg.mtu = 1500;
	if (nif->cfg.arp_timeout_ms == 0)
		nif->cfg.arp_timeout_ms = 60000;
	if (nif->cfg.arp_retry_ms == 0)
		nif->cfg.arp_retry_ms = 1000;
	if (nif->cfg.arp_retries == 0)
		nif->cfg.arp_retries = 3;
	if (nif->cfg.arp_retries > 255)
		nif->cfg.arp_retries = 255;
	if (nif->cfg.clock_ns == NULL)
		nif->cfg.clock_ns = net_clock_monotonic_ns;
	nif->mask = rte_cpu_to_be_32(cfg->prefix_len == 32 ? 0xffffffffu
					 : ~(0xffffffffu >> cfg->prefix_len));
	nif->next_arp_ns = UINT64_MAX;
	/* Start the IP ID somewhere unpredictable-ish: a restarted stack does not repeat the
	 * IDs of its previous life to the same peer (RFC 6864 4.1 asks little of atomic
	 * datagrams, this is cheap). */
	nif->ip_id = (uint16_t)net_clock_monotonic_ns(NULL);
	*out = nif;
	return 0;
}

void net_if_destroy(struct net_if *nif)
{
	if (nif == NULL)
		return;
	/* Last frames out (an engine's closing RSTs); refused ones are freed by the flush. */
	net_if_flush(nif);
	net_arp_flush_all(nif);
	free(nif);
}

void net_if_set_l4(struct net_if *nif, uint8_t proto, net_l4_input_fn fn, void *arg)
{
	nif->l4[proto].fn = fn;
	nif->l4[proto].arg = fn != NULL ? arg : NULL;
}

void net_if_set_unreach(struct net_if *nif, net_unreach_fn fn, void *arg)
{
	nif->unreach = fn;
	nif->unreach_arg = arg;
}

void net_if_input(struct net_if *nif, struct rte_mbuf **pkts, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		nif->st.rx_frames++;
		nif->st.rx_bytes += rte_pktmbuf_pkt_len(pkts[i]);
		net_eth_input(nif, pkts[i]);
	}
}

void net_if_queue(struct net_if *nif, struct rte_mbuf *m)
{
	if (nif->ntx == NET_TX_BATCH)
		net_if_flush(nif);
	nif->txq[nif->ntx++] = m;
}

void net_if_flush(struct net_if *nif)
{
	uint16_t sent, n = nif->ntx;
	uint64_t bytes = 0;

	if (n == 0)
		return;
	/* Lengths first: the port owns (and may free) what it takes. */
	for (uint16_t i = 0; i < n; i++)
		bytes += rte_pktmbuf_pkt_len(nif->txq[i]);
	sent = nif->cfg.tx(nif->cfg.tx_arg, nif->txq, n);
	if (sent > n)
		sent = n;
	for (uint16_t i = sent; i < n; i++) {
		bytes -= rte_pktmbuf_pkt_len(nif->txq[i]);
		rte_pktmbuf_free(nif->txq[i]);
	}
	nif->st.tx_frames += sent;
	nif->st.tx_bytes += bytes;
	nif->st.tx_drops += (uint64_t)(n - sent);
	nif->ntx = 0;
}

uint64_t net_if_poll(struct net_if *nif)
{
	uint64_t now = net_now(nif), next;

	if (now >= nif->next_arp_ns)
		nif->next_arp_ns = net_arp_poll(nif, now);
	next = nif->next_arp_ns;
	return next == UINT64_MAX ? UINT64_MAX : (next > now ? next - now : 0);
}

uint32_t net_if_ip(const struct net_if *nif)
{
	return nif->cfg.ip;
}

uint16_t net_if_mtu(const struct net_if *nif)
{
	return nif->cfg.mtu;
}

void net_if_mac(const struct net_if *nif, uint8_t mac[6])
{
	memcpy(mac, nif->cfg.mac, 6);
}

struct rte_mempool *net_if_pool(const struct net_if *nif)
{
	return nif->cfg.pool;
}

bool net_if_tx_tcp_cksum(const struct net_if *nif)
{
	return nif->cfg.tx_tcp_cksum;
}

bool net_if_rx_cksum(const struct net_if *nif)
{
	return nif->cfg.rx_cksum;
}

bool net_if_reachable(const struct net_if *nif, uint32_t dst)
{
	if ((dst & nif->mask) == (nif->cfg.ip & nif->mask))
		return true;
	return nif->cfg.gateway != 0;
}

void net_if_get_stats(const struct net_if *nif, struct net_if_stats *st)
{
	*st = nif->st;
	st->arp_entries = net_arp_count(nif);
}
