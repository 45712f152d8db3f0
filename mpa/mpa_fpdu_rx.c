/* Streaming MPA FPDU decoder (RFC 5044 §4.1 FPDU format, MPA markers, CRC, and the
 * receiver's FPDU identification rules).
 *
 * The input is the in-order TCP byte stream cut at arbitrary points. mpa_rx_next() walks it
 * with an explicit state machine (enum mpa_rx_state), one field at a time, and returns one
 * piece per call so that the caller can place payload straight from its own receive buffer.
 * Markers are recognised purely by stream position (every 512 octets from the marker
 * origin), verified against the FPDU being decoded and stripped; they can split any field
 * when the sender is misaligned, so every field is gathered octet-wise when necessary.
 *
 * Hot path: each piece is CRCed in one call over its whole run (the payload of a DATA
 * piece is one call). mpa_rx_feed() places payload with the fused copy+CRC, so decoding into
 * the caller's buffer reads each payload octet once. ULPDU_Length and the head are CRCed
 * separately: joining them into one run costs more than it saves on small FPDUs.
 */
#include "mpa_fpdu.h"

#include <errno.h>
#include <string.h>

void mpa_rx_init(struct mpa_rx *rx, const struct mpa_rx_cfg *cfg)
{
	memset(rx, 0, sizeof(*rx));
	rx->cfg = *cfg;
	if (rx->cfg.max_ulpdu == 0 || rx->cfg.max_ulpdu > MPA_MAX_ULPDU)
		rx->cfg.max_ulpdu = MPA_MAX_ULPDU;
	if (rx->cfg.head_len == 0)
		rx->cfg.head_len = MPA_RX_HEAD_DEFAULT;
	if (rx->cfg.head_len > MPA_RX_HEAD_MAX)
		rx->cfg.head_len = MPA_RX_HEAD_MAX;
	rx->pos = cfg->pos;
	rx->state = MPA_RXS_LEN;
	rx->crc = MPA_CRC32C_INIT;
	rx->err.ecode = MPA_ECODE_NONE;
	rx->err.reason = NULL;
}

const struct mpa_error *mpa_rx_error(const struct mpa_rx *rx)
{
	return &rx->err;
}

static void fail(struct mpa_rx *rx, enum mpa_ecode ecode, const char *reason)
{
	rx->state = MPA_RXS_FAILED;
	rx->err.ecode = ecode;
	rx->err.reason = reason;
}

/* Feeds octets of the FPDU into the CRC. Everything from the FPDU's first octet (its
 * leading marker, if any) up to the CRC field is covered, markers included. */
static void crc_feed(struct mpa_rx *rx, const uint8_t *p, size_t n)
{
	if (rx->cfg.crc)
		rx->crc = mpa_crc32c_update(rx->crc, p, n);
}

/* A marker starts at the current position. A marker met before any octet of the next
 * FPDU leads that FPDU and must carry FPDUPTR 0; any other points back to the
 * ULPDU_Length field of the FPDU it sits in. */
static void marker_start(struct mpa_rx *rx)
{
	bool leading = rx->state == MPA_RXS_LEN && rx->done == 0;

	rx->in_marker = true;
	rx->marker_got = 0;
	rx->marker_expect = leading ? 0 : rx->pos - rx->fpdu_hdr;
}

static void marker_check(struct mpa_rx *rx)
{
	/* Receivers treat the two low FPDUPTR bits as zero; Reserved is not checked. */
	uint32_t got = ((uint32_t)rx->marker[2] << 8 | rx->marker[3]) & 0xFFFCu;

	rx->in_marker = false;
	if (got != rx->marker_expect)
		fail(rx, MPA_ECODE_MARKER, "marker FPDUPTR does not point at the FPDU header");
}

/* Consumes marker octets at the current position, if any. Returns false if the input ran
 * out inside a marker or the marker was bad (state FAILED). */
