/* rn_mem: PDs, the STag table, MRs, MWs, fast-register, invalidation and the tagged-access
 * checks. Test names carry the acceptance-test IDs of docs/acceptance.md: mmNN for the memory
 * table's own, tNN for TNN (the parts observable at this layer: the Terminate code the target
 * would send, the completion status, the verb status). */
#include <errno.h>
#include <stdlib.h>

#include "test_mem_util.h"
#include "rn_transport.h"

static uint8_t buf[8 * PAGE] __attribute__((aligned(PAGE)));
static struct rn_mem_qp QP1_PD(uint32_t pd) { return (struct rn_mem_qp){ pd, 11, true }; }

/* ---- §6.12 item 1, T28: STag shape, uniqueness, keys on reuse, never index 0 ----------- */
static void mm01_stag_shape_and_uniqueness(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(1024, 16);
	uint32_t n = rn_mem_tpt_size(m), pd = mk_pd(m);
	assert_int_equal(n, 2048);
	rn_stag_t *s = calloc(1000, sizeof(*s));
	uint8_t *seen = calloc(n, 1);
	for (int i = 0; i < 1000; i++) {
		s[i] = mk_mr(m, pd, buf, 64, RN_ACC_LOCAL_WRITE);
		uint32_t idx = RN_STAG_IDX(s[i]);
		assert_true(idx >= 1 && idx < n);
		assert_int_equal(seen[idx], 0);
		seen[idx] = 1;
	}
	/* deregister one, register until its index comes back: the key differs */
	rn_stag_t victim = s[500];
	assert_int_equal(rn_mem_dereg(m, victim), RN_OK);
	int tries = 0;
	for (;; tries++) {
		assert_true(tries < 4096);
		rn_stag_t x = mk_mr(m, pd, buf, 64, 0);
		if (RN_STAG_IDX(x) == RN_STAG_IDX(victim)) {
			assert_int_not_equal(RN_STAG_KEY(x), RN_STAG_KEY(victim));
			assert_int_equal(tagged(m, pd, 1, victim, (uintptr_t)buf, 1, 0), 0x1100);
			break;
		}
		assert_int_equal(rn_mem_dereg(m, x), RN_OK);
	}
	/* FIFO: every other free index was handed out first */
	assert_true(tries >= (int)(n - 1 - 1000) - 1);
	free(s);
	free(seen);
	rn_mem_destroy(m);
}

/* ---- holders (zero-copy transmit): dereg and a translation rereg drop references ------ */
static unsigned drops_a, drops_b;
static void drop_a(void *arg) { drops_a += (unsigned)(uintptr_t)arg; }
static void drop_b(void *arg) { drops_b += (unsigned)(uintptr_t)arg; }

static void holders_drop_on_dereg(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(16, 4);
	uint32_t pd = mk_pd(m);
	rn_stag_t mr = mk_mr(m, pd, buf, 64, 0), mw = 0;

	drops_a = drops_b = 0;
	assert_int_equal(rn_mem_holder_add(drop_a, (void *)1), 0);
	assert_int_equal(rn_mem_holder_add(drop_b, (void *)10), 0);
	assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE2, &mw), RN_OK);
	assert_int_equal(rn_mem_dereg(m, mw), RN_OK); /* a window frees no memory */
	assert_int_equal(drops_a + drops_b, 0);
	assert_int_equal(rn_mem_rereg_mr(m, &mr, RN_REREG_TRANSLATION, pd, buf + PAGE, 64,
					 (uintptr_t)(buf + PAGE), 0), RN_OK);
	assert_int_equal(drops_a, 1);
	assert_int_equal(drops_b, 10);
	assert_int_equal(rn_mem_dereg(m, mr), RN_OK);
	assert_int_equal(drops_a, 2);
	rn_mem_holder_del(drop_b, (void *)10);
	mr = mk_mr(m, pd, buf, 64, 0);
	assert_int_equal(rn_mem_dereg(m, mr), RN_OK);
	assert_int_equal(drops_a, 3);
	assert_int_equal(drops_b, 20);
	rn_mem_holder_del(drop_a, (void *)1);
	for (unsigned i = 0; i < RN_MEM_HOLDERS; i++)
		assert_int_equal(rn_mem_holder_add(drop_b, (void *)(uintptr_t)i), 0);
	assert_int_equal(rn_mem_holder_add(drop_a, NULL), -ENOSPC);
	for (unsigned i = 0; i < RN_MEM_HOLDERS; i++)
		rn_mem_holder_del(drop_b, (void *)(uintptr_t)i);
	rn_mem_destroy(m);
}

/* Closing the device with regions still registered takes them away too. */
static void holders_drop_on_destroy(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(16, 4);
	uint32_t pd = mk_pd(m);

	drops_a = 0;
	assert_int_equal(rn_mem_holder_add(drop_a, (void *)1), 0);
	rn_mem_destroy(mk_mem(16, 4)); /* no region: nothing to drop */
	assert_int_equal(drops_a, 0);
	(void)mk_mr(m, pd, buf, 64, 0);
	rn_mem_destroy(m);
	assert_int_equal(drops_a, 1);
	rn_mem_holder_del(drop_a, (void *)1);
}

static void t28_never_index0_and_fresh_key(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(4, 4); /* n = 16: indices come back often */
	uint32_t pd = mk_pd(m);
	int last[16];
	for (int i = 0; i < 16; i++)
		last[i] = -1;
	for (int i = 0; i < 100000; i++) {
		rn_stag_t x = 0;
		if (i & 1)
			assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE2, &x), RN_OK);
		else
			x = mk_mr(m, pd, buf, 8, 0);
		uint32_t idx = RN_STAG_IDX(x);
		assert_true(idx != 0 && idx < 16);
		assert_int_not_equal(last[idx], RN_STAG_KEY(x));
		last[idx] = RN_STAG_KEY(x);
		assert_int_equal(rn_mem_dereg(m, x), RN_OK);
	}
	rn_mem_destroy(m);
}

/* ---- item 3, T25: invalid STag ------------------------------------------------------------ */
static void mm03_invalid_stag(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pd = mk_pd(m), n = rn_mem_tpt_size(m);
	rn_stag_t s = mk_mr(m, pd, buf, PAGE, RW_ALL);
	uint64_t to = (uintptr_t)buf;
	assert_int_equal(tagged(m, pd, 1, s, to, 8, W), OK_T);
	assert_int_equal(tagged(m, pd, 1, RN_STAG(0, RN_STAG_KEY(s)), to, 8, W), 0x1100);
	assert_int_equal(tagged(m, pd, 1, 0, to, 8, W), 0x1100);
	assert_int_equal(tagged(m, pd, 1, RN_STAG(n, 0), to, 8, W), 0x1100);
	assert_int_equal(tagged(m, pd, 1, RN_STAG(RN_STAG_IDX_MAX, 0), to, 8, W), 0x1100);
	uint32_t other = RN_STAG_IDX(s) == 1 ? 2 : 1; /* never allocated */
	assert_int_equal(tagged(m, pd, 1, RN_STAG(other, 0), to, 8, W), 0x1100);
	assert_int_equal(tagged(m, pd, 1, s ^ 0x5a, to, 8, W), 0x1100);       /* T25 wrong key */
	assert_int_equal(tagged(m, pd, 1, s ^ 0x01, to, 8, R), 0x0100);       /* Read Request */
	assert_int_equal(rn_mem_dereg(m, s), RN_OK);
	assert_int_equal(tagged(m, pd, 1, s, to, 8, W), 0x1100);
	rn_mem_destroy(m);
}

/* ---- item 2, 4, T15: bounds at the byte edges, TO wrap, overflow attempts ---------------- */
static void mm02_mm04_t15_bounds_edges(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pd = mk_pd(m);
	const uint64_t base = 0x10000, len = 3 * PAGE;
	rn_stag_t s = 0;
	assert_int_equal(rn_mem_reg_mr(m, pd, buf + 1, len, base, RW_ALL, &s), RN_OK);
	struct rn_mem_ref ref;
	struct iwarp_err e;
	/* exactly the MR */
	assert_int_equal(rn_mem_check_tagged(m, pd, 1, s, base, len, W, &ref, &e), 0);
	assert_ptr_equal(ref.addr, buf + 1);
	assert_int_equal(ref.run, len);
	assert_int_equal(rn_mem_ref_next(m, &ref), 0);
	assert_int_equal(ref.remain, 0);
	/* first and last byte */
	assert_int_equal(tagged(m, pd, 1, s, base, 1, W), OK_T);
	assert_int_equal(rn_mem_check_tagged(m, pd, 1, s, base + len - 1, 1, W, &ref, &e), 0);
	assert_ptr_equal(ref.addr, buf + len);
	/* one before, one past */
	assert_int_equal(tagged(m, pd, 1, s, base - 1, 1, W), 0x1101);
	assert_int_equal(tagged(m, pd, 1, s, base - 1, len, W), 0x1101);
	assert_int_equal(tagged(m, pd, 1, s, base + len, 1, W), 0x1101);
	assert_int_equal(tagged(m, pd, 1, s, base, len + 1, W), 0x1101);
	assert_int_equal(tagged(m, pd, 1, s, base + 1, len, W), 0x1101);
	assert_int_equal(tagged(m, pd, 1, s, base + 1, len, R), 0x0101);
	/* TO wrap: 2^64-16 with 32 bytes; and the largest lengths */
	assert_int_equal(tagged(m, pd, 1, s, UINT64_MAX - 15, 32, W), 0x1103);
	assert_int_equal(tagged(m, pd, 1, s, UINT64_MAX - 15, 32, R), 0x0104);
	assert_int_equal(tagged(m, pd, 1, s, UINT64_MAX, 2, W), 0x1103);
	assert_int_equal(tagged(m, pd, 1, s, UINT64_MAX, 1, W), 0x1101);     /* no wrap: last byte */
	assert_int_equal(tagged(m, pd, 1, s, 1, UINT64_MAX, W), 0x1101);     /* ends at 2^64-1 */
	assert_int_equal(tagged(m, pd, 1, s, 2, UINT64_MAX, W), 0x1103);
	assert_int_equal(tagged(m, pd, 1, s, base, UINT64_MAX, W), 0x1103);
	assert_int_equal(tagged(m, pd, 1, s, base + 8, UINT64_MAX - base - 8, W), 0x1101);
	/* zero length: no check at all (RDMA Verbs §7.6.3, T40) */
	assert_int_equal(tagged(m, pd, 1, 0xdeadbeef, UINT64_MAX, 0, W), OK_T);
	rn_mem_destroy(m);
}

