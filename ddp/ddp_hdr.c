/* DDP header codec (RFC 5041 §4) and DDP error names (RFC 5041 §7.2). */
#include <string.h>

#include "ddp.h"
#include "ddp_wire.h"

struct ddp_hdr ddp_hdr_tagged(uint8_t rsvdulp, uint32_t stag, uint64_t to)
{
	return (struct ddp_hdr){
		.tagged = true, .dv = DDP_VERSION, .rsvdulp = rsvdulp, .stag = stag, .to = to,
	};
}

struct ddp_hdr ddp_hdr_untagged(uint8_t rsvdulp, uint32_t rsvdulp32, uint32_t qn, uint32_t msn,
				uint32_t mo)
{
	return (struct ddp_hdr){
		.dv = DDP_VERSION, .rsvdulp = rsvdulp, .rsvdulp32 = rsvdulp32,
		.qn = qn, .msn = msn, .mo = mo,
	};
}

static uint8_t ctrl_octet(const struct ddp_hdr *h)
{
	return (uint8_t)((h->tagged ? DDP_CTRL_T : 0) | (h->last ? DDP_CTRL_L : 0) |
			 ((h->rsvd << 2) & DDP_CTRL_RSVD) | (h->dv & DDP_CTRL_DV));
}

size_t ddp_hdr_encode(const struct ddp_hdr *h, uint8_t *buf, size_t cap)
{
	size_t n = ddp_hdr_len(h->tagged);

	if (cap < n)
		return 0;
	buf[0] = ctrl_octet(h);
	buf[1] = h->rsvdulp;
	if (h->tagged) {
		iw_put32(buf + 2, h->stag);
		iw_put64(buf + 6, h->to);
	} else {
		iw_put32(buf + 2, h->rsvdulp32);
		iw_put32(buf + 6, h->qn);
		iw_put32(buf + 10, h->msn);
		iw_put32(buf + 14, h->mo);
	}
	return n;
}

size_t ddp_hdr_decode(const uint8_t *buf, size_t len, struct ddp_hdr *h)
{
	size_t n;

	if (len < 1)
		return 0;
	n = ddp_hdr_len(buf[0] & DDP_CTRL_T);
	if (len < n)
		return 0;
	memset(h, 0, sizeof(*h));
	h->tagged = buf[0] & DDP_CTRL_T;
	h->last = buf[0] & DDP_CTRL_L;
	h->rsvd = (uint8_t)((buf[0] & DDP_CTRL_RSVD) >> 2);
	h->dv = buf[0] & DDP_CTRL_DV;
	h->rsvdulp = buf[1];
	if (h->tagged) {
		h->stag = iw_get32(buf + 2);
		h->to = iw_get64(buf + 6);
	} else {
		h->rsvdulp32 = iw_get32(buf + 2);
		h->qn = iw_get32(buf + 6);
		h->msn = iw_get32(buf + 10);
		h->mo = iw_get32(buf + 14);
	}
	return n;
}

/* The version error has a code per buffer model: the receiver reports it in the model the
 * segment claims to use (RFC 5041 §7.2: tagged 0x04, untagged 0x06). */
static struct iwarp_err version_err(bool tagged)
{
	return tagged ? ddp_err_tagged(DDP_ECODE_T_VERSION) : ddp_err_untagged(DDP_ECODE_U_VERSION);
}

int ddp_hdr_validate(const struct ddp_hdr *h, uint32_t nqueues, struct iwarp_err *err)
{
	if (h->dv != DDP_VERSION) {
		*err = version_err(h->tagged);
		return -1;
	}
	if (!h->tagged && h->qn >= nqueues) {
		*err = ddp_err_untagged(DDP_ECODE_U_INVALID_QN);
		return -1;
	}
	return 0;
}

static const char *const tagged_names[] = {
	[DDP_ECODE_T_INVALID_STAG] = "Invalid STag",
	[DDP_ECODE_T_BASE_BOUNDS] = "Base or bounds violation",
	[DDP_ECODE_T_STAG_NOT_ASSOC] = "STag not associated with DDP Stream",
	[DDP_ECODE_T_TO_WRAP] = "TO wrap",
	[DDP_ECODE_T_VERSION] = "Invalid DDP version",
};

static const char *const untagged_names[] = {
	[DDP_ECODE_U_INVALID_QN] = "Invalid QN",
	[DDP_ECODE_U_MSN_NO_BUF] = "Invalid MSN - no buffer available",
	[DDP_ECODE_U_MSN_RANGE] = "Invalid MSN - MSN range is not valid",
	[DDP_ECODE_U_INVALID_MO] = "Invalid MO",
	[DDP_ECODE_U_TOO_LONG] = "DDP Message too long for available buffer",
	[DDP_ECODE_U_VERSION] = "Invalid DDP version",
};

#define NAME_OR_UNKNOWN(tab, i) \
	((i) < sizeof(tab) / sizeof((tab)[0]) && (tab)[i] ? (tab)[i] : "unknown")

const char *ddp_err_str(struct iwarp_err e)
{
	switch (e.etype) {
	case DDP_ETYPE_CATASTROPHIC:
		return e.ecode == DDP_ECODE_CATASTROPHIC ? "Local Catastrophic Error" : "unknown";
	case DDP_ETYPE_TAGGED:
		return NAME_OR_UNKNOWN(tagged_names, e.ecode);
	case DDP_ETYPE_UNTAGGED:
		return NAME_OR_UNKNOWN(untagged_names, e.ecode);
	default:
		return "unknown";
	}
}