static bool skip_marker(struct mpa_rx *rx, const uint8_t *in, size_t len, size_t *used)
{
	if (!rx->cfg.markers)
		return true;
	if (!rx->in_marker && rx->pos % MPA_MARKER_INTERVAL == 0)
		marker_start(rx);
	if (!rx->in_marker)
		return true;
	size_t n = MPA_MARKER_LEN - rx->marker_got;
	if (n > len - *used)
		n = len - *used;
	memcpy(rx->marker + rx->marker_got, in + *used, n);
	/* A marker inside the CRC field itself (misaligned sender) cannot be covered by it. */
	if (!(rx->state == MPA_RXS_CRC && rx->done > 0))
		crc_feed(rx, in + *used, n);
	rx->marker_got += n;
	rx->pos += (uint32_t)n;
	*used += n;
	if (rx->marker_got < MPA_MARKER_LEN)
		return false;
	marker_check(rx);
	return rx->state != MPA_RXS_FAILED;
}

/* Content octets available at in + *used before the next marker position, after stripping
 * a marker sitting at the current position. 0: need more input (or just failed). */
static size_t content_avail(struct mpa_rx *rx, const uint8_t *in, size_t len, size_t *used)
{
	size_t avail;

	if (!skip_marker(rx, in, len, used))
		return 0;
	avail = len - *used;
	if (rx->cfg.markers) {
		size_t room = MPA_MARKER_INTERVAL - rx->pos % MPA_MARKER_INTERVAL;
		if (avail > room)
			avail = room;
	}
	return avail;
}

/* Per-call scratch of mpa_rx_next(): never outlives the call, so it needs no room in
 * struct mpa_rx. */
struct rx_call {
	uint8_t *place;    /* mpa_rx_feed()'s buffer when payload may be placed there, or NULL */
	bool placed;       /* the piece returned has been copied to place + off already */
};

/* Takes n content octets (already known to be available) and advances the stream. */
static inline const uint8_t *take(struct mpa_rx *rx, const uint8_t *in, size_t n, size_t *used,
				  bool crc)
{
	const uint8_t *p = in + *used;

	if (crc)
		crc_feed(rx, p, n);
	rx->pos += (uint32_t)n;
	*used += n;
	return p;
}

/* take() of payload octets that are also copied to dst, in the same pass as the CRC. */
static const uint8_t *take_to(struct mpa_rx *rx, const uint8_t *in, size_t n, size_t *used,
			      uint8_t *dst)
{
	const uint8_t *p = in + *used;

	if (rx->cfg.crc)
		rx->crc = mpa_crc32c_copy(rx->crc, dst, p, n);
	else if (n)
		memcpy(dst, p, n);
	rx->pos += (uint32_t)n;
	*used += n;
	return p;
}

/* Payload octets: placed when the call has a destination, else only taken. */
static const uint8_t *take_payload(struct mpa_rx *rx, const uint8_t *in, size_t n, size_t *used,
				   struct rx_call *call, size_t off)
{
	call->placed = call->place != NULL;
	if (call->place)
		return take_to(rx, in, n, used, call->place + off);
	return take(rx, in, n, used, true);
}

static void enter(struct mpa_rx *rx, enum mpa_rx_state s)
{
	rx->state = s;
	rx->done = 0;
}

/* Piece constructors. */
static void piece(struct mpa_rx_piece *out, enum mpa_rx_kind kind, const uint8_t *data,
		  size_t len, size_t off, size_t ulpdu_len)
{
	out->kind = kind;
	out->data = data;
	out->len = len;
	out->off = off;
	out->ulpdu_len = ulpdu_len;
	out->err.ecode = MPA_ECODE_NONE;
	out->err.reason = NULL;
}

