/* soak_util: what both roles share while running - time, RSS samples and the verdict on
 * them, progress lines, the final report, events, completion polling and teardown. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "soak.h"

static const char *const kind_name[SOAK_KINDS] = {
	[SOAK_SEND] = "send", [SOAK_WRITE] = "write", [SOAK_READ] = "read",
	[SOAK_RECV] = "recv", [SOAK_CREDIT] = "credit", [SOAK_END] = "end",
};

/* One RSS sample a second. The first one after warm-up (20 % of the run) is the baseline;
 * the largest later one is what the bound is checked against. */
static void rss_sample(struct soak_run *r, uint64_t now)
{
	uint64_t warm_ns = (uint64_t)(r->o->seconds * 0.2 * 1e9);
	r->rss_last = vx_rss_kib();
	if (r->rss_start < 0)
		r->rss_start = r->rss_last;
	if (!r->warm && now - r->start_ns >= warm_ns) {
		r->warm = true;
		r->rss_warm = r->rss_last;
	}
	if (r->warm && r->rss_last > r->rss_max_after)
		r->rss_max_after = r->rss_last;
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

void soak_tick(struct soak_run *r, const char *role)
{
	uint64_t now = vx_now_ns();
	if (now >= r->next_rss_ns) {
		rss_sample(r, now);
		r->next_rss_ns = now + 1000000000u;
	}
	if (now < r->next_progress_ns)
		return;
	r->next_progress_ns = now + (uint64_t)r->o->progress_s * 1000000000u;
	const struct soak_stats *s = &r->st;
	printf("soak %s: %.0f s: send %llu write %llu read %llu recv %llu ops, %.1f MiB, "
	       "max latency %.1f ms, rss %ld KiB\n", role, secs(now - r->start_ns),
	       (unsigned long long)s->ops[SOAK_SEND], (unsigned long long)s->ops[SOAK_WRITE],
	       (unsigned long long)s->ops[SOAK_READ], (unsigned long long)s->ops[SOAK_RECV],
	       (double)(s->bytes[SOAK_SEND] + s->bytes[SOAK_WRITE] + s->bytes[SOAK_READ] +
	                s->bytes[SOAK_RECV]) / 1048576.0,
	       (double)s->max_lat_ns / 1e6, r->rss_last);
	fflush(stdout);
}

int soak_rss_verdict(const struct soak_run *r)
{
	if (r->o->rss_bound_kib < 0 || !r->warm || r->o->expect_kill)
		return 0;
	long growth = r->rss_max_after - r->rss_warm;
	if (growth <= r->o->rss_bound_kib)
		return 0;
	fprintf(stderr, "soak: FAIL: VmRSS grew %ld KiB after warm-up (%ld -> %ld KiB), bound %ld\n",
	        growth, r->rss_warm, r->rss_max_after, r->o->rss_bound_kib);
	return -1;
}

void soak_report(const struct soak_run *r, const char *role)
{
	const struct soak_stats *s = &r->st;
	uint64_t bytes = 0;
	printf("soak %s: totals after %.1f s:", role, secs(vx_now_ns() - r->start_ns));
	for (int k = 0; k < SOAK_KINDS; k++) {
		if (!s->ops[k])
			continue;
		printf(" %s %llu (%.1f MiB)", kind_name[k], (unsigned long long)s->ops[k],
		       (double)s->bytes[k] / 1048576.0);
		if (k != SOAK_CREDIT && k != SOAK_END)
			bytes += s->bytes[k];
	}
	printf("\nsoak %s: %llu bytes verified, max completion latency %.1f ms\n", role,
	       (unsigned long long)bytes, (double)s->max_lat_ns / 1e6);
	printf("soak %s: rss start %ld KiB, after warm-up %ld KiB, max after %ld KiB, end %ld KiB\n",
	       role, r->rss_start, r->rss_warm, r->rss_max_after, r->rss_last);
	printf("soak %s: WRs posted %llu, completed %llu (%llu flushed)\n", role,
	       (unsigned long long)s->posted, (unsigned long long)s->completed,
	       (unsigned long long)s->flushed);
	fflush(stdout);
}

int soak_qp_index(const struct soak_run *r, uint32_t qp_num)
{
	for (int i = 0; i < r->o->qps; i++)
		if (r->id[i] && r->id[i]->qp && r->id[i]->qp->qp_num == qp_num)
			return i;
	return -1;
}

static int id_index(const struct soak_run *r, const struct rdma_cm_id *id)
{
	for (int i = 0; i < r->o->qps; i++)
		if (r->id[i] == id)
			return i;
	return -1;
}

void soak_mark_dead(struct soak_run *r, int qp, const char *why)
{
	if (!r->dead_why) {
		r->dead_why = why;
		r->dead_ns = vx_now_ns();
		printf("soak: peer gone? first sign: %s (qp %d)\n", why, qp);
		fflush(stdout);
	}
	if (qp >= 0 && qp < SOAK_MAX_QPS)
		r->qp_dead[qp] = true;
}

static int async_event(struct soak_run *r)
{
	struct ibv_async_event ev;
	if (ibv_get_async_event(r->ctx, &ev))
		return errno == EAGAIN ? 0 : (perror("ibv_get_async_event"), -1);
	enum ibv_event_type t = ev.event_type;
	int qp = -1;
	if (t == IBV_EVENT_QP_FATAL || t == IBV_EVENT_QP_REQ_ERR || t == IBV_EVENT_QP_ACCESS_ERR ||
	    t == IBV_EVENT_QP_LAST_WQE_REACHED || t == IBV_EVENT_COMM_EST)
		qp = soak_qp_index(r, ev.element.qp->qp_num);
	ibv_ack_async_event(&ev);
	if (t == IBV_EVENT_COMM_EST || t == IBV_EVENT_SRQ_LIMIT_REACHED)
		return 0;
	printf("soak: async event: %s\n", ibv_event_type_str(t));
	if (t == IBV_EVENT_QP_FATAL || t == IBV_EVENT_QP_REQ_ERR ||
	    t == IBV_EVENT_QP_ACCESS_ERR || t == IBV_EVENT_QP_LAST_WQE_REACHED) {
		soak_mark_dead(r, qp, "async event");
		return 0;
	}
	return -1;
}

static int cm_event(struct soak_run *r)
{
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(r->ec, &ev))
		return errno == EAGAIN ? 0 : (perror("rdma_get_cm_event"), -1);
	enum rdma_cm_event_type t = ev->event;
	int qp = id_index(r, ev->id);
	rdma_ack_cm_event(ev);
	if (t == RDMA_CM_EVENT_DISCONNECTED) {
		r->disconnected++;
		soak_mark_dead(r, qp, "DISCONNECTED");
		return 0;
	}
	fprintf(stderr, "soak: unexpected rdma_cm event %s\n", rdma_event_str(t));
	return -1;
}

