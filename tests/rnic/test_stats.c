/* rn_stats: the statistics file softrnic-stat reads (docs/stats.md). The file appears with the
 * first device, 0600, with this build's layout; device and QP records are handed out and
 * given back by gen; counters added by the data path's two ways read back exactly; a CQ
 * overflow counted on its device; a full QP
 * table leaves QPs out of the table but in the device's totals; the reader refuses every kind
 * of bad file with a reason (magic, version, sizes, tables outside the file) and removes a
 * dead process's file. The process's file lives in a folder of the test's own. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rn_device.h"
#include "rn_device_int.h"
#include "rn_stats_int.h"

static char dir[64];
static char path[128];

static struct rn_device *open_dev(void)
{
	struct rn_device_open_attr a;
	struct rn_device *dev = NULL;

	rn_device_open_attr_default(&a);
	a.inline_progress = true;
	assert_int_equal(rn_device_open(&a, &dev), RN_OK);
	return dev;
}

static void test_file_appears_with_device(void **st)
{
	(void)st;
	char dead[160];
	int fd;

	/* a dead process's file, left before this process made its own: swept then */
	snprintf(dead, sizeof(dead), "%s/softrnic-999997.stats", dir);
	fd = open(dead, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	struct rn_device *dev = open_dev();
	struct rn_stats_view v;
	struct rn_stats_dev d;
	struct stat sb;
	char err[256];
	bool found = false;

	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(access(dead, F_OK), -1);
	assert_int_equal(rn_stats_open(path, &v, err, sizeof(err)), 0);
	assert_int_equal(v.hdr->pid, getpid());
	assert_int_equal(v.hdr->nqp, 2);   /* SOFTRNIC_STATS_QPS, set in main */
	for (uint32_t i = 0; i < v.hdr->ndev; i++)
		if (rn_stats_get_dev(&v, i, &d) && strcmp(d.name, "softrnic0") == 0)
			found = true;
	assert_true(found);
	assert_int_equal(rn_device_close(dev), RN_OK);
	found = false;
	for (uint32_t i = 0; i < v.hdr->ndev; i++)
		found |= rn_stats_get_dev(&v, i, &d);
	assert_false(found);   /* the record went back with the device */
	rn_stats_close(&v);
}

/* The index of a record (in the writer's mapping) for rn_stats_get_* on a view. */
static uint32_t dev_index(const struct rn_stats_view *v, const struct rn_stats_dev *d)
{
	size_t len;
	const char *base = (const char *)rn_stats_self(&len);

	return (uint32_t)(((const char *)d - (base + v->hdr->dev_off)) / v->hdr->dev_size);
}

static uint32_t qp_index(const struct rn_stats_view *v, const struct rn_stats_qp *q)
{
	size_t len;
	const char *base = (const char *)rn_stats_self(&len);

	return (uint32_t)(((const char *)q - (base + v->hdr->qp_off)) / v->hdr->qp_size);
}

