/* MPA FPDU encoder (RFC 5044 §4.1 FPDU format, MPA markers, CRC).
 *
 * Layout rules are in mpa_fpdu.h. The encoder writes "content" octets (ULPDU_Length, ULPDU,
 * pad, CRC) through a cursor that inserts a marker whenever the next octet would land on a
 * 512-octet boundary of the stream, so every field may be split by a marker without special
 * cases. Markers are fed into the CRC like any other FPDU octet.
 */
#include "mpa_fpdu.h"

#include <errno.h>
#include <string.h>

/* RFC 5044 MULPDU: EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS mod 4) with markers, and
 * EMSS - (6 + EMSS mod 4) without. The 6 is ULPDU_Length + CRC; "EMSS mod 4" keeps the
 * FPDU a multiple of 4 so no pad is needed at the maximum; a segment of EMSS octets can
 * straddle at most ceil(EMSS / 512) marker positions. At EMSS 1448 this gives 1442, which
 * is exactly the ULPDU length of the full-size FPDUs in the siw captures. */
size_t mpa_mulpdu(size_t emss, bool markers)
{
	size_t overhead = MPA_HDR_LEN + MPA_CRC_LEN + emss % 4;

	if (markers)
		overhead += MPA_MARKER_LEN * ((emss + MPA_MARKER_INTERVAL - 1) / MPA_MARKER_INTERVAL);
	if (emss <= overhead)
		return 0;
	return emss - overhead > MPA_MAX_ULPDU ? MPA_MAX_ULPDU : emss - overhead;
}

void mpa_tx_init(struct mpa_tx *tx, bool crc, bool markers)
{
	tx->crc = crc;
	tx->markers = markers;
	tx->pos = 0;
}

/* Octets of the FPDU without markers. The CRC field is there even when CRC is off. */
static size_t fpdu_content_len(size_t ulpdu_len)
{
	return MPA_HDR_LEN + ulpdu_len + mpa_pad_len(ulpdu_len) + MPA_CRC_LEN;
}

/* Markers inside an FPDU of content_len octets starting at stream position pos. Marker k
 * (k = 0, 1, ...) sits at offset first + 512k from the FPDU start with 4k marker octets
 * before it, so it belongs to this FPDU iff content octets remain after it:
 * first + 508k < content_len. A marker exactly at the end belongs to the next FPDU. */
static size_t markers_in(uint32_t pos, size_t content_len)
{
	size_t first = (MPA_MARKER_INTERVAL - pos % MPA_MARKER_INTERVAL) % MPA_MARKER_INTERVAL;
	size_t step = MPA_MARKER_INTERVAL - MPA_MARKER_LEN;

	if (content_len <= first)
		return 0;
	return (content_len - first - 1) / step + 1;
}

size_t mpa_tx_fpdu_len(const struct mpa_tx *tx, size_t ulpdu_len)
{
	size_t len = fpdu_content_len(ulpdu_len);

	if (tx->markers)
		len += MPA_MARKER_LEN * markers_in(tx->pos, len);
	return len;
}

/* Sums the iovec; -EINVAL for a NULL array, -EMSGSIZE beyond a 16-bit ULPDU_Length. */
static ssize_t iov_total(const struct iovec *iov, unsigned iovcnt)
{
	size_t total = 0;

	if (iovcnt > 0 && iov == NULL)
		return -EINVAL;
	for (unsigned i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > MPA_MAX_ULPDU)
			return -EMSGSIZE;
		if (iov[i].iov_base == NULL && iov[i].iov_len > 0)
			return -EINVAL;
		total += iov[i].iov_len;
		if (total > MPA_MAX_ULPDU)
			return -EMSGSIZE;
	}
	return (ssize_t)total;
}

/* Output cursor: out[off] is the next wire octet, at stream position pos. */
struct cursor {
	uint8_t *out;
	size_t off;
	uint32_t pos;
	uint32_t hdr_pos;   /* stream position of this FPDU's ULPDU_Length field */
	bool hdr_done;      /* the ULPDU_Length field has been placed */
	bool markers;
	bool use_crc;       /* compute the CRC; without it the payload is a plain copy */
	uint32_t crc;
};

