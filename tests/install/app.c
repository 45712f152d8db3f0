/* A program of the kind the README's link line builds: libibverbs, librdmacm, softrnic's
 * extensions and VIPL in one process, linked against the installed shared libraries only
 * (tests/install/install.sh). Opens softrnic0 through each API and exits 0 when all answer. */
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <softrnic/verbs_ext.h>
#include <vipl.h>

static int verbs_check(void)
{
	int n = 0, ok = 0;
	struct ibv_device **list = ibv_get_device_list(&n);

	for (int i = 0; list != NULL && i < n; i++) {
		struct ibv_context *ctx;
		struct ibv_device_attr attr;

		if (strcmp(ibv_get_device_name(list[i]), "softrnic0") != 0)
			continue;
		ctx = ibv_open_device(list[i]);
		ok = ctx != NULL && ibv_query_device(ctx, &attr) == 0 && attr.max_qp > 0;
		if (ctx != NULL)
			ibv_close_device(ctx);
	}
	if (list != NULL)
		ibv_free_device_list(list);
	return ok ? 0 : -1;
}

static int rdmacm_check(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id = NULL;
	int rc = ch != NULL && rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0 ? 0 : -1;

	if (id != NULL)
		rdma_destroy_id(id);
	if (ch != NULL)
		rdma_destroy_event_channel(ch);
	return rc;
}

static int vipl_check(void)
{
	VIP_NIC_HANDLE nic;
	VIP_NIC_ATTRIBUTES a;
	int rc;

	if (VipOpenNic((VIP_CHAR *)"softrnic0", &nic) != VIP_SUCCESS)
		return -1;
	rc = VipQueryNic(nic, &a) == VIP_SUCCESS && strcmp((char *)a.Name, "softrnic0") == 0;
	VipCloseNic(nic);
	return rc ? 0 : -1;
}

int main(void)
{
	if (verbs_check() != 0 || rdmacm_check() != 0 || vipl_check() != 0) {
		fprintf(stderr, "app: softrnic0 did not answer (verbs, rdmacm or VIPL)\n");
		return 1;
	}
	printf("app: softrnic0 through libibverbs, librdmacm and VIPL (transport %s)\n",
	       softrnic_transport_selected() == SOFTRNIC_TRANSPORT_DPDK ? "dpdk" : "kernel");
	return 0;
}