int soak_events(struct soak_run *r)
{
	struct pollfd p[2] = { { .fd = r->ctx->async_fd, .events = POLLIN },
	                       { .fd = r->ec->fd, .events = POLLIN } };
	int rc = 0;
	if (poll(p, 2, 0) <= 0)
		return 0;
	if (p[0].revents & POLLIN)
		rc |= async_event(r);
	if (p[1].revents & POLLIN)
		rc |= cm_event(r);
	return rc;
}

static int take_cq_event(struct soak_run *r)
{
	struct ibv_cq *cq;
	void *ctx;
	if (ibv_get_cq_event(r->ch, &cq, &ctx))
		return errno == EAGAIN ? 0 : (perror("ibv_get_cq_event"), -1);
	r->cq_events++;
	r->armed = false;
	return 0;
}

int soak_poll(struct soak_run *r, struct ibv_wc *wc, int n, int ms)
{
	int got = ibv_poll_cq(r->cq, n, wc);
	if (got)
		return got < 0 ? (fprintf(stderr, "soak: ibv_poll_cq failed\n"), -1) : got;
	if (!r->armed) {   /* arm, then poll again: a completion may have slipped in */
		if (ibv_req_notify_cq(r->cq, 0))
			return perror("ibv_req_notify_cq"), -1;
		r->armed = true;
		return 0;
	}
	struct pollfd p[3] = { { .fd = r->ch->fd, .events = POLLIN },
	                       { .fd = r->ctx->async_fd, .events = POLLIN },
	                       { .fd = r->ec->fd, .events = POLLIN } };
	if (poll(p, 3, ms) < 0 && errno != EINTR)
		return perror("poll"), -1;
	if ((p[0].revents & POLLIN) && take_cq_event(r))
		return -1;
	return 0;
}

