/* DDP placement decision and receive-side queue state (RFC 5041 §5.3, §5.4, §7.2).
 *
 * Nothing here touches memory: the decision says where the payload goes; the RNIC checks the
 * STag and bounds of tagged placements itself (reporting with ddp_err_tagged()). */
#include <string.h>

#include "ddp.h"

void ddp_rx_init(struct ddp_rx_state *rx, uint32_t nqueues)
{
	memset(rx, 0, sizeof(*rx));
	rx->nqueues = nqueues > DDP_MAX_QUEUES ? DDP_MAX_QUEUES : nqueues;
	for (uint32_t i = 0; i < DDP_MAX_QUEUES; i++)
		rx->q[i].msn = DDP_MSN_INITIAL;
}

int ddp_rx_post(struct ddp_rx_state *rx, uint32_t qn, uint32_t n)
{
	if (qn >= rx->nqueues || n > UINT32_MAX - rx->q[qn].posted)
		return -1;
	rx->q[qn].posted += n;
	return 0;
}

static int fail(struct iwarp_err *err, struct iwarp_err e)
{
	*err = e;
	return -1;
}

static int decide_tagged(const struct ddp_hdr *h, uint32_t len, struct ddp_place *pl,
			 struct iwarp_err *err)
{
	if (len > 0 && len - 1 > UINT64_MAX - h->to)
		return fail(err, ddp_err_tagged(DDP_ECODE_T_TO_WRAP));
	pl->stag = h->stag;
	pl->to = h->to;
	return 0;
}

/* In order (TCP), the only acceptable MSN is the queue's current one: an older MSN is a replay
 * of a completed message and a newer one means a message went missing; both are "MSN range is
 * not valid" (Linux siw reports the same code for any MSN mismatch). With the right MSN but no
 * buffer posted it is "no buffer available". MO must continue where the last segment ended
 * (siw: "Invalid MO" on mismatch); since MO is 32 bits the segment may not end past 2^32. */
static int decide_untagged(const struct ddp_rx_state *rx, const struct ddp_hdr *h, uint32_t len,
			   struct ddp_place *pl, struct iwarp_err *err)
{
	const struct ddp_rx_queue *q;

	if (h->qn >= rx->nqueues)
		return fail(err, ddp_err_untagged(DDP_ECODE_U_INVALID_QN));
	q = &rx->q[h->qn];
	if (h->msn != q->msn)
		return fail(err, ddp_err_untagged(DDP_ECODE_U_MSN_RANGE));
	if (q->posted == 0)
		return fail(err, ddp_err_untagged(DDP_ECODE_U_MSN_NO_BUF));
	if (h->mo != q->mo || (uint64_t)h->mo + len > (UINT64_C(1) << 32))
		return fail(err, ddp_err_untagged(DDP_ECODE_U_INVALID_MO));
	pl->qn = h->qn;
	pl->msn = h->msn;
	pl->mo = h->mo;
	return 0;
}

int ddp_place_decide(const struct ddp_rx_state *rx, const struct ddp_hdr *h, uint32_t payload_len,
		     struct ddp_place *pl, struct iwarp_err *err)
{
	memset(pl, 0, sizeof(*pl));
	if (h->dv != DDP_VERSION)
		return fail(err, h->tagged ? ddp_err_tagged(DDP_ECODE_T_VERSION)
					   : ddp_err_untagged(DDP_ECODE_U_VERSION));
	pl->tagged = h->tagged;
	pl->last = h->last;
	pl->len = payload_len;
	if (h->tagged)
		return decide_tagged(h, payload_len, pl, err);
	return decide_untagged(rx, h, payload_len, pl, err);
}

int ddp_place_check_len(const struct ddp_place *pl, uint64_t buf_len, struct iwarp_err *err)
{
	if (!pl->tagged && (uint64_t)pl->mo + pl->len > buf_len)
		return fail(err, ddp_err_untagged(DDP_ECODE_U_TOO_LONG));
	return 0;
}

void ddp_rx_deliver(struct ddp_rx_state *rx, const struct ddp_place *pl)
{
	struct ddp_rx_queue *q;

	if (pl->tagged || pl->qn >= rx->nqueues)
		return;
	q = &rx->q[pl->qn];
	q->mo = (uint64_t)pl->mo + pl->len;
	if (!pl->last)
		return;
	q->msn++;
	q->mo = 0;
	if (q->posted > 0)
		q->posted--;
}
