/* DDP placement decision and receive queue state: every DDP receive error with its code. */
#include "test_util.h"

static struct ddp_rx_state rx3(void)
{
	struct ddp_rx_state rx;

	ddp_rx_init(&rx, 3);
	return rx;
}

static void test_tagged(void **state)
{
	struct ddp_rx_state rx = rx3();
	struct ddp_hdr h = ddp_hdr_tagged(0x40, 0x36f79a00, UINT64_C(0x564056dec594));
	struct ddp_place pl;
	struct iwarp_err e;

	(void)state;
	assert_int_equal(ddp_place_decide(&rx, &h, 1428, &pl, &e), 0);
	assert_true(pl.tagged && !pl.last);
	assert_int_equal(pl.stag, 0x36f79a00);
	assert_true(pl.to == UINT64_C(0x564056dec594));
	assert_int_equal(pl.len, 1428);
	/* tagged segments need no posted buffer and leave the queues alone */
	ddp_rx_deliver(&rx, &pl);
	assert_int_equal(rx.q[0].msn, 1);
	/* TO wrap: last octet past 2^64 - 1 */
	h.to = UINT64_MAX;
	assert_int_equal(ddp_place_decide(&rx, &h, 1, &pl, &e), 0);
	assert_int_equal(ddp_place_decide(&rx, &h, 2, &pl, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_TO_WRAP);
	assert_int_equal(ddp_place_decide(&rx, &h, 0, &pl, &e), 0);
	h.dv = 0;
	assert_int_equal(ddp_place_decide(&rx, &h, 0, &pl, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_VERSION);
}

/* The 8 KiB Send of ib_send_bw: six segments, then the buffer is consumed. */
static void test_untagged_message(void **state)
{
	struct ddp_rx_state rx = rx3();
	struct ddp_place pl;
	struct iwarp_err e;

	(void)state;
	assert_int_equal(rx.q[0].msn, DDP_MSN_INITIAL);
	assert_int_equal(ddp_rx_post(&rx, 0, 2), 0);
	for (uint32_t i = 0; i < 6; i++) {
		struct ddp_hdr h = ddp_hdr_untagged(0x43, 0, 0, 1, i * 1424);

		h.last = i == 5;
		assert_int_equal(ddp_place_decide(&rx, &h, i == 5 ? 1072 : 1424, &pl, &e), 0);
		assert_int_equal(pl.qn, 0);
		assert_int_equal(pl.msn, 1);
		assert_int_equal(pl.mo, i * 1424);
		assert_int_equal(ddp_place_check_len(&pl, 8192, &e), 0);
		ddp_rx_deliver(&rx, &pl);
	}
	assert_int_equal(rx.q[0].msn, 2);
	assert_int_equal(rx.q[0].posted, 1);
	assert_true(rx.q[0].mo == 0);
}

static void test_untagged_errors(void **state)
{
	struct ddp_rx_state rx = rx3();
	struct ddp_hdr h = ddp_hdr_untagged(0x43, 0, 0, 1, 0);
	struct ddp_place pl;
	struct iwarp_err e;

	(void)state;
	/* no buffer posted */
	assert_int_equal(ddp_place_decide(&rx, &h, 10, &pl, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_MSN_NO_BUF);
	assert_int_equal(iwarp_err_u16(e), 0x1202);
	assert_int_equal(ddp_rx_post(&rx, 0, 3), 0);
	/* MSN gap (a message missing) and MSN behind (replay) */
	h.msn = 2;
	assert_int_equal(ddp_place_decide(&rx, &h, 10, &pl, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_MSN_RANGE);
	h.msn = 0;
	assert_int_equal(ddp_place_decide(&rx, &h, 10, &pl, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_MSN_RANGE);
	/* invalid QN */
	h.msn = 1;
	h.qn = 3;
	assert_int_equal(ddp_place_decide(&rx, &h, 10, &pl, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_INVALID_QN);
	/* invalid DDP version, untagged code */
	h.qn = 0;
	h.dv = 3;
	assert_int_equal(ddp_place_decide(&rx, &h, 10, &pl, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_VERSION);
	/* MO not where the previous segment ended */
	h.dv = 1;
	h.mo = 5;
	assert_int_equal(ddp_place_decide(&rx, &h, 10, &pl, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_INVALID_MO);
	h.mo = 0;
	assert_int_equal(ddp_place_decide(&rx, &h, 10, &pl, &e), 0);
	ddp_rx_deliver(&rx, &pl);
	h.mo = 11;
	assert_int_equal(ddp_place_decide(&rx, &h, 10, &pl, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_INVALID_MO);
	h.mo = 10;
	assert_int_equal(ddp_place_decide(&rx, &h, 10, &pl, &e), 0);
	/* message too long for the buffer: MO + len > buffer */
	assert_int_equal(ddp_place_check_len(&pl, 20, &e), 0);
	assert_int_equal(ddp_place_check_len(&pl, 19, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_TOO_LONG);
	assert_int_equal(iwarp_err_u16(e), 0x1205);
	/* rx was not modified by the failures */
	assert_int_equal(rx.q[0].msn, 1);
	assert_int_equal(rx.q[0].posted, 3);
	assert_true(rx.q[0].mo == 10);
}

static void test_mo_top(void **state)
{
	struct ddp_rx_state rx = rx3();
	struct ddp_hdr h = ddp_hdr_untagged(0x43, 0, 0, 1, 0);
	struct ddp_place pl;
	struct iwarp_err e;

	(void)state;
	ddp_rx_post(&rx, 0, 1);
	rx.q[0].mo = UINT32_MAX;          /* pretend 4 GiB - 1 already arrived */
	h.mo = UINT32_MAX;
	assert_int_equal(ddp_place_decide(&rx, &h, 2, &pl, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_INVALID_MO);
	assert_int_equal(ddp_place_decide(&rx, &h, 1, &pl, &e), 0);
	ddp_rx_deliver(&rx, &pl);          /* not last: next MO would be 2^32, none fits */
	h.mo = 0;
	assert_int_equal(ddp_place_decide(&rx, &h, 1, &pl, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_INVALID_MO);
}

/* MSN wraps from 2^32 - 1 to 0 and stays valid. */
static void test_msn_wrap(void **state)
{
	struct ddp_rx_state rx = rx3();
	struct ddp_hdr h = ddp_hdr_untagged(0x41, 0, 1, UINT32_MAX, 0);
	struct ddp_place pl;
	struct iwarp_err e;

	(void)state;
	rx.q[1].msn = UINT32_MAX;
	ddp_rx_post(&rx, 1, 2);
	h.last = true;
	assert_int_equal(ddp_place_decide(&rx, &h, 28, &pl, &e), 0);
	ddp_rx_deliver(&rx, &pl);
	assert_int_equal(rx.q[1].msn, 0);
	h.msn = 0;
	assert_int_equal(ddp_place_decide(&rx, &h, 28, &pl, &e), 0);
	ddp_rx_deliver(&rx, &pl);
	assert_int_equal(rx.q[1].msn, 1);
	assert_int_equal(rx.q[1].posted, 0);
	h.msn = UINT32_MAX;                /* replay of the wrapped message */
	ddp_rx_post(&rx, 1, 1);
	assert_int_equal(ddp_place_decide(&rx, &h, 28, &pl, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_MSN_RANGE);
}

static void test_post_limits(void **state)
{
	struct ddp_rx_state rx;

	(void)state;
	ddp_rx_init(&rx, 100);
	assert_int_equal(rx.nqueues, DDP_MAX_QUEUES);
	ddp_rx_init(&rx, 3);
	assert_int_equal(ddp_rx_post(&rx, 3, 1), -1);
	assert_int_equal(ddp_rx_post(&rx, 2, UINT32_MAX), 0);
	assert_int_equal(ddp_rx_post(&rx, 2, 1), -1);
	assert_int_equal(rx.q[2].posted, UINT32_MAX);
	assert_int_equal(rx.q[2].msn, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tagged),
		cmocka_unit_test(test_untagged_message),
		cmocka_unit_test(test_untagged_errors),
		cmocka_unit_test(test_mo_top),
		cmocka_unit_test(test_msn_wrap),
		cmocka_unit_test(test_post_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
