/* softrnic-devinfo: show the RDMA devices and their attributes, like ibv_devinfo.
 *
 *   softrnic-devinfo [-d DEVICE] [-i PORT] [-l] [-v]
 *
 * -l lists device names only; -v adds every device limit of ibv_query_device.
 * Exit status 0 when at least one device was shown, 1 otherwise, 2 on bad usage.
 */
#include <endian.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

struct devinfo_opts {
	const char *dev;
	int port;          /* 0 = all */
	bool list, verbose;
};

static const char *node_type_name(enum ibv_node_type t)
{
	switch (t) {
	case IBV_NODE_CA: return "InfiniBand channel adapter";
	case IBV_NODE_SWITCH: return "InfiniBand switch";
	case IBV_NODE_ROUTER: return "InfiniBand router";
	case IBV_NODE_RNIC: return "iWARP NIC (RNIC)";
	case IBV_NODE_USNIC: return "usNIC";
	case IBV_NODE_USNIC_UDP: return "usNIC UDP";
	default: return "unknown";
	}
}

static const char *transport_name(enum ibv_transport_type t)
{
	switch (t) {
	case IBV_TRANSPORT_IB: return "InfiniBand";
	case IBV_TRANSPORT_IWARP: return "iWARP";
	case IBV_TRANSPORT_USNIC: return "usNIC";
	case IBV_TRANSPORT_USNIC_UDP: return "usNIC UDP";
	default: return "unknown";
	}
}

static const char *port_state_name(enum ibv_port_state s)
{
	static const char *const names[] = { "PORT_NOP", "PORT_DOWN", "PORT_INIT", "PORT_ARMED",
	                                     "PORT_ACTIVE", "PORT_ACTIVE_DEFER" };
	return (unsigned)s < 6 ? names[s] : "unknown";
}

static const char *link_layer_name(uint8_t l)
{
	return l == IBV_LINK_LAYER_ETHERNET ? "Ethernet"
	       : l == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "unspecified";
}

static int mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0;
}

