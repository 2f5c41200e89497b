/* deferral.h - grid-aware timing of flexible training jobs (docs/MODELS.md,
 * Scheduler): when a job that may wait should run, given a signal (grid
 * carbon intensity or price) and its deadline. Pure functions over a
 * sig_series; the factory applies the plan (models/work.c).
 *
 * A job needs `work_s` seconds of running (at full speed) and must finish
 * by `deadline_s`; it is submitted at `t0_s`. A plan is a list of run
 * intervals [start, end) inside [t0, deadline], summing to work_s.
 *
 * - DEFER_NONE: run at once, [t0, t0 + work), whatever the deadline.
 * - DEFER_THRESHOLD: run whenever the signal is at or below `threshold`,
 *   pause above it, but never let the slack (deadline - now - work left)
 *   go below zero: once a pause would take it below zero the job runs to
 *   its end. Time is cut into whole steps of `step_s` from t0 (the job
 *   pauses at a checkpoint; the step stands for the checkpoint interval),
 *   and a step runs if the signal's mean over it (over its first
 *   work-left seconds for the last) is <= threshold, to 1e-9 of it (the
 *   integrals' rounding).
 * - DEFER_WINDOW: the contiguous window [s, s + work) inside [t0,
 *   deadline] with the least integral of the signal (a perfect forecast
 *   of the series), starts searched on the grid t0 + k step_s, ties (to
 *   1e-9 of the cost, the integrals' rounding) to the earliest. It may
 *   cost more than DEFER_THRESHOLD's plan, which need not be contiguous.
 *
 * The deferring policies plan only where the signal has data: past
 * sig_end (a file without repeat) the deadline is taken as sig_end, but
 * never earlier than t0 + work_s (the job then runs at once).
 *
 * The cost of a plan is the integral of the signal over its intervals
 * (times a constant power, the job's CO2 or cost). */
#ifndef MODELS_DEFERRAL_H
#define MODELS_DEFERRAL_H
#include <stddef.h>

#include "alloc.h"
#include "err.h"
#include "sig.h"

typedef enum defer_policy {
  DEFER_NONE,
  DEFER_THRESHOLD,
  DEFER_WINDOW
} defer_policy;

typedef struct defer_interval {
  double start_s, end_s;
} defer_interval;

/* A plan: up to cap intervals in order, their lengths summing to work_s
 * (to rounding). */
typedef struct defer_plan {
  const sim_allocator *alloc; /* what runs lives on; NULL: the C library */
  defer_interval *runs;
  size_t n, cap;
} defer_plan;

/* Plans a job into *out, which the caller owns and frees with
 * defer_plan_fini. SIM_OK; SIM_EINVAL for work_s <= 0, step_s <= 0, a
 * non-finite t0, work, deadline or step, an unknown policy, a NaN
 * threshold for DEFER_THRESHOLD, or a deferring policy given a deadline
 * earlier than t0 + work_s (the job cannot make it even at once: plan it
 * with DEFER_NONE, which ignores the deadline and the threshold);
 * SIM_ENOMEM. The plan allocates on alloc (NULL means the C library),
 * which must outlive it. On failure *out is empty and needs no free. */
int defer_plan_make(const sig_series *s, defer_policy policy, double threshold,
                    double t0_s, double work_s, double deadline_s,
                    double step_s, const sim_allocator *alloc, defer_plan *out,
                    sim_error *err);

/* Frees the intervals and empties the plan; NULL does nothing. */
void defer_plan_fini(defer_plan *p);

/* The integral of the signal over the plan's intervals. */
double defer_plan_cost(const sig_series *s, const defer_plan *p);

/* When the plan's work is done: the end of its last interval (NAN for an
 * empty plan). */
double defer_plan_end(const defer_plan *p);

#endif
