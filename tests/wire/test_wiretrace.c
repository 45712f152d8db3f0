/* cmocka tests of the wiretrace pcap writer and reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <pcap/pcap.h>

#include "wiretrace.h"

static char tmpdir[256];

/* A pcap being written in tmpdir, and the two endpoints of its connections. */
struct pcap_fixture {
	char path[300];
	struct wt_writer *w;
	struct wt_endpoint cl, sv;
};

/* Opens tmpdir/name; the client is host `host`, the server host + 1. */
static void fixture_open(struct pcap_fixture *f, const char *name, uint8_t host,
			 uint16_t client_port, uint16_t server_port)
{
	char err[256];
	snprintf(f->path, sizeof(f->path), "%s/%s", tmpdir, name);
	f->w = wt_writer_open(f->path, err, sizeof(err));
	assert_non_null(f->w);
	wt_endpoint_make(&f->cl, host, client_port);
	wt_endpoint_make(&f->sv, (uint8_t)(host + 1), server_port);
}

static void load_ok(const char *path, struct wt_capture *cap)
{
	char err[256];
	assert_int_equal(wt_capture_load(path, cap, err, sizeof(err)), 0);
}

/* Independent checksum: one's-complement sum with the carry folded at every step. */
static uint16_t ref_csum(const uint8_t *p, size_t len)
{
	uint16_t s = 0;
	for (size_t i = 0; i < len; i += 2) {
		uint16_t w = (uint16_t)(p[i] << 8 | (i + 1 < len ? p[i + 1] : 0));
		uint32_t t = (uint32_t)s + w;
		s = (uint16_t)((t & 0xffff) + (t >> 16));
	}
	return (uint16_t)~s;
}

static void fill(uint8_t *b, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed + i * 31u + (i >> 8));
}

static void test_build_frame_checksums(void **state)
{
	(void)state;
	struct wt_endpoint a, b;
	wt_endpoint_make(&a, 11, 40000);
	wt_endpoint_make(&b, 12, 7174);
	uint8_t data[333], frame[1600];
	fill(data, sizeof(data), 5);
	for (size_t len = 0; len <= sizeof(data); len += 37) { /* odd and even lengths */
		size_t n = wt_build_frame(frame, sizeof(frame), &a, &b, 0x1234, 0xfffffff0u,
					  0x01020304u, WT_TCP_ACK | WT_TCP_PSH, 5000, NULL, 0, data,
					  len);
		assert_int_equal(n, 14 + 20 + 20 + len);
		const uint8_t *ip = frame + 14;
		assert_int_equal(ip[0], 0x45);
		assert_int_equal(ip[2] << 8 | ip[3], 40 + len);
		/* Recomputing over the header including its checksum gives 0. */
		assert_int_equal(ref_csum(ip, 20), 0);
		uint8_t pseudo[12 + 20 + 333 + 1];
		memcpy(pseudo, ip + 12, 8);
		pseudo[8] = 0;
		pseudo[9] = 6;
		pseudo[10] = (uint8_t)((20 + len) >> 8);
		pseudo[11] = (uint8_t)(20 + len);
		memcpy(pseudo + 12, ip + 20, 20 + len);
		assert_int_equal(ref_csum(pseudo, 12 + 20 + len), 0);
		assert_memory_equal(frame + 14 + 40, data, len);
	}
	/* Options must be a multiple of 4; frames must fit. */
	uint8_t opt[3] = { 1, 1, 1 };
	assert_int_equal(wt_build_frame(frame, sizeof(frame), &a, &b, 1, 1, 1, WT_TCP_SYN, 1, opt,
					3, NULL, 0), 0);
	assert_int_equal(wt_build_frame(frame, 60, &a, &b, 1, 1, 1, WT_TCP_ACK, 1, NULL, 0, data,
					10), 0);
}

/* Walks a pcap we wrote and checks the TCP model: each side's segments follow one another
 * without gaps, every ACK acknowledges exactly what the peer had sent so far. */
