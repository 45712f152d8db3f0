/* The wire of a NIC (docs/vipl.md "Two wires"): iWARP (rdma_cm, MPA/DDP/RDMAP through
 * softrnic's verbs) or VI/TCP (draft-dicecco-vitcp-01 on kernel TCP sockets, vitcp_*.c). The
 * shared code calls the wire only through these entry points. */
#include "softrnic_conf.h"
#include "vipl_int.h"

#include <stdio.h>
#include <string.h>

const struct vipl_wire vipl_wire_iwarp = {
	.name = "iwarp",
	.open = vipl_nic_listen_all,
	.listen = vipl_listen,
	.connect = vipl_iwarp_connect,
	.accept = vipl_iwarp_accept,
	.reject = vipl_iwarp_reject,
	.req_release = vipl_iwarp_req_release,
	.redirect = vipl_iwarp_redirect,
	.conn_end = vipl_iwarp_bury_after,
	.sq_pump = vipl_iwarp_sq_pump,
	.rq_pump = vipl_iwarp_rq_pump,
};

/* SOFTRNIC_VIPL_WIRE (key vipl_wire): "iwarp" (the default) or "vitcp"; a device named
 * vitcp<N> is VI/TCP whatever it says. */
const struct vipl_wire *vipl_wire_choose(const struct vipl_devname *dev)
{
	if (dev->vitcp)
		return &vipl_wire_vitcp;
	const char *w = softrnic_conf_get("SOFTRNIC_VIPL_WIRE", NULL, 0);
	if (w == NULL || *w == '\0' || strcmp(w, "iwarp") == 0)
		return &vipl_wire_iwarp;
	if (strcmp(w, "vitcp") == 0)
		return &vipl_wire_vitcp;
	fprintf(stderr, "softrnic VIPL: SOFTRNIC_VIPL_WIRE %s is neither iwarp nor vitcp\n", w);
	return NULL;
}

int vipl_start_connect(struct vipl_vi *vi)
{
	memcpy(vi->conn_host, vi->remote_host, VIPL_ADDR_LEN);
	vi->redirects = 0;
	return vi->o.nic->wire->connect(vi);
}

void vipl_sq_pump(struct vipl_vi *vi)
{
	vi->o.nic->wire->sq_pump(vi);
}

void vipl_rq_pump(struct vipl_vi *vi)
{
	vi->o.nic->wire->rq_pump(vi);
}

void vipl_conn_bury_after(struct vipl_vi *vi, uint64_t after_ms)
{
	vi->o.nic->wire->conn_end(vi, after_ms);
}

void vipl_conn_bury(struct vipl_vi *vi)
{
	vipl_conn_bury_after(vi, 0);
}
