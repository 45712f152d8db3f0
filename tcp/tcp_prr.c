/* RFC 6937 section 3, with PRR-SSRB (the reduction bound that RFC 6937 recommends). */
#include "tcp_prr.h"

void tcp_prr_init(struct tcp_prr *p, uint32_t recover_fs)
{
	p->recover_fs = recover_fs ? recover_fs : 1;
	p->delivered = 0;
	p->out = 0;
}

uint32_t tcp_prr_sndcnt(struct tcp_prr *p, uint32_t delivered, uint32_t pipe,
			uint32_t ssthresh, uint32_t smss)
{
	int64_t cnt;

	p->delivered += delivered;
	if (pipe > ssthresh) {
		/* proportional: CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out */
		uint64_t allowed = (p->delivered * ssthresh + p->recover_fs - 1) / p->recover_fs;
		cnt = (int64_t)allowed - (int64_t)p->out;
	} else {
		/* slow start back to ssthresh, at most one SMSS beyond what was delivered */
		int64_t lim = (int64_t)p->delivered - (int64_t)p->out;
		if (lim < (int64_t)delivered)
			lim = delivered;
		lim += smss;
		cnt = (int64_t)(ssthresh - pipe);
		if (cnt > lim)
			cnt = lim;
	}
	return cnt > 0 ? (uint32_t)cnt : 0;
}

void tcp_prr_sent(struct tcp_prr *p, uint32_t len)
{
	p->out += len;
}
