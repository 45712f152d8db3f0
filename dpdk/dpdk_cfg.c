/* The DPDK port's configuration (dpdk_port.h): the dpdk_<key> keys of softrnic.conf
 * (softrnic_conf.h), then "key = value" lines from the file named by SOFTRNIC_DPDK_CONF (or
 * softrnic.conf's dpdk_conf), then SOFTRNIC_DPDK_<KEY> variables over both. Every error names
 * the key (and the file and line, or the variable) and says what a good value looks like. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpdk_port.h"
#include "dpdk_cfg_int.h"
#include "softrnic_conf.h"

/* A key's parser: 0 or -EINVAL with the reason in why. */
typedef int (*cfg_set_fn)(struct dpdk_cfg *c, const char *v, char *why, size_t wl);

static int set_str(char *dst, size_t cap, const char *v, char *why, size_t wl)
{
	if (strlen(v) >= cap) {
		snprintf(why, wl, "longer than %zu characters", cap - 1);
		return -EINVAL;
	}
	strcpy(dst, v);
	return 0;
}

static int parse_u32(const char *v, uint32_t lo, uint32_t hi, uint32_t *out, char *why,
		     size_t wl)
{
	char *end;
	unsigned long long x;
	unsigned long long mul = 1;

	errno = 0;
	x = strtoull(v, &end, 10);
	if (end != v && (*end == 'k' || *end == 'K'))
		mul = 1024, end++;
	else if (end != v && (*end == 'm' || *end == 'M'))
		mul = 1024 * 1024, end++;
	if (end == v || *end != '\0' || errno != 0 || v[0] == '-' || x > UINT32_MAX / mul ||
	    x * mul < lo || x * mul > hi) {
		snprintf(why, wl, "'%s' is not a number in %u..%u", v, lo, hi);
		return -EINVAL;
	}
	*out = (uint32_t)(x * mul);
	return 0;
}

static int set_eal(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	return set_str(c->eal, sizeof(c->eal), v, why, wl);
}

static int set_port(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	if (*v == '\0') {
		snprintf(why, wl, "empty (give a port number or a device name such as net_memif0)");
		return -EINVAL;
	}
	return set_str(c->port, sizeof(c->port), v, why, wl);
}

/* "a.b.c.d/len" or "a.b.c.d/255.255.255.0". */
static int set_ip(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	char buf[64];
	char *slash;
	struct in_addr a, m;
	uint32_t len;

	if (strlen(v) >= sizeof(buf) || (slash = strchr(strcpy(buf, v), '/')) == NULL)
		goto bad;
	*slash++ = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1 || a.s_addr == 0)
		goto bad;
	if (strchr(slash, '.') != NULL) {
		uint32_t h;

		if (inet_pton(AF_INET, slash, &m) != 1)
			goto bad;
		h = ntohl(m.s_addr);
		if (h == 0 || (~h & (~h + 1)) != 0) /* not contiguous ones */
			goto bad;
		len = (uint32_t)__builtin_popcount(h);
	} else if (parse_u32(slash, 1, 32, &len, why, wl) != 0) {
		goto bad;
	}
	c->ip = a.s_addr;
	c->prefix_len = (uint8_t)len;
	return 0;
bad:
	snprintf(why, wl, "'%s' is not an IPv4 address with a prefix (e.g. 198.51.100.1/24)", v);
	return -EINVAL;
}

static int set_gw(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	struct in_addr a;

	if (*v == '\0') {
		c->gateway = 0;
		return 0;
	}
	if (inet_pton(AF_INET, v, &a) != 1 || a.s_addr == 0) {
		snprintf(why, wl, "'%s' is not an IPv4 address (e.g. 198.51.100.254)", v);
		return -EINVAL;
	}
	c->gateway = a.s_addr;
	return 0;
}

