/* Checks of what not every RNIC offers: each is NOT APPLICABLE, with the reason, where the
 * device reports it lacks the feature (a capability flag, or an opcode refused at post). */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "ck.h"

#define LW IBV_ACCESS_LOCAL_WRITE
#define RW IBV_ACCESS_REMOTE_WRITE
#define TAIL 64 /* octets after the expected data that must stay untouched */

/* The server's type 2 window over b, bound on the check's QP; NOT APPLICABLE when the
 * device has no type 2 windows (remote invalidation needs one: an MR from ibv_reg_mr may
 * not be invalidated remotely). */
static int bind_window(struct ic *ic, struct ic_buf *b, uint32_t *rkey)
{
	unsigned need = IBV_DEVICE_MEM_MGT_EXTENSIONS;
	if ((ic->dev.device_cap_flags & need) != need ||
	    !(ic->dev.device_cap_flags & (IBV_DEVICE_MEM_WINDOW_TYPE_2A |
					 IBV_DEVICE_MEM_WINDOW_TYPE_2B)))
		return ic_na(ic, "the server's device reports no IBV_DEVICE_MEM_MGT_EXTENSIONS or "
				 "no type 2 memory windows");
	ic->mw = ibv_alloc_mw(ic->pd, IBV_MW_TYPE_2);
	EXPECT(ic, ic->mw, "ibv_alloc_mw(type 2) failed though the device reports type 2 "
	       "windows: %s", strerror(errno));
	struct ibv_send_wr wr = { .wr_id = 70, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED };
	wr.bind_mw.mw = ic->mw;
	wr.bind_mw.rkey = *rkey = ibv_inc_rkey(ic->mw->rkey);
	wr.bind_mw.bind_info.mr = b->mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)b->p;
	wr.bind_mw.bind_info.length = b->len;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ic_post_wr(ic, &wr) != 0)
		return -1;
	return ic_expect_wc(ic, ic->conn.scq, 70, IBV_WC_SUCCESS, NULL);
}

/* T26 (verbs §7.8), RFC 5040 §5.3 Send with Invalidate: the server's Receive completes with
 * IBV_WC_WITH_INV naming the window's STag, and the STag is invalid afterwards: a Write to
 * it places nothing and terminates the stream (QP_ACCESS_ERR at the server, QP_FATAL at the
 * client). */
int ck_send_inv_srv(struct ic *ic)
{
	struct ic_buf *b = ic_buf_new(ic, 4096, LW | IBV_ACCESS_MW_BIND, 0);
	struct ic_buf *r = ic_buf_new(ic, 64, LW, 0);
	EXPECT(ic, b && r, "ibv_reg_mr failed: %s", strerror(errno));
	uint32_t rkey = 0;
	if (bind_window(ic, b, &rkey) != 0)
		return -1;
	struct ic_adv a = { (uintptr_t)b->p, rkey, 4096 };
	if (ic_post_recv(ic, 1, r, 0, 32) || ic_post_recv(ic, 2, r, 32, 32) ||
	    ic_step_send(ic, 1, &a))
		return -1;
	struct ibv_wc wc;
	if (ic_expect_wc(ic, ic->conn.rcq, 1, IBV_WC_SUCCESS, &wc) != 0)
		return -1;
	EXPECT(ic, (wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == a.rkey,
	       "Send with Invalidate of 0x%x: expected IBV_WC_WITH_INV naming it, saw flags "
	       "0x%x STag 0x%x", a.rkey, wc.wc_flags, wc.invalidated_rkey);
	EXPECT(ic, wc.byte_len == 16, "Send with Invalidate: byte_len %u, expected 16",
	       wc.byte_len);
	if (ic_step_send(ic, 2, NULL) || ic_expect_async(ic, IBV_EVENT_QP_ACCESS_ERR) ||
	    ic_expect_wc(ic, ic->conn.rcq, 2, IBV_WC_WR_FLUSH_ERR, NULL))
		return -1;
	EXPECT(ic, ic_buf_fill_diff(b, 0, 4096, 0) == 0,
	       "a Write through the invalidated STag placed data");
	return ic_step_recv(ic, 3, NULL);
}

int ck_send_inv_cli(struct ic *ic)
{
	struct ic_adv a;
	struct ic_buf *s = ic_buf_new(ic, 16, LW, 0x5a);
	EXPECT(ic, s, "ibv_reg_mr failed: %s", strerror(errno));
	if (ic_step_recv(ic, 1, &a))
		return -1;
	struct ibv_sge sg = ic_sge(s, 0, 16);
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED, .sg_list = &sg, .num_sge = 1,
				  .invalidate_rkey = a.rkey };
	if (ic_post_wr(ic, &wr) != 0 || ic_expect_wc(ic, ic->conn.scq, 1, IBV_WC_SUCCESS, NULL) || ic_step_recv(ic, 2, NULL))
		return -1;
	if (ic_post_send(ic, IBV_WR_RDMA_WRITE, 2, IBV_SEND_SIGNALED, &sg, 1, a.addr, a.rkey) ||
	    ic_expect_wc(ic, ic->conn.scq, 2, IBV_WC_SUCCESS, NULL) ||
	    ic_expect_async(ic, IBV_EVENT_QP_FATAL))
		return -1;
	return ic_step_send(ic, 3, NULL);
}

