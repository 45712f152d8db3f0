/* Verdicts of one side's half of a check: the first reason given is kept (later ones are
 * usually its consequences). */
#include <stdarg.h>
#include <stdio.h>

#include "ic.h"

const char *ic_side(const struct ic *ic)
{
	return ic->server ? "server" : "client";
}

const char *ic_verdict_str(enum ic_verdict v)
{
	switch (v) {
	case IC_PASS:
		return "PASS";
	case IC_FAIL:
		return "FAIL";
	default:
		return "NOT APPLICABLE";
	}
}

static int set_res(struct ic *ic, enum ic_verdict v, const char *fmt, va_list ap)
{
	if (ic->res.v != IC_PASS)
		return -1;
	ic->res.v = v;
	vsnprintf(ic->res.why, sizeof(ic->res.why), fmt, ap);
	return -1;
}

int ic_fail(struct ic *ic, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_res(ic, IC_FAIL, fmt, ap);
	va_end(ap);
	return -1;
}

int ic_na(struct ic *ic, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_res(ic, IC_NA, fmt, ap);
	va_end(ap);
	return -1;
}
