/* tcp/net.h: crafted frames into net_if_input, a capturing transmit, a virtual clock.
 * EAL starts once (no hugepages, no PCI, no shared config; --in-memory
 * cannot go with --no-huge) for the mbuf pool. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_arp.h>
#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "net.h"
#include "net_int.h" /* NET_ARP_HOLD, NET_ARP_HOLD_ALL */

#define CAP_MAX 256

static struct rte_mempool *pool;
static struct rte_mbuf *cap[CAP_MAX];
static unsigned ncap;
static uint16_t tx_accept = UINT16_MAX; /* how many of a burst the fake port takes */
static uint64_t vclock;

static const uint8_t our_mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t peer_mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t gw_mac[6] = { 0x02, 0, 0, 0, 0, 0xfe };
static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static uint32_t ip4(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

static uint16_t cap_tx(void *arg, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t take = n < tx_accept ? n : tx_accept;

	(void)arg;
	for (uint16_t i = 0; i < take; i++) {
		assert_true(ncap < CAP_MAX);
		cap[ncap++] = pkts[i];
	}
	return take;
}

static uint64_t vclock_ns(void *arg)
{
	(void)arg;
	return vclock;
}

static void cap_clear(void)
{
	for (unsigned i = 0; i < ncap; i++)
		rte_pktmbuf_free(cap[i]);
	ncap = 0;
}

static struct net_if *mk_if(uint32_t gw, uint16_t mtu)
{
	struct net_if_cfg c;
	struct net_if *nif;

	memset(&c, 0, sizeof(c));
	memcpy(c.mac, our_mac, 6);
	c.ip = ip4("198.51.100.1");
	c.prefix_len = 24;
	c.gateway = gw;
	c.mtu = mtu;
	c.pool = pool;
	c.tx = cap_tx;
	c.clock_ns = vclock_ns;
	assert_int_equal(net_if_create(&c, &nif), 0);
	return nif;
}

static struct rte_mbuf *mk_frame(const uint8_t dst[6], const uint8_t src[6], uint16_t type,
				 const void *body, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct rte_ether_hdr eh;
	char *d;

	assert_non_null(m);
	d = rte_pktmbuf_append(m, (uint16_t)(sizeof(eh) + len));
	assert_non_null(d);
	memcpy(eh.dst_addr.addr_bytes, dst, 6);
	memcpy(eh.src_addr.addr_bytes, src, 6);
	eh.ether_type = htons(type);
	memcpy(d, &eh, sizeof(eh));
	memcpy(d + sizeof(eh), body, len);
	return m;
}

static struct rte_mbuf *mk_arp(uint16_t op, const uint8_t sha[6], uint32_t sip, uint32_t tip,
			       const uint8_t *edst)
{
	struct rte_arp_hdr a;

	memset(&a, 0, sizeof(a));
	a.arp_hardware = htons(RTE_ARP_HRD_ETHER);
	a.arp_protocol = htons(RTE_ETHER_TYPE_IPV4);
	a.arp_hlen = 6;
	a.arp_plen = 4;
	a.arp_opcode = htons(op);
	memcpy(a.arp_data.arp_sha.addr_bytes, sha, 6);
	a.arp_data.arp_sip = sip;
	if (op == RTE_ARP_OP_REPLY)
		memcpy(a.arp_data.arp_tha.addr_bytes, our_mac, 6);
	a.arp_data.arp_tip = tip;
	return mk_frame(edst, sha, RTE_ETHER_TYPE_ARP, &a, sizeof(a));
}

/* An IPv4 packet in a frame: 20-octet header + payload; pad extra octets after it. */
static struct rte_mbuf *mk_ip(uint32_t src, uint32_t dst, uint8_t proto, const void *pl,
			      uint16_t plen, uint16_t pad)
{
	uint8_t buf[1600];
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)buf;

	memset(buf, 0, sizeof(buf));
	ip->version_ihl = 0x45;
	ip->total_length = htons((uint16_t)(20 + plen));
	ip->fragment_offset = htons(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->src_addr = src;
	ip->dst_addr = dst;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	memcpy(buf + 20, pl, plen);
	return mk_frame(our_mac, peer_mac, RTE_ETHER_TYPE_IPV4, buf, (uint16_t)(20 + plen + pad));
}

static void input1(struct net_if *nif, struct rte_mbuf *m)
{
	net_if_input(nif, &m, 1);
}

/* A payload mbuf as an upper layer hands it to net_ip_output. */
static struct rte_mbuf *mk_payload(uint16_t len, uint8_t fill)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *p;

	assert_non_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	assert_non_null(p);
	memset(p, fill, len);
	return m;
}

static const struct rte_ether_hdr *eth_of(const struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
}