/* Gathers the 2-octet ULPDU_Length and validates it. Returns true once the field is done. */
static bool step_len(struct mpa_rx *rx, const uint8_t *in, size_t avail, size_t *used)
{
	size_t n = MPA_HDR_LEN - rx->done;

	if (rx->done == 0)
		rx->fpdu_hdr = rx->pos;
	if (n > avail)
		n = avail;
	const uint8_t *p = take(rx, in, n, used, true);
	memcpy(rx->field + rx->done, p, n);
	rx->done += n;
	if (rx->done < MPA_HDR_LEN)
		return false;
	/* Read a whole header from the input, not back from field: a 16-bit load of octets just
	 * stored separately misses store forwarding (a third of a 64-octet FPDU's time). */
	if (n == MPA_HDR_LEN)
		rx->ulpdu_len = (size_t)p[0] << 8 | p[1];
	else
		rx->ulpdu_len = (size_t)rx->field[0] << 8 | rx->field[1];
	/* Without markers a bad length cannot be told from a lost FPDU boundary; the peer's
	 * framing is broken either way, which the RFC reports as a bad FPDU start. */
	if (rx->ulpdu_len > rx->cfg.max_ulpdu) {
		fail(rx, MPA_ECODE_MARKER, "ULPDU_Length exceeds the maximum ULPDU");
		return false;
	}
	rx->head_want = rx->ulpdu_len < rx->cfg.head_len ? rx->ulpdu_len : rx->cfg.head_len;
	enter(rx, MPA_RXS_HEAD);
	return true;
}

/* Produces the head: straight from the input when it is contiguous there, else gathered. */
static bool step_head(struct mpa_rx *rx, const uint8_t *in, size_t avail, size_t *used,
		      struct mpa_rx_piece *out, struct rx_call *call)
{
	size_t want = rx->head_want;
	size_t n = want - rx->done;

	if (rx->done == 0 && avail >= want) {
		piece(out, MPA_RX_HEAD, take_payload(rx, in, want, used, call, 0), want, 0,
		      rx->ulpdu_len);
	} else {
		/* A gathered head is copied out by the caller: earlier octets may not be placed. */
		if (n > avail)
			n = avail;
		memcpy(rx->head + rx->done, take(rx, in, n, used, true), n);
		rx->done += n;
		if (rx->done < want)
			return false;
		piece(out, MPA_RX_HEAD, rx->head, want, 0, rx->ulpdu_len);
	}
	enter(rx, MPA_RXS_DATA);
	rx->done = want;
	return true;
}

static void step_data(struct mpa_rx *rx, const uint8_t *in, size_t avail, size_t *used,
		      struct mpa_rx_piece *out, struct rx_call *call)
{
	size_t n = rx->ulpdu_len - rx->done;

	if (n > avail)
		n = avail;
	piece(out, MPA_RX_DATA, take_payload(rx, in, n, used, call, rx->done), n, rx->done,
	      rx->ulpdu_len);
	rx->done += n;
}

/* Pad octets are CRC-covered but their value is ignored on receive. */
static void step_pad(struct mpa_rx *rx, const uint8_t *in, size_t avail, size_t *used)
{
	size_t n = mpa_pad_len(rx->ulpdu_len) - rx->done;

	if (n > avail)
		n = avail;
	take(rx, in, n, used, true);
	rx->done += n;
}

/* Gathers the CRC field (least significant octet first on the wire) and checks it. The
 * field is present even without CRC; then its value is not checked. */
static bool step_crc(struct mpa_rx *rx, const uint8_t *in, size_t avail, size_t *used)
{
	size_t n = MPA_CRC_LEN - rx->done;
	uint32_t got;

	if (n > avail)
		n = avail;
	memcpy(rx->field + rx->done, take(rx, in, n, used, false), n);
	rx->done += n;
	if (rx->done < MPA_CRC_LEN)
		return false;
	if (!rx->cfg.crc)
		return true;
	got = (uint32_t)rx->field[0] | (uint32_t)rx->field[1] << 8 |
	      (uint32_t)rx->field[2] << 16 | (uint32_t)rx->field[3] << 24;
	if (got != mpa_crc32c_final(rx->crc)) {
		fail(rx, MPA_ECODE_CRC, "MPA CRC mismatch");
		return false;
	}
	return true;
}

/* The FPDU is complete: report it and start over on the next one. */
static void finish(struct mpa_rx *rx, struct mpa_rx_piece *out)
{
	piece(out, MPA_RX_END, NULL, 0, rx->ulpdu_len, rx->ulpdu_len);
	enter(rx, MPA_RXS_LEN);
	rx->crc = MPA_CRC32C_INIT;
}

/* States that need no input: the zero-length transitions at the end of a field. Returns
 * true if *out holds a piece. */
