/* DDP header codec: byte-exact vectors from the Linux siw golden traces, round trips,
 * validation codes, truncation. */
#include "test_util.h"

/* rping-p2p.pcap frame 8: the zero-length RDMA Write RTR, STag 1, TO 0 (ULPDU 14 octets). */
static const char *RTR_WRITE = "c140 00000001 0000000000000000";
/* ib_write_bw-stock.pcap frame 36: middle segment of a 16 KiB write (L clear). */
static const char *WRITE_MID = "8140 36f79a00 0000564056decb28";
/* ib_send_bw-stock.pcap frame 45: last segment of an 8 KiB Send, MSN 1, MO 7120. */
static const char *SEND_LAST = "4143 00000000 00000000 00000001 00001bd0";
/* rping-stock.pcap frame 9: Read Request DDP header, QN 1, MSN 1. */
static const char *RREQ_HDR = "4141 00000000 00000001 00000001 00000000";

static void test_decode_tagged_vectors(void **state)
{
	uint8_t b[32];
	struct ddp_hdr h;
	size_t n = hex2bin(RTR_WRITE, b, sizeof(b));

	(void)state;
	assert_int_equal(ddp_hdr_decode(b, n, &h), 14);
	assert_true(h.tagged && h.last);
	assert_int_equal(h.dv, 1);
	assert_int_equal(h.rsvd, 0);
	assert_int_equal(h.rsvdulp, 0x40);
	assert_int_equal(h.stag, 1);
	assert_true(h.to == 0);
	n = hex2bin(WRITE_MID, b, sizeof(b));
	assert_int_equal(ddp_hdr_decode(b, n, &h), 14);
	assert_true(h.tagged && !h.last);
	assert_int_equal(h.stag, 0x36f79a00);
	assert_true(h.to == UINT64_C(0x0000564056decb28));
}

static void test_decode_untagged_vectors(void **state)
{
	uint8_t b[32];
	struct ddp_hdr h;
	size_t n = hex2bin(SEND_LAST, b, sizeof(b));

	(void)state;
	assert_int_equal(ddp_hdr_decode(b, n, &h), 18);
	assert_true(!h.tagged && h.last);
	assert_int_equal(h.rsvdulp, 0x43);
	assert_int_equal(h.rsvdulp32, 0);
	assert_int_equal(h.qn, 0);
	assert_int_equal(h.msn, 1);
	assert_int_equal(h.mo, 7120);
	n = hex2bin(RREQ_HDR, b, sizeof(b));
	assert_int_equal(ddp_hdr_decode(b, n, &h), 18);
	assert_int_equal(h.qn, 1);
	assert_int_equal(h.msn, 1);
	assert_int_equal(h.rsvdulp, 0x41);
}

/* Encoding the decoded vector gives back the same octets. */
static void check_reencode(const char *hex)
{
	uint8_t b[32], out[32];
	struct ddp_hdr h;
	size_t n = hex2bin(hex, b, sizeof(b));

	assert_int_equal(ddp_hdr_decode(b, n, &h), n);
	assert_int_equal(ddp_hdr_encode(&h, out, sizeof(out)), n);
	assert_memory_equal(out, b, n);
}

static void test_encode_vectors(void **state)
{
	struct ddp_hdr h = ddp_hdr_tagged(0x40, 1, 0);
	uint8_t out[32], b[32];

	(void)state;
	check_reencode(RTR_WRITE);
	check_reencode(WRITE_MID);
	check_reencode(SEND_LAST);
	check_reencode(RREQ_HDR);
	h.last = true;
	assert_int_equal(ddp_hdr_encode(&h, out, sizeof(out)), 14);
	assert_memory_equal(out, b, hex2bin(RTR_WRITE, b, sizeof(b)));
	h = ddp_hdr_untagged(0x43, 0, 0, 1, 7120);
	h.last = true;
	assert_int_equal(ddp_hdr_encode(&h, out, sizeof(out)), 18);
	assert_memory_equal(out, b, hex2bin(SEND_LAST, b, sizeof(b)));
}

static void assert_hdr_equal(const struct ddp_hdr *a, const struct ddp_hdr *b)
{
	assert_int_equal(a->tagged, b->tagged);
	assert_int_equal(a->last, b->last);
	assert_int_equal(a->rsvd, b->rsvd);
	assert_int_equal(a->dv, b->dv);
	assert_int_equal(a->rsvdulp, b->rsvdulp);
	assert_int_equal(a->stag, b->stag);
	assert_true(a->to == b->to);
	assert_int_equal(a->rsvdulp32, b->rsvdulp32);
	assert_int_equal(a->qn, b->qn);
	assert_int_equal(a->msn, b->msn);
	assert_int_equal(a->mo, b->mo);
}