static const struct rte_arp_hdr *arp_of(const struct rte_mbuf *m)
{
	assert_int_equal(ntohs(eth_of(m)->ether_type), RTE_ETHER_TYPE_ARP);
	return rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *, 14);
}

static const struct rte_ipv4_hdr *ip_of(const struct rte_mbuf *m)
{
	assert_int_equal(ntohs(eth_of(m)->ether_type), RTE_ETHER_TYPE_IPV4);
	return rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, 14);
}

/* ---- ARP ---------------------------------------------------------------------------------- */

static void test_arp_request_reply(void **state)
{
	struct net_if *nif = mk_if(0, 0);
	struct net_if_stats st;
	const struct rte_arp_hdr *a;
	uint8_t mac[6];

	(void)state;
	input1(nif, mk_arp(RTE_ARP_OP_REQUEST, peer_mac, ip4("198.51.100.2"),
			   ip4("198.51.100.1"), bcast));
	net_if_flush(nif);
	assert_int_equal(ncap, 1);
	assert_memory_equal(eth_of(cap[0])->dst_addr.addr_bytes, peer_mac, 6);
	assert_memory_equal(eth_of(cap[0])->src_addr.addr_bytes, our_mac, 6);
	a = arp_of(cap[0]);
	assert_int_equal(ntohs(a->arp_opcode), RTE_ARP_OP_REPLY);
	assert_memory_equal(a->arp_data.arp_sha.addr_bytes, our_mac, 6);
	assert_int_equal(a->arp_data.arp_sip, ip4("198.51.100.1"));
	assert_memory_equal(a->arp_data.arp_tha.addr_bytes, peer_mac, 6);
	assert_int_equal(a->arp_data.arp_tip, ip4("198.51.100.2"));
	/* The asker was learned (RFC 826: we are the target). */
	assert_true(net_arp_lookup(nif, ip4("198.51.100.2"), mac));
	assert_memory_equal(mac, peer_mac, 6);
	cap_clear();
	/* A request for someone else: no reply, nothing learned. */
	input1(nif, mk_arp(RTE_ARP_OP_REQUEST, gw_mac, ip4("198.51.100.9"), ip4("198.51.100.7"),
			   bcast));
	net_if_flush(nif);
	assert_int_equal(ncap, 0);
	assert_false(net_arp_lookup(nif, ip4("198.51.100.9"), NULL));
	net_if_get_stats(nif, &st);
	assert_int_equal(st.arp_requests_in, 2);
	assert_int_equal(st.arp_replies_out, 1);
	assert_int_equal(st.arp_entries, 1);
	net_if_destroy(nif);
}

static void test_arp_resolves_held(void **state)
{
	struct net_if *nif = mk_if(0, 0);
	struct net_if_stats st;
	const struct rte_arp_hdr *a;
	const struct rte_ipv4_hdr *ip;
	uint32_t dst = ip4("198.51.100.2");

	(void)state;
	for (unsigned i = 0; i < NET_ARP_HOLD; i++)
		assert_int_equal(net_ip_output(nif, mk_payload(100, (uint8_t)i), dst, 253), 0);
	/* The hold queue takes NET_ARP_HOLD (Linux's 101); the next is refused. */
	assert_int_equal(net_ip_output(nif, mk_payload(100, 0xff), dst, 253), -ENOBUFS);
	net_if_flush(nif);
	assert_int_equal(ncap, 1);
	assert_memory_equal(eth_of(cap[0])->dst_addr.addr_bytes, bcast, 6);
	a = arp_of(cap[0]);
	assert_int_equal(ntohs(a->arp_opcode), RTE_ARP_OP_REQUEST);
	assert_int_equal(a->arp_data.arp_tip, dst);
	cap_clear();
	input1(nif, mk_arp(RTE_ARP_OP_REPLY, peer_mac, dst, ip4("198.51.100.1"), our_mac));
	net_if_flush(nif);
	assert_int_equal(ncap, NET_ARP_HOLD);
	for (unsigned i = 0; i < NET_ARP_HOLD; i++) {
		assert_memory_equal(eth_of(cap[i])->dst_addr.addr_bytes, peer_mac, 6);
		ip = ip_of(cap[i]);
		assert_int_equal(ip->version_ihl, 0x45);
		assert_int_equal(ntohs(ip->total_length), 120);
		assert_int_equal(ntohs(ip->fragment_offset), RTE_IPV4_HDR_DF_FLAG);
		assert_int_equal(ip->time_to_live, 64);
		assert_int_equal(ip->next_proto_id, 253);
		assert_int_equal(ip->dst_addr, dst);
		assert_int_equal(ip->src_addr, ip4("198.51.100.1"));
		assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
		assert_int_equal(((const uint8_t *)(ip + 1))[0], (uint8_t)i); /* in order */
		if (i > 0)
			assert_int_not_equal(ip->packet_id, ip_of(cap[i - 1])->packet_id);
	}
	cap_clear();
	net_if_get_stats(nif, &st);
	assert_int_equal(st.arp_unresolved_drops, 1);
	assert_int_equal(st.arp_replies_in, 1);
	assert_int_equal(st.ip_out, NET_ARP_HOLD);
	assert_int_equal(st.tx_frames, NET_ARP_HOLD + 1);
	net_if_destroy(nif);
}

