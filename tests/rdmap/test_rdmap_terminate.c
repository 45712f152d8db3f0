/* Terminate: build (header-copy rules per error), byte-exact encoding, parse, truncation. */
#include "../ddp/test_util.h"
#include "rdmap.h"

static const char *SEND = "4143 00000000 00000000 00000001 00000000"
			  "000055c154348e20 b9d72400 00000040";              /* rping frame 8 */
static const char *RREQ = "4141 00000000 00000001 00000001 00000000"
			  "5d80ed00 0000564ccd65c4c0 00000040 b9d72400 000055c154348e20";
static const char *WRITE_HDR = "c140 a2461f00 000055c1543454c0";

static size_t vec(const char *hex, size_t extra, uint8_t *b, size_t cap)
{
	size_t n = hex2bin(hex, b, cap);

	memset(b + n, 0x77, extra);
	return n + extra;
}

/* encode -> decode gives the same fields; every shorter length is rejected without reading
 * past it; returns the encoded length. */
static size_t check_wire(const struct rdmap_term *t, const char *want_hex)
{
	uint8_t out[RDMAP_TERM_MAX_LEN], want[RDMAP_TERM_MAX_LEN];
	size_t n = rdmap_term_encode(t, out, sizeof(out)), wn = hex2bin(want_hex, want, sizeof(want));
	struct rdmap_term d;

	assert_int_equal(n, rdmap_term_len(t));
	assert_int_equal(n, wn);
	assert_memory_equal(out, want, n);
	assert_int_equal(rdmap_term_encode(t, out, n - 1), 0);
	for (size_t len = 0; len < n; len++) {
		uint8_t *p = exact_copy(out, len);

		assert_int_equal(rdmap_term_decode(p, len, &d), 0);
		free(p);
	}
	uint8_t *p = exact_copy(out, n);
	assert_int_equal(rdmap_term_decode(p, n, &d), n);
	free(p);
	assert_err(d.err, t->err.layer, t->err.etype, t->err.ecode);
	assert_int_equal(d.m, t->m);
	assert_int_equal(d.d, t->d);
	assert_int_equal(d.r, t->r);
	assert_int_equal(d.ddp_seg_len, t->ddp_seg_len);
	assert_int_equal(d.ddp_hdr_len, t->ddp_hdr_len);
	assert_memory_equal(d.ddp_hdr, t->ddp_hdr, t->ddp_hdr_len);
	assert_int_equal(d.rdma_hdr_len, t->rdma_hdr_len);
	assert_memory_equal(d.rdma_hdr, t->rdma_hdr, t->rdma_hdr_len);
	return n;
}

static void test_local_catastrophic(void **state)
{
	struct rdmap_term t;
	uint8_t b[64], u[64], want[64];

	(void)state;
	size_t n = vec(SEND, 0, b, sizeof(b));
	rdmap_term_build(rdmap_err(RDMAP_ETYPE_CATASTROPHIC, 0), b, n, &t);
	assert_false(t.m || t.d || t.r);
	check_wire(&t, "00 00 0000");
	/* the whole Terminate ULPDU: untagged, L, QN 2, MSN 1, MO 0, control 0x47 */
	assert_int_equal(rdmap_term_ulpdu_encode(&t, 1, u, sizeof(u)), 22);
	assert_memory_equal(u, want, hex2bin("4147 00000000 00000002 00000001 00000000 00000000",
					     want, sizeof(want)));
	assert_int_equal(rdmap_term_ulpdu_encode(&t, 1, u, 21), 0);
	rdmap_term_build(rdmap_err(RDMAP_ETYPE_CATASTROPHIC, 0), NULL, 0, &t);
	check_wire(&t, "00 00 0000");
}

static void test_protection_read_request(void **state)
{
	struct rdmap_term t;
	uint8_t b[64];
	size_t n = vec(RREQ, 0, b, sizeof(b));

	(void)state;
	rdmap_term_build(rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_INVALID_STAG), b, n, &t);
	assert_true(t.m && t.d && t.r);
	assert_int_equal(t.ddp_seg_len, 46);
	check_wire(&t, "01 00 e000 002e"
		       "4141 00000000 00000001 00000001 00000000"
		       "5d80ed00 0000564ccd65c4c0 00000040 b9d72400 000055c154348e20");
	/* Read Request body cut short: R is dropped rather than sent empty */
	rdmap_term_build(rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_BASE_BOUNDS), b, 30, &t);
	assert_true(t.m && t.d && !t.r);
	check_wire(&t, "01 01 c000 001e 4141 00000000 00000001 00000001 00000000");
}

/* A Write to a bad STag: tagged 14-octet copy, R set with no extra octets (as siw). */
static void test_protection_write(void **state)
{
	struct rdmap_term t;
	uint8_t b[128];
	size_t n = vec(WRITE_HDR, 64, b, sizeof(b));

	(void)state;
	rdmap_term_build(rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_ACCESS), b, n, &t);
	assert_true(t.m && t.d && t.r);
	assert_int_equal(t.rdma_hdr_len, 0);
	check_wire(&t, "01 02 e000 004e c140 a2461f00 000055c1543454c0");
}

