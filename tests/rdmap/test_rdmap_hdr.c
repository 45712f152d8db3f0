/* RDMAP control field, opcode table, ULPDU decode/validate: vectors from the siw traces. */
#include "../ddp/test_util.h"
#include "mpa.h"
#include "rdmap.h"

/* rping-stock.pcap, whole ULPDUs (MPA length, pad and CRC stripped) */
static const char *SEND = "4143 00000000 00000000 00000001 00000000"
			  "000055c154348e20 b9d72400 00000040";              /* frame 8 */
static const char *RREQ = "4141 00000000 00000001 00000001 00000000"
			  "5d80ed00 0000564ccd65c4c0 00000040 b9d72400 000055c154348e20"; /* 9 */
static const char *RRESP_HDR = "c142 5d80ed00 0000564ccd65c4c0";        /* frame 10 */
static const char *WRITE_HDR = "c140 a2461f00 000055c1543454c0";        /* frame 13 */
static const char *RTR = "c140 00000001 0000000000000000";             /* rping-p2p frame 8 */

static size_t ulpdu(const char *hdr, size_t payload, uint8_t *b, size_t cap)
{
	size_t n = hex2bin(hdr, b, cap);

	assert_true(n + payload <= cap);
	for (size_t i = 0; i < payload; i++)
		b[n + i] = (uint8_t)(0x41 + i);
	return n + payload;
}

static void decode_ok(const uint8_t *b, size_t n, struct rdmap_msg *m)
{
	struct iwarp_err e = { 0 };

	assert_int_equal(rdmap_msg_decode(b, n, m, &e), 0);
	assert_int_equal(rdmap_msg_validate(m, RDMAP_NQUEUES, false, &e), 0);
}

static void test_opinfo_table(void **state)
{
	(void)state;
	for (unsigned op = 0; op < 16; op++) {
		const struct rdmap_opinfo *oi = rdmap_opinfo(op);

		assert_non_null(oi->name);
		assert_int_equal(oi->defined, op <= 7 || (op >= 0xa && op <= 0xd));
		assert_int_equal(oi->ext, op >= 0xa && op <= 0xd);
		assert_int_equal(oi->tagged, op == 0 || op == 2);
		assert_int_equal(oi->inv_stag, op == 4 || op == 6);
		assert_int_equal(oi->solicited, op == 5 || op == 6 || op == 0xd);
	}
	assert_int_equal(rdmap_opinfo(RDMAP_OP_READ_REQ)->qn, 1);
	assert_int_equal(rdmap_opinfo(RDMAP_OP_READ_REQ)->hdr_len, 28);
	assert_int_equal(rdmap_opinfo(RDMAP_OP_TERMINATE)->qn, 2);
	assert_int_equal(rdmap_opinfo(RDMAP_OP_SEND_SE_INV)->qn, 0);
	assert_int_equal(rdmap_opinfo(RDMAP_OP_ATOMIC_REQ)->qn, 1);
	assert_int_equal(rdmap_opinfo(RDMAP_OP_ATOMIC_RESP)->qn, 3);
	assert_int_equal(rdmap_opinfo(RDMAP_OP_IMM_DATA)->qn, 0);
	assert_int_equal(RDMAP_CTRL(RDMAP_OP_TERMINATE), 0x47);
	assert_int_equal(RDMAP_CTRL(RDMAP_OP_WRITE), 0x40);
}

static void test_decode_trace_vectors(void **state)
{
	uint8_t b[128];
	struct rdmap_msg m;
	size_t n;

	(void)state;
	n = hex2bin(SEND, b, sizeof(b));
	decode_ok(b, n, &m);
	assert_int_equal(m.opcode, RDMAP_OP_SEND);
	assert_int_equal(m.rv, 1);
	assert_int_equal(m.ddp.msn, 1);
	assert_int_equal(m.hdr_len, 18);
	assert_int_equal(m.payload_len, 16);
	assert_ptr_equal(m.payload, b + 18);

	n = hex2bin(RREQ, b, sizeof(b));
	decode_ok(b, n, &m);
	assert_int_equal(m.opcode, RDMAP_OP_READ_REQ);
	assert_int_equal(m.body_len, 28);
	assert_int_equal(m.payload_len, 0);
	assert_int_equal(m.u.read_req.sink_stag, 0x5d80ed00);
	assert_true(m.u.read_req.sink_to == UINT64_C(0x0000564ccd65c4c0));
	assert_int_equal(m.u.read_req.size, 64);
	assert_int_equal(m.u.read_req.src_stag, 0xb9d72400);
	assert_true(m.u.read_req.src_to == UINT64_C(0x000055c154348e20));

	n = ulpdu(RRESP_HDR, 64, b, sizeof(b));
	decode_ok(b, n, &m);
	assert_int_equal(m.opcode, RDMAP_OP_READ_RESP);
	assert_int_equal(m.ddp.stag, 0x5d80ed00);   /* = the Read Request's sink STag/TO */
	assert_true(m.ddp.to == UINT64_C(0x0000564ccd65c4c0));
	assert_int_equal(m.payload_len, 64);

	n = ulpdu(WRITE_HDR, 64, b, sizeof(b));
	decode_ok(b, n, &m);
	assert_int_equal(m.opcode, RDMAP_OP_WRITE);
	assert_true(m.ddp.last);

	n = hex2bin(RTR, b, sizeof(b));
	decode_ok(b, n, &m);
	assert_int_equal(m.opcode, RDMAP_OP_WRITE);
	assert_int_equal(m.payload_len, 0);
	assert_int_equal(m.ddp.stag, 1);
}

