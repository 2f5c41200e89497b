/* engine_follow.c - followers (engine.h, sim_engine_follow): engines a
 * leader brings up to its clock before each new time it comes to, and
 * the run of the events before a time (sim_engine_run_before) with which
 * a follower gets there. Engine layer, beside engine.c, whose run loops
 * call the hook (follow_to, engine__follow: there, so that calls run one
 * way, from this file to engine.c) and whose state it shares through
 * engine_internal.h.
 *
 * Why: a request-level day spends half its time in the services' own
 * events (issue 24). Each service's events can live in an engine of its
 * own, touching only that service, so that they run on several cores
 * between two of the factory's events (sim/core/crew.h). Before the
 * factory's engine runs or drops its first event at a new time t, every
 * follower runs its events before t and reads t; a follower's events at t
 * itself run after the leader's (at the next new time, or through until
 * when the run ends there). So what a follower does depends only on its
 * own events and on the leader's events, never on how the leader's run
 * is cut (budgets, untils) nor on which thread runs it.
 *
 * Invariant: e->passed is the last time the hook brought the followers
 * to (-1 before the first; SIM_TIME_MAX with no hook, so that the run
 * loop's one compare an event never calls it). */
#include "engine_internal.h"

void sim_engine_follow(sim_engine *leader, sim_follow_fn fn, void *ctx) {
  leader->follow = fn;
  leader->follow_ctx = fn != NULL ? ctx : NULL;
  leader->passed = fn != NULL ? -1 : SIM_TIME_MAX;
}

int sim_engine_run_before(sim_engine *e, sim_time t) {
  if (t < e->now)
    return sim_engine_fail(e, SIM_EINVAL,
                           "run: until %lld ns is before now (%lld ns)",
                           (long long)t, (long long)e->now);
  if (t == e->now) /* no event is before now */
    return SIM_OK;
  /* Times are whole nanoseconds: the events before t are those by t - 1. */
  int rc = sim_engine_run(e, t - 1);
  if (rc == SIM_OK)
    e->now = t;
  return rc;
}