/* All unresolved neighbours together hold NET_ARP_HOLD_ALL packets; past that each is
 * refused, and a reply still sends what its neighbour holds. */
static void test_arp_hold_bound(void **state)
{
	struct net_if *nif = mk_if(0, 0);
	struct net_if_stats st;
	unsigned held = 0, refused = 0;

	(void)state;
	for (unsigned n = 0; held + refused < NET_ARP_HOLD_ALL + 10; n++) {
		char a[32];
		snprintf(a, sizeof(a), "198.51.100.%u", 10 + n);
		for (unsigned i = 0; i < NET_ARP_HOLD && held + refused < NET_ARP_HOLD_ALL + 10; i++) {
			int rc = net_ip_output(nif, mk_payload(10, 1), ip4(a), 253);
			assert_true(rc == 0 || rc == -ENOBUFS);
			held += rc == 0;
			refused += rc != 0;
		}
	}
	assert_int_equal(held, NET_ARP_HOLD_ALL);
	assert_int_equal(refused, 10);
	net_if_flush(nif);
	cap_clear(); /* the requests */
	input1(nif, mk_arp(RTE_ARP_OP_REPLY, peer_mac, ip4("198.51.100.10"), ip4("198.51.100.1"),
			   our_mac));
	net_if_flush(nif);
	assert_int_equal(ncap, NET_ARP_HOLD);
	cap_clear();
	/* the room it left takes packets again */
	assert_int_equal(net_ip_output(nif, mk_payload(10, 1), ip4("198.51.100.200"), 253), 0);
	net_if_flush(nif);
	cap_clear();
	net_if_get_stats(nif, &st);
	assert_int_equal(st.arp_unresolved_drops, 10);
	net_if_destroy(nif);
}

static uint32_t unreach_ip;
static unsigned unreach_calls;

static void on_unreach(void *arg, uint32_t dst)
{
	(void)arg;
	unreach_ip = dst;
	unreach_calls++;
}

static void test_arp_retries_give_up(void **state)
{
	struct net_if *nif = mk_if(0, 0);
	struct net_if_stats st;
	uint32_t dst = ip4("198.51.100.3");

	(void)state;
	vclock = 1000000000ull;
	unreach_calls = 0;
	net_if_set_unreach(nif, on_unreach, NULL);
	assert_int_equal(net_ip_output(nif, mk_payload(10, 1), dst, 253), 0);
	net_if_flush(nif);
	assert_int_equal(ncap, 1);
	/* Next request after arp_retry_ms (1 s), not before. */
	assert_int_equal(net_if_poll(nif), 1000000000ull);
	vclock += 999000000ull;
	net_if_poll(nif);
	net_if_flush(nif);
	assert_int_equal(ncap, 1);
	vclock += 1000000ull;
	net_if_poll(nif);
	net_if_flush(nif);
	assert_int_equal(ncap, 2);
	vclock += 1000000000ull;
	net_if_poll(nif);
	net_if_flush(nif);
	assert_int_equal(ncap, 3); /* three requests in all (arp_retries 3) */
	assert_int_equal(unreach_calls, 0);
	vclock += 1000000000ull;
	assert_int_equal(net_if_poll(nif), UINT64_MAX);
	net_if_flush(nif);
	assert_int_equal(ncap, 3);
	assert_int_equal(unreach_calls, 1);
	assert_int_equal(unreach_ip, dst);
	for (unsigned i = 0; i < ncap; i++)
		assert_int_equal(arp_of(cap[i])->arp_data.arp_tip, dst);
	cap_clear();
	net_if_get_stats(nif, &st);
	assert_int_equal(st.arp_requests_out, 3);
	assert_int_equal(st.arp_unresolved_drops, 1);
	assert_int_equal(st.arp_entries, 0);
	net_if_destroy(nif);
}