static void test_operation_errors(void **state)
{
	struct rdmap_term t;
	uint8_t b[64];
	size_t n = vec(SEND, 0, b, sizeof(b));

	(void)state;
	rdmap_term_build(rdmap_err(RDMAP_ETYPE_OPERATION, RDMAP_ECODE_CATA_STREAM), b, n, &t);
	check_wire(&t, "02 07 c000 0022 4143 00000000 00000000 00000001 00000000");
	rdmap_term_build(rdmap_err(RDMAP_ETYPE_OPERATION, RDMAP_ECODE_UNSPECIFIED), b, n, &t);
	check_wire(&t, "02 ff c000 0022 4143 00000000 00000000 00000001 00000000");
	/* version and opcode errors: the layout is not trusted, nothing is copied */
	rdmap_term_build(rdmap_err(RDMAP_ETYPE_OPERATION, RDMAP_ECODE_VERSION), b, n, &t);
	check_wire(&t, "02 05 0000");
	rdmap_term_build(rdmap_err(RDMAP_ETYPE_OPERATION, RDMAP_ECODE_OPCODE), b, n, &t);
	check_wire(&t, "02 06 0000");
}

static void test_ddp_and_llp_errors(void **state)
{
	struct rdmap_term t;
	uint8_t b[128];
	size_t n = vec(SEND, 0, b, sizeof(b));

	(void)state;
	rdmap_term_build(ddp_err_untagged(DDP_ECODE_U_MSN_RANGE), b, n, &t);
	assert_true(t.m && t.d && !t.r);
	check_wire(&t, "12 03 c000 0022 4143 00000000 00000000 00000001 00000000");
	rdmap_term_build(ddp_err_untagged(DDP_ECODE_U_VERSION), b, n, &t);
	check_wire(&t, "12 06 0000");
	n = vec(WRITE_HDR, 10, b, sizeof(b));
	rdmap_term_build(ddp_err_tagged(DDP_ECODE_T_BASE_BOUNDS), b, n, &t);
	check_wire(&t, "11 01 c000 0018 c140 a2461f00 000055c1543454c0");
	rdmap_term_build(ddp_err_tagged(DDP_ECODE_T_VERSION), b, n, &t);
	check_wire(&t, "11 04 0000");
	rdmap_term_build(rdmap_err_llp(RDMAP_LLP_ECODE_CRC), b, n, &t);
	check_wire(&t, "20 02 0000");
	/* offending segment too short to hold its DDP header: no copies */
	rdmap_term_build(ddp_err_catastrophic(), b, 13, &t);
	check_wire(&t, "10 00 0000");
}

/* A whole Terminate ULPDU decodes and validates as an RDMAP message. */
static void test_terminate_message(void **state)
{
	struct rdmap_term t;
	struct rdmap_msg m;
	struct iwarp_err e;
	uint8_t b[64], u[128];
	size_t n = vec(RREQ, 0, b, sizeof(b)), un;

	(void)state;
	rdmap_term_build(rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_TO_WRAP), b, n, &t);
	un = rdmap_term_ulpdu_encode(&t, 1, u, sizeof(u));
	assert_int_equal(un, 18 + 4 + 2 + 18 + 28);
	assert_int_equal(rdmap_msg_decode(u, un, &m, &e), 0);
	assert_int_equal(rdmap_msg_validate(&m, RDMAP_NQUEUES, false, &e), 0);
	assert_int_equal(m.opcode, RDMAP_OP_TERMINATE);
	assert_int_equal(m.ddp.qn, RDMAP_QN_TERMINATE);
	assert_int_equal(m.body_len, un - 18);
	assert_int_equal(m.payload_len, 0);
	assert_int_equal(iwarp_err_u16(m.u.term.err), 0x0104);
	assert_int_equal(m.u.term.rdma_hdr_len, 28);
	/* cut anywhere inside the Terminate header: rejected as malformed */
	for (size_t len = 18; len < un; len++) {
		uint8_t *p = exact_copy(u, len);

		assert_int_equal(rdmap_msg_decode(p, len, &m, &e), 0);
		assert_int_equal(rdmap_msg_validate(&m, RDMAP_NQUEUES, false, &e), -1);
		assert_int_equal(iwarp_err_u16(e), 0x02ff);
		free(p);
	}
}

/* Foreign Terminates: reserved bits kept, R without D takes the rest. */
static void test_decode_foreign(void **state)
{
	uint8_t b[64];
	struct rdmap_term t;
	size_t n = hex2bin("02 06 3fff 0102030405", b, sizeof(b));

	(void)state;
	assert_int_equal(rdmap_term_decode(b, n, &t), n);
	assert_true(!t.m && !t.d && t.r);
	assert_int_equal(t.rsvd, 0x1fff);
	assert_int_equal(t.rdma_hdr_len, 5);
	/* M without D: the segment length is there, no header */
	n = hex2bin("12 02 8000 0040", b, sizeof(b));
	assert_int_equal(rdmap_term_decode(b, n, &t), 6);
	assert_int_equal(t.ddp_seg_len, 0x40);
	assert_int_equal(t.ddp_hdr_len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_local_catastrophic),
		cmocka_unit_test(test_protection_read_request),
		cmocka_unit_test(test_protection_write),
		cmocka_unit_test(test_operation_errors),
		cmocka_unit_test(test_ddp_and_llp_errors),
		cmocka_unit_test(test_terminate_message),
		cmocka_unit_test(test_decode_foreign),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
