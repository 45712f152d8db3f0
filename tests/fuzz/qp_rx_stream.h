/* Turns a qp_rx fuzz input's record list into the byte stream a peer sends, so the fuzzer
 * spends its time on DDP / RDMAP contents instead of guessing CRCs, markers and STags.
 *
 * Record (one after another until the input ends):
 *   op (1 octet), low 2 bits the kind:
 *     0 FPDU: 2 octets length n (big-endian) + n ULPDU octets, framed as a correct peer
 *       would (header, pad, markers, CRC as configured); bits 2-6 of op times
 *       QP_RX_FILL_UNIT filler octets are appended to the ULPDU, so that payloads larger
 *       than a fuzz input (the receive path's direct placement) cost the fuzzer one octet
 *     1 the same with the FPDU's last octet flipped (a bad CRC when CRC is on)
 *     2 raw: 2 octets length n + n octets appended as they are (framing errors)
 *     3 barrier: the stream pauses here; the harness acts (bits 2.. of op say how)
 *   A length past the input's end takes what is left.
 * Symbolic STags: in a framed ULPDU, an STag field (tagged header; Send with Invalidate's
 * STag; a Read Request's Data Source) whose value is 1..QP_RX_NAMES-1 is replaced by that
 * name's real STag, which rn_mem chose at random, and its TO (an offset then) gets the
 * name's base address added. */
#ifndef QP_RX_STREAM_H
#define QP_RX_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "mem_conn.h"

#define QP_RX_NAMES 8u
#define QP_RX_FILL_UNIT 512u

struct qp_rx_names {
	uint32_t stag[QP_RX_NAMES];  /* 0: the name is not in use */
	uint64_t base[QP_RX_NAMES];
};

struct qp_rx_barrier_op {
	uint8_t op[MEM_WIRE_BARRIERS];  /* op octet of each barrier in w->barrier */
};

/* Builds the stream of in[0..len) into *out (malloc'ed, *out_len octets; free it), the
 * barriers into w and ops. crc / markers: as negotiated. */
void qp_rx_stream_build(const uint8_t *in, size_t len, bool crc, bool markers,
			const struct qp_rx_names *names, struct mem_wire *w,
			struct qp_rx_barrier_op *ops, uint8_t **out, size_t *out_len);

#endif
