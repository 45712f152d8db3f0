/* SOFTRNIC_MPA: the MPA options of this process's rdma_cm connections (docs/rdmacm.md), for
 * applications that cannot ask for them (rping, perftest): a comma-separated list of
 *   crc         set C: CRC32c on both directions (a peer that sets C gets it anyway)
 *   markers     set M: the peer puts markers into what it sends us
 *   nomarkers   refuse a peer that asks for markers (as Linux siw does)
 *   nop2p       no peer-to-peer RTR exchange (still MPA rev 2 with the RFC 6581 block)
 *   noenhanced  no RFC 6581 block (rev 2 framing, no IRD/ORD, no RTR)
 *   rev1        MPA revision 1 (no RFC 6581 block, no RTR)
 *   rtr=LIST    the RTR messages offered (initiator) or accepted (responder): write, read,
 *               send joined by '+', e.g. rtr=write+read
 *   strictird   an initiator refuses a responder whose IRD is below its ORD
 * or key mpa of softrnic.conf (softrnic_conf.h). Read at every rdma_listen / rdma_connect and
 * for every connection a listener takes. */
#include "rcm_int.h"
#include "softrnic_conf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MPA_ENV "SOFTRNIC_MPA"

static int rtr_of(const char *list, size_t len, unsigned *out)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "write", MPA_RTR_WRITE }, { "read", MPA_RTR_READ }, { "send", MPA_RTR_SEND },
	};
	unsigned set = 0;

	while (len > 0) {
		size_t n = strcspn(list, "+,");
		unsigned bit = 0;

		n = n < len ? n : len;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == n && strncmp(list, names[i].name, n) == 0)
				bit = names[i].bit;
		if (bit == 0)
			return -1;
		set |= bit;
		list += n;
		len -= n;
		if (len > 0) { /* the '+': a name must follow */
			list++;
			if (--len == 0)
				return -1;
		}
	}
	*out = set;
	return set ? 0 : -1;
}

/* One option of length len into p; -1 when unknown. */
static int apply(struct mpa_policy *p, const char *o, size_t len)
{
#define IS(s) (len == sizeof(s) - 1 && strncmp(o, s, len) == 0)
	if (IS("crc"))
		p->crc_required = true;
	else if (IS("markers"))
		p->markers_wanted = true;
	else if (IS("nomarkers"))
		p->markers = MPA_MARKERS_REJECT;
	else if (IS("nop2p"))
		p->p2p = false;
	else if (IS("noenhanced"))
		p->enhanced = p->p2p = false;
	else if (IS("rev1"))
		p->rev = 1, p->enhanced = p->p2p = false;
	else if (IS("strictird"))
		p->ird_check = MPA_IRD_STRICT;
	else if (len > 4 && strncmp(o, "rtr=", 4) == 0)
		return rtr_of(o + 4, len - 4, &p->rtr_types);
	else
		return -1;
	return 0;
#undef IS
}

int rcm_mpa_env(struct mpa_policy *p)
{
	char where[320];
	const char *e = softrnic_conf_get(MPA_ENV, where, sizeof(where));

	if (e == NULL)
		return 0;
	for (const char *o = e; *o != '\0';) {
		size_t len = strcspn(o, ",");

		/* rtr=a+b is one option; the '+' never separates options */
		if (len > 0 && apply(p, o, len) != 0) {
			fprintf(stderr, "softrnic: %s: mpa '%s': unknown option '%.*s' (known: crc "
				"markers nomarkers nop2p noenhanced rev1 rtr=write+read+send "
				"strictird)\n", where, e, (int)len, o);
			return -1;
		}
		o += len;
		if (*o == ',')
			o++;
	}
	return 0;
}