static void test_arp_expiry(void **state)
{
	struct net_if *nif = mk_if(0, 0);
	uint32_t dst = ip4("198.51.100.2");

	(void)state;
	vclock = 5000000000ull;
	input1(nif, mk_arp(RTE_ARP_OP_REQUEST, peer_mac, dst, ip4("198.51.100.1"), bcast));
	assert_int_equal(net_arp_add(nif, ip4("198.51.100.4"), gw_mac), 0);
	net_if_flush(nif);
	cap_clear();
	assert_true(net_arp_lookup(nif, dst, NULL));
	assert_int_equal(net_if_poll(nif), 60000000000ull);
	vclock += 59000000000ull;
	net_if_poll(nif);
	assert_true(net_arp_lookup(nif, dst, NULL));
	/* Any ARP from the neighbour refreshes it. */
	input1(nif, mk_arp(RTE_ARP_OP_REQUEST, peer_mac, dst, ip4("198.51.100.1"), bcast));
	net_if_flush(nif);
	cap_clear();
	vclock += 59000000000ull;
	net_if_poll(nif);
	assert_true(net_arp_lookup(nif, dst, NULL));
	vclock += 2000000000ull;
	net_if_poll(nif);
	assert_false(net_arp_lookup(nif, dst, NULL));
	/* Static entries never expire. */
	assert_true(net_arp_lookup(nif, ip4("198.51.100.4"), NULL));
	/* Output now asks again. */
	assert_int_equal(net_ip_output(nif, mk_payload(10, 1), dst, 253), 0);
	net_if_flush(nif);
	assert_int_equal(ncap, 1);
	assert_int_equal(ntohs(arp_of(cap[0])->arp_opcode), RTE_ARP_OP_REQUEST);
	cap_clear();
	net_if_destroy(nif);
}

/* An entry in use is asked for again at expiry and keeps working meanwhile; an answer
 * refreshes it, silence frees it after the retries. */
static void test_arp_revalidate(void **state)
{
	struct net_if *nif = mk_if(0, 0);
	uint32_t dst = ip4("198.51.100.2");

	(void)state;
	vclock = 1000000000ull;
	input1(nif, mk_arp(RTE_ARP_OP_REPLY, peer_mac, dst, ip4("198.51.100.1"), our_mac));
	assert_int_equal(net_ip_output(nif, mk_payload(10, 1), dst, 253), 0);
	net_if_flush(nif);
	assert_int_equal(ncap, 1);
	cap_clear();
	vclock += 60000000000ull;
	net_if_poll(nif);
	net_if_flush(nif);
	assert_int_equal(ncap, 1);
	assert_int_equal(ntohs(arp_of(cap[0])->arp_opcode), RTE_ARP_OP_REQUEST);
	assert_int_equal(arp_of(cap[0])->arp_data.arp_tip, dst);
	cap_clear();
	/* Still sent straight to the known MAC while the question is out. */
	assert_int_equal(net_ip_output(nif, mk_payload(10, 2), dst, 253), 0);
	net_if_flush(nif);
	assert_int_equal(ncap, 1);
	assert_memory_equal(eth_of(cap[0])->dst_addr.addr_bytes, peer_mac, 6);
	cap_clear();
	/* The answer: a full lifetime again, no more requests. */
	input1(nif, mk_arp(RTE_ARP_OP_REPLY, peer_mac, dst, ip4("198.51.100.1"), our_mac));
	vclock += 59000000000ull;
	net_if_poll(nif);
	net_if_flush(nif);
	assert_int_equal(ncap, 0);
	assert_true(net_arp_lookup(nif, dst, NULL));
	/* Used again, then silence: 3 requests, then it is gone. */
	assert_int_equal(net_ip_output(nif, mk_payload(10, 3), dst, 253), 0);
	net_if_flush(nif);
	cap_clear();
	for (int i = 0; i < 3; i++) {
		vclock += 1000000000ull;
		net_if_poll(nif);
		assert_true(net_arp_lookup(nif, dst, NULL));
	}
	net_if_flush(nif);
	assert_int_equal(ncap, 3);
	cap_clear();
	vclock += 1000000000ull;
	net_if_poll(nif);
	assert_false(net_arp_lookup(nif, dst, NULL));
	net_if_destroy(nif);
}

static void test_arp_bad(void **state)
{
	struct net_if *nif = mk_if(0, 0);
	struct net_if_stats st;
	struct rte_mbuf *m;
	struct rte_arp_hdr *a;

	(void)state;
	m = mk_arp(RTE_ARP_OP_REQUEST, peer_mac, ip4("198.51.100.2"), ip4("198.51.100.1"), bcast);
	a = rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *, 14);
	a->arp_plen = 16;
	input1(nif, m);
	m = mk_arp(RTE_ARP_OP_REQUEST, peer_mac, ip4("198.51.100.2"), ip4("198.51.100.1"), bcast);
	rte_pktmbuf_trim(m, 10); /* truncated */
	input1(nif, m);
	/* A reply claiming our own address: a conflict, never learned. */
	input1(nif, mk_arp(RTE_ARP_OP_REPLY, peer_mac, ip4("198.51.100.1"), ip4("198.51.100.1"),
			   our_mac));
	net_if_flush(nif);
	assert_int_equal(ncap, 0);
	net_if_get_stats(nif, &st);
	assert_int_equal(st.rx_bad_eth, 2);
	assert_int_equal(st.arp_entries, 0);
	net_if_destroy(nif);
}

