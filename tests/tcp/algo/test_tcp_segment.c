/* TCP segment parse and build on mbufs: header checks (short, data offset), checksums
 * (software over chains, checked by an independent RFC 1071 sum; offload pseudo-header),
 * options through the header, headroom. Starts EAL once (no hugepages, no PCI). */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <rte_eal.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "tcp_segment.h"

static struct rte_mempool *pool;
static uint32_t SRC, DST;

static int eal_up(void **state)
{
	(void)state;
	char *argv[] = {"test_tcp_segment", "--no-huge", "-m", "64", "--no-shconf", "--no-pci",
			"--no-telemetry", "-l", "0", "--log-level=error"};
	int argc = (int)(sizeof(argv) / sizeof(argv[0]));
	if (rte_eal_init(argc, argv) < 0)
		return -1;
	pool = rte_pktmbuf_pool_create("algo_seg", 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	return pool ? 0 : -1;
}

static int eal_down(void **state)
{
	(void)state;
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}

/* RFC 1071 over the pseudo-header and a flat copy of the segment, big-endian words. */
static uint16_t ref_sum(const struct rte_mbuf *m, uint32_t src, uint32_t dst)
{
	static uint8_t flat[65536];
	const uint8_t *p = rte_pktmbuf_read(m, 0, m->pkt_len, flat);
	assert_non_null(p);
	uint8_t ph[12];
	memcpy(ph, &src, 4);
	memcpy(ph + 4, &dst, 4);
	ph[8] = 0;
	ph[9] = 6;
	ph[10] = (uint8_t)(m->pkt_len >> 8);
	ph[11] = (uint8_t)m->pkt_len;
	uint64_t sum = 0;
	for (int i = 0; i < 12; i += 2)
		sum += (uint32_t)(ph[i] << 8 | ph[i + 1]);
	for (uint32_t i = 0; i < m->pkt_len; i += 2)
		sum += (uint32_t)(p[i] << 8 | (i + 1 < m->pkt_len ? p[i + 1] : 0));
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static struct rte_mbuf *payload_mbuf(const char *s)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	assert_non_null(m);
	size_t n = strlen(s);
	char *d = rte_pktmbuf_append(m, (uint16_t)n);
	assert_non_null(d);
	memcpy(d, s, n);
	return m;
}

static struct net_ip_info info_for(const struct rte_mbuf *m)
{
	return (struct net_ip_info){.src = SRC, .dst = DST, .l4_len = (uint16_t)m->pkt_len,
				    .proto = 6, .ttl = 64};
}

static void test_build_parse_roundtrip(void **state)
{
	(void)state;
	struct rte_mbuf *m = payload_mbuf("hello, world"); /* even */
	struct tcp_opt_out oo = {.mss = true, .mss_val = 1460, .sack_ok = true, .ts = true,
				 .ts_val = 99, .wscale = true, .wscale_val = 9};
	struct tcp_seg_out so = {.src = SRC, .dst = DST, .sport = 40000, .dport = 5000,
				 .seq = 0xfffffff0u, .ack = 7, .flags = TCP_F_SYN | TCP_F_ACK,
				 .wnd = 65535, .opts = &oo};
	assert_int_equal(tcp_seg_build(m, &so), 0);
	assert_int_equal(m->pkt_len, 20 + 20 + 12);
	assert_int_equal(ref_sum(m, SRC, DST), 0xffff);
	struct net_ip_info info = info_for(m);
	struct tcp_seg seg;
	assert_int_equal(tcp_seg_parse(m, &info, &seg), 0);
	assert_int_equal(seg.sport, 40000);
	assert_int_equal(seg.dport, 5000);
	assert_int_equal(seg.seq, 0xfffffff0u);
	assert_int_equal(seg.ack, 7);
	assert_int_equal(seg.wnd, 65535);
	assert_int_equal(seg.flags, TCP_F_SYN | TCP_F_ACK);
	assert_int_equal(seg.hdr_len, 40);
	assert_int_equal(seg.payload_len, 12);
	assert_int_equal(seg.seg_len, 13); /* SYN counts */
	assert_int_equal(seg.src, SRC);
	assert_false(seg.opts_bad);
	assert_true(seg.opts.has_mss && seg.opts.sack_ok && seg.opts.has_ts &&
		    seg.opts.has_wscale);
	assert_int_equal(seg.opts.mss, 1460);
	assert_int_equal(seg.opts.wscale, 9);
	assert_int_equal(seg.opts.ts_val, 99);
	rte_pktmbuf_free(m);
}

static void test_odd_and_empty_payload(void **state)
{
	(void)state;
	const char *payloads[] = {"", "x", "odd length!"};
	for (size_t i = 0; i < 3; i++) {
		struct rte_mbuf *m = payload_mbuf(payloads[i]);
		struct tcp_seg_out so = {.src = SRC, .dst = DST, .sport = 1, .dport = 2, .seq = 1,
					 .ack = 2, .flags = TCP_F_ACK | TCP_F_FIN, .wnd = 10};
		assert_int_equal(tcp_seg_build(m, &so), 0);
		assert_int_equal(ref_sum(m, SRC, DST), 0xffff);
		struct net_ip_info info = info_for(m);
		struct tcp_seg seg;
		assert_int_equal(tcp_seg_parse(m, &info, &seg), 0);
		assert_int_equal(seg.payload_len, strlen(payloads[i]));
		assert_int_equal(seg.seg_len, strlen(payloads[i]) + 1); /* FIN */
		rte_pktmbuf_free(m);
	}
}

static void test_bad_checksum(void **state)
{
	(void)state;
	struct rte_mbuf *m = payload_mbuf("payload");
	struct tcp_seg_out so = {.src = SRC, .dst = DST, .sport = 1, .dport = 2, .flags = TCP_F_ACK};
	assert_int_equal(tcp_seg_build(m, &so), 0);
	struct net_ip_info info = info_for(m);
	struct tcp_seg seg;
	rte_pktmbuf_mtod(m, uint8_t *)[m->pkt_len - 1] ^= 0x40;
	assert_int_equal(tcp_seg_parse(m, &info, &seg), -EBADMSG);
	/* The port vouched for it: not recomputed. */
	info.l4_cksum_good = true;
	assert_int_equal(tcp_seg_parse(m, &info, &seg), 0);
	/* The pseudo-header is covered: another source address fails. */
	rte_pktmbuf_mtod(m, uint8_t *)[m->pkt_len - 1] ^= 0x40;
	info = info_for(m);
	assert_int_equal(tcp_seg_parse(m, &info, &seg), 0);
	info.src = DST;
	info.dst = SRC + htonl(1);
	assert_int_equal(tcp_seg_parse(m, &info, &seg), -EBADMSG);
	rte_pktmbuf_free(m);
}

static struct rte_mbuf *raw_segment(const uint8_t *bytes, uint16_t n)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	assert_non_null(m);
	if (n)
		memcpy(rte_pktmbuf_append(m, n), bytes, n);
	return m;
}

