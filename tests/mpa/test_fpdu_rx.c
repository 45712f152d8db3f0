/* MPA streaming FPDU decoder tests: golden siw FPDUs, round trips with CRC and markers on and
 * off fed in every way (all at once, 1 octet at a time, random chunks, every two-chunk split),
 * the piece protocol of mpa_rx_next(), and every error: CRC, marker, length, sticky failure,
 * truncation (need more, not an error).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mpa.h"
#include "mpa_test_util.h"

#define MAXF 64
#define WIRESZ (200 * 1024)

static uint64_t rng_state = 0x13198A2E03707344ull;

static uint32_t rng(void)
{
	return mpa_xorshift(&rng_state);
}

/* A test stream: FPDUs produced by the (separately tested) encoder, and what they carry. */
struct stream {
	bool crc, markers;
	uint32_t start;
	size_t n;
	size_t len[MAXF];
	size_t ulpdu_off[MAXF];  /* offset of each ULPDU in payload[] */
	size_t fpdu_end[MAXF];   /* wire offset just past each FPDU */
	size_t crc_at[MAXF];     /* wire offset of each FPDU's CRC field */
	uint8_t payload[WIRESZ];
	uint8_t wire[WIRESZ];
	size_t wlen;
};

static struct stream S; /* large: static */

static void build(struct stream *s, bool crc, bool markers, uint32_t start, size_t n,
		  size_t maxlen)
{
	struct mpa_tx tx;
	size_t poff = 0;

	assert_true(n <= MAXF);
	s->crc = crc;
	s->markers = markers;
	s->start = start;
	s->n = n;
	s->wlen = 0;
	mpa_tx_init(&tx, crc, markers);
	tx.pos = start;
	for (size_t k = 0; k < n; k++) {
		size_t len = rng() % (maxlen + 1);
		assert_true(poff + len <= WIRESZ);
		for (size_t i = 0; i < len; i++)
			s->payload[poff + i] = (uint8_t)rng();
		struct iovec iov = { s->payload + poff, len };
		ssize_t w = mpa_tx_encode(&tx, &iov, 1, s->wire + s->wlen, WIRESZ - s->wlen);
		assert_true(w > 0);
		s->len[k] = len;
		s->ulpdu_off[k] = poff;
		s->wlen += (size_t)w;
		s->fpdu_end[k] = s->wlen;
		/* The CRC is the last 4 octets; a marker cannot split it in a 4-aligned stream. */
		s->crc_at[k] = s->wlen - 4;
		poff += len;
	}
}

static void init_rx(struct mpa_rx *rx, const struct stream *s, size_t max_ulpdu, size_t head)
{
	struct mpa_rx_cfg cfg = { .crc = s->crc, .markers = s->markers, .pos = s->start,
				  .max_ulpdu = max_ulpdu, .head_len = head };
	mpa_rx_init(rx, &cfg);
}

/* Callback: checks each delivered ULPDU against the stream, in order. */
struct sink {
	const struct stream *s;
	size_t got;
};

static int on_ulpdu(void *arg, const uint8_t *ulpdu, size_t len)
{
	struct sink *k = arg;

	assert_true(k->got < k->s->n);
	assert_int_equal(len, k->s->len[k->got]);
	if (len > 0)
		assert_memory_equal(ulpdu, k->s->payload + k->s->ulpdu_off[k->got], len);
	k->got++;
	return 0;
}

static uint8_t asm_buf[70000];

/* Feeds the whole stream in chunks from chunk(); all FPDUs must arrive, no error. */
static void feed_all(const struct stream *s, size_t (*chunk)(size_t left), size_t head)
{
	struct mpa_rx rx;
	struct sink k = { s, 0 };
	size_t off = 0;

	init_rx(&rx, s, 0, head);
	while (off < s->wlen) {
		size_t n = chunk(s->wlen - off);
		int r = mpa_rx_feed(&rx, s->wire + off, n, asm_buf, sizeof(asm_buf), on_ulpdu, &k);
		assert_true(r >= 0);
		off += n;
	}
	assert_int_equal(k.got, s->n);
	assert_int_equal(mpa_rx_error(&rx)->ecode, MPA_ECODE_NONE);
	assert_int_equal(rx.pos, s->start + (uint32_t)s->wlen);
}

static size_t chunk_all(size_t left) { return left; }
static size_t chunk_one(size_t left) { (void)left; return 1; }
static size_t chunk_rand(size_t left)
{
	size_t big = rng() % 4 == 0; /* separate statements: a fixed rng() call order */
	size_t n = 1 + rng() % (big ? 3000 : 17);
	return n < left ? n : left;
}

