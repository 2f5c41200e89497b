/* engine_fluid.c - fluid progress (docs/ARCHITECTURE.md, fluid mode):
 * remaining work drained at a rate, with the completion event kept in
 * step with the rate. Engine layer, beside engine.c, whose public calls
 * (schedule, cancel, now, fail) are all it uses. */
#include "engine.h"

#include <float.h>
#include <math.h>

/* Relative slack for rounding in the fluid helper. remaining / rate * 1e9
 * carries a few ulps of error, so an exact whole number of nanoseconds may
 * come out a hair above and round up one ns too far; and the work left at
 * the completion time may come out a hair above 0. Both are absorbed by
 * this slack, far below a nanosecond at any time span a run can reach. */
#define FLUID_SLACK (16 * DBL_EPSILON)

/* Without the engine this cannot cancel a completion event still pending
 * from earlier work: callers stop (sim_fluid_stop) before restarting. */
void sim_fluid_start(sim_engine *e, sim_fluid *f, double work) {
  sim_engine_cancel(e, &f->done);
  *f = (sim_fluid){.remaining = work, .rate = 0, .since = sim_engine_now(e)};
}

double sim_fluid_remaining(const sim_fluid *f, sim_time now) {
  /* Divided rather than multiplied by 1e-9, which is inexact. */
  double done = f->rate * ((double)(now - f->since) / 1e9);
  double left = f->remaining - done;
  return left > f->remaining * FLUID_SLACK ? left : 0.0;
}

/* The nanoseconds needed to do work at rate (> 0), rounded up and capped
 * at limit. */
static sim_time fluid_span(double work, double rate, sim_time limit) {
  double ns = work / rate * 1e9;
  ns = ceil(ns - ns * FLUID_SLACK);
  if (!(ns < 0x1p63)) /* also catches inf */
    return limit;
  sim_time t = ns > 0 ? (sim_time)ns : 0;
  return t < limit ? t : limit;
}

int sim_fluid_set_rate(sim_engine *e, sim_fluid *f, double rate, uint32_t kind,
                       uint64_t a, uint64_t b) {
  if (!(rate >= 0) || isinf(rate))
    return sim_engine_fail(e, SIM_EINVAL, "fluid: bad rate %g", rate);
  sim_time now = sim_engine_now(e);
  f->remaining = sim_fluid_remaining(f, now);
  f->since = now;
  f->rate = rate;
  sim_engine_cancel(e, &f->done);
  if (rate == 0)
    return SIM_OK;
  /* Past the end of time the event waits at SIM_TIME_MAX: a nearly
   * stalled job is not an error. */
  sim_time at = now + fluid_span(f->remaining, rate, SIM_TIME_MAX - now);
  int rc = sim_engine_schedule(e, at, kind, a, b, &f->done);
  if (rc != SIM_OK)
    f->rate = 0; /* keep f consistent: no event, no progress */
  return rc;
}

void sim_fluid_stop(sim_engine *e, sim_fluid *f) {
  f->remaining = sim_fluid_remaining(f, sim_engine_now(e));
  f->since = sim_engine_now(e);
  f->rate = 0;
  sim_engine_cancel(e, &f->done);
}
