/* VipOpenNic's device names (docs/vipl.md, D110): softrnic's own (softrnic0..7), and the names
 * VIA applications of the three common stacks pass, so they open a NIC unchanged:
 *   Intel VIPL samples       nic0, via0                 unit 0
 *   M-VIA (Ethernet devices) /dev/via_eth0../dev/via_eth7  unit N
 *   M-VIA (loopback device)  /dev/via_lo                unit 0 on 127.0.0.1 (kernel sockets)
 *   Giganet cLAN             /dev/clanvi0../dev/clanvi7    unit N
 *   softrnic VI/TCP          vitcp0..vitcp7             unit N on the VI/TCP wire
 * NULL means unit 0 (VIPL 1.0: the default NIC). M-VIA's via_lo reaches only VIs of the same
 * host, as the loopback address does, so it is unit 0 bound to 127.0.0.1. */
#include "vipl_int.h"

#include <string.h>

/* "<prefix><digit>" with the digit 0..7: the unit, else -1. */
static int numbered(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strncmp(name, prefix, n) != 0 || name[n] < '0' || name[n] > '7' || name[n + 1] != '\0')
		return -1;
	return name[n] - '0';
}

int vipl_devname_parse(const char *name, struct vipl_devname *out)
{
	static const char *const unit0[] = { "nic0", "via0" };
	static const char *const prefixes[] = { "softrnic", "/dev/via_eth", "/dev/clanvi" };

	out->unit = 0;
	out->loopback = false;
	out->vitcp = false;
	if (name == NULL)
		return 0;
	for (size_t i = 0; i < sizeof(unit0) / sizeof(unit0[0]); i++)
		if (strcmp(name, unit0[i]) == 0)
			return 0;
	if (strcmp(name, "/dev/via_lo") == 0) {
		out->loopback = true;
		return 0;
	}
	int vt = numbered(name, "vitcp");
	if (vt >= 0) { /* softrnic's VI/TCP NICs (docs/vipl.md "Two wires") */
		out->unit = vt;
		out->vitcp = true;
		return 0;
	}
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		int unit = numbered(name, prefixes[i]);
		if (unit >= 0) {
			out->unit = unit;
			return 0;
		}
	}
	return -1;
}