static int set_mac(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	unsigned b[6];
	char tail;

	if (sscanf(v, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6 || strlen(v) != 17 || (b[0] & 1u) != 0 ||
	    (b[0] | b[1] | b[2] | b[3] | b[4] | b[5]) == 0) {
		snprintf(why, wl, "'%s' is not a unicast MAC address (e.g. 02:00:00:00:00:01)", v);
		return -EINVAL;
	}
	for (int i = 0; i < 6; i++)
		c->mac[i] = (uint8_t)b[i];
	c->mac_set = true;
	return 0;
}

static int set_mtu(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	uint32_t x;
	int rc = parse_u32(v, 576, 64000, &x, why, wl);

	if (rc == 0)
		c->mtu = (uint16_t)x;
	return rc;
}

static int set_pcap(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	return set_str(c->pcap, sizeof(c->pcap), v, why, wl);
}

static int set_sndbuf(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	return parse_u32(v, 4096, 1u << 30, &c->snd_buf, why, wl);
}

static int set_rcvbuf(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	return parse_u32(v, 4096, 1u << 30, &c->rcv_buf, why, wl);
}

static int set_max_conns(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	return parse_u32(v, 64, 1u << 22, &c->max_conns, why, wl);
}

static int set_cc(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	if (strcmp(v, "newreno") == 0)
		c->cc = TCP_CC_NEWRENO;
	else if (strcmp(v, "cubic") == 0)
		c->cc = TCP_CC_CUBIC;
	else if (strcmp(v, "bbr") == 0)
		c->cc = TCP_CC_BBR;
	else {
		snprintf(why, wl, "'%s' is not newreno, cubic or bbr", v);
		return -EINVAL;
	}
	return 0;
}

static int set_spin(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	return parse_u32(v, 0, 10000000, &c->spin_us, why, wl);
}

static int set_nap(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	return parse_u32(v, 1, 1000000, &c->nap_us, why, wl);
}

static int set_mbufs(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	return parse_u32(v, 1023, 1048575, &c->nb_mbufs, why, wl);
}

static int set_tx_mbufs(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	return parse_u32(v, 1023, 1048575, &c->nb_tx_mbufs, why, wl);
}

static int parse_onoff(const char *v, bool *out, char *why, size_t wl)
{
	if (strcmp(v, "on") == 0 || strcmp(v, "1") == 0)
		*out = true;
	else if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0)
		*out = false;
	else {
		snprintf(why, wl, "'%s' is not on or off", v);
		return -EINVAL;
	}
	return 0;
}

static int set_tx_refs(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	return parse_onoff(v, &c->tx_refs, why, wl);
}

static int set_memif_csum(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	bool on;
	int rc = parse_onoff(v, &on, why, wl);

	c->memif_csum_off = rc == 0 && !on;
	return rc;
}

static int set_link_wait(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	int rc = parse_u32(v, 0, 60000, &c->link_wait_ms, why, wl);

	c->link_wait_set = rc == 0;
	return rc;
}

/* "IDLE,INTVL,PROBES" in seconds, seconds and a count, or "off". */
static int set_keepalive(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	char buf[64], *save = NULL, *f[3];
	uint32_t x[3];
	const uint32_t hi[3] = { 86400, 3600, 100 };

	if (strcmp(v, "off") == 0) {
		c->ka_idle_s = 0;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", v);
	f[0] = strtok_r(buf, ",", &save);
	f[1] = f[0] ? strtok_r(NULL, ",", &save) : NULL;
	f[2] = f[1] ? strtok_r(NULL, ",", &save) : NULL;
	if (!f[2] || strtok_r(NULL, ",", &save)) {
		snprintf(why, wl, "'%s' is not IDLE,INTVL,PROBES (seconds, seconds, count) or off", v);
		return -EINVAL;
	}
	for (int i = 0; i < 3; i++)
		if (parse_u32(f[i], 1, hi[i], &x[i], why, wl) != 0)
			return -EINVAL;
	c->ka_idle_s = x[0];
	c->ka_intvl_s = x[1];
	c->ka_probes = x[2];
	return 0;
}

static int set_orphan_retries(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	return parse_u32(v, 1, 100, &c->orphan_retries, why, wl);
}

static int set_fin_timeout(struct dpdk_cfg *c, const char *v, char *why, size_t wl)
{
	return parse_u32(v, 1, 3600, &c->fin_timeout_s, why, wl);
}

static const struct {
	const char *key;
	cfg_set_fn set;
} cfg_keys[] = {
	{ "eal", set_eal },       { "port", set_port },     { "ip", set_ip },
	{ "gw", set_gw },         { "mac", set_mac },       { "mtu", set_mtu },
	{ "pcap", set_pcap },     { "sndbuf", set_sndbuf }, { "rcvbuf", set_rcvbuf },
	{ "cc", set_cc },         { "spin_us", set_spin },  { "nap_us", set_nap },
	{ "mbufs", set_mbufs },   { "tx_mbufs", set_tx_mbufs },
	{ "link_wait_ms", set_link_wait }, { "tx_refs", set_tx_refs },
	{ "memif_csum", set_memif_csum }, { "keepalive", set_keepalive },
	{ "max_conns", set_max_conns }, { "orphan_retries", set_orphan_retries },
	{ "fin_timeout", set_fin_timeout },
};
#define CFG_NKEYS (sizeof(cfg_keys) / sizeof(cfg_keys[0]))

uint32_t dpdk_cfg_link_wait_ms(const struct dpdk_cfg *c, bool memif_server)
{
	return memif_server && !c->link_wait_set ? 0 : c->link_wait_ms;
}

void dpdk_cfg_defaults(struct dpdk_cfg *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->port, "0");
	c->mtu = 1500;
	c->cc = TCP_CC_NEWRENO;
	c->spin_us = DPDK_SPIN_US_DEFAULT;
	c->nap_us = DPDK_NAP_US_DEFAULT;
	c->link_wait_ms = DPDK_LINK_WAIT_MS_DEFAULT;
	c->ka_idle_s = DPDK_KA_IDLE_S_DEFAULT;
	c->ka_intvl_s = DPDK_KA_INTVL_S_DEFAULT;
	c->ka_probes = DPDK_KA_PROBES_DEFAULT;
	c->max_conns = DPDK_MAX_CONNS_DEFAULT;
	c->orphan_retries = DPDK_ORPHAN_RETRIES_DEFAULT;
	c->fin_timeout_s = DPDK_FIN_TIMEOUT_S_DEFAULT;
}