/* An MR that ends at the top of the TO space; and a zero-based MR. */
static void mm04_top_of_to_space_and_zero_based(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pd = mk_pd(m);
	rn_stag_t s = 0, z = 0;
	assert_int_equal(rn_mem_reg_mr(m, pd, buf, PAGE, UINT64_MAX - PAGE + 1, RW_ALL, &s), RN_OK);
	assert_int_equal(tagged(m, pd, 1, s, UINT64_MAX, 1, W), OK_T);
	assert_int_equal(tagged(m, pd, 1, s, UINT64_MAX - PAGE + 1, PAGE, W), OK_T);
	assert_int_equal(tagged(m, pd, 1, s, UINT64_MAX, 2, W), 0x1103);
	assert_int_equal(rn_mem_reg_mr(m, pd, buf, PAGE, UINT64_MAX - PAGE + 2, RW_ALL, &s),
			 RN_ERR_INVALID_VA);
	assert_int_equal(rn_mem_reg_mr(m, pd, buf, PAGE, 0, RW_ALL | RN_ACC_ZERO_BASED, &z), RN_OK);
	struct rn_mem_ref ref;
	struct iwarp_err e;
	assert_int_equal(rn_mem_check_tagged(m, pd, 1, z, 100, 10, W, &ref, &e), 0);
	assert_ptr_equal(ref.addr, buf + 100);
	assert_int_equal(tagged(m, pd, 1, z, PAGE - 1, 1, W), OK_T);
	assert_int_equal(tagged(m, pd, 1, z, PAGE, 1, W), 0x1101);
	struct rn_mem_info in;
	assert_int_equal(rn_mem_query_mr(m, z, &in), RN_OK);
	assert_true(in.access & RN_ACC_ZERO_BASED);
	assert_int_equal(in.to_base, 0);
	rn_mem_destroy(m);
}

/* ---- item 5, T14: PD isolation; item 6, T16, T30: rights ---------------------------------- */
static void mm05_t14_pd_isolation(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pa = mk_pd(m), pb = mk_pd(m);
	rn_stag_t a = mk_mr(m, pa, buf, PAGE, RW_ALL), b = mk_mr(m, pb, buf + PAGE, PAGE, RW_ALL);
	assert_int_equal(tagged(m, pb, 2, a, (uintptr_t)buf, 8, W), 0x1102);
	assert_int_equal(tagged(m, pb, 2, a, (uintptr_t)buf, 8, R), 0x0103);
	assert_int_equal(tagged(m, pb, 2, b, (uintptr_t)buf + PAGE, 8, W), OK_T);
	rn_mem_destroy(m);
}

static void mm06_t16_remote_rights(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pd = mk_pd(m);
	uint64_t to = (uintptr_t)buf;
	rn_stag_t lo = mk_mr(m, pd, buf, PAGE, RN_ACC_LOCAL_WRITE);
	assert_int_equal(tagged(m, pd, 1, lo, to, 8, W), 0x0102); /* RDMAP 0/1/0x02 for a sink */
	assert_int_equal(tagged(m, pd, 1, lo, to, 8, R), 0x0102);
	/* Read Response sink is checked with LOCAL_WRITE (ibverbs), REMOTE_WRITE in strict mode */
	assert_int_equal(tagged(m, pd, 1, lo, to, 8, RN_ACC_LOCAL_WRITE), OK_T);
	rn_stag_t ro = mk_mr(m, pd, buf, PAGE, RN_ACC_REMOTE_READ);
	assert_int_equal(tagged(m, pd, 1, ro, to, 8, R), OK_T);
	assert_int_equal(tagged(m, pd, 1, ro, to, 8, W), 0x0102);
	assert_int_equal(tagged(m, pd, 1, ro, to, 8, RN_ACC_LOCAL_WRITE), 0x0102); /* T17 */
	rn_mem_destroy(m);
}

static void t30_registration_rights(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(64, 8);
	uint32_t pd = mk_pd(m);
	/* Local Read is always granted, so Fig. 18's combinations reduce to: Remote Write needs
	 * Local Write. All 16 LW x {RR, RW, MW_BIND, REMOTE_INV} subsets: */
	for (uint32_t a = 0; a < 32; a++) {
		uint32_t acc = ((a & 1) ? RN_ACC_LOCAL_WRITE : 0) | ((a & 2) ? RN_ACC_REMOTE_READ : 0) |
			       ((a & 4) ? RN_ACC_REMOTE_WRITE : 0) | ((a & 8) ? RN_ACC_MW_BIND : 0) |
			       ((a & 16) ? RN_ACC_LOCAL_READ : 0);
		bool ok = !(acc & RN_ACC_REMOTE_WRITE) || (acc & RN_ACC_LOCAL_WRITE);
		rn_stag_t s = 0;
		enum rn_status r = rn_mem_reg_mr(m, pd, buf, PAGE, (uintptr_t)buf, acc, &s);
		assert_int_equal(r, ok ? RN_OK : RN_ERR_INVALID_ACCESS);
		if (ok) {
			struct rn_mem_info in;
			assert_int_equal(rn_mem_query_mr(m, s, &in), RN_OK);
			assert_int_equal(in.access, acc | RN_ACC_LOCAL_READ);
			assert_int_equal(rn_mem_dereg(m, s), RN_OK);
		}
	}
	rn_stag_t s = 0;
	assert_int_equal(rn_mem_reg_mr(m, pd, buf, PAGE, 0, 1u << 12, &s), RN_ERR_INVALID_ACCESS);
	/* a failed registration consumed nothing */
	assert_int_equal(rn_mem_pd_dealloc(m, pd), RN_OK);
	rn_mem_destroy(m);
}

/* ---- §6.7 precedence: invalid STag > not associated > access > TO wrap > bounds ---------- */
static void check_precedence(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pd = mk_pd(m), other = mk_pd(m);
	rn_stag_t s = mk_mr(m, pd, buf, PAGE, RN_ACC_LOCAL_WRITE); /* no remote rights */
	uint64_t to = (uintptr_t)buf, wrap = UINT64_MAX - 15;
	/* every check fails: wrong key */
	assert_int_equal(tagged(m, other, 1, s ^ 1, wrap, 32, W), 0x1100);
	assert_int_equal(tagged(m, other, 1, s ^ 1, wrap, 32, R), 0x0100);
	/* all but the key */
	assert_int_equal(tagged(m, other, 1, s, wrap, 32, W), 0x1102);
	assert_int_equal(tagged(m, other, 1, s, wrap, 32, R), 0x0103);
	/* access, wrap, bounds */
	assert_int_equal(tagged(m, pd, 1, s, wrap, 32, W), 0x0102);
	assert_int_equal(tagged(m, pd, 1, s, wrap, 32, R), 0x0102);
	rn_stag_t s2 = mk_mr(m, pd, buf, PAGE, RW_ALL);
	/* wrap and bounds */
	assert_int_equal(tagged(m, pd, 1, s2, wrap, 32, W), 0x1103);
	assert_int_equal(tagged(m, pd, 1, s2, wrap, 32, R), 0x0104);
	/* bounds only */
	assert_int_equal(tagged(m, pd, 1, s2, to - 1, 32, W), 0x1101);
	assert_int_equal(tagged(m, pd, 1, s2, to - 1, 32, R), 0x0101);
	/* not associated beats bounds */
	assert_int_equal(tagged(m, other, 1, s2, to - 1, 32, W), 0x1102);
	rn_mem_destroy(m);
}