static void test_counters_read_back_exact(void **st)
{
	(void)st;
	struct rn_stats_dev *d = rn_stats_dev_take(3, "softrnic3");
	struct rn_stats_qp *q1 = rn_stats_qp_take(d, 11), *q2 = rn_stats_qp_take(d, 12);
	struct rn_stats_qp *q3 = rn_stats_qp_take(d, 13);   /* the table holds 2 */
	struct rn_stats_view v;
	struct rn_stats_dev rd;
	struct rn_stats_qp rq;
	char err[256];

	assert_non_null(q1);
	assert_non_null(q2);
	assert_null(q3);
	for (int i = 0; i < 1000; i++) {
		rn_stat_own_add(&q1->c.tx_msgs[RN_STATS_OP_SEND], 1);
		rn_stat_own_add(&q1->c.tx_msg_octets[RN_STATS_OP_SEND], 4096);
		rn_stat_shared_add(&d->c.tx_msgs[RN_STATS_OP_SEND], 1);
	}
	rn_stat_own_add(&q2->c.term_rx[2][0], 1);
	rn_stat_own_add(&q2->c.crc_errors, 1);
	assert_int_equal(rn_stats_open(path, &v, err, sizeof(err)), 0);
	assert_true(rn_stats_get_dev(&v, dev_index(&v, d), &rd));
	assert_int_equal(rd.unit, 3);
	assert_int_equal(rd.qps_untracked, 1);
	assert_int_equal(rd.c.tx_msgs[RN_STATS_OP_SEND], 1000);
	assert_true(rn_stats_get_qp(&v, qp_index(&v, q1), &rq));
	assert_int_equal(rq.qp_num, 11);
	assert_int_equal(rq.dev, dev_index(&v, d));
	assert_int_equal(rq.c.tx_msgs[RN_STATS_OP_SEND], 1000);
	assert_int_equal(rq.c.tx_msg_octets[RN_STATS_OP_SEND], 4096000);
	assert_true(rn_stats_get_qp(&v, qp_index(&v, q2), &rq));
	assert_int_equal(rq.c.term_rx[2][0], 1);
	assert_int_equal(rq.c.crc_errors, 1);
	/* a freed record is not read; taken again, it starts from zero under a new gen */
	uint32_t i1 = qp_index(&v, q1), gen = q1->gen;
	rn_stats_qp_put(q1);
	assert_false(rn_stats_get_qp(&v, i1, &rq));
	q1 = rn_stats_qp_take(d, 14);
	assert_int_equal(qp_index(&v, q1), i1);
	assert_true(rn_stats_get_qp(&v, i1, &rq));
	assert_int_equal(rq.qp_num, 14);
	assert_int_equal(rq.gen, gen + 2);
	assert_int_equal(rq.c.tx_msgs[RN_STATS_OP_SEND], 0);
	rn_stats_qp_put(q1);
	rn_stats_qp_put(q2);
	rn_stats_dev_put(d);
	rn_stats_close(&v);
}

/* A device's CQ that overflows: every completion lost counts in cq_overruns. */
static void test_cq_overruns(void **st)
{
	(void)st;
	struct rn_device *dev = open_dev();
	struct rn_cqe e = { .wr_id = 1 };
	struct rn_cq *cq;
	uint32_t n, lost = 0;

	assert_int_equal(rn_device_cq_create(dev, 4, NULL, NULL, &cq, &n), RN_OK);
	for (uint32_t i = 0; i < n + 3; i++)
		if (rn_cq_push(cq, &e) == RN_CQ_PUSH_OVERFLOW)
			lost++;
	assert_int_equal(lost, 3);
	assert_int_equal(dev->stats->cq_overruns, 3);
	assert_int_equal(rn_device_cq_destroy(dev, cq), RN_OK);
	assert_int_equal(rn_device_close(dev), RN_OK);
}

static void test_op_and_fpdu_mapping(void **st)
{
	(void)st;
	assert_int_equal(rn_stats_op_of(RDMAP_OP_SEND_SE_INV), RN_STATS_OP_SEND);
	assert_int_equal(rn_stats_op_of(RDMAP_OP_READ_RESP), RN_STATS_OP_READ_RESP);
	assert_int_equal(rn_stats_op_of(RDMAP_OP_IMM_DATA_SE), RN_STATS_OP_IMM);
	assert_int_equal(rn_stats_op_of(RDMAP_OP_TERMINATE), RN_STATS_NOPS);
	/* 2 + 1014 + 0 + 4 (a 1000-octet Write), 2 + 18 + 0 + 4 (an empty Send), pads 1..3 */
	assert_int_equal(rn_stats_fpdu_octets(1014), 1020);
	assert_int_equal(rn_stats_fpdu_octets(18), 24);
	assert_int_equal(rn_stats_fpdu_octets(19), 28);
	assert_int_equal(rn_stats_term_layer(7), RN_STATS_TERM_LAYERS - 1);
	assert_int_equal(rn_stats_term_etype(9), RN_STATS_TERM_ETYPES - 1);
	/* docs/stats.md gives the QP record's size: what a stats_qps record costs */
	assert_int_equal(sizeof(struct rn_stats_qp), 464);
}