/* Every field survives encode+decode, one at a time, with extreme values. */
static void test_round_trip_fields(void **state)
{
	struct ddp_hdr in, out;
	uint8_t b[18];

	(void)state;
	for (int t = 0; t < 2; t++) {
		for (int i = 0; i < 9; i++) {
			in = t ? ddp_hdr_tagged(0, 0, 0) : ddp_hdr_untagged(0, 0, 0, 0, 0);
			switch (i) {
			case 0: in.last = true; break;
			case 1: in.rsvd = 0xf; break;
			case 2: in.dv = 3; break;
			case 3: in.rsvdulp = 0xff; break;
			case 4: in.stag = 0xdeadbeef; in.rsvdulp32 = 0xcafef00d; break;
			case 5: in.to = UINT64_MAX; in.qn = UINT32_MAX; break;
			case 6: in.msn = UINT32_MAX; break;
			case 7: in.mo = UINT32_MAX; in.to = UINT64_C(0x0102030405060708); break;
			default: in.dv = 0; in.rsvd = 0x5; break;
			}
			if (t) {
				in.rsvdulp32 = in.qn = in.msn = in.mo = 0;
			} else {
				in.stag = 0;
				in.to = 0;
			}
			assert_int_equal(ddp_hdr_encode(&in, b, sizeof(b)), t ? 14 : 18);
			assert_int_equal(ddp_hdr_decode(b, sizeof(b), &out), t ? 14 : 18);
			assert_hdr_equal(&in, &out);
		}
	}
}

static void test_encode_short_buffer(void **state)
{
	struct ddp_hdr h = ddp_hdr_untagged(0x43, 0, 0, 1, 0);
	uint8_t b[18];

	(void)state;
	memset(b, 0xaa, sizeof(b));
	assert_int_equal(ddp_hdr_encode(&h, b, 17), 0);
	assert_int_equal(b[0], 0xaa);
	h = ddp_hdr_tagged(0x40, 1, 0);
	assert_int_equal(ddp_hdr_encode(&h, b, 13), 0);
	assert_int_equal(ddp_hdr_encode(&h, b, 14), 14);
}

/* Every truncated length fails, and never reads past it (ASan, exact heap copies). */
static void test_decode_truncated(void **state)
{
	const char *vec[] = { RTR_WRITE, SEND_LAST };
	struct ddp_hdr h;

	(void)state;
	for (size_t v = 0; v < 2; v++) {
		uint8_t b[32];
		size_t n = hex2bin(vec[v], b, sizeof(b));

		for (size_t len = 0; len < n; len++) {
			uint8_t *p = exact_copy(b, len);

			assert_int_equal(ddp_hdr_decode(p, len, &h), 0);
			free(p);
		}
		uint8_t *p = exact_copy(b, n);
		assert_int_equal(ddp_hdr_decode(p, n, &h), n);
		free(p);
	}
}

static void test_validate(void **state)
{
	struct ddp_hdr h = ddp_hdr_tagged(0x40, 1, 0);
	struct iwarp_err e = { 9, 9, 9 };

	(void)state;
	assert_int_equal(ddp_hdr_validate(&h, 3, &e), 0);
	for (uint8_t dv = 0; dv < 4; dv++) {
		if (dv == DDP_VERSION)
			continue;
		h.dv = dv;
		assert_int_equal(ddp_hdr_validate(&h, 3, &e), -1);
		assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_VERSION);
		assert_int_equal(iwarp_err_u16(e), 0x1104);
	}
	h = ddp_hdr_untagged(0x43, 0, 2, 1, 0);
	assert_int_equal(ddp_hdr_validate(&h, 3, &e), 0);
	h.dv = 2;
	assert_int_equal(ddp_hdr_validate(&h, 3, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_VERSION);
	assert_int_equal(iwarp_err_u16(e), 0x1206);
	h.dv = 1;
	h.qn = 3;
	assert_int_equal(ddp_hdr_validate(&h, 3, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_INVALID_QN);
	assert_int_equal(ddp_hdr_validate(&h, 4, &e), 0);
	h.qn = UINT32_MAX;
	assert_int_equal(ddp_hdr_validate(&h, 4, &e), -1);
	/* reserved bits: set to zero on transmit, not checked on receive (RFC 5041 §4.2) */
	h = ddp_hdr_tagged(0x40, 1, 0);
	h.rsvd = 0xf;
	assert_int_equal(ddp_hdr_validate(&h, 3, &e), 0);
}

static void test_err_names(void **state)
{
	(void)state;
	assert_string_equal(ddp_err_str(ddp_err_untagged(DDP_ECODE_U_TOO_LONG)),
			    "DDP Message too long for available buffer");
	assert_string_equal(ddp_err_str(ddp_err_tagged(DDP_ECODE_T_STAG_NOT_ASSOC)),
			    "STag not associated with DDP Stream");
	assert_string_equal(ddp_err_str(ddp_err_catastrophic()), "Local Catastrophic Error");
	assert_string_equal(ddp_err_str((struct iwarp_err){ 1, 2, 0 }), "unknown");
	assert_string_equal(ddp_err_str((struct iwarp_err){ 1, 1, 5 }), "unknown");
	assert_string_equal(ddp_err_str((struct iwarp_err){ 1, 3, 0 }), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_tagged_vectors),
		cmocka_unit_test(test_decode_untagged_vectors),
		cmocka_unit_test(test_encode_vectors),
		cmocka_unit_test(test_round_trip_fields),
		cmocka_unit_test(test_encode_short_buffer),
		cmocka_unit_test(test_decode_truncated),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_err_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