/* Set one key; where says where it came from ("line 3", "SOFTRNIC_DPDK_MTU"). */
int dpdk_cfg_set(struct dpdk_cfg *c, const char *key, const char *val, const char *where,
		    char *err, size_t errlen)
{
	char why[200];

	for (size_t i = 0; i < CFG_NKEYS; i++) {
		if (strcmp(cfg_keys[i].key, key) != 0)
			continue;
		if (cfg_keys[i].set(c, val, why, sizeof(why)) == 0)
			return 0;
		snprintf(err, errlen, "DPDK configuration, %s: key '%s': %s", where, key, why);
		return -EINVAL;
	}
	snprintf(err, errlen,
		 "DPDK configuration, %s: unknown key '%s' (known: eal port ip gw mac mtu pcap "
		 "sndbuf rcvbuf cc spin_us nap_us mbufs tx_mbufs link_wait_ms tx_refs memif_csum "
		 "keepalive max_conns orphan_retries fin_timeout)",
		 where, key);
	return -EINVAL;
}

static int cfg_line(struct dpdk_cfg *c, char *line, unsigned no, char *err, size_t errlen)
{
	char where[32], *eq, *hash = strchr(line, '#');

	if (hash != NULL)
		*hash = '\0';
	/* the port file's lines follow softrnic.conf's rule for blanks and quotes */
	line = softrnic_conf_trim(line);
	if (*line == '\0')
		return 0;
	snprintf(where, sizeof(where), "line %u", no);
	eq = strchr(line, '=');
	if (eq == NULL) {
		snprintf(err, errlen, "DPDK configuration, %s: '%s' is not 'key = value'", where,
			 line);
		return -EINVAL;
	}
	*eq = '\0';
	return dpdk_cfg_set(c, softrnic_conf_trim(line), softrnic_conf_trim(eq + 1), where, err,
			    errlen);
}

int dpdk_cfg_apply_text(struct dpdk_cfg *c, const char *text, char *err, size_t errlen)
{
	unsigned no = 0;

	while (text != NULL && *text != '\0') {
		const char *nl = strchr(text, '\n');
		size_t len = nl != NULL ? (size_t)(nl - text) : strlen(text);
		char line[1400];
		int rc;

		no++;
		if (len >= sizeof(line)) {
			snprintf(err, errlen, "DPDK configuration, line %u: longer than %zu characters",
				 no, sizeof(line) - 1);
			return -EINVAL;
		}
		memcpy(line, text, len);
		line[len] = '\0';
		rc = cfg_line(c, line, no, err, errlen);
		if (rc != 0)
			return rc;
		text = nl != NULL ? nl + 1 : NULL;
	}
	return 0;
}

