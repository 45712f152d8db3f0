/* softrnic-tcp --stats: the stack's, the interface's, the port's and the connections'
 * counters at the end of a run (one "stats:" line each, key=value). */
#include <inttypes.h>
#include <stdio.h>

#include "stcp_eng.h"

static void print_stack(struct tcp_stack *s)
{
	struct tcp_stack_stats t;
	tcp_stack_get_stats(s, &t);
	printf("stats: tcp active_opens=%" PRIu64 " passive_opens=%" PRIu64
	       " attempt_fails=%" PRIu64 " estab_resets=%" PRIu64 " in_segs=%" PRIu64
	       " out_segs=%" PRIu64 " retrans_segs=%" PRIu64 " fast_retrans=%" PRIu64
	       " rto_expiries=%" PRIu64 " in_errs=%" PRIu64 " in_csum_errs=%" PRIu64
	       " in_csum_partial=%" PRIu64 " out_rsts=%" PRIu64 " in_rsts=%" PRIu64
	       " challenge_acks=%" PRIu64 " paws_drops=%" PRIu64 " ooo_segs=%" PRIu64
	       " ooo_drops=%" PRIu64 " acks_compressed=%" PRIu64 " dup_segs=%" PRIu64
	       " syn_backlog_drops=%" PRIu64 " no_port_rsts=%" PRIu64
	       " syncookies_sent=%" PRIu64 " syncookies_ok=%" PRIu64
	       " syncookies_failed=%" PRIu64 " cur_conns=%" PRIu64 " time_wait=%" PRIu64 "\n",
	       t.active_opens, t.passive_opens, t.attempt_fails, t.estab_resets, t.in_segs,
	       t.out_segs, t.retrans_segs, t.fast_retrans, t.rto_expiries, t.in_errs,
	       t.in_csum_errs, t.in_csum_partial, t.out_rsts, t.in_rsts, t.challenge_acks,
	       t.paws_drops, t.ooo_segs, t.ooo_drops, t.acks_compressed, t.dup_segs,
	       t.syn_backlog_drops, t.no_port_rsts,
	       t.syncookies_sent, t.syncookies_ok, t.syncookies_failed, t.cur_conns, t.time_wait);
}

static void print_netif(struct net_if *nif)
{
	struct net_if_stats n;
	net_if_get_stats(nif, &n);
	printf("stats: net rx_frames=%" PRIu64 " rx_bytes=%" PRIu64 " tx_frames=%" PRIu64
	       " tx_bytes=%" PRIu64 " tx_drops=%" PRIu64 " rx_not_for_us=%" PRIu64
	       " rx_bad_eth=%" PRIu64 " arp_requests_in=%" PRIu64 " arp_replies_in=%" PRIu64
	       " arp_requests_out=%" PRIu64 " arp_replies_out=%" PRIu64
	       " arp_unresolved_drops=%" PRIu64 " ip_in=%" PRIu64 " ip_bad_hdr=%" PRIu64
	       " ip_bad_cksum=%" PRIu64 " ip_frag_drops=%" PRIu64 " ip_not_for_us=%" PRIu64
	       " ip_unknown_proto=%" PRIu64 " ip_out=%" PRIu64 " icmp_echo_in=%" PRIu64
	       " icmp_echo_out=%" PRIu64 "\n",
	       n.rx_frames, n.rx_bytes, n.tx_frames, n.tx_bytes, n.tx_drops, n.rx_not_for_us,
	       n.rx_bad_eth, n.arp_requests_in, n.arp_replies_in, n.arp_requests_out,
	       n.arp_replies_out, n.arp_unresolved_drops, n.ip_in, n.ip_bad_hdr, n.ip_bad_cksum,
	       n.ip_frag_drops, n.ip_not_for_us, n.ip_unknown_proto, n.ip_out, n.icmp_echo_in,
	       n.icmp_echo_out);
}

static void print_port(struct dpdk_port *p)
{
	struct dpdk_port_stats s;
	dpdk_port_get_stats(p, &s);
	printf("stats: port rx_bursts=%" PRIu64 " rx_pkts=%" PRIu64 " rx_bytes=%" PRIu64
	       " tx_pkts=%" PRIu64 " tx_bytes=%" PRIu64 " tx_full_drops=%" PRIu64
	       " polls=%" PRIu64 " naps=%" PRIu64 " pcap_frames=%" PRIu64
	       " eth_ipackets=%" PRIu64 " eth_opackets=%" PRIu64 " eth_ierrors=%" PRIu64
	       " eth_oerrors=%" PRIu64 " eth_imissed=%" PRIu64 "\n",
	       s.rx_bursts, s.rx_pkts, s.rx_bytes, s.tx_pkts, s.tx_bytes, s.tx_full_drops,
	       s.polls, s.naps, s.pcap_frames, s.eth_ipackets, s.eth_opackets, s.eth_ierrors,
	       s.eth_oerrors, s.eth_imissed);
}

/* Sums over connections, plus the first connection's negotiated parameters. */
static void print_conns(struct eng_app *a)
{
	uint64_t segs_out = 0, segs_in = 0, retrans = 0, fast = 0, rto = 0, ooo = 0, dup = 0;
	uint64_t dsacks = 0, undos = 0;
	uint64_t zc_done = 0, zc_errs = 0;
	const struct tcp_conn_stats *first = NULL;
	for (uint32_t i = 0; i < a->o.conns; i++) {
		struct eng_conn *x = &a->cx[i];
		zc_done += x->zc_done;
		zc_errs += x->zc_errs;
		if (x->c) {  /* still open (timeout): take a fresh snapshot */
			tcp_conn_get_stats(x->c, &x->st);
			x->have_st = true;
		}
		if (!x->have_st)
			continue;
		first = first ? first : &x->st;
		segs_out += x->st.segs_out;
		segs_in += x->st.segs_in;
		retrans += x->st.retrans;
		fast += x->st.fast_retrans;
		rto += x->st.rto_expiries;
		ooo += x->st.ooo_segs;
		dup += x->st.dup_acks;
		dsacks += x->st.dsacks;
		undos += x->st.undos;
	}
	printf("stats: conns segs_out=%" PRIu64 " segs_in=%" PRIu64 " retrans=%" PRIu64
	       " fast_retrans=%" PRIu64 " rto_expiries=%" PRIu64 " ooo_segs=%" PRIu64
	       " dup_acks=%" PRIu64 " dsacks=%" PRIu64 " undos=%" PRIu64 "\n",
	       segs_out, segs_in, retrans, fast, rto, ooo, dup, dsacks, undos);
	if (a->o.zc)
		printf("stats: zc done=%" PRIu64 " errors=%" PRIu64 "\n", zc_done, zc_errs);
	if (first)
		printf("stats: conn0 snd_mss=%u rcv_mss=%u snd_wscale=%u rcv_wscale=%u sack=%d "
		       "ts=%d cwnd=%u ssthresh=%u srtt_us=%u rttvar_us=%u rto_us=%u\n",
		       first->snd_mss, first->rcv_mss, first->snd_wscale, first->rcv_wscale,
		       first->sack_ok, first->ts_ok, first->cwnd, first->ssthresh, first->srtt_us,
		       first->rttvar_us, first->rto_us);
}

void eng_print_stats(struct eng_app *a)
{
	print_stack(a->stack);
	print_netif(tcp_stack_netif(a->stack));
	print_port(a->port);
	print_conns(a);
}