/* ---- item 7, T11, T29, T40: local SGEs --------------------------------------------------- */
static void mm07_local_sge(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pd = mk_pd(m), other = mk_pd(m);
	rn_stag_t s = mk_mr(m, pd, buf, PAGE, RN_ACC_LOCAL_WRITE);
	rn_stag_t ro = mk_mr(m, pd, buf, PAGE, 0);
	rn_stag_t mw = 0;
	assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE2, &mw), RN_OK);
	uint64_t a = (uintptr_t)buf;
	struct rn_mem_ref ref;
	const uint32_t LR = RN_ACC_LOCAL_READ, LW = RN_ACC_LOCAL_WRITE;
	assert_int_equal(rn_mem_check_local_sge(m, pd, 0, s, a + 8, 16, LR, &ref), RN_WC_SUCCESS);
	assert_ptr_equal(ref.addr, buf + 8);
	assert_int_equal(rn_mem_check_local_sge(m, pd, 0, s ^ 2, a, 16, LR, &ref), RN_WC_INVALID_STAG);
	assert_int_equal(rn_mem_check_local_sge(m, pd, 0, s, a + PAGE - 8, 16, LR, &ref),
			 RN_WC_BASE_BOUNDS);
	assert_int_equal(rn_mem_check_local_sge(m, pd, 0, s, a - 1, 16, LR, &ref), RN_WC_BASE_BOUNDS);
	assert_int_equal(rn_mem_check_local_sge(m, other, 0, s, a, 16, LR, &ref), RN_WC_INVALID_PD);
	assert_int_equal(rn_mem_check_local_sge(m, pd, 0, mw, a, 16, LR, &ref), RN_WC_INVALID_STAG);
	assert_int_equal(rn_mem_check_local_sge(m, pd, 0, ro, a, 16, LW, &ref), RN_WC_ACCESS_VIOLATION);
	assert_int_equal(rn_mem_check_local_sge(m, pd, 0, ro, a, 16, LR, &ref), RN_WC_SUCCESS);
	assert_int_equal(rn_mem_check_local_sge(m, pd, 0, s, UINT64_MAX - 7, 16, LR, &ref), RN_WC_WRAP);
	/* zero length: accepted whatever the lkey (T40); STag 0 (T29) */
	assert_int_equal(rn_mem_check_local_sge(m, pd, 0, 0, 0, 0, LW, &ref), RN_WC_SUCCESS);
	assert_int_equal(rn_mem_check_local_sge(m, pd, 0, 0x12345678, 0, 0, LW, &ref), RN_WC_SUCCESS);
	assert_int_equal(rn_mem_check_local_sge(m, pd, 0, 0, a, 16, LR, &ref), RN_WC_QP_NOT_PRIVILEGED);
	assert_int_equal(rn_mem_check_local_sge(m, pd, RN_MEM_PRIVILEGED, 0, a, 16, LW, &ref),
			 RN_WC_SUCCESS);
	assert_ptr_equal(ref.addr, buf);
	assert_int_equal(rn_mem_check_local_sge(m, pd, RN_MEM_PRIVILEGED, 0, a, 16, RN_ACC_REMOTE_WRITE,
						 &ref), RN_WC_ACCESS_VIOLATION);
	/* T29: STag 0 is never valid remotely, even for a privileged QP */
	assert_int_equal(tagged(m, pd, 1, 0, a, 16, W), 0x1100);
	rn_mem_destroy(m);
}

/* ---- T29: STag 0 at the verbs ------------------------------------------------------------ */
static void t29_stag0_verbs(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pd = mk_pd(m);
	struct rn_mem_info in;
	rn_stag_t z = 0, out = 0;
	assert_int_equal(rn_mem_query_mr(m, 0, &in), RN_ERR_INVALID_STAG);
	assert_int_equal(rn_mem_query_mw(m, 0, &in), RN_ERR_INVALID_STAG);
	assert_int_equal(rn_mem_dereg(m, 0), RN_ERR_INVALID_STAG);
	assert_int_equal(rn_mem_rereg_mr(m, &z, RN_REREG_ACCESS, pd, NULL, 0, 0, 0), RN_ERR_INVALID_STAG);
	assert_int_equal(rn_mem_reg_shared_mr(m, 0, pd, 0, RN_ACC_ZERO_BASED, &out), RN_ERR_INVALID_STAG);
	struct rn_mem_qp qp = QP1_PD(pd);
	struct rn_bind_wr bw = { .mw_stag = 0, .mr_stag = 0, .length = 8 };
	assert_int_equal(rn_mem_bind_mw(m, &qp, &bw), RN_WC_INVALID_WINDOW);
	assert_int_equal(rn_mem_local_inv(m, &qp, 0), RN_WC_INVALID_STAG);
	struct iwarp_err e;
	assert_int_equal(rn_mem_remote_inv(m, &qp, 0, &e), RN_WC_REM_INV_REQ);
	assert_int_equal(iwarp_err_u16(e), 0x0100);
	struct rn_fr_wr fr = { .stag = 0, .page_shift = 12 };
	assert_int_equal(rn_mem_fast_reg(m, &qp, &fr), RN_WC_INVALID_REGION);
	rn_mem_destroy(m);
}

/* ---- item 8 (verb part), T28: deallocate ------------------------------------------------- */
static void mm08_t28_dealloc_rules(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pd = mk_pd(m);
	struct rn_mem_qp qp = QP1_PD(pd);
	rn_stag_t mr = mk_mr(m, pd, buf, PAGE, RW_ALL | RN_ACC_MW_BIND), mw = 0;
	assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE2, &mw), RN_OK);
	mw = (mw & ~0xffu) | 0x33;
	struct rn_bind_wr bw = { mw, mr, (uintptr_t)buf, 64, W };
	assert_int_equal(rn_mem_bind_mw(m, &qp, &bw), RN_WC_SUCCESS);
	struct rn_mem_info before, after;
	assert_int_equal(rn_mem_query_mr(m, mr, &before), RN_OK);
	assert_int_equal(before.nbound, 1);
	assert_int_equal(rn_mem_dereg(m, mr), RN_ERR_MW_BOUND_TO_MR);
	assert_int_equal(rn_mem_rereg_mr(m, &mr, RN_REREG_ACCESS, 0, NULL, 0, 0, 0), RN_ERR_MW_BOUND_TO_MR);
	assert_int_equal(rn_mem_query_mr(m, mr, &after), RN_OK);
	assert_memory_equal(&before, &after, sizeof(before));
	assert_int_equal(tagged(m, pd, 1, mr, (uintptr_t)buf, 8, W), OK_T);
	/* dealloc the window (implicit invalidate), then the MR goes */
	assert_int_equal(rn_mem_dereg(m, mw), RN_OK);
	assert_int_equal(rn_mem_query_mr(m, mr, &after), RN_OK);
	assert_int_equal(after.nbound, 0);
	assert_int_equal(rn_mem_dereg(m, mr), RN_OK);
	assert_int_equal(rn_mem_query_mr(m, mr, &after), RN_ERR_INVALID_STAG);
	assert_int_equal(rn_mem_dereg(m, mr), RN_ERR_INVALID_STAG);
	assert_int_equal(tagged(m, pd, 1, mr, (uintptr_t)buf, 8, W), 0x1100);
	/* an Invalid FRMR deallocates without its key */
	rn_stag_t fr = 0;
	assert_int_equal(rn_mem_alloc_mr(m, pd, 4, true, &fr), RN_OK);
	assert_int_equal(rn_mem_dereg(m, fr ^ 0x77), RN_OK);
	assert_int_equal(rn_mem_pd_dealloc(m, pd), RN_OK);
	rn_mem_destroy(m);
}

/* ---- item 9, T32: reregister ------------------------------------------------------------- */
static void mm09_rereg(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pa = mk_pd(m), pb = mk_pd(m);
	rn_stag_t s = mk_mr(m, pa, buf, PAGE, RW_ALL), old = s;
	struct rn_mem_ref ref;
	struct iwarp_err e;
	/* CHANGE_TRANSLATION: later writes land only in the new buffer; the key changed */
	assert_int_equal(rn_mem_rereg_mr(m, &s, RN_REREG_TRANSLATION, 0, buf + 2 * PAGE, PAGE,
					 (uintptr_t)buf + 2 * PAGE, 0), RN_OK);
	assert_int_equal(RN_STAG_IDX(s), RN_STAG_IDX(old));
	assert_int_not_equal(RN_STAG_KEY(s), RN_STAG_KEY(old));
	assert_int_equal(tagged(m, pa, 1, old, (uintptr_t)buf + 2 * PAGE, 8, W), 0x1100);
	assert_int_equal(tagged(m, pa, 1, s, (uintptr_t)buf, 8, W), 0x1101);
	assert_int_equal(rn_mem_check_tagged(m, pa, 1, s, (uintptr_t)buf + 2 * PAGE + 4, 8, W, &ref, &e), 0);
	assert_ptr_equal(ref.addr, buf + 2 * PAGE + 4);
	/* CHANGE_ACCESS dropping REMOTE_WRITE */
	assert_int_equal(rn_mem_rereg_mr(m, &s, RN_REREG_ACCESS, 0, NULL, 0, 0, RN_ACC_REMOTE_READ), RN_OK);
	assert_int_equal(tagged(m, pa, 1, s, (uintptr_t)buf + 2 * PAGE, 8, W), 0x0102);
	assert_int_equal(tagged(m, pa, 1, s, (uintptr_t)buf + 2 * PAGE, 8, R), OK_T);
	/* CHANGE_PD: the old PD's QPs lose it */
	assert_int_equal(rn_mem_rereg_mr(m, &s, RN_REREG_PD | RN_REREG_ACCESS, pb, NULL, 0, 0, RW_ALL), RN_OK);
	assert_int_equal(tagged(m, pa, 1, s, (uintptr_t)buf + 2 * PAGE, 8, W), 0x1102);
	assert_int_equal(tagged(m, pb, 1, s, (uintptr_t)buf + 2 * PAGE, 8, W), OK_T);
	assert_int_equal(rn_mem_pd_dealloc(m, pa), RN_OK);  /* reference moved */
	assert_int_equal(rn_mem_pd_dealloc(m, pb), RN_ERR_PD_IN_USE);
	/* no change on: bad modifier, bad index */
	assert_int_equal(rn_mem_rereg_mr(m, &s, 0, 0, NULL, 0, 0, 0), RN_ERR_INVALID_MODIFIER);
	rn_stag_t bad = RN_STAG(rn_mem_tpt_size(m), 0);
	assert_int_equal(rn_mem_rereg_mr(m, &bad, RN_REREG_ACCESS, 0, NULL, 0, 0, 0), RN_ERR_INVALID_STAG);
	assert_int_equal(tagged(m, pb, 1, s, (uintptr_t)buf + 2 * PAGE, 8, W), OK_T);
	rn_mem_destroy(m);
}