static void print_guid(const char *label, __be64 guid)
{
	uint64_t g = be64toh(guid);
	printf("\t%-24s%04x:%04x:%04x:%04x\n", label, (unsigned)(g >> 48) & 0xffff,
	       (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}

static void print_gid(struct ibv_context *ctx, uint8_t port)
{
	union ibv_gid gid;
	if (ibv_query_gid(ctx, port, 0, &gid)) {
		printf("\t\t\t%-24s(query failed)\n", "GID[0]:");
		return;
	}
	printf("\t\t\t%-24s", "GID[0]:");
	for (int i = 0; i < 16; i += 2)
		printf("%02x%02x%s", gid.raw[i], gid.raw[i + 1], i < 14 ? ":" : "\n");
}

static void print_port(struct ibv_context *ctx, uint8_t port, bool verbose)
{
	struct ibv_port_attr a;
	if (ibv_query_port(ctx, port, &a)) {
		printf("\t\tport:\t%u\n\t\t\t(query failed)\n", port);
		return;
	}
	printf("\t\tport:\t%u\n", port);
	printf("\t\t\t%-24s%s (%d)\n", "state:", port_state_name(a.state), a.state);
	printf("\t\t\t%-24s%d (%d)\n", "max_mtu:", mtu_bytes(a.max_mtu), a.max_mtu);
	printf("\t\t\t%-24s%d (%d)\n", "active_mtu:", mtu_bytes(a.active_mtu), a.active_mtu);
	printf("\t\t\t%-24s%u\n", "sm_lid:", a.sm_lid);
	printf("\t\t\t%-24s%u\n", "port_lid:", a.lid);
	printf("\t\t\t%-24s0x%02x\n", "port_lmc:", a.lmc);
	printf("\t\t\t%-24s%s\n", "link_layer:", link_layer_name(a.link_layer));
	if (verbose) {
		printf("\t\t\t%-24s0x%x\n", "max_msg_sz:", a.max_msg_sz);
		printf("\t\t\t%-24s0x%x\n", "port_cap_flags:", a.port_cap_flags);
		printf("\t\t\t%-24s%d\n", "gid_tbl_len:", a.gid_tbl_len);
		printf("\t\t\t%-24s%u\n", "pkey_tbl_len:", a.pkey_tbl_len);
		printf("\t\t\t%-24s%u\n", "active_width:", a.active_width);
		printf("\t\t\t%-24s%u\n", "active_speed:", a.active_speed);
		printf("\t\t\t%-24s%u\n", "phys_state:", a.phys_state);
	}
	print_gid(ctx, port);
}

#define LIMIT(field) printf("\t%-28s%" PRId64 "\n", #field ":", (int64_t)a->field)

static void print_limits(const struct ibv_device_attr *a)
{
	printf("\t%-28s0x%" PRIx64 "\n", "max_mr_size:", (uint64_t)a->max_mr_size);
	printf("\t%-28s0x%" PRIx64 "\n", "page_size_cap:", (uint64_t)a->page_size_cap);
	printf("\t%-28s0x%08x\n", "device_cap_flags:", a->device_cap_flags);
	LIMIT(max_qp); LIMIT(max_qp_wr); LIMIT(max_sge); LIMIT(max_sge_rd); LIMIT(max_cq);
	LIMIT(max_cqe); LIMIT(max_mr); LIMIT(max_pd); LIMIT(max_qp_rd_atom);
	LIMIT(max_ee_rd_atom); LIMIT(max_res_rd_atom); LIMIT(max_qp_init_rd_atom);
	LIMIT(max_ee_init_rd_atom); LIMIT(atomic_cap); LIMIT(max_ee); LIMIT(max_rdd);
	LIMIT(max_mw); LIMIT(max_raw_ipv6_qp); LIMIT(max_raw_ethy_qp); LIMIT(max_mcast_grp);
	LIMIT(max_mcast_qp_attach); LIMIT(max_total_mcast_qp_attach); LIMIT(max_ah);
	LIMIT(max_fmr); LIMIT(max_map_per_fmr); LIMIT(max_srq); LIMIT(max_srq_wr);
	LIMIT(max_srq_sge); LIMIT(max_pkeys); LIMIT(local_ca_ack_delay);
}

static int print_device(struct ibv_device *dev, const struct devinfo_opts *o)
{
	struct ibv_context *ctx = ibv_open_device(dev);
	if (!ctx)
		return fprintf(stderr, "cannot open %s\n", ibv_get_device_name(dev)), -1;
	struct ibv_device_attr a;
	if (ibv_query_device(ctx, &a)) {
		fprintf(stderr, "ibv_query_device(%s) failed\n", ibv_get_device_name(dev));
		ibv_close_device(ctx);
		return -1;
	}
	printf("hca_id:\t%s\n", ibv_get_device_name(dev));
	printf("\t%-24s%s\n", "transport:", transport_name(dev->transport_type));
	printf("\t%-24s%s\n", "node_type:", node_type_name(dev->node_type));
	printf("\t%-24s%s\n", "fw_ver:", a.fw_ver[0] ? a.fw_ver : "(none)");
	print_guid("node_guid:", a.node_guid);
	print_guid("sys_image_guid:", a.sys_image_guid);
	printf("\t%-24s0x%04x\n", "vendor_id:", a.vendor_id);
	printf("\t%-24s%u\n", "vendor_part_id:", a.vendor_part_id);
	printf("\t%-24s0x%X\n", "hw_ver:", a.hw_ver);
	printf("\t%-24s%u\n", "phys_port_cnt:", a.phys_port_cnt);
	if (o->verbose)
		print_limits(&a);
	for (uint8_t p = 1; p <= a.phys_port_cnt; p++)
		if (o->port == 0 || o->port == p)
			print_port(ctx, p, o->verbose);
	printf("\n");
	ibv_close_device(ctx);
	return 0;
}

static void parse(struct devinfo_opts *o, int argc, char **argv)
{
	int opt;
	while ((opt = getopt(argc, argv, "d:i:lvh")) != -1) {
		switch (opt) {
		case 'd': o->dev = optarg; break;
		case 'i': o->port = atoi(optarg); break;
		case 'l': o->list = true; break;
		case 'v': o->verbose = true; break;
		default:
			fprintf(stderr, "usage: softrnic-devinfo [-d DEVICE] [-i PORT] [-l] [-v]\n");
			exit(opt == 'h' ? 0 : 2);
		}
	}
	if (optind != argc || o->port < 0 || o->port > 255) {
		fprintf(stderr, "usage: softrnic-devinfo [-d DEVICE] [-i PORT] [-l] [-v]\n");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct devinfo_opts o = { 0 };
	parse(&o, argc, argv);
	int n = 0, shown = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		fprintf(stderr, "softrnic-devinfo: no RDMA devices found\n");
		if (list)
			ibv_free_device_list(list);
		return 1;
	}
	if (o.list)
		printf("%d HCA%s found:\n", n, n == 1 ? "" : "s");
	for (int i = 0; i < n; i++) {
		if (o.dev && strcmp(o.dev, ibv_get_device_name(list[i])) != 0)
			continue;
		if (o.list)
			printf("\t%s\n", ibv_get_device_name(list[i]));
		if (o.list || print_device(list[i], &o) == 0)
			shown++;
	}
	ibv_free_device_list(list);
	if (shown == 0)
		fprintf(stderr, "softrnic-devinfo: device %s not found\n", o.dev ? o.dev : "(any)");
	return shown ? 0 : 1;
}
