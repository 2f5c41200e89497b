/* deferral.c - when a flexible job runs (docs/MODELS.md, Scheduler): each policy's plan
 * over a signal, as a pure function of its arguments.
 *
 * A plan's intervals are in time order and do not touch (adjacent run
 * steps are merged); each starts on the grid t0 + k step, and only the
 * last may end off it, where the work runs out. Step k starts at exactly
 * t0 + k * step however it was reached, so merging can compare ends with
 * ==. Counts of steps are doubles: exact to 2^53, and no overflow when a
 * tiny step meets a long span.
 *
 * The window search tries every start on the grid, one exact integral
 * each (O(log rows)): a job's slack is hours and its step minutes, so a
 * few hundred tries. A sliding sum would be O(1) a start, but its
 * rounding would drift from sig_integral's, which prices the plan. */
#include "deferral.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "vec.h"

/* Integrals are differences of running sums, so equal costs can differ
 * by rounding: a later window wins only if cheaper by more than this
 * share of the best cost (ties go to the earliest), and a step at the
 * threshold counts as at it within this share. */
#define TIE_REL 1e-9

/* One job's timing, as defer_plan_make was given it. */
typedef struct job {
  double t0, work, step;
  double horizon; /* the latest end a plan may have */
} job;

/* Appends [start, end) to the plan, merged into the last interval when
 * it continues it. SIM_OK or SIM_ENOMEM (the plan is then unchanged). */
static int plan_push(defer_plan *p, double start, double end) {
  if (p->n > 0 && p->runs[p->n - 1].end_s == start) {
    p->runs[p->n - 1].end_s = end;
    return SIM_OK;
  }
  if (sim_vec_reserve(p->alloc, &p->runs, &p->cap, p->n + 1, sizeof *p->runs) !=
      SIM_OK)
    return SIM_ENOMEM;
  p->runs[p->n++] = (defer_interval){.start_s = start, .end_s = end};
  return SIM_OK;
}

/* The whole steps the job may wait in all and still end by the horizon.
 * The check after the floor catches a quotient rounded up, so a plan
 * built from this count never ends past the horizon. */
static double spare_steps(const job *j) {
  double k = floor((j->horizon - j->t0 - j->work) / j->step);
  while (k > 0 && j->t0 + k * j->step + j->work > j->horizon)
    k--;
  return fmax(k, 0);
}

static int plan_window(const sig_series *s, const job *j, defer_plan *out) {
  double spare = spare_steps(j);
  double best_start = j->t0;
  double best = sig_integral(s, j->t0, j->t0 + j->work);
  for (double k = 1; k <= spare; k++) {
    double start = j->t0 + k * j->step;
    double cost = sig_integral(s, start, start + j->work);
    if (cost < best - TIE_REL * fabs(best)) {
      best = cost;
      best_start = start;
    }
  }
  return plan_push(out, best_start, best_start + j->work);
}

/* True if the signal's mean over [now, now + len) is at or below the
 * threshold, to rounding; the comparison is of integrals, so no division. */
static bool cheap(const sig_series *s, double now, double len,
                  double threshold) {
  double limit = threshold * len;
  return sig_integral(s, now, now + len) <= limit + TIE_REL * fabs(limit);
}

/* Walks the step grid: a dear step is skipped while pauses remain, any
 * other step runs. The last run is cut where the work runs out, and kept
 * inside the horizon against the rounding of now + left. */
static int plan_threshold(const sig_series *s, const job *j, double threshold,
                          defer_plan *out) {
  double pauses = spare_steps(j);
  double done = 0; /* steps run */
  for (double k = 0;; k++) {
    double now = j->t0 + k * j->step;
    double left = j->work - done * j->step;
    if (pauses > 0 && !cheap(s, now, fmin(left, j->step), threshold)) {
      pauses--;
      continue;
    }
    if (left <= j->step)
      return plan_push(out, now, fmin(now + left, j->horizon));
    int rc = plan_push(out, now, j->t0 + (k + 1) * j->step);
    if (rc != SIM_OK)
      return rc;
    done++;
  }
}

static int check_args(defer_policy policy, double threshold, double t0,
                      double work, double deadline, double step,
                      sim_error *err) {
  if (!isfinite(t0) || !isfinite(deadline))
    return sim_error_set(err, SIM_EINVAL,
                         "deferral: t0 %g s and deadline %g s must be finite",
                         t0, deadline);
  if (!(work > 0) || !isfinite(work) || !(step > 0) || !isfinite(step))
    return sim_error_set(err, SIM_EINVAL,
                         "deferral: work %g s and step %g s must be finite "
                         "and > 0",
                         work, step);
  if (policy != DEFER_NONE && policy != DEFER_THRESHOLD &&
      policy != DEFER_WINDOW)
    return sim_error_set(err, SIM_EINVAL, "deferral: unknown policy %d",
                         (int)policy);
  if (policy == DEFER_THRESHOLD && isnan(threshold))
    return sim_error_set(err, SIM_EINVAL, "deferral: the threshold is NaN");
  if (policy != DEFER_NONE && deadline < t0 + work)
    return sim_error_set(err, SIM_EINVAL,
                         "deferral: the deadline %.17g s is before t0 + work "
                         "= %.17g s; plan the job with DEFER_NONE",
                         deadline, t0 + work);
  return SIM_OK;
}

int defer_plan_make(const sig_series *s, defer_policy policy, double threshold,
                    double t0_s, double work_s, double deadline_s,
                    double step_s, const sim_allocator *alloc, defer_plan *out,
                    sim_error *err) {
  assert(s != NULL && out != NULL);
  *out = (defer_plan){.alloc = alloc};
  int rc = check_args(policy, threshold, t0_s, work_s, deadline_s, step_s, err);
  if (rc != SIM_OK)
    return rc;
  /* Past the signal's data the forecast knows nothing: plan up to it. */
  double horizon = fmin(deadline_s, fmax(sig_end(s), t0_s + work_s));
  job j = {.t0 = t0_s, .work = work_s, .step = step_s, .horizon = horizon};
  if (policy == DEFER_WINDOW)
    rc = plan_window(s, &j, out);
  else if (policy == DEFER_THRESHOLD)
    rc = plan_threshold(s, &j, threshold, out);
  else
    rc = plan_push(out, t0_s, t0_s + work_s);
  if (rc != SIM_OK) {
    defer_plan_fini(out);
    return sim_error_set(err, rc, "deferral: out of memory for a plan");
  }
  return SIM_OK;
}

void defer_plan_fini(defer_plan *p) {
  if (p == NULL)
    return;
  sim_free(p->alloc, p->runs);
  *p = (defer_plan){0};
}

double defer_plan_cost(const sig_series *s, const defer_plan *p) {
  double cost = 0;
  for (size_t i = 0; i < p->n; i++)
    cost += sig_integral(s, p->runs[i].start_s, p->runs[i].end_s);
  return cost;
}

double defer_plan_end(const defer_plan *p) {
  return p->n > 0 ? p->runs[p->n - 1].end_s : NAN;
}