/* ---- IPv4 input ----------------------------------------------------------------------------- */

static struct rte_mbuf *got_m;
static struct net_ip_info got_info;
static unsigned got_n;

static void l4_in(void *arg, struct rte_mbuf *m, const struct net_ip_info *info)
{
	(void)arg;
	got_n++;
	got_info = *info;
	if (got_m != NULL)
		rte_pktmbuf_free(got_m);
	got_m = m;
}

static void test_ip_input_good(void **state)
{
	struct net_if *nif = mk_if(0, 0);
	uint8_t pl[30];

	(void)state;
	for (unsigned i = 0; i < sizeof(pl); i++)
		pl[i] = (uint8_t)i;
	got_n = 0;
	net_if_set_l4(nif, IPPROTO_TCP, l4_in, NULL);
	/* 30 octets of payload, 6 of link padding behind. */
	input1(nif, mk_ip(ip4("198.51.100.2"), ip4("198.51.100.1"), IPPROTO_TCP, pl, 30, 6));
	assert_int_equal(got_n, 1);
	assert_int_equal(got_info.l4_len, 30);
	assert_int_equal(rte_pktmbuf_pkt_len(got_m), 30);
	assert_memory_equal(rte_pktmbuf_mtod(got_m, void *), pl, 30);
	assert_int_equal(got_info.src, ip4("198.51.100.2"));
	assert_int_equal(got_info.dst, ip4("198.51.100.1"));
	assert_int_equal(got_info.proto, IPPROTO_TCP);
	assert_int_equal(got_info.ttl, 64);
	assert_false(got_info.l4_cksum_good);
	/* Headroom for a reply in place. */
	assert_true(rte_pktmbuf_headroom(got_m) >= NET_HDR_ROOM);
	rte_pktmbuf_free(got_m);
	got_m = NULL;
	net_if_destroy(nif);
}

/* Mutations of a good frame, each dropped and counted where it belongs. */
enum mut { M_VER, M_IHL, M_TLEN_BIG, M_TLEN_SMALL, M_CKSUM, M_MF, M_OFF, M_TTL0, M_DST,
	   M_PROTO, M_SRC_BCAST, M_COUNT };

static void apply_mut(struct rte_mbuf *m, enum mut k)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);

	switch (k) {
	case M_VER: ip->version_ihl = 0x65; break;
	case M_IHL: ip->version_ihl = 0x44; break;
	case M_TLEN_BIG: ip->total_length = htons(1000); break;
	case M_TLEN_SMALL: ip->total_length = htons(12); break;
	case M_CKSUM: ip->hdr_checksum ^= 0x0101; return;
	case M_MF: ip->fragment_offset = htons(RTE_IPV4_HDR_MF_FLAG); break;
	case M_OFF: ip->fragment_offset = htons(8); break;
	case M_TTL0: ip->time_to_live = 0; break;
	case M_DST: ip->dst_addr = htonl(0xc6336407); break;
	case M_PROTO: ip->next_proto_id = 99; break;
	case M_SRC_BCAST: ip->src_addr = 0xffffffffu; break;
	default: break;
	}
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

static uint64_t mut_counter(const struct net_if_stats *st, enum mut k)
{
	switch (k) {
	case M_VER: case M_IHL: case M_TLEN_BIG: case M_TLEN_SMALL: case M_SRC_BCAST:
		return st->ip_bad_hdr;
	case M_CKSUM: return st->ip_bad_cksum;
	case M_MF: case M_OFF: return st->ip_frag_drops;
	case M_TTL0: return st->ip_ttl_zero;
	case M_DST: return st->ip_not_for_us;
	case M_PROTO: return st->ip_unknown_proto;
	default: return 0;
	}
}

static void test_ip_input_bad(void **state)
{
	uint8_t pl[40] = { 1, 2, 3 };

	(void)state;
	for (int k = 0; k < M_COUNT; k++) {
		struct net_if *nif = mk_if(0, 0);
		struct net_if_stats st;
		struct rte_mbuf *m;

		got_n = 0;
		net_if_set_l4(nif, IPPROTO_TCP, l4_in, NULL);
		m = mk_ip(ip4("198.51.100.2"), ip4("198.51.100.1"), IPPROTO_TCP, pl, 40, 0);
		apply_mut(m, (enum mut)k);
		input1(nif, m);
		net_if_flush(nif);
		assert_int_equal(got_n, 0);
		assert_int_equal(ncap, 0);
		net_if_get_stats(nif, &st);
		if (mut_counter(&st, (enum mut)k) != 1)
			fail_msg("mutation %d not counted", k);
		assert_int_equal(st.ip_in, k == M_PROTO ? 1 : 0);
		net_if_destroy(nif);
	}
}

