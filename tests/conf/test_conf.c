/* softrnic.conf's parser and file choice (conf/): every key the environment takes, the
 * errors naming FILE:LINE and what is allowed, a user's file over the system's, SOFTRNIC_CONF
 * naming the only one, and the environment over every file. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sc_int.h"
#include "softrnic_conf.h"

static char dir[64];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/sc_test_XXXXXX");
	assert_non_null(mkdtemp(dir));
	unsetenv("SOFTRNIC_CONF");
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", dir, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* the value of key k in c, or NULL */
static const char *val(const struct sc_conf *c, const char *k)
{
	int i = sc_key_find(k);

	assert_true(i >= 0);
	return c->v[i].text;
}

static void test_every_key_parses(void **state)
{
	struct sc_conf c = { 0 };

	(void)state;
	assert_int_equal(sc_parse(&c, "f.conf",
		"# the transport\n"
		"transport = dpdk\n"
		"  keepalive=5,1,5   # seconds\n"
		"mpa = crc,markers\n"
		"vipl_addr = 127.0.0.1:7500\n"
		"vipl_spin_us = 20\n"
		"dpdk_eal = \"--no-huge -m 256 --vdev=net_memif0,role=server\"\n"
		"dpdk_ip = 198.51.100.1/24\n"
		"dpdk_mtu = 9000\n"
		"dpdk_engine_drive = 0\n"
		"\n"), 0);
	assert_string_equal(val(&c, "transport"), "dpdk");
	assert_string_equal(val(&c, "keepalive"), "5,1,5");
	assert_string_equal(val(&c, "dpdk_eal"), "--no-huge -m 256 --vdev=net_memif0,role=server");
	assert_string_equal(val(&c, "dpdk_mtu"), "9000");
	assert_null(val(&c, "dpdk_gw"));
	assert_string_equal(c.v[sc_key_find("dpdk_ip")].where, "f.conf:8 (dpdk_ip)");
	sc_free(&c);
}

/* every key is an environment variable the libraries read, and back */
static void test_keys_are_the_variables(void **state)
{
	(void)state;
	assert_int_equal(sc_key_of_env("SOFTRNIC_TRANSPORT"), sc_key_find("transport"));
	assert_int_equal(sc_key_of_env("SOFTRNIC_DPDK_MAX_CONNS"), sc_key_find("dpdk_max_conns"));
	assert_int_equal(sc_key_of_env("SOFTRNIC_VIPL_SPIN_US"), sc_key_find("vipl_spin_us"));
	assert_int_equal(sc_key_of_env("SOFTRNIC_VIPL_WIRE"), sc_key_find("vipl_wire"));
	assert_int_equal(sc_key_of_env("SOFTRNIC_CONF"), -1);
	assert_int_equal(sc_key_of_env("TRANSPORT"), -1);
	for (int i = 0; i < SC_NKEYS; i++) {
		char env[64];

		snprintf(env, sizeof(env), "SOFTRNIC_%s", sc_keys[i].name);
		assert_int_equal(sc_key_of_env(env), i);
	}
}

static void expect_error(const char *text, const char *want)
{
	struct sc_conf c = { 0 };

	assert_int_equal(sc_parse(&c, "/etc/softrnic/softrnic.conf", text), -EINVAL);
	if (strstr(c.err, want) == NULL)
		fail_msg("error '%s' does not say '%s'", c.err, want);
	sc_free(&c);
}

static void test_errors_name_file_line_and_what_is_allowed(void **state)
{
	(void)state;
	expect_error("transport = sock\n\ntransprot = dpdk\n",
		     "/etc/softrnic/softrnic.conf:3: unknown key 'transprot' (known: transport "
		     "keepalive mpa");
	expect_error("transport = tcp\n",
		     "softrnic.conf:1: key 'transport': 'tcp' is not a transport (allowed: sock, "
		     "dpdk)");
	expect_error("vipl_spin_us = -1\n", ":1: key 'vipl_spin_us': '-1' is not a number in "
		     "0..1000000");
	expect_error("vipl_wire = via\n", ":1: key 'vipl_wire': 'via' is not a VIPL wire");
	expect_error("dpdk_engine_drive = 2\n", "'2' is not a number in 0..1");
	expect_error("# nothing\ntransport\n", ":2: 'transport' is not 'key = value'");
	expect_error("mpa = crc\nmpa = markers\n", ":2: key 'mpa' given again (first at line 1)");
}

