/* The drop-in libibverbs.so.1 / librdmacm.so.1 seen from a program linked against them
 * (tests/dropin/providers.sh runs it): ibverbs-providers' libraries load against us and
 * register without being matched, the provider interface's kernel commands fail with ENODEV,
 * and the compat entry points added for Debian's ABI behave as documented (docs/dropin.md).
 * Usage: dropin_probe PROVIDER.so... ; exit 0 when every check holds, else 1 with the reason. */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rsocket.h>

#include "sv_compat10.h"
#include "sv_provider.h"
#include "sv_sysfs.h"

static int failures;

#define CHECK(cond, ...)                                                                     \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                 \
			fprintf(stderr, __VA_ARGS__);                                        \
			fputc('\n', stderr);                                                 \
			failures++;                                                          \
		}                                                                            \
	} while (0)

static void check_providers(int argc, char **argv)
{
	unsigned before = softrnic_provider_count();

	for (int i = 1; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL);

		CHECK(h != NULL, "dlopen %s: %s", argv[i], dlerror());
		printf("loaded %s\n", argv[i]);
	}
	CHECK(softrnic_provider_count() == before + (unsigned)(argc - 1),
	      "%u providers registered, expected %d more than %u", softrnic_provider_count(),
	      argc - 1, before);
}

static void check_device_list(void)
{
	int n = -1;
	struct ibv_device **l = ibv_get_device_list(&n);

	CHECK(l && n == 1 && l[0] && !strcmp(ibv_get_device_name(l[0]), "softrnic0"),
	      "device list is not softrnic0 alone (n=%d)", n);
	CHECK(l && l[1] == NULL, "device list not NULL-terminated");
	if (l) {
		struct ibv_context *c = verbs_open_device(l[0], NULL);
		enum ibv_gid_type_sysfs t = IBV_GID_TYPE_SYSFS_ROCE_V2;

		CHECK(c != NULL, "verbs_open_device(softrnic0) failed: %s", strerror(errno));
		if (c) {
			CHECK(ibv_query_gid_type(c, 1, 0, &t) == 0 &&
			      t == IBV_GID_TYPE_SYSFS_IB_ROCE_V1, "gid type");
			CHECK(ibv_query_gid_type(c, 1, 1, &t) == EINVAL, "gid 1 exists?");
			struct ibv_pd *pd = ibv_alloc_pd(c);
			CHECK(pd != NULL, "alloc_pd");
			errno = 0;
			CHECK(ibv_create_ah(pd, &(struct ibv_ah_attr){ .port_num = 1 }) == NULL &&
			      errno == EOPNOTSUPP, "ibv_create_ah: errno %d", errno);
			CHECK(ibv_import_pd(c, 1) == NULL && errno == EOPNOTSUPP, "import_pd");
			CHECK(ibv_attach_mcast(NULL, NULL, 0) == EINVAL, "attach_mcast(NULL)");
			ibv_dealloc_pd(pd);
			ibv_close_device(c);
		}
		ibv_free_device_list(l);
	}
}

static void check_kernel_commands(void)
{
	errno = 0;
	CHECK(ibv_cmd_alloc_pd(NULL, NULL, NULL, 0, NULL, 0) == ENODEV && errno == ENODEV,
	      "ibv_cmd_alloc_pd");
	CHECK(ibv_cmd_destroy_qp(NULL) == ENODEV, "ibv_cmd_destroy_qp");
	CHECK(execute_ioctl(NULL, NULL) == ENODEV, "execute_ioctl");
	CHECK(ibv_cmd_poll_cq(NULL, 1, NULL) == -1 && errno == ENODEV, "ibv_cmd_poll_cq");
	CHECK(_verbs_init_and_alloc_context(NULL, -1, 64, NULL, 0) == NULL && errno == ENODEV,
	      "_verbs_init_and_alloc_context");
	CHECK(__ioctl_final_num_attrs(3, NULL) == 3, "__ioctl_final_num_attrs");
}

static void check_helpers(void)
{
	char dir[] = "/tmp/dropin_probeXXXXXX", path[64], buf[16];
	FILE *f;

	CHECK(ibv_rate_to_mbps(IBV_RATE_100_GBPS) == 103125, "rate_to_mbps(100G)");
	CHECK(mbps_to_ibv_rate(2500) == IBV_RATE_2_5_GBPS, "mbps_to_ibv_rate(2500)");
	CHECK(ibv_rate_to_mult(IBV_RATE_10_GBPS) == 4, "rate_to_mult(10G)");
	CHECK(mult_to_ibv_rate(3) == IBV_RATE_MAX, "mult_to_ibv_rate(3)");
	CHECK(ibv_rate_to_mult(IBV_RATE_14_GBPS) == -1, "rate_to_mult(14G)");
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof(path), "%s/attr", dir);
	f = fopen(path, "w");
	CHECK(f != NULL, "fopen");
	if (f) {
		fputs("hello\n", f);
		fclose(f);
	}
	CHECK(ibv_read_sysfs_file(dir, "attr", buf, sizeof(buf)) == 5 && !strcmp(buf, "hello"),
	      "read_sysfs_file");
	CHECK(ibv_read_sysfs_file(dir, "none", buf, sizeof(buf)) == -1, "missing sysfs file");
	unlink(path);
	rmdir(dir);
}

static void check_rsocket(void)
{
	int p[2];

	errno = 0;
	CHECK(rsocket(AF_INET, SOCK_STREAM, 0) == -1 && errno == ENOSYS, "rsocket");
	CHECK(rsend(0, "x", 1, 0) == -1 && errno == EBADF, "rsend on a non-rsocket");
	CHECK(pipe(p) == 0, "pipe");
	CHECK(write(p[1], "x", 1) == 1, "write");
	struct pollfd pfd = { .fd = p[0], .events = POLLIN };
	CHECK(rpoll(&pfd, 1, 1000) == 1 && (pfd.revents & POLLIN), "rpoll on a pipe");
	close(p[0]);
	close(p[1]);
}

