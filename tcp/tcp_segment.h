/* TCP segments on mbufs (RFC 9293 3.1): parsing an incoming header with every length and
 * checksum check, and building an outgoing header with options and checksum. No connection
 * state here. */
#ifndef TCP_SEGMENT_H
#define TCP_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "net.h"
#include "tcp_opt.h"

struct rte_mbuf;

#define TCP_F_FIN 0x01u
#define TCP_F_SYN 0x02u
#define TCP_F_RST 0x04u
#define TCP_F_PSH 0x08u
#define TCP_F_ACK 0x10u
#define TCP_F_URG 0x20u
#define TCP_F_ECE 0x40u
#define TCP_F_CWR 0x80u

#define TCP_HDR_LEN 20u
/* Headroom an mbuf needs in front of its payload for TCP + options + IPv4 + Ethernet. */
#define TCP_SEG_HDR_ROOM (TCP_HDR_LEN + TCP_OPT_MAX_LEN + NET_HDR_ROOM)

struct tcp_seg {
	uint32_t src, dst;        /* IPv4, network order (from net_ip_info) */
	uint16_t sport, dport;    /* host order */
	uint32_t seq, ack;
	uint16_t wnd;             /* as on the wire (not scaled) */
	uint16_t urp;
	uint8_t flags;            /* TCP_F_* */
	uint8_t hdr_len;          /* 20..60 */
	uint32_t payload_len;     /* octets after the header */
	uint32_t seg_len;         /* payload_len + SYN + FIN (RFC 9293 SEG.LEN) */
	bool opts_bad;            /* the options area is malformed (tcp_opt_parse failed) */
	bool csum_partial;        /* -EBADMSG, and the field holds just the pseudo-header's sum */
	struct tcp_opts opts;
};

/* m's data starts at the TCP header (as net delivers it). 0, -EINVAL (shorter than 20 octets,
 * data offset below 5 or past the packet), -EBADMSG (checksum wrong; skipped when
 * info->l4_cksum_good; seg->csum_partial when the field holds only the pseudo-header's sum,
 * what a sender leaves for a checksum offload: its port did not complete it). A malformed
 * options area is not an error here: seg->opts_bad. */
int tcp_seg_parse(const struct rte_mbuf *m, const struct net_ip_info *info, struct tcp_seg *seg);

struct tcp_seg_out {
	uint32_t src, dst;        /* network order */
	uint16_t sport, dport;    /* host order */
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t wnd;             /* already scaled down */
	const struct tcp_opt_out *opts; /* NULL: none */
	bool cksum_offload;       /* set RTE_MBUF_F_TX_TCP_CKSUM and the pseudo-header sum */
};
/* Prepend the TCP header (and options) in front of m's data, which is the payload (possibly a
 * chain, possibly empty), and fill the checksum (software over the whole chain, or the
 * offload's pseudo-header). 0, or -ENOSPC when the headroom is short. */
int tcp_seg_build(struct rte_mbuf *m, const struct tcp_seg_out *o);

#endif