static const uint32_t starts[] = { 0, 4, 8, 252, 256, 500, 504, 508, 512, 1020, 4096 - 4,
				   UINT32_MAX - 511 };

static void test_round_trip(void **state)
{
	(void)state;
	for (int crc = 0; crc <= 1; crc++) {
		for (int m = 0; m <= 1; m++) {
			for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
				uint32_t start = m ? starts[i] : rng();
				build(&S, crc, m, start, 24, 1500);
				feed_all(&S, chunk_all, 0);
				feed_all(&S, chunk_one, 0);
				feed_all(&S, chunk_rand, 0);
				build(&S, crc, m, start, 64, 9);
				feed_all(&S, chunk_one, 0);
				feed_all(&S, chunk_rand, 1);
			}
		}
	}
	/* Big ULPDUs, markers on, head_len at its maximum and beyond (clamped). */
	build(&S, true, true, 0, 3, 65000);
	feed_all(&S, chunk_rand, MPA_RX_HEAD_MAX);
	feed_all(&S, chunk_all, 1000);
}

/* Every two-chunk split of a marked stream: cuts inside markers, lengths, pads and CRCs. */
static void test_every_split(void **state)
{
	(void)state;
	for (int crc = 0; crc <= 1; crc++) {
		build(&S, crc, true, 500, 6, 700);
		for (size_t cut = 0; cut <= S.wlen; cut++) {
			struct mpa_rx rx;
			struct sink k = { &S, 0 };
			init_rx(&rx, &S, 0, 0);
			assert_true(mpa_rx_feed(&rx, S.wire, cut, asm_buf, sizeof(asm_buf), on_ulpdu,
						&k) >= 0);
			assert_true(mpa_rx_feed(&rx, S.wire + cut, S.wlen - cut, asm_buf,
						sizeof(asm_buf), on_ulpdu, &k) >= 0);
			assert_int_equal(k.got, S.n);
		}
	}
}

/* The piece protocol: HEAD (min(len, head_len) octets at offset 0), then DATA pieces at
 * contiguous offsets pointing into the current input chunk, then END; payload matches. */
static void check_pieces(const struct stream *s, size_t head, size_t (*chunk)(size_t))
{
	struct mpa_rx rx;
	struct mpa_rx_piece p;
	size_t off = 0, k = 0, next_off = 0;
	bool in_fpdu = false;
	size_t hl = head == 0 ? MPA_RX_HEAD_DEFAULT : head;

	init_rx(&rx, s, 0, head);
	while (off < s->wlen || in_fpdu) {
		size_t n = off < s->wlen ? chunk(s->wlen - off) : 0;
		const uint8_t *in = s->wire + off;
		size_t used = 0;
		for (;;) {
			used += mpa_rx_next(&rx, in + used, n - used, &p);
			assert_true(used <= n);
			if (p.kind == MPA_RX_NEED_MORE) {
				assert_int_equal(used, n);
				break;
			}
			assert_int_not_equal(p.kind, MPA_RX_ERROR);
			const uint8_t *exp = s->payload + s->ulpdu_off[k];
			if (p.kind == MPA_RX_HEAD) {
				assert_false(in_fpdu);
				in_fpdu = true;
				assert_int_equal(p.ulpdu_len, s->len[k]);
				assert_int_equal(p.off, 0);
				assert_int_equal(p.len, s->len[k] < hl ? s->len[k] : hl);
				if (p.len)
					assert_memory_equal(p.data, exp, p.len);
				next_off = p.len;
			} else if (p.kind == MPA_RX_DATA) {
				assert_true(in_fpdu);
				assert_int_equal(p.off, next_off);
				assert_true(p.len > 0);
				assert_true(p.data >= in && p.data + p.len <= in + used);
				assert_memory_equal(p.data, exp + p.off, p.len);
				next_off += p.len;
			} else {
				assert_int_equal(p.kind, MPA_RX_END);
				assert_true(in_fpdu);
				assert_int_equal(next_off, s->len[k]);
				assert_int_equal(p.ulpdu_len, s->len[k]);
				/* END comes only after the whole FPDU, CRC included, was consumed. */
				assert_int_equal(off + used, s->fpdu_end[k]);
				in_fpdu = false;
				k++;
			}
		}
		off += n;
		if (n == 0)
			break;
	}
	assert_int_equal(k, s->n);
}

