/* softrnic-demo session scripts: what the connections of each scenario say. */
#include "demo.h"

#include <string.h>

#include "ddp.h"

/* Deterministic payload bytes, different per seed. */
static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 17u + i * 7u + (i >> 9));
}

static unsigned lcg(unsigned *x)
{
	*x = *x * 1103515245u + 12345u;
	return (*x >> 8) & 0xffffff;
}

static void put_be(uint8_t *p, uint64_t v, int octets)
{
	for (int i = 0; i < octets; i++)
		p[i] = (uint8_t)(v >> (8 * (octets - 1 - i)));
}

/* rping-like exchange (rdma-core's rping: struct rping_rdma_info { be64 buf; be32 rkey;
 * be32 size; }). */
static void rping_exchange(struct sess *s, unsigned size, unsigned iter)
{
	static uint8_t data[65536];
	uint64_t cbuf = 0x00007f3a12340000ull + iter * 0x10000ull, sbuf = 0x000055d0aa000000ull;
	uint32_t crkey = 0x1a2b3c00u + iter, srkey = 0x5e6f7000u + iter;
	uint8_t info[16];
	put_be(info, cbuf, 8);
	put_be(info + 8, crkey, 4);
	put_be(info + 12, size, 4);
	/* client: "here is my source buffer" */
	sess_send_msg(s, WT_CLIENT, RDMAP_OP_SEND, 0, 0, 0, info, sizeof(info));
	wt_writer_advance(s->tcp.w, 100);
	/* server: RDMA READ the client's buffer into its own */
	sess_send_read_req(s, WT_SERVER, srkey, sbuf, size, crkey, cbuf);
	fill(data, size, iter);
	sess_send_msg(s, WT_CLIENT, RDMAP_OP_READ_RESP, srkey, sbuf, 0, data, size);
	wt_writer_advance(s->tcp.w, 100);
	/* server: "go ahead", then RDMA WRITE back, then Send with Invalidate of the rkey */
	put_be(info, sbuf, 8);
	sess_send_msg(s, WT_SERVER, RDMAP_OP_SEND, 0, 0, 0, info, sizeof(info));
	sess_send_msg(s, WT_SERVER, RDMAP_OP_WRITE, crkey, cbuf, 0, data, size);
	sess_send_msg(s, WT_SERVER, RDMAP_OP_SEND_INV, 0, 0, crkey, info, 16);
	wt_writer_advance(s->tcp.w, 100);
	/* client: done, with a solicited event */
	sess_send_msg(s, WT_CLIENT, RDMAP_OP_SEND_SE, 0, 0, 0, (const uint8_t *)"rping done\n", 11);
	sess_flush(s);
}

/* Sends, Writes, Reads and the other Send flavours of many sizes, then a Terminate. */
static void sweep(struct sess *s, unsigned seed)
{
	static uint8_t data[3 * 65536];
	unsigned x = seed * 2654435761u + 1;
	fill(data, sizeof(data), seed);
	uint32_t maxpl = s->mulpdu - DDP_UNTAGGED_HDR_LEN;
	/* every small size: all four pads, zero-length messages */
	for (unsigned len = 0; len <= 9; len++) {
		sess_send_msg(s, len & 1, RDMAP_OP_SEND, 0, 0, 0, data, len);
		sess_send_msg(s, !(len & 1), RDMAP_OP_WRITE, 0x100 + len, 0x1000ull * len, 0, data,
			      len);
	}
	/* around the MULPDU boundary and multi-segment */
	uint32_t sizes[] = { maxpl - 1, maxpl, maxpl + 1, maxpl + 4, 2 * maxpl + 3, 5000 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		sess_send_msg(s, WT_CLIENT, RDMAP_OP_SEND, 0, 0, 0, data, sizes[i]);
		sess_send_msg(s, WT_SERVER, RDMAP_OP_WRITE, 0xabcd0000u + (uint32_t)i,
			      0xffff800000000000ull + i * 0x10000, 0, data, sizes[i]);
	}
	for (unsigned i = 0; i < 6; i++) {
		uint32_t sz = lcg(&x) % (3 * maxpl + 1);
		uint64_t sink_to = 0x7f0000000000ull + lcg(&x), src_to = 0x550000000000ull + lcg(&x);
		sess_send_read_req(s, i & 1, 0x2000u + i, sink_to, sz, 0x3000u + i, src_to);
		sess_send_msg(s, !(i & 1), RDMAP_OP_READ_RESP, 0x2000u + i, sink_to, 0, data, sz);
	}
	static const enum rdmap_opcode sends[] = { RDMAP_OP_SEND_INV, RDMAP_OP_SEND_SE,
						   RDMAP_OP_SEND_SE_INV, RDMAP_OP_SEND };
	for (unsigned i = 0; i < 12; i++) {
		uint32_t sz = lcg(&x) % (2 * maxpl + 7);
		sess_send_msg(s, i & 1, sends[i % 4], 0, 0, 0xdead0000u + i, data, sz);
	}
	/* the server ends it with a Terminate (DDP untagged "MSN range", header copied) */
	sess_flush(s);
	sess_send_terminate(s, WT_SERVER, ddp_err_untagged(DDP_ECODE_U_MSN_RANGE));
	sess_flush(s);
}

static void plan_conn(struct demo_plan *plan, const struct sess_params *p)
{
	plan->crc[plan->nconns] = p->crc;
	plan->markers[plan->nconns] = p->markers;
	plan->nconns++;
}

/* Connection 0: CRC unless --crc 0, markers only with --markers 1; connection 1: markers
 * and CRC. Both carry an rping exchange. */
static void run_demo(struct wt_writer *w, const struct demo_opts *o,
		     struct demo_expect *expect, struct demo_plan *plan)
{
	static struct sess s;
	const struct sess_params conn[2] = {
		{ .client_port = 40001, .crc = o->crc != 0, .markers = o->markers == 1,
		  .ird = 4, .ord = 4 },
		{ .client_port = 40002, .crc = true, .markers = true, .ird = 1, .ord = 1 },
	};
	static const unsigned rping_size[2] = { 6000, 3000 };
	for (unsigned i = 0; i < 2; i++) {
		if (i)
			wt_writer_advance(w, 5000);
		sess_open(&s, w, i, o, &conn[i], expect);
		rping_exchange(&s, rping_size[i], i);
		sess_close(&s);
		plan_conn(plan, &conn[i]);
	}
}

/* One connection, CRC and markers only if asked for, carrying the sweep. */
static void run_sweep(struct wt_writer *w, const struct demo_opts *o,
		      struct demo_expect *expect, struct demo_plan *plan)
{
	static struct sess s;
	const struct sess_params conn = { .client_port = (uint16_t)(40000 + o->seed % 20000),
					  .crc = o->crc == 1, .markers = o->markers == 1,
					  .ird = 8, .ord = 8 };
	sess_open(&s, w, 0, o, &conn, expect);
	sweep(&s, o->seed);
	sess_close(&s);
	plan_conn(plan, &conn);
}

void demo_run_scenario(struct wt_writer *w, const struct demo_opts *o,
		       struct demo_expect *expect, struct demo_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	if (!strcmp(o->scenario, "demo"))
		run_demo(w, o, expect, plan);
	else if (!strcmp(o->scenario, "sweep"))
		run_sweep(w, o, expect, plan);
	else
		demo_die("unknown scenario");
}
