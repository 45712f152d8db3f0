/* MPA FPDU encoder tests: byte-exact golden FPDUs from a Linux siw capture (CRC value and byte
 * order included), pad 0..3, MULPDU, markers at every start offset checked by an independent
 * octet-wise scanner, zero-copy framing, error returns and output guard bytes.
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

#define GUARD 32
#define GUARD_BYTE 0xA5
#define BUFSZ (70 * 1024)

static uint64_t rng_state = 0x243F6A8885A308D3ull;

static uint32_t rng(void)
{
	return mpa_xorshift(&rng_state);
}

static void fill_random(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)rng();
}

/* Output buffer with guard zones on both sides. */
static uint8_t *guarded(uint8_t *raw, size_t len)
{
	memset(raw, GUARD_BYTE, len + 2 * GUARD);
	return raw + GUARD;
}

static void check_guards(const uint8_t *raw, size_t len)
{
	for (size_t i = 0; i < GUARD; i++) {
		assert_int_equal(raw[i], GUARD_BYTE);
		assert_int_equal(raw[GUARD + len + i], GUARD_BYTE);
	}
}

/* TCP payloads of rping-crc.pcap frames 8 (Send), 9 (Read Request) and 13 (RDMA Write),
 * both siw peers with mpa_crc_required (`tshark -T fields -e tcp.payload`); Wireshark
 * reports "Good CRC32" for all three. */
static const char *const golden[] = {
	"002241430000000000000000000000010000000000005559e89dee20390953000000004088004d2c",
	"002e414100000000000000010000000100000000262ec400000055a1b713a4c0000000403909530000005559e89dee201d5bb1cd",
	("004ec140c7c5e40000005559e89db4c072646d612d70696e672d303a204142434445464748494a4b4c4d4e4f"
	 "505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f70717200222db416"),
};

/* rping-stock.pcap frames 8 and 10 (no CRC negotiated): the CRC field is present, zero. */
static const char *const golden_nocrc[] = {
	"0022414300000000000000000000000100000000000055c154348e20b9d724000000004000000000",
	("004ec1425d80ed000000564ccd65c4c072646d612d70696e672d303a204142434445464748494a4b4c4d4e4f"
	 "505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f7071720000000000"),
};

static void test_golden_siw_nocrc(void **state)
{
	(void)state;
	for (size_t g = 0; g < 2; g++) {
		uint8_t wire[256], out[256];
		size_t n = unhex(golden_nocrc[g], wire, sizeof(wire));
		size_t ulpdu_len = (size_t)wire[0] << 8 | wire[1];
		struct iovec iov = { wire + 2, ulpdu_len };
		struct mpa_tx_frame f;
		struct mpa_tx tx;

		mpa_tx_init(&tx, false, false);
		assert_int_equal(mpa_tx_encode(&tx, &iov, 1, out, sizeof(out)), (ssize_t)n);
		assert_memory_equal(out, wire, n);
		mpa_tx_init(&tx, false, false);
		assert_int_equal(mpa_tx_frame(&tx, &iov, 1, &f), 0);
		assert_int_equal(f.trailer_len, n - 2 - ulpdu_len);
		assert_memory_equal(f.trailer, wire + 2 + ulpdu_len, f.trailer_len);
	}
}

static void test_golden_siw_fpdus(void **state)
{
	(void)state;
	for (size_t g = 0; g < sizeof(golden) / sizeof(golden[0]); g++) {
		uint8_t wire[256], raw[256 + 2 * GUARD];
		size_t n = unhex(golden[g], wire, sizeof(wire));
		size_t ulpdu_len = (size_t)wire[0] << 8 | wire[1];
		struct mpa_tx tx;

		/* DDP header and payload as separate iovecs, like the DDP layer hands them down. */
		struct iovec iov[2] = { { wire + 2, 14 }, { wire + 16, ulpdu_len - 14 } };
		uint8_t *out = guarded(raw, n);

		mpa_tx_init(&tx, true, false);
		assert_int_equal(mpa_tx_fpdu_len(&tx, ulpdu_len), n);
		assert_int_equal(mpa_tx_encode(&tx, iov, 2, out, n), (ssize_t)n);
		assert_memory_equal(out, wire, n);
		check_guards(raw, n);
		assert_int_equal(tx.pos, n);

		/* The zero-copy framing yields the same octets around the untouched payload. */
		struct mpa_tx_frame f;
		mpa_tx_init(&tx, true, false);
		assert_int_equal(mpa_tx_frame(&tx, iov, 2, &f), 0);
		assert_int_equal(f.fpdu_len, n);
		assert_memory_equal(f.hdr, wire, MPA_HDR_LEN);
		assert_int_equal(f.trailer_len, n - MPA_HDR_LEN - ulpdu_len);
		assert_memory_equal(f.trailer, wire + MPA_HDR_LEN + ulpdu_len, f.trailer_len);
		assert_int_equal(tx.pos, n);
	}
}

