/* va.h: harness of the VIPL acceptance tests (docs/acceptance-vipl.md, T01-T27).
 *
 * One executable is both the driver and the two peers. `vipl_accept T08` (driver) picks two
 * TCP ports, starts itself twice as role A (client side) and role B (server side), each with
 * SOFTRNIC_VIPL_ADDR set to its own ip:port, joined by a socketpair used as an out-of-band
 * control channel (barriers, exchanging remote VAs and handles), and fails unless both exit 0
 * within the deadline. Every check that fails prints what differed and exits the process with
 * status 1; the peer then sees EOF on the control channel and exits too. */
#ifndef VA_H
#define VA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vipl.h"

#define VA_DISC_MAX 64
#define VA_CONNECT_MS 10000ul   /* ConnectWait / ConnectRequest bound in the scenarios */
#define VA_WAIT_MS 5000ul       /* completion waits that must succeed */

struct va_ctx {
	char role;                 /* 'A' or 'B' */
	const char *scenario;
	int ctl;                   /* control socket to the peer (-1 when alone) */
	char ip_a[64], ip_b[64];
	uint16_t port_a, port_b;
};

/* A process's VIPL resources: the NIC, one Ptag, one registered arena that descriptors and
 * buffers are carved from (bump allocation; everything shares the arena's memory handle). */
struct va_env {
	struct va_ctx *ctx;
	VIP_NIC_HANDLE nic;
	VIP_NIC_ATTRIBUTES attr;
	VIP_PROTECTION_HANDLE ptag;
	uint8_t *arena;
	size_t arena_len, used;
	VIP_MEM_HANDLE mh;
};

/* A control-channel message: a tag and four values. */
struct va_msg {
	char tag[24];
	uint64_t v[4];
};

typedef void (*va_role_fn)(struct va_ctx *ctx);

struct va_scenario {
	const char *name;          /* e.g. "T14" */
	const char *title;
	va_role_fn a, b;           /* b == NULL: single-process scenario */
	unsigned timeout_s;
	bool one_port;             /* both peers at the same port: a cluster's well-known one */
	const char *a_prog;        /* role A is this program beside the driver, not the driver */
};

extern const struct va_scenario va_scenarios[];

