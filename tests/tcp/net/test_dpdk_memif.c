/* dpdk/dpdk_memif.c: memif --vdev arguments read (bsize, role) and completed with a bsize
 * that holds a whole frame of the port's MTU. No EAL needed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpdk_memif.h"

static void test_bsize(void **state)
{
	(void)state;
	assert_int_equal(dpdk_memif_bsize(""), DPDK_MEMIF_BSIZE_DEFAULT);
	assert_int_equal(dpdk_memif_bsize("role=server,socket=/tmp/x"), 2048);
	assert_int_equal(dpdk_memif_bsize("role=server,bsize=9216,socket=/tmp/x"), 9216);
	assert_int_equal(dpdk_memif_bsize("bsize=4096"), 4096);
	assert_int_equal(dpdk_memif_bsize("xbsize=4096"), 2048); /* another key */
	assert_int_equal(dpdk_memif_bsize("bsize="), 0);
	assert_int_equal(dpdk_memif_bsize("bsize=12ab"), 0);
	assert_int_equal(dpdk_memif_bsize("bsize=0"), 0);
	assert_int_equal(dpdk_memif_bsize("bsize=65536"), 0);
	assert_int_equal(dpdk_memif_bsize("bsize=123456789012345678901"), 0);
}

static void test_role(void **state)
{
	(void)state;
	assert_true(dpdk_memif_is_client("role=client,socket=/tmp/x"));
	assert_true(dpdk_memif_is_client("socket=/tmp/x,role=slave"));
	assert_false(dpdk_memif_is_client("role=server"));
	assert_false(dpdk_memif_is_client("role=clientx"));
	assert_false(dpdk_memif_is_client("socket=/tmp/role=client"));
	assert_false(dpdk_memif_is_client(""));
}

/* the listener the guard looks for (dpdk_memif_guard.h) */
static void test_socket(void **state)
{
	char out[108], tiny[4];

	(void)state;
	assert_int_equal(dpdk_memif_socket("role=server,socket=/tmp/m.sock,bsize=4096", out,
					   sizeof(out)), 11);
	assert_string_equal(out, "/tmp/m.sock");
	assert_int_equal(dpdk_memif_socket("role=server", out, sizeof(out)),
			 strlen(DPDK_MEMIF_SOCKET_DEFAULT));
	assert_string_equal(out, DPDK_MEMIF_SOCKET_DEFAULT);
	assert_int_equal(dpdk_memif_socket("socket=/tmp/m.sock", tiny, sizeof(tiny)), 0);
}

static void test_fit(void **state)
{
	char out[128];

	(void)state;
	assert_int_equal(dpdk_memif_frame(1500), 1514);
	/* the default buffer holds a 1500 (and a 2034) MTU frame: nothing to add */
	assert_int_equal(dpdk_memif_fit("net_memif0,role=server", 1500, out, sizeof(out)), 0);
	assert_int_equal(dpdk_memif_fit("net_memif0,role=server", 2034, out, sizeof(out)), 0);
	assert_int_equal(dpdk_memif_fit("net_memif0,role=server", 2035, out, sizeof(out)), 1);
	assert_string_equal(out, "net_memif0,role=server,bsize=2176");
	assert_int_equal(dpdk_memif_fit("net_memif1,socket=/tmp/m.sock", 9000, out,
					   sizeof(out)), 1);
	assert_string_equal(out, "net_memif1,socket=/tmp/m.sock,bsize=9088");
	assert_int_equal(dpdk_memif_fit("eth_memif0", 9000, out, sizeof(out)), 1);
	assert_string_equal(out, "eth_memif0,bsize=9088");
	/* the user's bsize stands (the port refuses one that is too small) */
	assert_int_equal(dpdk_memif_fit("net_memif0,bsize=4096", 9000, out, sizeof(out)), 0);
	/* not memif */
	assert_int_equal(dpdk_memif_fit("net_ring0", 9000, out, sizeof(out)), 0);
	assert_int_equal(dpdk_memif_fit("net_af_packet0,iface=v0", 9000, out, sizeof(out)), 0);
	/* no room, or no buffer size memif can have */
	assert_int_equal(dpdk_memif_fit("net_memif0,role=server", 9000, out, 20), -E2BIG);
	assert_int_equal(dpdk_memif_fit("net_memif0", 65530, out, sizeof(out)), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bsize),
		cmocka_unit_test(test_role),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_socket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
