/* Ethernet II framing: accept frames for our MAC or broadcast, dispatch by EtherType, and
 * prepend the header on output. VLAN tags are not handled (unknown EtherType). */
#include <errno.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "net_int.h"

static bool net_eth_for_us(const struct net_if *nif, const struct rte_ether_hdr *eh)
{
	if (memcmp(eh->dst_addr.addr_bytes, nif->cfg.mac, 6) == 0)
		return true;
	/* Broadcast carries ARP requests; other group addresses are nobody's here. */
	return rte_is_broadcast_ether_addr(&eh->dst_addr);
}

void net_eth_input(struct net_if *nif, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh;
	uint16_t type;

	/* The header must sit in the first segment (every PMD delivers it so). */
	if (rte_pktmbuf_data_len(m) < NET_ETH_HLEN) {
		nif->st.rx_bad_eth++;
		rte_pktmbuf_free(m);
		return;
	}
	eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (!net_eth_for_us(nif, eh)) {
		nif->st.rx_not_for_us++;
		rte_pktmbuf_free(m);
		return;
	}
	type = rte_be_to_cpu_16(eh->ether_type);
	switch (type) {
	case RTE_ETHER_TYPE_ARP:
		net_arp_input(nif, m);
		break;
	case RTE_ETHER_TYPE_IPV4:
		net_ipv4_input(nif, m);
		break;
	default:
		nif->st.rx_unknown_ethertype++;
		rte_pktmbuf_free(m);
		break;
	}
}

int net_eth_output(struct net_if *nif, struct rte_mbuf *m, const uint8_t dst[6],
		   uint16_t ether_type)
{
	struct rte_ether_hdr *eh;

	eh = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, NET_ETH_HLEN);
	if (eh == NULL) {
		nif->st.tx_drops++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	memcpy(eh->dst_addr.addr_bytes, dst, 6);
	memcpy(eh->src_addr.addr_bytes, nif->cfg.mac, 6);
	eh->ether_type = rte_cpu_to_be_16(ether_type);
	m->l2_len = NET_ETH_HLEN;
	net_if_queue(nif, m);
	return 0;
}
