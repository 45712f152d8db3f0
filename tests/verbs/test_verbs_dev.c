/* verbs: the device list, open / close, device / port / GID / P_Key queries, the string
 * helpers, and the header's inline helpers that go through verbs_context (extended ops we have
 * and those that must fail with EOPNOTSUPP). */
#include "tv_util.h"

#include <fcntl.h>

static void test_device_list(void **state)
{
	struct ibv_device **l;
	int n = -1;

	(void)state;
	l = ibv_get_device_list(&n);
	assert_non_null(l);
	assert_int_equal(n, 1);
	assert_non_null(l[0]);
	assert_null(l[1]);
	assert_string_equal(ibv_get_device_name(l[0]), "softrnic0");
	assert_int_equal(l[0]->node_type, IBV_NODE_RNIC);
	assert_int_equal(l[0]->transport_type, IBV_TRANSPORT_IWARP);
	assert_int_equal(ibv_get_device_index(l[0]), 0);
	assert_true(ibv_get_device_guid(l[0]) != 0);
	ibv_free_device_list(l);
	l = ibv_get_device_list(NULL);      /* num_devices is optional */
	assert_non_null(l);
	ibv_free_device_list(l);
}

static void test_open_bad(void **state)
{
	struct ibv_device fake;

	(void)state;
	memset(&fake, 0, sizeof(fake));
	errno = 0;
	assert_null(ibv_open_device(NULL));
	assert_int_equal(errno, ENODEV);
	assert_null(ibv_open_device(&fake));
	assert_null(ibv_get_device_name(&fake));
	assert_int_equal(ibv_get_device_index(&fake), -1);
	assert_int_equal(ibv_close_device(NULL), EINVAL);
}

static void test_open_twice(void **state)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *a = ibv_open_device(l[0]);
	struct ibv_context *b = ibv_open_device(l[0]);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_ptr_equal(a->device, l[0]);
	ibv_free_device_list(l);    /* open contexts stay valid */
	assert_int_equal(ibv_close_device(a), 0);
	assert_int_equal(ibv_close_device(b), 0);
}

static void test_context_fds(void **state)
{
	struct tv *t = *state;

	assert_true(t->ctx->cmd_fd >= 0);
	assert_true(t->ctx->async_fd >= 0);
	assert_true(fcntl(t->ctx->cmd_fd, F_GETFD) >= 0);
	assert_true(fcntl(t->ctx->async_fd, F_GETFD) >= 0);
	assert_int_equal(t->ctx->num_comp_vectors, 1);
	assert_false(tv_readable(t->ctx->async_fd, 0));  /* no event yet */
}

static void test_query_device(void **state)
{
	struct tv *t = *state;
	struct ibv_device_attr a;

	memset(&a, 0xa5, sizeof(a));
	assert_int_equal(ibv_query_device(t->ctx, &a), 0);
	assert_int_equal(a.phys_port_cnt, 1);
	assert_int_equal(a.atomic_cap, IBV_ATOMIC_NONE);
	assert_true(a.max_qp > 0 && a.max_qp_wr > 0 && a.max_cq > 0 && a.max_cqe > 0);
	assert_true(a.max_mr > 0 && a.max_pd > 0 && a.max_mw > 0 && a.max_srq > 0);
	assert_true(a.max_sge >= 2 && a.max_sge_rd >= 1);
	assert_true(a.max_qp_rd_atom > 0 && a.max_qp_init_rd_atom > 0);
	assert_true(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	assert_true(a.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS);
	assert_true(a.node_guid == ibv_get_device_guid(t->ctx->device));
	assert_int_equal(ibv_query_device(NULL, &a), EINVAL);
	assert_int_equal(ibv_query_device(t->ctx, NULL), EINVAL);
}

/* ibv_query_device_ex is an inline calling verbs_context.query_device_ex. */
static void test_query_device_ex(void **state)
{
	struct tv *t = *state;
	struct ibv_device_attr_ex x;
	struct ibv_device_attr a;
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };

	memset(&x, 0x5a, sizeof(x));
	assert_int_equal(ibv_query_device_ex(t->ctx, NULL, &x), 0);
	assert_int_equal(ibv_query_device(t->ctx, &a), 0);
	assert_memory_equal(&x.orig_attr, &a, sizeof(a));
	assert_int_equal(x.odp_caps.general_caps, 0);
	assert_int_equal(x.phys_port_cnt_ex, 1);
	assert_int_equal(ibv_query_device_ex(t->ctx, &in, &x), EINVAL);
}

/* ibv_query_port is a macro for ___ibv_query_port -> verbs_context.query_port. */
static void test_query_port(void **state)
{
	struct tv *t = *state;
	struct ibv_port_attr p;

	memset(&p, 0xff, sizeof(p));
	assert_int_equal(ibv_query_port(t->ctx, 1, &p), 0);
	assert_int_equal(p.state, IBV_PORT_ACTIVE);
	assert_int_equal(p.link_layer, IBV_LINK_LAYER_ETHERNET);
	assert_int_equal(p.max_mtu, IBV_MTU_4096);
	assert_int_equal(p.active_mtu, IBV_MTU_1024);
	assert_int_equal(p.gid_tbl_len, 1);
	assert_int_equal(p.pkey_tbl_len, 1);
	assert_int_equal(p.lid, 0);
	assert_int_equal(p.port_cap_flags2, 0);
	assert_int_equal(ibv_query_port(t->ctx, 0, &p), EINVAL);
	assert_int_equal(ibv_query_port(t->ctx, 2, &p), EINVAL);
}

