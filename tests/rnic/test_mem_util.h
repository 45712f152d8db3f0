/* Helpers shared by the rn_mem tests. */
#ifndef TEST_MEM_UTIL_H
#define TEST_MEM_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rdmap.h"
#include "rn_mem.h"

#define PAGE 4096u
#define RW_ALL (RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE | RN_ACC_REMOTE_READ)

static inline struct rn_mem *mk_mem(uint32_t max_mr, uint32_t max_mw)
{
	struct rn_mem_limits lim = { .max_pd = 8, .max_mr = max_mr, .max_mw = max_mw, .max_pbl = 16 };
	struct rn_mem *m = NULL;
	assert_int_equal(rn_mem_create(&lim, &m), RN_OK);
	assert_non_null(m);
	return m;
}

static inline uint32_t mk_pd(struct rn_mem *m)
{
	uint32_t pd = 0;
	assert_int_equal(rn_mem_pd_alloc(m, &pd), RN_OK);
	assert_true(pd != 0);
	return pd;
}

static inline rn_stag_t mk_mr(struct rn_mem *m, uint32_t pd, void *buf, uint64_t len, uint32_t acc)
{
	rn_stag_t s = 0;
	assert_int_equal(rn_mem_reg_mr(m, pd, buf, len, (uintptr_t)buf, acc, &s), RN_OK);
	return s;
}

/* check_tagged result as 0xLECC, or 0xffff for success */
static inline unsigned tagged(struct rn_mem *m, uint32_t pd, uint32_t qp, rn_stag_t s, uint64_t to,
			      uint64_t len, uint32_t need)
{
	struct rn_mem_ref ref;
	struct iwarp_err e = { 0xf, 0xf, 0xff };
	if (rn_mem_check_tagged(m, pd, qp, s, to, len, need, &ref, &e) == 0)
		return 0xffff;
	return iwarp_err_u16(e);
}
#define OK_T 0xffffu
#define W RN_ACC_REMOTE_WRITE
#define R RN_ACC_REMOTE_READ

/* a tagged write "placed" through the ref walk, as the data path would */
static inline int place(struct rn_mem *m, uint32_t pd, uint32_t qp, rn_stag_t s, uint64_t to,
			const void *src, uint64_t len)
{
	struct rn_mem_ref ref;
	struct iwarp_err e;
	if (rn_mem_check_tagged(m, pd, qp, s, to, len, W, &ref, &e) != 0)
		return -1;
	const uint8_t *p = src;
	while (ref.remain > 0) {
		memcpy(ref.addr, p, ref.run);
		p += ref.run;
		if (rn_mem_ref_next(m, &ref) != 0)
			return -2;
	}
	return 0;
}

#endif