/* ULPDU lengths 0..11 cover every pad length several times, CRC on and off. */
static void test_pad_lengths(void **state)
{
	(void)state;
	for (int crc = 0; crc <= 1; crc++) {
		for (size_t len = 0; len < 12; len++) {
			uint8_t payload[16], raw[64 + 2 * GUARD];
			size_t pad = (4 - (2 + len) % 4) % 4;
			size_t want = 2 + len + pad + 4; /* the CRC field is always there */
			struct iovec iov = { payload, len };
			struct mpa_tx tx;
			uint8_t *out = guarded(raw, want);

			fill_random(payload, sizeof(payload));
			assert_int_equal(mpa_pad_len(len), pad);
			mpa_tx_init(&tx, crc, false);
			assert_int_equal(mpa_tx_encode(&tx, &iov, 1, out, want), (ssize_t)want);
			check_guards(raw, want);
			assert_int_equal(want % 4, 0);
			assert_int_equal(out[0], 0);
			assert_int_equal(out[1], len);
			if (len > 0)
				assert_memory_equal(out + 2, payload, len);
			for (size_t i = 0; i < pad; i++)
				assert_int_equal(out[2 + len + i], 0);
			uint32_t v = crc ? mpa_crc32c_final(mpa_crc32c_update_table(
						   MPA_CRC32C_INIT, out, 2 + len + pad)) : 0;
			const uint8_t *c = out + 2 + len + pad;
			assert_int_equal(c[0] | c[1] << 8 | c[2] << 16 | (uint32_t)c[3] << 24, v);
		}
	}
}

static void test_mulpdu(void **state)
{
	(void)state;
	/* What siw sends at MSS 1448 (ib_write_bw-stock.pcap: 1448-octet FPDUs, ULPDU 1442). */
	assert_int_equal(mpa_mulpdu(1448, false), 1442);
	assert_int_equal(mpa_mulpdu(1448, true), 1448 - 6 - 12);
	struct mpa_tx t0;
	mpa_tx_init(&t0, false, false);  /* CRC off changes nothing: the field is still sent */
	assert_int_equal(mpa_tx_fpdu_len(&t0, 1442), 1448);
	assert_int_equal(mpa_mulpdu(1449, false), 1442);
	assert_int_equal(mpa_mulpdu(1451, false), 1442);
	assert_int_equal(mpa_mulpdu(1452, false), 1446);
	assert_int_equal(mpa_mulpdu(512, true), 512 - 6 - 4);
	assert_int_equal(mpa_mulpdu(513, true), 513 - 6 - 8 - 1);
	assert_int_equal(mpa_mulpdu(6, false), 0);
	assert_int_equal(mpa_mulpdu(0, true), 0);
	assert_int_equal(mpa_mulpdu(1 << 20, false), MPA_MAX_ULPDU);

	/* A MULPDU-sized FPDU fits one EMSS segment at every 4-aligned stream position, CRC
	 * included; without markers one octet more does not fit when EMSS is 4-aligned. */
	for (size_t emss = 8; emss <= 9000; emss += 1 + emss / 64) {
		for (int m = 0; m <= 1; m++) {
			size_t mul = mpa_mulpdu(emss, m);
			if (mul == 0)
				continue;
			for (uint32_t pos = 0; pos < 1024; pos += 4) {
				struct mpa_tx tx;
				mpa_tx_init(&tx, true, m);
				tx.pos = pos;
				assert_true(mpa_tx_fpdu_len(&tx, mul) <= emss);
			}
			if (!m && emss % 4 == 0) {
				struct mpa_tx tx;
				mpa_tx_init(&tx, true, false);
				assert_true(mpa_tx_fpdu_len(&tx, mul + 1) > emss);
			}
		}
	}
}

/* Independent check of a marked stream: every 512th octet from the origin is a marker;
 * stripping them must leave well-formed back-to-back FPDUs; each marker's FPDUPTR must be 0
 * with a header right behind it, or point back to the header of the FPDU it sits in; every
 * CRC must cover the FPDU's wire octets (markers included) before it, or be zero. */
struct fpdu_ref {
	size_t ulpdu_len;
	const uint8_t *ulpdu;
};