static void test_eth_filter(void **state)
{
	struct net_if *nif = mk_if(0, 0);
	struct net_if_stats st;
	uint8_t body[46] = { 0 };
	struct rte_mbuf *m;

	(void)state;
	input1(nif, mk_frame(gw_mac, peer_mac, RTE_ETHER_TYPE_IPV4, body, sizeof(body)));
	input1(nif, mk_frame(our_mac, peer_mac, RTE_ETHER_TYPE_IPV6, body, sizeof(body)));
	m = mk_frame(our_mac, peer_mac, RTE_ETHER_TYPE_IPV4, body, 0);
	rte_pktmbuf_trim(m, 4); /* 10 octets: no Ethernet header */
	input1(nif, m);
	net_if_get_stats(nif, &st);
	assert_int_equal(st.rx_frames, 3);
	assert_int_equal(st.rx_not_for_us, 1);
	assert_int_equal(st.rx_unknown_ethertype, 1);
	assert_int_equal(st.rx_bad_eth, 1);
	net_if_destroy(nif);
}

/* ---- ICMP ----------------------------------------------------------------------------------- */

static void test_icmp_echo(void **state)
{
	struct net_if *nif = mk_if(0, 0);
	struct net_if_stats st;
	uint8_t msg[8 + 57];
	struct rte_icmp_hdr *h = (struct rte_icmp_hdr *)msg;
	const struct rte_ipv4_hdr *ip;
	const struct rte_icmp_hdr *r;

	(void)state;
	assert_int_equal(net_arp_add(nif, ip4("198.51.100.2"), peer_mac), 0);
	memset(msg, 0, sizeof(msg));
	h->icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
	h->icmp_ident = htons(0x1234);
	h->icmp_seq_nb = htons(7);
	for (unsigned i = 8; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7); /* odd length: the last octet pads the sum */
	h->icmp_cksum = (uint16_t)~rte_raw_cksum(msg, sizeof(msg));
	input1(nif, mk_ip(ip4("198.51.100.2"), ip4("198.51.100.1"), IPPROTO_ICMP, msg,
			  sizeof(msg), 3));
	net_if_flush(nif);
	assert_int_equal(ncap, 1);
	assert_memory_equal(eth_of(cap[0])->dst_addr.addr_bytes, peer_mac, 6);
	ip = ip_of(cap[0]);
	assert_int_equal(ntohs(ip->total_length), 20 + sizeof(msg));
	assert_int_equal(rte_pktmbuf_pkt_len(cap[0]), 14 + 20 + sizeof(msg));
	assert_int_equal(ip->dst_addr, ip4("198.51.100.2"));
	assert_int_equal(ip->next_proto_id, IPPROTO_ICMP);
	assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
	r = (const struct rte_icmp_hdr *)(ip + 1);
	assert_int_equal(r->icmp_type, RTE_IP_ICMP_ECHO_REPLY);
	assert_int_equal(r->icmp_ident, htons(0x1234));
	assert_int_equal(r->icmp_seq_nb, htons(7));
	assert_int_equal(rte_raw_cksum(r, sizeof(msg)), 0xffff);
	assert_memory_equal((const uint8_t *)r + 8, msg + 8, sizeof(msg) - 8);
	cap_clear();
	/* A bad ICMP checksum: no reply. */
	h->icmp_cksum ^= 1;
	input1(nif, mk_ip(ip4("198.51.100.2"), ip4("198.51.100.1"), IPPROTO_ICMP, msg,
			  sizeof(msg), 0));
	net_if_flush(nif);
	assert_int_equal(ncap, 0);
	net_if_get_stats(nif, &st);
	assert_int_equal(st.icmp_echo_in, 1);
	assert_int_equal(st.icmp_echo_out, 1);
	assert_int_equal(st.ip_bad_cksum, 1);
	net_if_destroy(nif);
}

/* An echo request whose payload sits in a second segment: the reply's checksum covers the
 * whole chain. */
