/* T27: 10^5 receives streamed through one CQ while VipResizeCQ grows and shrinks it: the
 * number of CQ entries equals the number of receives completed, none lost or out of order.
 * Flow control: B keeps T27_POSTED receives posted and returns a credit message per batch. */
#include <string.h>

#include "va.h"

#define RD VIP_SERVICE_RELIABLE_DELIVERY
#define T27_TOTAL 100000u
#define T27_POSTED 256u
#define T27_BATCH 128u
#define T27_RING 32u
#define T27_CREDIT_RECVS 4u

void t27_a(struct va_ctx *c)
{
	struct va_env e;
	VIP_DESCRIPTOR *got;
	va_env_open(c, &e, 1 << 20);
	VIP_VI_HANDLE vi = va_vi(&e, RD, NULL, NULL);
	VIP_DESCRIPTOR *cr[T27_CREDIT_RECVS], *s[T27_RING];
	for (unsigned i = 0; i < T27_CREDIT_RECVS; i++) {
		cr[i] = va_desc1(&e, 0, va_alloc(&e, 16), 16);
		va_post_recv(&e, vi, cr[i]);
	}
	uint64_t *sb[T27_RING];
	for (unsigned i = 0; i < T27_RING; i++) {
		sb[i] = va_alloc(&e, 8);
		s[i] = va_desc1(&e, 0, sb[i], 8);
	}
	va_barrier(c, "open");
	va_client_connect(&e, vi, "t27");
	va_barrier(c, "posted");
	unsigned credits = T27_POSTED, outstanding = 0, head = 0;
	for (uint64_t seq = 0; seq < T27_TOTAL; seq++) {
		while (credits == 0) {
			VA_OK(c, VipRecvWait(vi, VA_WAIT_MS, &got));
			VA_TRUE(c, !(got->CS.Status & VIP_STATUS_ERROR_MASK), "credit receive failed");
			credits += *(uint32_t *)got->DS[0].Local.Data.Address;
			va_post_recv(&e, vi, got);
		}
		if (outstanding == T27_RING) {
			VA_OK(c, VipSendWait(vi, VA_WAIT_MS, &got));
			VA_TRUE(c, got == s[head] && !(got->CS.Status & VIP_STATUS_ERROR_MASK),
				"send %llu failed or out of order", (unsigned long long)(seq - T27_RING));
			head = (head + 1) % T27_RING;
			outstanding--;
		}
		unsigned k = (head + outstanding) % T27_RING;
		*sb[k] = seq;
		va_post_send(&e, vi, s[k]);
		outstanding++;
		credits--;
	}
	while (outstanding--) {
		VA_OK(c, VipSendWait(vi, VA_WAIT_MS, &got));
		VA_TRUE(c, !(got->CS.Status & VIP_STATUS_ERROR_MASK), "final send failed");
	}
	va_close_vi(&e, vi, "done");
}

void t27_b(struct va_ctx *c)
{
	struct va_env e;
	VIP_CQ_HANDLE cq;
	VIP_VI_HANDLE who;
	VIP_BOOLEAN rq;
	VIP_DESCRIPTOR *got;
	va_env_open(c, &e, 1 << 20);
	VA_OK(c, VipCreateCQ(e.nic, 1024, &cq));
	VIP_VI_HANDLE vi = va_vi(&e, RD, NULL, cq);
	for (unsigned i = 0; i < T27_POSTED; i++)
		va_post_recv(&e, vi, va_desc1(&e, 0, va_alloc(&e, 8), 8));
	uint32_t *cb = va_alloc(&e, 16);
	VIP_DESCRIPTOR *credit = va_desc1(&e, 0, cb, 4);
	va_barrier(c, "open");
	va_server_accept(&e, vi, "t27");
	va_barrier(c, "posted");
	static const VIP_ULONG sizes[] = { 300, 4096, 512, 2048, 257 + T27_POSTED, 1024 };
	uint64_t entries = 0, received = 0;
	unsigned resizes = 0, since_credit = 0;
	long long t0 = va_now_ms();
	while (received < T27_TOTAL) {
		VA_OK(c, VipCQWait(cq, VA_WAIT_MS, &who, &rq));
		entries++;
		VA_TRUE(c, who == vi && rq == VIP_TRUE, "CQ entry (%p, %d), expected (vi, TRUE)",
			who, rq);
		VA_OK(c, VipRecvDone(vi, &got));
		uint64_t seq = *(uint64_t *)got->DS[0].Local.Data.Address;
		VA_TRUE(c, !(got->CS.Status & VIP_STATUS_ERROR_MASK) && seq == received,
			"receive %llu: sequence %llu, status 0x%x", (unsigned long long)received,
			(unsigned long long)seq, got->CS.Status);
		received++;
		va_post_recv(&e, vi, got);
		if (received % 2500 == 0) {
			VA_OK(c, VipResizeCQ(cq, sizes[resizes % 6]));
			resizes++;
		}
		if (++since_credit == T27_BATCH) {
			*cb = T27_BATCH;
			va_post_send(&e, vi, credit);
			(void)va_send_wait(&e, vi);
			VA_TRUE(c, !(credit->CS.Status & VIP_STATUS_ERROR_MASK), "credit send failed");
			since_credit = 0;
		}
	}
	VA_RC(c, VipCQDone(cq, &who, &rq), VIP_NOT_DONE);
	VA_RC(c, VipRecvDone(vi, &got), VIP_NOT_DONE);
	VA_TRUE(c, entries == received, "%llu CQ entries for %llu receives",
		(unsigned long long)entries, (unsigned long long)received);
	va_note(c, "%llu receives, %llu CQ entries, %u resizes, %lld ms",
		(unsigned long long)received, (unsigned long long)entries, resizes,
		va_now_ms() - t0);
	va_barrier(c, "done");
	va_teardown(&e, vi);
	VA_OK(c, VipDestroyCQ(cq));
	va_env_close(&e);
}
