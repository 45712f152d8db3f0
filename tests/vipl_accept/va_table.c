/* The acceptance scenarios of docs/acceptance-vipl.md; the title is the meson test name. */
#include <stddef.h>

#include "va.h"

const struct va_scenario va_scenarios[] = {
	{ "T01", "T01_nic_limits", t01_a, NULL, 30, false, NULL },
	{ "T02", "T02_ptag_refcount", t02_a, NULL, 30, false, NULL },
	{ "T03", "T03_register_edges", t03_a, t03_b, 60, false, NULL },
	{ "T04", "T04_vi_create_attrs", t04_a, NULL, 30, false, NULL },
	{ "T05", "T05_send_on_idle", t05_a, NULL, 30, false, NULL },
	{ "T06", "T06_prepost_recv_idle", t06_a, t06_b, 60, false, NULL },
	{ "T07", "T07_destroy_rules", t07_a, t07_b, 60, false, NULL },
	{ "T08", "T08_handshake", t08_a, t08_b, 60, false, NULL },
	{ "T09", "T09_reject", t09_a, t09_b, 60, false, NULL },
	{ "T10", "T10_accept_mismatch", t10_a, t10_b, 60, false, NULL },
	{ "T11", "T11_connect_timeouts", t11_a, t11_b, 60, false, NULL },
	{ "T12", "T12_sg_immediate", t12_a, t12_b, 60, false, NULL },
	{ "T13", "T13_local_desc_errors", t13_a, t13_b, 60, false, NULL },
	{ "T14", "T14_recv_too_small_rd", t14_a, t14_b, 60, false, NULL },
	{ "T15", "T15_recv_too_small_ur", t15_a, t15_b, 60, false, NULL },
	{ "T16", "T16_rr_empty_rq", t16_a, t16_b, 60, false, NULL },
	{ "T17", "T17_rr_completion", t17_a, t17_b, 60, false, NULL },
	{ "T18", "T18_rdma_write_imm", t18_a, t18_b, 60, false, NULL },
	{ "T19", "T19_rdma_write_prot_rd", t19_a, t19_b, 90, false, NULL },
	{ "T20", "T20_rdma_read", t20_a, t20_b, 60, false, NULL },
	{ "T21", "T21_order_fence", t21_a, t21_b, 60, false, NULL },
	{ "T22", "T22_cq_many_vis", t22_a, t22_b, 60, false, NULL },
	{ "T23", "T23_waits_timeouts", t23_a, t23_b, 60, false, NULL },
	{ "T24", "T24_notify", t24_a, t24_b, 60, false, NULL },
	{ "T25", "T25_disconnect_reconnect", t25_a, t25_b, 60, false, NULL },
	{ "T26", "T26_error_callback", t26_a, t26_b, 60, false, NULL },
	{ "T27", "T27_cq_resize_load", t27_a, t27_b, 240, false, NULL },
	{ "NEG", "vipl_negative", neg_a, neg_b, 90, false, NULL },
	/* the porting scenarios (t_port.c): both peers at one port, as on a cluster */
	{ "P01", "P01_port_mvia_clan", p01_a, p01_b, 60, true, NULL },
	{ "P02", "P02_port_dlopen", NULL, p02_b, 60, true, "va_dlpeer" },
	{ "P03", "P03_port_two_nics", p03_a, p03_b, 60, true, NULL },
	{ NULL, NULL, NULL, NULL, 0, false, NULL },
};