static void scan_marked_stream(const uint8_t *w, size_t wlen, uint32_t origin_pos, bool crc,
			       const struct fpdu_ref *ref, size_t nref)
{
	size_t *content_at = calloc(wlen + 1, sizeof(*content_at)); /* content index -> wire off */
	uint8_t *content = malloc(wlen + 1);
	size_t clen = 0, markers = 0;

	assert_non_null(content_at);
	assert_non_null(content);
	for (size_t i = 0; i < wlen; i++) {
		if ((origin_pos + i) % 512 == 0) {
			assert_true(i + 4 <= wlen);
			markers++;
			i += 3;
			continue;
		}
		content_at[clen] = i;
		content[clen++] = w[i];
	}
	assert_true(markers > 0 || wlen < 512);

	/* Walk the FPDUs in marker-free space. */
	size_t c = 0, wire_start = 0;
	for (size_t k = 0; k < nref; k++) {
		size_t len = (size_t)content[c] << 8 | content[c + 1];
		size_t pad = (4 - (2 + len) % 4) % 4;
		size_t hdr_wire = content_at[c];
		assert_int_equal(len, ref[k].ulpdu_len);
		for (size_t i = 0; i < len; i++)
			assert_int_equal(content[c + 2 + i], ref[k].ulpdu[i]);
		for (size_t i = 0; i < pad; i++)
			assert_int_equal(content[c + 2 + len + i], 0);
		size_t end_c = c + 2 + len + pad + 4;
		size_t wire_end = content_at[end_c - 1] + 1;

		/* Markers in [wire_start, wire_end) belong to this FPDU. */
		for (size_t i = wire_start; i < wire_end; i++) {
			if ((origin_pos + i) % 512 != 0)
				continue;
			assert_int_equal(w[i], 0);
			assert_int_equal(w[i + 1], 0);
			size_t ptr = (size_t)w[i + 2] << 8 | w[i + 3];
			if (i < hdr_wire) {
				assert_int_equal(ptr, 0);
				assert_int_equal(hdr_wire, i + 4);
				assert_int_equal(i, wire_start);
			} else {
				assert_int_equal(ptr, i - hdr_wire);
			}
		}
		{
			size_t crc_wire = content_at[end_c - 4];
			uint32_t v = crc ? mpa_crc32c_final(mpa_crc32c_update_table(
				MPA_CRC32C_INIT, w + wire_start, crc_wire - wire_start)) : 0;
			uint8_t got[4];
			for (int b = 0; b < 4; b++)
				got[b] = content[end_c - 4 + b];
			assert_int_equal(got[0] | got[1] << 8 | got[2] << 16 | (uint32_t)got[3] << 24, v);
		}
		c = end_c;
		wire_start = wire_end;
	}
	assert_int_equal(c, clen);
	assert_int_equal(wire_start, wlen);
	free(content_at);
	free(content);
}

static void encode_marked_stream(uint32_t start, bool crc, size_t nfpdu, size_t maxlen)
{
	uint8_t *raw = malloc(BUFSZ * 4 + 2 * GUARD);
	uint8_t *payload = malloc(BUFSZ * 4);
	struct fpdu_ref ref[64];
	struct mpa_tx tx;
	size_t off = 0, poff = 0;

	assert_non_null(raw);
	assert_non_null(payload);
	assert_true(nfpdu <= 64);
	uint8_t *out = guarded(raw, BUFSZ * 4);
	mpa_tx_init(&tx, crc, true);
	tx.pos = start;
	for (size_t k = 0; k < nfpdu; k++) {
		size_t len = rng() % (maxlen + 1);
		assert_true(poff + len <= BUFSZ * 4);
		fill_random(payload + poff, len);
		ref[k].ulpdu = payload + poff;
		ref[k].ulpdu_len = len;
		/* Split the ULPDU over up to three iovecs to cross marker and iovec edges. */
		size_t a = len ? rng() % (len + 1) : 0, b = len - a ? rng() % (len - a + 1) : 0;
		struct iovec iov[3] = { { payload + poff, a }, { payload + poff + a, b },
					{ payload + poff + a + b, len - a - b } };
		size_t want = mpa_tx_fpdu_len(&tx, len);
		uint32_t pos0 = tx.pos;
		ssize_t n = mpa_tx_encode(&tx, iov, 3, out + off, BUFSZ * 4 - off);
		assert_int_equal(n, (ssize_t)want);
		assert_int_equal(tx.pos, pos0 + (uint32_t)n);
		assert_int_equal(n % 4, 0);
		off += (size_t)n;
		poff += len;
	}
	check_guards(raw, BUFSZ * 4);
	for (size_t i = off; i < BUFSZ * 4; i++)
		assert_int_equal(out[i], GUARD_BYTE);
	scan_marked_stream(out, off, start, crc, ref, nfpdu);
	free(raw);
	free(payload);
}

