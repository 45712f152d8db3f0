/* EAL start-up for a DPDK port (dpdk_port.h): the user's EAL arguments completed with what
 * softrnic always needs (no PCI, no shared config, no telemetry, in-memory, one lcore of the
 * caller's CPU set, memif buffers fitted to the MTU), started once per process. */
#include "dpdk_port_int.h"

static int g_eal_rc = 1;               /* 1 not started, 0 up, <0 failed */
static char g_eal_err[512];

/* ---- EAL ------------------------------------------------------------------------------------ */

#define DPDK_MEMIF_FITS 8 /* memif --vdev values given a bsize (dpdk_memif.h) */

struct eal_args {
	char buf[1024 + 256];
	char *argv[DPDK_MAX_ARGS + 1];
	int argc;
	char fit[DPDK_MEMIF_FITS][320];
	int nfit;
};

static bool eal_has(const struct eal_args *a, const char *opt)
{
	size_t n = strlen(opt);

	for (int i = 1; i < a->argc; i++)
		if (strncmp(a->argv[i], opt, n) == 0 &&
		    (a->argv[i][n] == '\0' || a->argv[i][n] == '='))
			return true;
	return false;
}

static int eal_push(struct eal_args *a, char *s)
{
	if (a->argc >= DPDK_MAX_ARGS)
		return -E2BIG;
	a->argv[a->argc++] = s;
	a->argv[a->argc] = NULL;
	return 0;
}

/* A memif --vdev value whose buffers are too small for a frame of mtu gets a bsize that fits
 * one (dpdk_memif.h: chained frames are corrupted). The value starts at argv[i] + off
 * ("--vdev=net_memif0,..." or a separate "net_memif0,..."); the prefix is kept. */
static int eal_fit_memif(struct eal_args *a, int i, size_t off, unsigned mtu)
{
	char *f = a->fit[a->nfit];
	int rc;

	if (a->nfit >= DPDK_MEMIF_FITS)
		return 0; /* the port's own check refuses what stays too small */
	memcpy(f, a->argv[i], off);
	rc = dpdk_memif_fit(a->argv[i] + off, mtu, f + off, sizeof(a->fit[0]) - off);
	if (rc == 1) {
		a->argv[i] = f;
		a->nfit++;
	}
	return rc < 0 ? -EMSGSIZE : 0;
}

static int eal_fit_vdevs(struct eal_args *a, unsigned mtu)
{
	int rc = 0;

	for (int i = 1; i < a->argc && rc == 0; i++) {
		if (strcmp(a->argv[i], "--vdev") == 0 && i + 1 < a->argc)
			rc = eal_fit_memif(a, ++i, 0, mtu);
		else if (strncmp(a->argv[i], "--vdev=", 7) == 0)
			rc = eal_fit_memif(a, i, 7, mtu);
	}
	return rc;
}

/* Split the user's arguments on blanks (no quoting: EAL values have no blanks). */
static int eal_split(struct eal_args *a, const char *user, unsigned mtu)
{
	char *tok, *save = NULL;

	snprintf(a->buf, sizeof(a->buf), "%s", user);
	a->argc = 0;
	a->nfit = 0;
	eal_push(a, "softrnic");
	for (tok = strtok_r(a->buf, " \t\n", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t\n", &save))
		if (eal_push(a, tok) != 0)
			return -E2BIG;
	return eal_fit_vdevs(a, mtu);
}

static bool hugepages_reserved(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long total = 0;

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Total: %lu", &total) == 1)
			break;
	fclose(f);
	return total > 0;
}

/* The lcore EAL pins its main thread to: the first CPU we may run on (taskset works). */
static int first_cpu(const cpu_set_t *set)
{
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set))
			return c;
	return 0;
}

static int eal_forced(struct eal_args *a, const cpu_set_t *cpus, char *lcore, size_t ll,
		      char *err, size_t errlen)
{
	int rc = 0;

	if (!eal_has(a, "--no-pci"))
		rc |= eal_push(a, "--no-pci");
	if (!eal_has(a, "--no-shconf"))
		rc |= eal_push(a, "--no-shconf");
	/* telemetry only when asked for: its socket is one per file prefix (D143) */
	if (!eal_has(a, "--no-telemetry") && !eal_has(a, "--telemetry"))
		rc |= eal_push(a, "--no-telemetry");
	if (!eal_has(a, "--log-level"))
		rc |= eal_push(a, "--log-level=warning");
	if (eal_has(a, "--no-huge")) {
		if (!eal_has(a, "-m") && !eal_has(a, "--socket-mem")) {
			rc |= eal_push(a, "-m");
			rc |= eal_push(a, "256");
		}
	} else if (!hugepages_reserved()) {
		snprintf(err, errlen, "DPDK needs hugepages and none are reserved: add \"--no-huge "
			 "-m 256\" to key 'eal' (SOFTRNIC_DPDK_EAL), or reserve some (echo 512 > "
			 "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)");
		return -ENOMEM;
	} else if (!eal_has(a, "--in-memory")) {
		rc |= eal_push(a, "--in-memory");
	}
	if (!eal_has(a, "-l") && !eal_has(a, "-c") && !eal_has(a, "--lcores")) {
		snprintf(lcore, ll, "%d", first_cpu(cpus));
		rc |= eal_push(a, "-l");
		rc |= eal_push(a, lcore);
	}
	if (rc != 0) {
		snprintf(err, errlen, "key 'eal': more than %d arguments", DPDK_MAX_ARGS - 10);
		return -E2BIG;
	}
	return 0;
}