/* Post one WR with immediate data; NOT APPLICABLE when the device refuses the opcode. */
static int post_imm(struct ic *ic, enum ibv_wr_opcode op, struct ibv_sge *sg, int n,
		    uint32_t imm, const struct ic_adv *a)
{
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
				  .sg_list = sg, .num_sge = n, .imm_data = htonl(imm) };
	if (a) {
		wr.wr.rdma.remote_addr = a->addr;
		wr.wr.rdma.rkey = a->rkey;
	}
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(ic->conn.qp, &wr, &bad);
	if (rc == EINVAL || rc == EOPNOTSUPP)
		return ic_na(ic, "the client's device refuses %s at post (%s): no RFC 7306 "
				 "Immediate Data", op == IBV_WR_SEND_WITH_IMM ? "SEND_WITH_IMM" :
				 "RDMA_WRITE_WITH_IMM", strerror(rc));
	EXPECT(ic, rc == 0, "ibv_post_send with immediate failed: %s", strerror(rc));
	return ic_expect_wc(ic, ic->conn.scq, 1, IBV_WC_SUCCESS, NULL);
}

static int expect_imm(struct ic *ic, struct ibv_wc *wc, enum ibv_wc_opcode op, uint32_t len,
		      uint32_t imm)
{
	if (ic_expect_wc(ic, ic->conn.rcq, 1, IBV_WC_SUCCESS, wc) != 0)
		return -1;
	EXPECT(ic, wc->opcode == op && wc->byte_len == len && (wc->wc_flags & IBV_WC_WITH_IMM) &&
		   wc->imm_data == htonl(imm),
	       "expected opcode %d, byte_len %u, immediate 0x%x; saw opcode %d, byte_len %u, "
	       "flags 0x%x, immediate 0x%x", op, len, imm, wc->opcode, wc->byte_len,
	       wc->wc_flags, ntohl(wc->imm_data));
	return 0;
}

/* RFC 7306 Send with Immediate Data: 200 octets and the value arrive in one Receive. */
int ck_send_imm_srv(struct ic *ic)
{
	struct ic_buf *r = ic_buf_new(ic, 256, LW, 0);
	EXPECT(ic, r, "ibv_reg_mr failed: %s", strerror(errno));
	if (ic_post_recv(ic, 1, r, 0, 256) || ic_step_send(ic, 1, NULL) ||
	    ic_step_recv(ic, 2, NULL))
		return -1;
	struct ibv_wc wc;
	if (expect_imm(ic, &wc, IBV_WC_RECV, 200, 0x5eed1234) != 0)
		return -1;
	size_t d = ic_buf_pattern_diff(r, 0, 200, 4);
	EXPECT(ic, d == 0, "Send with Immediate: octet %zu differs", d - 1);
	EXPECT(ic, ic_buf_fill_diff(r, 200, 56, 0) == 0, "data placed beyond 200 octets");
	return 0;
}

int ck_send_imm_cli(struct ic *ic)
{
	struct ic_buf *s = ic_buf_new(ic, 200, LW, 0);
	EXPECT(ic, s, "ibv_reg_mr failed: %s", strerror(errno));
	ic_buf_pattern(s, 4);
	struct ibv_sge sg = ic_sge(s, 0, 200);
	if (ic_step_recv(ic, 1, NULL) || post_imm(ic, IBV_WR_SEND_WITH_IMM, &sg, 1, 0x5eed1234,
						    NULL))
		return -1;
	return ic_step_send(ic, 2, NULL);
}

/* RFC 7306 RDMA Write with Immediate Data: the data is in place when the Receive completes
 * (RECV_RDMA_WITH_IMM, byte_len 0), and the Receive's buffer is untouched. */
