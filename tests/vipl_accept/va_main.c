/* vipl_accept: driver and peer of the VIPL acceptance tests.
 *   vipl_accept [--ip-a IP --ip-b IP] [--ns-a NS --ns-b NS] [--env-a K=V]... [--env-b K=V]...
 *               [--b-after PATH] SCENARIO...   (driver)
 *   vipl_accept --list
 *   vipl_accept --role A|B --fd N --ip-a IP --port-a P --ip-b IP --port-b P SCENARIO (peer)
 * The driver runs each scenario as two processes (one when the scenario has no B side), in
 * the network namespaces given (`ip netns exec`), and fails unless all exit 0 in time.
 * --env-a / --env-b put a variable into one peer's environment only (each peer of a DPDK run
 * needs its own port configuration: tests/vipl_accept/accept_dpdk.sh); --b-after starts peer B
 * once PATH exists, as a file or an abstract Unix socket (a net_memif client cannot start
 * before the server's socket exists); a file at PATH is removed before A starts, so B waits
 * for this A's socket, not a stale one. A scenario may give both peers one port (one_port: a
 * cluster's well-known VIPL port) and have role A played by another program beside this one
 * (a_prog: P02's va_dlpeer, which loads libvipl.so itself); it gets the same arguments. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include "va.h"

#define VA_MAX_ENV 16

struct va_opts {
	const char *ip_a, *ip_b, *ns_a, *ns_b;
	const char *env[2][VA_MAX_ENV]; /* [0]: peer A, [1]: peer B; "K=V" */
	int n_env[2];
	const char *b_after; /* start B once this path exists */
	char role;
	int fd;
	uint16_t port_a, port_b;
};

static const struct va_scenario *find_scenario(const char *name)
{
	for (const struct va_scenario *s = va_scenarios; s->name; s++)
		if (strcmp(s->name, name) == 0 || strncmp(s->title, name, strlen(name)) == 0)
			return s;
	return NULL;
}

/* A TCP port that binds now on every address; probing from a PID-derived start keeps
 * concurrent runs (other build trees) apart. */
static uint16_t pick_port(uint16_t avoid)
{
	static unsigned seq;
	for (unsigned i = 0; i < 2000; i++) {
		uint16_t p = (uint16_t)(12000 + ((unsigned)getpid() * 37 + seq++ * 7 + i) % 20000);
		if (p == avoid)
			continue;
		int s = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(p) };
		int ok = s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0;
		if (s >= 0)
			close(s);
		if (ok)
			return p;
	}
	return 0;
}

/* The peer's program: this one, or prog (when not NULL) in this one's directory. */
static bool peer_program(char *path, size_t len, const char *prog)
{
	ssize_t n = readlink("/proc/self/exe", path, len - 1);
	if (n <= 0)
		return false;
	path[n] = 0;
	char *slash = strrchr(path, '/');
	if (prog == NULL)
		return true;
	if (slash == NULL || (size_t)(slash - path) + 1 + strlen(prog) >= len)
		return false;
	strcpy(slash + 1, prog);
	return true;
}

static pid_t spawn(const struct va_opts *o, const struct va_scenario *s, char role, int fd,
		   int other, uint16_t pa, uint16_t pb)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	/* the peer's end must not stay open here, or a dead peer would never read as EOF */
	close(other);
	char self[4096], fds[16], spa[8], spb[8], env[128];
	if (!peer_program(self, sizeof self, role == 'A' ? s->a_prog : NULL))
		_exit(126);
	const char *scen = s->name;
	snprintf(fds, sizeof fds, "%d", fd);
	snprintf(spa, sizeof spa, "%u", pa);
	snprintf(spb, sizeof spb, "%u", pb);
	snprintf(env, sizeof env, "%s:%u", role == 'A' ? o->ip_a : o->ip_b,
		 role == 'A' ? pa : pb);
	setenv("SOFTRNIC_VIPL_ADDR", env, 1);
	for (int i = 0; i < o->n_env[role == 'B']; i++)
		putenv(strdup(o->env[role == 'B'][i]));
	const char *ns = role == 'A' ? o->ns_a : o->ns_b;
	const char *argv[24];
	int k = 0;
	if (ns) {
		argv[k++] = "ip", argv[k++] = "netns", argv[k++] = "exec", argv[k++] = ns;
	}
	argv[k++] = self;
	argv[k++] = "--role", argv[k++] = role == 'A' ? "A" : "B";
	argv[k++] = "--fd", argv[k++] = fds;
	argv[k++] = "--ip-a", argv[k++] = o->ip_a, argv[k++] = "--port-a", argv[k++] = spa;
	argv[k++] = "--ip-b", argv[k++] = o->ip_b, argv[k++] = "--port-b", argv[k++] = spb;
	argv[k++] = scen;
	argv[k] = NULL;
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "vipl_accept: exec %s: %s\n", argv[0], strerror(errno));
	_exit(126);
}

