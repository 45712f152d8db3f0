/* Data transfer checks on a fresh connection: the client is the requester, the server the
 * responder; the server offers its memory over the control channel, and checks every octet
 * and every guard. */
#include <errno.h>
#include <string.h>

#include "ck.h"

#define LW IBV_ACCESS_LOCAL_WRITE
#define RW IBV_ACCESS_REMOTE_WRITE
#define RR IBV_ACCESS_REMOTE_READ
#define TAIL 64 /* octets after a Receive's expected data that must stay untouched */
#define NSIZES 5

/* Send sizes: 0, 1, a page less one, a page, and the largest message both ports take
 * (at most 1 MiB). */
static void sizes(const struct ic *ic, uint32_t s[NSIZES])
{
	uint64_t max = ic->max_msg < (1u << 20) ? ic->max_msg : (1u << 20);
	s[0] = 0;
	s[1] = 1;
	s[2] = 4095;
	s[3] = 4096;
	s[4] = (uint32_t)max;
}

/* RFC 5040 §5.3, verbs §8.1.2, T40: each Send lands in its own Receive, byte_len exact,
 * nothing placed beyond it. */
int ck_send_sizes_srv(struct ic *ic)
{
	uint32_t s[NSIZES];
	struct ic_buf *b[NSIZES];
	sizes(ic, s);
	for (int i = 0; i < NSIZES; i++) {
		b[i] = ic_buf_new(ic, s[i] + TAIL, LW, 0);
		EXPECT(ic, b[i], "ibv_reg_mr(%u) failed: %s", s[i] + TAIL, strerror(errno));
		if (ic_post_recv(ic, 10 + i, b[i], 0, s[i] + TAIL) != 0)
			return -1;
	}
	if (ic_step_send(ic, 1, NULL) != 0 || ic_step_recv(ic, 2, NULL) != 0)
		return -1;
	for (int i = 0; i < NSIZES; i++) {
		struct ibv_wc wc;
		if (ic_expect_wc(ic, ic->conn.rcq, 10 + i, IBV_WC_SUCCESS, &wc) != 0)
			return -1;
		EXPECT(ic, wc.opcode == IBV_WC_RECV && !(wc.wc_flags & IBV_WC_WITH_IMM),
		       "Receive of %u octets: expected opcode RECV without immediate, saw %d "
		       "flags 0x%x", s[i], wc.opcode, wc.wc_flags);
		EXPECT(ic, wc.byte_len == s[i], "Receive of %u octets: byte_len %u", s[i],
		       wc.byte_len);
		size_t d = ic_buf_pattern_diff(b[i], 0, s[i], 10 + i);
		EXPECT(ic, d == 0, "Send of %u octets: octet %zu differs", s[i], d - 1);
		d = ic_buf_fill_diff(b[i], s[i], TAIL, 0);
		EXPECT(ic, d == 0, "Send of %u octets placed octet %zu beyond its length", s[i],
		       d - 1);
	}
	return 0;
}

int ck_send_sizes_cli(struct ic *ic)
{
	uint32_t s[NSIZES];
	sizes(ic, s);
	if (ic_step_recv(ic, 1, NULL) != 0)
		return -1;
	for (int i = 0; i < NSIZES; i++) {
		/* an MR of at least one octet: a zero-length region is not every RNIC's */
		struct ic_buf *b = ic_buf_new(ic, s[i] ? s[i] : 1, LW, 0);
		EXPECT(ic, b, "ibv_reg_mr(%u) failed: %s", s[i] ? s[i] : 1, strerror(errno));
		ic_buf_pattern(b, 10 + i);
		struct ibv_sge sg = ic_sge(b, 0, s[i]);
		if (ic_post_send(ic, IBV_WR_SEND, 10 + i, IBV_SEND_SIGNALED, &sg, 1, 0, 0) != 0)
			return -1;
	}
	for (int i = 0; i < NSIZES; i++) {
		struct ibv_wc wc;
		if (ic_expect_wc(ic, ic->conn.scq, 10 + i, IBV_WC_SUCCESS, &wc) != 0)
			return -1;
		EXPECT(ic, wc.opcode == IBV_WC_SEND, "Send completion: opcode %d, expected SEND",
		       wc.opcode);
	}
	return ic_step_send(ic, 2, NULL);
}