static void t32_rereg_failure_deallocates(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pd = mk_pd(m);
	struct rn_mem_info in;
	rn_stag_t s = mk_mr(m, pd, buf, PAGE, RW_ALL);
	assert_int_equal(rn_mem_rereg_mr(m, &s, RN_REREG_ACCESS, 0, NULL, 0, 0, RN_ACC_REMOTE_WRITE),
			 RN_ERR_INVALID_ACCESS);
	assert_int_equal(rn_mem_query_mr(m, s, &in), RN_ERR_INVALID_STAG);
	s = mk_mr(m, pd, buf, PAGE, RW_ALL);
	assert_int_equal(rn_mem_rereg_mr(m, &s, RN_REREG_PD, 7, NULL, 0, 0, 0), RN_ERR_INVALID_PD);
	assert_int_equal(rn_mem_query_mr(m, s, &in), RN_ERR_INVALID_STAG);
	s = mk_mr(m, pd, buf, PAGE, RW_ALL);
	assert_int_equal(rn_mem_rereg_mr(m, &s, RN_REREG_TRANSLATION, 0, buf, 0, 0, 0), RN_ERR_INVALID_LENGTH);
	assert_int_equal(tagged(m, pd, 1, s, (uintptr_t)buf, 8, W), 0x1100);
	assert_int_equal(rn_mem_pd_dealloc(m, pd), RN_OK); /* nothing leaked */
	rn_mem_destroy(m);
}

/* ---- item 10, T22: fast-register ---------------------------------------------------------- */
static uint64_t pg(int i) { return (uintptr_t)buf + (uint64_t)i * PAGE; }

static void mm10_fast_register_cycle(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pd = mk_pd(m);
	struct rn_mem_qp qp = QP1_PD(pd);
	rn_stag_t s = 0;
	assert_int_equal(rn_mem_alloc_mr(m, pd, 16, true, &s), RN_OK);
	assert_int_equal(tagged(m, pd, 1, s, 0, 8, W), 0x1100);
	uint8_t k = 0x40;
	const uint64_t pages[4] = { pg(6), pg(1), pg(4), pg(3) }; /* non-contiguous */
	struct rn_fr_wr fr = { RN_STAG(RN_STAG_IDX(s), k), RW_ALL, 0x7000100, 3 * PAGE, 0x100, 12, 4, pages };
	assert_int_equal(rn_mem_fast_reg(m, &qp, &fr), RN_WC_SUCCESS);
	rn_stag_t sk = fr.stag;
	/* write straddling pages 0/1 of the list: into buf page 6 tail and page 1 head */
	memset(buf, 0, sizeof(buf));
	uint8_t data[64];
	for (int i = 0; i < 64; i++)
		data[i] = (uint8_t)(i + 1);
	uint64_t to = 0x7000100 + (PAGE - 0x100) - 20; /* 20 bytes before the page-list boundary */
	assert_int_equal(place(m, pd, 1, sk, to, data, 64), 0);
	assert_memory_equal(buf + 7 * PAGE - 20, data, 20);
	assert_memory_equal(buf + 1 * PAGE, data + 20, 44);
	assert_int_equal(buf[7 * PAGE - 21], 0);
	assert_int_equal(buf[PAGE + 44], 0);
	/* exact end of the region: to_base + length - 1 in list page 3 */
	struct rn_mem_ref ref;
	struct iwarp_err e;
	assert_int_equal(rn_mem_check_tagged(m, pd, 1, sk, 0x7000100 + 3 * PAGE - 1, 1, W, &ref, &e), 0);
	assert_ptr_equal(ref.addr, buf + 3 * PAGE + 0x100 - 1);
	assert_int_equal(tagged(m, pd, 1, sk, 0x7000100 + 3 * PAGE, 1, W), 0x1101);
	struct rn_mem_info in;
	assert_int_equal(rn_mem_query_mr(m, s, &in), RN_OK);
	assert_int_equal(in.state, RN_MEM_VALID);
	assert_int_equal(in.key, k);
	assert_true(in.page_list);
	/* T22: a Valid STag cannot be fast-registered again */
	assert_int_equal(rn_mem_fast_reg(m, &qp, &fr), RN_WC_STAG_NOT_INVALID);
	/* LOCAL_INV, then the next key */
	assert_int_equal(rn_mem_local_inv(m, &qp, sk), RN_WC_SUCCESS);
	assert_int_equal(tagged(m, pd, 1, sk, to, 8, W), 0x1100);
	fr.stag = RN_STAG(RN_STAG_IDX(s), k + 1);
	assert_int_equal(rn_mem_fast_reg(m, &qp, &fr), RN_WC_SUCCESS);
	assert_int_equal(tagged(m, pd, 1, sk, to, 8, W), 0x1100);
	assert_int_equal(tagged(m, pd, 1, fr.stag, to, 8, W), OK_T);
	/* zero-based with 2 MiB pages is translated too */
	assert_int_equal(rn_mem_local_inv(m, &qp, fr.stag), RN_WC_SUCCESS);
	rn_mem_destroy(m);
}

static void t22_fast_register_errors(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pd = mk_pd(m), other = mk_pd(m);
	struct rn_mem_qp qp = QP1_PD(pd), unpriv = { pd, 12, false }, qpo = QP1_PD(other);
	rn_stag_t s = 0, local = 0;
	assert_int_equal(rn_mem_alloc_mr(m, pd, 4, true, &s), RN_OK);
	assert_int_equal(rn_mem_alloc_mr(m, pd, 4, false, &local), RN_OK);
	uint64_t pages[5] = { pg(0), pg(1), pg(2), pg(3), pg(4) };
	const struct rn_fr_wr good = { s, RW_ALL, 0x5000, 2 * PAGE, 0, 12, 2, pages };
	struct rn_fr_wr w = good;
	assert_int_equal(rn_mem_fast_reg(m, &unpriv, &w), RN_WC_QP_NOT_PRIVILEGED);
	assert_int_equal(rn_mem_fast_reg(m, &qpo, &w), RN_WC_INVALID_PD);
	w.npages = 5;
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_PBL_TOO_LONG);
	w = good;
	w.stag = local;
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_INVALID_ACCESS); /* RR without the flag */
	w.access = RN_ACC_LOCAL_WRITE;
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_SUCCESS);
	w = good;
	w.access = RN_ACC_REMOTE_WRITE;
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_INVALID_ACCESS);
	w = good;
	w.iova = 0x5010;
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_INVALID_VA);
	w = good;
	pages[1] = pg(1) + 8;
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_INVALID_PBL_ENTRY);
	pages[1] = pg(1);
	w.fbo = PAGE;
	w.iova = 0x6000;
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_INVALID_FBO);
	w = good;
	w.length = 2 * PAGE + 1;
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_INVALID_LENGTH);
	w.length = 2 * PAGE;
	w.fbo = 1;
	w.iova = 0x5001;
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_INVALID_LENGTH);
	w = good;
	w.page_shift = 11;
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_INVALID_PAGE_SIZE);
	w = good;
	w.iova = UINT64_MAX - PAGE + 1;
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_INVALID_VA); /* TO range would wrap */
	/* a registered (non-page-list) MR has no room for a list; an MW is not a region */
	rn_stag_t r = mk_mr(m, pd, buf, PAGE, RW_ALL), mw = 0;
	assert_int_equal(rn_mem_local_inv(m, &qp, r), RN_WC_SUCCESS);
	w = good;
	w.stag = r;
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_PBL_TOO_LONG);
	assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE2, &mw), RN_OK);
	w.stag = mw;
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_INVALID_REGION);
	/* none of the failures changed the entry */
	assert_int_equal(tagged(m, pd, 1, s, 0x5000, 8, W), 0x1100);
	w = good;
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_SUCCESS);
	assert_int_equal(tagged(m, pd, 1, s, 0x5000, 2 * PAGE, W), OK_T);
	rn_mem_destroy(m);
}

