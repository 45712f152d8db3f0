/* The consumer side of the receive window: octets delivered by on_recv stay counted against
 * rcv_buf until tcp_conn_recved; a window update goes out once the window can open by
 * enough to matter (receiver SWS avoidance, RFC 9293 3.8.6.2.2). */
#include "tcp_int.h"

void tcp_recv_window_update(struct tcp_conn *c)
{
	uint32_t cur = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	uint32_t avail = tcp_rcv_space(c);
	uint32_t buf = c->rcv_buf;
	uint32_t thresh = buf / 2 < 2u * c->rcv_mss ? buf / 2 : 2u * c->rcv_mss;

	if (cur == 0)
		thresh = buf / 2 < c->rcv_mss ? buf / 2 : c->rcv_mss;
	if (avail <= cur || avail - cur < thresh)
		return;
	if (c->state != TCP_ESTABLISHED && c->state != TCP_FIN_WAIT_1 &&
	    c->state != TCP_FIN_WAIT_2)
		return;
	if (c->s->cb_depth) {
		c->flags |= TCPF_ACK_NOW; /* the output at the end of this input sends it */
		return;
	}
	tcp_send_ack(c);
}

void tcp_conn_recved(struct tcp_conn *c, uint32_t len)
{
	if (!c || (c->flags & TCPF_DEAD))
		return;
	c->rcv_held = len > c->rcv_held ? 0 : c->rcv_held - len;
	tcp_stack_clock_hold(c->s);
	tcp_recv_window_update(c);
	tcp_stack_clock_release(c->s);
}