static void test_pieces(void **state)
{
	(void)state;
	for (int crc = 0; crc <= 1; crc++) {
		for (int m = 0; m <= 1; m++) {
			build(&S, crc, m, 0, 40, 1200);
			check_pieces(&S, 0, chunk_all);
			check_pieces(&S, 0, chunk_one);
			check_pieces(&S, 7, chunk_rand);
			check_pieces(&S, 128, chunk_rand);
		}
	}
}

/* Without markers and with everything in one chunk, the head is not copied. */
static void test_head_zero_copy(void **state)
{
	struct mpa_rx rx;
	struct mpa_rx_piece p;

	(void)state;
	memset(&S, 0, sizeof(S));
	S.crc = true;
	/* One 200-octet ULPDU. */
	struct mpa_tx tx;
	uint8_t pl[200];
	struct iovec iov = { pl, sizeof(pl) };
	for (size_t i = 0; i < sizeof(pl); i++)
		pl[i] = (uint8_t)i;
	mpa_tx_init(&tx, true, false);
	ssize_t w = mpa_tx_encode(&tx, &iov, 1, S.wire, WIRESZ);
	assert_int_equal(w, 2 + 200 + 2 + 4);
	init_rx(&rx, &S, 0, 0);
	assert_int_equal(mpa_rx_next(&rx, S.wire, (size_t)w, &p), 2 + 64);
	assert_int_equal(p.kind, MPA_RX_HEAD);
	assert_ptr_equal(p.data, S.wire + 2);
	/* Split in the head: the head is gathered internally. */
	init_rx(&rx, &S, 0, 0);
	assert_int_equal(mpa_rx_next(&rx, S.wire, 10, &p), 10);
	assert_int_equal(p.kind, MPA_RX_NEED_MORE);
	assert_int_equal(mpa_rx_next(&rx, S.wire + 10, (size_t)w - 10, &p), 2 + 64 - 10);
	assert_int_equal(p.kind, MPA_RX_HEAD);
	assert_ptr_not_equal(p.data, S.wire + 2);
	assert_memory_equal(p.data, pl, 64);
}

/* Without CRC the field is still consumed but not checked; END comes with its last octet. */
static void test_crc_field_without_crc(void **state)
{
	struct mpa_rx rx;
	struct mpa_rx_piece p;
	struct mpa_tx tx;
	uint8_t pl[102], wire[200];
	struct iovec iov = { pl, sizeof(pl) };
	struct mpa_rx_cfg cfg = { 0 };

	(void)state;
	memset(pl, 7, sizeof(pl));
	mpa_tx_init(&tx, false, false);
	assert_int_equal(mpa_tx_encode(&tx, &iov, 1, wire, sizeof(wire)), 108);
	wire[105] = 0xEE;  /* garbage in the unused CRC field */
	mpa_rx_init(&rx, &cfg);
	assert_int_equal(mpa_rx_next(&rx, wire, 108, &p), 66);
	assert_int_equal(p.kind, MPA_RX_HEAD);
	assert_int_equal(mpa_rx_next(&rx, wire + 66, 40, &p), 38);
	assert_int_equal(p.kind, MPA_RX_DATA);
	assert_int_equal(p.off, 64);
	assert_int_equal(p.len, 38);
	assert_int_equal(mpa_rx_next(&rx, wire + 104, 0, &p), 0);
	assert_int_equal(p.kind, MPA_RX_NEED_MORE);
	assert_int_equal(mpa_rx_next(&rx, wire + 104, 2, &p), 2);
	assert_int_equal(p.kind, MPA_RX_NEED_MORE);
	assert_int_equal(mpa_rx_next(&rx, wire + 106, 2, &p), 2);
	assert_int_equal(p.kind, MPA_RX_END);
	assert_int_equal(p.ulpdu_len, 102);
	assert_int_equal(mpa_rx_next(&rx, NULL, 0, &p), 0);
	assert_int_equal(p.kind, MPA_RX_NEED_MORE);
	/* The same stream with CRC expected fails. */
	cfg.crc = true;
	mpa_rx_init(&rx, &cfg);
	assert_int_equal(mpa_rx_feed(&rx, wire, 108, asm_buf, sizeof(asm_buf), NULL, NULL),
			 -EPROTO);
	assert_int_equal(mpa_rx_error(&rx)->ecode, MPA_ECODE_CRC);
}