/* RFC 5040 §5.1, T15: a Write filling a region exactly places every octet, none beyond. */
#define WRITE_LEN 65536
int ck_write_srv(struct ic *ic)
{
	struct ic_buf *b = ic_buf_new(ic, WRITE_LEN, LW | RW, 0);
	EXPECT(ic, b, "ibv_reg_mr(LW|RW) failed: %s", strerror(errno));
	struct ic_buf *m = ic_buf_new(ic, 8, LW, 0);
	EXPECT(ic, m, "ibv_reg_mr(8) failed: %s", strerror(errno));
	struct ic_adv a = { (uintptr_t)b->p, b->mr->rkey, WRITE_LEN };
	if (ic->fault == F_DEREG_MR) { /* the tool's self-test: offer a deregistered region */
		ibv_dereg_mr(b->mr);
		b->mr = NULL;
	}
	if (ic_post_recv(ic, 1, m, 0, 8) || ic_step_send(ic, 1, &a) || ic_step_recv(ic, 2, NULL))
		return -1;
	/* the Send behind the Write: once it completes, the Write is placed (RFC 5040 §5.5) */
	if (ic_expect_wc(ic, ic->conn.rcq, 1, IBV_WC_SUCCESS, NULL) != 0)
		return -1;
	size_t d = ic_buf_pattern_diff(b, 0, WRITE_LEN, 2);
	EXPECT(ic, d == 0, "RDMA Write of %d octets: octet %zu differs", WRITE_LEN, d - 1);
	return 0;
}

int ck_write_cli(struct ic *ic)
{
	struct ic_adv a;
	if (ic_step_recv(ic, 1, &a) != 0)
		return -1;
	struct ic_buf *s = ic_buf_new(ic, a.len, LW, 0);
	EXPECT(ic, s, "ibv_reg_mr(%u) failed: %s", a.len, strerror(errno));
	ic_buf_pattern(s, 2);
	struct ibv_sge sg = ic_sge(s, 0, a.len);
	if (ic_post_send(ic, IBV_WR_RDMA_WRITE, 1, IBV_SEND_SIGNALED, &sg, 1, a.addr, a.rkey) ||
	    ic_expect_wc(ic, ic->conn.scq, 1, IBV_WC_SUCCESS, NULL) != 0)
		return -1;
	/* a Send behind the Write: its arrival says the Write was placed (RFC 5040 §5.5) */
	struct ic_buf *m = ic_buf_new(ic, 8, LW, 0);
	EXPECT(ic, m, "ibv_reg_mr(8) failed: %s", strerror(errno));
	struct ibv_sge ms = ic_sge(m, 0, 8);
	if (ic_post_send(ic, IBV_WR_SEND, 2, IBV_SEND_SIGNALED, &ms, 1, 0, 0) ||
	    ic_expect_wc(ic, ic->conn.scq, 2, IBV_WC_SUCCESS, NULL) != 0)
		return -1;
	return ic_step_send(ic, 2, NULL);
}

/* RFC 5040 §5.2, T20: Reads of 1 MiB and of 100 octets return the source exactly. */
#define READ_BIG (1u << 20)
#define READ_SMALL 100u
int ck_read_srv(struct ic *ic)
{
	struct ic_buf *b = ic_buf_new(ic, READ_BIG + READ_SMALL, LW | RR, 0);
	EXPECT(ic, b, "ibv_reg_mr(LW|RR) failed: %s", strerror(errno));
	ic_buf_pattern(b, 3);
	struct ic_adv a = { (uintptr_t)b->p, b->mr->rkey, (uint32_t)b->len };
	if (ic_step_send(ic, 1, &a) != 0 || ic_step_recv(ic, 2, NULL) != 0)
		return -1;
	size_t d = ic_buf_pattern_diff(b, 0, b->len, 3);
	EXPECT(ic, d == 0, "the Read source changed at octet %zu", d - 1);
	return 0;
}