/* ---- item 11, T26: Send with Invalidate --------------------------------------------------- */
static unsigned rinv(struct rn_mem *m, const struct rn_mem_qp *qp, rn_stag_t s)
{
	struct iwarp_err e = { 0xf, 0xf, 0xff };
	enum rn_wc_status w = rn_mem_remote_inv(m, qp, s, &e);
	if (w == RN_WC_SUCCESS)
		return OK_T;
	assert_int_equal(w, RN_WC_REM_INV_REQ);
	return iwarp_err_u16(e);
}

static void mm11_t26_send_with_invalidate(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(16, 8);
	uint32_t pd = mk_pd(m), other = mk_pd(m);
	struct rn_mem_qp qp = QP1_PD(pd), qpo = QP1_PD(other);
	const uint64_t pages[1] = { pg(0) };
	rn_stag_t f = 0;
	assert_int_equal(rn_mem_alloc_mr(m, pd, 1, true, &f), RN_OK);
	struct rn_fr_wr fr = { f, RW_ALL, pg(0), PAGE, 0, 12, 1, pages };
	assert_int_equal(rn_mem_fast_reg(m, &qp, &fr), RN_WC_SUCCESS);
	assert_int_equal(rinv(m, &qpo, f), 0x0103);          /* other PD */
	assert_int_equal(rinv(m, &qp, f ^ 1), 0x0100);       /* wrong key */
	assert_int_equal(rinv(m, &qp, f), OK_T);
	struct rn_mem_info in;
	assert_int_equal(rn_mem_query_mr(m, f, &in), RN_OK);
	assert_int_equal(in.state, RN_MEM_INVALID);
	assert_int_equal(tagged(m, pd, 1, f, pg(0), 8, W), 0x1100);
	/* a reg_mr MR has no remote-invalidate right unless asked for */
	rn_stag_t r = mk_mr(m, pd, buf, PAGE, RW_ALL);
	assert_int_equal(rinv(m, &qp, r), 0x0102);
	rn_stag_t ri = mk_mr(m, pd, buf, PAGE, RW_ALL | RN_ACC_REMOTE_INV);
	assert_int_equal(rinv(m, &qp, ri), OK_T);
	/* local rights only */
	rn_stag_t lo = mk_mr(m, pd, buf, PAGE, RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_INV);
	assert_int_equal(rinv(m, &qp, lo), 0x0102);
	/* MR with a bound window */
	rn_stag_t b = mk_mr(m, pd, buf, PAGE, RW_ALL | RN_ACC_REMOTE_INV | RN_ACC_MW_BIND), mw = 0;
	assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE2, &mw), RN_OK);
	struct rn_bind_wr bw = { mw, b, (uintptr_t)buf, 8, R };
	assert_int_equal(rn_mem_bind_mw(m, &qp, &bw), RN_WC_SUCCESS);
	assert_int_equal(rinv(m, &qp, b), 0x0109);
	/* nonexistent */
	assert_int_equal(rinv(m, &qp, RN_STAG(rn_mem_tpt_size(m) - 1, 0) == b ? 0 : RN_STAG(rn_mem_tpt_size(m), 0)), 0x0100);
	/* shared */
	rn_stag_t sh = 0;
	assert_int_equal(rn_mem_reg_shared_mr(m, ri, pd, 0, RW_ALL | RN_ACC_ZERO_BASED | RN_ACC_REMOTE_INV, &sh),
			 RN_ERR_INVALID_STAG); /* ri is Invalid now */
	rn_stag_t src = mk_mr(m, pd, buf, PAGE, RW_ALL | RN_ACC_REMOTE_INV);
	assert_int_equal(rn_mem_reg_shared_mr(m, src, pd, 0, RW_ALL | RN_ACC_ZERO_BASED | RN_ACC_REMOTE_INV, &sh),
			 RN_OK);
	assert_int_equal(rinv(m, &qp, sh), 0x0109);
	assert_int_equal(rinv(m, &qp, src), 0x0109);
	/* type-2 window: only from its QP; type 1: never */
	struct rn_mem_qp qp2 = { pd, 22, true };
	assert_int_equal(rinv(m, &qp2, bw.mw_stag), 0x0103);
	assert_int_equal(rinv(m, &qp, bw.mw_stag), OK_T);
	assert_int_equal(rinv(m, &qp, b), OK_T);
	rn_stag_t w1 = 0;
	assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE1, &w1), RN_OK);
	assert_int_equal(rinv(m, &qp, w1), 0x0100);
	rn_mem_destroy(m);
}

/* ---- item 12, T23, T24, T25, T27: memory windows ------------------------------------------ */
static void mm12_t23_bind_rules(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(16, 8);
	uint32_t pd = mk_pd(m), other = mk_pd(m);
	struct rn_mem_qp qp = QP1_PD(pd), qpo = QP1_PD(other);
	uint64_t a = (uintptr_t)buf;
	rn_stag_t nobind = mk_mr(m, pd, buf, 4 * PAGE, RW_ALL);
	rn_stag_t mr = mk_mr(m, pd, buf, 4 * PAGE, RW_ALL | RN_ACC_MW_BIND);
	rn_stag_t lr = mk_mr(m, pd, buf, 4 * PAGE, RN_ACC_REMOTE_READ | RN_ACC_MW_BIND);
	rn_stag_t zb = 0, mwo = 0, mw = 0;
	assert_int_equal(rn_mem_reg_mr(m, pd, buf, PAGE, 0, RW_ALL | RN_ACC_MW_BIND | RN_ACC_ZERO_BASED, &zb), RN_OK);
	assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE2, &mw), RN_OK);
	assert_int_equal(rn_mem_alloc_mw(m, other, RN_MW_TYPE2, &mwo), RN_OK);
	struct rn_bind_wr w = { RN_STAG(RN_STAG_IDX(mw), 0x10), mr, a + PAGE, PAGE, W | R };
	struct rn_bind_wr x = w;
	x.mr_stag = nobind;
	assert_int_equal(rn_mem_bind_mw(m, &qp, &x), RN_WC_ACCESS_VIOLATION);
	x = w;
	x.mr_stag = lr;
	assert_int_equal(rn_mem_bind_mw(m, &qp, &x), RN_WC_ACCESS_VIOLATION);  /* RW on MR without LW */
	x.access = R;
	x.mr_stag = zb;
	x.addr = 0;
	assert_int_equal(rn_mem_bind_mw(m, &qp, &x), RN_WC_INVALID_REGION);   /* zero-based MR */
	x = w;
	x.addr = a + 3 * PAGE + 1;
	assert_int_equal(rn_mem_bind_mw(m, &qp, &x), RN_WC_BASE_BOUNDS);
	x.addr = a - 1;
	assert_int_equal(rn_mem_bind_mw(m, &qp, &x), RN_WC_BASE_BOUNDS);
	x = w;
	x.length = UINT64_MAX;
	assert_int_equal(rn_mem_bind_mw(m, &qp, &x), RN_WC_BASE_BOUNDS);
	x = w;
	assert_int_equal(rn_mem_bind_mw(m, &qpo, &x), RN_WC_INVALID_PD);       /* QP in another PD */
	x.mw_stag = mwo;
	assert_int_equal(rn_mem_bind_mw(m, &qp, &x), RN_WC_INVALID_PD);        /* MW in another PD */
	x = w;
	x.mr_stag = mr ^ 1;
	assert_int_equal(rn_mem_bind_mw(m, &qp, &x), RN_WC_INVALID_REGION);
	x.mr_stag = mw;
	assert_int_equal(rn_mem_bind_mw(m, &qp, &x), RN_WC_INVALID_REGION);
	x = w;
	x.mw_stag = mr;
	assert_int_equal(rn_mem_bind_mw(m, &qp, &x), RN_WC_INVALID_WINDOW);
	x.mw_stag = RN_STAG(rn_mem_tpt_size(m), 0);
	assert_int_equal(rn_mem_bind_mw(m, &qp, &x), RN_WC_INVALID_WINDOW);
	x = w;
	x.access = W | RN_ACC_MW_BIND;
	assert_int_equal(rn_mem_bind_mw(m, &qp, &x), RN_WC_INVALID_ACCESS);
	/* success */
	assert_int_equal(rn_mem_bind_mw(m, &qp, &w), RN_WC_SUCCESS);
	struct rn_mem_info in;
	assert_int_equal(rn_mem_query_mw(m, w.mw_stag, &in), RN_OK);
	assert_int_equal(in.state, RN_MEM_VALID);
	assert_int_equal(in.key, 0x10);
	assert_int_equal(in.access & (W | R), W | R);
	assert_int_equal(in.mw_type, RN_MW_TYPE2);
	assert_int_equal(in.qp_id, qp.qp_id);
	assert_int_equal(RN_STAG_IDX(in.mr_stag), RN_STAG_IDX(mr));
	assert_int_equal(rn_mem_query_mr(m, w.mw_stag, &in), RN_ERR_INVALID_STAG);
	assert_int_equal(rn_mem_query_mw(m, mr, &in), RN_ERR_INVALID_STAG);
	/* window bounds vs MR bounds (T15 for windows) */
	assert_int_equal(tagged(m, pd, qp.qp_id, w.mw_stag, a + PAGE, PAGE, W), OK_T);
	assert_int_equal(tagged(m, pd, qp.qp_id, w.mw_stag, a + 2 * PAGE - 1, 1, W), OK_T);
	assert_int_equal(tagged(m, pd, qp.qp_id, w.mw_stag, a + PAGE - 1, 1, W), 0x1101);
	assert_int_equal(tagged(m, pd, qp.qp_id, w.mw_stag, a + 2 * PAGE, 1, W), 0x1101);
	/* type 2 already Valid */
	assert_int_equal(rn_mem_bind_mw(m, &qp, &w), RN_WC_STAG_NOT_INVALID);
	assert_int_equal(rn_mem_query_mr(m, mr, &in), RN_OK);
	assert_int_equal(in.nbound, 1);
	rn_mem_destroy(m);
}

