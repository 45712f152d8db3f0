/* verbs: a signal ends a blocking ibv_get_cq_event with EINTR, as it ends libibverbs' read()
 * of the channel fd. qperf's tests stop when SIGALRM (installed without SA_RESTART) sets
 * its Finished flag while it sleeps in ibv_get_cq_event; a wait a signal cannot end left
 * both qperf ends asleep after the last message (issue 26). Two contexts connected over
 * 127.0.0.1 (tv_loop.h); b's CQ is armed and nothing is sent until the signal has come. */
#include "tv_loop.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/time.h>

#define RESCUE_MS 3000   /* the unfixed wait is woken by a Send after this, and fails */

static volatile sig_atomic_t alarms;
static atomic_bool got_back;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* Without the fix nothing but an event ends the wait: send one so the test fails rather
 * than hangs. */
static void *rescue(void *arg)
{
	struct tv_side *a = arg;
	struct ibv_send_wr w = { .wr_id = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_INLINE };

	for (int i = 0; i < RESCUE_MS / 10 && !atomic_load(&got_back); i++)
		usleep(10000);
	if (!atomic_load(&got_back))
		tv_post_send(a, &w, 0, 4);
	return NULL;
}

static int setup(void **state)
{
	return tv_pair_setup(state, NULL, NULL);
}

static void test_get_cq_event_eintr(void **state)
{
	struct tv_pair *p = *state;
	struct sigaction sa = { .sa_handler = on_alarm }, old;   /* no SA_RESTART, as qperf */
	struct itimerval it = { .it_value = { 0, 100000 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	struct ibv_send_wr w = { .wr_id = 2, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_INLINE };
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;
	struct ibv_wc wc;
	pthread_t th;
	int rc, err;

	tv_post_recv(&p->b, 10, 0, 4096);
	tv_post_recv(&p->b, 11, 4096, 4096);
	assert_int_equal(ibv_req_notify_cq(p->b.cq, 0), 0);
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	atomic_store(&got_back, false);
	assert_int_equal(pthread_create(&th, NULL, rescue, &p->a), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	rc = ibv_get_cq_event(p->b.ch, &cq, &ctx);
	err = errno;
	atomic_store(&got_back, true);
	if (rc == 0)
		ibv_ack_cq_events(cq, 1);   /* or the teardown's ibv_destroy_cq waits for it */
	setitimer(ITIMER_REAL, &off, NULL);
	pthread_join(th, NULL);
	sigaction(SIGALRM, &old, NULL);
	assert_int_equal(alarms, 1);
	assert_int_equal(rc, -1);
	assert_int_equal(err, EINTR);

	/* the channel still works: an event after the interrupted wait is delivered */
	tv_post_send(&p->a, &w, 0, 4);
	assert_int_equal(ibv_get_cq_event(p->b.ch, &cq, &ctx), 0);
	assert_ptr_equal(cq, p->b.cq);
	ibv_ack_cq_events(cq, 1);
	wc = tv_wait_wc(p->b.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_get_cq_event_eintr, setup, tv_pair_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