int ck_read_cli(struct ic *ic)
{
	struct ic_adv a;
	if (ic_step_recv(ic, 1, &a) != 0)
		return -1;
	/* iWARP places Read Responses through the sink's STag: some RNICs want Remote Write */
	struct ic_buf *s = ic_buf_new(ic, READ_BIG + READ_SMALL, LW | RW, 0);
	EXPECT(ic, s, "ibv_reg_mr(LW|RW) failed: %s", strerror(errno));
	struct ibv_sge s1 = ic_sge(s, 0, READ_BIG), s2 = ic_sge(s, READ_BIG, READ_SMALL);
	if (ic_post_send(ic, IBV_WR_RDMA_READ, 1, IBV_SEND_SIGNALED, &s1, 1, a.addr, a.rkey) ||
	    ic_post_send(ic, IBV_WR_RDMA_READ, 2, IBV_SEND_SIGNALED, &s2, 1, a.addr + READ_BIG,
			 a.rkey))
		return -1;
	struct ibv_wc wc;
	if (ic_expect_wc(ic, ic->conn.scq, 1, IBV_WC_SUCCESS, &wc) != 0)
		return -1;
	EXPECT(ic, wc.opcode == IBV_WC_RDMA_READ, "Read completion: opcode %d, expected "
	       "RDMA_READ", wc.opcode);
	if (ic_expect_wc(ic, ic->conn.scq, 2, IBV_WC_SUCCESS, NULL) != 0)
		return -1;
	size_t d = ic_buf_pattern_diff(s, 0, s->len, 3);
	EXPECT(ic, d == 0, "Read data: octet %zu differs", d - 1);
	return ic_step_send(ic, 2, NULL);
}

/* T40 (§7.6.3, §8.1.3.2): zero-length Send, Read and Write check no STag: a garbage one
 * completes Success; the Send consumes a Receive with byte_len 0 and places nothing. */
int ck_zero_srv(struct ic *ic)
{
	struct ic_buf *b = ic_buf_new(ic, 64, LW, 0x33);
	EXPECT(ic, b, "ibv_reg_mr(64) failed: %s", strerror(errno));
	if (ic_post_recv(ic, 1, b, 0, 64) || ic_step_send(ic, 1, NULL) || ic_step_recv(ic, 2, NULL))
		return -1;
	struct ibv_wc wc;
	if (ic_expect_wc(ic, ic->conn.rcq, 1, IBV_WC_SUCCESS, &wc) != 0)
		return -1;
	EXPECT(ic, wc.byte_len == 0, "zero-length Send: byte_len %u", wc.byte_len);
	EXPECT(ic, ic_buf_fill_diff(b, 0, 64, 0x33) == 0, "zero-length Send placed data");
	return 0;
}

int ck_zero_cli(struct ic *ic)
{
	struct ibv_sge bad = { 0x1000, 0, 0x7777701 };
	if (ic_step_recv(ic, 1, NULL) ||
	    ic_post_send(ic, IBV_WR_SEND, 1, IBV_SEND_SIGNALED, &bad, 1, 0, 0) ||
	    ic_post_send(ic, IBV_WR_RDMA_READ, 2, IBV_SEND_SIGNALED, &bad, 1, 0x10, 0xabcdef02) ||
	    ic_post_send(ic, IBV_WR_RDMA_WRITE, 3, IBV_SEND_SIGNALED, &bad, 1, 0x20, 0xabcdef03))
		return -1;
	for (uint64_t id = 1; id <= 3; id++)
		if (ic_expect_wc(ic, ic->conn.scq, id, IBV_WC_SUCCESS, NULL) != 0)
			return -1;
	return ic_step_send(ic, 2, NULL);
}

