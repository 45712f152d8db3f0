/* softrnic_qp_connect: the step our librdmacm layer takes once rn_cm reports ESTABLISHED
 * (verbs_int.h). */
#include <errno.h>

#include "verbs_int.h"

/* Lower ORD to what the peer can take (its IRD); MPA revision 1 peers say nothing. */
static void sv_connect_ord(struct sv_qp *q, const struct mpa_conn_params *p)
{
	struct rn_qp_info info;
	struct rn_qp_mod m = { .next = RN_QPS_IDLE, .mask = RN_QPM_ORD };

	if (p->peer_ird == MPA_V2_NO_VALUE || rn_qp_query(q->rn, &info))
		return;
	if (p->peer_ird >= info.alloc.ord)
		return;
	m.attr.ord = p->peer_ird;
	rn_qp_modify_qp(q->rn, &m, NULL);
}

int softrnic_qp_connect(struct ibv_qp *qp, struct rn_cm_handoff *h)
{
	struct sv_qp *q = sv_qp(qp);
	struct rn_qp_mod m = { .next = RN_QPS_RTS, .mask = RN_QPM_LLP_HANDLE };
	enum rn_status st;

	if (!q || !h || !h->conn)
		return EINVAL;
	if (rn_qp_get_state(q->rn) != RN_QPS_IDLE)
		return EINVAL;
	sv_connect_ord(q, &h->params);
	m.llp = h;
	st = rn_qp_modify_qp(q->rn, &m, NULL);
	if (st)
		return sv_errno(st);
	q->idle_state = IBV_QPS_RESET;   /* a later Idle (closed) reads as RESET */
	qp->state = IBV_QPS_RTS;
	return 0;
}
