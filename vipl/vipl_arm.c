/* Adaptive arming of a connection's verbs CQ (completion progress). Kept armed, every
 * completion wakes the NIC thread: with an application that polls (Done, or Wait's inline
 * phase), that is a context switch per message for nothing, on the core the application needs.
 * So when the application polled this VI inline within the last 2 ms and nothing needs the
 * thread (no notify armed on the VI's queues or their CQs), the thread leaves the CQ unarmed
 * after an event and looks again 1 ms later: if the application polled meanwhile, it waits
 * twice as long (up to 8 ms), else it re-arms the CQ (then polls). That bounds what an
 * application that stops polling, or spins on Status in memory, can wait (at most 8 ms, once),
 * and a polling application costs the thread ~125 wake-ups a second instead of two per ms (a
 * timer, then the event of the re-armed CQ), each of which takes the core from a spinner.
 * Everything that sleeps or arms a notify arms the CQ first and polls once more (a completion
 * that came before the arming raises no event). All with the NIC lock held. */
#include "vipl_int.h"

#include <time.h>

#define INLINE_RECENT_US 2000
#define REARM_AFTER_US 1000
#define REARM_MAX_US 8000

uint64_t vipl_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The arming decisions need ms precision only: the coarse clock is a plain memory read
 * (vDSO), which matters on the polling path (every Done). */
static uint64_t coarse_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void vipl_note_polling(struct vipl_vi *vi)
{
	vi->inline_us = coarse_us();
	vi->inline_polls++;
}

void vipl_poll_inline(struct vipl_vi *vi)
{
	vipl_note_polling(vi);
	vipl_poll_cq(vi);
}

void vipl_arm(struct vipl_vi *vi)
{
	if (vi->c.cq == NULL)
		return;
	if (vi->unarmed) {
		ibv_req_notify_cq(vi->c.cq, 0);
		vi->unarmed = false;
		vi->o.nic->nunarmed--;
	}
	vipl_poll_cq(vi);
}

/* The connection goes (its CQ with it). */
void vipl_arm_forget(struct vipl_vi *vi)
{
	if (vi->unarmed) {
		vi->unarmed = false;
		vi->o.nic->nunarmed--;
	}
}

static bool needs_thread(const struct vipl_vi *vi)
{
	return vi->sq.notify != NULL || vi->rq.notify != NULL ||
	       (vi->sq.cq != NULL && vi->sq.cq->notify != NULL) ||
	       (vi->rq.cq != NULL && vi->rq.cq->notify != NULL);
}

/* The NIC thread got a completion event for vi's CQ (the event disarmed it). */
void vipl_cq_event(struct vipl_vi *vi)
{
	uint64_t now = coarse_us();
	if (!vi->unarmed && now - vi->inline_us < INLINE_RECENT_US && !needs_thread(vi)) {
		vi->unarmed = true;
		vi->rearm_gap_us = REARM_AFTER_US;
		vi->rearm_us = now + REARM_AFTER_US;
		vi->polls_seen = vi->inline_polls;
		vi->o.nic->nunarmed++;
	} else if (!vi->unarmed) {
		ibv_req_notify_cq(vi->c.cq, 0);
	}
	vipl_poll_cq(vi);
	vipl_rr_thread(vi);
}

/* An unarmed CQ's time came: the application still polls (wait longer) or not (re-arm).
 * The poll count, not the coarse clock (4 ms ticks), tells whether it polled since. */
static bool still_polling(struct vipl_vi *vi, uint64_t now)
{
	if (vi->inline_polls == vi->polls_seen)
		return false;
	vi->polls_seen = vi->inline_polls;
	vi->rearm_gap_us = vi->rearm_gap_us * 2 < REARM_MAX_US ? vi->rearm_gap_us * 2 : REARM_MAX_US;
	vi->rearm_us = now + vi->rearm_gap_us;
	return true;
}

/* The thread's timer: re-arm (and poll) the CQs left unarmed whose time came. */
void vipl_rearm_due(struct vipl_nic *nic, uint64_t *next_ms)
{
	if (nic->nunarmed == 0)
		return;
	uint64_t now = coarse_us();
	for (struct vipl_vi *vi = nic->vis; vi != NULL; vi = vi->next) {
		if (!vi->unarmed)
			continue;
		if (needs_thread(vi) || (now >= vi->rearm_us && !still_polling(vi, now))) {
			vipl_arm(vi);
			vipl_rr_thread(vi);
			continue;
		}
		/* the thread's timer runs on CLOCK_MONOTONIC ms: convert the remaining time */
		uint64_t ms = vipl_now_ms() + (vi->rearm_us - now + 999) / 1000;
		if (*next_ms == 0 || ms < *next_ms)
			*next_ms = ms;
	}
}