static void test_icmp_echo_chain(void **state)
{
	struct net_if *nif = mk_if(0, 0);
	uint8_t hdr[8] = { RTE_IP_ICMP_ECHO_REQUEST, 0, 0, 0, 0x12, 0x34, 0, 1 };
	uint8_t body[301];
	struct rte_mbuf *m, *tail;
	struct rte_ipv4_hdr *ip;
	uint16_t sum = 0;
	char *d;

	(void)state;
	assert_int_equal(net_arp_add(nif, ip4("198.51.100.2"), peer_mac), 0);
	for (unsigned i = 0; i < sizeof(body); i++)
		body[i] = (uint8_t)(i * 13 + 1);
	m = mk_ip(ip4("198.51.100.2"), ip4("198.51.100.1"), IPPROTO_ICMP, hdr, 8, 0);
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);
	ip->total_length = htons(20 + 8 + sizeof(body));
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	tail = rte_pktmbuf_alloc(pool);
	assert_non_null(tail);
	d = rte_pktmbuf_append(tail, sizeof(body));
	assert_non_null(d);
	memcpy(d, body, sizeof(body));
	assert_int_equal(rte_pktmbuf_chain(m, tail), 0);
	/* The request's checksum over header + body. */
	assert_int_equal(rte_raw_cksum_mbuf(m, 34, 8 + sizeof(body), &sum), 0);
	*rte_pktmbuf_mtod_offset(m, uint16_t *, 34 + 2) = (uint16_t)~sum;
	input1(nif, m);
	net_if_flush(nif);
	assert_int_equal(ncap, 1);
	assert_int_equal(rte_pktmbuf_pkt_len(cap[0]), 14 + 20 + 8 + sizeof(body));
	assert_int_equal(rte_raw_cksum_mbuf(cap[0], 34, 8 + sizeof(body), &sum), 0);
	assert_int_equal(sum, 0xffff);
	assert_int_equal(*rte_pktmbuf_mtod_offset(cap[0], uint8_t *, 34), RTE_IP_ICMP_ECHO_REPLY);
	cap_clear();
	net_if_destroy(nif);
}

/* ---- output ------------------------------------------------------------------------------- */

static void test_output_route_mtu(void **state)
{
	struct net_if *nif = mk_if(0, 1000);
	struct net_if_stats st;

	(void)state;
	/* Off-link without a gateway. */
	assert_false(net_if_reachable(nif, ip4("203.0.113.5")));
	assert_true(net_if_reachable(nif, ip4("198.51.100.77")));
	assert_int_equal(net_ip_output(nif, mk_payload(10, 0), ip4("203.0.113.5"), 253),
			 -ENETUNREACH);
	/* MTU 1000: 980 octets of payload fit, 981 do not. */
	assert_int_equal(net_arp_add(nif, ip4("198.51.100.2"), peer_mac), 0);
	assert_int_equal(net_ip_output(nif, mk_payload(981, 0), ip4("198.51.100.2"), 253),
			 -EMSGSIZE);
	assert_int_equal(net_ip_output(nif, mk_payload(980, 0), ip4("198.51.100.2"), 253), 0);
	net_if_flush(nif);
	assert_int_equal(ncap, 1);
	assert_int_equal(rte_pktmbuf_pkt_len(cap[0]), 14 + 1000);
	cap_clear();
	net_if_destroy(nif);

	/* With a gateway: on-link goes direct, off-link through the gateway's MAC. */
	nif = mk_if(ip4("198.51.100.254"), 0);
	assert_true(net_if_reachable(nif, ip4("203.0.113.5")));
	assert_int_equal(net_ip_output(nif, mk_payload(10, 0), ip4("203.0.113.5"), 253), 0);
	net_if_flush(nif);
	assert_int_equal(ncap, 1);
	assert_int_equal(arp_of(cap[0])->arp_data.arp_tip, ip4("198.51.100.254"));
	cap_clear();
	input1(nif, mk_arp(RTE_ARP_OP_REPLY, gw_mac, ip4("198.51.100.254"), ip4("198.51.100.1"),
			   our_mac));
	net_if_flush(nif);
	assert_int_equal(ncap, 1);
	assert_memory_equal(eth_of(cap[0])->dst_addr.addr_bytes, gw_mac, 6);
	assert_int_equal(ip_of(cap[0])->dst_addr, ip4("203.0.113.5"));
	cap_clear();
	/* The port refuses the burst: counted and freed. */
	tx_accept = 0;
	assert_int_equal(net_ip_output(nif, mk_payload(10, 0), ip4("203.0.113.5"), 253), 0);
	net_if_flush(nif);
	tx_accept = UINT16_MAX;
	net_if_get_stats(nif, &st);
	assert_int_equal(st.tx_drops, 1);
	assert_int_equal(ncap, 0);
	net_if_destroy(nif);
}