/* T10 (§8.1.3.1): 10 unsignaled Sends and a signaled one give one completion; all 11 arrive. */
#define UNSIG 11
int ck_unsignaled_srv(struct ic *ic)
{
	struct ic_buf *b = ic_buf_new(ic, UNSIG * 16, LW, 0);
	EXPECT(ic, b, "ibv_reg_mr failed: %s", strerror(errno));
	for (int i = 0; i < UNSIG; i++)
		if (ic_post_recv(ic, 20 + i, b, 16 * i, 16) != 0)
			return -1;
	if (ic_step_send(ic, 1, NULL) || ic_step_recv(ic, 2, NULL))
		return -1;
	for (int i = 0; i < UNSIG; i++) {
		struct ibv_wc wc;
		if (ic_expect_wc(ic, ic->conn.rcq, 20 + i, IBV_WC_SUCCESS, &wc) != 0)
			return -1;
		EXPECT(ic, wc.byte_len == 8 && b->p[16 * i] == i,
		       "Send %d: byte_len %u first octet %u", i, wc.byte_len, b->p[16 * i]);
	}
	return 0;
}

int ck_unsignaled_cli(struct ic *ic)
{
	struct ic_buf *s = ic_buf_new(ic, UNSIG * 8, LW, 0);
	EXPECT(ic, s, "ibv_reg_mr failed: %s", strerror(errno));
	if (ic_step_recv(ic, 1, NULL) != 0)
		return -1;
	for (int i = 0; i < UNSIG; i++) {
		s->p[8 * i] = (uint8_t)i;
		struct ibv_sge sg = ic_sge(s, 8 * (size_t)i, 8);
		unsigned fl = i == UNSIG - 1 ? IBV_SEND_SIGNALED : 0;
		if (ic_post_send(ic, IBV_WR_SEND, 100 + i, fl, &sg, 1, 0, 0) != 0)
			return -1;
	}
	if (ic_expect_wc(ic, ic->conn.scq, 100 + UNSIG - 1, IBV_WC_SUCCESS, NULL) != 0 ||
	    ic_expect_no_wc(ic, ic->conn.scq, 200) != 0)
		return -1;
	return ic_step_send(ic, 2, NULL);
}

/* Scatter/gather (verbs §8.1.2, T40's message rules; RFC 5041 §5.3: one message, however
 * many SGEs): the client gathers one 111-octet message from three SGEs of its buffer, RDMA
 * Writes it to the server's region, then Sends it; the server's Receive scatters it over
 * three SGEs of 10, 1 and 100 octets with gaps between them. Every octet lands where the
 * SGE list says, nothing in the gaps; byte_len is the message. NOT APPLICABLE where a side's
 * device has fewer than three SGEs per WR. */
#define SGL_MSG 111
static const uint32_t sgl_send_off[3] = { 0, 100, 200 }, sgl_send_len[3] = { 50, 11, 50 };
static const uint32_t sgl_recv_off[3] = { 0, 64, 128 }, sgl_recv_len[3] = { 10, 1, 100 };

static uint8_t sgl_octet(uint32_t i)
{
	return (uint8_t)(i * 7 + 3);
}

/* Whether the scattered pieces of the message in b hold it exactly, the gaps untouched. */
static int sgl_scattered(struct ic *ic, const struct ic_buf *b, const char *what)
{
	uint32_t m = 0, at = 0;
	for (int j = 0; j < 3; j++) {
		size_t gap = ic_buf_fill_diff(b, at, sgl_recv_off[j] - at, 0);
		EXPECT(ic, gap == 0, "%s: octet %zu between the SGEs changed", what, gap - 1);
		for (uint32_t k = 0; k < sgl_recv_len[j]; k++, m++)
			EXPECT(ic, b->p[sgl_recv_off[j] + k] == sgl_octet(m),
			       "%s: message octet %u (SGE %d) differs", what, m, j);
		at = sgl_recv_off[j] + sgl_recv_len[j];
	}
	size_t tail = ic_buf_fill_diff(b, at, b->len - at, 0);
	EXPECT(ic, tail == 0, "%s: octet %zu after the last SGE changed", what, tail - 1);
	return 0;
}