int ck_write_imm_srv(struct ic *ic)
{
	struct ic_buf *b = ic_buf_new(ic, 32768, LW | RW, 0);
	struct ic_buf *r = ic_buf_new(ic, 64, LW, 0);
	EXPECT(ic, b && r, "ibv_reg_mr failed: %s", strerror(errno));
	struct ic_adv a = { (uintptr_t)b->p, b->mr->rkey, 32768 };
	if (ic_post_recv(ic, 1, r, 0, 64) || ic_step_send(ic, 1, &a) || ic_step_recv(ic, 2, NULL))
		return -1;
	struct ibv_wc wc;
	if (expect_imm(ic, &wc, IBV_WC_RECV_RDMA_WITH_IMM, 0, 0xfeedf00d) != 0)
		return -1;
	size_t d = ic_buf_pattern_diff(b, 0, 32768, 5);
	EXPECT(ic, d == 0, "Write with Immediate: octet %zu differs", d - 1);
	EXPECT(ic, ic_buf_fill_diff(r, 0, 64, 0) == 0, "the Receive's buffer was written");
	return 0;
}

int ck_write_imm_cli(struct ic *ic)
{
	struct ic_adv a;
	struct ic_buf *s = ic_buf_new(ic, 32768, LW, 0);
	EXPECT(ic, s, "ibv_reg_mr failed: %s", strerror(errno));
	ic_buf_pattern(s, 5);
	struct ibv_sge sg = ic_sge(s, 0, 32768);
	if (ic_step_recv(ic, 1, &a) || post_imm(ic, IBV_WR_RDMA_WRITE_WITH_IMM, &sg, 1,
						  0xfeedf00d, &a))
		return -1;
	return ic_step_send(ic, 2, NULL);
}

/* Inline data (libibverbs' IBV_SEND_INLINE; not in the RDMA Verbs, whose §8.2.2 rules 8-10
 * leave a WR's buffers the RNIC's until it completes): the data is taken at post, so the
 * source may be reused as soon as ibv_post_send returns, and it needs no MR. The client's
 * QP asks for ck_table.c's inl octets; max_inline_data of its caps is what the check holds it to:
 * an RDMA Write of max octets, then Sends of 1 and of max octets (one SGE, then two), each
 * from an unregistered buffer overwritten right after its post, arrive as they were at post
 * (the Write is placed once a Send behind it has arrived: verbs §8.2.2 r13); then, once the
 * server has checked them, a Send of max + 1 inline octets is refused at post, and a plain
 * Send behind it is the next message the server receives. */
#define INL_SENDS 3
#define INL_MARK 8
#define INL_LIMIT (1u << 20) /* no device's inline maximum comes near */

int ck_send_inline_srv(struct ic *ic)
{
	struct ic_adv m;
	if (ic_step_recv(ic, 1, &m))
		return -1;
	EXPECT(ic, m.len > 0 && m.len <= INL_LIMIT, "the client's max_inline_data %u: not "
	       "between 1 and %u", m.len, INL_LIMIT);
	uint32_t len[INL_SENDS + 1] = { 1, m.len, m.len, INL_MARK };
	struct ic_buf *r[INL_SENDS + 1];
	for (int i = 0; i <= INL_SENDS; i++) {
		r[i] = ic_buf_new(ic, m.len + TAIL, LW, 0);
		EXPECT(ic, r[i], "ibv_reg_mr failed: %s", strerror(errno));
		if (ic_post_recv(ic, 1 + i, r[i], 0, m.len + TAIL))
			return -1;
	}
	struct ic_buf *w = ic_buf_new(ic, m.len + TAIL, LW | RW, 0);
	EXPECT(ic, w, "ibv_reg_mr failed: %s", strerror(errno));
	struct ic_adv a = { (uintptr_t)w->p, w->mr->rkey, m.len };
	if (ic_step_send(ic, 2, &a) || ic_step_recv(ic, 3, NULL))
		return -1;
	for (int i = 0; i <= INL_SENDS; i++) {
		if (i == INL_SENDS) { /* the inline WRs are good: now the one too large */
			if (ic_step_send(ic, 4, NULL) || ic_step_recv(ic, 5, NULL))
				return -1;
		}
		struct ibv_wc wc;
		if (ic_expect_wc(ic, ic->conn.rcq, 1 + i, IBV_WC_SUCCESS, &wc))
			return -1;
		EXPECT(ic, wc.byte_len == len[i], "%s: byte_len %u, expected %u",
		       i == INL_SENDS ? "the plain Send behind the refused one" : "inline Send",
		       wc.byte_len, len[i]);
		if (i < INL_SENDS) {
			size_t d = ic_buf_pattern_diff(r[i], 0, len[i], 20 + i);
			EXPECT(ic, d == 0, "inline Send %d of %u octets: octet %zu is not what the "
			       "source held at post", i + 1, len[i], d - 1);
		}
		size_t d = ic_buf_fill_diff(r[i], len[i], TAIL, 0);
		EXPECT(ic, d == 0, "Send %d of %u octets placed octet %zu beyond its length", i + 1,
		       len[i], d - 1);
		if (i == 0) { /* a Send behind the Write has arrived: the Write is placed */
			d = ic_buf_pattern_diff(w, 0, m.len, 20 + INL_SENDS);
			EXPECT(ic, d == 0, "inline RDMA Write of %u octets: octet %zu is not what "
			       "the source held at post", m.len, d - 1);
			d = ic_buf_fill_diff(w, m.len, TAIL, 0);
			EXPECT(ic, d == 0, "inline RDMA Write placed octet %zu beyond its length",
			       d - 1);
		}
	}
	return 0;
}

