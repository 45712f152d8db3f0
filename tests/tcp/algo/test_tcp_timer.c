/* Hashed timer wheel: never early, at most one tick late, cancel, re-arm (also from a
 * callback, also with delay 0), far timers over several rounds, long gaps, next_us. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "tcp_wheel.h"

#define TICK 100u

static struct tcp_wheel wheel;
static uint64_t now;

struct probe {
	struct tcp_timer t;
	uint64_t due, fired_at;
	unsigned count;
	uint64_t rearm_us;     /* re-arm itself from the callback with this delay */
	unsigned rearm_max;
	struct tcp_timer *cancel_other;
};

static void on_fire(struct tcp_timer *t, void *arg)
{
	struct probe *p = arg;
	assert_ptr_equal(&p->t, t);
	assert_false(tcp_timer_armed(t));
	p->count++;
	p->fired_at = now;
	if (p->cancel_other)
		tcp_timer_cancel(&wheel, p->cancel_other);
	if (p->count < p->rearm_max) {
		p->due = now + p->rearm_us;
		tcp_timer_arm(&wheel, t, now, p->rearm_us);
	}
}

static void probe_arm(struct probe *p, uint64_t delay)
{
	p->due = now + delay;
	tcp_timer_arm(&wheel, &p->t, now, delay);
}

static int setup(void **state)
{
	(void)state;
	now = 12345; /* the wheel's start need not be aligned to anything */
	tcp_wheel_init(&wheel, TICK, now);
	return 0;
}

static void test_basic(void **state)
{
	(void)state;
	struct probe p = {0};
	tcp_timer_init(&p.t, on_fire, &p);
	assert_false(tcp_timer_armed(&p.t));
	probe_arm(&p, 1000);
	assert_true(tcp_timer_armed(&p.t));
	now += 999;
	assert_int_equal(tcp_wheel_run(&wheel, now), 0);
	now += 1;
	assert_int_equal(tcp_wheel_run(&wheel, now) + tcp_wheel_run(&wheel, now + TICK - 1), 1);
	assert_int_equal(p.count, 1);
	assert_int_equal(wheel.armed, 0);
	assert_int_equal(tcp_wheel_next_us(&wheel, now), UINT64_MAX);
}

static void test_never_early_at_most_a_tick_late(void **state)
{
	(void)state;
	enum { N = 300 };
	static struct probe p[N];
	srand(7);
	for (int i = 0; i < N; i++) {
		p[i] = (struct probe){0};
		tcp_timer_init(&p[i].t, on_fire, &p[i]);
		probe_arm(&p[i], (uint64_t)(rand() % 300000));
	}
	const uint64_t step = 37;
	uint64_t end = now + 300000 + 2 * TICK;
	for (; now <= end; now += step)
		tcp_wheel_run(&wheel, now);
	for (int i = 0; i < N; i++) {
		assert_int_equal(p[i].count, 1);
		assert_true(p[i].fired_at >= p[i].due);
		assert_true(p[i].fired_at < p[i].due + TICK + step);
	}
}

static void test_cancel_and_rearm(void **state)
{
	(void)state;
	struct probe a = {0}, b = {0};
	tcp_timer_init(&a.t, on_fire, &a);
	tcp_timer_init(&b.t, on_fire, &b);
	probe_arm(&a, 500);
	probe_arm(&b, 500);
	tcp_timer_cancel(&wheel, &a.t);
	tcp_timer_cancel(&wheel, &a.t); /* twice is harmless */
	probe_arm(&b, 5000);            /* re-arming moves it */
	assert_int_equal(wheel.armed, 1);
	now += 1000;
	tcp_wheel_run(&wheel, now);
	assert_int_equal(a.count + b.count, 0);
	now += 4000;
	tcp_wheel_run(&wheel, now);
	assert_int_equal(b.count, 1);
	assert_int_equal(a.count, 0);
}

static void test_rearm_from_callback(void **state)
{
	(void)state;
	struct probe p = {.rearm_us = 500, .rearm_max = 20};
	tcp_timer_init(&p.t, on_fire, &p);
	probe_arm(&p, 500);
	for (int i = 0; i < 200; i++) {
		now += 50;
		tcp_wheel_run(&wheel, now);
	}
	/* 10 ms at 500 us per period: 20 firings (the last one does not re-arm). */
	assert_int_equal(p.count, 20);
	assert_false(tcp_timer_armed(&p.t));
}

static void test_zero_delay_rearm_terminates(void **state)
{
	(void)state;
	struct probe p = {.rearm_us = 0, .rearm_max = 1000000};
	tcp_timer_init(&p.t, on_fire, &p);
	probe_arm(&p, 0);
	now += 10 * TICK;
	unsigned fired = tcp_wheel_run(&wheel, now);
	/* At most one firing per tick: the run ends. */
	assert_true(fired >= 1 && fired <= 11);
	tcp_timer_cancel(&wheel, &p.t);
}

