/* The checks, in the order they run. Both sides must run the same table: the client names
 * each check by id when it begins, and the server refuses a mismatch. Clauses: T-numbers
 * are the RDMA Verbs checklist (shared/specs/seed-verbs.md §9), "verbs §" its sections. */
#include "ck.h"

#define LOCAL(fn) .local = (fn)
#define HALVES(s, c) .srv = (s), .cli = (c)

const struct ic_check ic_checks[] = {
	{ "device_attrs", "T01; verbs §9.2.1.2",
	  "the device is an iWARP RNIC, its maxima are usable, port 1 is active",
	  LOCAL(ck_device_attrs) },
	{ "pd_mr", "T02, T30; verbs §5.2.2, §7.4",
	  "a PD with an MR is in use (EBUSY); Remote Write without Local Write is refused",
	  LOCAL(ck_pd_mr) },
	{ "cq_limits", "T03; verbs §5.3.1, §5.3.4",
	  "a CQ above max_cqe is refused, an empty CQ polls 0, a CQ in use is not destroyed",
	  LOCAL(ck_cq) },
	{ "cq_overrun", "T03; verbs §5.3.1",
	  "a CQ of 1 entry offered more flushes than it holds: another QP's CQ still gets "
	  "exactly its own completion, no async event but CQ_ERR on the full CQ", LOCAL(ck_cq_overrun) },
	{ "qp_create", "T04; verbs §9.2.5.1, §8.1.3.2",
	  "too many SGEs or WRs and a UD QP are refused; a new RC QP is Idle with its sizes",
	  LOCAL(ck_qp_create) },
	{ "qp_states", "T05, T06, T07; verbs §6.2",
	  "no RTS without a connection; ERR from Idle, not back to RTS; a Receive posted in ERR "
	  "is flushed; Idle again", LOCAL(ck_qp_states) },
	{ "send_sizes", "T40; RFC 5040 §5.3; verbs §8.1.2",
	  "Sends of 0, 1, 4095, 4096 octets and the largest message (at most 1 MiB), each into "
	  "its Receive, byte_len exact, nothing placed beyond",
	  HALVES(ck_send_sizes_srv, ck_send_sizes_cli) },
	{ "rdma_write", "T15; RFC 5040 §5.1, §5.5",
	  "a 64 KiB RDMA Write fills the offered region exactly",
	  HALVES(ck_write_srv, ck_write_cli) },
	{ "rdma_read", "T20; RFC 5040 §5.2",
	  "RDMA Reads of 1 MiB and 100 octets return the source, which is unchanged",
	  HALVES(ck_read_srv, ck_read_cli) },
	{ "ord_ird", "T18; verbs §6.5, §8.2.2 r18",
	  "with ORD and IRD 2, 24 Reads and a Send posted at once: the requester queues the Reads "
	  "past its ORD, all complete Success in post order, data exact",
	  HALVES(ck_ord_srv, ck_ord_cli), .rd = 2 },
	{ "read_fence", "T19; verbs §8.2.2 r2, r15, §8.2.2.2",
	  "a large Read, then a Send with Read Fence: the responder overwrites the source when the "
	  "Send arrives, the Read still returns the original; Read completes first",
	  HALVES(ck_fence_srv, ck_fence_cli) },
	{ "zero_length", "T40; verbs §7.6.3, §8.1.3.2",
	  "zero-length Send, Read and Write with garbage STags complete Success; the Send "
	  "consumes a Receive with byte_len 0", HALVES(ck_zero_srv, ck_zero_cli) },
	{ "unsignaled", "T10; verbs §8.1.3.1",
	  "10 unsignaled Sends and a signaled one: one send completion, 11 Receives",
	  HALVES(ck_unsignaled_srv, ck_unsignaled_cli) },
	{ "scatter_gather", "verbs §8.1.2; RFC 5041 §5.3",
	  "a 111-octet message gathered from 3 SGEs, written and sent: the Write places it whole, "
	  "the Receive scatters it over 3 SGEs, nothing between them",
	  HALVES(ck_sgl_srv, ck_sgl_cli) },
	{ "send_inline", "ibv_post_send(3) IBV_SEND_INLINE; verbs §8.2.2 r8",
	  "inline Sends of 1 and max_inline_data octets and an inline Write of max, each source "
	  "overwritten at once after post, arrive intact; max + 1 is refused at post",
	  HALVES(ck_send_inline_srv, ck_send_inline_cli), .inl = 64 },
	{ "srq_limit", "T39; verbs §6.3",
	  "5 Sends into an S-RQ of 8 Receives armed at 4: each in one Receive, one limit event",
	  .prep = ck_srq_prep, HALVES(ck_srq_srv, ck_srq_cli) },
	{ "srq_shared", "T39; verbs §6.3.5",
	  "one S-RQ under two QPs (two connections): Sends on both take its Receives, each "
	  "completion on its QP's CQ naming that QP, byte_len exact, in that QP's order",
	  .prep = ck_srq_prep, HALVES(ck_srq_shared_srv, ck_srq_shared_cli) },
	{ "solicited_event", "T38; verbs §8.2.5",
	  "a CQ armed for solicited completions sleeps through a plain Send, wakes for an SE one",
	  HALVES(ck_solicited_srv, ck_solicited_cli) },
	{ "write_out_of_bounds", "T15; RFC 5041 §7.2; RFC 5040 §7",
	  "a Write one octet past the region places nothing; responder QP_ACCESS_ERR, requester "
	  "QP_FATAL, both QPs in ERR, WRs flushed", HALVES(ck_prot_bounds_srv, ck_prot_cli) },
	{ "write_invalid_stag", "T25; RFC 5041 §7.2; RFC 5040 §7",
	  "a Write to an STag no region has: as write_out_of_bounds",
	  HALVES(ck_prot_stag_srv, ck_prot_cli) },
	{ "write_wrong_key", "T25; RFC 5041 §7.2; RFC 5040 §7",
	  "a Write with a region's index and another key: as write_out_of_bounds",
	  HALVES(ck_prot_key_srv, ck_prot_cli) },
	{ "write_other_pd", "T14; RFC 5041 §7.2; RFC 5040 §7",
	  "a Write to a region of another PD than the QP's: as write_out_of_bounds",
	  HALVES(ck_prot_pd_srv, ck_prot_cli) },
	{ "write_no_rights", "T16; RFC 5041 §7.2; RFC 5040 §7",
	  "a Write to a region without Remote Write: as write_out_of_bounds",
	  HALVES(ck_prot_rights_srv, ck_prot_cli) },
	{ "recv_too_small", "T12; RFC 5041 §7.2; verbs §8.1.2.1",
	  "a 100-octet Send into a 64-octet Receive: IBV_WC_LOC_LEN_ERR, nothing beyond the 64, "
	  "responder in ERR, requester QP_FATAL", HALVES(ck_recv_small_srv, ck_recv_small_cli) },
	{ "read_out_of_bounds", "T15; RFC 5040 §4.8, §5.2; verbs §8.3.3",
	  "a Read one octet past the source reads nothing: responder QP_ACCESS_ERR, requester's "
	  "Read in error, QP_FATAL, both QPs in ERR", HALVES(ck_read_bounds_srv, ck_read_prot_cli) },
	{ "read_no_rights", "T16; RFC 5040 §4.8, §5.2; verbs §7.4.2",
	  "a Read of a source without Remote Read: as read_out_of_bounds",
	  HALVES(ck_read_rights_srv, ck_read_prot_cli) },
	{ "send_no_receive", "T13; verbs §6.3.5, §8.1.2.1",
	  "a Send to a QP with no Receive: the responder terminates (QP_REQ_ERR, ERR; requester "
	  "QP_FATAL) or holds it for the next Receive, with no error",
	  HALVES(ck_send_no_recv_srv, ck_send_no_recv_cli) },
	{ "disconnect_flush", "T34; verbs §6.2.2.2, §6.2.5",
	  "after rdma_disconnect both sides see DISCONNECTED, Receives flushed, QPs out of RTS",
	  HALVES(ck_disconnect_srv, ck_disconnect_cli) },
	{ "send_with_invalidate", "T26; RFC 5040 §5.3; verbs §7.8",
	  "Send with Invalidate of a type 2 window reports the STag it invalidated, and a Write "
	  "to that STag then fails", HALVES(ck_send_inv_srv, ck_send_inv_cli) },
	{ "send_with_imm", "RFC 7306 (Immediate Data)",
	  "Send with Immediate Data: 200 octets and the value in one Receive",
	  HALVES(ck_send_imm_srv, ck_send_imm_cli) },
	{ "rdma_write_with_imm", "RFC 7306 (Immediate Data)",
	  "RDMA Write with Immediate Data: data in place at the RECV_RDMA_WITH_IMM completion, "
	  "byte_len 0", HALVES(ck_write_imm_srv, ck_write_imm_cli) },
};
const int ic_nchecks = (int)(sizeof(ic_checks) / sizeof(ic_checks[0]));
