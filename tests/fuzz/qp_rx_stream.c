/* The record list of qp_rx_stream.h to a byte stream. */
#include "qp_rx_stream.h"

#include <stdlib.h>
#include <string.h>

#include "ddp.h"
#include "ddp_wire.h"
#include "growbuf.h"
#include "mpa.h"
#include "rdmap.h"

#define OFF_STAG 2u          /* tagged STag; untagged: Send with Invalidate's STag */
#define OFF_TO 6u            /* tagged TO */
#define OFF_RREQ_SRC 34u     /* Read Request: Data Source STag, then its TO */

/* A symbolic STag at u[s] (and its TO at u[to] when to_len is 8) becomes the real one. */
static void name_stag(uint8_t *u, size_t len, size_t s, size_t to, const struct qp_rx_names *nm)
{
	if (s + 4 > len)
		return;
	uint32_t v = iw_get32(u + s);
	if (v == 0 || v >= QP_RX_NAMES || nm->stag[v] == 0)
		return;
	iw_put32(u + s, nm->stag[v]);
	if (to + 8 <= len)
		iw_put64(u + to, iw_get64(u + to) + nm->base[v]);
}

static void name_ulpdu(uint8_t *u, size_t len, const struct qp_rx_names *nm)
{
	if (len < 2)
		return;
	if (u[0] & 0x80) {                 /* DDP T flag: tagged */
		name_stag(u, len, OFF_STAG, OFF_TO, nm);
		return;
	}
	name_stag(u, len, OFF_STAG, len, nm);   /* Send with Invalidate: no TO */
	if ((u[1] & 0x0f) == RDMAP_OP_READ_REQ)
		name_stag(u, len, OFF_RREQ_SRC, OFF_RREQ_SRC + 4, nm);
}

/* Frame a ULPDU; one that cannot be framed (too long, markers out of step after raw
 * octets) goes out raw. */
static void add_fpdu(struct growbuf *s, struct mpa_tx *tx, uint8_t *u, size_t n, bool flip)
{
	struct iovec iov = { u, n };
	size_t cap = mpa_tx_fpdu_len(tx, n);
	uint8_t *dst = growbuf_room(s, cap);
	ssize_t k = mpa_tx_encode(tx, &iov, 1, dst, cap);

	if (k < 0) {
		dst = growbuf_room(s, n);
		memcpy(dst, u, n);
		tx->pos += (uint32_t)n;
		k = (ssize_t)n;
	}
	if (flip && k > 0)
		dst[k - 1] ^= 0xff;
	s->len += (size_t)k;
}

void qp_rx_stream_build(const uint8_t *in, size_t len, bool crc, bool markers,
			const struct qp_rx_names *names, struct mem_wire *w,
			struct qp_rx_barrier_op *ops, uint8_t **out, size_t *out_len)
{
	struct growbuf s = { 0 };
	struct mpa_tx tx;
	size_t i = 0;

	mpa_tx_init(&tx, crc, markers);
	w->nbarrier = 0;
	while (i < len) {
		uint8_t op = in[i++];
		unsigned kind = op & 3u;
		if (kind == 3) {
			if (w->nbarrier < MEM_WIRE_BARRIERS) {
				ops->op[w->nbarrier] = op;
				w->barrier[w->nbarrier++] = s.len;
			}
			continue;
		}
		size_t n = 0;
		if (i + 2 <= len)
			n = (size_t)in[i] << 8 | in[i + 1];
		i = i + 2 <= len ? i + 2 : len;
		if (n > len - i)
			n = len - i;
		size_t fill = kind == 2 ? 0 : (size_t)(op >> 2 & 0x1f) * QP_RX_FILL_UNIT;
		uint8_t *u = malloc(n + fill ? n + fill : 1);
		if (!u)
			abort();
		memcpy(u, in + i, n);
		for (size_t j = 0; j < fill; j++)
			u[n + j] = (uint8_t)(j * 13);
		i += n;
		n += fill;
		if (kind == 2) {
			memcpy(growbuf_room(&s, n), u, n);
			s.len += n;
			tx.pos += (uint32_t)n;
		} else {
			name_ulpdu(u, n, names);
			add_fpdu(&s, &tx, u, n, kind == 1);
		}
		free(u);
	}
	*out = s.p ? s.p : growbuf_room(&s, 0);
	*out_len = s.len;
}
