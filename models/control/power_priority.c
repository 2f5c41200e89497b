/* power_priority.c - the priority policy (power.h): every unit its
 * minimum, then inference up to its demand, then training, then the
 * rest, and within a class the workloads of higher priority first; a
 * level the budget cannot satisfy shares what is left in proportion to
 * demand, and the levels after it keep their minimum. */
#include "power.h"
#include "power_policy.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "alloc.h"

/* Scratch for one class: its units compacted, their weights, tops and
 * caps, and where each came from. */
typedef struct class_view {
  power_unit *units;
  double *w, *top, *cap;
  size_t *from, n;
} class_view;

static double wanted(const power_unit *u) {
  return u->demand < u->lo ? u->lo : u->demand > u->hi ? u->hi : u->demand;
}

/* Raises the units of class cls and priority prio from their minimum
 * toward their demand with what is left of the budget; returns what is
 * left after. */
static double serve_level(const power_unit *units, size_t n, int cls,
                          int64_t prio, double left, class_view *v,
                          double *cap) {
  v->n = 0;
  double floor = 0;
  for (size_t u = 0; u < n; u++) {
    if (units[u].cls != cls || units[u].priority != prio)
      continue;
    size_t k = v->n++;
    v->units[k] = units[u];
    v->w[k] = units[u].demand;
    v->top[k] = wanted(&units[u]);
    v->from[k] = u;
    floor += units[u].n * cap[u];
  }
  if (v->n == 0)
    return left;
  power_fill(v->units, v->n, v->w, v->top, floor + left, v->cap);
  double spent = power_total(v->units, v->n, v->cap) - floor;
  for (size_t k = 0; k < v->n; k++)
    cap[v->from[k]] = v->cap[k];
  return left - spent;
}

/* The highest priority of class cls below `below` (INT64_MAX: any);
 * false when none is left. Workloads have few priorities, so the scan
 * per level is cheap. */
static bool next_priority(const power_unit *units, size_t n, int cls,
                          int64_t below, int64_t *prio) {
  bool found = false;
  for (size_t u = 0; u < n; u++)
    if (units[u].cls == cls && units[u].priority < below &&
        (!found || units[u].priority > *prio)) {
      *prio = units[u].priority;
      found = true;
    }
  return found;
}

/* Serves class cls level by level, the highest priority first. */
static double serve_class(const power_unit *units, size_t n, int cls,
                          double left, class_view *v, double *cap) {
  int64_t prio = INT64_MAX;
  while (left > 0 && next_priority(units, n, cls, prio, &prio))
    left = serve_level(units, n, cls, prio, left, v, cap);
  return left;
}

void power_split_priority(const power_unit *units, size_t n, double budget_w,
                          double *cap) {
  for (size_t u = 0; u < n; u++)
    cap[u] = units[u].lo;
  class_view v = {sim_alloc(NULL, (n + 1) * sizeof *v.units),
                  sim_alloc(NULL, (3 * n + 1) * sizeof *v.w),
                  NULL,
                  NULL,
                  sim_alloc(NULL, (n + 1) * sizeof *v.from),
                  0};
  if (v.units != NULL && v.w != NULL && v.from != NULL) {
    v.top = v.w + n;
    v.cap = v.w + 2 * n;
    double left = budget_w - power_total(units, n, cap);
    for (int cls = 0; cls < POWER_NCLASSES && left > 0; cls++)
      left = serve_class(units, n, cls, left, &v, cap);
    power_spread_rest(units, n, budget_w, cap);
  } /* else every minimum: safe */
  sim_free(NULL, v.units);
  sim_free(NULL, v.w);
  sim_free(NULL, v.from);
}