static void test_create_bad(void **state)
{
	struct net_if_cfg c;
	struct net_if *nif;

	(void)state;
	memset(&c, 0, sizeof(c));
	memcpy(c.mac, our_mac, 6);
	c.ip = ip4("198.51.100.1");
	c.prefix_len = 24;
	c.pool = pool;
	c.tx = cap_tx;
	c.mtu = 100;
	assert_int_equal(net_if_create(&c, &nif), -EINVAL);
	c.mtu = 64001;
	assert_int_equal(net_if_create(&c, &nif), -EINVAL);
	c.mtu = 0;
	c.prefix_len = 33;
	assert_int_equal(net_if_create(&c, &nif), -EINVAL);
	c.prefix_len = 24;
	c.mac[0] = 1; /* group address */
	assert_int_equal(net_if_create(&c, &nif), -EINVAL);
	c.mac[0] = 2;
	c.pool = NULL;
	assert_int_equal(net_if_create(&c, &nif), -EINVAL);
}

static uint32_t rng_state = 0x12345678u;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* Valid frames with random octets flipped and random lengths: never a crash, a leak or a
 * frame answered to a broadcast source (ASan/UBSan builds run this too). */
static void test_random_frames(void **state)
{
	struct net_if *nif = mk_if(ip4("198.51.100.254"), 0);
	uint8_t icmp[64] = { RTE_IP_ICMP_ECHO_REQUEST };
	unsigned answered = 0;

	(void)state;
	got_n = 0;
	net_if_set_l4(nif, IPPROTO_TCP, l4_in, NULL);
	((struct rte_icmp_hdr *)icmp)->icmp_cksum = (uint16_t)~rte_raw_cksum(icmp, sizeof(icmp));
	for (int i = 0; i < 20000; i++) {
		struct rte_mbuf *m;
		uint8_t *d;
		uint32_t len;

		switch (rng() % 3) {
		case 0:
			m = mk_arp((uint16_t)(1 + rng() % 2), peer_mac, ip4("198.51.100.2"),
				   ip4("198.51.100.1"), bcast);
			break;
		case 1:
			m = mk_ip(ip4("198.51.100.2"), ip4("198.51.100.1"), IPPROTO_ICMP, icmp,
				  sizeof(icmp), (uint16_t)(rng() % 8));
			break;
		default:
			m = mk_ip(ip4("198.51.100.2"), ip4("198.51.100.1"), IPPROTO_TCP, icmp,
				  (uint16_t)(rng() % sizeof(icmp)), 0);
			break;
		}
		d = rte_pktmbuf_mtod(m, uint8_t *);
		len = rte_pktmbuf_pkt_len(m);
		for (unsigned k = rng() % 4; k > 0; k--)
			d[rng() % len] ^= (uint8_t)(1u << (rng() % 8));
		if (rng() % 4 == 0)
			rte_pktmbuf_trim(m, (uint16_t)(rng() % len));
		input1(nif, m);
		if (rng() % 16 == 0)
			vclock += 500000000ull, net_if_poll(nif);
		net_if_flush(nif);
		answered += ncap;
		cap_clear();
		if (got_m != NULL) {
			rte_pktmbuf_free(got_m);
			got_m = NULL;
		}
	}
	assert_true(answered > 0);
	assert_true(got_n > 0);
	net_if_destroy(nif);
}

static int teardown(void **state)
{
	(void)state;
	cap_clear();
	return 0;
}

int main(void)
{
	char *argv[] = { "test_net", "--no-huge", "-m", "64", "--no-shconf", "--no-pci",
			 "--no-telemetry", "-l", "0", "--log-level", "error",
			 NULL };
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_arp_request_reply, teardown),
		cmocka_unit_test_teardown(test_arp_resolves_held, teardown),
		cmocka_unit_test_teardown(test_arp_hold_bound, teardown),
		cmocka_unit_test_teardown(test_arp_retries_give_up, teardown),
		cmocka_unit_test_teardown(test_arp_expiry, teardown),
		cmocka_unit_test_teardown(test_arp_revalidate, teardown),
		cmocka_unit_test_teardown(test_arp_bad, teardown),
		cmocka_unit_test_teardown(test_ip_input_good, teardown),
		cmocka_unit_test_teardown(test_ip_input_bad, teardown),
		cmocka_unit_test_teardown(test_eth_filter, teardown),
		cmocka_unit_test_teardown(test_icmp_echo, teardown),
		cmocka_unit_test_teardown(test_icmp_echo_chain, teardown),
		cmocka_unit_test_teardown(test_output_route_mtu, teardown),
		cmocka_unit_test_teardown(test_create_bad, teardown),
		cmocka_unit_test_teardown(test_random_frames, teardown),
	};
	int rc;

	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0]) - 1), argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	pool = rte_pktmbuf_pool_create("test_net", 2047, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	if (pool == NULL) {
		fprintf(stderr, "mbuf pool\n");
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	/* Every mbuf came back: no leak in any path above. */
	if (rte_mempool_avail_count(pool) != 2047) {
		fprintf(stderr, "mbuf leak: %u of 2047 free\n", rte_mempool_avail_count(pool));
		rc = 1;
	}
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return rc;
}
