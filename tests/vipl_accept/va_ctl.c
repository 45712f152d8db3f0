/* va_ctl: the out-of-band control channel between A and B (a socketpair from the driver).
 * Every read is bounded; EOF or a wrong tag fails the process with the reason. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "va.h"

#define VA_CTL_MS 60000u

void va_put(struct va_ctx *ctx, const char *tag, uint64_t v0, uint64_t v1, uint64_t v2,
	    uint64_t v3)
{
	struct va_msg m;
	memset(&m, 0, sizeof m);
	strncpy(m.tag, tag, sizeof m.tag - 1);
	m.v[0] = v0, m.v[1] = v1, m.v[2] = v2, m.v[3] = v3;
	ssize_t n;
	do
		n = write(ctx->ctl, &m, sizeof m);
	while (n < 0 && errno == EINTR);
	VA_TRUE(ctx, n == (ssize_t)sizeof m, "control channel write of '%s' failed", tag);
}

void va_get(struct va_ctx *ctx, const char *tag, struct va_msg *m, unsigned timeout_ms)
{
	struct pollfd p = { .fd = ctx->ctl, .events = POLLIN };
	int r;
	do
		r = poll(&p, 1, (int)timeout_ms);
	while (r < 0 && errno == EINTR);
	VA_TRUE(ctx, r == 1, "peer did not send '%s' within %u ms", tag, timeout_ms);
	ssize_t n;
	do
		n = read(ctx->ctl, m, sizeof *m);
	while (n < 0 && errno == EINTR);
	VA_TRUE(ctx, n == (ssize_t)sizeof *m, "peer gone while waiting for '%s' (it failed?)",
		tag);
	m->tag[sizeof m->tag - 1] = 0;
	VA_TRUE(ctx, strcmp(m->tag, tag) == 0, "control channel: got '%s', expected '%s'",
		m->tag, tag);
}

void va_barrier(struct va_ctx *ctx, const char *tag)
{
	struct va_msg m;
	va_put(ctx, tag, 0, 0, 0, 0);
	va_get(ctx, tag, &m, VA_CTL_MS);
}

/* True when the peer has written something we have not read (within wait_ms). */
bool va_peer_pending(struct va_ctx *ctx, unsigned wait_ms)
{
	struct pollfd p = { .fd = ctx->ctl, .events = POLLIN };
	return poll(&p, 1, (int)wait_ms) == 1;
}
