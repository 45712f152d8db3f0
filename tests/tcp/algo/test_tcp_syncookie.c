/* SYN cookie arithmetic (tcp/tcp_syncookie.h): a cookie checks for its own 4-tuple and peer
 * ISN only, in its slot and the next and not after, under its own secret only; its MSS bits
 * cannot be changed; the TSval carrier keeps window scale and SACK and never runs ahead of
 * the clock. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tcp_syncookie.h"

static const uint8_t KEY[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
#define T0 100000ull /* seconds: slot 1562, 32 s into it */

static struct tcp_cookie_tuple tuple(void)
{
	struct tcp_cookie_tuple t = {
		.laddr = htonl(0xc6336401), .raddr = htonl(0xc6336402),
		.lport = htons(7000), .rport = htons(40000), .peer_isn = 0x12345678,
	};
	return t;
}

static void test_round_trip(void **state)
{
	struct tcp_syncookie k;
	struct tcp_cookie_tuple t = tuple();
	uint16_t mss = 0;

	(void)state;
	tcp_syncookie_init(&k, KEY);
	uint32_t c = tcp_syncookie_make(&k, &t, 1460, T0);
	assert_true(tcp_syncookie_check(&k, &t, c, T0, &mss));
	assert_int_equal(mss, 1460);
	/* the same inputs give the same cookie (nothing random per SYN) */
	assert_int_equal(tcp_syncookie_make(&k, &t, 1460, T0 + 1), c);
}

static void test_bound_to_tuple(void **state)
{
	struct tcp_syncookie k;
	struct tcp_cookie_tuple t = tuple(), u;
	uint16_t mss;

	(void)state;
	tcp_syncookie_init(&k, KEY);
	uint32_t c = tcp_syncookie_make(&k, &t, 1460, T0);
	u = t;
	u.rport = htons(40001);
	assert_false(tcp_syncookie_check(&k, &u, c, T0, &mss));
	u = t;
	u.raddr ^= htonl(1);
	assert_false(tcp_syncookie_check(&k, &u, c, T0, &mss));
	u = t;
	u.laddr ^= htonl(1);
	assert_false(tcp_syncookie_check(&k, &u, c, T0, &mss));
	u = t;
	u.lport = htons(7001);
	assert_false(tcp_syncookie_check(&k, &u, c, T0, &mss));
	u = t;
	u.peer_isn++;
	assert_false(tcp_syncookie_check(&k, &u, c, T0, &mss));
	/* a guess next to it */
	assert_false(tcp_syncookie_check(&k, &t, c + 1, T0, &mss));
	assert_false(tcp_syncookie_check(&k, &t, c ^ 0x00100000u, T0, &mss));
}

static void test_mss_bits_protected(void **state)
{
	struct tcp_syncookie k;
	struct tcp_cookie_tuple t = tuple();
	uint16_t mss;

	(void)state;
	tcp_syncookie_init(&k, KEY);
	uint32_t c = tcp_syncookie_make(&k, &t, 536, T0);
	for (uint32_t idx = 1; idx < 8; idx++)
		assert_false(tcp_syncookie_check(&k, &t, c ^ (idx << 27), T0, &mss));
}

static void test_age(void **state)
{
	struct tcp_syncookie k;
	struct tcp_cookie_tuple t = tuple();
	uint64_t slot_start = T0 / TCP_COOKIE_SLOT_S * TCP_COOKIE_SLOT_S;
	uint16_t mss;

	(void)state;
	tcp_syncookie_init(&k, KEY);
	uint32_t c = tcp_syncookie_make(&k, &t, 1460, slot_start);
	assert_true(tcp_syncookie_check(&k, &t, c, slot_start + TCP_COOKIE_SLOT_S - 1, &mss));
	assert_true(tcp_syncookie_check(&k, &t, c, slot_start + TCP_COOKIE_LIFE_S - 1, &mss));
	assert_false(tcp_syncookie_check(&k, &t, c, slot_start + TCP_COOKIE_LIFE_S, &mss));
	/* four slots on, the same low bits: the slot's own key tells them apart */
	assert_false(tcp_syncookie_check(&k, &t, c, slot_start + 4 * TCP_COOKIE_SLOT_S, &mss));
	/* and one from the future is no better */
	assert_false(tcp_syncookie_check(&k, &t, c, slot_start - 1, &mss));
}

static void test_secret(void **state)
{
	struct tcp_syncookie k, other;
	struct tcp_cookie_tuple t = tuple();
	uint8_t key2[16];
	uint16_t mss;

	(void)state;
	memcpy(key2, KEY, sizeof(key2));
	key2[15] ^= 1;
	tcp_syncookie_init(&k, KEY);
	tcp_syncookie_init(&other, key2);
	uint32_t c = tcp_syncookie_make(&k, &t, 1460, T0);
	assert_false(tcp_syncookie_check(&other, &t, c, T0, &mss));
	assert_int_not_equal(tcp_syncookie_make(&other, &t, 1460, T0), c);
}

static void test_mss_table(void **state)
{
	struct tcp_syncookie k;
	struct tcp_cookie_tuple t = tuple();
	const uint16_t in[] = {0, 100, 536, 1000, 1219, 1220, 1459, 1460, 1500, 8960, 65495};
	const uint16_t out[] = {536, 536, 536, 536, 536, 1220, 1440, 1460, 1460, 8960, 8960};
	uint16_t mss;

	(void)state;
	tcp_syncookie_init(&k, KEY);
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		assert_int_equal(tcp_syncookie_mss(in[i]), out[i]);
		uint32_t c = tcp_syncookie_make(&k, &t, in[i], T0);
		assert_true(tcp_syncookie_check(&k, &t, c, T0, &mss));
		assert_int_equal(mss, out[i]);
	}
}

static void test_ts_carrier(void **state)
{
	struct tcp_cookie_opts o, back;

	(void)state;
	for (uint32_t now = 1000; now < 1000 + 200; now += 7) {
		for (uint8_t ws = 0; ws <= 14; ws++) {
			o = (struct tcp_cookie_opts){.ws_ok = true, .wscale = ws, .sack_ok = ws & 1};
			uint32_t ts = tcp_syncookie_ts_encode(now, &o);
			assert_true(ts <= now && now - ts < 128);
			tcp_syncookie_ts_decode(ts, &back);
			assert_true(back.ws_ok);
			assert_int_equal(back.wscale, ws);
			assert_int_equal(back.sack_ok, o.sack_ok);
		}
	}
	o = (struct tcp_cookie_opts){.ws_ok = false, .sack_ok = false};
	tcp_syncookie_ts_decode(tcp_syncookie_ts_encode(5000, &o), &back);
	assert_false(back.ws_ok || back.sack_ok);
	/* the clock's wrap is no special case */
	assert_true((int32_t)(tcp_syncookie_ts_encode(3, &o) - 3) <= 0);
	/* every pattern of the low bits is some set of options: 15 is no window scale */
	tcp_syncookie_ts_decode(0x1234560fu | 0x10, &back);
	assert_false(back.ws_ok);
	assert_true(back.sack_ok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bound_to_tuple),
		cmocka_unit_test(test_mss_bits_protected),
		cmocka_unit_test(test_age),
		cmocka_unit_test(test_secret),
		cmocka_unit_test(test_mss_table),
		cmocka_unit_test(test_ts_carrier),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
