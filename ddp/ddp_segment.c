/* DDP segmentation (RFC 5041 §5.1 "DDP segment format", §6 Data Source).
 *
 * Every segment carries the full DDP header, so a segment holds at most
 * MULPDU - DDP header - ULP header payload octets. The Data Source fills each segment but the
 * last (siw does the same: 16 KiB Write with MULPDU 1442 = 11 x 1428 + 676, TO += 1428). */
#include <string.h>

#include "ddp.h"

#define MO_SPACE (UINT64_C(1) << 32)

static int fail(struct iwarp_err *err, struct iwarp_err e)
{
	*err = e;
	return -1;
}

/* Tagged: the last octet of the message sits at TO + len - 1 and must not pass 2^64 - 1
 * (RFC 5041 §7.2 "TO wrap"). A zero-length message places nothing and cannot wrap. */
static bool to_wraps(uint64_t to, uint64_t len)
{
	return len > 0 && len - 1 > UINT64_MAX - to;
}

/* Untagged: MO is 32 bits, so MO + len may reach 2^32 (last octet at MO 2^32 - 1) but no more. */
static bool mo_overflows(uint32_t mo, uint64_t len)
{
	return len > MO_SPACE - mo;
}

int ddp_seg_init(struct ddp_seg_iter *it, const struct ddp_hdr *tmpl, uint64_t msg_len,
		 uint32_t mulpdu, uint32_t ulp_hdr_len, struct iwarp_err *err)
{
	uint64_t overhead = ddp_hdr_len(tmpl->tagged) + (uint64_t)ulp_hdr_len;

	memset(it, 0, sizeof(*it));
	if (mulpdu <= overhead && msg_len > 0)
		return fail(err, ddp_err_catastrophic());
	if (tmpl->tagged && to_wraps(tmpl->to, msg_len))
		return fail(err, ddp_err_tagged(DDP_ECODE_T_TO_WRAP));
	if (!tmpl->tagged && mo_overflows(tmpl->mo, msg_len))
		return fail(err, ddp_err_untagged(DDP_ECODE_U_INVALID_MO));
	it->tmpl = *tmpl;
	it->tmpl.last = false;
	it->msg_len = msg_len;
	it->max_payload = mulpdu > overhead ? (uint32_t)(mulpdu - overhead) : 0;
	return 0;
}

bool ddp_seg_next(struct ddp_seg_iter *it, struct ddp_seg *seg)
{
	return ddp_seg_next_max(it, seg, UINT32_MAX);
}

bool ddp_seg_next_max(struct ddp_seg_iter *it, struct ddp_seg *seg, uint32_t max)
{
	uint32_t most = max == 0 || max > it->max_payload ? it->max_payload : max;
	uint64_t left;

	if (it->done)
		return false;
	left = it->msg_len - it->off;
	seg->hdr = it->tmpl;
	seg->payload_off = it->off;
	seg->payload_len = left > most ? most : (uint32_t)left;
	if (it->tmpl.tagged)
		seg->hdr.to = it->tmpl.to + it->off;
	else
		seg->hdr.mo = (uint32_t)(it->tmpl.mo + it->off);
	it->off += seg->payload_len;
	seg->hdr.last = it->off == it->msg_len;
	it->done = seg->hdr.last;
	return true;
}

uint64_t ddp_seg_count(const struct ddp_seg_iter *it)
{
	if (it->msg_len == 0)
		return 1;
	return (it->msg_len - 1) / it->max_payload + 1;
}