/* The siw golden FPDUs (see test_fpdu_tx.c) decode with CRC on, back to back. */
static void test_golden_decode(void **state)
{
	static const char *const golden[] = {
		"002241430000000000000000000000010000000000005559e89dee20390953000000004088004d2c",
		"002e414100000000000000010000000100000000262ec400000055a1b713a4c0000000403909530000"
		"005559e89dee201d5bb1cd",
		"004ec140c7c5e40000005559e89db4c072646d612d70696e672d303a204142434445464748494a4b4c"
		"4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f70717200222db416",
	};
	uint8_t wire[512];
	size_t wlen = 0;
	struct mpa_rx rx;
	struct mpa_rx_cfg cfg = { .crc = true };

	(void)state;
	memset(&S, 0, sizeof(S));
	S.crc = true;
	for (size_t g = 0; g < 3; g++) {
		size_t start = wlen;
		for (size_t i = 0; golden[g][2 * i]; i++) {
			unsigned v;
			assert_int_equal(sscanf(golden[g] + 2 * i, "%2x", &v), 1);
			wire[wlen++] = (uint8_t)v;
		}
		S.len[g] = (size_t)wire[start] << 8 | wire[start + 1];
		S.ulpdu_off[g] = start + 2;
	}
	memcpy(S.payload, wire, wlen);
	S.n = 3;
	struct sink k = { &S, 0 };
	mpa_rx_init(&rx, &cfg);
	assert_int_equal(mpa_rx_feed(&rx, wire, wlen, asm_buf, sizeof(asm_buf), on_ulpdu, &k), 3);
	assert_int_equal(k.got, 3);
	/* rping-stock.pcap frames 8 and 10: no CRC negotiated, zero CRC field. */
	static const char *const stock =
		"0022414300000000000000000000000100000000000055c154348e20b9d724000000004000000000"
		"004ec1425d80ed000000564ccd65c4c072646d612d70696e672d303a204142434445464748494a4b4c"
		"4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f7071720000000000";
	uint8_t sw[256];
	size_t slen = 0;
	for (size_t i = 0; stock[2 * i]; i++) {
		unsigned v;
		assert_int_equal(sscanf(stock + 2 * i, "%2x", &v), 1);
		sw[slen++] = (uint8_t)v;
	}
	struct mpa_rx_cfg nocrc = { .crc = false };
	mpa_rx_init(&rx, &nocrc);
	assert_int_equal(mpa_rx_feed(&rx, sw, slen, asm_buf, sizeof(asm_buf), NULL, NULL), 2);
	assert_int_equal(rx.pos, slen);

	/* The last CRC written most significant octet first must fail: pins the byte order. */
	uint8_t t = wire[wlen - 4];
	wire[wlen - 4] = wire[wlen - 1];
	wire[wlen - 1] = t;
	t = wire[wlen - 3];
	wire[wlen - 3] = wire[wlen - 2];
	wire[wlen - 2] = t;
	k.got = 0;
	mpa_rx_init(&rx, &cfg);
	assert_int_equal(mpa_rx_feed(&rx, wire, wlen, asm_buf, sizeof(asm_buf), on_ulpdu, &k),
			 -EPROTO);
	assert_int_equal(k.got, 2);
	assert_int_equal(mpa_rx_error(&rx)->ecode, MPA_ECODE_CRC);
}

/* Feeds s (possibly corrupted) octet by octet or at once; returns minus the ecode after an
 * error, else the number of ULPDUs delivered; *got is the ULPDUs delivered either way. */
static int feed_mode(const struct stream *s, size_t max_ulpdu, bool bytewise, size_t *got)
{
	struct mpa_rx rx;
	struct sink k = { s, 0 };
	int r = 0;

	init_rx(&rx, s, max_ulpdu, 0);
	if (!bytewise) {
		r = mpa_rx_feed(&rx, s->wire, s->wlen, asm_buf, sizeof(asm_buf), on_ulpdu, &k);
	} else {
		for (size_t i = 0; i < s->wlen && r >= 0; i++)
			r = mpa_rx_feed(&rx, s->wire + i, 1, asm_buf, sizeof(asm_buf), on_ulpdu, &k);
	}
	*got = k.got;
	if (r < 0) {
		/* Sticky: nothing more is consumed, the same error comes back. */
		struct mpa_rx_piece p;
		enum mpa_ecode e = mpa_rx_error(&rx)->ecode;
		assert_int_equal(mpa_rx_next(&rx, s->wire, s->wlen, &p), 0);
		assert_int_equal(p.kind, MPA_RX_ERROR);
		assert_int_equal(p.err.ecode, e);
		assert_non_null(p.err.reason);
		return -(int)e;
	}
	return (int)k.got;
}

