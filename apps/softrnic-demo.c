/* softrnic-demo: encode a realistic iWARP session with softrnic's MPA/DDP/RDMAP code, write it
 * to a pcap, read the pcap back and decode it with our own decoder.
 *
 *   softrnic-demo [-o FILE.pcap] [-e EXPECT.tsv] [-q] [options]
 *
 * Scenario "demo" (default): connection 1 with CRC: TCP handshake, MPA Request (rev 2,
 * enhanced, P2P offering Write/Read RTR, IRD/ORD) and Reply from the real negotiation code,
 * the zero-length RDMA Write RTR, then an rping-like exchange: Send with buf/rkey/len, RDMA
 * Read Request, multi-segment Read Response, multi-segment RDMA Write, Send with Invalidate,
 * Send with SE; FIN. Connection 2: the same with markers and CRC. Each FPDU is one TCP segment.
 *
 * Scenario "sweep" (for the tshark round-trip test): one connection carrying every opcode with
 * many sizes (payloads 0..N, every pad 0..3, multi-segment messages) in both directions and a
 * Terminate at the end.
 *
 * Options:
 *   --scenario demo|sweep   --crc 0|1   --markers 0|1   --mss N   --mulpdu N (DDP ULPDU limit,
 *   default from the MSS; larger than the MSS makes TCP split FPDUs)   --coalesce N (FPDUs per
 *   TCP send, default 1)   --port N (server port, default 7174)   --seed N
 *
 * After writing, the pcap is decoded (wiretrace reader + iwdecode) and every decoded FPDU is
 * compared with what was encoded; any difference makes the exit status 1. -e writes the
 * encoded fields (plus the frame each FPDU completes in) as TSV, for the tshark comparison.
 * -q prints only the verdict line.
 *
 * apps/demo/ holds the parts: scenarios.c (the session scripts), session.c (encoding),
 * check.c (decoding the pcap back and comparing), report.c (output).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "demo.h"

static const char usage_text[] =
	"usage: %s [-o FILE.pcap] [-e EXPECT.tsv] [-q] [--scenario demo|sweep] [--crc 0|1] "
	"[--markers 0|1] [--mss N] [--mulpdu N] [--coalesce N] [--port N] [--seed N]\n";

static unsigned num(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 0);
	if (errno || *end || v > 0xffffffffu) {
		fprintf(stderr, "softrnic-demo: bad %s '%s'\n", what, s);
		exit(2);
	}
	return (unsigned)v;
}

/* Sets the option opt of getopt_long; false if it is not one. */
static bool set_option(struct demo_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case 'o': o->out = arg; break;
	case 'e': o->expect = arg; break;
	case 'q': o->quiet = true; break;
	case 's': o->scenario = arg; break;
	case 'c': o->crc = (int)num(arg, "--crc"); break;
	case 'm': o->markers = (int)num(arg, "--markers"); break;
	case 'M': o->mss = num(arg, "--mss"); break;
	case 'u': o->mulpdu = num(arg, "--mulpdu"); break;
	case 'C': o->coalesce = num(arg, "--coalesce"); break;
	case 'p': o->port = num(arg, "--port"); break;
	case 'S': o->seed = num(arg, "--seed"); break;
	default: return false;
	}
	return true;
}

static void parse_options(int argc, char **argv, struct demo_opts *o)
{
	static const struct option lo[] = {
		{ "scenario", required_argument, NULL, 's' },
		{ "crc", required_argument, NULL, 'c' },
		{ "markers", required_argument, NULL, 'm' },
		{ "mss", required_argument, NULL, 'M' },
		{ "mulpdu", required_argument, NULL, 'u' },
		{ "coalesce", required_argument, NULL, 'C' },
		{ "port", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	while ((opt = getopt_long(argc, argv, "o:e:q", lo, NULL)) != -1)
		if (!set_option(o, opt, optarg)) {
			fprintf(stderr, usage_text, argv[0]);
			exit(2);
		}
	if (o->mss < 64 || o->mss > 9000 || o->port == 0 || o->port > 65535 ||
	    (o->mulpdu && (o->mulpdu < 64 || o->mulpdu > MPA_MAX_ULPDU)))
		demo_die("option out of range");
}

/* Writes the scenario's pcap, recording every FPDU in expect. */
static void generate(const struct demo_opts *o, struct demo_expect *expect,
		     struct demo_plan *plan)
{
	char err[256];
	struct wt_writer *w = wt_writer_open(o->out, err, sizeof(err));
	if (!w)
		demo_die(err);
	if (!o->quiet)
		printf("encoding scenario \"%s\" with softrnic's MPA/DDP/RDMAP code:\n", o->scenario);
	demo_run_scenario(w, o, expect, plan);
	unsigned frames = wt_writer_frames(w);
	if (wt_writer_close(w))
		demo_die("writing the pcap failed");
	if (!o->quiet)
		report_written(o, frames, expect);
}

/* Reads the pcap back, compares, reports. Returns the exit status. */
static int check(const struct demo_opts *o, struct demo_expect *expect,
		 const struct demo_plan *plan)
{
	struct wt_capture cap;
	char err[256];
	if (wt_capture_load(o->out, &cap, err, sizeof(err))) {
		fprintf(stderr, "softrnic-demo: reading back: %s\n", err);
		return 1;
	}
	struct demo_result r;
	demo_check_capture(&cap, expect, plan, &r);
	if (!o->quiet)
		report_fpdus(&r);
	report_summary(o, expect, &r);
	if (o->expect)
		report_write_expect(o->expect, expect, &cap);
	demo_result_free(&r);
	wt_capture_free(&cap);
	return r.mismatches ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct demo_opts o = { .out = "demo.pcap", .scenario = "demo", .crc = -1, .markers = -1,
			       .mss = 1460, .coalesce = 1, .port = 7174, .seed = 1 };
	parse_options(argc, argv, &o);
	static struct demo_expect expect;
	struct demo_plan plan;
	generate(&o, &expect, &plan);
	return check(&o, &expect, &plan);
}