static void test_bad_headers(void **state)
{
	(void)state;
	uint8_t h[64] = {0};
	h[12] = 5 << 4;
	struct tcp_seg seg;
	/* shorter than 20 octets */
	struct rte_mbuf *m = raw_segment(h, 19);
	struct net_ip_info info = info_for(m);
	info.l4_cksum_good = true;
	assert_int_equal(tcp_seg_parse(m, &info, &seg), -EINVAL);
	rte_pktmbuf_free(m);
	m = raw_segment(h, 0);
	info = info_for(m);
	assert_int_equal(tcp_seg_parse(m, &info, &seg), -EINVAL);
	rte_pktmbuf_free(m);
	/* data offset below 5 */
	for (uint8_t doff = 0; doff < 5; doff++) {
		h[12] = (uint8_t)(doff << 4);
		m = raw_segment(h, 40);
		info = info_for(m);
		info.l4_cksum_good = true;
		assert_int_equal(tcp_seg_parse(m, &info, &seg), -EINVAL);
		rte_pktmbuf_free(m);
	}
	/* data offset past the packet */
	h[12] = 15 << 4;
	m = raw_segment(h, 56);
	info = info_for(m);
	info.l4_cksum_good = true;
	assert_int_equal(tcp_seg_parse(m, &info, &seg), -EINVAL);
	rte_pktmbuf_free(m);
	/* l4_len disagreeing with the mbuf */
	h[12] = 5 << 4;
	m = raw_segment(h, 20);
	info = info_for(m);
	info.l4_len = 21;
	assert_int_equal(tcp_seg_parse(m, &info, &seg), -EINVAL);
	rte_pktmbuf_free(m);
}

