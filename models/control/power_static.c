/* power_static.c - the two simplest policies, static and proportional
 * (see power.h). */
#include <math.h>
#include <stdlib.h>

#include "alloc.h"
#include "power.h"
#include "power_policy.h"

static double clamp(double x, double lo, double hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

/* A unit's demand within its range: what it would draw, at least lo. */
static double wanted(const power_unit *u) {
  return clamp(u->demand, u->lo, u->hi);
}

/* static: the same cap for every GPU (less where a rack's room is
 * smaller). */
void power_split_static(const power_unit *units, size_t n, double budget_w,
                        double *cap) {
  double *w = sim_alloc(NULL, (2 * n + 1) * sizeof *w), *top = w + n;
  if (w == NULL) { /* fall back to every minimum: safe under any budget */
    for (size_t u = 0; u < n; u++)
      cap[u] = units[u].lo;
    return;
  }
  for (size_t u = 0; u < n; u++) {
    w[u] = 1;
    top[u] = units[u].hi;
  }
  power_fill(units, n, w, top, budget_w, cap);
  sim_free(NULL, w);
}

/* proportional: caps in proportion to demand up to it; then what no
 * unit wants, spread over the room left. */
void power_split_proportional(const power_unit *units, size_t n,
                              double budget_w, double *cap) {
  double *w = sim_alloc(NULL, (2 * n + 1) * sizeof *w), *top = w + n;
  if (w == NULL) {
    for (size_t u = 0; u < n; u++)
      cap[u] = units[u].lo;
    return;
  }
  for (size_t u = 0; u < n; u++) {
    w[u] = units[u].demand;
    top[u] = wanted(&units[u]);
  }
  power_fill(units, n, w, top, budget_w, cap);
  power_spread_rest(units, n, budget_w, cap);
  sim_free(NULL, w);
}