static void test_user_file_over_system_file(void **state)
{
	char sys[128], udir[128], user[160];
	struct sc_conf c;

	(void)state;
	snprintf(sys, sizeof(sys), "%s/sys.conf", dir);
	write_file(sys, "transport = dpdk\nmpa = crc\n");
	snprintf(udir, sizeof(udir), "%s/.config", dir);
	mkdir(udir, 0700);
	snprintf(udir, sizeof(udir), "%s/.config/softrnic", dir);
	mkdir(udir, 0700);
	snprintf(user, sizeof(user), "%s/softrnic.conf", udir);
	write_file(user, "transport = sock\n");
	sc_load(&c, sys);
	assert_int_equal(c.rc, 0);
	assert_string_equal(val(&c, "transport"), "sock");
	assert_string_equal(val(&c, "mpa"), "crc");
	sc_free(&c);

	/* XDG_CONFIG_HOME moves the user's file */
	setenv("XDG_CONFIG_HOME", dir, 1);
	sc_load(&c, sys);
	assert_string_equal(val(&c, "transport"), "dpdk");
	sc_free(&c);
	unsetenv("XDG_CONFIG_HOME");

	/* a bad user file: an error naming it, and nothing of the files counts */
	write_file(user, "transport = sock\nmtu = 9000\n");
	sc_load(&c, sys);
	assert_int_equal(c.rc, -EINVAL);
	assert_non_null(strstr(c.err, "/.config/softrnic/softrnic.conf:2: unknown key 'mtu'"));
	assert_null(val(&c, "transport"));
	sc_free(&c);

	/* missing files are no error */
	unlink(user);
	unlink(sys);
	sc_load(&c, sys);
	assert_int_equal(c.rc, 0);
	assert_null(val(&c, "transport"));
}

static void test_softrnic_conf_names_the_only_file(void **state)
{
	char sys[128], only[128];
	struct sc_conf c;

	(void)state;
	snprintf(sys, sizeof(sys), "%s/sys.conf", dir);
	snprintf(only, sizeof(only), "%s/only.conf", dir);
	write_file(sys, "transport = dpdk\n");
	write_file(only, "mpa = rev1\n");
	setenv("SOFTRNIC_CONF", only, 1);
	sc_load(&c, sys);
	assert_int_equal(c.rc, 0);
	assert_null(val(&c, "transport"));
	assert_string_equal(val(&c, "mpa"), "rev1");
	sc_free(&c);
	setenv("SOFTRNIC_CONF", "", 1);
	sc_load(&c, sys);
	assert_int_equal(c.rc, 0);
	assert_null(val(&c, "transport"));
	setenv("SOFTRNIC_CONF", "/nonexistent/softrnic.conf", 1);
	sc_load(&c, sys);
	assert_int_equal(c.rc, -EINVAL);
	assert_non_null(strstr(c.err, "SOFTRNIC_CONF: no file '/nonexistent/softrnic.conf'"));
	unsetenv("SOFTRNIC_CONF");
}

/* The process-wide lookups (read once): the environment over the file, key by key. */
static void test_environment_over_file(void **state)
{
	char only[128], where[320];

	(void)state;
	snprintf(only, sizeof(only), "%s/only.conf", dir);
	write_file(only, "transport = dpdk\nkeepalive = off\n");
	setenv("SOFTRNIC_CONF", only, 1);
	setenv("SOFTRNIC_TRANSPORT", "sock", 1);
	assert_int_equal(softrnic_conf_check(NULL, 0), 0);
	assert_string_equal(softrnic_conf_get("SOFTRNIC_TRANSPORT", where, sizeof(where)), "sock");
	assert_string_equal(where, "SOFTRNIC_TRANSPORT");
	assert_string_equal(softrnic_conf_file("SOFTRNIC_TRANSPORT", NULL, 0), "dpdk");
	assert_string_equal(softrnic_conf_get("SOFTRNIC_KEEPALIVE", where, sizeof(where)), "off");
	assert_non_null(strstr(where, "only.conf:2 (keepalive)"));
	assert_null(softrnic_conf_get("SOFTRNIC_MPA", NULL, 0));
	unsetenv("SOFTRNIC_TRANSPORT");
	unsetenv("SOFTRNIC_CONF");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_key_parses),
		cmocka_unit_test(test_keys_are_the_variables),
		cmocka_unit_test(test_errors_name_file_line_and_what_is_allowed),
		cmocka_unit_test_setup_teardown(test_user_file_over_system_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_softrnic_conf_names_the_only_file, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_environment_over_file, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