static void put_u16be(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The CRC field: least significant octet first (checked against siw captures). */
static void put_crc_field(uint8_t *p, uint32_t v)
{
	for (unsigned i = 0; i < MPA_CRC_LEN; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Inserts a marker if the next octet falls on a marker position. Before the header is out
 * the marker leads the FPDU and points at the header just behind it: FPDUPTR 0. */
static void maybe_marker(struct cursor *c)
{
	uint16_t fpduptr;

	if (!c->markers || c->pos % MPA_MARKER_INTERVAL != 0)
		return;
	fpduptr = c->hdr_done ? (uint16_t)(c->pos - c->hdr_pos) : 0;
	put_u16be(c->out + c->off, 0);
	put_u16be(c->out + c->off + 2, fpduptr);
	if (c->use_crc)
		c->crc = mpa_crc32c_update(c->crc, c->out + c->off, MPA_MARKER_LEN);
	c->off += MPA_MARKER_LEN;
	c->pos += MPA_MARKER_LEN;
}

/* Octets until the next marker position (a full interval when sitting on one, since
 * maybe_marker() has just run). */
static size_t room_to_marker(const struct cursor *c)
{
	if (!c->markers)
		return SIZE_MAX;
	return MPA_MARKER_INTERVAL - c->pos % MPA_MARKER_INTERVAL;
}

/* Copies len content octets from src (NULL: zeros, for the pad) and CRCs them. */
static void put(struct cursor *c, const void *src, size_t len)
{
	const uint8_t *s = src;

	while (len > 0) {
		maybe_marker(c);
		size_t n = room_to_marker(c);
		if (n > len)
			n = len;
		if (s && c->use_crc)
			c->crc = mpa_crc32c_copy(c->crc, c->out + c->off, s, n);
		else if (s)
			memcpy(c->out + c->off, s, n);
		else
			memset(c->out + c->off, 0, n);
		if (!s && c->use_crc)
			c->crc = mpa_crc32c_update(c->crc, c->out + c->off, n);
		if (s)
			s += n;
		c->off += n;
		c->pos += (uint32_t)n;
		len -= n;
	}
}

/* Without CRC the field is still sent, as zeros, like Linux siw does. */
static void put_crc(struct cursor *c)
{
	uint8_t le[MPA_CRC_LEN];

	/* A marker right before the CRC field is still covered by it: place it first. */
	maybe_marker(c);
	put_crc_field(le, c->use_crc ? mpa_crc32c_final(c->crc) : 0);
	put(c, le, sizeof(le)); /* CRCing its own octets is harmless: c->crc is dead now */
}

static void put_header(struct cursor *c, size_t ulpdu_len)
{
	uint8_t hdr[MPA_HDR_LEN];

	maybe_marker(c);
	put_u16be(hdr, (uint16_t)ulpdu_len);
	c->hdr_pos = c->pos;
	c->hdr_done = true;
	put(c, hdr, sizeof(hdr));
}

/* Without markers an FPDU is header, ULPDU, pad and CRC in one run: no cursor needed (the
 * common case, and the small-message latency path, where the cursor's per-piece marker
 * checks cost as much as the framing). */
static size_t encode_plain(struct mpa_tx *tx, const struct iovec *iov, unsigned iovcnt,
			   size_t ulpdu_len, uint8_t *out)
{
	uint32_t crc = MPA_CRC32C_INIT, v = 0;
	size_t off = MPA_HDR_LEN, pad = mpa_pad_len(ulpdu_len);

	put_u16be(out, (uint16_t)ulpdu_len);
	if (tx->crc)
		crc = mpa_crc32c_update(crc, out, MPA_HDR_LEN);
	for (unsigned i = 0; i < iovcnt; i++) {
		if (tx->crc)
			crc = mpa_crc32c_copy(crc, out + off, iov[i].iov_base, iov[i].iov_len);
		else if (iov[i].iov_len)
			memcpy(out + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	memset(out + off, 0, pad);
	if (tx->crc) {
		crc = mpa_crc32c_update(crc, out + off, pad);
		v = mpa_crc32c_final(crc);
	}
	off += pad;
	put_crc_field(out + off, v);
	off += MPA_CRC_LEN;
	tx->pos += (uint32_t)off;
	return off;
}

ssize_t mpa_tx_encode(struct mpa_tx *tx, const struct iovec *iov, unsigned iovcnt,
		      uint8_t *out, size_t cap)
{
	ssize_t total = iov_total(iov, iovcnt);
	size_t ulpdu_len, fpdu_len;

	if (total < 0)
		return total;
	/* FPDUs and markers are 4-aligned to the marker origin; elsewhere an FPDUPTR would need
	 * the two low bits the RFC reserves as zero. */
	if (tx->markers && tx->pos % 4 != 0)
		return -EINVAL;
	ulpdu_len = (size_t)total;
	fpdu_len = mpa_tx_fpdu_len(tx, ulpdu_len);
	/* FPDUPTR is 16 bits: no marker may sit 64 KiB or more past the header. */
	if (tx->markers && fpdu_len > 65536)
		return -EMSGSIZE;
	if (cap < fpdu_len || out == NULL)
		return -ENOBUFS;
	if (!tx->markers)
		return (ssize_t)encode_plain(tx, iov, iovcnt, ulpdu_len, out);

	struct cursor c = { .out = out, .pos = tx->pos, .markers = tx->markers,
			    .use_crc = tx->crc, .crc = MPA_CRC32C_INIT };
	put_header(&c, ulpdu_len);
	for (unsigned i = 0; i < iovcnt; i++)
		put(&c, iov[i].iov_base, iov[i].iov_len);
	put(&c, NULL, mpa_pad_len(ulpdu_len));
	put_crc(&c);
	tx->pos = c.pos;
	return (ssize_t)c.off;
}

int mpa_tx_frame(struct mpa_tx *tx, const struct iovec *iov, unsigned iovcnt,
		 struct mpa_tx_frame *f)
{
	ssize_t total = iov_total(iov, iovcnt);
	size_t pad;

	if (total < 0)
		return (int)total;
	if (tx->markers)
		return -ENOTSUP;
	pad = mpa_pad_len((size_t)total);
	put_u16be(f->hdr, (uint16_t)total);
	memset(f->trailer, 0, sizeof(f->trailer));
	f->trailer_len = pad + MPA_CRC_LEN;
	if (tx->crc) {
		uint32_t crc = mpa_crc32c_update(MPA_CRC32C_INIT, f->hdr, MPA_HDR_LEN);
		for (unsigned i = 0; i < iovcnt; i++)
			crc = mpa_crc32c_update(crc, iov[i].iov_base, iov[i].iov_len);
		crc = mpa_crc32c_final(mpa_crc32c_update(crc, f->trailer, pad));
		put_crc_field(f->trailer + pad, crc);
	}
	f->fpdu_len = MPA_HDR_LEN + (size_t)total + f->trailer_len;
	tx->pos += (uint32_t)f->fpdu_len;
	return 0;
}
