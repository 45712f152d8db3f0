/* va_check: failure reports that say what differed, names of codes and status bits, clocks,
 * the record of async errors. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "va.h"

/* stderr while va_quiet_begin holds it: the real one is kept here (-1: not held) */
static int va_saved_stderr = -1;

_Noreturn void va_fail(struct va_ctx *ctx, int line, const char *fmt, ...)
{
	va_list ap;
	if (va_saved_stderr >= 0) /* a failure inside a quiet stretch still reaches the log */
		dup2(va_saved_stderr, 2);
	fprintf(stderr, "%s[%c]: FAIL (line %d): ", ctx->scenario, ctx->role, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	/* _exit: no VIPL teardown (atexit/destructors) that could block a failing process. */
	_Exit(1);
}

void va_note(struct va_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	printf("%s[%c]: ", ctx->scenario, ctx->role);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

const char *va_rc_name(VIP_RETURN rc)
{
	static const char *const n[] = {
		"VIP_SUCCESS", "VIP_NOT_DONE", "VIP_INVALID_PARAMETER", "VIP_ERROR_RESOURCE",
		"VIP_TIMEOUT", "VIP_REJECT", "VIP_INVALID_RELIABILITY_LEVEL", "VIP_INVALID_MTU",
		"VIP_INVALID_QOS", "VIP_INVALID_PTAG", "VIP_INVALID_RDMAREAD",
		"VIP_DESCRIPTOR_ERROR", "VIP_INVALID_STATE", "VIP_ERROR_NAMESERVICE",
		"VIP_NO_MATCH", "VIP_NOT_REACHABLE", "VIP_ERROR_NOT_SUPPORTED", "VIP_ERROR",
	};
	return (unsigned)rc < sizeof(n) / sizeof(n[0]) ? n[rc] : "VIP_RETURN(?)";
}

const char *va_state_name(VIP_VI_STATE s)
{
	static const char *const n[] = { "IDLE", "CONNECTED", "CONNECT_PENDING", "ERROR" };
	return (unsigned)s < 4 ? n[s] : "STATE(?)";
}

const char *va_status_str(uint32_t st, char *buf, size_t len)
{
	static const char *const bit[] = { "DONE", "FORMAT", "PROTECTION", "LENGTH", "PARTIAL",
					   "FLUSHED", "TRANSPORT", "RDMA_PROT", "REMOTE_DESC" };
	static const char *const op[] = { "SEND", "RECEIVE", "RDMA_WRITE", "REMOTE_RDMA_WRITE",
					  "RDMA_READ", "op5", "op6", "op7" };
	size_t n = (size_t)snprintf(buf, len, "0x%08x[", st);
	for (unsigned i = 0; i < 9 && n < len; i++)
		if (st & (1u << i))
			n += (size_t)snprintf(buf + n, len - n, "%s|", bit[i]);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s%s]",
				      op[(st & VIP_STATUS_OP_MASK) >> 16],
				      (st & VIP_STATUS_IMMEDIATE) ? "|IMM" : "");
	return buf;
}

long long va_now_ms(void)
{
	return (long long)(va_now_ns() / 1000000u);
}

uint64_t va_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void va_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

void va_fill(void *buf, size_t len, unsigned seed)
{
	uint8_t *p = buf;
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 31u + i * 7u + (i >> 8));
}

bool va_check_fill(const void *buf, size_t len, unsigned seed, size_t *bad)
{
	const uint8_t *p = buf;
	for (size_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed * 31u + i * 7u + (i >> 8))) {
			if (bad)
				*bad = i;
			return false;
		}
	return true;
}

struct va_async va_async;

void va_async_handler(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *ed)
{
	if (__atomic_load_n(&va_async.n, __ATOMIC_SEQ_CST) == 0) {
		va_async.ctx = ctx;
		va_async.ed = *ed;
	}
	__atomic_add_fetch(&va_async.n, 1, __ATOMIC_SEQ_CST);
}

/* What the library prints on stderr goes to a temporary file until va_quiet_end. */
void va_quiet_begin(struct va_ctx *ctx)
{
	FILE *f = tmpfile();
	fflush(stderr);
	VA_TRUE(ctx, f != NULL && va_saved_stderr < 0, "cannot hold stderr");
	va_saved_stderr = dup(2);
	VA_TRUE(ctx, va_saved_stderr >= 0 && dup2(fileno(f), 2) == 2, "cannot hold stderr");
	fclose(f); /* fd 2 keeps the file */
}

/* Gives stderr back; fails, showing what was printed, unless nothing was. */
void va_quiet_end(struct va_ctx *ctx, const char *what)
{
	struct stat st;
	char buf[512];
	fflush(stderr);
	int held = dup(2);
	VA_TRUE(ctx, held >= 0 && fstat(held, &st) == 0, "cannot read the held stderr");
	dup2(va_saved_stderr, 2);
	close(va_saved_stderr);
	va_saved_stderr = -1;
	ssize_t n = pread(held, buf, sizeof buf - 1, 0);
	close(held);
	buf[n > 0 ? n : 0] = '\0';
	VA_TRUE(ctx, st.st_size == 0, "%s printed %lld octets on stderr: %s", what,
		(long long)st.st_size, buf);
}
