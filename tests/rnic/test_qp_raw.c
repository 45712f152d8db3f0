/* A QP against a raw peer that writes FPDUs by hand (T37 wire integrity, garbage input): the
 * exact Terminate on the wire, the async event, the QP's state, never a crash. */
#include "test_qp_util.h"
#include "test_lend_conn.h"
#include "rn_qp_int.h"

struct rawfx {
	struct qdev d;
	struct qside b;             /* the QP under test */
	struct rn_cm_handoff raw;   /* the raw peer's end */
	struct mpa_tx tx;
	struct qbuf rbuf;
	struct lend_conn *lend;     /* the QP's stream lends its buffers (rx_run_lent) */
};

static int setup_full(void **state, bool crc, bool lend)
{
	struct rawfx *f = calloc(1, sizeof(*f));
	qdev_init(&f->d);
	qside_create(&f->b, &f->d, NULL);
	q_cm_pair(&f->raw, &f->b.h, crc, false);
	if (lend) {
		f->b.h.conn = lend_wrap(f->b.h.conn, 12345u);
		f->lend = lend_of(f->b.h.conn);
	}
	q_rts(&f->b);
	mpa_tx_init(&f->tx, f->raw.params.crc, f->raw.params.markers_tx);
	f->tx.pos = f->raw.tx_pos;
	qbuf_new(&f->d, &f->rbuf, 4096, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE);
	assert_int_equal(q_recv(&f->b, 1, &f->rbuf, 0, 4096), RN_OK);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_full(state, true, false);
}

static int setup_nocrc(void **state)
{
	return setup_full(state, false, false);
}

static int setup_lend(void **state)
{
	return setup_full(state, true, true);
}

static int setup_lend_nocrc(void **state)
{
	return setup_full(state, false, true);
}

/* B segments for an Ethernet-sized MSS whatever the loopback MSS is. */
static int setup_emss1448(void **state)
{
	struct rawfx *f = calloc(1, sizeof(*f));
	qdev_init(&f->d);
	qside_create(&f->b, &f->d, NULL);
	q_cm_pair(&f->raw, &f->b.h, false, false);
	f->b.h.emss = 1448;
	q_rts(&f->b);
	mpa_tx_init(&f->tx, f->raw.params.crc, f->raw.params.markers_tx);
	f->tx.pos = f->raw.tx_pos;
	qbuf_new(&f->d, &f->rbuf, 4096, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE);
	assert_int_equal(q_recv(&f->b, 1, &f->rbuf, 0, 4096), RN_OK);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct rawfx *f = *state;
	qside_destroy(&f->b);
	qbuf_free(&f->d, &f->rbuf);
	if (f->raw.conn)
		rn_conn_abort(f->raw.conn);
	free(f->raw.rx);
	qdev_fini(&f->d);
	free(f);
	return 0;
}

/* Send everything, letting the QP read meanwhile (it may answer and stop reading). */
static void raw_send(struct rawfx *f, const void *p, size_t n)
{
	long long end = t_now_ms() + Q_WAIT_MS;
	size_t off = 0;
	while (off < n && t_now_ms() < end) {
		struct iovec iov = { (char *)p + off, n - off };
		ssize_t k = rn_conn_sendv(f->raw.conn, &iov, 1);
		if (k > 0)
			off += (size_t)k;
		else if (k != -EAGAIN)
			break;
		rn_qp_on_readable(f->b.qp);
		rn_qp_on_writable(f->b.qp);
	}
}

/* Frame a ULPDU like a correct peer (CRC as negotiated); optionally corrupt the CRC. */
static void raw_fpdu(struct rawfx *f, const uint8_t *ulpdu, size_t n, bool bad_crc)
{
	uint8_t out[2048];
	struct iovec iov = { (void *)ulpdu, n };
	ssize_t len = mpa_tx_encode(&f->tx, &iov, 1, out, sizeof(out));
	assert_true(len > 0);
	if (bad_crc)
		out[len - 1] ^= 0xff;
	raw_send(f, out, (size_t)len);
}

static size_t send_ulpdu(uint8_t *u, uint8_t ctrl0, uint8_t rdmap_ctrl, uint32_t qn, uint32_t msn,
			 size_t payload)
{
	memset(u, 0, DDP_UNTAGGED_HDR_LEN + payload);
	u[0] = ctrl0;
	u[1] = rdmap_ctrl;
	u[6] = (uint8_t)(qn >> 24);
	u[7] = (uint8_t)(qn >> 16);
	u[8] = (uint8_t)(qn >> 8);
	u[9] = (uint8_t)qn;
	u[13] = (uint8_t)msn;
	for (size_t i = 0; i < payload; i++)
		u[DDP_UNTAGGED_HDR_LEN + i] = (uint8_t)i;
	return DDP_UNTAGGED_HDR_LEN + payload;
}