static void test_markers_every_start_offset(void **state)
{
	(void)state;
	for (uint32_t start = 0; start < 1024; start += 4) {
		encode_marked_stream(start, true, 8, 1500);
		encode_marked_stream(start, false, 8, 700);
	}
	/* Stream position wrap-around: 2^32 is a multiple of 512, markers stay in place. */
	encode_marked_stream(UINT32_MAX - 1023, true, 16, 1500);
}

static void test_markers_small_and_large(void **state)
{
	(void)state;
	for (uint32_t start = 0; start < 512; start += 4) {
		encode_marked_stream(start, true, 64, 12);   /* many FPDUs per interval */
	}
	encode_marked_stream(0, true, 3, 60000);             /* ~117 markers per FPDU */
	encode_marked_stream(508, false, 3, 60000);
}

/* Hand-checked layout: origin 0, one 1000-octet ULPDU with CRC.
 * wire 0..3 marker(0) | 4..5 len | 6..511 ULPDU[0..506) | 512..515 marker(508) |
 * 516..1009 ULPDU[506..1000) | 1010..1011 pad | 1012..1015 CRC: 1016 octets. */
static void test_marker_layout_by_hand(void **state)
{
	uint8_t payload[1000], out[1100];
	struct iovec iov = { payload, sizeof(payload) };
	struct mpa_tx tx;

	(void)state;
	fill_random(payload, sizeof(payload));
	mpa_tx_init(&tx, true, true);
	assert_int_equal(mpa_tx_fpdu_len(&tx, 1000), 1016);
	assert_int_equal(mpa_tx_encode(&tx, &iov, 1, out, sizeof(out)), 1016);
	static const uint8_t m0[4] = { 0, 0, 0, 0 }, m1[4] = { 0, 0, 0x01, 0xFC };
	assert_memory_equal(out, m0, 4);
	assert_int_equal(out[4], 0x03);
	assert_int_equal(out[5], 0xE8);
	assert_memory_equal(out + 6, payload, 506);
	assert_memory_equal(out + 512, m1, 4);
	assert_memory_equal(out + 516, payload + 506, 494);
	assert_int_equal(out[1010], 0);
	assert_int_equal(out[1011], 0);
	uint32_t v = mpa_crc32c_final(mpa_crc32c_update_table(MPA_CRC32C_INIT, out, 1012));
	assert_int_equal(out[1012] | out[1013] << 8 | out[1014] << 16 | (uint32_t)out[1015] << 24, v);
	assert_int_equal(tx.pos, 1016);

	/* An FPDU ending exactly on a marker position leaves that marker to its successor,
	 * which then starts with it (FPDUPTR 0). */
	tx.pos = 512 - 8;  /* 8 content octets end exactly at 512 */
	uint8_t tiny[2] = { 1, 2 };
	struct iovec t = { tiny, 2 };
	assert_int_equal(mpa_tx_fpdu_len(&tx, 2), 8);
	assert_int_equal(mpa_tx_encode(&tx, &t, 1, out, sizeof(out)), 8);
	assert_int_equal(tx.pos, 512);
	assert_int_equal(mpa_tx_encode(&tx, &t, 1, out, sizeof(out)), 12);
	assert_memory_equal(out, m0, 4);  /* leading marker, FPDUPTR 0 */
}

