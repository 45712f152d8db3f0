/* Fuzz target: TCP option parsing (tcp/tcp_opt.c) and the SACK scoreboard fed from it
 * (tcp/tcp_sack.c).
 *
 * Input: octet 0 bit 0 = SYN, bits 1-7 and octets 1-8 place the send window for the
 * scoreboard; the rest is the options area (any length: over 40 octets must be refused).
 * Checks beyond memory safety: a parsed area re-encodes (tcp_opt_build) to something that
 * parses to the same values; the scoreboard stays sorted, disjoint and inside the window,
 * pipe never exceeds twice the window and NextSeg only points at unSACKed octets. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_opt.h"
#include "tcp_sack.h"
#include "tcp_seq.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void check_reencode(const struct tcp_opts *o, bool syn)
{
	struct tcp_opt_out out = {
		.mss = o->has_mss, .mss_val = o->mss, .wscale = o->has_wscale,
		.wscale_val = o->wscale, .sack_ok = o->sack_ok, .ts = o->has_ts,
		.ts_val = o->ts_val, .ts_ecr = o->ts_ecr, .nsack = o->nsack, .sack = o->sack,
	};
	uint8_t buf[TCP_OPT_MAX_LEN];
	size_t n = tcp_opt_build(&out, buf);
	CHECK(n <= TCP_OPT_MAX_LEN && n % 4 == 0 && n == tcp_opt_len(&out));
	struct tcp_opts back;
	CHECK(tcp_opt_parse(buf, n, syn, &back) == 0);
	CHECK(back.has_mss == o->has_mss && back.mss == o->mss);
	CHECK(back.has_wscale == o->has_wscale && back.wscale == o->wscale);
	CHECK(back.sack_ok == o->sack_ok && back.has_ts == o->has_ts);
	CHECK(back.ts_val == o->ts_val && back.ts_ecr == o->ts_ecr);
	/* Blocks may be cut to what fits next to the other options, never reordered. */
	CHECK(back.nsack <= o->nsack);
	for (unsigned i = 0; i < back.nsack; i++)
		CHECK(back.sack[i].start == o->sack[i].start && back.sack[i].end == o->sack[i].end);
}

static void check_scoreboard(const struct tcp_sack_snd *s, uint32_t una, uint32_t max)
{
	for (unsigned i = 0; i < s->n; i++) {
		CHECK(seq_lt(s->blk[i].start, s->blk[i].end));
		CHECK(seq_geq(s->blk[i].start, una) && seq_leq(s->blk[i].end, max));
		if (i)
			CHECK(seq_lt(s->blk[i - 1].end, s->blk[i].start));
	}
	CHECK(tcp_sack_snd_sacked_bytes(s) <= max - una);
	CHECK(tcp_sack_snd_pipe(s, una, max, 536) <= 2ull * (max - una));
	uint32_t seq, len;
	if (tcp_sack_snd_next_seg(s, una, max, 536, &seq, &len)) {
		CHECK(len > 0 && len <= 536);
		CHECK(seq_geq(seq, una) && seq_leq(seq + len, max));
		for (uint32_t k = 0; k < len; k += 67)
			CHECK(!tcp_sack_snd_is_sacked(s, seq + k));
	}
}

static void scoreboard(const struct tcp_opts *o, uint32_t una, uint32_t span)
{
	struct tcp_sack_snd s;
	tcp_sack_snd_init(&s);
	uint32_t max = una + span;
	uint32_t newly = tcp_sack_snd_update(&s, una, max, o->sack, o->nsack);
	CHECK(newly <= span);
	check_scoreboard(&s, una, max);
	/* The same blocks again add nothing; then the window moves past half of them. */
	CHECK(tcp_sack_snd_update(&s, una, max, o->sack, o->nsack) == 0);
	tcp_sack_snd_advance(&s, una + span / 2);
	check_scoreboard(&s, una + span / 2, max);
	/* Receiver side: the same ranges as out-of-order arrivals - those an engine can see,
	 * non-empty and inside the receive window (ranges 2^31 apart compare both ways). */
	struct tcp_sack_rcv r;
	tcp_sack_rcv_init(&r);
	for (unsigned i = 0; i < o->nsack; i++)
		if (seq_geq(o->sack[i].start, una) && seq_lt(o->sack[i].start, o->sack[i].end) &&
		    seq_leq(o->sack[i].end, max))
			tcp_sack_rcv_add(&r, o->sack[i].start, o->sack[i].end);
	struct tcp_sack_block out[TCP_SACK_MAX_BLOCKS];
	unsigned n = tcp_sack_rcv_blocks(&r, out, TCP_SACK_MAX_BLOCKS);
	CHECK(n <= o->nsack);
	for (unsigned i = 0; i < n; i++)
		CHECK(seq_lt(out[i].start, out[i].end));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 9)
		return 0;
	bool syn = data[0] & 1;
	uint32_t una = get32(data + 1);
	/* Windows up to 2^30 keep sequence comparisons unambiguous. */
	uint32_t span = get32(data + 5) & 0x3fffffffu;
	const uint8_t *opt = data + 9;
	size_t len = size - 9;
	struct tcp_opts o;
	int rc = tcp_opt_parse(opt, len, syn, &o);
	if (len > TCP_OPT_MAX_LEN)
		CHECK(rc != 0);
	CHECK(o.nsack <= TCP_SACK_MAX_BLOCKS);
	if (syn)
		CHECK(o.nsack == 0);
	else
		CHECK(!o.has_mss && !o.has_wscale && !o.sack_ok);
	if (rc == 0)
		check_reencode(&o, syn);
	if (span)
		scoreboard(&o, una, span);
	return 0;
}