struct got {
	bool term;
	struct rdmap_msg m;
	uint8_t ulpdu[256];
};

static int on_ulpdu(void *arg, const uint8_t *u, size_t len)
{
	struct got *g = arg;
	struct iwarp_err e;
	if (g->term || len > sizeof(g->ulpdu))
		return 0;
	memcpy(g->ulpdu, u, len);
	if (rdmap_msg_decode(g->ulpdu, len, &g->m, &e) == 0 && g->m.opcode == RDMAP_OP_TERMINATE)
		g->term = true;
	return 0;
}

/* Drive B and read what it sends until end of stream; decode the Terminate. */
static void read_term(struct rawfx *f, struct got *g)
{
	struct mpa_rx_cfg rc = { .crc = f->raw.params.crc, .pos = f->raw.rx_pos };
	struct mpa_rx rx;
	uint8_t buf[4096], asm_buf[65536];
	long long end = t_now_ms() + Q_WAIT_MS;
	memset(g, 0, sizeof(*g));
	mpa_rx_init(&rx, &rc);
	while (t_now_ms() < end) {
		rn_qp_on_readable(f->b.qp);
		rn_qp_on_writable(f->b.qp);
		ssize_t n = rn_conn_recv(f->raw.conn, buf, sizeof(buf));
		if (n == 0)
			break;
		if (n > 0)
			assert_true(mpa_rx_feed(&rx, buf, (size_t)n, asm_buf, sizeof(asm_buf), on_ulpdu,
						g) >= 0);
		else
			poll(NULL, 0, 1);
	}
	/* B sent FIN after the Terminate; our FIN lets it reach Error */
	rn_conn_shutdown_write(f->raw.conn);
	end = t_now_ms() + Q_WAIT_MS;
	while (t_now_ms() < end && q_state(&f->b) != RN_QPS_ERROR) {
		rn_qp_on_readable(f->b.qp);
		rn_qp_on_writable(f->b.qp);
		poll(NULL, 0, 1);
	}
	assert_int_equal(q_state(&f->b), RN_QPS_ERROR);
}

static void expect_term(struct rawfx *f, uint16_t code, enum rn_event_id ev, bool hdr)
{
	struct got g;
	read_term(f, &g);
	assert_true(g.term);
	assert_int_equal(g.m.ddp.qn, RDMAP_QN_TERMINATE);
	assert_int_equal(g.m.ddp.msn, 1);
	assert_true(g.m.ddp.last);
	assert_int_equal(iwarp_err_u16(g.m.u.term.err), code);
	assert_int_equal(g.m.u.term.d, hdr);
	assert_int_equal(q_event(&f->d, f->b.qp), ev);
	q_expect(&f->b, NULL, f->b.rcq, 1, RN_WC_FLUSHED);
	assert_true(qbuf_guards_ok(&f->rbuf));
}

/* An untagged ULPDU (send_ulpdu's fields) sent in an FPDU with a good CRC: the QP answers
 * with the Terminate expect_term checks. */
static void send_expect_term(struct rawfx *f, uint8_t ctrl0, uint8_t rdmap_ctrl, uint32_t qn,
			     uint32_t msn, size_t payload, uint16_t code, enum rn_event_id ev,
			     bool hdr)
{
	uint8_t u[128];
	raw_fpdu(f, u, send_ulpdu(u, ctrl0, rdmap_ctrl, qn, msn, payload), false);
	expect_term(f, code, ev, hdr);
}

/* Sanity: a hand-framed Send is received. */
static void test_raw_send_ok(void **state)
{
	struct rawfx *f = *state;
	uint8_t u[128];
	size_t n = send_ulpdu(u, 0x40 | 1, RDMAP_CTRL(RDMAP_OP_SEND), 0, 1, 50);
	raw_fpdu(f, u, n, false);
	struct rn_cqe e;
	assert_true(q_poll(&f->b, NULL, f->b.rcq, &e));
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.byte_len, 50);
	assert_int_equal(f->rbuf.p[49], 49);
}

/* The same through a stream that lends its buffers in runs of 1 octet to 1 KiB. */
static void test_lend_send_ok(void **state)
{
	struct rawfx *f = *state;
	test_raw_send_ok(state);
	assert_true(f->lend->lends > 0);
}

/* T37: CRC error -> "LLP Integrity Error: Invalid CRC", Terminate LLP/MPA 0x02, nothing
 * placed. */