static void mm12_t24_t25_window_access(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(16, 8);
	uint32_t pd = mk_pd(m);
	struct rn_mem_qp qp1 = { pd, 101, true };
	uint64_t a = (uintptr_t)buf;
	rn_stag_t mr = mk_mr(m, pd, buf, 4 * PAGE, RW_ALL | RN_ACC_MW_BIND), mw = 0, rw = 0;
	assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE2, &mw), RN_OK);
	assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE2, &rw), RN_OK);
	struct rn_bind_wr w = { RN_STAG(RN_STAG_IDX(mw), 1), mr, a + 100, 200, W };
	assert_int_equal(rn_mem_bind_mw(m, &qp1, &w), RN_WC_SUCCESS);
	struct rn_mem_ref ref;
	struct iwarp_err e;
	assert_int_equal(rn_mem_check_tagged(m, pd, 101, w.mw_stag, a + 150, 50, W, &ref, &e), 0);
	assert_ptr_equal(ref.addr, buf + 150);
	/* T24: another QP of the same PD may not use the window; the MR is fine from both */
	assert_int_equal(tagged(m, pd, 102, w.mw_stag, a + 150, 50, W), 0x1102);
	assert_int_equal(tagged(m, pd, 102, mr, a + 150, 50, W), OK_T);
	assert_int_equal(tagged(m, pd, 101, mr, a + 150, 50, W), OK_T);
	/* window rights, not the MR's: REMOTE_READ only window gets a write */
	struct rn_bind_wr r = { rw, mr, a, 64, R };
	assert_int_equal(rn_mem_bind_mw(m, &qp1, &r), RN_WC_SUCCESS);
	assert_int_equal(tagged(m, pd, 101, rw, a, 8, W), 0x0102);
	assert_int_equal(tagged(m, pd, 101, rw, a, 8, R), OK_T);
	/* an MW may not be a local lkey (item 7) */
	assert_int_equal(rn_mem_check_local_sge(m, pd, 0, rw, a, 8, RN_ACC_LOCAL_READ, &ref),
			 RN_WC_INVALID_STAG);
	/* T25 / item 12: invalidate, rebind with a new key: old key fails, new works, MR works */
	assert_int_equal(rn_mem_local_inv(m, &qp1, w.mw_stag), RN_WC_SUCCESS);
	assert_int_equal(tagged(m, pd, 101, w.mw_stag, a + 150, 50, W), 0x1100);
	assert_int_equal(tagged(m, pd, 101, mr, a + 150, 50, W), OK_T);
	rn_stag_t oldk = w.mw_stag;
	w.mw_stag = RN_STAG(RN_STAG_IDX(mw), 2);
	assert_int_equal(rn_mem_bind_mw(m, &qp1, &w), RN_WC_SUCCESS);
	assert_int_equal(tagged(m, pd, 101, oldk, a + 150, 50, W), 0x1100);
	assert_int_equal(tagged(m, pd, 101, w.mw_stag, a + 150, 50, W), OK_T);
	rn_mem_destroy(m);
}

/* Zero-based type-2 window on a page-list MR: translation through the parent's list. */
static void mm12_window_on_page_list(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pd = mk_pd(m);
	struct rn_mem_qp qp = QP1_PD(pd);
	rn_stag_t f = 0, mw = 0;
	const uint64_t pages[3] = { pg(5), pg(2), pg(7) };
	assert_int_equal(rn_mem_alloc_mr(m, pd, 3, true, &f), RN_OK);
	struct rn_fr_wr fr = { f, RW_ALL | RN_ACC_MW_BIND, 0x9000 + 0x80, 3 * PAGE - 0x80, 0x80, 12, 3, pages };
	assert_int_equal(rn_mem_fast_reg(m, &qp, &fr), RN_WC_SUCCESS);
	assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE2, &mw), RN_OK);
	/* window over TO [0x9000 + PAGE - 16, +64): list pages 0..1 */
	struct rn_bind_wr w = { mw, f, 0x9000 + PAGE - 16, 64, W | RN_ACC_ZERO_BASED };
	assert_int_equal(rn_mem_bind_mw(m, &qp, &w), RN_WC_SUCCESS);
	memset(buf, 0, sizeof(buf));
	uint8_t d[64];
	memset(d, 0xab, sizeof(d));
	assert_int_equal(place(m, pd, qp.qp_id, mw, 0, d, 64), 0);
	assert_memory_equal(buf + 6 * PAGE - 16, d, 16);
	assert_memory_equal(buf + 2 * PAGE, d, 48);
	assert_int_equal(buf[2 * PAGE + 48], 0);
	assert_int_equal(tagged(m, pd, qp.qp_id, mw, 1, 64, W), 0x1101);
	/* the FRMR cannot be invalidated with the window bound */
	assert_int_equal(rn_mem_local_inv(m, &qp, f), RN_WC_MW_STILL_BOUND);
	rn_mem_destroy(m);
}

static void t27_local_invalidate_rules(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(16, 8);
	uint32_t pd = mk_pd(m), other = mk_pd(m);
	struct rn_mem_qp qp1 = { pd, 1, true }, qp2 = { pd, 2, true }, qpo = { other, 3, true };
	rn_stag_t mr = mk_mr(m, pd, buf, PAGE, RW_ALL | RN_ACC_MW_BIND), mw = 0;
	assert_int_equal(rn_mem_local_inv(m, &qpo, mr), RN_WC_INVALID_PD);
	assert_int_equal(rn_mem_local_inv(m, &qp1, mr ^ 4), RN_WC_INVALID_STAG);
	assert_int_equal(rn_mem_local_inv(m, &qp1, mr), RN_WC_SUCCESS);
	assert_int_equal(rn_mem_local_inv(m, &qp1, mr), RN_WC_SUCCESS); /* already Invalid */
	mr = mk_mr(m, pd, buf, PAGE, RW_ALL | RN_ACC_MW_BIND);
	assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE2, &mw), RN_OK);
	struct rn_bind_wr w = { mw, mr, (uintptr_t)buf, 16, R };
	assert_int_equal(rn_mem_bind_mw(m, &qp1, &w), RN_WC_SUCCESS);
	assert_int_equal(rn_mem_local_inv(m, &qp1, mr), RN_WC_MW_STILL_BOUND);
	assert_int_equal(rn_mem_local_inv(m, &qp2, mw), RN_WC_INVALID_PD); /* bound to QP1 */
	assert_int_equal(rn_mem_local_inv(m, &qp1, mw), RN_WC_SUCCESS);
	assert_int_equal(rn_mem_qp_check_unbound(m, 1), RN_OK);
	/* re-bound on QP2 of the same PD; Destroy-QP check follows the binding (T33) */
	assert_int_equal(rn_mem_bind_mw(m, &qp2, &w), RN_WC_SUCCESS);
	assert_int_equal(rn_mem_qp_check_unbound(m, 2), RN_ERR_MW_BOUND_TO_QP);
	assert_int_equal(rn_mem_qp_check_unbound(m, 1), RN_OK);
	assert_int_equal(tagged(m, pd, 2, mw, (uintptr_t)buf, 8, R), OK_T);
	assert_int_equal(rn_mem_local_inv(m, &qp2, mw), RN_WC_SUCCESS);
	assert_int_equal(rn_mem_local_inv(m, &qpo, mw), RN_WC_INVALID_PD);  /* Invalid MW: PD check */
	assert_int_equal(rn_mem_local_inv(m, &qp1, mr), RN_WC_SUCCESS);
	rn_mem_destroy(m);
}