/* Build the trace's Read Request from fields: byte-identical. */
static void test_encode_read_request(void **state)
{
	struct rdmap_read_req rr = { 0x5d80ed00, UINT64_C(0x0000564ccd65c4c0), 64, 0xb9d72400,
				     UINT64_C(0x000055c154348e20) };
	struct ddp_hdr h = rdmap_ddp_tmpl(RDMAP_OP_READ_REQ, 0, 0, 1, 0xffffffff);
	uint8_t out[64], want[64];
	size_t n = hex2bin(RREQ, want, sizeof(want));

	(void)state;
	h.last = true;
	assert_int_equal(ddp_hdr_encode(&h, out, sizeof(out)), 18);
	rdmap_read_req_encode(&rr, out + 18);
	assert_memory_equal(out, want, n);
	/* tagged template: the RTR write */
	h = rdmap_ddp_tmpl(RDMAP_OP_WRITE, 1, 0, 99, 99);
	h.last = true;
	assert_int_equal(ddp_hdr_encode(&h, out, sizeof(out)), 14);
	assert_memory_equal(out, want, hex2bin(RTR, want, sizeof(want)));
	/* Send with Invalidate carries the STag in the RsvdULP word */
	h = rdmap_ddp_tmpl(RDMAP_OP_SEND_SE_INV, 0, 0, 5, 0x1234abcd);
	assert_int_equal(h.rsvdulp, 0x46);
	assert_int_equal(h.rsvdulp32, 0x1234abcd);
	assert_int_equal(h.qn, 0);
	assert_int_equal(h.msn, 5);
}

static void test_send_with_invalidate(void **state)
{
	uint8_t b[64];
	struct rdmap_msg m;
	size_t n = ulpdu("4144 00c0ffee 00000000 00000003 00000000", 5, b, sizeof(b));

	(void)state;
	decode_ok(b, n, &m);
	assert_int_equal(m.opcode, RDMAP_OP_SEND_INV);
	assert_int_equal(m.inv_stag, 0x00c0ffee);
	/* plain Send: the word is reserved, not an STag */
	b[1] = 0x43;
	decode_ok(b, n, &m);
	assert_int_equal(m.inv_stag, 0);
}

static void expect_invalid(const uint8_t *b, size_t n, bool ext, uint16_t code)
{
	struct rdmap_msg m;
	struct iwarp_err e = { 0 };

	assert_int_equal(rdmap_msg_decode(b, n, &m, &e), 0);
	assert_int_equal(rdmap_msg_validate(&m, ext ? RDMAP_NQUEUES_EXT : RDMAP_NQUEUES, ext, &e),
			 -1);
	assert_int_equal(iwarp_err_u16(e), code);
}

static void test_validate_errors(void **state)
{
	uint8_t b[128], c[128];
	size_t n = hex2bin(SEND, b, sizeof(b)), r;

	(void)state;
	/* RDMAP version */
	for (uint8_t rv = 0; rv < 4; rv++) {
		if (rv == 1)
			continue;
		memcpy(c, b, n);
		c[1] = (uint8_t)((rv << 6) | 0x03);
		expect_invalid(c, n, false, 0x0205);
	}
	/* reserved and RFC 7306 opcodes without the extensions */
	for (uint8_t op = 8; op < 16; op++) {
		memcpy(c, b, n);
		c[1] = (uint8_t)(0x40 | op);
		expect_invalid(c, n, false, 0x0206);
	}
	/* DDP checks come first: bad DV beats bad RV; QN out of range */
	memcpy(c, b, n);
	c[0] = 0x42;
	c[1] = 0x03;
	expect_invalid(c, n, false, 0x1206);
	memcpy(c, b, n);
	c[9] = 3;
	expect_invalid(c, n, false, 0x1201);
	/* Send on QN 1 (valid queue, wrong one for the opcode) */
	memcpy(c, b, n);
	c[9] = 1;
	expect_invalid(c, n, false, 0x1201);
	/* Send tagged; Write untagged: unexpected opcode */
	r = ulpdu(WRITE_HDR, 4, c, sizeof(c));
	c[1] = 0x43;
	expect_invalid(c, r, false, 0x0206);
	c[1] = 0x42;   /* Read Response tagged: fine */
	{
		struct rdmap_msg m;
		struct iwarp_err e;

		assert_int_equal(rdmap_msg_decode(c, r, &m, &e), 0);
		assert_int_equal(rdmap_msg_validate(&m, 3, false, &e), 0);
	}
	memcpy(c, b, n);
	c[1] = 0x40;
	expect_invalid(c, n, false, 0x0206);
	/* Terminate on QN 0 */
	memcpy(c, b, n);
	c[1] = 0x47;
	expect_invalid(c, n, false, 0x1201);
}

