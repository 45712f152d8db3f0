/* ICMP (RFC 792): echo requests are answered in place (the request's mbuf becomes the
 * reply); every other ICMP message goes to the IPPROTO_ICMP input when one is registered
 * (softrnic-port --ping counts echo replies that way), else it is counted and dropped. */
#include <netinet/in.h>
#include <string.h>

#include <rte_icmp.h>
#include <rte_mbuf.h>

#include "net_int.h"

static void net_icmp_echo(struct net_if *nif, struct rte_mbuf *m, const struct net_ip_info *in)
{
	struct rte_icmp_hdr *h = rte_pktmbuf_mtod(m, struct rte_icmp_hdr *);

	nif->st.icmp_echo_in++;
	/* Broadcast pings go unanswered (Linux: icmp_echo_ignore_broadcasts). */
	if (in->dst != nif->cfg.ip) {
		rte_pktmbuf_free(m);
		return;
	}
	/* The receive flags (checksum status, VLAN, RSS) mean nothing on the way out. */
	m->ol_flags = 0;
	h->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	h->icmp_code = 0;
	h->icmp_cksum = 0;
	/* Over the whole message, which may span a chain. */
	h->icmp_cksum = (uint16_t)~net_cksum_mbuf(m, 0, rte_pktmbuf_pkt_len(m));
	if (net_ip_output(nif, m, in->src, IPPROTO_ICMP) == 0)
		nif->st.icmp_echo_out++;
}

void net_icmp_input(struct net_if *nif, struct rte_mbuf *m, const struct net_ip_info *in)
{
	const struct net_l4_slot *s = &nif->l4[IPPROTO_ICMP];
	const struct rte_icmp_hdr *h;

	if (in->l4_len < sizeof(struct rte_icmp_hdr) ||
	    rte_pktmbuf_data_len(m) < sizeof(struct rte_icmp_hdr)) {
		nif->st.ip_bad_hdr++;
		rte_pktmbuf_free(m);
		return;
	}
	if (net_cksum_mbuf(m, 0, in->l4_len) != 0xffff) {
		nif->st.ip_bad_cksum++;
		rte_pktmbuf_free(m);
		return;
	}
	h = rte_pktmbuf_mtod(m, const struct rte_icmp_hdr *);
	if (h->icmp_type == RTE_IP_ICMP_ECHO_REQUEST && h->icmp_code == 0) {
		net_icmp_echo(nif, m, in);
		return;
	}
	nif->st.icmp_other_in++;
	if (s->fn != NULL)
		s->fn(s->arg, m, in);
	else
		rte_pktmbuf_free(m);
}