static void test_crc_errors(void **state)
{
	(void)state;
	for (int m = 0; m <= 1; m++) {
		build(&S, true, m, 0, 3, 900);
		size_t first = S.fpdu_end[0], end = S.fpdu_end[1];
		/* Every octet of the second FPDU after its length field: ULPDU, pad, markers
		 * inside it and the CRC itself. Marker octets give a marker error instead. */
		size_t hdr = first + ((S.start + first) % 512 == 0 && m ? 4 : 0);
		for (size_t i = hdr + 2; i < end; i++) {
			bool is_marker = m && (S.start + i) % 512 < 4;
			for (int bit = 0; bit < 8; bit += 3) {
				size_t got;
				S.wire[i] ^= (uint8_t)(1u << bit);
				for (int bw = 0; bw <= 1; bw++) {
					int r = feed_mode(&S, 0, bw, &got);
					assert_int_equal(got, 1);
					size_t mo = (S.start + i) % 512;
					/* FPDUPTR bits are checked at the marker, except its two
					 * low bits; those and Reserved only break the CRC. */
					if (is_marker && (mo == 2 || (mo == 3 && bit >= 2)))
						assert_int_equal(r, -MPA_ECODE_MARKER);
					else
						assert_int_equal(r, -MPA_ECODE_CRC);
				}
				S.wire[i] ^= (uint8_t)(1u << bit);
			}
		}
		size_t got;
		assert_int_equal(feed_mode(&S, 0, false, &got), 3);
	}
}

static void test_crc_off_ignores_field(void **state)
{
	(void)state;
	for (int m = 0; m <= 1; m++) {
		build(&S, false, m, 0, 6, 900);
		for (size_t k = 0; k < S.n; k++)
			for (size_t b = 0; b < 4; b++)
				S.wire[S.crc_at[k] + b] = (uint8_t)rng();
		size_t got;
		assert_int_equal(feed_mode(&S, 0, false, &got), 6);
		assert_int_equal(feed_mode(&S, 0, true, &got), 6);
	}
}

static void test_marker_errors(void **state)
{
	(void)state;
	for (int crc = 0; crc <= 1; crc++) {
		build(&S, crc, true, 256, 10, 2000);
		size_t nm = 0;
		for (size_t i = 0; i < S.wlen; i++) {
			if ((S.start + i) % 512 != 0)
				continue;
			nm++;
			/* Which FPDU holds this marker: the FPDUs before it are delivered. */
			size_t before = 0;
			while (S.fpdu_end[before] <= i)
				before++;
			for (int v = 0; v < 4; v++) {
				uint8_t save[4];
				size_t got;
				memcpy(save, S.wire + i, 4);
				if (v == 0)
					S.wire[i + 2] ^= 0x80;           /* FPDUPTR off by 32 KiB */
				else if (v == 1)
					S.wire[i + 3] ^= 0x04;           /* off by 4 */
				else if (v == 2)
					S.wire[i + 3] ^= 0x03;           /* low bits: ignored */
				else
					S.wire[i] ^= 0x5A;               /* reserved: ignored */
				for (int bw = 0; bw <= 1; bw++) {
					int r = feed_mode(&S, 0, bw, &got);
					if (v < 2) {
						assert_int_equal(r, -MPA_ECODE_MARKER);
						assert_int_equal(got, before);
					} else if (crc) {
						assert_int_equal(r, -MPA_ECODE_CRC); /* still covered */
						assert_int_equal(got, before);
					} else {
						assert_int_equal(r, (int)S.n);
					}
				}
				memcpy(S.wire + i, save, 4);
			}
		}
		assert_true(nm >= 8);
	}
	/* A receiver whose idea of the marker origin is off sees bad markers at once. */
	build(&S, false, true, 0, 4, 1000);
	S.start = 4;
	struct mpa_rx rx;
	init_rx(&rx, &S, 0, 0);
	assert_int_equal(mpa_rx_feed(&rx, S.wire, S.wlen, asm_buf, sizeof(asm_buf), NULL, NULL),
			 -EPROTO);
	assert_int_equal(mpa_rx_error(&rx)->ecode, MPA_ECODE_MARKER);
}