static void test_read_request_shape(void **state)
{
	uint8_t b[128], c[128];
	size_t n = hex2bin(RREQ, b, sizeof(b));

	(void)state;
	expect_invalid(b, n - 1, false, 0x02ff);   /* 27 octets */
	memcpy(c, b, n);
	c[n] = 0;
	expect_invalid(c, n + 1, false, 0x02ff);   /* 29 octets */
	memcpy(c, b, n);
	c[0] = 0x01;                                /* L clear */
	expect_invalid(c, n, false, 0x02ff);
	memcpy(c, b, n);
	c[17] = 4;                                  /* MO 4 */
	expect_invalid(c, n, false, 0x02ff);
	memcpy(c, b, n);
	c[9] = 0;                                   /* on QN 0 */
	expect_invalid(c, n, false, 0x1201);
	/* zero-size Read is legal */
	memcpy(c, b, n);
	memset(c + 18 + 12, 0, 4);
	{
		struct rdmap_msg m;

		decode_ok(c, n, &m);
		assert_int_equal(m.u.read_req.size, 0);
	}
}

static void test_extensions(void **state)
{
	struct rdmap_atomic_req a = { 0, 2, 0x11223344, 0x55667788, UINT64_C(0x0102030405060708),
				      1, 2, 3, UINT64_MAX }, a2;
	struct rdmap_atomic_resp r = { 0x11223344, UINT64_C(0xfedcba9876543210) }, r2;
	struct ddp_hdr h;
	uint8_t b[128];
	struct rdmap_msg m;
	struct iwarp_err e;

	(void)state;
	h = rdmap_ddp_tmpl(RDMAP_OP_ATOMIC_REQ, 0, 0, 1, 0);
	h.last = true;
	ddp_hdr_encode(&h, b, sizeof(b));
	rdmap_atomic_req_encode(&a, b + 18);
	assert_int_equal(b[18 + 3], 0x02);
	assert_int_equal(rdmap_msg_decode(b, 18 + 52, &m, &e), 0);
	assert_int_equal(rdmap_msg_validate(&m, RDMAP_NQUEUES_EXT, true, &e), 0);
	a2 = m.u.atomic_req;
	assert_int_equal(a2.atomic_op, 2);
	assert_int_equal(a2.req_id, a.req_id);
	assert_int_equal(a2.stag, a.stag);
	assert_true(a2.to == a.to && a2.add_swap == 1 && a2.add_swap_mask == 2);
	assert_true(a2.compare == 3 && a2.compare_mask == UINT64_MAX);
	assert_int_equal(rdmap_msg_validate(&m, RDMAP_NQUEUES, false, &e), -1);
	assert_int_equal(iwarp_err_u16(e), 0x0206);

	h = rdmap_ddp_tmpl(RDMAP_OP_ATOMIC_RESP, 0, 0, 1, 0);
	h.last = true;
	ddp_hdr_encode(&h, b, sizeof(b));
	rdmap_atomic_resp_encode(&r, b + 18);
	assert_int_equal(rdmap_msg_decode(b, 18 + 12, &m, &e), 0);
	assert_int_equal(rdmap_msg_validate(&m, RDMAP_NQUEUES_EXT, true, &e), 0);
	r2 = m.u.atomic_resp;
	assert_int_equal(r2.req_id, r.req_id);
	assert_true(r2.orig_value == r.orig_value);
	/* QN 3 does not exist without the extensions: DDP rejects it first */
	assert_int_equal(rdmap_msg_validate(&m, RDMAP_NQUEUES, false, &e), -1);
	assert_int_equal(iwarp_err_u16(e), 0x1201);

	h = rdmap_ddp_tmpl(RDMAP_OP_IMM_DATA_SE, 0, 0, 9, 0);
	h.last = true;
	ddp_hdr_encode(&h, b, sizeof(b));
	memset(b + 18, 0x5a, 8);
	assert_int_equal(rdmap_msg_decode(b, 26, &m, &e), 0);
	assert_int_equal(rdmap_msg_validate(&m, RDMAP_NQUEUES_EXT, true, &e), 0);
	assert_int_equal(m.payload_len, 8);
	assert_int_equal(rdmap_msg_decode(b, 25, &m, &e), 0);
	assert_int_equal(rdmap_msg_validate(&m, RDMAP_NQUEUES_EXT, true, &e), -1);
	assert_int_equal(iwarp_err_u16(e), 0x02ff);
}