static void test_crc_error_T37(void **state)
{
	struct rawfx *f = *state;
	uint8_t u[128];
	size_t n = send_ulpdu(u, 0x40 | 1, RDMAP_CTRL(RDMAP_OP_SEND), 0, 1, 50);
	raw_fpdu(f, u, n, true);
	expect_term(f, 0x2002, RN_AE_LLP_INVALID_CRC, false);
	assert_int_equal(f->rbuf.p[49], 0);
	/* the counters softrnic-stat shows: the FPDU arrived, failed its CRC, was answered */
	const struct rn_stats_ctrs *c = &f->b.qp->st_qp->c;
	assert_int_equal(c->crc_errors, 1);
	assert_int_equal(c->marker_errors, 0);
	assert_int_equal(c->rx_fpdus, 1);
	assert_int_equal(c->rx_msgs[RN_STATS_OP_SEND], 0);
	assert_int_equal(c->term_tx[IWARP_LAYER_LLP][MPA_TERM_ETYPE_MPA], 1);
}

/* T37: DDP version 2 on an untagged segment -> 0x1206. */
static void test_ddp_version_T37(void **state)
{
	struct rawfx *f = *state;
	send_expect_term(f, 0x40 | 2, RDMAP_CTRL(RDMAP_OP_SEND), 0, 1, 8,
			 0x1206, RN_AE_REM_INVALID_DDP_VERSION, false);
}

/* T37: reserved RDMAP opcode 0x8 -> 0x0206. */
static void test_bad_opcode_T37(void **state)
{
	struct rawfx *f = *state;
	send_expect_term(f, 0x40 | 1, RDMAP_CTRL(0x8), 0, 1, 8,
			 0x0206, RN_AE_REM_UNEXPECTED_OPCODE, false);
}

/* T37: DDP queue number 5 -> 0x1201, header copied. */
static void test_bad_qn_T37(void **state)
{
	struct rawfx *f = *state;
	send_expect_term(f, 0x40 | 1, RDMAP_CTRL(RDMAP_OP_SEND), 5, 1, 8,
			 0x1201, RN_AE_REM_INVALID_DDP_QN, true);
}

/* A gap in the Send MSNs -> 0x1203 (MSN gap). */
static void test_msn_gap(void **state)
{
	struct rawfx *f = *state;
	send_expect_term(f, 0x40 | 1, RDMAP_CTRL(RDMAP_OP_SEND), 0, 3, 8,
			 0x1203, RN_AE_RQ_MSN_RANGE, true);
}

/* Write with STag 0 to a privileged QP -> Invalid STag (T29). */
static void test_write_stag0_T29(void **state)
{
	struct rawfx *f = *state;
	uint8_t u[64] = { 0xc0 | 1, RDMAP_CTRL(RDMAP_OP_WRITE) };   /* T, L, STag 0, TO 0 */
	raw_fpdu(f, u, DDP_TAGGED_HDR_LEN + 16, false);
	expect_term(f, 0x1100, RN_AE_PROT_INVALID_STAG, true);
}

/* Garbage: random octets as the stream (no CRC). A Terminate or a reset, never a crash; the
 * registered buffer's guards are intact. */
static void test_garbage(void **state)
{
	struct rawfx *f = *state;
	static uint8_t junk[70000];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(junk); i++) {
		x = x * 1103515245u + 12345u;
		junk[i] = (uint8_t)(x >> 16);
	}
	raw_send(f, junk, sizeof(junk));
	struct got g;
	read_term(f, &g);
	assert_true(g.term);
	assert_true(qbuf_guards_ok(&f->rbuf));
}

/* Many random single-FPDU ULPDUs, each correctly framed, each on a new QP. */
static void test_random_ulpdus(void **state)
{
	struct rawfx *f = *state;
	uint8_t u[200];
	uint32_t x = 777;
	for (size_t i = 0; i < sizeof(u); i++) {
		x = x * 1103515245u + 12345u;
		u[i] = (uint8_t)(x >> 16);
	}
	u[0] = (u[0] & 0xc3) | 1;  /* DV 1, keep T/L random */
	raw_fpdu(f, u, 100, false);
	struct got g;
	read_term(f, &g);
	assert_true(g.term);
	assert_true(qbuf_guards_ok(&f->rbuf));
}

/* The largest FPDU MPA allows (ULPDU_Length 65535), as a peer with a 64 KiB MSS (Linux siw
 * on loopback) may send: a tagged Write of 65521 octets is placed whole, nothing else. */