static void check_seq_ack(const char *path, const struct wt_endpoint *client, unsigned *nframes)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pd = pcap_open_offline(path, err);
	assert_non_null(pd);
	assert_int_equal(pcap_datalink(pd), DLT_EN10MB);
	struct pcap_pkthdr *h;
	const u_char *p;
	uint32_t nxt[2] = { 0, 0 };
	bool started[2] = { false, false };
	unsigned n = 0;
	long long last_ts = -1;
	while (pcap_next_ex(pd, &h, &p) == 1) {
		n++;
		long long ts = (long long)h->ts.tv_sec * 1000000 + h->ts.tv_usec;
		assert_true(ts > last_ts);
		last_ts = ts;
		assert_int_equal(h->caplen, h->len);
		assert_true(h->len <= 1514);
		const uint8_t *ip = p + 14, *tcp = ip + 20;
		int side = memcmp(ip + 12, client->ip, 4) == 0 ? 0 : 1;
		uint32_t seq = (uint32_t)tcp[4] << 24 | tcp[5] << 16 | tcp[6] << 8 | tcp[7];
		uint32_t ack = (uint32_t)tcp[8] << 24 | tcp[9] << 16 | tcp[10] << 8 | tcp[11];
		uint8_t flags = tcp[13];
		size_t thl = (size_t)(tcp[12] >> 4) * 4;
		size_t plen = (size_t)(ip[2] << 8 | ip[3]) - 20 - thl;
		assert_int_equal(ref_csum(ip, 20), 0);
		if (!started[side]) {
			assert_true(flags & WT_TCP_SYN);
			started[side] = true;
			nxt[side] = seq;
		}
		assert_int_equal(seq, nxt[side]);
		if (flags & WT_TCP_ACK)
			assert_int_equal(ack, nxt[!side]);
		else
			assert_int_equal(side, 0); /* only the first SYN lacks ACK */
		nxt[side] += (uint32_t)plen + !!(flags & WT_TCP_SYN) + !!(flags & WT_TCP_FIN);
	}
	pcap_close(pd);
	*nframes = n;
}

static void test_connection_roundtrip(void **state)
{
	(void)state;
	struct pcap_fixture f;
	fixture_open(&f, "rt.pcap", 11, 45678, 7174);
	struct wt_tcp c;
	/* ISNs near the wrap so sequence arithmetic must be modular. */
	wt_tcp_init(&c, f.w, &f.cl, &f.sv, 0xffffff00u, 0x7ffffff0u, 1000);
	assert_int_equal(wt_tcp_handshake(&c), 0);
	static uint8_t a[5000], b[700];
	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 99);
	assert_int_equal(wt_tcp_send(&c, WT_CLIENT, a, 100), 1);
	assert_int_equal(wt_tcp_send(&c, WT_CLIENT, a + 100, 2900), 3); /* 1000+1000+900 */
	assert_int_equal(wt_tcp_send(&c, WT_CLIENT, a, 0), 0);
	assert_int_equal(wt_tcp_send(&c, WT_SERVER, b, 700), 1);
	assert_int_equal(wt_tcp_send(&c, WT_CLIENT, a + 3000, 1500), 2); /* delayed ACK */
	assert_int_equal(wt_tcp_ack(&c, WT_SERVER), 0);
	assert_int_equal(wt_tcp_send(&c, WT_CLIENT, a + 4500, 500), 1);
	assert_int_equal(wt_tcp_ack(&c, WT_SERVER), 1);
	assert_int_equal(wt_tcp_ack(&c, WT_SERVER), 0);
	assert_int_equal(wt_tcp_close(&c, WT_CLIENT), 0);
	assert_int_equal(wt_tcp_send(&c, WT_CLIENT, a, 1), -1);
	unsigned written = wt_writer_frames(f.w);
	assert_int_equal(wt_writer_close(f.w), 0);

	unsigned nframes;
	check_seq_ack(f.path, &f.cl, &nframes);
	assert_int_equal(nframes, written);

	struct wt_capture cap;
	load_ok(f.path, &cap);
	assert_int_equal(cap.nframes, written);
	assert_int_equal(cap.tcp_frames, written);
	assert_int_equal(cap.bad_ip_csum, 0);
	assert_int_equal(cap.bad_tcp_csum, 0);
	assert_int_equal(cap.nconns, 1);
	struct wt_conn *k = &cap.conns[0];
	assert_true(k->saw_syn);
	assert_int_equal(k->first_frame, 1);
	assert_int_equal(k->last_frame, written);
	assert_int_equal(k->dir[0].src.port, 45678);
	assert_int_equal(k->dir[1].src.port, 7174);
	assert_memory_equal(k->dir[0].src.mac, f.cl.mac, 6);
	assert_int_equal(k->dir[0].isn, 0xffffff00u);
	assert_int_equal(k->dir[1].isn, 0x7ffffff0u);
	assert_int_equal(k->dir[0].len, 5000);
	assert_memory_equal(k->dir[0].data, a, 5000);
	assert_int_equal(k->dir[1].len, 700);
	assert_memory_equal(k->dir[1].data, b, 700);
	assert_true(k->dir[0].fin && k->dir[1].fin);
	for (int d = 0; d < 2; d++) {
		struct wt_stream *s = &k->dir[d];
		assert_int_equal(s->retransmits + s->overlaps + s->out_of_order + s->missing, 0);
		assert_int_equal(s->nchunks, s->nframes);
		assert_int_equal(s->segments, s->nframes);
		uint64_t off = 0;
		for (size_t i = 0; i < s->nchunks; i++) {
			const struct wt_chunk *ch = &s->chunks[i];
			assert_int_equal(ch->off, off);
			assert_int_equal(ch->seq, (uint32_t)(s->isn + 1 + off));
			assert_int_equal(ch->frame, s->frames[i]);
			assert_int_equal(ch->ready, ch->frame);
			assert_ptr_equal(wt_stream_locate(s, off), ch);
			assert_ptr_equal(wt_stream_locate(s, off + ch->len - 1), ch);
			off += ch->len;
		}
		assert_null(wt_stream_locate(s, off));
	}
	/* Chunk boundaries kept, MSS split. */
	static const uint32_t lens[] = { 100, 1000, 1000, 900, 1000, 500, 500 };
	assert_int_equal(k->dir[0].nchunks, 7);
	for (int i = 0; i < 7; i++)
		assert_int_equal(k->dir[0].chunks[i].len, lens[i]);
	wt_capture_free(&cap);
	unlink(f.path);
}

