/* TCP header parse and build on mbufs (RFC 9293 3.1). Checksums are one's-complement sums in
 * memory order (as DPDK's rte_raw_cksum computes them) over the IPv4 pseudo-header and the
 * whole segment, following mbuf chains. */
#include "tcp_segment.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

/* The IPv4 pseudo-header (RFC 9293 3.1) as it sits in memory. */
struct pseudo_hdr {
	uint32_t src, dst;
	uint8_t zero, proto;
	uint16_t len;
} __attribute__((packed));

static uint32_t pseudo_sum(uint32_t src, uint32_t dst, uint32_t l4_len)
{
	struct pseudo_hdr ph = {
		.src = src, .dst = dst, .zero = 0, .proto = IPPROTO_TCP,
		.len = rte_cpu_to_be_16((uint16_t)l4_len),
	};
	return rte_raw_cksum(&ph, sizeof(ph));
}

static uint16_t fold(uint32_t sum)
{
	sum = (sum >> 16) + (sum & 0xffff);
	sum = (sum >> 16) + (sum & 0xffff);
	return (uint16_t)sum;
}

/* The checksum field of a segment left to an offload: the pseudo-header's sum alone
 * (rte_ipv4_phdr_cksum's convention, and Linux's for CHECKSUM_PARTIAL). tcp_seg_build writes
 * it, tcp_seg_parse recognises it. */
static uint16_t offload_field(uint32_t src, uint32_t dst, uint32_t l4_len)
{
	return fold(pseudo_sum(src, dst, l4_len));
}

/* One's-complement sum over the chain. Not rte_raw_cksum_mbuf: in DPDK 22.11 it byte-swaps
 * an unreduced 32-bit partial sum after an odd-length segment and gets chains wrong. A
 * segment starting at an odd offset contributes its sum byte-swapped (RFC 1071 2(B)). */
static int chain_sum(const struct rte_mbuf *m, uint32_t len, uint16_t *out)
{
	uint32_t sum = 0, done = 0;
	for (const struct rte_mbuf *seg = m; seg != NULL && done < len; seg = seg->next) {
		uint32_t n = rte_pktmbuf_data_len(seg);
		if (n > len - done)
			n = len - done;
		uint16_t part = rte_raw_cksum(rte_pktmbuf_mtod(seg, const void *), n);
		if (done & 1)
			part = rte_bswap16(part);
		sum += part;
		done += n;
	}
	if (done != len)
		return -EINVAL; /* the chain is shorter than pkt_len says */
	*out = fold(sum);
	return 0;
}

/* Sum over the pseudo-header and the whole segment; a correct segment sums to 0xffff. */
static int segment_sum(const struct rte_mbuf *m, uint32_t src, uint32_t dst, uint16_t *out)
{
	uint16_t raw;
	if (chain_sum(m, m->pkt_len, &raw) != 0)
		return -EINVAL;
	*out = fold((uint32_t)raw + pseudo_sum(src, dst, m->pkt_len));
	return 0;
}

static void fill_from_header(const struct rte_tcp_hdr *th, struct tcp_seg *seg)
{
	seg->sport = rte_be_to_cpu_16(th->src_port);
	seg->dport = rte_be_to_cpu_16(th->dst_port);
	seg->seq = rte_be_to_cpu_32(th->sent_seq);
	seg->ack = rte_be_to_cpu_32(th->recv_ack);
	seg->wnd = rte_be_to_cpu_16(th->rx_win);
	seg->urp = rte_be_to_cpu_16(th->tcp_urp);
	seg->flags = th->tcp_flags;
	seg->hdr_len = (uint8_t)((th->data_off >> 4) * 4);
}

int tcp_seg_parse(const struct rte_mbuf *m, const struct net_ip_info *info, struct tcp_seg *seg)
{
	memset(seg, 0, sizeof(*seg));
	uint32_t len = m->pkt_len;
	if (len < TCP_HDR_LEN || len > UINT16_MAX || len != info->l4_len)
		return -EINVAL;
	/* The header may straddle segments of a chain: copy it out when it does. */
	uint8_t buf[TCP_HDR_LEN + TCP_OPT_MAX_LEN];
	const struct rte_tcp_hdr *th = rte_pktmbuf_read(m, 0, TCP_HDR_LEN, buf);
	if (th == NULL)
		return -EINVAL;
	seg->src = info->src;
	seg->dst = info->dst;
	fill_from_header(th, seg);
	if (seg->hdr_len < TCP_HDR_LEN || seg->hdr_len > len)
		return -EINVAL;
	if (!info->l4_cksum_good) {
		uint16_t sum;
		if (segment_sum(m, info->src, info->dst, &sum) != 0)
			return -EINVAL;
		if (sum != 0xffff) {
			seg->csum_partial = th->cksum == offload_field(info->src, info->dst, len);
			return -EBADMSG;
		}
	}
	seg->payload_len = len - seg->hdr_len;
	seg->seg_len = seg->payload_len + !!(seg->flags & TCP_F_SYN) + !!(seg->flags & TCP_F_FIN);
	uint32_t olen = seg->hdr_len - TCP_HDR_LEN;
	if (olen) {
		const uint8_t *opt = rte_pktmbuf_read(m, 0, seg->hdr_len, buf);
		if (opt == NULL)
			return -EINVAL;
		seg->opts_bad = tcp_opt_parse(opt + TCP_HDR_LEN, olen, (seg->flags & TCP_F_SYN) != 0,
					      &seg->opts) != 0;
	}
	return 0;
}

int tcp_seg_build(struct rte_mbuf *m, const struct tcp_seg_out *o)
{
	uint8_t opts[TCP_OPT_MAX_LEN];
	size_t olen = o->opts ? tcp_opt_build(o->opts, opts) : 0;
	uint16_t hlen = (uint16_t)(TCP_HDR_LEN + olen);
	if ((uint64_t)m->pkt_len + hlen > UINT16_MAX)
		return -EMSGSIZE;
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)rte_pktmbuf_prepend(m, hlen);
	if (th == NULL)
		return -ENOSPC;
	th->src_port = rte_cpu_to_be_16(o->sport);
	th->dst_port = rte_cpu_to_be_16(o->dport);
	th->sent_seq = rte_cpu_to_be_32(o->seq);
	th->recv_ack = rte_cpu_to_be_32(o->ack);
	th->data_off = (uint8_t)((hlen / 4) << 4);
	th->tcp_flags = o->flags;
	th->rx_win = rte_cpu_to_be_16(o->wnd);
	th->cksum = 0;
	th->tcp_urp = 0;
	memcpy(th + 1, opts, olen);
	m->l4_len = hlen;
	if (o->cksum_offload) {
		/* The port completes the sum. net sets RTE_MBUF_F_TX_IPV4, l2/l3_len. */
		th->cksum = offload_field(o->src, o->dst, m->pkt_len);
		m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;
		return 0;
	}
	uint16_t sum;
	if (segment_sum(m, o->src, o->dst, &sum) != 0)
		return -EINVAL;
	th->cksum = (uint16_t)~sum;
	return 0;
}