static void test_rx_max_ulpdu(void **state)
{
	struct rawfx *f = *state;
	const size_t pay = MPA_MAX_ULPDU - DDP_TAGGED_HDR_LEN;
	struct qbuf dst;
	qbuf_new(&f->d, &dst, 70000, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE);
	uint8_t *u = malloc(MPA_MAX_ULPDU), *out = malloc(MPA_MAX_ULPDU + 64);
	struct ddp_hdr h = ddp_hdr_tagged(RDMAP_CTRL(RDMAP_OP_WRITE), dst.stag, (uintptr_t)dst.p + 1);
	h.last = true;
	assert_int_equal(ddp_hdr_encode(&h, u, DDP_TAGGED_HDR_LEN), DDP_TAGGED_HDR_LEN);
	for (size_t i = 0; i < pay; i++)
		u[DDP_TAGGED_HDR_LEN + i] = (uint8_t)(i * 13 + 1);
	struct iovec iov = { u, MPA_MAX_ULPDU };
	ssize_t len = mpa_tx_encode(&f->tx, &iov, 1, out, MPA_MAX_ULPDU + 64);
	assert_true(len > (ssize_t)MPA_MAX_ULPDU);
	raw_send(f, out, (size_t)len);
	long long end = t_now_ms() + Q_WAIT_MS;
	while (memcmp(dst.p + 1, u + DDP_TAGGED_HDR_LEN, pay) != 0 && t_now_ms() < end)
		rn_qp_on_readable(f->b.qp);
	assert_memory_equal(dst.p + 1, u + DDP_TAGGED_HDR_LEN, pay);
	assert_int_equal(dst.p[0], 0);
	assert_int_equal(dst.p[pay + 1], 0);
	assert_int_equal(q_state(&f->b), RN_QPS_RTS);
	assert_true(qbuf_guards_ok(&dst));
	free(u);
	free(out);
	qbuf_free(&f->d, &dst);
}

/* A 64 KiB Write through lent runs, CRC on: staged across runs, placed whole. */
static void test_lend_max_ulpdu(void **state)
{
	struct rawfx *f = *state;
	test_rx_max_ulpdu(state);
	assert_true(f->lend->lends > 1);
}

struct seg_stats {
	size_t n, max, total;
};

static int on_seg(void *arg, const uint8_t *u, size_t len)
{
	struct seg_stats *st = arg;
	(void)u;
	st->n++;
	st->total += len;
	if (len > st->max)
		st->max = len;
	return 0;
}

/* B sends a 60000-octet Send; the raw peer records the FPDUs' ULPDU lengths. */
static struct seg_stats send_60k(struct rawfx *f)
{
	struct mpa_rx_cfg rc = { .crc = f->raw.params.crc, .pos = f->raw.rx_pos };
	struct seg_stats st = { 0 };
	struct qbuf src;
	struct mpa_rx rx;
	uint8_t *buf = malloc(65536), *asm_buf = malloc(65536);
	qbuf_new(&f->d, &src, 60000, f->d.pd, RN_ACC_LOCAL_WRITE);
	struct rn_rq_sge s = { (uintptr_t)src.p, 60000, src.stag };
	assert_int_equal(q_send(&f->b, 7, RN_WR_SEND, RN_SEND_SIGNALED, &s, 1), RN_OK);
	mpa_rx_init(&rx, &rc);
	long long end = t_now_ms() + Q_WAIT_MS;
	while (st.total < 60000 + DDP_UNTAGGED_HDR_LEN * st.n && t_now_ms() < end) {
		rn_qp_on_writable(f->b.qp);
		ssize_t n = rn_conn_recv(f->raw.conn, buf, 65536);
		if (n > 0)
			assert_true(mpa_rx_feed(&rx, buf, (size_t)n, asm_buf, 65536, on_seg, &st) >= 0);
		else
			poll(NULL, 0, 1);
	}
	assert_int_equal(st.total, 60000 + DDP_UNTAGGED_HDR_LEN * st.n);
	q_expect(&f->b, NULL, f->b.scq, 7, RN_WC_SUCCESS);
	qbuf_free(&f->d, &src);
	free(buf);
	free(asm_buf);
	return st;
}

/* The MULPDU follows the stream's MSS (rn_cm_handoff.emss, TCP_MAXSEG at handoff): far above
 * Ethernet's on loopback (32 KiB or 64 KiB depending on the kernel), so 60000 octets go in
 * a few large FPDUs... */
static void test_tx_mulpdu_from_mss(void **state)
{
	struct rawfx *f = *state;
	uint32_t emss = f->b.h.emss;   /* what the QP was handed */
	assert_true(emss > 8192 && emss <= 65535);
	size_t mul = mpa_mulpdu(emss, false), per = mul - DDP_UNTAGGED_HDR_LEN;
	struct seg_stats st = send_60k(f);
	assert_int_equal(st.n, (60000 + per - 1) / per);
	assert_int_equal(st.max, st.n > 1 ? mul : 60000 + DDP_UNTAGGED_HDR_LEN);
}

