/* softrnic's RNIC: the device as a library in the consumer's process. This is its public
 * API, the one header the layers above (verbs/, vipl/, apps) include; the headers it pulls in
 * are sections of it, grouped by the file that implements them, and are not included alone.
 *
 *   rn_status.h    status codes of the RDMA Verbs and their names          (rn_status.c)
 *   rn_wc.h        work completions: opcodes, status, the completion record
 *   rn_event.h     asynchronous events and their queue                     (rn_event.c)
 *   rn_mem.h       PDs, the STag table: MRs, MWs, fast-register, checks    (rn_mem*.c)
 *   rn_cq.h        completion queues and their notification               (rn_cq.c)
 *   rn_srq.h       shared receive queues                                   (rn_srq.c)
 *   rn_qp_state.h  the QP state machine of the RDMA Verbs                  (rn_qp_state.c)
 *   rn_qp.h        QPs: work requests, transmit and receive on the wire    (rn_qp*.c, rn_wr.c)
 *   rn_cm.h        MPA connection setup over a transport                   (rn_cm*.c)
 *   rn_progress.h  the progress engine that drives connected QPs           (rn_progress.c)
 *   rn_device.h    open / query / close, limits, the device's QPs         (rn_device*.c)
 *   rn_transport.h the byte-stream transport under it (also included alone by a transport:
 *                  kernel sockets in rn_sock.c, softrnic's TCP engine in dpdk/)
 *   rn_stats.h     the statistics file softrnic-stat reads; its layout is
 *                  rn_stats_shm.h                                          (rn_stats*.c)
 */
#ifndef RNIC_H
#define RNIC_H

#include "rn_status.h"
#include "rn_wc.h"
#include "rn_event.h"
#include "rn_mem.h"
#include "rn_cq.h"
#include "rn_srq.h"
#include "rn_qp_state.h"
#include "rn_qp.h"
#include "rn_cm.h"
#include "rn_progress.h"
#include "rn_device.h"
#include "rn_transport.h"
#include "rn_stats.h"

#endif