static bool advance_idle(struct mpa_rx *rx, struct mpa_rx_piece *out)
{
	for (;;) {
		switch (rx->state) {
		case MPA_RXS_HEAD:
			if (rx->head_want != 0)
				return false;
			piece(out, MPA_RX_HEAD, rx->head, 0, 0, rx->ulpdu_len);
			enter(rx, MPA_RXS_DATA);
			return true;
		case MPA_RXS_DATA:
			if (rx->done < rx->ulpdu_len)
				return false;
			enter(rx, MPA_RXS_PAD);
			break;
		case MPA_RXS_PAD:
			if (rx->done < mpa_pad_len(rx->ulpdu_len))
				return false;
			enter(rx, MPA_RXS_CRC);
			return false;
		default:
			return false;
		}
	}
}

/* mpa_rx_next() with optional placement: with place set (mpa_rx_feed(), ULPDU known to
 * fit), HEAD pieces taken straight from the input and DATA pieces are also copied to
 * place + off, and call->placed says so. */
static size_t rx_next(struct mpa_rx *rx, const uint8_t *in, size_t len, struct mpa_rx_piece *out,
		      struct rx_call *call)
{
	size_t used = 0;

	for (;;) {
		if (rx->state == MPA_RXS_FAILED) {
			piece(out, MPA_RX_ERROR, NULL, 0, 0, rx->ulpdu_len);
			out->err = rx->err;
			return used;
		}
		if (advance_idle(rx, out))
			return used;
		size_t avail = content_avail(rx, in, len, &used);
		if (rx->state == MPA_RXS_FAILED)
			continue;
		if (avail == 0) {
			piece(out, MPA_RX_NEED_MORE, NULL, 0, 0, rx->ulpdu_len);
			return used;
		}
		switch (rx->state) {
		case MPA_RXS_LEN:
			step_len(rx, in, avail, &used);
			break;
		case MPA_RXS_HEAD:
			if (step_head(rx, in, avail, &used, out, call))
				return used;
			break;
		case MPA_RXS_DATA:
			step_data(rx, in, avail, &used, out, call);
			return used;
		case MPA_RXS_PAD:
			step_pad(rx, in, avail, &used);
			break;
		case MPA_RXS_CRC:
			if (step_crc(rx, in, avail, &used)) {
				finish(rx, out);
				return used;
			}
			break;
		case MPA_RXS_FAILED:
			break;
		}
	}
}

size_t mpa_rx_next(struct mpa_rx *rx, const uint8_t *in, size_t len, struct mpa_rx_piece *out)
{
	struct rx_call call = { 0 };

	return rx_next(rx, in, len, out, &call);
}

/* Placement target for the FPDU being decoded: the ULPDU goes to buf + off when it fits.
 * Before ULPDU_Length is known (state LEN) the length of the next FPDU is checked where its
 * pieces are produced, so cap is the only bound needed here. */
static uint8_t *place_for(const struct mpa_rx *rx, uint8_t *buf, size_t cap)
{
	if (rx->state == MPA_RXS_LEN || rx->state == MPA_RXS_FAILED)
		return NULL;
	return rx->ulpdu_len <= cap ? buf : NULL;
}

int mpa_rx_feed(struct mpa_rx *rx, const uint8_t *in, size_t len, uint8_t *buf, size_t cap,
		mpa_rx_ulpdu_cb cb, void *arg)
{
	struct mpa_rx_piece p;
	size_t off = 0;
	int delivered = 0;

	for (;;) {
		struct rx_call call = { .place = place_for(rx, buf, cap) };

		off += rx_next(rx, in + off, len - off, &p, &call);
		switch (p.kind) {
		case MPA_RX_NEED_MORE:
			return delivered;
		case MPA_RX_ERROR:
			return -EPROTO;
		case MPA_RX_HEAD:
		case MPA_RX_DATA:
			if (p.ulpdu_len > cap)
				return -ENOBUFS;
			if (p.len > 0 && !call.placed)
				memcpy(buf + p.off, p.data, p.len);
			break;
		case MPA_RX_END: {
			int rc = cb ? cb(arg, buf, p.ulpdu_len) : 0;
			if (rc != 0)
				return rc;
			delivered++;
			break;
		}
		}
	}
}