static const char *eal_hint(int e)
{
	switch (e) {
	case EACCES:
		return "permission denied: run as root (hugepages, af_packet need privileges)";
	case ENOMEM:
		return "not enough memory: reserve hugepages or use --no-huge -m 256";
	case EINVAL:
		return "an EAL argument is invalid (EAL printed which)";
	case EALREADY:
		return "EAL was already started in this process by someone else";
	case ENOTSUP:
	case ENODEV:
		return "a device could not be probed: check the --vdev (af_packet: does the "
		       "interface exist here? memif: is the socket path in use?)";
	default:
		return "see EAL's messages above";
	}
}

static int eal_start(const struct dpdk_cfg *cfg, bool *tried, char *err, size_t errlen)
{
	struct eal_args a;
	cpu_set_t cpus;
	char lcore[16];
	int rc;

	CPU_ZERO(&cpus);
	pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	rc = eal_split(&a, cfg->eal, cfg->mtu);
	if (rc != 0) {
		if (rc == -EMSGSIZE)
			snprintf(err, errlen, "key 'eal': a memif --vdev too long to add bsize=%u "
				 "for MTU %u: give bsize in it", dpdk_memif_frame(cfg->mtu),
				 cfg->mtu);
		else
			snprintf(err, errlen, "key 'eal': too many arguments");
		return rc;
	}
	rc = eal_forced(&a, &cpus, lcore, sizeof(lcore), err, errlen);
	if (rc != 0)
		return rc;
	*tried = true;
	if (rte_eal_init(a.argc, a.argv) < 0) {
		int e = rte_errno;

		snprintf(err, errlen, "DPDK EAL could not start with '%.300s' (key 'eal'): %s: %s",
			 cfg->eal, rte_strerror(e), eal_hint(e));
		return -(e != 0 ? e : EIO);
	}
	/* EAL pinned this thread to one lcore; the caller's thread is not an lcore worker. */
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	dpdk_clock_init();
	return 0;
}

/* After a close unplugged the --vdev devices, bring back those this configuration names. */
static void vdev_replug(const struct dpdk_cfg *cfg)
{
	struct eal_args a;

	if (eal_split(&a, cfg->eal, cfg->mtu) != 0)
		return;
	for (int i = 1; i < a.argc; i++) {
		char name[RTE_ETH_NAME_MAX_LEN], *comma;
		const char *dev = NULL;
		uint16_t pid;

		if (strncmp(a.argv[i], "--vdev=", 7) == 0)
			dev = a.argv[i] + 7;
		else if (strcmp(a.argv[i], "--vdev") == 0 && i + 1 < a.argc)
			dev = a.argv[++i];
		if (dev == NULL)
			continue;
		snprintf(name, sizeof(name), "%s", dev);
		comma = strchr(name, ',');
		if (comma != NULL)
			*comma = '\0';
		if (rte_eth_dev_get_port_by_name(name, &pid) == 0)
			continue;
		rte_eal_hotplug_add("vdev", name, strchr(dev, ',') ? strchr(dev, ',') + 1 : "");
	}
}

/* EAL's own failure is final (DPDK cannot init twice); a refusal before rte_eal_init (bad
 * arguments, no hugepages) lets a corrected configuration try again. */
int dpdk_eal_once(const struct dpdk_cfg *cfg, char *err, size_t errlen)
{
	bool tried = false;
	int rc;

	if (g_eal_rc == 0) {
		vdev_replug(cfg);
		return 0;
	}
	if (g_eal_rc < 0) {
		snprintf(err, errlen, "%s", g_eal_err);
		return g_eal_rc;
	}
	rc = eal_start(cfg, &tried, err, errlen);
	if (rc == 0 || tried) {
		g_eal_rc = rc;
		snprintf(g_eal_err, sizeof(g_eal_err), "%s", err);
	}
	return rc;
}