/* Every prefix of every vector: decode fails cleanly below the DDP header, never reads past
 * the length (ASan on exact heap copies), and validation never accepts a cut Read Request. */
static void test_truncated(void **state)
{
	const char *v[] = { SEND, RREQ, RRESP_HDR, WRITE_HDR, RTR };
	uint8_t b[128];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t n = hex2bin(v[i], b, sizeof(b));

		for (size_t len = 0; len <= n; len++) {
			uint8_t *p = exact_copy(b, len);
			struct rdmap_msg m;
			struct iwarp_err e = { 0 };
			int rc = rdmap_msg_decode(p, len, &m, &e);
			size_t hl = (b[0] & 0x80) ? 14 : 18;

			if (len < hl) {
				assert_int_equal(rc, -1);
				assert_int_equal(iwarp_err_u16(e), 0x1000);
			} else {
				assert_int_equal(rc, 0);
				assert_true(m.hdr_len + m.payload_len == len);
				rc = rdmap_msg_validate(&m, 3, false, &e);
				assert_int_equal(rc, (i == 1 && len < n) ? -1 : 0);
			}
			free(p);
		}
	}
}

static void test_err_codes_and_names(void **state)
{
	(void)state;
	/* LLP codes here equal MPA's own enum (one source of truth per layer) */
	assert_int_equal(RDMAP_LLP_ECODE_CRC, MPA_ECODE_CRC);
	assert_int_equal(RDMAP_LLP_ECODE_MARKER, MPA_ECODE_MARKER);
	assert_int_equal(RDMAP_LLP_ECODE_INVALID_REQ_REP, MPA_ECODE_INVALID_REQ_REP);
	assert_int_equal(RDMAP_LLP_ECODE_NO_MATCHING_RTR, MPA_ECODE_NO_MATCHING_RTR);
	assert_int_equal(RDMAP_LLP_ECODE_INSUFFICIENT_IRD, MPA_ECODE_INSUFFICIENT_IRD);
	assert_int_equal(IWARP_LAYER_LLP, MPA_TERM_LAYER_LLP);
	assert_int_equal(RDMAP_LLP_ETYPE_MPA, MPA_TERM_ETYPE_MPA);
	assert_int_equal(iwarp_err_u16(rdmap_err_llp(RDMAP_LLP_ECODE_CRC)), 0x2002);
	assert_int_equal(iwarp_err_u16(rdmap_err(RDMAP_ETYPE_PROTECTION, RDMAP_ECODE_TO_WRAP)),
			 0x0104);
	assert_string_equal(rdmap_err_str(rdmap_err(RDMAP_ETYPE_OPERATION, RDMAP_ECODE_OPCODE)),
			    "Unexpected OpCode");
	assert_string_equal(rdmap_err_str(rdmap_err(RDMAP_ETYPE_OPERATION,
						    RDMAP_ECODE_UNSPECIFIED)), "Unspecified Error");
	assert_string_equal(rdmap_err_str(rdmap_err(RDMAP_ETYPE_CATASTROPHIC, 0)),
			    "Local Catastrophic Error");
	assert_string_equal(rdmap_err_str(ddp_err_untagged(DDP_ECODE_U_MSN_RANGE)),
			    "Invalid MSN - MSN range is not valid");
	assert_string_equal(rdmap_err_str(rdmap_err_llp(RDMAP_LLP_ECODE_NO_MATCHING_RTR)),
			    "No Matching RTR Option");
	assert_string_equal(rdmap_err_str((struct iwarp_err){ 3, 0, 0 }), "unknown");
	assert_string_equal(rdmap_err_str((struct iwarp_err){ 0, 2, 0x42 }), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opinfo_table),
		cmocka_unit_test(test_decode_trace_vectors),
		cmocka_unit_test(test_encode_read_request),
		cmocka_unit_test(test_send_with_invalidate),
		cmocka_unit_test(test_validate_errors),
		cmocka_unit_test(test_read_request_shape),
		cmocka_unit_test(test_extensions),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_err_codes_and_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
