/* power.c - the registry of allocation policies, the water-filling they
 * share, and the two simplest: static and proportional (see power.h). */
#include "power.h"

#include <math.h>
#include <stdlib.h>

#include "alloc.h"
#include "power_policy.h"

/* The registry, from POWER_POLICY_MAP (power_policy.h). */
static const power_policy_ops policies[POWER_NPOLICIES] = {
#define XX(e, name, fn) {#name, fn},
    POWER_POLICY_MAP(XX)
#undef XX
};

const char *const power_policy_names[] = {
#define XX(e, name, fn) #name,
    POWER_POLICY_MAP(XX)
#undef XX
        NULL};

const power_policy_ops *power_policy_by_index(int index) {
  return index >= 0 && index < POWER_NPOLICIES ? &policies[index] : NULL;
}

double power_total(const power_unit *units, size_t n, const double *cap) {
  double sum = 0;
  for (size_t u = 0; u < n; u++)
    sum += units[u].n * cap[u];
  return sum;
}

static double clamp(double x, double lo, double hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

/* sum n_u clamp(lambda w_u, lo_u, top_u): rises with lambda. */
static double filled(const power_unit *units, size_t n, const double *w,
                     const double *top, double lambda) {
  double sum = 0;
  for (size_t u = 0; u < n; u++)
    sum += units[u].n * clamp(lambda * w[u], units[u].lo, top[u]);
  return sum;
}

/* Bisection to the bit: the lower end always spends no more than the
 * budget, so the caps never overshoot it. */
void power_fill(const power_unit *units, size_t n, const double *w,
                const double *top, double budget_w, double *cap) {
  double hi = 0;
  for (size_t u = 0; u < n; u++)
    if (w[u] > 0)
      hi = fmax(hi, top[u] / w[u]);
  double lo = 0;
  if (filled(units, n, w, top, hi) <= budget_w)
    lo = hi;
  for (int k = 0; k < 200 && lo < hi; k++) {
    double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi)
      break;
    if (filled(units, n, w, top, mid) <= budget_w)
      lo = mid;
    else
      hi = mid;
  }
  for (size_t u = 0; u < n; u++)
    cap[u] = clamp(lo * w[u], units[u].lo, top[u]);
}

void power_spread_rest(const power_unit *units, size_t n, double budget_w,
                       double *cap) {
  double left = budget_w - power_total(units, n, cap), room = 0;
  for (size_t u = 0; u < n; u++)
    room += units[u].n * (units[u].hi - cap[u]);
  if (!(left > 0) || !(room > 0))
    return;
  /* A hair under the exact share, so rounding never spends more than the
   * budget. */
  double share = fmin(1, left / room) * (1 - 1e-12);
  for (size_t u = 0; u < n; u++)
    cap[u] = fmin(units[u].hi, cap[u] + share * (units[u].hi - cap[u]));
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