static void test_bad_options_flagged(void **state)
{
	(void)state;
	uint8_t h[24] = {0};
	h[12] = 6 << 4;
	h[13] = TCP_F_SYN;
	h[20] = 2; /* MSS with length 3 */
	h[21] = 3;
	struct rte_mbuf *m = raw_segment(h, 24);
	struct net_ip_info info = info_for(m);
	info.l4_cksum_good = true;
	struct tcp_seg seg;
	assert_int_equal(tcp_seg_parse(m, &info, &seg), 0);
	assert_true(seg.opts_bad);
	assert_int_equal(seg.hdr_len, 24);
	rte_pktmbuf_free(m);
}

/* A chain of mbufs with the given lengths, filled with a byte pattern. */
static struct rte_mbuf *chain(const uint16_t *lens, unsigned n, uint8_t seed)
{
	struct rte_mbuf *head = NULL;
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		assert_non_null(m);
		uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, lens[i]);
		assert_true(lens[i] == 0 || d != NULL);
		for (uint16_t k = 0; k < lens[i]; k++)
			d[k] = (uint8_t)(seed + 31 * k + i);
		if (head == NULL)
			head = m;
		else
			assert_int_equal(rte_pktmbuf_chain(head, m), 0);
	}
	return head;
}

static void test_chain_build_parse(void **state)
{
	(void)state;
	const uint16_t lens[] = {7, 13, 1000, 1, 0, 555};
	struct rte_mbuf *m = chain(lens, 6, 3);
	struct tcp_sack_block blk[2] = {{1, 2}, {3, 4}};
	struct tcp_opt_out oo = {.ts = true, .ts_val = 5, .ts_ecr = 6, .nsack = 2, .sack = blk};
	struct tcp_seg_out so = {.src = SRC, .dst = DST, .sport = 9, .dport = 10, .seq = 100,
				 .ack = 200, .flags = TCP_F_ACK | TCP_F_PSH, .wnd = 1000,
				 .opts = &oo};
	assert_int_equal(tcp_seg_build(m, &so), 0);
	assert_int_equal(m->nb_segs, 6);
	assert_int_equal(ref_sum(m, SRC, DST), 0xffff);
	struct net_ip_info info = info_for(m);
	struct tcp_seg seg;
	assert_int_equal(tcp_seg_parse(m, &info, &seg), 0);
	assert_int_equal(seg.payload_len, 7 + 13 + 1000 + 1 + 555);
	assert_int_equal(seg.opts.nsack, 2);
	assert_int_equal(seg.opts.sack[1].end, 4);
	/* Corrupt the last segment: caught through the chain. */
	struct rte_mbuf *last = rte_pktmbuf_lastseg(m);
	rte_pktmbuf_mtod(last, uint8_t *)[100] ^= 1;
	assert_int_equal(tcp_seg_parse(m, &info, &seg), -EBADMSG);
	rte_pktmbuf_free(m);
}

static void test_header_straddles_chain(void **state)
{
	(void)state;
	/* Build a segment flat, then re-split it so the header and options cross mbufs. */
	struct rte_mbuf *flat = payload_mbuf("abcdefghijklmnopqrstuvwxyz0123");
	struct tcp_opt_out oo = {.ts = true, .ts_val = 0xabcdef01u, .ts_ecr = 2};
	struct tcp_seg_out so = {.src = SRC, .dst = DST, .sport = 77, .dport = 88, .seq = 5,
				 .ack = 6, .flags = TCP_F_ACK, .wnd = 3, .opts = &oo};
	assert_int_equal(tcp_seg_build(flat, &so), 0);
	uint8_t bytes[128];
	uint16_t n = (uint16_t)flat->pkt_len;
	memcpy(bytes, rte_pktmbuf_mtod(flat, uint8_t *), n);
	rte_pktmbuf_free(flat);
	const uint16_t cuts[][3] = {{10, 15, 0}, {3, 25, 0}, {1, 1, 1}};
	for (unsigned c = 0; c < 3; c++) {
		uint16_t a = cuts[c][0], b = cuts[c][1];
		struct rte_mbuf *m = raw_segment(bytes, a);
		assert_int_equal(rte_pktmbuf_chain(m, raw_segment(bytes + a, b)), 0);
		assert_int_equal(rte_pktmbuf_chain(m, raw_segment(bytes + a + b,
								  (uint16_t)(n - a - b))), 0);
		struct net_ip_info info = info_for(m);
		struct tcp_seg seg;
		assert_int_equal(tcp_seg_parse(m, &info, &seg), 0);
		assert_int_equal(seg.sport, 77);
		assert_true(seg.opts.has_ts);
		assert_int_equal(seg.opts.ts_val, 0xabcdef01u);
		assert_int_equal(seg.payload_len, 30);
		rte_pktmbuf_free(m);
	}
}

