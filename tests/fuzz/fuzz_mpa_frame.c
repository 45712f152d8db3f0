/* Fuzz target: MPA Request/Reply parsing and negotiation on untrusted connection-setup bytes.
 *
 * Input: octet 0 selects what the parser expects and its PD limit, the rest is the stream.
 * Checks beyond memory safety: a parsed frame with clean reserved bits re-encodes to exactly
 * the bytes it was parsed from, and negotiation on any parsed frame returns one of its
 * verdicts with a well-formed reply frame. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpa.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_reencode(const struct mpa_frame *f, const uint8_t *wire, size_t len)
{
	if (f->reserved != 0)
		return;
	uint8_t out[MPA_FRAME_HDR_LEN + MPA_PD_MAX_RFC];
	ssize_t n = mpa_frame_encode(f, out, sizeof(out));
	CHECK(n == (ssize_t)len);
	CHECK(memcmp(out, wire, len) == 0);
}

static void negotiate(const struct mpa_frame *f)
{
	struct mpa_policy pol;
	mpa_policy_default(&pol);
	struct mpa_frame reply, req;
	struct mpa_conn_params res;
	struct mpa_error err;
	uint8_t out[MPA_FRAME_HDR_LEN + MPA_PD_MAX_RFC];

	if (f->type == MPA_FRAME_REQUEST) {
		enum mpa_req_verdict v = mpa_negotiate_request(&pol, f, &reply, &res, &err);
		CHECK(v == MPA_REQ_ACCEPT || v == MPA_REQ_REJECT);
		CHECK(mpa_frame_encode(&reply, out, sizeof(out)) > 0);
		return;
	}
	mpa_build_request(&pol, &req);
	enum mpa_reply_verdict v = mpa_negotiate_reply(&pol, &req, f, &res, &err);
	CHECK(v == MPA_REPLY_CONNECTED || v == MPA_REPLY_REJECTED || v == MPA_REPLY_TERMINATE);
	if (v == MPA_REPLY_TERMINATE)
		CHECK(err.ecode != MPA_ECODE_NONE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const enum mpa_frame_expect expects[3] = {
		MPA_EXPECT_REQUEST, MPA_EXPECT_REPLY, MPA_EXPECT_ANY,
	};
	struct mpa_parse_opts opts;
	mpa_parse_opts_init(&opts, expects[data[0] % 3]);
	opts.pd_max = (data[0] & 0x80) ? MPA_PD_MAX_LINUX : MPA_PD_MAX_RFC;
	opts.reserved = (data[0] & 0x40) ? MPA_RESERVED_REJECT : MPA_RESERVED_IGNORE;

	size_t len = size - 1;
	uint8_t *buf = malloc(len ? len : 1);
	CHECK(buf != NULL);
	memcpy(buf, data + 1, len);
	struct mpa_frame f;
	struct mpa_error err;
	ssize_t n = mpa_frame_parse(buf, len, &opts, &f, &err);
	CHECK(n >= -1 && n <= (ssize_t)len);
	if (n == -1)
		CHECK(err.ecode == MPA_ECODE_INVALID_REQ_REP);
	if (n > 0) {
		check_reencode(&f, buf, (size_t)n);
		negotiate(&f);
	}
	free(buf);
	return 0;
}