/* Waits for both peers; past the deadline (or 5 s after one failed) kills the rest. */
static int supervise(const char *scen, pid_t pid[2], unsigned timeout_s)
{
	int rc = 0, left = (pid[0] > 0) + (pid[1] > 0);
	(void)timeout_s;
	long long deadline = va_now_ms() + timeout_s * 1000ll;
	while (left > 0) {
		for (int i = 0; i < 2; i++) {
			int st;
			if (pid[i] <= 0 || waitpid(pid[i], &st, WNOHANG) != pid[i])
				continue;
			int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
			if (!ok) {
				fprintf(stderr, "%s: peer %c %s %d\n", scen, i ? 'B' : 'A',
					WIFEXITED(st) ? "exited with status" : "killed by signal",
					WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
				rc = 1;
				long long d = va_now_ms() + 5000;
				deadline = d < deadline ? d : deadline;
			}
			pid[i] = 0;
			left--;
		}
		if (left > 0 && va_now_ms() > deadline) {
			for (int i = 0; i < 2; i++)
				if (pid[i] > 0) {
					fprintf(stderr, "%s: FAIL: peer %c still running %s; "
						"killed\n", scen, i ? 'B' : 'A',
						rc ? "5 s after its peer failed"
						   : "at the scenario deadline");
					kill(pid[i], SIGKILL);
					waitpid(pid[i], NULL, 0);
					pid[i] = 0;
				}
			return 1;
		}
		va_sleep_ms(20);
	}
	return rc;
}

/* A file at PATH, or a Unix socket bound to PATH in the abstract namespace (DPDK's memif
 * binds there by default), as /proc/net/unix shows it: "@PATH" at the end of a line. */
static bool path_exists(const char *path)
{
	if (access(path, F_OK) == 0)
		return true;
	FILE *f = fopen("/proc/net/unix", "r");
	if (f == NULL)
		return false;
	char line[512];
	size_t n = strlen(path);
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		size_t len = strlen(line);
		found = len > n && line[len - n - 1] == '@' && strcmp(line + len - n, path) == 0;
	}
	fclose(f);
	return found;
}

/* Waits until PATH exists, A has exited, or VA_B_AFTER_MS has passed: B then starts anyway
 * and the scenario itself reports what it could not reach. */
