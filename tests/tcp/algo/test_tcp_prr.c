/* PRR (RFC 6937): the proportional part spreads the reduction over the recovery (one segment
 * for every two delivered when ssthresh is half of RecoverFS, as in the RFC's first example),
 * PRR-SSRB grows back towards ssthresh by at most one segment more than delivered when the
 * pipe fell below it, and nothing is sent beyond ssthresh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tcp_prr.h"

#define MSS 1000u

/* The sender sends whole segments only, as many as sndcnt allows. */
static uint32_t send_whole(struct tcp_prr *p, uint32_t sndcnt)
{
	uint32_t n = sndcnt / MSS;

	tcp_prr_sent(p, n * MSS);
	return n;
}

static void test_proportional_half(void **state)
{
	struct tcp_prr p;
	uint32_t pipe = 19 * MSS, total = 0; /* 20 in flight, one lost */

	(void)state;
	tcp_prr_init(&p, 20 * MSS);
	/* each ACK reports one segment delivered: PRR sends on every second one while the
	 * pipe is above ssthresh, then holds it there */
	for (unsigned k = 1; k <= 18; k++) {
		pipe -= MSS;
		uint32_t n = send_whole(&p, tcp_prr_sndcnt(&p, MSS, pipe, 10 * MSS, MSS));
		if (k <= 14)
			assert_int_equal(n, k % 2 == 0 ? 1 : 0);
		pipe += n * MSS;
		total += n;
	}
	assert_int_equal(total, 9);
	assert_int_equal(pipe, 10 * MSS); /* ssthresh reached as recovery ends */
}

static void test_ssrb_after_heavy_loss(void **state)
{
	struct tcp_prr p;

	(void)state;
	tcp_prr_init(&p, 20 * MSS);
	/* most of the flight was lost: pipe 4 segments, ssthresh 10. An ACK delivering one
	 * segment may send two (slow start), not the six that would fill ssthresh at once */
	assert_int_equal(tcp_prr_sndcnt(&p, MSS, 4 * MSS, 10 * MSS, MSS), 2 * MSS);
	tcp_prr_sent(&p, 2 * MSS);
	assert_int_equal(tcp_prr_sndcnt(&p, MSS, 5 * MSS, 10 * MSS, MSS), 2 * MSS);
	tcp_prr_sent(&p, 2 * MSS);
	/* a stretch ACK of three segments: four may go, and never past ssthresh */
	assert_int_equal(tcp_prr_sndcnt(&p, 3 * MSS, 4 * MSS, 10 * MSS, MSS), 4 * MSS);
	assert_int_equal(tcp_prr_sndcnt(&p, 3 * MSS, 9 * MSS, 10 * MSS, MSS), MSS);
}

static void test_nothing_above_ssthresh_share(void **state)
{
	struct tcp_prr p;

	(void)state;
	tcp_prr_init(&p, 10 * MSS);
	/* ssthresh 7 of RecoverFS 10 (CUBIC's beta): 7 sent for each 10 delivered */
	uint32_t sent = 0, pipe = 10 * MSS;
	for (unsigned k = 0; k < 10; k++) {
		pipe -= MSS;
		uint32_t n = send_whole(&p, tcp_prr_sndcnt(&p, MSS, pipe, 7 * MSS, MSS));
		pipe += n * MSS;
		sent += n;
	}
	assert_int_equal(sent, 7);
	assert_int_equal(pipe, 7 * MSS);
	/* no delivery, no sending */
	assert_int_equal(tcp_prr_sndcnt(&p, 0, pipe + MSS, 7 * MSS, MSS), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proportional_half),
		cmocka_unit_test(test_ssrb_after_heavy_loss),
		cmocka_unit_test(test_nothing_above_ssthresh_share),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