static void test_query_gid_pkey(void **state)
{
	struct tv *t = *state;
	struct ibv_gid_entry e[2];
	union ibv_gid g;
	__be16 pk = 0;

	assert_int_equal(ibv_query_gid(t->ctx, 1, 0, &g), 0);
	/* siw style: the MAC in bytes 0-5, zeros after; GUID is its EUI-64 */
	for (int i = 6; i < 16; i++)
		assert_int_equal(g.raw[i], 0);
	{
		__be64 guid = ibv_get_device_guid(t->ctx->device);
		uint8_t b[8];

		memcpy(b, &guid, 8);
		assert_int_equal(b[0], g.raw[0] ^ 2);
		assert_int_equal(b[3], 0xff);
		assert_int_equal(b[4], 0xfe);
		assert_int_equal(b[7], g.raw[5]);
	}
	errno = 0;
	assert_int_equal(ibv_query_gid(t->ctx, 1, 1, &g), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ibv_query_gid(t->ctx, 2, 0, &g), -1);
	assert_int_equal(ibv_query_gid(t->ctx, 1, -1, &g), -1);
	assert_int_equal(ibv_query_gid_ex(t->ctx, 1, 0, &e[0], 0), 0);
	assert_memory_equal(&e[0].gid, &g, sizeof(g));
	assert_int_equal(e[0].port_num, 1);
	assert_int_equal(ibv_query_gid_ex(t->ctx, 1, 0, &e[0], 1), EINVAL);
	assert_int_equal(ibv_query_gid_table(t->ctx, e, 2, 0), 1);
	assert_int_equal(ibv_query_pkey(t->ctx, 1, 0, &pk), 0);
	assert_int_equal(pk, 0xffff);
	assert_int_equal(ibv_query_pkey(t->ctx, 1, 1, &pk), -1);
	assert_int_equal(ibv_get_pkey_index(t->ctx, 1, 0xffff), 0);
	assert_int_equal(ibv_get_pkey_index(t->ctx, 1, 0x1234), -1);
}

/* Extended verbs we do not implement fail cleanly through verbs_get_ctx_op. */
static void test_ext_unsupported(void **state)
{
	struct tv *t = *state;
	struct ibv_cq_init_attr_ex cqa = { .cqe = 4 };
	struct ibv_xrcd_init_attr xa = { 0 };
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_values_ex v = { 0 };
	struct ibv_modify_cq_attr mca = { 0 };
	struct ibv_qp_init_attr_ex qx = { .comp_mask = IBV_QP_INIT_ATTR_PD |
						       IBV_QP_INIT_ATTR_CREATE_FLAGS,
					  .pd = t->pd, .qp_type = IBV_QPT_RC };
	struct ibv_wq_init_attr wa = { 0 };

	errno = 0;
	assert_null(ibv_create_cq_ex(t->ctx, &cqa));
	assert_int_equal(errno, EOPNOTSUPP);
	assert_null(ibv_open_xrcd(t->ctx, &xa));
	assert_null(ibv_alloc_td(t->ctx, &ta));
	assert_null(ibv_create_qp_ex(t->ctx, &qx));
	assert_null(ibv_create_wq(t->ctx, &wa));
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(ibv_query_rt_values_ex(t->ctx, &v), EOPNOTSUPP);
	assert_int_equal(ibv_modify_cq(t->cq, &mca), EOPNOTSUPP);
	assert_null(ibv_alloc_dm(t->ctx, NULL));
	assert_null(ibv_alloc_null_mr(t->pd));
	assert_null(ibv_reg_dmabuf_mr(t->pd, 0, 4096, 0, -1, 0));
}

static void test_strings(void **state)
{
	(void)state;
	assert_string_equal(ibv_node_type_str(IBV_NODE_RNIC), "iWARP NIC");
	assert_string_equal(ibv_node_type_str(IBV_NODE_CA), "InfiniBand channel adapter");
	assert_string_equal(ibv_node_type_str((enum ibv_node_type)99), "unknown");
	assert_string_equal(ibv_node_type_str(IBV_NODE_UNKNOWN), "unknown");
	assert_string_equal(ibv_port_state_str(IBV_PORT_ACTIVE), "PORT_ACTIVE");
	assert_string_equal(ibv_port_state_str((enum ibv_port_state)42), "unknown");
	assert_string_equal(ibv_wc_status_str(IBV_WC_SUCCESS), "success");
	assert_string_equal(ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR), "Work Request Flushed Error");
	assert_string_equal(ibv_wc_status_str((enum ibv_wc_status)-1), "unknown");
	for (int s = IBV_WC_SUCCESS; s <= IBV_WC_TM_RNDV_INCOMPLETE; s++)
		assert_string_not_equal(ibv_wc_status_str((enum ibv_wc_status)s), "unknown");
	for (int e = IBV_EVENT_CQ_ERR; e <= IBV_EVENT_WQ_FATAL; e++)
		assert_string_not_equal(ibv_event_type_str((enum ibv_event_type)e), "unknown");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_SRQ_LIMIT_REACHED), "SRQ limit reached");
	assert_string_equal(ibv_event_type_str((enum ibv_event_type)1000), "unknown");
}

static void test_fork(void **state)
{
	(void)state;
	assert_int_equal(ibv_fork_init(), 0);
	assert_int_equal(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_list),
		cmocka_unit_test(test_open_bad),
		cmocka_unit_test(test_open_twice),
		cmocka_unit_test_setup_teardown(test_context_fds, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_query_device, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_query_device_ex, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_query_port, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_query_gid_pkey, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_ext_unsupported, tv_setup, tv_teardown),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_fork),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
