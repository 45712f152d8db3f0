/* dpdk/dpdk_cfg.c: the port configuration from text and from the environment; every bad
 * value is refused with a message naming its key. No EAL needed. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dpdk_cfg_int.h"
#include "dpdk_port.h"

static uint32_t ip4(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

static void test_good(void **state)
{
	struct dpdk_cfg c;
	char err[512] = "";
	const char *text =
		"# a comment\n"
		"eal = --no-huge -m 256 --vdev=net_memif0,role=server,socket=/tmp/x.sock\n"
		"  port=net_memif0   # trailing comment\n"
		"ip = 198.51.100.1/24\n"
		"gw = 198.51.100.254\n"
		"mac = 02:00:00:00:00:0a\n"
		"mtu = 9000\n"
		"pcap = \"/tmp/cap.pcap\"\n"
		"sndbuf = 512k\n"
		"rcvbuf = 1M\n"
		"cc = cubic\n"
		"spin_us = 0\n"
		"nap_us = 100\n"
		"mbufs = 4095\n"
		"tx_mbufs = 64k\n"
		"link_wait_ms = 0\n"
		"tx_refs = on\n"
		"memif_csum = off\n"
		"\n";

	(void)state;
	assert_int_equal(dpdk_cfg_parse(&c, text, err, sizeof(err)), 0);
	assert_string_equal(c.eal, "--no-huge -m 256 --vdev=net_memif0,role=server,socket=/tmp/x.sock");
	assert_string_equal(c.port, "net_memif0");
	assert_int_equal(c.ip, ip4("198.51.100.1"));
	assert_int_equal(c.prefix_len, 24);
	assert_int_equal(c.gateway, ip4("198.51.100.254"));
	assert_true(c.mac_set);
	assert_int_equal(c.mac[5], 0x0a);
	assert_int_equal(c.mtu, 9000);
	assert_string_equal(c.pcap, "/tmp/cap.pcap");
	assert_int_equal(c.snd_buf, 512 * 1024);
	assert_int_equal(c.rcv_buf, 1024 * 1024);
	assert_int_equal(c.cc, TCP_CC_CUBIC);
	assert_int_equal(c.spin_us, 0);
	assert_int_equal(c.nap_us, 100);
	assert_int_equal(c.nb_mbufs, 4095);
	assert_int_equal(c.nb_tx_mbufs, 65536);
	assert_int_equal(c.link_wait_ms, 0);
	assert_true(c.link_wait_set);
	assert_true(c.tx_refs);
	assert_true(c.memif_csum_off);
}

static void test_defaults_and_netmask(void **state)
{
	struct dpdk_cfg c;
	char err[512] = "";

	(void)state;
	assert_int_equal(dpdk_cfg_parse(&c, "ip = 10.1.2.3/24\nmtu = 64000", err, sizeof(err)), 0);
	assert_int_equal(c.mtu, 64000); /* the largest: a local memif link, as loopback's 65536 */
	assert_int_equal(c.nb_mbufs, 0);  /* sized by the port from the MTU */
	assert_int_equal(dpdk_cfg_parse(&c, "ip = 10.1.2.3/255.255.0.0", err, sizeof(err)), 0);
	assert_int_equal(c.prefix_len, 16);
	assert_string_equal(c.port, "0");
	assert_int_equal(c.mtu, 1500);
	assert_int_equal(c.spin_us, 200);
	assert_int_equal(c.nap_us, 50);
	assert_int_equal(c.nb_tx_mbufs, 0); /* sized at open */
	assert_int_equal(c.link_wait_ms, 2000);
	assert_false(c.link_wait_set);
	/* a memif server does not wait for its client unless told to */
	assert_int_equal(dpdk_cfg_link_wait_ms(&c, false), 2000);
	assert_int_equal(dpdk_cfg_link_wait_ms(&c, true), 0);
	assert_int_equal(dpdk_cfg_parse(&c, "ip = 10.1.2.3/24\nlink_wait_ms = 500", err,
					sizeof(err)), 0);
	assert_int_equal(dpdk_cfg_link_wait_ms(&c, true), 500);
	assert_int_equal(dpdk_cfg_link_wait_ms(&c, false), 500);
	assert_false(c.tx_refs);
	assert_false(c.memif_csum_off);
	/* a silent peer is given up after 5 + 5 x 1 = 10 s */
	assert_int_equal(c.ka_idle_s, 5);
	assert_int_equal(c.ka_intvl_s, 1);
	assert_int_equal(c.ka_probes, 5);
	assert_int_equal(dpdk_cfg_parse(&c, "ip = 10.1.2.3/24\nkeepalive = 30,2,9", err,
					sizeof(err)), 0);
	assert_int_equal(c.ka_idle_s, 30);
	assert_int_equal(c.ka_intvl_s, 2);
	assert_int_equal(c.ka_probes, 9);
	assert_int_equal(dpdk_cfg_parse(&c, "ip = 10.1.2.3/24\nkeepalive = off", err,
					sizeof(err)), 0);
	assert_int_equal(c.ka_idle_s, 0);
	/* room for 10,000 QPs and their TIME-WAIT entries by default */
	assert_int_equal(c.max_conns, 16384);
	assert_int_equal(dpdk_cfg_parse(&c, "ip = 10.1.2.3/24\nmax_conns = 65536", err,
					sizeof(err)), 0);
	assert_int_equal(c.max_conns, 65536);
	/* an orphan's FIN: 5 retransmissions; FIN-WAIT-2 after the close: 60 s */
	assert_int_equal(c.orphan_retries, 5);
	assert_int_equal(c.fin_timeout_s, 60);
	assert_int_equal(dpdk_cfg_parse(&c, "ip = 10.1.2.3/24\norphan_retries = 8\n"
					"fin_timeout = 30", err, sizeof(err)), 0);
	assert_int_equal(c.orphan_retries, 8);
	assert_int_equal(c.fin_timeout_s, 30);
	assert_int_equal(dpdk_cfg_parse(&c, "ip = 10.1.2.3/24", err, sizeof(err)), 0);
	assert_int_equal(c.cc, TCP_CC_NEWRENO);
	assert_false(c.mac_set);
	assert_int_equal(c.gateway, 0);
	assert_string_equal(c.pcap, "");
}