static void type1_window_bind_rebind_unbind(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(16, 8);
	uint32_t pd = mk_pd(m);
	struct rn_mem_qp qp1 = { pd, 1, false }, qp2 = { pd, 2, false };
	rn_stag_t a = mk_mr(m, pd, buf, PAGE, RW_ALL | RN_ACC_MW_BIND);
	rn_stag_t b = mk_mr(m, pd, buf + PAGE, PAGE, RW_ALL | RN_ACC_MW_BIND), mw = 0;
	assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE1, &mw), RN_OK);
	struct rn_bind_wr w = { mw, a, (uintptr_t)buf, 32, W };
	struct rn_bind_wr z = w;
	z.access |= RN_ACC_ZERO_BASED;
	assert_int_equal(rn_mem_bind_mw(m, &qp1, &z), RN_WC_INVALID_ACCESS); /* type 1 not zero-based */
	assert_int_equal(rn_mem_bind_mw(m, &qp1, &w), RN_WC_SUCCESS);
	/* type 1 belongs to the PD: any QP of the PD may use it */
	assert_int_equal(tagged(m, pd, 2, mw, (uintptr_t)buf, 8, W), OK_T);
	assert_int_equal(rn_mem_qp_check_unbound(m, 1), RN_OK);
	/* rebind to b from another QP: the count moves */
	struct rn_bind_wr w2 = { RN_STAG(RN_STAG_IDX(mw), 9), b, (uintptr_t)buf + PAGE, 32, W };
	assert_int_equal(rn_mem_bind_mw(m, &qp2, &w2), RN_WC_SUCCESS);
	struct rn_mem_info in;
	assert_int_equal(rn_mem_query_mr(m, a, &in), RN_OK);
	assert_int_equal(in.nbound, 0);
	assert_int_equal(rn_mem_query_mr(m, b, &in), RN_OK);
	assert_int_equal(in.nbound, 1);
	assert_int_equal(tagged(m, pd, 1, mw, (uintptr_t)buf, 8, W), 0x1100);
	assert_int_equal(tagged(m, pd, 1, w2.mw_stag, (uintptr_t)buf + PAGE, 8, W), OK_T);
	/* not invalidated by Invalidate Local STag; unbound by a zero-length bind */
	assert_int_equal(rn_mem_local_inv(m, &qp1, w2.mw_stag), RN_WC_INVALID_STAG);
	struct rn_bind_wr u = { RN_STAG(RN_STAG_IDX(mw), 10), 0, 0, 0, 0 };
	assert_int_equal(rn_mem_bind_mw(m, &qp1, &u), RN_WC_SUCCESS);
	assert_int_equal(rn_mem_query_mr(m, b, &in), RN_OK);
	assert_int_equal(in.nbound, 0);
	assert_int_equal(tagged(m, pd, 1, w2.mw_stag, (uintptr_t)buf + PAGE, 8, W), 0x1100);
	assert_int_equal(rn_mem_query_mw(m, mw, &in), RN_OK);
	assert_int_equal(in.state, RN_MEM_INVALID);
	assert_int_equal(in.mw_type, RN_MW_TYPE1);
	assert_int_equal(rn_mem_dereg(m, b), RN_OK);
	rn_mem_destroy(m);
}

/* ---- T31: register shared ----------------------------------------------------------------- */
static void t31_register_shared(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(16, 8);
	uint32_t pd = mk_pd(m), other = mk_pd(m);
	struct rn_mem_qp qp = QP1_PD(pd);
	rn_stag_t src = mk_mr(m, pd, buf + 0x10, PAGE, RW_ALL), sh = 0;
	assert_int_equal(rn_mem_reg_shared_mr(m, src ^ 1, other, 0, RN_ACC_ZERO_BASED, &sh), RN_ERR_INVALID_STAG);
	assert_int_equal(rn_mem_reg_shared_mr(m, src, other, 0x20000, RW_ALL, &sh), RN_ERR_INVALID_VA);
	assert_int_equal(rn_mem_reg_shared_mr(m, src, other, 0, RN_ACC_REMOTE_WRITE, &sh), RN_ERR_INVALID_ACCESS);
	assert_int_equal(rn_mem_reg_shared_mr(m, src, 99, 0, RN_ACC_ZERO_BASED, &sh), RN_ERR_INVALID_PD);
	assert_int_equal(rn_mem_reg_shared_mr(m, src, other, 0x20010, RW_ALL, &sh), RN_OK);
	assert_int_not_equal(RN_STAG_IDX(sh), RN_STAG_IDX(src));
	struct rn_mem_info in;
	assert_int_equal(rn_mem_query_mr(m, src, &in), RN_OK);
	assert_true(in.shared);
	assert_int_equal(rn_mem_query_mr(m, sh, &in), RN_OK);
	assert_true(in.shared);
	assert_int_equal(in.pd, other);
	struct rn_mem_ref ref;
	struct iwarp_err e;
	assert_int_equal(rn_mem_check_tagged(m, other, 1, sh, 0x20010 + 5, 5, W, &ref, &e), 0);
	assert_ptr_equal(ref.addr, buf + 0x15);
	assert_int_equal(rn_mem_local_inv(m, &qp, src), RN_WC_INVALID_STAG);
	struct rn_mem_qp qpo = QP1_PD(other);
	assert_int_equal(rn_mem_local_inv(m, &qpo, sh), RN_WC_INVALID_STAG);
	struct rn_fr_wr fr = { src, RW_ALL, 0, PAGE, 0, 12, 0, NULL };
	assert_int_equal(rn_mem_fast_reg(m, &qp, &fr), RN_WC_INVALID_REGION);
	assert_int_equal(rn_mem_rereg_mr(m, &src, RN_REREG_ACCESS, 0, NULL, 0, 0, 0), RN_ERR_INVALID_STAG);
	assert_int_equal(rn_mem_dereg(m, sh), RN_OK);
	assert_int_equal(tagged(m, pd, 1, src, (uintptr_t)buf + 0x10, PAGE, W), OK_T);
	/* shared page-list MR keeps the list alive after the source is gone */
	rn_stag_t f = 0, fs = 0;
	const uint64_t pages[2] = { pg(3), pg(1) };
	assert_int_equal(rn_mem_alloc_mr(m, pd, 2, true, &f), RN_OK);
	struct rn_fr_wr w = { f, RW_ALL, 0x4000, 2 * PAGE, 0, 12, 2, pages };
	assert_int_equal(rn_mem_fast_reg(m, &qp, &w), RN_WC_SUCCESS);
	assert_int_equal(rn_mem_reg_shared_mr(m, f, pd, 0, RW_ALL | RN_ACC_ZERO_BASED, &fs), RN_OK);
	assert_int_equal(rn_mem_dereg(m, f), RN_OK);
	assert_int_equal(rn_mem_check_tagged(m, pd, 1, fs, PAGE + 8, 8, W, &ref, &e), 0);
	assert_ptr_equal(ref.addr, buf + PAGE + 8);
	rn_mem_destroy(m);
}

/* ---- T02, item 15: PDs and limits --------------------------------------------------------- */
static void t02_pd_in_use(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t p = mk_pd(m);
	rn_stag_t mr = mk_mr(m, p, buf, PAGE, 0), mw = 0;
	assert_int_equal(rn_mem_alloc_mw(m, p, RN_MW_TYPE2, &mw), RN_OK);
	assert_int_equal(rn_mem_pd_get(m, p), RN_OK); /* QP */
	assert_int_equal(rn_mem_pd_get(m, p), RN_OK); /* S-RQ */
	assert_int_equal(rn_mem_pd_dealloc(m, p), RN_ERR_PD_IN_USE);
	assert_int_equal(rn_mem_pd_put(m, p), RN_OK);
	assert_int_equal(rn_mem_pd_put(m, p), RN_OK);
	assert_int_equal(rn_mem_dereg(m, mr), RN_OK);
	assert_int_equal(rn_mem_pd_dealloc(m, p), RN_ERR_PD_IN_USE); /* the never-bound MW */
	(void)mk_mr(m, p, buf, PAGE, 0); /* P still usable */
	assert_int_equal(rn_mem_pd_put(m, p), RN_OK);          /* drops the new MR's reference... */
	assert_int_equal(rn_mem_pd_put(m, p), RN_OK);          /* ...and the MW's: misuse, */
	assert_int_equal(rn_mem_pd_put(m, p), RN_ERR_INVALID_PD); /* but never below zero */
	rn_mem_destroy(m);
	m = mk_mem(8, 8);
	p = mk_pd(m);
	assert_int_equal(rn_mem_alloc_mw(m, p, RN_MW_TYPE2, &mw), RN_OK);
	assert_int_equal(rn_mem_pd_dealloc(m, p), RN_ERR_PD_IN_USE);
	assert_int_equal(rn_mem_dereg(m, mw), RN_OK);
	assert_int_equal(rn_mem_pd_dealloc(m, p), RN_OK);
	assert_int_equal(rn_mem_pd_dealloc(m, p), RN_ERR_INVALID_PD);
	assert_int_equal(rn_mem_pd_dealloc(m, 0), RN_ERR_INVALID_PD);
	assert_int_equal(rn_mem_pd_dealloc(m, 1000), RN_ERR_INVALID_PD);
	assert_int_equal(rn_mem_pd_get(m, p), RN_ERR_INVALID_PD);
	rn_stag_t s;
	assert_int_equal(rn_mem_reg_mr(m, p, buf, PAGE, 0, 0, &s), RN_ERR_INVALID_PD);
	assert_int_equal(rn_mem_alloc_mw(m, 0, RN_MW_TYPE1, &s), RN_ERR_INVALID_PD);
	assert_int_equal(rn_mem_alloc_mr(m, 5, 1, false, &s), RN_ERR_INVALID_PD);
	/* PD limit and reuse */
	uint32_t ids[8];
	for (int i = 0; i < 8; i++)
		assert_int_equal(rn_mem_pd_alloc(m, &ids[i]), RN_OK);
	uint32_t x;
	assert_int_equal(rn_mem_pd_alloc(m, &x), RN_ERR_NO_RESOURCES);
	for (int i = 0; i < 8; i++)
		assert_int_equal(rn_mem_pd_dealloc(m, ids[i]), RN_OK);
	for (int i = 0; i < 8; i++)
		assert_int_equal(rn_mem_pd_alloc(m, &ids[i]), RN_OK);
	rn_mem_destroy(m);
}