/* ...and an explicit emss of 1448 gives siw's 1442-octet ULPDUs. */
static void test_tx_mulpdu_emss1448(void **state)
{
	struct rawfx *f = *state;
	struct seg_stats st = send_60k(f);
	assert_int_equal(st.max, 1442);
	assert_int_equal(st.n, (60000 + 1442 - DDP_UNTAGGED_HDR_LEN - 1) /
				       (1442 - DDP_UNTAGGED_HDR_LEN));
}

/* ---- RFC 7306 Immediate Data on the wire (docs/rdmap.md) ---------------------------------- */

/* An Immediate Data ULPDU: untagged, QN 0, L, the given MSN, 8 octets: value, kind, 0 0 0. */
static size_t imm_ulpdu(uint8_t *u, uint8_t op, uint32_t msn, uint32_t imm, uint8_t kind,
			size_t payload)
{
	size_t n = send_ulpdu(u, 0x40 | 1, RDMAP_CTRL(op), 0, msn, payload);
	memset(u + DDP_UNTAGGED_HDR_LEN, 0, payload);
	memcpy(u + DDP_UNTAGGED_HDR_LEN, &imm, 4);
	if (payload > 4)
		u[DDP_UNTAGGED_HDR_LEN + 4] = kind;
	return n;
}

/* A prefix Immediate Data then a Send: one Receive, the Send's data and the value. */
static void test_imm_prefix_send(void **state)
{
	struct rawfx *f = *state;
	uint8_t u[128];
	struct rn_cqe e;

	raw_fpdu(f, u, imm_ulpdu(u, RDMAP_OP_IMM_DATA, 1, 0x01020304, 1, 8), false);
	raw_fpdu(f, u, send_ulpdu(u, 0x40 | 1, RDMAP_CTRL(RDMAP_OP_SEND_SE), 0, 2, 20), false);
	assert_true(q_poll(&f->b, NULL, f->b.rcq, &e));
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.wr_id, 1);
	assert_int_equal(e.opcode, RN_WC_OP_RECV);
	assert_int_equal(e.byte_len, 20);
	assert_int_equal(e.flags, RN_CQE_F_IMM | RN_CQE_F_SOLICITED);
	assert_int_equal(e.imm_data, 0x01020304);
	assert_int_equal(f->rbuf.p[19], 19);
}

/* A prefix Immediate Data followed by a Write: Terminate "unexpected opcode" (0x0206) with
 * the Write's DDP header copied; the Receive was not consumed (flushed). */
static void test_imm_prefix_write(void **state)
{
	struct rawfx *f = *state;
	uint8_t u[128], w[64] = { 0xc0 | 1, RDMAP_CTRL(RDMAP_OP_WRITE) };
	struct got g;

	raw_fpdu(f, u, imm_ulpdu(u, RDMAP_OP_IMM_DATA, 1, 7, 1, 8), false);
	raw_fpdu(f, w, DDP_TAGGED_HDR_LEN + 16, false);
	read_term(f, &g);
	assert_true(g.term);
	assert_int_equal(iwarp_err_u16(g.m.u.term.err), 0x0206);
	assert_true(g.m.u.term.d);
	assert_int_equal(g.m.u.term.ddp_hdr_len, DDP_TAGGED_HDR_LEN);
	assert_memory_equal(g.m.u.term.ddp_hdr, w, DDP_TAGGED_HDR_LEN);
	assert_int_equal(q_event(&f->d, f->b.qp), RN_AE_REM_UNEXPECTED_OPCODE);
	q_expect(&f->b, NULL, f->b.rcq, 1, RN_WC_FLUSHED);
}

/* Immediate Data of 7 octets: malformed (0x02ff), not placed, no Receive consumed. */
static void test_imm_bad_len(void **state)
{
	struct rawfx *f = *state;
	uint8_t u[128];

	raw_fpdu(f, u, imm_ulpdu(u, RDMAP_OP_IMM_DATA_SE, 1, 7, 0, 7), false);
	expect_term(f, 0x02ff, RN_AE_REM_UNEXPECTED_OPCODE, true);
}

/* Atomics stay unimplemented: an Atomic Request is an unexpected opcode. */
static void test_atomic_req_refused(void **state)
{
	struct rawfx *f = *state;
	send_expect_term(f, 0x40 | 1, RDMAP_CTRL(RDMAP_OP_ATOMIC_REQ), 1, 1, RDMAP_ATOMIC_REQ_LEN,
			 0x0206, RN_AE_REM_UNEXPECTED_OPCODE, false);
}

/* Issue 27 item 3: a Read Request whose sink TO + size wraps 2^64 -> Terminate "Remote
 * Protection Error: TO Wrap" (0x0104) with the request's header, IRRQ wrap event, Error; no
 * Read Response (before: one FPDU of all-zero DDP / RDMAP headers, QP left in RTS). */
