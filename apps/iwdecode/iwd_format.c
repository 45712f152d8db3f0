/* iwdecode output: decoded FPDUs as one readable line or as a TSV row. */
#include "iwdecode.h"

#include <stdarg.h>
#include <stdio.h>

#include "rdmap.h"

const char *iwd_opcode_name(uint8_t opcode)
{
	switch (opcode) {
	case RDMAP_OP_WRITE: return "Write";
	case RDMAP_OP_READ_REQ: return "Read Request";
	case RDMAP_OP_READ_RESP: return "Read Response";
	case RDMAP_OP_SEND: return "Send";
	case RDMAP_OP_SEND_INV: return "Send w/ Invalidate";
	case RDMAP_OP_SEND_SE: return "Send w/ SE";
	case RDMAP_OP_SEND_SE_INV: return "Send w/ SE+Invalidate";
	case RDMAP_OP_TERMINATE: return "Terminate";
	default: return "reserved opcode";
	}
}

/* Formats at buf + *used and advances *used; once the buffer is full (the text truncated)
 * later calls add nothing. */
static void append(char *buf, size_t len, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	if (*used >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	*used = n < 0 ? len : *used + (size_t)n;
}

/* The fields only some opcodes carry. */
static void append_opcode_fields(const struct iwd_seg *s, char *buf, size_t len, size_t *used)
{
	if (!s->rdmap_ok)
		return;
	switch (s->opcode) {
	case RDMAP_OP_SEND_INV:
	case RDMAP_OP_SEND_SE_INV:
		append(buf, len, used, " inval 0x%08x", s->inval_stag);
		break;
	case RDMAP_OP_READ_REQ:
		append(buf, len, used, " sink 0x%08x/0x%llx size %u src 0x%08x/0x%llx",
		       s->sink_stag, (unsigned long long)s->sink_to, s->rd_size, s->src_stag,
		       (unsigned long long)s->src_to);
		break;
	case RDMAP_OP_TERMINATE:
		append(buf, len, used, " layer %u etype %u ecode 0x%02x", s->term_layer,
		       s->term_etype, s->term_ecode);
		break;
	default:
		break;
	}
}

void iwd_seg_format(const struct iwd_seg *s, char *buf, size_t len)
{
	size_t used = 0;
	append(buf, len, &used, "%5u %s %-21s %c L=%d ", s->frame,
	       s->dir == WT_CLIENT ? "c>s" : "s>c",
	       s->rdmap_ok || s->ddp_ok ? iwd_opcode_name(s->opcode) : "?",
	       s->tagged ? 'T' : 'U', s->last);
	if (s->tagged)
		append(buf, len, &used, "STag 0x%08x TO 0x%llx", s->stag, (unsigned long long)s->to);
	else
		append(buf, len, &used, "QN %u MSN %u MO %u", s->qn, s->msn, s->mo);
	append_opcode_fields(s, buf, len, &used);
	append(buf, len, &used, " len %zu payload %u crc %s", s->ulpdu_len, s->payload_len,
	       s->crc ? "ok" : "off");
	if (s->error)
		append(buf, len, &used, " ERROR: %s", s->error);
}

void iwd_tsv_title(FILE *f, bool decoded)
{
	fprintf(f, "#frame\tconn\tdir\tidx\tulpdu_len\ttagged\tlast\topcode\tstag\tto\tqn\tmsn\t"
		   "mo\tinval\tsink_stag\tsink_to\trd_size\tsrc_stag\tsrc_to\tcrc\tpad\t"
		   "term_layer\tterm_etype\tterm_ecode\tmpa_pos\twire_len%s\n",
		decoded ? "\terror\tfirst_frame" : "");
}

void iwd_seg_tsv(FILE *f, const struct iwd_seg *s, bool decoded)
{
	fprintf(f, "%u\t%zu\t%s\t%zu\t%zu\t%d\t%d\t%u\t0x%08x\t0x%016llx\t%u\t%u\t%u\t0x%08x\t"
		   "0x%08x\t0x%016llx\t%u\t0x%08x\t0x%016llx\t%d\t%zu\t%u\t%u\t%u\t%u\t%zu",
		s->frame, s->conn, s->dir == WT_CLIENT ? "c>s" : "s>c", s->index, s->ulpdu_len,
		s->tagged, s->last, s->opcode, s->stag, (unsigned long long)s->to, s->qn, s->msn,
		s->mo, s->inval_stag, s->sink_stag, (unsigned long long)s->sink_to, s->rd_size,
		s->src_stag, (unsigned long long)s->src_to, s->crc, mpa_pad_len(s->ulpdu_len),
		s->term_layer, s->term_etype, s->term_ecode, s->mpa_pos, s->wire_len);
	if (decoded)
		fprintf(f, "\t%s\t%u", s->error ? s->error : "-", s->first_frame);
	fputc('\n', f);
}