static void mm15_limits_no_leak(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(10, 3);
	uint32_t pd = mk_pd(m);
	rn_stag_t s[10], w[3], x;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 10; i++)
			s[i] = mk_mr(m, pd, buf, 8, 0);
		assert_int_equal(rn_mem_reg_mr(m, pd, buf, 8, 0, 0, &x), RN_ERR_NO_RESOURCES);
		assert_int_equal(rn_mem_alloc_mr(m, pd, 1, false, &x), RN_ERR_NO_RESOURCES);
		for (int i = 0; i < 3; i++)
			assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE2, &w[i]), RN_OK);
		assert_int_equal(rn_mem_alloc_mw(m, pd, RN_MW_TYPE1, &x), RN_ERR_NO_RESOURCES);
		for (int i = 0; i < 10; i++)
			assert_int_equal(rn_mem_dereg(m, s[i]), RN_OK);
		for (int i = 0; i < 3; i++)
			assert_int_equal(rn_mem_dereg(m, w[i]), RN_OK);
	}
	assert_int_equal(rn_mem_alloc_mr(m, pd, 17, false, &x), RN_ERR_NO_RESOURCES); /* > max_pbl */
	assert_int_equal(rn_mem_pd_dealloc(m, pd), RN_OK);
	rn_mem_destroy(m);
}

/* ---- argument validation: nothing crashes on bad handles ---------------------------------- */
static void bad_arguments(void **st)
{
	(void)st;
	struct rn_mem_limits lim = { 1, 1, 1, 1 };
	struct rn_mem *m = NULL;
	assert_int_equal(rn_mem_create(NULL, &m), RN_ERR_INVALID_MODIFIER);
	assert_int_equal(rn_mem_create(&lim, NULL), RN_ERR_INVALID_MODIFIER);
	lim.max_pd = 0;
	assert_int_equal(rn_mem_create(&lim, &m), RN_ERR_INVALID_MODIFIER);
	lim = (struct rn_mem_limits){ 1, RN_STAG_IDX_MAX, 1, 1 };
	assert_int_equal(rn_mem_create(&lim, &m), RN_ERR_INVALID_MODIFIER);
	assert_null(m);
	rn_mem_destroy(NULL);
	rn_stag_t s = 0;
	uint32_t pd = 0;
	struct rn_mem_info in;
	struct rn_mem_qp qp = { 1, 1, true };
	struct rn_fr_wr fr = { 0 };
	struct rn_bind_wr bw = { 0 };
	struct iwarp_err e;
	assert_int_equal(rn_mem_pd_alloc(NULL, &pd), RN_ERR_INVALID_RNIC);
	assert_int_equal(rn_mem_pd_dealloc(NULL, 1), RN_ERR_INVALID_RNIC);
	assert_int_equal(rn_mem_pd_get(NULL, 1), RN_ERR_INVALID_RNIC);
	assert_int_equal(rn_mem_pd_put(NULL, 1), RN_ERR_INVALID_RNIC);
	assert_int_equal(rn_mem_reg_mr(NULL, 1, buf, 1, 0, 0, &s), RN_ERR_INVALID_RNIC);
	assert_int_equal(rn_mem_rereg_mr(NULL, &s, 1, 1, buf, 1, 0, 0), RN_ERR_INVALID_RNIC);
	assert_int_equal(rn_mem_reg_shared_mr(NULL, 1, 1, 0, 0, &s), RN_ERR_INVALID_RNIC);
	assert_int_equal(rn_mem_alloc_mr(NULL, 1, 1, 0, &s), RN_ERR_INVALID_RNIC);
	assert_int_equal(rn_mem_alloc_mw(NULL, 1, RN_MW_TYPE1, &s), RN_ERR_INVALID_RNIC);
	assert_int_equal(rn_mem_dereg(NULL, 0x100), RN_ERR_INVALID_RNIC);
	assert_int_equal(rn_mem_query_mr(NULL, 0x100, &in), RN_ERR_INVALID_RNIC);
	assert_int_equal(rn_mem_qp_check_unbound(NULL, 1), RN_ERR_INVALID_RNIC);
	assert_int_equal(rn_mem_fast_reg(NULL, &qp, &fr), RN_WC_INVALID_WQE);
	assert_int_equal(rn_mem_bind_mw(NULL, &qp, &bw), RN_WC_INVALID_WQE);
	assert_int_equal(rn_mem_local_inv(NULL, &qp, 0x100), RN_WC_INVALID_WQE);
	assert_int_equal(rn_mem_remote_inv(NULL, &qp, 0x100, &e), RN_WC_REM_INV_REQ);
	assert_int_equal(rn_mem_check_tagged(NULL, 1, 1, 0x100, 0, 1, W, NULL, &e), -1);
	assert_int_equal(iwarp_err_u16(e), 0x1100);
	assert_int_equal(rn_mem_check_local_sge(NULL, 1, 0, 0x100, 0, 1, 0, NULL), RN_WC_INVALID_STAG);
	assert_int_equal(rn_mem_ref_next(NULL, NULL), -1);
	assert_int_equal(rn_mem_reader_register(NULL, NULL), RN_ERR_INVALID_RNIC);

	struct rn_mem *mm = mk_mem(4, 4);
	pd = mk_pd(mm);
	assert_int_equal(rn_mem_reg_mr(mm, pd, buf, 1, 0, 0, NULL), RN_ERR_INVALID_MODIFIER);
	assert_int_equal(rn_mem_reg_mr(mm, pd, NULL, 1, 0, 0, &s), RN_ERR_INVALID_VA);
	assert_int_equal(rn_mem_reg_mr(mm, pd, buf, 0, 0, 0, &s), RN_ERR_INVALID_LENGTH);
	assert_int_equal(rn_mem_reg_mr(mm, pd, (void *)(UINTPTR_MAX - 8), 16, 0, RN_ACC_ZERO_BASED, &s),
			 RN_ERR_INVALID_LENGTH);
	assert_int_equal(rn_mem_alloc_mw(mm, pd, 3, &s), RN_ERR_INVALID_MODIFIER);
	assert_int_equal(rn_mem_alloc_mr(mm, pd, 0, false, &s), RN_ERR_INVALID_MODIFIER);
	assert_int_equal(rn_mem_query_mr(mm, 0x100, NULL), RN_ERR_INVALID_MODIFIER);
	assert_int_equal(rn_mem_fast_reg(mm, NULL, &fr), RN_WC_INVALID_WQE);
	assert_int_equal(rn_mem_bind_mw(mm, &qp, NULL), RN_WC_INVALID_WQE);
	for (uint32_t i = 0; i < 64; i++) {   /* every index, allocated or not: no crash */
		rn_stag_t t = RN_STAG(i, i * 37);
		(void)rn_mem_query_mr(mm, t, &in);
		(void)tagged(mm, pd, 1, t, 0, 8, W);
		assert_int_equal(rn_mem_local_inv(mm, &qp, t) == RN_WC_SUCCESS, false);
		assert_int_equal(rn_mem_dereg(mm, t), RN_ERR_INVALID_STAG);
	}
	rn_mem_destroy(mm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mm01_stag_shape_and_uniqueness),
		cmocka_unit_test(t28_never_index0_and_fresh_key),
		cmocka_unit_test(mm03_invalid_stag),
		cmocka_unit_test(mm02_mm04_t15_bounds_edges),
		cmocka_unit_test(mm04_top_of_to_space_and_zero_based),
		cmocka_unit_test(mm05_t14_pd_isolation),
		cmocka_unit_test(mm06_t16_remote_rights),
		cmocka_unit_test(t30_registration_rights),
		cmocka_unit_test(check_precedence),
		cmocka_unit_test(mm07_local_sge),
		cmocka_unit_test(t29_stag0_verbs),
		cmocka_unit_test(mm08_t28_dealloc_rules),
		cmocka_unit_test(mm09_rereg),
		cmocka_unit_test(t32_rereg_failure_deallocates),
		cmocka_unit_test(mm10_fast_register_cycle),
		cmocka_unit_test(t22_fast_register_errors),
		cmocka_unit_test(mm11_t26_send_with_invalidate),
		cmocka_unit_test(mm12_t23_bind_rules),
		cmocka_unit_test(mm12_t24_t25_window_access),
		cmocka_unit_test(mm12_window_on_page_list),
		cmocka_unit_test(t27_local_invalidate_rules),
		cmocka_unit_test(type1_window_bind_rebind_unbind),
		cmocka_unit_test(t31_register_shared),
		cmocka_unit_test(t02_pd_in_use),
		cmocka_unit_test(mm15_limits_no_leak),
		cmocka_unit_test(bad_arguments),
		cmocka_unit_test(holders_drop_on_dereg),
		cmocka_unit_test(holders_drop_on_destroy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
