/* The checks, in the order they run. Both sides must run the same table: the client names
 * each check by id when it begins, and the server refuses a mismatch. Clauses: T-numbers
 * are the RDMA Verbs checklist (shared/specs/seed-verbs.md §9), "verbs §" its sections. */
#include "ck.h"

const struct ic_check ic_checks[] = {
	{ "device_attrs", "T01; verbs §9.2.1.2",
	  "the device is an iWARP RNIC, its maxima are usable, port 1 is active",
	  ck_device_attrs, NULL, NULL },
	{ "pd_mr", "T02, T30; verbs §5.2.2, §7.4",
	  "a PD with an MR is in use (EBUSY); Remote Write without Local Write is refused",
	  ck_pd_mr, NULL, NULL },
	{ "cq_limits", "T03; verbs §5.3.1, §5.3.4",
	  "a CQ above max_cqe is refused, an empty CQ polls 0, a CQ in use is not destroyed",
	  ck_cq, NULL, NULL },
	{ "qp_create", "T04; verbs §9.2.5.1, §8.1.3.2",
	  "too many SGEs or WRs and a UD QP are refused; a new RC QP is Idle with its sizes",
	  ck_qp_create, NULL, NULL },
	{ "qp_states", "T05, T06, T07; verbs §6.2",
	  "no RTS without a connection; ERR from RESET, not back to RTS; a Receive posted in ERR "
	  "is flushed; RESET again", ck_qp_states, NULL, NULL },
	{ "send_sizes", "T40; RFC 5040 §5.3; verbs §8.1.2",
	  "Sends of 0, 1, 4095, 4096 octets and the largest message (at most 1 MiB), each into "
	  "its Receive, byte_len exact, nothing placed beyond", NULL, ck_send_sizes_srv,
	  ck_send_sizes_cli },
	{ "rdma_write", "T15; RFC 5040 §5.1, §5.5",
	  "a 64 KiB RDMA Write fills the offered region exactly", NULL, ck_write_srv,
	  ck_write_cli },
	{ "rdma_read", "T20; RFC 5040 §5.2",
	  "RDMA Reads of 1 MiB and 100 octets return the source, which is unchanged", NULL,
	  ck_read_srv, ck_read_cli },
	{ "zero_length", "T40; verbs §7.6.3, §8.1.3.2",
	  "zero-length Send, Read and Write with garbage STags complete Success; the Send "
	  "consumes a Receive with byte_len 0", NULL, ck_zero_srv, ck_zero_cli },
	{ "unsignaled", "T10; verbs §8.1.3.1",
	  "10 unsignaled Sends and a signaled one: one send completion, 11 Receives", NULL,
	  ck_unsignaled_srv, ck_unsignaled_cli },
	{ "write_out_of_bounds", "T15; RFC 5041 §7.2; RFC 5040 §7",
	  "a Write one octet past the region places nothing; responder QP_ACCESS_ERR, requester "
	  "QP_FATAL, both QPs in ERR, WRs flushed", NULL, ck_write_oob_srv, ck_write_oob_cli },
	{ "disconnect_flush", "T34; verbs §6.2.2.2, §6.2.5",
	  "after rdma_disconnect both sides see DISCONNECTED, Receives flushed, QPs out of RTS",
	  NULL, ck_disconnect_srv, ck_disconnect_cli },
	{ "send_with_invalidate", "T26; RFC 5040 §5.3; verbs §7.8",
	  "Send with Invalidate of a type 2 window reports the STag it invalidated, and a Write "
	  "to that STag then fails", NULL, ck_send_inv_srv, ck_send_inv_cli },
	{ "send_with_imm", "RFC 7306 (Immediate Data)",
	  "Send with Immediate Data: 200 octets and the value in one Receive", NULL,
	  ck_send_imm_srv, ck_send_imm_cli },
	{ "rdma_write_with_imm", "RFC 7306 (Immediate Data)",
	  "RDMA Write with Immediate Data: data in place at the RECV_RDMA_WITH_IMM completion, "
	  "byte_len 0", NULL, ck_write_imm_srv, ck_write_imm_cli },
};
const int ic_nchecks = (int)(sizeof(ic_checks) / sizeof(ic_checks[0]));