int ck_sgl_srv(struct ic *ic)
{
	if (ic->dev.max_sge < IC_SGES)
		return ic_na(ic, "the server's device takes %d SGEs per WR (max_sge), the check "
			     "needs %d", ic->dev.max_sge, IC_SGES);
	struct ic_buf *w = ic_buf_new(ic, SGL_MSG + TAIL, LW | RW, 0);
	struct ic_buf *r = ic_buf_new(ic, 256, LW, 0);
	EXPECT(ic, w && r, "ibv_reg_mr failed: %s", strerror(errno));
	struct ibv_sge sg[3];
	for (int j = 0; j < 3; j++)
		sg[j] = ic_sge(r, sgl_recv_off[j], sgl_recv_len[j]);
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = sg, .num_sge = 3 }, *bad = NULL;
	int rc = ibv_post_recv(ic->conn.qp, &wr, &bad);
	EXPECT(ic, rc == 0, "ibv_post_recv with 3 SGEs failed: %s", strerror(rc));
	struct ic_adv a = { (uintptr_t)w->p, w->mr->rkey, SGL_MSG };
	struct ibv_wc wc;
	if (ic_step_send(ic, 1, &a) || ic_expect_wc(ic, ic->conn.rcq, 1, IBV_WC_SUCCESS, &wc))
		return -1;
	EXPECT(ic, wc.byte_len == SGL_MSG, "the scattered Receive: byte_len %u, expected %d",
	       wc.byte_len, SGL_MSG);
	for (uint32_t i = 0; i < SGL_MSG; i++)
		EXPECT(ic, w->p[i] == sgl_octet(i), "the gathered Write: octet %u differs", i);
	size_t d = ic_buf_fill_diff(w, SGL_MSG, TAIL, 0);
	EXPECT(ic, d == 0, "the gathered Write placed octet %zu beyond the message", d - 1);
	if (sgl_scattered(ic, r, "the scattered Receive"))
		return -1;
	return ic_step_recv(ic, 2, NULL);
}

int ck_sgl_cli(struct ic *ic)
{
	if (ic->dev.max_sge < IC_SGES)
		return ic_na(ic, "the client's device takes %d SGEs per WR (max_sge), the check "
			     "needs %d", ic->dev.max_sge, IC_SGES);
	struct ic_adv a;
	struct ic_buf *s = ic_buf_new(ic, 256, LW, 0);
	EXPECT(ic, s, "ibv_reg_mr failed: %s", strerror(errno));
	struct ibv_sge sg[3];
	for (uint32_t j = 0, m = 0; j < 3; j++) {
		for (uint32_t k = 0; k < sgl_send_len[j]; k++, m++)
			s->p[sgl_send_off[j] + k] = sgl_octet(m);
		sg[j] = ic_sge(s, sgl_send_off[j], sgl_send_len[j]);
	}
	if (ic_step_recv(ic, 1, &a) ||
	    ic_post_send(ic, IBV_WR_RDMA_WRITE, 1, IBV_SEND_SIGNALED, sg, 3, a.addr, a.rkey) ||
	    ic_post_send(ic, IBV_WR_SEND, 2, IBV_SEND_SIGNALED, sg, 3, 0, 0) ||
	    ic_expect_wc(ic, ic->conn.scq, 1, IBV_WC_SUCCESS, NULL) ||
	    ic_expect_wc(ic, ic->conn.scq, 2, IBV_WC_SUCCESS, NULL))
		return -1;
	return ic_step_send(ic, 2, NULL);
}
