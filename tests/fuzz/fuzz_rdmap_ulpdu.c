/* Fuzz target: DDP/RDMAP decoding of one untrusted ULPDU, the receive-side placement
 * decision, and the Terminate a receiver would send back for it.
 *
 * Input: octet 0 picks the extension set and how many receive buffers are posted; the rest
 * is the ULPDU. Checks beyond memory safety: decoded payload stays inside the ULPDU, a
 * Terminate built for any error re-parses to the same fields, and a placement the DDP layer
 * accepts is consistent with the header. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rdmap.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_terminate(struct iwarp_err e, const uint8_t *ulpdu, size_t len)
{
	struct rdmap_term t, back;
	rdmap_term_build(e, ulpdu, len, &t);
	uint8_t wire[DDP_UNTAGGED_HDR_LEN + RDMAP_TERM_MAX_LEN];
	size_t n = rdmap_term_ulpdu_encode(&t, 1, wire, sizeof(wire));
	CHECK(n > DDP_UNTAGGED_HDR_LEN);
	struct rdmap_msg m;
	struct iwarp_err derr;
	CHECK(rdmap_msg_decode(wire, n, &m, &derr) == 0);
	CHECK(m.opcode == RDMAP_OP_TERMINATE);
	CHECK(rdmap_msg_validate(&m, RDMAP_NQUEUES, false, &derr) == 0);
	CHECK(rdmap_term_decode(wire + DDP_UNTAGGED_HDR_LEN, n - DDP_UNTAGGED_HDR_LEN, &back) ==
	      rdmap_term_len(&t));
	CHECK(back.err.layer == t.err.layer && back.err.etype == t.err.etype &&
	      back.err.ecode == t.err.ecode && back.d == t.d && back.r == t.r && back.m == t.m);
	CHECK(back.ddp_hdr_len == t.ddp_hdr_len && back.rdma_hdr_len == t.rdma_hdr_len);
	CHECK(memcmp(back.ddp_hdr, t.ddp_hdr, t.ddp_hdr_len) == 0);
	CHECK(memcmp(back.rdma_hdr, t.rdma_hdr, t.rdma_hdr_len) == 0);
}

static void check_placement(const struct rdmap_msg *m, unsigned posted)
{
	struct ddp_rx_state rx;
	ddp_rx_init(&rx, RDMAP_NQUEUES);
	for (uint32_t qn = 0; qn < RDMAP_NQUEUES; qn++)
		CHECK(ddp_rx_post(&rx, qn, posted) == 0);
	struct ddp_place pl;
	struct iwarp_err err;
	uint32_t plen = (uint32_t)(m->payload_len + (m->hdr_len - ddp_hdr_len(m->ddp.tagged)));
	if (ddp_place_decide(&rx, &m->ddp, plen, &pl, &err) != 0) {
		CHECK(err.layer == IWARP_LAYER_DDP);
		return;
	}
	CHECK(pl.tagged == m->ddp.tagged && pl.last == m->ddp.last && pl.len == plen);
	ddp_rx_deliver(&rx, &pl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	bool ext = data[0] & 1;
	unsigned posted = (data[0] >> 1) & 3;
	size_t len = size - 1;
	uint8_t *ulpdu = malloc(len ? len : 1);
	CHECK(ulpdu != NULL);
	memcpy(ulpdu, data + 1, len);

	struct rdmap_msg m;
	struct iwarp_err err;
	if (rdmap_msg_decode(ulpdu, len, &m, &err) != 0) {
		check_terminate(err, ulpdu, len);
	} else {
		CHECK(m.hdr_len <= len && m.payload == ulpdu + m.hdr_len);
		CHECK(m.payload_len == len - m.hdr_len);
		if (rdmap_msg_validate(&m, ext ? RDMAP_NQUEUES_EXT : RDMAP_NQUEUES, ext, &err) != 0)
			check_terminate(err, ulpdu, len);
		else
			check_placement(&m, posted);
	}
	free(ulpdu);
	return 0;
}