static void test_read_req_sink_wrap(void **state)
{
	struct rawfx *f = *state;
	struct qbuf src;
	uint8_t u[128];
	size_t n = send_ulpdu(u, 0x40 | 1, RDMAP_CTRL(RDMAP_OP_READ_REQ), RDMAP_QN_READ_REQ, 1,
			      RDMAP_READ_REQ_LEN);

	qbuf_new(&f->d, &src, 64, f->d.pd, RN_ACC_REMOTE_READ);
	struct rdmap_read_req rr = { .sink_stag = 0x1234, .sink_to = UINT64_MAX - 7, .size = 64,
				     .src_stag = src.stag, .src_to = (uintptr_t)src.p };
	rdmap_read_req_encode(&rr, u + DDP_UNTAGGED_HDR_LEN);
	raw_fpdu(f, u, n, false);
	struct got g;
	read_term(f, &g);
	assert_true(g.term);   /* the first ULPDU B sent is the Terminate: no Read Response */
	assert_int_equal(iwarp_err_u16(g.m.u.term.err), 0x0104);
	assert_true(g.m.u.term.r);
	assert_int_equal(q_event(&f->d, f->b.qp), RN_AE_IRRQ_WRAP);
	qbuf_free(&f->d, &src);
}

struct ulog {
	size_t n;
	uint8_t u[8][64];
	size_t len[8];
};

static int on_log(void *arg, const uint8_t *u, size_t len)
{
	struct ulog *l = arg;
	if (l->n < 8) {
		memcpy(l->u[l->n], u, len < 64 ? len : 64);
		l->len[l->n++] = len;
	}
	return 0;
}

/* What B sends for Write with immediate (SE) and Send with immediate (SE): Write, 0xD kind 0;
 * then 0xC kind 1 and Send with SE; MSNs 1, 2, 3 on QN 0. */
static void test_imm_wire(void **state)
{
	struct rawfx *f = *state;
	struct mpa_rx_cfg rc = { .crc = f->raw.params.crc, .pos = f->raw.rx_pos };
	struct ulog l = { 0 };
	struct mpa_rx rx;
	static uint8_t buf[65536], asm_buf[65536];
	struct qbuf src;
	struct rn_send_wr wr;
	uint32_t imm = 0xdeadbeef;
	struct rdmap_msg m;
	struct iwarp_err err;

	qbuf_new(&f->d, &src, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	struct rn_rq_sge s = { (uintptr_t)src.p, 10, src.stag };
	memset(&wr, 0, sizeof(wr));
	wr.opcode = RN_WR_RDMA_WRITE_IMM;
	wr.flags = RN_SEND_SOLICITED;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.imm_data = imm;
	wr.wr.rdma.rkey = 0x1234;
	wr.wr.rdma.remote_addr = 0x5000;
	assert_int_equal(rn_qp_post_send(f->b.qp, &wr, NULL, NULL), RN_OK);
	wr.opcode = RN_WR_SEND_IMM;
	assert_int_equal(rn_qp_post_send(f->b.qp, &wr, NULL, NULL), RN_OK);
	mpa_rx_init(&rx, &rc);
	long long end = t_now_ms() + Q_WAIT_MS;
	while (l.n < 4 && t_now_ms() < end) {
		rn_qp_on_writable(f->b.qp);
		ssize_t n = rn_conn_recv(f->raw.conn, buf, sizeof(buf));
		if (n > 0)
			assert_true(mpa_rx_feed(&rx, buf, (size_t)n, asm_buf, sizeof(asm_buf), on_log,
						&l) >= 0);
		else
			poll(NULL, 0, 1);
	}
	assert_int_equal(l.n, 4);
	static const uint8_t ops[4] = { RDMAP_OP_WRITE, RDMAP_OP_IMM_DATA_SE, RDMAP_OP_IMM_DATA,
					RDMAP_OP_SEND_SE };
	static const uint8_t kinds[4] = { 0, 0, 1, 0 };
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(rdmap_msg_decode(l.u[i], l.len[i], &m, &err), 0);
		assert_int_equal(rdmap_msg_validate(&m, RDMAP_NQUEUES, true, &err), 0);
		assert_int_equal(m.opcode, ops[i]);
		assert_true(m.ddp.last);
		if (i == 0)
			continue;
		assert_int_equal(m.ddp.qn, 0);
		assert_int_equal(m.ddp.msn, i);
		if (m.opcode == RDMAP_OP_SEND_SE) {
			assert_int_equal(l.len[i], DDP_UNTAGGED_HDR_LEN + 10);
			continue;
		}
		const uint8_t want[8] = { 0xef, 0xbe, 0xad, 0xde, kinds[i], 0, 0, 0 };
		assert_int_equal(l.len[i], DDP_UNTAGGED_HDR_LEN + 8);
		if (memcmp(&imm, "\xef\xbe\xad\xde", 4) == 0)   /* little-endian host */
			assert_memory_equal(l.u[i] + DDP_UNTAGGED_HDR_LEN, want, 8);
		else
			assert_memory_equal(l.u[i] + DDP_UNTAGGED_HDR_LEN, &imm, 4);
		assert_int_equal(l.u[i][DDP_UNTAGGED_HDR_LEN + 4], kinds[i]);
	}
	qbuf_free(&f->d, &src);
}

