/* power_uniform_floor.c - the uniform_floor policy (power.h): every unit
 * its minimum, then the same number of watts more per GPU for everyone,
 * up to each unit's demand; what no unit wants is spread last over the
 * room up to hi. It ignores classes, priorities and the value of the work: the
 * plain baseline a smarter policy is measured against. */
#include "power.h"
#include "power_policy.h"

#include <math.h>

/* A unit's demand within its range: what it would draw, at least lo. */
static double wanted(const power_unit *u) {
  return u->demand < u->lo ? u->lo : u->demand > u->hi ? u->hi : u->demand;
}

/* The per-GPU cap of u with x watts above its minimum. */
static double raised(const power_unit *u, double x) {
  return fmin(wanted(u), u->lo + x);
}

/* sum n_u raised(u, x): rises with x. */
static double spent(const power_unit *units, size_t n, double x) {
  double sum = 0;
  for (size_t u = 0; u < n; u++)
    sum += units[u].n * raised(&units[u], x);
  return sum;
}

/* The largest raise that fits budget_w, by bisection to the bit: the
 * lower end always fits, so the caps never overshoot the budget. */
static double raise_for(const power_unit *units, size_t n, double budget_w) {
  double lo = 0, hi = 0;
  for (size_t u = 0; u < n; u++)
    hi = fmax(hi, wanted(&units[u]) - units[u].lo);
  if (spent(units, n, hi) <= budget_w)
    return hi;
  for (int k = 0; k < 200; k++) {
    double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi)
      break;
    if (spent(units, n, mid) <= budget_w)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

void power_split_uniform_floor(const power_unit *units, size_t n,
                               double budget_w, double *cap) {
  double x = raise_for(units, n, budget_w);
  for (size_t u = 0; u < n; u++)
    cap[u] = raised(&units[u], x);
  power_spread_rest(units, n, budget_w, cap);
}