static void test_reorder_duplicates_holes(void **state)
{
	(void)state;
	struct pcap_fixture f;
	fixture_open(&f, "ooo.pcap", 1, 1111, 2222);
	struct wt_tcp c;
	wt_tcp_init(&c, f.w, &f.cl, &f.sv, 1000, 5000, 0);
	assert_int_equal(wt_tcp_handshake(&c), 0); /* frames 1..3 */
	uint8_t d[600];
	fill(d, sizeof(d), 7);
	uint32_t base = c.nxt[WT_CLIENT];
	uint8_t ack = WT_TCP_ACK;
	assert_int_equal(wt_tcp_segment(&c, 0, base + 100, ack, d + 100, 100), 0); /* 4: ahead */
	assert_int_equal(wt_tcp_segment(&c, 0, base + 200, ack, d + 200, 100), 0); /* 5: ahead */
	assert_int_equal(wt_tcp_segment(&c, 0, base + 200, ack, d + 200, 100), 0); /* 6: dup pending */
	assert_int_equal(wt_tcp_segment(&c, 0, base, ack, d, 100), 0);             /* 7: fills hole */
	assert_int_equal(wt_tcp_segment(&c, 0, base + 100, ack, d + 100, 100), 0); /* 8: retransmit */
	assert_int_equal(wt_tcp_segment(&c, 0, base + 150, ack, d + 150, 200), 0); /* 9: overlap */
	assert_int_equal(wt_tcp_segment(&c, 0, base + 500, ack, d + 500, 100), 0); /* 10: after hole */
	/* Server side: 10 octets whose ACK covers the 350 contiguous client octets. */
	c.nxt[WT_CLIENT] = base + 350;
	assert_int_equal(wt_tcp_send(&c, WT_SERVER, d, 10), 1);
	assert_int_equal(wt_writer_close(f.w), 0);

	struct wt_capture cap;
	load_ok(f.path, &cap);
	assert_int_equal(cap.nconns, 1);
	struct wt_stream *s = &cap.conns[0].dir[0];
	assert_int_equal(s->segments, 7);
	assert_int_equal(s->out_of_order, 3);
	assert_int_equal(s->retransmits, 2);
	assert_int_equal(s->overlaps, 1);
	assert_int_equal(s->len, 350);
	assert_memory_equal(s->data, d, 350);
	assert_int_equal(s->missing, 600 - 350);
	/* 0..99 from frame 7; 100..199 from frame 4 ready at 7; 200..299 frame 5 ready at 7;
	 * 300..349 from frame 9. */
	assert_int_equal(s->nchunks, 4);
	const struct wt_chunk *ch = wt_stream_locate(s, 150);
	assert_int_equal(ch->frame, 4);
	assert_int_equal(ch->ready, 7);
	assert_int_equal(ch->seq, base + 100);
	ch = wt_stream_locate(s, 0);
	assert_int_equal(ch->frame, 7);
	ch = wt_stream_locate(s, 250);
	assert_int_equal(ch->frame, 5);
	assert_int_equal(ch->ready, 7);
	ch = wt_stream_locate(s, 349);
	assert_int_equal(ch->frame, 9);
	assert_int_equal(ch->off, 300);
	assert_int_equal(ch->len, 50);
	assert_int_equal(ch->seq, base + 150);
	assert_int_equal(cap.conns[0].dir[1].len, 10);
	wt_capture_free(&cap);
	unlink(f.path);
}