/* A segment built with the TCP checksum left to the port (cksum_offload). */
static struct rte_mbuf *offload_segment(const char *payload)
{
	struct rte_mbuf *m = payload_mbuf(payload);
	struct tcp_seg_out so = {.src = SRC, .dst = DST, .sport = 1, .dport = 2, .seq = 3,
				 .flags = TCP_F_ACK, .cksum_offload = true};
	assert_int_equal(tcp_seg_build(m, &so), 0);
	return m;
}

static void test_offload(void **state)
{
	(void)state;
	struct rte_mbuf *m = offload_segment("offloaded payload");
	assert_true(m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM);
	assert_int_equal(m->l4_len, 20);
	/* Do what the NIC does: sum the segment as it is (the field holds the pseudo-header
	 * sum) and store the complement. The result must verify. */
	struct rte_tcp_hdr *th = rte_pktmbuf_mtod(m, struct rte_tcp_hdr *);
	uint16_t raw = rte_raw_cksum(th, m->pkt_len);
	th->cksum = (uint16_t)~raw;
	assert_int_equal(ref_sum(m, SRC, DST), 0xffff);
	rte_pktmbuf_free(m);
}

/* A segment built for an offload that never ran (a memif peer with memif_csum = off, Linux over
 * a veth with tx checksumming on) still fails the check, and says why: csum_partial. A plain
 * corruption does not. */
static void test_partial_checksum(void **state)
{
	(void)state;
	struct rte_mbuf *m = offload_segment("left to the offload");
	struct net_ip_info info = info_for(m);
	struct tcp_seg seg;
	assert_int_equal(tcp_seg_parse(m, &info, &seg), -EBADMSG);
	assert_true(seg.csum_partial);
	/* a field that is not the pseudo-header's sum: a plain bad checksum */
	struct rte_tcp_hdr *th = rte_pktmbuf_mtod(m, struct rte_tcp_hdr *);
	th->cksum ^= 0x0100;
	assert_int_equal(tcp_seg_parse(m, &info, &seg), -EBADMSG);
	assert_false(seg.csum_partial);
	/* completed, as the NIC would: good, and not flagged */
	th->cksum ^= 0x0100;
	th->cksum = (uint16_t)~rte_raw_cksum(th, m->pkt_len);
	assert_int_equal(tcp_seg_parse(m, &info, &seg), 0);
	assert_false(seg.csum_partial);
	rte_pktmbuf_free(m);
}

static void test_no_headroom(void **state)
{
	(void)state;
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	assert_non_null(m);
	m->data_off = 10; /* less than a TCP header */
	struct tcp_seg_out so = {.src = SRC, .dst = DST, .sport = 1, .dport = 2};
	assert_int_equal(tcp_seg_build(m, &so), -ENOSPC);
	assert_int_equal(m->pkt_len, 0);
	rte_pktmbuf_free(m);
}

int main(void)
{
	SRC = inet_addr("198.51.100.1");
	DST = inet_addr("198.51.100.2");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_parse_roundtrip),
		cmocka_unit_test(test_odd_and_empty_payload),
		cmocka_unit_test(test_bad_checksum),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_bad_options_flagged),
		cmocka_unit_test(test_chain_build_parse),
		cmocka_unit_test(test_header_straddles_chain),
		cmocka_unit_test(test_offload),
		cmocka_unit_test(test_partial_checksum),
		cmocka_unit_test(test_no_headroom),
	};
	return cmocka_run_group_tests(tests, eal_up, eal_down);
}