/* A tolerant QP still terminates on framing errors: DDP version 2 -> 0x1206. */
static void tol_attr(struct rn_qp_init_attr *a)
{
	a->tolerant = true;
}

static int setup_tol(void **state)
{
	struct rawfx *f = calloc(1, sizeof(*f));
	qdev_init(&f->d);
	qside_create(&f->b, &f->d, tol_attr);
	q_cm_pair(&f->raw, &f->b.h, true, false);
	q_rts(&f->b);
	mpa_tx_init(&f->tx, f->raw.params.crc, f->raw.params.markers_tx);
	f->tx.pos = f->raw.tx_pos;
	qbuf_new(&f->d, &f->rbuf, 4096, f->d.pd, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE);
	assert_int_equal(q_recv(&f->b, 1, &f->rbuf, 0, 4096), RN_OK);
	*state = f;
	return 0;
}

/* The peer sends a Terminate (DDP "no buffer", as for a Send into an empty RQ), then closes
 * its socket abortively: the reset stands behind the Terminate in our socket, unread. A Send
 * posted then fails in the transport; the QP must still take the Terminate first (event
 * Terminate Received, the peer's code queryable), not report a bare reset (vipl_accept T16
 * flaked that way: the peer's close reset the stream while our next Send was on its way). */
static void test_term_then_reset(void **state)
{
	struct rawfx *f = *state;
	struct rdmap_term t;
	struct rn_qp_info qi;
	uint8_t u[128], out[256];
	struct qbuf src;

	rdmap_term_build(ddp_err_untagged(DDP_ECODE_U_MSN_NO_BUF), NULL, 0, &t);
	size_t n = rdmap_term_ulpdu_encode(&t, 1, u, sizeof(u));
	assert_true(n > 0);
	struct iovec iov = { u, n };
	ssize_t len = mpa_tx_encode(&f->tx, &iov, 1, out, sizeof(out));
	assert_true(len > 0);
	iov = (struct iovec){ out, (size_t)len };
	assert_int_equal(rn_conn_sendv(f->raw.conn, &iov, 1), len);
	rn_conn_abort(f->raw.conn);
	f->raw.conn = NULL;
	struct pollfd p = { .fd = rn_qp_fd(f->b.qp), .events = POLLIN };
	long long end = t_now_ms() + Q_WAIT_MS;
	while (!(p.revents & (POLLHUP | POLLERR)) && t_now_ms() < end)
		assert_true(poll(&p, 1, 100) >= 0);
	assert_true(p.revents & (POLLHUP | POLLERR));   /* the reset is there, nothing read yet */

	qbuf_new(&f->d, &src, 64, f->d.pd, RN_ACC_LOCAL_WRITE);
	struct rn_rq_sge sge = { (uintptr_t)src.p, 64, src.stag };
	q_send(&f->b, 7, RN_WR_SEND, RN_SEND_SIGNALED, &sge, 1);
	for (int i = 0; i < 50 && q_state(&f->b) != RN_QPS_ERROR; i++)
		rn_qp_on_readable(f->b.qp);
	assert_int_equal(q_state(&f->b), RN_QPS_ERROR);
	assert_int_equal(q_event(&f->d, f->b.qp), RN_AE_TERMINATE_RECEIVED);
	assert_int_equal(rn_qp_query(f->b.qp, &qi), RN_OK);
	assert_true(qi.term_valid && !qi.term_local);
	assert_int_equal(iwarp_err_u16(qi.term.err), 0x1202);
	qbuf_free(&f->d, &src);
}

