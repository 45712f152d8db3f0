/* IPv4 (RFC 791, RFC 1122 3.2.1): input checks and dispatch to the upper protocols, and
 * output with route choice, header and checksum. No fragmentation either way: fragments
 * are dropped and counted, output sets DF and refuses packets over the MTU (the TCP above
 * keeps its segments under it). */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "net_int.h"

uint16_t net_cksum_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	uint16_t sum = 0;

	if (rte_raw_cksum_mbuf(m, off, len, &sum) != 0)
		return 0; /* never the 0xffff a good checksum folds to */
	return sum;
}

/* Header checks; the header is contiguous (checked). 0 or the counter to bump. */
static uint64_t *net_ipv4_check(struct net_if *nif, const struct rte_mbuf *m,
				const struct rte_ipv4_hdr *ip, uint32_t *hlen, uint32_t *tlen)
{
	uint32_t avail = rte_pktmbuf_pkt_len(m) - NET_ETH_HLEN;
	uint64_t flags = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;

	*hlen = (uint32_t)(ip->version_ihl & 0x0fu) * 4u;
	*tlen = rte_be_to_cpu_16(ip->total_length);
	if ((ip->version_ihl >> 4) != 4 || *hlen < NET_IP_HLEN ||
	    rte_pktmbuf_data_len(m) < NET_ETH_HLEN + *hlen || *tlen < *hlen || *tlen > avail)
		return &nif->st.ip_bad_hdr;
	if (nif->cfg.rx_cksum && flags == RTE_MBUF_F_RX_IP_CKSUM_BAD)
		return &nif->st.ip_bad_cksum;
	if (!(nif->cfg.rx_cksum && flags == RTE_MBUF_F_RX_IP_CKSUM_GOOD) &&
	    rte_raw_cksum(ip, *hlen) != 0xffff)
		return &nif->st.ip_bad_cksum;
	/* MF set or a non-zero offset: a fragment. Reassembly is not offered. */
	if ((ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG |
						   RTE_IPV4_HDR_OFFSET_MASK)) != 0)
		return &nif->st.ip_frag_drops;
	/* No router lets TTL 0 through; such a datagram is forged or broken. */
	if (ip->time_to_live == 0)
		return &nif->st.ip_ttl_zero;
	/* A broadcast or multicast source must never be answered (RFC 1122 3.2.1.3). */
	if (ip->src_addr == 0xffffffffu || (rte_be_to_cpu_32(ip->src_addr) >> 28) == 0xe)
		return &nif->st.ip_bad_hdr;
	if (ip->dst_addr != nif->cfg.ip && ip->dst_addr != 0xffffffffu &&
	    ip->dst_addr != (nif->cfg.ip | ~nif->mask))
		return &nif->st.ip_not_for_us;
	return NULL;
}

static void net_ipv4_deliver(struct net_if *nif, struct rte_mbuf *m, struct net_ip_info *in)
{
	const struct net_l4_slot *s = &nif->l4[in->proto];

	if (in->proto == IPPROTO_ICMP) {
		net_icmp_input(nif, m, in);
		return;
	}
	if (s->fn == NULL) {
		nif->st.ip_unknown_proto++;
		rte_pktmbuf_free(m);
		return;
	}
	s->fn(s->arg, m, in);
}

void net_ipv4_input(struct net_if *nif, struct rte_mbuf *m)
{
	const struct rte_ipv4_hdr *ip;
	struct net_ip_info in;
	uint32_t hlen, tlen;
	uint64_t *bad, l4f;

	if (rte_pktmbuf_data_len(m) < NET_ETH_HLEN + NET_IP_HLEN) {
		nif->st.ip_bad_hdr++;
		rte_pktmbuf_free(m);
		return;
	}
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, NET_ETH_HLEN);
	bad = net_ipv4_check(nif, m, ip, &hlen, &tlen);
	if (bad != NULL) {
		(*bad)++;
		rte_pktmbuf_free(m);
		return;
	}
	memset(&in, 0, sizeof(in));
	in.src = ip->src_addr;
	in.dst = ip->dst_addr;
	in.proto = ip->next_proto_id;
	in.ttl = ip->time_to_live;
	in.tos = ip->type_of_service;
	in.l4_len = (uint16_t)(tlen - hlen);
	l4f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	in.l4_cksum_good = nif->cfg.rx_cksum && l4f == RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	/* Ethernet pads short frames: the IP total length is the truth. Trimming works within
	 * the last segment only; padding spread over segments is not something a port makes. */
	if (rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - NET_ETH_HLEN - tlen)) != 0) {
		nif->st.ip_bad_hdr++;
		rte_pktmbuf_free(m);
		return;
	}
	nif->st.ip_in++;
	rte_pktmbuf_adj(m, (uint16_t)(NET_ETH_HLEN + hlen));
	m->l2_len = NET_ETH_HLEN;
	m->l3_len = hlen;
	net_ipv4_deliver(nif, m, &in);
}

/* Next hop for dst, or 0 when there is no route. */
static uint32_t net_ipv4_route(const struct net_if *nif, uint32_t dst)
{
	if (dst == 0xffffffffu || (dst & nif->mask) == (nif->cfg.ip & nif->mask))
		return dst;
	return nif->cfg.gateway;
}

static void net_ipv4_fill(struct net_if *nif, struct rte_mbuf *m, struct rte_ipv4_hdr *ip,
			  uint32_t dst, uint8_t proto)
{
	ip->version_ihl = 0x45;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)rte_pktmbuf_pkt_len(m));
	ip->packet_id = rte_cpu_to_be_16(nif->ip_id++);
	/* DF: path MTU discovery style; nothing here fragments. */
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = NET_IP_TTL;
	ip->next_proto_id = proto;
	ip->hdr_checksum = 0;
	ip->src_addr = nif->cfg.ip;
	ip->dst_addr = dst;
	m->l2_len = NET_ETH_HLEN;
	m->l3_len = NET_IP_HLEN;
	if (nif->cfg.tx_ip_cksum)
		m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
	else
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	/* Any checksum offload needs the packet type flag (the L4 one is set by TCP). */
	if (m->ol_flags & (RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK))
		m->ol_flags |= RTE_MBUF_F_TX_IPV4;
}

int net_ip_output(struct net_if *nif, struct rte_mbuf *m, uint32_t dst, uint8_t proto)
{
	struct rte_ipv4_hdr *ip;
	uint32_t nh = net_ipv4_route(nif, dst);
	int rc;

	if (dst == 0 || nh == 0) {
		rte_pktmbuf_free(m);
		return dst == 0 ? -EINVAL : -ENETUNREACH;
	}
	if (rte_pktmbuf_pkt_len(m) + NET_IP_HLEN > nif->cfg.mtu) {
		rte_pktmbuf_free(m);
		return -EMSGSIZE;
	}
	ip = (struct rte_ipv4_hdr *)rte_pktmbuf_prepend(m, NET_IP_HLEN);
	if (ip == NULL) {
		/* The caller left less than NET_HDR_ROOM in front. */
		nif->st.tx_drops++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	net_ipv4_fill(nif, m, ip, dst, proto);
	rc = net_arp_output(nif, m, nh);
	if (rc == 0)
		nif->st.ip_out++;
	return rc;
}
