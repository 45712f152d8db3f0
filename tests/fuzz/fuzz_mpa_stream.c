/* Fuzz target: the streaming FPDU decoder, fed an untrusted TCP byte stream.
 *
 * Input layout: octet 0 = configuration (bit 0 CRC, bit 1 markers, bits 2-3 head length
 * choice, bits 4-7 chunk-size seed), octets 1..2 = maximum ULPDU, the rest = stream bytes.
 * The stream is fed in chunks whose sizes follow the seed, so split points move around
 * inside length fields, markers, pads and CRCs. Beyond "no crash, no out-of-bounds read",
 * it checks the decoder's promises: DATA pieces lie inside the caller's input, ULPDU offsets
 * are contiguous, END comes exactly after ulpdu_len octets, and an error is sticky. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpa.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct walk {
	size_t ulpdu_len;
	size_t next_off;
	bool in_fpdu;
	bool failed;
};

static void check_piece(struct walk *w, const struct mpa_rx_piece *p, const uint8_t *in,
			size_t len)
{
	switch (p->kind) {
	case MPA_RX_HEAD:
		CHECK(!w->in_fpdu && p->off == 0 && p->len <= p->ulpdu_len);
		w->in_fpdu = true;
		w->ulpdu_len = p->ulpdu_len;
		w->next_off = p->len;
		break;
	case MPA_RX_DATA:
		CHECK(w->in_fpdu && p->off == w->next_off && p->ulpdu_len == w->ulpdu_len);
		CHECK(p->data >= in && p->data + p->len <= in + len);
		w->next_off += p->len;
		CHECK(w->next_off <= w->ulpdu_len);
		break;
	case MPA_RX_END:
		CHECK(w->in_fpdu && w->next_off == w->ulpdu_len);
		w->in_fpdu = false;
		break;
	case MPA_RX_ERROR:
		CHECK(p->err.ecode != MPA_ECODE_NONE);
		w->failed = true;
		break;
	case MPA_RX_NEED_MORE:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	static const size_t heads[4] = { 0, 18, 46, MPA_RX_HEAD_MAX };
	struct mpa_rx_cfg cfg = {
		.crc = data[0] & 1,
		.markers = (data[0] >> 1) & 1,
		.pos = 0,
		.max_ulpdu = (size_t)data[1] << 8 | data[2],
		.head_len = heads[(data[0] >> 2) & 3],
	};
	unsigned seed = data[0] >> 4;
	struct mpa_rx rx;
	mpa_rx_init(&rx, &cfg);
	struct walk w = { 0 };
	const uint8_t *stream = data + 3;
	size_t left = size - 3;

	while (left > 0 && !w.failed) {
		size_t chunk = 1 + (seed * 7 + left) % 61;
		if (chunk > left)
			chunk = left;
		/* A heap copy of exactly this chunk: reads past it are caught by ASan. */
		uint8_t *in = malloc(chunk);
		CHECK(in != NULL);
		memcpy(in, stream, chunk);
		size_t done = 0;
		for (;;) {
			struct mpa_rx_piece p;
			size_t used = mpa_rx_next(&rx, in + done, chunk - done, &p);
			CHECK(used <= chunk - done);
			done += used;
			check_piece(&w, &p, in, chunk);
			if (p.kind == MPA_RX_NEED_MORE || p.kind == MPA_RX_ERROR)
				break;
		}
		free(in);
		if (!w.failed)
			CHECK(done == chunk);
		stream += chunk;
		left -= chunk;
	}
	if (w.failed) {
		struct mpa_rx_piece p;
		CHECK(mpa_rx_next(&rx, stream, 0, &p) == 0 && p.kind == MPA_RX_ERROR);
		CHECK(mpa_rx_error(&rx)->ecode != MPA_ECODE_NONE);
	}
	return 0;
}
