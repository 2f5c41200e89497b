/* power.c - what the allocation policies share (see power.h): the
 * water-filling, the spreading of what is left, the total. */
#include "power.h"

#include <math.h>
#include <stdlib.h>

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