#define VA_B_AFTER_MS 10000
static void wait_for_path(const char *path, pid_t a)
{
	long long deadline = va_now_ms() + VA_B_AFTER_MS;
	while (!path_exists(path) && va_now_ms() < deadline) {
		siginfo_t info = { 0 };
		/* WNOWAIT: A's status stays for supervise() */
		if (waitid(P_PID, (id_t)a, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == a)
			return;
		va_sleep_ms(10);
	}
}

static int drive(const struct va_opts *o, const struct va_scenario *s)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
		return perror("socketpair"), 1;
	uint16_t pa = pick_port(0), pb = s->one_port ? pa : pick_port(pa);
	if (!pa || !pb)
		return fprintf(stderr, "%s: FAIL: no free TCP port\n", s->name), 1;
	printf("%s (%s): A=%s:%u%s%s B=%s:%u%s%s\n", s->name, s->title, o->ip_a, pa,
	       o->ns_a ? " in " : "", o->ns_a ? o->ns_a : "", o->ip_b, pb,
	       o->ns_b ? " in " : "", o->ns_b ? o->ns_b : "");
	fflush(stdout);
	if (o->b_after)
		unlink(o->b_after);
	pid_t pid[2] = { 0, 0 };
	pid[0] = spawn(o, s, 'A', sv[0], sv[1], pa, pb);
	if (s->b) {
		if (o->b_after)
			wait_for_path(o->b_after, pid[0]);
		pid[1] = spawn(o, s, 'B', sv[1], sv[0], pa, pb);
	}
	close(sv[0]);
	close(sv[1]);
	int rc = supervise(s->name, pid, s->timeout_s);
	printf("%s: %s\n", s->name, rc ? "FAIL" : "PASS");
	return rc;
}

static int run_peer(const struct va_opts *o, const char *scen)
{
	const struct va_scenario *s = find_scenario(scen);
	if (!s)
		return fprintf(stderr, "vipl_accept: unknown scenario %s\n", scen), 2;
	struct va_ctx ctx = { .role = o->role, .scenario = s->name, .ctl = o->fd,
			      .port_a = o->port_a, .port_b = o->port_b };
	snprintf(ctx.ip_a, sizeof ctx.ip_a, "%s", o->ip_a);
	snprintf(ctx.ip_b, sizeof ctx.ip_b, "%s", o->ip_b);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	va_role_fn fn = o->role == 'A' ? s->a : s->b;
	if (fn == NULL) /* a role another program plays (a_prog) */
		return fprintf(stderr, "vipl_accept: %s has no role %c here\n", scen, o->role), 2;
	fn(&ctx);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: vipl_accept [--ip-a IP --ip-b IP] [--ns-a NS --ns-b NS] "
			"[--env-a K=V]... [--env-b K=V]... [--b-after PATH] SCENARIO... | --list\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct va_opts o = { .ip_a = "127.0.0.1", .ip_b = "127.0.0.1", .fd = -1 };
	int i = 1;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		const char *k = argv[i];
		if (strcmp(k, "--list") == 0) {
			for (const struct va_scenario *s = va_scenarios; s->name; s++)
				printf("%s %s\n", s->name, s->title);
			return 0;
		}
		if (i + 1 >= argc)
			return usage();
		const char *v = argv[++i];
		if (strcmp(k, "--ip-a") == 0) o.ip_a = v;
		else if (strcmp(k, "--ip-b") == 0) o.ip_b = v;
		else if (strcmp(k, "--ns-a") == 0) o.ns_a = v;
		else if (strcmp(k, "--ns-b") == 0) o.ns_b = v;
		else if (strcmp(k, "--env-a") == 0 || strcmp(k, "--env-b") == 0) {
			int b = k[6] == 'b';
			if (o.n_env[b] >= VA_MAX_ENV || strchr(v, '=') == NULL || v[0] == '=')
				return usage();
			o.env[b][o.n_env[b]++] = v;
		}
		else if (strcmp(k, "--role") == 0) o.role = v[0];
		else if (strcmp(k, "--fd") == 0) o.fd = atoi(v);
		else if (strcmp(k, "--port-a") == 0) o.port_a = (uint16_t)atoi(v);
		else if (strcmp(k, "--port-b") == 0) o.port_b = (uint16_t)atoi(v);
		else if (strcmp(k, "--b-after") == 0) o.b_after = v;
		else return usage();
	}
	if (i >= argc)
		return usage();
	if (o.role)
		return run_peer(&o, argv[i]);
	signal(SIGPIPE, SIG_IGN);
	int rc = 0;
	for (; i < argc; i++) {
		const struct va_scenario *s = find_scenario(argv[i]);
		if (!s) {
			fprintf(stderr, "vipl_accept: unknown scenario %s\n", argv[i]);
			return 2;
		}
		rc |= drive(&o, s);
	}
	return rc;
}
