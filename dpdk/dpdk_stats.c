/* The port's figures in the process's statistics file (rn_stats.h, docs/stats.md): a port
 * record taken at open, written by the thread that runs the port's pass every
 * RN_STATS_PORT_PERIOD_MS, given back at close. Readers in other processes (softrnic-stat)
 * and the telemetry commands (dpdk_telemetry.c) read the record, never the port: reading
 * takes nothing from the data path. */
#include "dpdk_port_int.h"
#include "rnic.h"
#include "tcp.h"

void dpdk_stats_open(struct dpdk_port *p)
{
	p->st_rec = rn_stats_port_take(p->pid, p->name);
	p->st_pub_ns = 0;
	dpdk_telemetry_register();
}

void dpdk_stats_close(struct dpdk_port *p)
{
	rn_stats_port_put(p->st_rec);
	p->st_rec = NULL;
}

/* Single writer: each word stored whole, so a reader never sees half of one. */
#define PUB(field, v) __atomic_store_n(&r->field, (uint64_t)(v), __ATOMIC_RELAXED)

void dpdk_stats_publish(struct dpdk_port *p, uint64_t now)
{
	struct rn_stats_port *r = p->st_rec;
	struct dpdk_port_stats st;
	struct tcp_stack_stats ts;

	if (r == NULL || now < p->st_pub_ns)
		return;
	p->st_pub_ns = now + (uint64_t)RN_STATS_PORT_PERIOD_MS * 1000000u;
	dpdk_port_get_stats(p, &st);
	tcp_stack_get_stats(p->stack, &ts);
	PUB(rx_pkts, st.rx_pkts);
	PUB(rx_bytes, st.rx_bytes);
	PUB(tx_pkts, st.tx_pkts);
	PUB(tx_bytes, st.tx_bytes);
	PUB(tx_full_drops, st.tx_full_drops);
	PUB(eth_ierrors, st.eth_ierrors);
	PUB(eth_oerrors, st.eth_oerrors);
	PUB(eth_imissed, st.eth_imissed);
	PUB(rx_pool_size, st.rx_pool_size);
	PUB(rx_pool_free, st.rx_pool_free);
	PUB(tx_pool_size, st.tx_pool_size);
	PUB(tx_pool_free, st.tx_pool_free);
	PUB(link_up, st.link_up);
	PUB(link_restarts, st.link_restarts);
	PUB(tcp_active_opens, ts.active_opens);
	PUB(tcp_passive_opens, ts.passive_opens);
	PUB(tcp_attempt_fails, ts.attempt_fails);
	PUB(tcp_estab_resets, ts.estab_resets);
	PUB(tcp_in_segs, ts.in_segs);
	PUB(tcp_out_segs, ts.out_segs);
	PUB(tcp_retrans_segs, ts.retrans_segs);
	PUB(tcp_fast_retrans, ts.fast_retrans);
	PUB(tcp_rto_expiries, ts.rto_expiries);
	PUB(tcp_in_errs, ts.in_errs);
	PUB(tcp_in_csum_errs, ts.in_csum_errs);
	PUB(tcp_cur_conns, ts.cur_conns);
	PUB(updated_ns, now);
}
