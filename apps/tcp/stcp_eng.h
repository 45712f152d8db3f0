/* softrnic-tcp internals: the sessions of stcp.h on softrnic's TCP engine (tcp/tcp.h),
 * driven inline by the tool's own thread through dpdk_port_poll. */
#ifndef STCP_ENG_H
#define STCP_ENG_H

#include "dpdk_port.h"
#include "stcp.h"
#include "tcp.h"

/* A received mbuf an --echo connection still has to return (the receive window stays closed
 * by its octets until they are sent: backpressure without copies). */
struct eng_echo_item {
	struct rte_mbuf *m;
	uint32_t off, len;
};

struct eng_conn {
	struct stcp_sess s;
	struct tcp_conn *c;   /* NULL once over */
	struct eng_app *app;
	uint32_t idx;
	bool started, over, dirty, shut, shut_wanted, connecting;
	bool retry;           /* -ENOBUFS: the mbuf pool was empty, try on the next pass */
	struct eng_echo_item *echo;
	uint32_t echo_head, echo_n, echo_cap;
	/* --zc: slots of memory lent to tcp_send_zc, each held until on_zc_done */
	uint8_t *zc_mem;
	uint32_t zc_busy;     /* bit per slot */
	uint64_t zc_done, zc_errs;
	struct tcp_conn_stats st;  /* last snapshot */
	bool have_st;
};

struct eng_app {
	struct stcp_opts o;
	struct dpdk_port *port;
	struct tcp_stack *stack;
	struct tcp_listener *lis;
	struct eng_conn *cx;
	uint32_t *dirty;
	uint32_t ndirty;
	uint32_t opened, over, handshakes, established;
	struct sockaddr_in dst;
	int fatal;            /* a setup error: negative errno */
	uint64_t spin_ns, nap_ns; /* the port's spin_us and nap_us: softrnic-tcp's poll loop */
};

extern const struct tcp_conn_ops eng_conn_ops;
extern const struct tcp_listener_ops eng_listener_ops;

int eng_app_init(struct eng_app *a);
void eng_app_fini(struct eng_app *a);
/* Opens connections while the connect pacing allows (connect mode). */
void eng_open_more(struct eng_app *a);
/* Sends and carries out actions for every connection marked dirty by a callback. */
void eng_service(struct eng_app *a);
/* Everything finished (every connection over). */
bool eng_done(const struct eng_app *a);
void eng_print_stats(struct eng_app *a);

#endif