/* Post an inline WR from sources the caller filled, then overwrite them at once. */
static int post_inline(struct ic *ic, enum ibv_wr_opcode op, uint64_t id, struct ibv_sge *sg,
		       int n, const struct ic_adv *a, struct ic_buf *src)
{
	struct ibv_send_wr wr = { .wr_id = id, .opcode = op, .sg_list = sg, .num_sge = n,
				  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE };
	if (a) {
		wr.wr.rdma.remote_addr = a->addr;
		wr.wr.rdma.rkey = a->rkey;
	}
	if (ic_post_wr(ic, &wr) != 0)
		return -1;
	memset(src->p, 0xee, src->len);
	return 0;
}

int ck_send_inline_cli(struct ic *ic)
{
	uint32_t max = ic->conn.cap.max_inline_data;
	if (max == 0)
		return ic_na(ic, "the client's QP reports max_inline_data 0 (asked %u): no inline "
			     "data", (unsigned)ic_checks[ic->check].inl);
	EXPECT(ic, max <= INL_LIMIT, "max_inline_data %u: more than %u", max, INL_LIMIT);
	struct ic_adv m = { 0, 0, max }, a;
	if (ic_step_send(ic, 1, &m) || ic_step_recv(ic, 2, &a))
		return -1;
	struct ic_buf *s[INL_SENDS + 1], *big = ic_buf_new(ic, max + 1, -1, 0x77);
	struct ic_buf *mark = ic_buf_new(ic, INL_MARK, LW, 0x11);
	EXPECT(ic, big && mark, "buffer or ibv_reg_mr failed: %s", strerror(errno));
	for (int i = 0; i <= INL_SENDS; i++) { /* the last: the Write's source */
		s[i] = ic_buf_new(ic, i == 0 ? 1 : max, -1, 0);
		EXPECT(ic, s[i], "no memory for a source");
		ic_buf_pattern(s[i], 20 + i);
	}
	struct ibv_sge sg[2] = { ic_sge(s[3], 0, max) };
	if (post_inline(ic, IBV_WR_RDMA_WRITE, 1, sg, 1, &a, s[3]))
		return -1;
	sg[0] = ic_sge(s[0], 0, 1);
	if (post_inline(ic, IBV_WR_SEND, 2, sg, 1, NULL, s[0]))
		return -1;
	sg[0] = ic_sge(s[1], 0, max);
	if (post_inline(ic, IBV_WR_SEND, 3, sg, 1, NULL, s[1]))
		return -1;
	/* two SGEs where the QP has them: the device gathers inline data too */
	int n = ic->conn.cap.max_send_sge >= 2 && max >= 2 ? 2 : 1;
	sg[0] = ic_sge(s[2], 0, n == 2 ? max / 2 : max);
	sg[1] = ic_sge(s[2], max / 2, max - max / 2);
	if (post_inline(ic, IBV_WR_SEND, 4, sg, n, NULL, s[2]))
		return -1;
	for (uint64_t id = 1; id <= 4; id++)
		if (ic_expect_wc(ic, ic->conn.scq, id, IBV_WC_SUCCESS, NULL))
			return -1;
	if (ic_step_send(ic, 3, NULL) || ic_step_recv(ic, 4, NULL))
		return -1;
	sg[0] = ic_sge(big, 0, max + 1);
	struct ibv_send_wr wr = { .wr_id = 9, .opcode = IBV_WR_SEND, .sg_list = sg, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE }, *bad = NULL;
	int rc = ibv_post_send(ic->conn.qp, &wr, &bad);
	EXPECT(ic, rc != 0, "an inline Send of %u octets, one above max_inline_data, was "
	       "accepted at post", max + 1);
	sg[0] = ic_sge(mark, 0, INL_MARK);
	if (ic_post_send(ic, IBV_WR_SEND, 5, IBV_SEND_SIGNALED, sg, 1, 0, 0) ||
	    ic_expect_wc(ic, ic->conn.scq, 5, IBV_WC_SUCCESS, NULL))
		return -1;
	return ic_step_send(ic, 5, NULL);
}