/* A file with hdr's content, held locked as a live owner holds it; *fd to unlock. */
static void bad_file(const char *p, const void *content, size_t len, int *fd)
{
	*fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(*fd >= 0);
	assert_int_equal(flock(*fd, LOCK_SH), 0);
	assert_int_equal(write(*fd, content, len), (ssize_t)len);
}

static void expect_refused(const char *p, const char *why)
{
	struct rn_stats_view v;
	char err[512];

	assert_int_equal(rn_stats_open(p, &v, err, sizeof(err)), -EPROTO);
	if (!strstr(err, why))
		fail_msg("'%s' does not say '%s'", err, why);
}

static void test_bad_files_refused(void **st)
{
	(void)st;
	size_t len;
	const struct rn_stats_hdr *self = rn_stats_self(&len);
	char p[160];
	int fd;

	assert_non_null(self);
	char *img = malloc(len);
	assert_non_null(img);
	snprintf(p, sizeof(p), "%s/softrnic-999999.stats", dir);

	bad_file(p, "", 0, &fd);
	expect_refused(p, "not a regular file with content");
	close(fd);

	memcpy(img, self, len);
	((struct rn_stats_hdr *)img)->magic = 0x1122334455667788ull;
	bad_file(p, img, len, &fd);
	expect_refused(p, "magic");
	close(fd);

	memcpy(img, self, len);
	((struct rn_stats_hdr *)img)->version = RN_STATS_VERSION + 1;
	bad_file(p, img, len, &fd);
	expect_refused(p, "layout version");
	close(fd);

	memcpy(img, self, len);
	((struct rn_stats_hdr *)img)->qp_size += 8;
	bad_file(p, img, len, &fd);
	expect_refused(p, "layout version");
	close(fd);

	memcpy(img, self, len);
	bad_file(p, img, len / 2, &fd);   /* cut short */
	expect_refused(p, "tables outside the file");
	close(fd);

	memcpy(img, self, len);
	((struct rn_stats_hdr *)img)->qp_off = len;   /* one table past the end */
	bad_file(p, img, len, &fd);
	expect_refused(p, "tables outside the file");
	close(fd);

	memcpy(img, self, len);
	bad_file(p, img, 3, &fd);   /* shorter than a header */
	expect_refused(p, "too short");
	close(fd);

	unlink(p);
	free(img);
}

static void test_dead_owner_removed(void **st)
{
	(void)st;
	size_t len;
	const struct rn_stats_hdr *self = rn_stats_self(&len);
	struct rn_stats_view v;
	char p[160], err[256];
	int fd;

	snprintf(p, sizeof(p), "%s/softrnic-999998.stats", dir);
	bad_file(p, self, len, &fd);
	close(fd);   /* its owner is gone: nobody holds the lock */
	assert_int_equal(rn_stats_open(p, &v, err, sizeof(err)), -ESRCH);
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_name_pid(void **st)
{
	(void)st;
	assert_int_equal(rn_stats_name_pid("softrnic-1234.stats"), 1234);
	assert_int_equal(rn_stats_name_pid("softrnic-.stats"), -1);
	assert_int_equal(rn_stats_name_pid("softrnic-12a4.stats"), -1);
	assert_int_equal(rn_stats_name_pid(".softrnic-12.tmp"), -1);
	assert_int_equal(rn_stats_name_pid("softrnic-0.stats"), -1);
	assert_int_equal(rn_stats_name_pid("softrnic-12345678901.stats"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_appears_with_device),
		cmocka_unit_test(test_counters_read_back_exact),
		cmocka_unit_test(test_cq_overruns),
		cmocka_unit_test(test_op_and_fpdu_mapping),
		cmocka_unit_test(test_bad_files_refused),
		cmocka_unit_test(test_dead_owner_removed),
		cmocka_unit_test(test_name_pid),
	};
	snprintf(dir, sizeof(dir), "/tmp/test_stats.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/softrnic-%d.stats", dir, (int)getpid());
	setenv("SOFTRNIC_STATS_DIR", dir, 1);
	setenv("SOFTRNIC_STATS_QPS", "2", 1);
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	/* the process's file would go at exit; the folder must go now, so both go here */
	unlink(path);
	if (rmdir(dir) != 0)
		rc = 1;   /* something was left behind */
	return rc;
}