static void test_errors_and_guards(void **state)
{
	uint8_t payload[100], raw[200 + 2 * GUARD];
	struct iovec iov = { payload, sizeof(payload) };
	struct mpa_tx tx;

	(void)state;
	fill_random(payload, sizeof(payload));
	for (int m = 0; m <= 1; m++) {
		mpa_tx_init(&tx, true, m);
		tx.pos = 500;
		size_t want = mpa_tx_fpdu_len(&tx, 100);
		for (size_t cap = 0; cap < want; cap++) {
			uint8_t *out = guarded(raw, 200);
			assert_int_equal(mpa_tx_encode(&tx, &iov, 1, out, cap), -ENOBUFS);
			assert_int_equal(tx.pos, 500);
			check_guards(raw, 200);
			for (size_t i = 0; i < 200; i++)
				assert_int_equal(out[i], GUARD_BYTE);
		}
		uint8_t *out = guarded(raw, want);
		assert_int_equal(mpa_tx_encode(&tx, &iov, 1, out, want), (ssize_t)want);
		check_guards(raw, want);
	}

	/* 64 KiB + 1 octets: too long for ULPDU_Length, in one or several iovecs. */
	static uint8_t big[65536];
	struct iovec one = { big, sizeof(big) };
	struct iovec two[2] = { { big, 40000 }, { big, 25536 } };
	struct iovec max2[2] = { { big, 40000 }, { big, 25535 } };
	struct mpa_tx_frame f;
	mpa_tx_init(&tx, false, false);
	assert_int_equal(mpa_tx_encode(&tx, &one, 1, raw, sizeof(raw)), -EMSGSIZE);
	assert_int_equal(mpa_tx_encode(&tx, two, 2, raw, sizeof(raw)), -EMSGSIZE);
	assert_int_equal(mpa_tx_frame(&tx, two, 2, &f), -EMSGSIZE);
	assert_int_equal(mpa_tx_encode(&tx, max2, 2, raw, sizeof(raw)), -ENOBUFS);
	assert_int_equal(mpa_tx_frame(&tx, max2, 2, &f), 0);
	assert_int_equal(f.fpdu_len, 2 + 65535 + 3 + 4);
	assert_int_equal(tx.pos, 2 + 65535 + 3 + 4);
	/* With markers a maximal ULPDU would need an FPDUPTR beyond 16 bits. */
	mpa_tx_init(&tx, true, true);
	uint8_t *huge = malloc(70000);
	assert_non_null(huge);
	assert_int_equal(mpa_tx_encode(&tx, max2, 2, huge, 70000), -EMSGSIZE);
	assert_int_equal(tx.pos, 0);
	free(huge);
	/* Bad arguments. */
	struct iovec nul = { NULL, 5 };
	assert_int_equal(mpa_tx_encode(&tx, NULL, 1, raw, sizeof(raw)), -EINVAL);
	assert_int_equal(mpa_tx_encode(&tx, &nul, 1, raw, sizeof(raw)), -EINVAL);
	assert_int_equal(mpa_tx_frame(&tx, &iov, 1, &f), -ENOTSUP);
	assert_int_equal(tx.pos, 0);
	/* An empty ULPDU is framed (MPA itself allows it): length, 2 pad, zero CRC field. */
	mpa_tx_init(&tx, false, false);
	assert_int_equal(mpa_tx_encode(&tx, NULL, 0, raw, 7), -ENOBUFS);
	assert_int_equal(mpa_tx_encode(&tx, NULL, 0, raw, 8), 8);
	static const uint8_t empty[8] = { 0 };
	assert_memory_equal(raw, empty, 8);
	/* A misaligned stream position cannot carry markers with FPDUPTR low bits zero. */
	mpa_tx_init(&tx, false, true);
	tx.pos = 2;
	assert_int_equal(mpa_tx_encode(&tx, NULL, 0, raw, sizeof(raw)), -EINVAL);
}

/* mpa_tx_frame's three parts concatenated equal mpa_tx_encode's output for random sizes. */
static void test_frame_matches_encode(void **state)
{
	uint8_t payload[3000], wire[3100], ref[3100];

	(void)state;
	for (int i = 0; i < 500; i++) {
		int crc = i & 1;
		size_t len = rng() % sizeof(payload);
		size_t a = len ? rng() % len : 0;
		struct iovec iov[2] = { { payload, a }, { payload + a, len - a } };
		struct mpa_tx t1, t2;
		struct mpa_tx_frame f;

		fill_random(payload, len);
		mpa_tx_init(&t1, crc, false);
		mpa_tx_init(&t2, crc, false);
		t1.pos = t2.pos = rng();
		ssize_t n = mpa_tx_encode(&t1, iov, 2, ref, sizeof(ref));
		assert_true(n > 0);
		assert_int_equal(mpa_tx_frame(&t2, iov, 2, &f), 0);
		memcpy(wire, f.hdr, MPA_HDR_LEN);
		memcpy(wire + MPA_HDR_LEN, payload, len);
		memcpy(wire + MPA_HDR_LEN + len, f.trailer, f.trailer_len);
		assert_int_equal(f.fpdu_len, (size_t)n);
		assert_memory_equal(wire, ref, (size_t)n);
		assert_int_equal(t1.pos, t2.pos);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_siw_fpdus),
		cmocka_unit_test(test_golden_siw_nocrc),
		cmocka_unit_test(test_pad_lengths),
		cmocka_unit_test(test_mulpdu),
		cmocka_unit_test(test_marker_layout_by_hand),
		cmocka_unit_test(test_markers_every_start_offset),
		cmocka_unit_test(test_markers_small_and_large),
		cmocka_unit_test(test_errors_and_guards),
		cmocka_unit_test(test_frame_matches_encode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
