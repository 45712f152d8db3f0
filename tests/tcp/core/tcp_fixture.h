/* The fixture the engine's tests share (cmocka): one pair of stacks (tcp_pair.h), created
 * fresh for every test and checked at its end (no endless exchange, no mbuf leaked). */
#ifndef TCP_FIXTURE_H
#define TCP_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tcp_pair.h"

extern struct tcp_pair P;

int pair_fixture_setup(void **state);
int pair_fixture_teardown(void **state);
/* Connect a (active) to b (accepted) on a fixed port; both ESTABLISHED. */
void pair_established(struct pair_ep *a, struct pair_ep *b);
/* Start EAL for the test binary, then run the tests; 1 when EAL cannot start. */
int pair_run_tests(const char *name, const struct CMUnitTest *tests, size_t n);

#endif