/* A program of libibverbs 1.0's days: the NAME@IBVERBS_1.0 functions (dlvsym) and the 1.0
 * structures; posts a receive through the 1.0 context's ops and sees it flushed. */
#define V10(name) dlvsym(RTLD_DEFAULT, #name, "IBVERBS_1.0")

static void check_abi_1_0(void)
{
	struct ibv_device_1_0 **(*get_list)(int *) = V10(ibv_get_device_list);
	void (*free_list)(struct ibv_device_1_0 **) = V10(ibv_free_device_list);
	const char *(*name)(struct ibv_device_1_0 *) = V10(ibv_get_device_name);
	struct ibv_context_1_0 *(*open_dev)(struct ibv_device_1_0 *) = V10(ibv_open_device);
	int (*close_dev)(struct ibv_context_1_0 *) = V10(ibv_close_device);
	int (*query_dev)(struct ibv_context_1_0 *, struct ibv_device_attr *) = V10(ibv_query_device);
	struct ibv_pd_1_0 *(*alloc_pd)(struct ibv_context_1_0 *) = V10(ibv_alloc_pd);
	int (*dealloc_pd)(struct ibv_pd_1_0 *) = V10(ibv_dealloc_pd);
	struct ibv_mr_1_0 *(*reg_mr)(struct ibv_pd_1_0 *, void *, size_t, int) = V10(ibv_reg_mr);
	int (*dereg_mr)(struct ibv_mr_1_0 *) = V10(ibv_dereg_mr);
	struct ibv_cq_1_0 *(*create_cq)(struct ibv_context_1_0 *, int, void *,
					struct ibv_comp_channel *, int) = V10(ibv_create_cq);
	int (*destroy_cq)(struct ibv_cq_1_0 *) = V10(ibv_destroy_cq);
	struct ibv_qp_1_0 *(*create_qp)(struct ibv_pd_1_0 *, struct ibv_qp_init_attr_1_0 *) =
		V10(ibv_create_qp);
	int (*modify_qp)(struct ibv_qp_1_0 *, struct ibv_qp_attr *, int) = V10(ibv_modify_qp);
	int (*destroy_qp)(struct ibv_qp_1_0 *) = V10(ibv_destroy_qp);
	int n = 0;

	CHECK(get_list && free_list && name && open_dev && close_dev && query_dev && alloc_pd &&
	      dealloc_pd && reg_mr && dereg_mr && create_cq && destroy_cq && create_qp &&
	      modify_qp && destroy_qp, "an IBVERBS_1.0 function is missing");
	if (failures)
		return;
	struct ibv_device_1_0 **l = get_list(&n);
	CHECK(l && n == 1 && !strcmp(name(l[0]), "softrnic0") && !l[1], "1.0 device list");
	if (!l)
		return;
	struct ibv_context_1_0 *c = open_dev(l[0]);
	struct ibv_device_attr da;
	CHECK(c && c->device == l[0] && c->ops.post_recv && c->ops.poll_cq, "1.0 open");
	if (!c) {
		free_list(l);
		return;
	}
	CHECK(query_dev(c, &da) == 0 && da.phys_port_cnt == 1, "1.0 query_device");
	static char buf[64];
	int tag;
	struct ibv_pd_1_0 *pd = alloc_pd(c);
	struct ibv_mr_1_0 *mr = pd ? reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_cq_1_0 *cq = create_cq(c, 8, &tag, NULL, 0);
	CHECK(pd && mr && cq && mr->lkey == mr->real_mr->lkey && cq->cq_context == &tag,
	      "1.0 pd / mr / cq");
	struct ibv_qp_init_attr_1_0 qa = {
		.qp_context = &tag, .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_1_0 *qp = (pd && cq) ? create_qp(pd, &qa) : NULL;
	CHECK(qp && qp->qp_context == &tag && qp->send_cq == cq && qp->state == IBV_QPS_RESET,
	      "1.0 create_qp");
	if (qp) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = sizeof(buf),
				       .lkey = mr->lkey };
		struct ibv_recv_wr_1_0 rw = { .wr_id = 42, .sg_list = &sge, .num_sge = 1 }, *bad;
		struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
		struct ibv_wc wc;
		int got = 0;

		CHECK(c->ops.post_recv(qp, &rw, &bad) == 0, "1.0 post_recv");
		CHECK(modify_qp(qp, &err, IBV_QP_STATE) == 0 && qp->state == IBV_QPS_ERR,
		      "1.0 modify_qp to ERR");
		for (int i = 0; i < 1000 && !got; i++) {
			got = c->ops.poll_cq(cq, 1, &wc);
			if (!got)
				usleep(1000);
		}
		CHECK(got == 1 && wc.wr_id == 42 && wc.status == IBV_WC_WR_FLUSH_ERR,
		      "1.0 flushed receive: got %d", got);
		CHECK(destroy_qp(qp) == 0, "1.0 destroy_qp");
	}
	CHECK(!cq || destroy_cq(cq) == 0, "1.0 destroy_cq");
	CHECK(!mr || dereg_mr(mr) == 0, "1.0 dereg_mr");
	CHECK(!pd || dealloc_pd(pd) == 0, "1.0 dealloc_pd");
	CHECK(close_dev(c) == 0, "1.0 close");
	free_list(l);
}

int main(int argc, char **argv)
{
	check_providers(argc, argv);
	check_device_list();
	check_kernel_commands();
	check_helpers();
	check_rsocket();
	check_abi_1_0();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("dropin_probe: all checks passed\n");
	return 0;
}