static void test_length_errors(void **state)
{
	(void)state;
	for (int m = 0; m <= 1; m++) {
		struct mpa_tx tx;
		uint8_t pl[1001] = { 0 };
		struct iovec ok = { pl, 1000 }, big = { pl, 1001 };
		size_t got;

		memset(&S, 0, sizeof(S));
		S.crc = true;
		S.markers = m;
		mpa_tx_init(&tx, true, m);
		S.wlen = (size_t)mpa_tx_encode(&tx, &ok, 1, S.wire, WIRESZ);
		S.len[0] = 1000;
		S.n = 1;
		assert_int_equal(feed_mode(&S, 1000, false, &got), 1);
		S.wlen += (size_t)mpa_tx_encode(&tx, &big, 1, S.wire + S.wlen, WIRESZ - S.wlen);
		S.len[1] = 1001;
		S.n = 2;
		assert_int_equal(feed_mode(&S, 1000, false, &got), -MPA_ECODE_MARKER);
		assert_int_equal(got, 1);
		assert_int_equal(feed_mode(&S, 1000, true, &got), -MPA_ECODE_MARKER);
		assert_int_equal(feed_mode(&S, 0, false, &got), 2);
		/* The error is raised at the length field, before any of the ULPDU. */
		struct mpa_rx rx;
		struct mpa_rx_piece p;
		size_t first = (size_t)mpa_tx_fpdu_len(&(struct mpa_tx){ true, m, 0 }, 1000);
		init_rx(&rx, &S, 1000, 0);
		size_t used = 0;
		do {
			used += mpa_rx_next(&rx, S.wire + used, S.wlen - used, &p);
		} while (p.kind != MPA_RX_ERROR && p.kind != MPA_RX_NEED_MORE);
		assert_int_equal(p.kind, MPA_RX_ERROR);
		assert_int_equal(used, first + MPA_HDR_LEN);
	}
}

/* Every prefix of a stream: only complete FPDUs are delivered, never an error; the rest
 * completes the stream. */
static void test_truncated(void **state)
{
	(void)state;
	for (int crc = 0; crc <= 1; crc++) {
		for (int m = 0; m <= 1; m++) {
			build(&S, crc, m, 0, 5, 600);
			for (size_t cut = 0; cut <= S.wlen; cut++) {
				struct mpa_rx rx;
				struct sink k = { &S, 0 };
				size_t complete = 0;
				while (complete < S.n && S.fpdu_end[complete] <= cut)
					complete++;
				init_rx(&rx, &S, 0, 0);
				int r = mpa_rx_feed(&rx, S.wire, cut, asm_buf, sizeof(asm_buf),
						    on_ulpdu, &k);
				assert_int_equal(r, (int)complete);
				r = mpa_rx_feed(&rx, S.wire + cut, S.wlen - cut, asm_buf,
						sizeof(asm_buf), on_ulpdu, &k);
				assert_int_equal(r, (int)(S.n - complete));
			}
		}
	}
}

static int stop_cb(void *arg, const uint8_t *ulpdu, size_t len)
{
	(void)ulpdu;
	(void)len;
	++*(int *)arg;
	return 42;
}

static void test_feed_limits(void **state)
{
	struct mpa_rx rx;
	int calls = 0;

	(void)state;
	build(&S, true, false, 0, 4, 0);
	for (size_t k = 0; k < 4; k++)
		assert_int_equal(S.len[k], 0);   /* empty ULPDUs are legal MPA */
	init_rx(&rx, &S, 0, 0);
	assert_int_equal(mpa_rx_feed(&rx, S.wire, S.wlen, asm_buf, sizeof(asm_buf), stop_cb,
				     &calls), 42);
	assert_int_equal(calls, 1);
	/* Buffer too small for the ULPDU. */
	build(&S, false, false, 0, 1, 0);
	struct mpa_tx tx;
	uint8_t pl[100] = { 0 };
	struct iovec iov = { pl, sizeof(pl) };
	mpa_tx_init(&tx, false, false);
	S.wlen = (size_t)mpa_tx_encode(&tx, &iov, 1, S.wire, WIRESZ);
	init_rx(&rx, &S, 0, 0);
	assert_int_equal(mpa_rx_feed(&rx, S.wire, S.wlen, asm_buf, 99, NULL, NULL), -ENOBUFS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_decode),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_every_split),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_head_zero_copy),
		cmocka_unit_test(test_crc_field_without_crc),
		cmocka_unit_test(test_crc_errors),
		cmocka_unit_test(test_crc_off_ignores_field),
		cmocka_unit_test(test_marker_errors),
		cmocka_unit_test(test_length_errors),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_feed_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
