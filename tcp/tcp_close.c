/* Closing (RFC 9293 3.10.4 CLOSE, 3.10.5 ABORT): shutdown sends FIN after the queue, close
 * also discards further received data, abort resets and forgets. */
#include <errno.h>

#include <rte_mbuf.h>

#include "tcp_int.h"

static bool handle_ok(const struct tcp_conn *c)
{
	return c && !(c->flags & (TCPF_DEAD | TCPF_ABORTED | TCPF_USER_GONE));
}

int tcp_shutdown(struct tcp_conn *c)
{
	if (!handle_ok(c))
		return -ENOTCONN;
	if (c->flags & TCPF_FIN_QUEUED)
		return 0;
	switch (c->state) {
	case TCP_ESTABLISHED:
		tcp_conn_set_state(c, TCP_FIN_WAIT_1);
		break;
	case TCP_CLOSE_WAIT:
		tcp_conn_set_state(c, TCP_LAST_ACK);
		break;
	default:
		return -ENOTCONN;
	}
	c->flags |= TCPF_FIN_QUEUED;
	tcp_ka_closing(c); /* no probes once we are closing, but the silence bound stays */
	tcp_output(c);
	return 0;
}

void tcp_close(struct tcp_conn *c)
{
	struct tcp_stack *s;

	if (!handle_ok(c) || (c->flags & TCPF_CLOSED_BY_USER))
		return;
	s = c->s;
	c->flags |= TCPF_CLOSED_BY_USER;
	c->flags &= ~(TCPF_EOF_PENDING | TCPF_WANT_WRITABLE);
	tcp_reass_purge(c); /* undelivered data is discarded (tcp.h) */
	c->rcv_held = 0;
	switch (c->state) {
	case TCP_SYN_SENT:
	case TCP_SYN_RECEIVED:
		tcp_send_rst_conn(c);
		tcp_conn_finish(c, 0);
		break;
	case TCP_ESTABLISHED:
	case TCP_CLOSE_WAIT:
		tcp_shutdown(c);
		break;
	case TCP_FIN_WAIT_2:
		tcp_timer_arm_ms(c, &c->t_ka, s->cfg.fin_timeout_ms);
		break;
	default:
		break; /* FIN already on its way */
	}
	if (!s->cb_depth)
		tcp_reap(s);
}

void tcp_abort(struct tcp_conn *c)
{
	struct tcp_stack *s;

	if (!c || (c->flags & (TCPF_DEAD | TCPF_ABORTED)))
		return;
	s = c->s;
	if (c->state != TCP_TIME_WAIT)
		tcp_send_rst_conn(c);
	c->flags |= TCPF_ABORTED;
	c->flags &= ~TCPF_FINISH;
	if (c->state == TCP_ESTABLISHED || c->state == TCP_CLOSE_WAIT)
		s->st.estab_resets++;
	tcp_conn_release(c);
	/* tcp.h: on_zc_done(-ECONNABORTED) for outstanding zero-copy sends before returning
	 * (each one whose memory the port released; see docs/tcp.md). */
	tcp_zc_complete(c, true, -ECONNABORTED);
	if (!s->cb_depth) {
		net_if_flush(s->nif);
		tcp_reap(s);
	}
}
