/* Command line of softrnic-tcp and ktcp_peer (one parser so that both take the same words). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stcp.h"

void stcp_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s listen PORT | connect IP:PORT  ACTION [options]\n"
		"actions (one):\n"
		"  --sink               read and verify the pattern (header gives the length)\n"
		"  --source BYTES       send BYTES of the pattern, then FIN\n"
		"  --echo               return every octet\n"
		"  --pingpong N --size S  N exchanges of S octets with an --echo peer\n"
		"options:\n"
		"  --conns N            N concurrent connections (listen: accept N)\n"
		"  --rst-after BYTES    abort (RST) after BYTES sent (source) or received (sink)\n"
		"  --fin-after BYTES    FIN after BYTES sent (source) / close after BYTES received\n"
		"  --expect OUTCOME     succeed only when every connection ends so: ok, verify,\n"
		"                       eof, reset, refused, timeout (default ok)\n"
		"  --timeout S          hard bound on the run; exit status 2 when it hits\n"
		"  --burst N            handshakes in flight while connecting (default 64)\n"
		"  --stats              print counters at the end\n"
		"  --quiet              only the result lines\n"
		"  --zc                 softrnic-tcp: send zero-copy (tcp_send_zc); ignored by\n"
		"                       ktcp_peer\n"
		"sizes take K, M, G (binary) suffixes. Exit: 0 every connection ended as expected,\n"
		"1 otherwise, 2 timeout, 64 usage.\n",
		prog);
}

/* "32M" -> 33554432; false on junk or overflow. */
static bool parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return false;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

static bool parse_outcome(const char *s, enum stcp_outcome *o)
{
	for (int i = STCP_OK; i <= STCP_E_OTHER; i++) {
		if (strcmp(s, stcp_outcome_name((enum stcp_outcome)i)) == 0) {
			*o = (enum stcp_outcome)i;
			return true;
		}
	}
	return false;
}

static bool parse_endpoint(struct stcp_opts *o, const char *mode, const char *arg)
{
	uint64_t port;
	if (strcmp(mode, "listen") == 0) {
		o->listen = true;
		if (!parse_size(arg, &port) || port == 0 || port > 65535)
			return false;
		o->port = (uint16_t)port;
		return true;
	}
	if (strcmp(mode, "connect") != 0)
		return false;
	const char *colon = strrchr(arg, ':');
	struct in_addr a;
	if (!colon || (size_t)(colon - arg) >= sizeof(o->host))
		return false;
	memcpy(o->host, arg, (size_t)(colon - arg));
	o->host[colon - arg] = '\0';
	if (inet_pton(AF_INET, o->host, &a) != 1)
		return false;
	if (!parse_size(colon + 1, &port) || port == 0 || port > 65535)
		return false;
	o->port = (uint16_t)port;
	return true;
}

/* One option with its value (if any); returns the argv slots used, 0 on error. */
static int parse_one(struct stcp_opts *o, int argc, char **argv, int i, int *nact)
{
	const char *a = argv[i];
	const char *v = i + 1 < argc ? argv[i + 1] : NULL;
	uint64_t x;

	if (strcmp(a, "--sink") == 0) { o->role = STCP_SINK; (*nact)++; return 1; }
	if (strcmp(a, "--echo") == 0) { o->role = STCP_ECHO; (*nact)++; return 1; }
	if (strcmp(a, "--stats") == 0) { o->stats = true; return 1; }
	if (strcmp(a, "--quiet") == 0) { o->quiet = true; return 1; }
	if (strcmp(a, "--zc") == 0) { o->zc = true; return 1; }
	if (!v)
		return 0;
	if (strcmp(a, "--expect") == 0)
		return parse_outcome(v, &o->expect) ? 2 : 0;
	if (strcmp(a, "--timeout") == 0) {
		char *end;
		o->timeout_s = strtod(v, &end);
		return (*end || o->timeout_s <= 0) ? 0 : 2;
	}
	if (!parse_size(v, &x))
		return 0;
	if (strcmp(a, "--source") == 0) { o->role = STCP_SOURCE; o->bytes = x; (*nact)++; }
	else if (strcmp(a, "--pingpong") == 0) { o->role = STCP_PING; o->ping_n = x; (*nact)++; }
	else if (strcmp(a, "--size") == 0 && x > 0 && x <= (1u << 24)) o->size = (uint32_t)x;
	else if (strcmp(a, "--conns") == 0 && x > 0 && x <= 100000) o->conns = (uint32_t)x;
	else if (strcmp(a, "--burst") == 0 && x > 0 && x <= 100000) o->burst = (uint32_t)x;
	else if (strcmp(a, "--rst-after") == 0) { o->stop = STCP_STOP_RST; o->stop_after = x; }
	else if (strcmp(a, "--fin-after") == 0) { o->stop = STCP_STOP_FIN; o->stop_after = x; }
	else
		return 0;
	return 2;
}

int stcp_opts_parse(struct stcp_opts *o, int argc, char **argv, const char *prog)
{
	memset(o, 0, sizeof(*o));
	o->conns = 1;
	o->size = 64;
	o->burst = 64;
	o->expect = STCP_OK;
	o->role = STCP_ECHO;
	if (argc < 3 || !parse_endpoint(o, argv[1], argv[2])) {
		fprintf(stderr, "%s: expected 'listen PORT' or 'connect IP:PORT'\n", prog);
		stcp_usage(prog);
		return -1;
	}
	int nact = 0;
	for (int i = 3; i < argc;) {
		int used = parse_one(o, argc, argv, i, &nact);
		if (!used) {
			fprintf(stderr, "%s: bad option or value: %s%s%s\n", prog, argv[i],
				i + 1 < argc ? " " : "", i + 1 < argc ? argv[i + 1] : "");
			stcp_usage(prog);
			return -1;
		}
		i += used;
	}
	if (nact != 1) {
		fprintf(stderr, "%s: give exactly one of --sink, --source, --echo, --pingpong\n",
			prog);
		stcp_usage(prog);
		return -1;
	}
	return 0;
}