/* ---- reporting, stderr held, test data (va_check.c: no VIPL call, va_dlpeer links it) --- */
_Noreturn void va_fail(struct va_ctx *ctx, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void va_note(struct va_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *va_rc_name(VIP_RETURN rc);
const char *va_status_str(uint32_t st, char *buf, size_t len);
const char *va_state_name(VIP_VI_STATE s);
long long va_now_ms(void);
uint64_t va_now_ns(void);
void va_sleep_ms(unsigned ms);
void va_quiet_begin(struct va_ctx *ctx);
void va_quiet_end(struct va_ctx *ctx, const char *what);
void va_fill(void *buf, size_t len, unsigned seed);
bool va_check_fill(const void *buf, size_t len, unsigned seed, size_t *bad);

/* Call returning VIP_RETURN must equal the expected code. */
#define VA_RC(ctx, call, want)                                                               \
	do {                                                                                 \
		VIP_RETURN va_rc_ = (call);                                                  \
		if (va_rc_ != (want))                                                        \
			va_fail((ctx), __LINE__, "%s returned %s, expected %s", #call,       \
				va_rc_name(va_rc_), va_rc_name(want));                       \
	} while (0)
#define VA_OK(ctx, call) VA_RC(ctx, call, VIP_SUCCESS)
#define VA_TRUE(ctx, cond, ...)                                                              \
	do {                                                                                 \
		if (!(cond))                                                                 \
			va_fail((ctx), __LINE__, __VA_ARGS__);                               \
	} while (0)

/* The first async error the process's va_async_handler saw, and how many it saw in all
 * (VipErrorCallback(nic, ctx, va_async_handler); zero it to start counting again). */
struct va_async {
	int n;
	VIP_PVOID ctx;
	VIP_ERROR_DESCRIPTOR ed;
};
extern struct va_async va_async;
void va_async_handler(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *ed);

/* ---- control channel (va_ctl.c) -------------------------------------------------------- */
void va_put(struct va_ctx *ctx, const char *tag, uint64_t v0, uint64_t v1, uint64_t v2,
	    uint64_t v3);
void va_get(struct va_ctx *ctx, const char *tag, struct va_msg *m, unsigned timeout_ms);
void va_barrier(struct va_ctx *ctx, const char *tag);
bool va_peer_pending(struct va_ctx *ctx, unsigned wait_ms);

/* ---- VIPL setup (va_setup.c) ----------------------------------------------------------- */
void va_env_open(struct va_ctx *ctx, struct va_env *e, size_t arena_len);
void va_env_open_dev(struct va_ctx *ctx, struct va_env *e, const char *dev, size_t arena_len);
void va_env_close(struct va_env *e);
void *va_alloc(struct va_env *e, size_t len);
VIP_DESCRIPTOR *va_desc(struct va_env *e, unsigned nseg);
void va_seg(struct va_env *e, VIP_DESCRIPTOR *d, unsigned i, void *buf, uint32_t len);
VIP_DESCRIPTOR *va_desc1(struct va_env *e, uint16_t control, void *buf, uint32_t len);
VIP_DESCRIPTOR *va_rdma_desc(struct va_env *e, uint16_t op, uint64_t rva, VIP_MEM_HANDLE rh,
			     void *buf, uint32_t len);
void va_desc_reset(VIP_DESCRIPTOR *d);
VIP_VI_ATTRIBUTES va_vi_attrs(struct va_env *e, VIP_RELIABILITY_LEVEL rel);
VIP_VI_HANDLE va_vi(struct va_env *e, VIP_RELIABILITY_LEVEL rel, VIP_CQ_HANDLE scq,
		    VIP_CQ_HANDLE rcq);
VIP_VI_HANDLE va_vi_attr(struct va_env *e, const VIP_VI_ATTRIBUTES *a, VIP_CQ_HANDLE scq,
			 VIP_CQ_HANDLE rcq);
VIP_NET_ADDRESS *va_local_addr(struct va_env *e, const char *disc);
VIP_NET_ADDRESS *va_peer_addr(struct va_env *e, const char *disc);
VIP_RETURN va_wait_request(struct va_env *e, const char *disc, VIP_ULONG ms,
			   VIP_VI_ATTRIBUTES *rattr, VIP_CONN_HANDLE *conn, VIP_NET_ADDRESS **remote);
VIP_RETURN va_request(struct va_env *e, VIP_VI_HANDLE vi, const char *ldisc, const char *rdisc,
		      VIP_ULONG ms, VIP_VI_ATTRIBUTES *rattr);
void va_server_accept(struct va_env *e, VIP_VI_HANDLE vi, const char *disc);
void va_client_connect(struct va_env *e, VIP_VI_HANDLE vi, const char *disc);
VIP_VI_STATE va_state(struct va_env *e, VIP_VI_HANDLE vi);
void va_wait_state(struct va_env *e, VIP_VI_HANDLE vi, VIP_VI_STATE want, unsigned ms);
VIP_DESCRIPTOR *va_send_wait(struct va_env *e, VIP_VI_HANDLE vi);
VIP_DESCRIPTOR *va_recv_wait(struct va_env *e, VIP_VI_HANDLE vi);
void va_expect_desc(struct va_env *e, VIP_DESCRIPTOR *got, VIP_DESCRIPTOR *want,
		    uint32_t op, const char *what);
void va_teardown(struct va_env *e, VIP_VI_HANDLE vi);
VIP_VI_HANDLE va_open_vi(struct va_ctx *ctx, struct va_env *e, VIP_RELIABILITY_LEVEL rel);
void va_close_vi(struct va_env *e, VIP_VI_HANDLE vi, const char *tag);
uint32_t va_status_spin(struct va_env *e, VIP_DESCRIPTOR *d, unsigned ms);
void va_post_send(struct va_env *e, VIP_VI_HANDLE vi, VIP_DESCRIPTOR *d);
void va_post_recv(struct va_env *e, VIP_VI_HANDLE vi, VIP_DESCRIPTOR *d);

/* ---- scenarios --------------------------------------------------------------------------- */
void t01_a(struct va_ctx *);
void t02_a(struct va_ctx *);
void t03_a(struct va_ctx *);
void t03_b(struct va_ctx *);
void t04_a(struct va_ctx *);
void t05_a(struct va_ctx *);
void t06_a(struct va_ctx *);
void t06_b(struct va_ctx *);
void t07_a(struct va_ctx *);
void t07_b(struct va_ctx *);
void t08_a(struct va_ctx *);
void t08_b(struct va_ctx *);
void t09_a(struct va_ctx *);
void t09_b(struct va_ctx *);
void t10_a(struct va_ctx *);
void t10_b(struct va_ctx *);
void t11_a(struct va_ctx *);
void t11_b(struct va_ctx *);
void t12_a(struct va_ctx *);
void t12_b(struct va_ctx *);
void t13_a(struct va_ctx *);
void t13_b(struct va_ctx *);
void t14_a(struct va_ctx *);
void t14_b(struct va_ctx *);
void t15_a(struct va_ctx *);
void t15_b(struct va_ctx *);
void t16_a(struct va_ctx *);
void t16_b(struct va_ctx *);
void t17_a(struct va_ctx *);
void t17_b(struct va_ctx *);
void t18_a(struct va_ctx *);
void t18_b(struct va_ctx *);
void t19_a(struct va_ctx *);
void t19_b(struct va_ctx *);
void t20_a(struct va_ctx *);
void t20_b(struct va_ctx *);
void t21_a(struct va_ctx *);
void t21_b(struct va_ctx *);
void t22_a(struct va_ctx *);
void t22_b(struct va_ctx *);
void t23_a(struct va_ctx *);
void t23_b(struct va_ctx *);
void t24_a(struct va_ctx *);
void t24_b(struct va_ctx *);
void t25_a(struct va_ctx *);
void t25_b(struct va_ctx *);
void t26_a(struct va_ctx *);
void t26_b(struct va_ctx *);
void t27_a(struct va_ctx *);
void t27_b(struct va_ctx *);
void neg_a(struct va_ctx *);
void neg_b(struct va_ctx *);
void p01_a(struct va_ctx *);
void p01_b(struct va_ctx *);
void p02_b(struct va_ctx *);
void p03_a(struct va_ctx *);
void p03_b(struct va_ctx *);

#endif