/* Each bad line is refused and the message names the key (or says what is wrong). */
static void test_bad(void **state)
{
	static const struct {
		const char *text, *needle;
	} cases[] = {
		{ "ip = 198.51.100.1", "'ip'" },
		{ "ip = 198.51.100.1/33", "'ip'" },
		{ "ip = 198.51.100/24", "'ip'" },
		{ "ip = 10.0.0.1/255.0.255.0", "'ip'" },
		{ "ip = 0.0.0.0/24", "'ip'" },
		{ "ip = 198.51.100.1/24\nmtu = 100", "'mtu'" },
		{ "ip = 198.51.100.1/24\nmtu = 64001", "'mtu'" },
		{ "ip = 198.51.100.1/24\nmtu = 1500x", "'mtu'" },
		{ "ip = 198.51.100.1/24\nmtu = -1", "'mtu'" },
		{ "ip = 198.51.100.1/24\nmac = 01:00:00:00:00:01", "'mac'" },
		{ "ip = 198.51.100.1/24\nmac = 02:00:00:00:00", "'mac'" },
		{ "ip = 198.51.100.1/24\nmac = 02:00:00:00:00:01:05", "'mac'" },
		{ "ip = 198.51.100.1/24\ngw = 198.51.100.300", "'gw'" },
		{ "ip = 198.51.100.1/24\ngw = 203.0.113.1", "'gw'" },
		{ "ip = 198.51.100.1/24\ncc = vegas", "'cc'" },
		{ "ip = 198.51.100.1/24\nsndbuf = 10", "'sndbuf'" },
		{ "ip = 198.51.100.1/24\nrcvbuf = 99999999999", "'rcvbuf'" },
		{ "ip = 198.51.100.1/24\nnap_us = 0", "'nap_us'" },
		{ "ip = 198.51.100.1/24\nmbufs = 10", "'mbufs'" },
		{ "ip = 198.51.100.1/24\ntx_mbufs = 10", "'tx_mbufs'" },
		{ "ip = 198.51.100.1/24\nlink_wait_ms = 60001", "'link_wait_ms'" },
		{ "ip = 198.51.100.1/24\ntx_refs = maybe", "'tx_refs'" },
		{ "ip = 198.51.100.1/24\nmemif_csum = no", "'memif_csum'" },
		{ "ip = 198.51.100.1/24\nkeepalive = 5,1", "'keepalive'" },
		{ "ip = 198.51.100.1/24\nkeepalive = 5,1,5,1", "'keepalive'" },
		{ "ip = 198.51.100.1/24\nkeepalive = 0,1,5", "'keepalive'" },
		{ "ip = 198.51.100.1/24\nkeepalive = 5,1,x", "'keepalive'" },
		{ "ip = 198.51.100.1/24\nkeepalive = on", "'keepalive'" },
		{ "ip = 198.51.100.1/24\nmax_conns = 63", "'max_conns'" },
		{ "ip = 198.51.100.1/24\nmax_conns = 4194305", "'max_conns'" },
		{ "ip = 198.51.100.1/24\norphan_retries = 0", "'orphan_retries'" },
		{ "ip = 198.51.100.1/24\norphan_retries = 101", "'orphan_retries'" },
		{ "ip = 198.51.100.1/24\nfin_timeout = 0", "'fin_timeout'" },
		{ "ip = 198.51.100.1/24\nfin_timeout = 3601", "'fin_timeout'" },
		{ "ip = 198.51.100.1/24\nport =", "'port'" },
		{ "ip = 198.51.100.1/24\ncolour = blue", "unknown key 'colour'" },
		{ "ip = 198.51.100.1/24\njust words", "line 2" },
		{ "mtu = 1500", "'ip' is required" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dpdk_cfg c;
		char err[512] = "";

		if (dpdk_cfg_parse(&c, cases[i].text, err, sizeof(err)) != -EINVAL)
			fail_msg("accepted: %s", cases[i].text);
		if (strstr(err, cases[i].needle) == NULL)
			fail_msg("message for '%s' is '%s', want '%s' in it", cases[i].text, err,
				 cases[i].needle);
	}
}

static void clear_env(void)
{
	static const char *const keys[] = { "CONF", "EAL", "PORT", "IP", "GW", "MAC", "MTU",
					    "PCAP", "SNDBUF", "RCVBUF", "CC", "SPIN_US", "NAP_US",
					    "MBUFS" };
	char name[64];

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(name, sizeof(name), "SOFTRNIC_DPDK_%s", keys[i]);
		unsetenv(name);
	}
}

