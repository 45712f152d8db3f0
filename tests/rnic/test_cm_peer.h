/* CM test helpers: run a CM to a settled state, FPDUs over a handed-off stream, raw frames. */
#ifndef TEST_CM_PEER_H
#define TEST_CM_PEER_H

#include <stdlib.h>

#include "mpa.h"
#include "rdmap.h"
#include "rn_cm.h"
#include "test_cm_util.h"

struct t_fpdu_sink {
	uint8_t buf[2048];
	size_t len;
	int count;
};

static inline int t_fpdu_cb(void *arg, const uint8_t *u, size_t len)
{
	struct t_fpdu_sink *s = arg;
	if (s->count == 0 && len <= sizeof(s->buf)) {
		memcpy(s->buf, u, len);
		s->len = len;
	}
	s->count++;
	return 0;
}

/* Frame one ULPDU at stream position pos and send it. */
static inline int t_send_fpdu(struct rn_conn *c, bool crc, bool markers, uint32_t pos,
			      const void *u, size_t len)
{
	struct mpa_tx tx;
	uint8_t out[4096];
	struct iovec iov = { (void *)u, len };
	mpa_tx_init(&tx, crc, markers);
	tx.pos = pos;
	ssize_t n = mpa_tx_encode(&tx, &iov, 1, out, sizeof(out));
	if (n < 0)
		return (int)n;
	return t_send_all(c, out, (size_t)n);
}

/* Receive one ULPDU into s, first from pre[0..pre_len) (octets the CM already read), then
 * from the stream. Returns 0, -EPROTO on a framing/CRC error, or a transport error. */
static inline int t_recv_fpdu(struct rn_conn *c, bool crc, bool markers, uint32_t pos,
			      const uint8_t *pre, size_t pre_len, struct t_fpdu_sink *s)
{
	struct mpa_rx_cfg cfg = { .crc = crc, .markers = markers, .pos = pos };
	struct mpa_rx rx;
	static uint8_t work[70000];
	uint8_t in[1024];
	long long end = t_now_ms() + T_WAIT_MS;

	mpa_rx_init(&rx, &cfg);
	memset(s, 0, sizeof(*s));
	if (pre_len && mpa_rx_feed(&rx, pre, pre_len, work, sizeof(work), t_fpdu_cb, s) < 0)
		return -EPROTO;
	while (s->count == 0 && t_now_ms() < end) {
		ssize_t n = rn_conn_recv(c, in, sizeof(in));
		if (n == -EAGAIN) {
			t_poll(c, POLLIN, 100);
			continue;
		}
		if (n <= 0)
			return n == 0 ? -ECONNRESET : (int)n;
		if (mpa_rx_feed(&rx, in, (size_t)n, work, sizeof(work), t_fpdu_cb, s) < 0)
			return -EPROTO;
	}
	return s->count ? 0 : -ETIMEDOUT;
}

/* Decode a Terminate ULPDU; returns its error (layer 0xf on failure). */
static inline struct iwarp_err t_term_of(const uint8_t *u, size_t len)
{
	struct rdmap_msg m;
	struct iwarp_err e = { 0xf, 0xf, 0xff };
	if (rdmap_msg_decode(u, len, &m, &e) != 0 || m.opcode != RDMAP_OP_TERMINATE ||
	    m.body_len == 0)
		return (struct iwarp_err){ 0xf, 0xf, 0xff };
	return m.u.term.err;
}

/* Read one MPA frame (Request or Reply) from a raw stream into buf; returns its length. */
static inline ssize_t t_recv_frame(struct rn_conn *c, uint8_t *buf, size_t cap,
				   struct mpa_frame *f)
{
	size_t have = 0;
	long long end = t_now_ms() + T_WAIT_MS;
	struct mpa_error e;
	while (t_now_ms() < end) {
		ssize_t p = mpa_frame_parse(buf, have, NULL, f, &e);
		if (p != 0)
			return p;
		/* read no further than the frame: header first, then its PD */
		size_t want = have < MPA_FRAME_HDR_LEN ? MPA_FRAME_HDR_LEN - have
			: MPA_FRAME_HDR_LEN + (((size_t)buf[18] << 8) | buf[19]) - have;
		if (have + want > cap)
			return -ENOBUFS;
		ssize_t n = rn_conn_recv(c, buf + have, want);
		if (n == -EAGAIN) {
			t_poll(c, POLLIN, 100);
			continue;
		}
		if (n <= 0)
			return n == 0 ? -ECONNRESET : n;
		have += (size_t)n;
	}
	return -ETIMEDOUT;
}

#endif
