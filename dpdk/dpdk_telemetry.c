/* DPDK telemetry commands under /softrnic/ (dpdk-telemetry.py, docs/stats.md): the records of
 * this process's statistics file, the same names softrnic-stat prints. The callbacks run on
 * DPDK's telemetry thread and read the file's mapping (rn_stats_self), never the port or a
 * QP, so a client polling them costs the data path nothing. The socket exists only when EAL
 * runs with --telemetry (D143). */
#include <pthread.h>
#include <stdlib.h>

#include <rte_telemetry.h>

#include "dpdk_port_int.h"
#include "rnic.h"

enum tel_kind { TEL_DEV, TEL_PORT, TEL_QP };

static int self_view(struct rn_stats_view *v)
{
	size_t len;
	const struct rn_stats_hdr *h = rn_stats_self(&len);
	char err[256];

	return h ? rn_stats_view_mem(h, len, v, err, sizeof(err)) : -ENOENT;
}

/* Record i of kind k flattened, with its key (device index, port id, QP number). */
static bool tel_get(const struct rn_stats_view *v, enum tel_kind k, uint32_t i, uint32_t *key,
		    char *label, size_t ll, struct rn_stats_flat *f)
{
	struct rn_stats_dev d;
	struct rn_stats_port pt;
	struct rn_stats_qp q;

	switch (k) {
	case TEL_DEV:
		if (!rn_stats_get_dev(v, i, &d))
			return false;
		*key = i;
		snprintf(label, ll, "%.15s", d.name);
		rn_stats_flat_dev(&d, f);
		return true;
	case TEL_PORT:
		if (!rn_stats_get_port(v, i, &pt))
			return false;
		*key = pt.port_id;
		snprintf(label, ll, "%.31s", pt.name);
		rn_stats_flat_port(&pt, f);
		return true;
	default:
		if (!rn_stats_get_qp(v, i, &q))
			return false;
		*key = q.qp_num;
		snprintf(label, ll, "qp %u", q.qp_num);
		rn_stats_flat_qp(&q, f);
		return true;
	}
}

static uint32_t tel_count(const struct rn_stats_view *v, enum tel_kind k)
{
	return k == TEL_DEV ? v->hdr->ndev : k == TEL_PORT ? v->hdr->nport : v->hdr->nqp;
}

static enum tel_kind kind_of(const char *cmd)
{
	if (strncmp(cmd, "/softrnic/port", 14) == 0)
		return TEL_PORT;
	if (strncmp(cmd, "/softrnic/qp", 12) == 0)
		return TEL_QP;
	return TEL_DEV;
}

/* /softrnic/devices, /softrnic/ports, /softrnic/qps: the keys of the records in use. */
static int tel_list(const char *cmd, const char *params, struct rte_tel_data *d)
{
	enum tel_kind k = kind_of(cmd);
	struct rn_stats_view v;
	struct rn_stats_flat *f;
	char label[40];
	uint32_t key;

	(void)params;
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	if (self_view(&v) != 0)
		return 0;   /* no file: an empty list */
	f = malloc(sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	for (uint32_t i = 0, n = 0; i < tel_count(&v, k) && n < RTE_TEL_MAX_ARRAY_ENTRIES; i++)
		if (tel_get(&v, k, i, &key, label, sizeof(label), f)) {
			rte_tel_data_add_array_int(d, (int)key);
			n++;
		}
	free(f);
	return 0;
}

/* /softrnic/device,N /softrnic/port,N /softrnic/qp,N: one record's counters; -EINVAL for a
 * missing or bad key, -ENOENT when no record has it. */
static int tel_one(const char *cmd, const char *params, struct rte_tel_data *d)
{
	enum tel_kind k = kind_of(cmd);
	struct rn_stats_view v;
	struct rn_stats_flat *f;
	char label[40], *end;
	uint32_t key;
	unsigned long want;
	int rc = -ENOENT;

	if (params == NULL || *params < '0' || *params > '9')
		return -EINVAL;
	want = strtoul(params, &end, 10);
	if (*end != '\0' || want > UINT32_MAX)
		return -EINVAL;
	if (self_view(&v) != 0)
		return -ENOENT;
	f = malloc(sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < tel_count(&v, k) && rc != 0; i++) {
		if (!tel_get(&v, k, i, &key, label, sizeof(label), f) || key != want)
			continue;
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_string(d, "name", label);
		for (unsigned j = 0; j < f->n; j++)
			rte_tel_data_add_dict_u64(d, f->name[j], f->val[j]);
		rc = 0;
	}
	free(f);
	return rc;
}

static void tel_register(void)
{
	rte_telemetry_register_cmd("/softrnic/devices", tel_list,
				   "softrnic devices of this process (record indices). No parameters");
	rte_telemetry_register_cmd("/softrnic/device", tel_one,
				   "A softrnic device's counters. Parameter: record index");
	rte_telemetry_register_cmd("/softrnic/ports", tel_list,
				   "softrnic DPDK ports of this process (port ids). No parameters");
	rte_telemetry_register_cmd("/softrnic/port", tel_one,
				   "A softrnic port's figures: ethdev, pools, TCP engine. Parameter: port id");
	rte_telemetry_register_cmd("/softrnic/qps", tel_list,
				   "softrnic QPs in the statistics table (QP numbers). No parameters");
	rte_telemetry_register_cmd("/softrnic/qp", tel_one,
				   "A softrnic QP's counters. Parameter: QP number");
}

void dpdk_telemetry_register(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, tel_register);
}