int dpdk_cfg_check(const struct dpdk_cfg *c, char *err, size_t errlen)
{
	if (c->ip == 0) {
		snprintf(err, errlen, "DPDK configuration: key 'ip' is required "
			 "(e.g. ip = 198.51.100.1/24, or SOFTRNIC_DPDK_IP=198.51.100.1/24)");
		return -EINVAL;
	}
	if (c->gateway != 0 && c->prefix_len < 32 &&
	    ((c->gateway ^ c->ip) & htonl(~(0xffffffffu >> c->prefix_len))) != 0) {
		snprintf(err, errlen, "DPDK configuration: key 'gw': the gateway is not on the "
			 "subnet of 'ip'");
		return -EINVAL;
	}
	return 0;
}

int dpdk_cfg_parse(struct dpdk_cfg *cfg, const char *text, char *err, size_t errlen)
{
	int rc;

	dpdk_cfg_defaults(cfg);
	rc = dpdk_cfg_apply_text(cfg, text, err, errlen);
	return rc != 0 ? rc : dpdk_cfg_check(cfg, err, errlen);
}

static const char *const env_keys[] = { "eal", "port", "ip", "gw", "mac", "mtu", "pcap",
					"sndbuf", "rcvbuf", "cc", "spin_us", "nap_us", "mbufs",
					"tx_mbufs", "link_wait_ms", "tx_refs", "memif_csum",
					"keepalive", "max_conns", "orphan_retries",
					"fin_timeout" };

static int cfg_read_file(const char *path, char **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (f == NULL) {
		snprintf(err, errlen, "SOFTRNIC_DPDK_CONF: cannot open '%s': %s", path,
			 strerror(errno));
		return -EINVAL;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || n > 65536 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		snprintf(err, errlen, "SOFTRNIC_DPDK_CONF: '%s' is not a readable file of at most "
			 "64 KiB", path);
		return -EINVAL;
	}
	buf = malloc((size_t)n + 1);
	if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		snprintf(err, errlen, "SOFTRNIC_DPDK_CONF: cannot read '%s'", path);
		return -EINVAL;
	}
	buf[n] = '\0';
	fclose(f);
	*out = buf;
	return 0;
}

/* SOFTRNIC_DPDK_<KEY> (from_file false) or softrnic.conf's dpdk_<key> (true) over what cfg
 * holds; *found counts the settings seen. */
static int cfg_env(struct dpdk_cfg *c, bool from_file, int *found, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(env_keys) / sizeof(env_keys[0]); i++) {
		char name[64], val[1100], where[320];
		const char *v;
		size_t j;

		snprintf(name, sizeof(name), "SOFTRNIC_DPDK_%s", env_keys[i]);
		for (j = strlen("SOFTRNIC_DPDK_"); name[j] != '\0'; j++)
			name[j] = (char)toupper((unsigned char)name[j]);
		snprintf(where, sizeof(where), "%s", name);
		v = from_file ? softrnic_conf_file(name, where, sizeof(where)) : getenv(name);
		if (v == NULL)
			continue;
		(*found)++;
		snprintf(val, sizeof(val), "%s", v);
		if (strlen(v) >= sizeof(val)) {
			snprintf(err, errlen, "DPDK configuration, %s: key '%s': too long", where,
				 env_keys[i]);
			return -EINVAL;
		}
		int rc = dpdk_cfg_set(c, env_keys[i], softrnic_conf_trim(val), where, err, errlen);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int dpdk_cfg_from_env(struct dpdk_cfg *cfg, char *err, size_t errlen)
{
	const char *path = softrnic_conf_get("SOFTRNIC_DPDK_CONF", NULL, 0);
	int found = 0, rc;

	dpdk_cfg_defaults(cfg);
	rc = softrnic_conf_check(err, errlen);
	if (rc != 0)
		return rc;
	rc = cfg_env(cfg, true, &found, err, errlen);
	if (rc != 0)
		return rc;
	if (path != NULL && *path != '\0') {
		char *text;

		found++;
		rc = cfg_read_file(path, &text, err, errlen);
		if (rc != 0)
			return rc;
		rc = dpdk_cfg_apply_text(cfg, text, err, errlen);
		free(text);
		if (rc != 0)
			return rc;
	}
	rc = cfg_env(cfg, false, &found, err, errlen);
	if (rc != 0)
		return rc;
	if (found == 0) {
		snprintf(err, errlen, "no DPDK configuration: set SOFTRNIC_DPDK_CONF=<file> or "
			 "SOFTRNIC_DPDK_IP/SOFTRNIC_DPDK_EAL/..., or dpdk_* keys in softrnic.conf "
			 "(docs/dpdk.md, docs/config.md)");
		return -ENOENT;
	}
	return dpdk_cfg_check(cfg, err, errlen);
}