/* Tolerant: a Write to STag 0 is dropped (event), then a bad DDP version still terminates. */
static void test_tol_framing_terminates(void **state)
{
	struct rawfx *f = *state;
	uint8_t w[64] = { 0xc0 | 1, RDMAP_CTRL(RDMAP_OP_WRITE) };

	raw_fpdu(f, w, DDP_TAGGED_HDR_LEN + 16, false);
	long long end = t_now_ms() + Q_WAIT_MS;
	enum rn_event_id ev = RN_AE_NONE;
	while (ev == RN_AE_NONE && t_now_ms() < end) {
		rn_qp_on_readable(f->b.qp);
		ev = q_event(&f->d, f->b.qp);
	}
	assert_int_equal(ev, RN_AE_PROT_INVALID_STAG);
	assert_int_equal(q_state(&f->b), RN_QPS_RTS);
	send_expect_term(f, 0x40 | 2, RDMAP_CTRL(RDMAP_OP_SEND), 0, 1, 8,
			 0x1206, RN_AE_REM_INVALID_DDP_VERSION, false);
}

/* Tolerant: 400 one-segment Writes with random STags (a third of them the real one), random
 * TOs around the region and random lengths: the bad ones are dropped, none lands outside
 * the region, the QP stays in RTS and a Send afterwards completes. */
static void test_tol_random_writes(void **state)
{
	struct rawfx *f = *state;
	uint8_t u[DDP_TAGGED_HDR_LEN + 300];
	uint32_t x = 4242;
	struct rn_cqe e;

	for (int i = 0; i < 400 && q_state(&f->b) == RN_QPS_RTS; i++) {
		x = x * 1103515245u + 12345u;
		uint32_t stag = (x >> 8) % 3 == 0 ? f->rbuf.stag : x;
		x = x * 1103515245u + 12345u;
		uint64_t to = (uintptr_t)f->rbuf.p - 200 + (x >> 8) % (f->rbuf.len + 400);
		x = x * 1103515245u + 12345u;
		size_t len = (x >> 8) % 300;
		struct ddp_hdr h = ddp_hdr_tagged(RDMAP_CTRL(RDMAP_OP_WRITE), stag, to);
		h.last = true;
		assert_int_equal(ddp_hdr_encode(&h, u, DDP_TAGGED_HDR_LEN), DDP_TAGGED_HDR_LEN);
		memset(u + DDP_TAGGED_HDR_LEN, 0x33, len);
		raw_fpdu(f, u, DDP_TAGGED_HDR_LEN + len, false);
		q_drain_events(&f->d);
	}
	for (int i = 0; i < 50; i++)
		rn_qp_on_readable(f->b.qp);
	assert_int_equal(q_state(&f->b), RN_QPS_RTS);
	assert_true(qbuf_guards_ok(&f->rbuf));
	raw_fpdu(f, u, send_ulpdu(u, 0x40 | 1, RDMAP_CTRL(RDMAP_OP_SEND), 0, 1, 30), false);
	assert_true(q_poll(&f->b, NULL, f->b.rcq, &e));
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.byte_len, 30);
	assert_true(qbuf_guards_ok(&f->rbuf));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_raw_send_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_term_then_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_term_then_reset, setup_lend, teardown),
		cmocka_unit_test_setup_teardown(test_crc_error_T37, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ddp_version_T37, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_opcode_T37, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_qn_T37, setup, teardown),
		cmocka_unit_test_setup_teardown(test_msn_gap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_stag0_T29, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage, setup_nocrc, teardown),
		cmocka_unit_test_setup_teardown(test_random_ulpdus, setup_nocrc, teardown),
		cmocka_unit_test_setup_teardown(test_rx_max_ulpdu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lend_send_ok, setup_lend, teardown),
		cmocka_unit_test_setup_teardown(test_lend_send_ok, setup_lend_nocrc, teardown),
		cmocka_unit_test_setup_teardown(test_crc_error_T37, setup_lend, teardown),
		cmocka_unit_test_setup_teardown(test_bad_qn_T37, setup_lend, teardown),
		cmocka_unit_test_setup_teardown(test_garbage, setup_lend_nocrc, teardown),
		cmocka_unit_test_setup_teardown(test_random_ulpdus, setup_lend_nocrc, teardown),
		cmocka_unit_test_setup_teardown(test_lend_max_ulpdu, setup_lend, teardown),
		cmocka_unit_test_setup_teardown(test_tx_mulpdu_from_mss, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tx_mulpdu_emss1448, setup_emss1448, teardown),
		cmocka_unit_test_setup_teardown(test_imm_prefix_send, setup, teardown),
		cmocka_unit_test_setup_teardown(test_imm_prefix_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_imm_bad_len, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_req_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_req_sink_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_req_sink_wrap, setup_nocrc, teardown),
		cmocka_unit_test_setup_teardown(test_imm_wire, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tol_framing_terminates, setup_tol, teardown),
		cmocka_unit_test_setup_teardown(test_tol_random_writes, setup_tol, teardown),
	};
	return cmocka_run_group_tests_name("rnic_qp_raw", tests, NULL, NULL);
}