static void test_callback_cancels_neighbour(void **state)
{
	(void)state;
	struct probe a = {0}, b = {0};
	tcp_timer_init(&a.t, on_fire, &a);
	tcp_timer_init(&b.t, on_fire, &b);
	a.cancel_other = &b.t;
	b.cancel_other = &a.t;
	probe_arm(&a, 300); /* same slot, whichever fires first cancels the other */
	probe_arm(&b, 300);
	now += 1000;
	assert_int_equal(tcp_wheel_run(&wheel, now), 1);
	assert_int_equal(a.count + b.count, 1);
	assert_int_equal(wheel.armed, 0);
}

static void test_far_timers(void **state)
{
	(void)state;
	struct probe far = {0}, near = {0};
	tcp_timer_init(&far.t, on_fire, &far);
	tcp_timer_init(&near.t, on_fire, &near);
	uint64_t span = (uint64_t)TCP_WHEEL_SLOTS * TICK;
	probe_arm(&far, 3 * span + 250); /* shares a slot with near for three rounds */
	probe_arm(&near, 250);
	for (uint64_t t = 0; t < 3 * span; t += TICK) {
		now += TICK;
		tcp_wheel_run(&wheel, now);
		if (far.count)
			break;
	}
	assert_int_equal(near.count, 1);
	assert_int_equal(far.count, 0);
	/* next_us never points past the tick the far timer fires on */
	uint64_t nx = tcp_wheel_next_us(&wheel, now);
	assert_true(now + nx <= far.due + TICK);
	assert_true(now + nx >= far.due);
	now = far.due + TICK;
	tcp_wheel_run(&wheel, now);
	assert_int_equal(far.count, 1);
}

static void test_long_gap(void **state)
{
	(void)state;
	enum { N = 50 };
	struct probe p[N];
	for (int i = 0; i < N; i++) {
		p[i] = (struct probe){0};
		tcp_timer_init(&p[i].t, on_fire, &p[i]);
		probe_arm(&p[i], 1000u * (uint64_t)i * 7919u % 20000000u);
	}
	struct probe later = {0};
	tcp_timer_init(&later.t, on_fire, &later);
	probe_arm(&later, 60000000); /* a minute */
	now += 30000000;             /* 30 s without running the wheel */
	assert_int_equal(tcp_wheel_run(&wheel, now), N);
	assert_int_equal(later.count, 0);
	assert_true(tcp_timer_armed(&later.t));
	now += 30000000;
	assert_int_equal(tcp_wheel_run(&wheel, now), 1);
}

static void test_next_us_never_late(void **state)
{
	(void)state;
	srand(11);
	for (int round = 0; round < 200; round++) {
		struct probe p = {0};
		tcp_timer_init(&p.t, on_fire, &p);
		uint64_t delay = (uint64_t)(rand() % 500000);
		probe_arm(&p, delay);
		/* Sleeping for next_us, then running, repeatedly: the timer fires, and never
		 * before its due time. */
		int guard = 0;
		while (p.count == 0 && guard++ < 100000) {
			uint64_t nx = tcp_wheel_next_us(&wheel, now);
			assert_true(nx != UINT64_MAX);
			assert_true(now + nx <= p.due + TICK);
			now += nx ? nx : 1;
			tcp_wheel_run(&wheel, now);
		}
		assert_int_equal(p.count, 1);
		assert_true(p.fired_at >= p.due);
		assert_true(p.fired_at <= p.due + TICK);
	}
}

static void test_next_us_far_exact(void **state)
{
	(void)state;
	/* A lone timer 10 s out (many wheel rounds): next_us points at its tick, not at an
	 * earlier round of its slot, so an idle caller sleeps the whole time. */
	struct probe p = {0}, q = {0};
	tcp_timer_init(&p.t, on_fire, &p);
	tcp_timer_init(&q.t, on_fire, &q);
	probe_arm(&p, 10000000);
	uint64_t nx = tcp_wheel_next_us(&wheel, now);
	assert_true(nx >= 10000000 && nx < 10000000 + TICK);
	/* A nearer one takes over; cancelled, the bound may be early but never late. */
	probe_arm(&q, 5000);
	assert_true(tcp_wheel_next_us(&wheel, now) <= 5000 + TICK);
	tcp_timer_cancel(&wheel, &q.t);
	nx = tcp_wheel_next_us(&wheel, now);
	assert_true(nx <= 10000000 + TICK);
	now += nx;
	tcp_wheel_run(&wheel, now);
	while (p.count == 0) {
		nx = tcp_wheel_next_us(&wheel, now);
		now += nx ? nx : 1;
		tcp_wheel_run(&wheel, now);
	}
	assert_true(p.fired_at >= p.due && p.fired_at <= p.due + TICK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_basic, setup),
		cmocka_unit_test_setup(test_never_early_at_most_a_tick_late, setup),
		cmocka_unit_test_setup(test_cancel_and_rearm, setup),
		cmocka_unit_test_setup(test_rearm_from_callback, setup),
		cmocka_unit_test_setup(test_zero_delay_rearm_terminates, setup),
		cmocka_unit_test_setup(test_callback_cancels_neighbour, setup),
		cmocka_unit_test_setup(test_far_timers, setup),
		cmocka_unit_test_setup(test_long_gap, setup),
		cmocka_unit_test_setup(test_next_us_never_late, setup),
		cmocka_unit_test_setup(test_next_us_far_exact, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