static void test_port_reuse_and_bad_checksum(void **state)
{
	(void)state;
	struct pcap_fixture f;
	fixture_open(&f, "reuse.pcap", 1, 1111, 2222);
	struct wt_tcp c;
	for (int i = 0; i < 2; i++) {
		wt_tcp_init(&c, f.w, &f.cl, &f.sv, 100u + (uint32_t)i * 1000000u, 7u, 0);
		assert_int_equal(wt_tcp_handshake(&c), 0);
		assert_int_equal(wt_tcp_send(&c, WT_CLIENT, "hello", 5), 1);
		assert_int_equal(wt_tcp_send(&c, WT_SERVER, i ? "two" : "one", 3), 1);
		assert_int_equal(wt_tcp_close(&c, WT_SERVER), 0);
	}
	/* A frame with a corrupted payload byte and one with a corrupted IP header. */
	uint8_t frame[200];
	size_t n = wt_build_frame(frame, sizeof(frame), &f.cl, &f.sv, 1, 5, 5, WT_TCP_ACK, 1, NULL,
				  0, "xyz", 3);
	frame[n - 1] ^= 1;
	assert_int_equal(wt_writer_frame(f.w, frame, n), 0);
	frame[n - 1] ^= 1;
	frame[14 + 8] = 1; /* TTL */
	assert_int_equal(wt_writer_frame(f.w, frame, n), 0);
	assert_int_equal(wt_writer_close(f.w), 0);

	struct wt_capture cap;
	load_ok(f.path, &cap);
	assert_int_equal(cap.nconns, 2);
	assert_int_equal(cap.bad_tcp_csum, 1);
	assert_int_equal(cap.bad_ip_csum, 1);
	assert_memory_equal(cap.conns[0].dir[1].data, "one", 3);
	assert_memory_equal(cap.conns[1].dir[1].data, "two", 3);
	assert_int_equal(cap.conns[1].dir[0].isn, 1000100u);
	wt_capture_free(&cap);
	unlink(f.path);
}

static void test_errors(void **state)
{
	(void)state;
	char err[256];
	struct wt_capture cap;
	assert_int_equal(wt_capture_load("/nonexistent/x.pcap", &cap, err, sizeof(err)), -1);
	assert_true(strlen(err) > 0);
	assert_null(wt_writer_open("/nonexistent/dir/x.pcap", err, sizeof(err)));
}

/* A real siw capture: one connection, checksums valid, MPA keys at both stream starts. */
static void test_golden_rping(void **state)
{
	(void)state;
	const char *dir = getenv("SOFTRNIC_TRACES");
	assert_non_null(dir); /* the test must not pass without its input */
	char path[512];
	snprintf(path, sizeof(path), "%s/rping-stock.pcap", dir);
	struct wt_capture cap;
	load_ok(path, &cap);
	assert_int_equal(cap.nframes, 34);
	assert_int_equal(cap.tcp_frames, 34);
	assert_int_equal(cap.bad_ip_csum + cap.bad_tcp_csum, 0);
	assert_int_equal(cap.nconns, 1);
	struct wt_conn *k = &cap.conns[0];
	assert_true(k->saw_syn);
	assert_int_equal(k->dir[1].src.port, 7174);
	assert_true(k->dir[0].len > 20 && k->dir[1].len > 20);
	assert_memory_equal(k->dir[0].data, "MPA ID Req Frame", 16);
	assert_memory_equal(k->dir[1].data, "MPA ID Rep Frame", 16);
	assert_int_equal(k->dir[0].missing + k->dir[1].missing, 0);
	wt_capture_free(&cap);

	snprintf(path, sizeof(path), "%s/ib_read_bw-stock.pcap", dir);
	load_ok(path, &cap);
	assert_int_equal(cap.nframes, 219);
	assert_int_equal(cap.nconns, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(cap.conns[i].dir[1].src.port, 18515);
		assert_memory_equal(cap.conns[i].dir[0].data, "MPA ID Req Frame", 16);
		assert_int_equal(cap.conns[i].dir[0].missing + cap.conns[i].dir[1].missing, 0);
	}
	wt_capture_free(&cap);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/wiretrace-test-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_frame_checksums),
		cmocka_unit_test(test_connection_roundtrip),
		cmocka_unit_test(test_reorder_duplicates_holes),
		cmocka_unit_test(test_port_reuse_and_bad_checksum),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_golden_rping),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmpdir);
	return rc;
}
