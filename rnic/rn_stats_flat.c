/* Records as named counters, for softrnic-stat and the DPDK telemetry commands alike. The
 * names are the file's field names, ethtool -S style, so a script can grep one:
 * tx_send_octets, term_rx_ddp_etype1, tcp_retrans_segs ... */
#include <stdio.h>
#include <string.h>

#include "rn_stats.h"

static void put(struct rn_stats_flat *f, const char *name, uint64_t v)
{
	if (f->n >= RN_STATS_FLAT_MAX)
		return;
	snprintf(f->name[f->n], RN_STATS_NAME_LEN, "%s", name);
	f->val[f->n++] = v;
}

static void put_ctrs(struct rn_stats_flat *f, const struct rn_stats_ctrs *c)
{
	char n[RN_STATS_NAME_LEN];

	put(f, "tx_fpdus", c->tx_fpdus);
	put(f, "tx_octets", c->tx_octets);
	put(f, "rx_fpdus", c->rx_fpdus);
	put(f, "rx_octets", c->rx_octets);
	for (unsigned op = 0; op < RN_STATS_NOPS; op++) {
		const char *on = rn_stats_op_name((enum rn_stats_op)op);

		snprintf(n, sizeof(n), "tx_%s", on);
		put(f, n, c->tx_msgs[op]);
		snprintf(n, sizeof(n), "tx_%s_octets", on);
		put(f, n, c->tx_msg_octets[op]);
		snprintf(n, sizeof(n), "rx_%s", on);
		put(f, n, c->rx_msgs[op]);
		snprintf(n, sizeof(n), "rx_%s_octets", on);
		put(f, n, c->rx_msg_octets[op]);
	}
	put(f, "crc_errors", c->crc_errors);
	put(f, "marker_errors", c->marker_errors);
	for (unsigned l = 0; l < RN_STATS_TERM_LAYERS; l++)
		for (unsigned t = 0; t < RN_STATS_TERM_ETYPES; t++) {
			snprintf(n, sizeof(n), "term_tx_%s_etype%u", rn_stats_layer_name(l), t);
			put(f, n, c->term_tx[l][t]);
			snprintf(n, sizeof(n), "term_rx_%s_etype%u", rn_stats_layer_name(l), t);
			put(f, n, c->term_rx[l][t]);
		}
}

void rn_stats_flat_dev(const struct rn_stats_dev *d, struct rn_stats_flat *f)
{
	f->n = 0;
	put(f, "qps_open", d->qps_created - d->qps_destroyed);
	put(f, "qps_created", d->qps_created);
	put(f, "qps_destroyed", d->qps_destroyed);
	put(f, "qps_untracked", d->qps_untracked);
	put(f, "conn_setup_fails", d->conn_setup_fails);
	put(f, "cq_overruns", d->cq_overruns);
	put_ctrs(f, &d->c);
}

void rn_stats_flat_qp(const struct rn_stats_qp *q, struct rn_stats_flat *f)
{
	f->n = 0;
	put_ctrs(f, &q->c);
}

void rn_stats_flat_port(const struct rn_stats_port *p, struct rn_stats_flat *f)
{
	f->n = 0;
#define P(x) put(f, #x, p->x)
	P(rx_pkts); P(rx_bytes); P(tx_pkts); P(tx_bytes); P(tx_full_drops);
	P(eth_ierrors); P(eth_oerrors); P(eth_imissed);
	P(rx_pool_size); P(rx_pool_free); P(tx_pool_size); P(tx_pool_free);
	P(link_up); P(link_restarts);
	P(tcp_active_opens); P(tcp_passive_opens); P(tcp_attempt_fails); P(tcp_estab_resets);
	P(tcp_in_segs); P(tcp_out_segs); P(tcp_retrans_segs); P(tcp_fast_retrans);
	P(tcp_rto_expiries); P(tcp_in_errs); P(tcp_in_csum_errs); P(tcp_cur_conns);
#undef P
}