static void test_env(void **state)
{
	struct dpdk_cfg c;
	char err[512] = "", path[] = "/tmp/srn-cfg-XXXXXX";
	int fd;
	FILE *f;

	(void)state;
	clear_env();
	assert_int_equal(dpdk_cfg_from_env(&c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "SOFTRNIC_DPDK_CONF"));
	/* The file, then a variable over it. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "ip = 198.51.100.1/24\nmtu = 2000\nport = net_ring0\n");
	fclose(f);
	setenv("SOFTRNIC_DPDK_CONF", path, 1);
	setenv("SOFTRNIC_DPDK_MTU", "1400", 1);
	assert_int_equal(dpdk_cfg_from_env(&c, err, sizeof(err)), 0);
	assert_int_equal(c.mtu, 1400);
	assert_string_equal(c.port, "net_ring0");
	assert_int_equal(c.ip, ip4("198.51.100.1"));
	/* A bad variable names itself and the key. */
	setenv("SOFTRNIC_DPDK_SPIN_US", "lots", 1);
	assert_int_equal(dpdk_cfg_from_env(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "SOFTRNIC_DPDK_SPIN_US"));
	assert_non_null(strstr(err, "'spin_us'"));
	unsetenv("SOFTRNIC_DPDK_SPIN_US");
	/* A missing file is named. */
	unlink(path);
	assert_int_equal(dpdk_cfg_from_env(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, path));
	clear_env();
	/* Variables alone. */
	setenv("SOFTRNIC_DPDK_IP", "198.51.100.7/25", 1);
	setenv("SOFTRNIC_DPDK_CC", "bbr", 1);
	assert_int_equal(dpdk_cfg_from_env(&c, err, sizeof(err)), 0);
	assert_int_equal(c.prefix_len, 25);
	assert_int_equal(c.cc, TCP_CC_BBR);
	clear_env();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_defaults_and_netmask),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