bool soak_all_qps_error(const struct soak_run *r)
{
	for (int i = 0; i < r->o->qps; i++) {
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;
		if (!r->id[i] || !r->id[i]->qp ||
		    ibv_query_qp(r->id[i]->qp, &a, IBV_QP_STATE, &ia) || a.qp_state != IBV_QPS_ERR)
			return false;
	}
	return true;
}

static const char *state_name(enum ibv_qp_state s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
	return (unsigned)s < sizeof n / sizeof n[0] ? n[s] : "UNKNOWN";
}

void soak_print_states(const struct soak_run *r, const char *role)
{
	printf("soak %s: QP states:", role);
	for (int i = 0; i < r->o->qps; i++) {
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;
		if (!r->id[i] || !r->id[i]->qp || ibv_query_qp(r->id[i]->qp, &a, IBV_QP_STATE, &ia))
			printf(" -");
		else
			printf(" %s", state_name(a.qp_state));
	}
	printf("\n");
}

void soak_note_completion(struct soak_run *r, enum soak_kind k, uint32_t bytes, uint64_t t0)
{
	uint64_t lat = vx_now_ns() - t0;
	r->st.ops[k]++;
	r->st.bytes[k] += bytes;
	if (lat > r->st.max_lat_ns)
		r->st.max_lat_ns = lat;
}

void soak_teardown(struct soak_run *r)
{
	while (r->nmr)
		vx_unreg(r->mr[--r->nmr]);
	for (int i = 0; i < SOAK_MAX_QPS; i++)
		if (r->id[i] && r->id[i]->qp)
			rdma_destroy_qp(r->id[i]);
	if (r->srq && ibv_destroy_srq(r->srq))
		perror("ibv_destroy_srq");
	if (r->cq) {
		ibv_ack_cq_events(r->cq, r->cq_events);
		if (ibv_destroy_cq(r->cq))
			perror("ibv_destroy_cq");
	}
	if (r->ch && ibv_destroy_comp_channel(r->ch))
		perror("ibv_destroy_comp_channel");
	if (r->pd && ibv_dealloc_pd(r->pd))
		perror("ibv_dealloc_pd");
	for (int i = 0; i < SOAK_MAX_QPS; i++)
		if (r->id[i])
			rdma_destroy_id(r->id[i]);
	if (r->listen_id)
		rdma_destroy_id(r->listen_id);
	if (r->ec)
		rdma_destroy_event_channel(r->ec);
}

int soak_finish(struct soak_run *r, const char *role, int rc)
{
	soak_print_states(r, role);
	soak_report(r, role);
	if (!rc)
		rc = soak_rss_verdict(r);
	soak_teardown(r);
	printf("soak %s: %s\n", role, rc ? "FAIL" : "OK");
	return rc ? 1 : 0;
}

int soak_take(struct soak_run *r, int (*on_wc)(void *arg, const struct ibv_wc *wc), void *arg)
{
	struct ibv_wc wc[16];
	int n = soak_poll(r, wc, 16, 100);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (on_wc(arg, &wc[i]))
			return -1;
	return soak_events(r) && !r->o->expect_kill ? -1 : 0;
}
