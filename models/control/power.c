/* power.c - what the allocation policies share (see power.h): the
 * water-filling, the spreading of what is left, the total. */
#include "power.h"

#include <math.h>
#include <stdbool.h>
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

/* Whether no double lies strictly between a and b. */
static bool adjacent(double a, double b) {
  double mid = 0.5 * (a + b);
  return mid == a || mid == b;
}

/* Where to evaluate next in the bracket [good, bad] (dir: the sign of
 * bad - good), after f(x) - target = fx with slope f'(x): Newton's
 * estimate of the crossing, carried past it by blur (how far the rounding
 * of f can move the crossing) so that the point lands on the other side
 * and the bracket closes from both ends. An estimate just past an end is
 * pulled in to a blur inside it; NaN when there is none to trust (a flat
 * f, or an estimate far outside the bracket). */
static double aim(double x, double fx, double slope, double blur, double good,
                  double bad, double dir) {
  double r = x - fx / slope + (fx <= 0 ? blur : -blur) * dir;
  double width = fabs(bad - good), in = fmin(blur, 0.5 * width);
  double past_good = (good - r) * dir, past_bad = (r - bad) * dir;
  if (!isfinite(r) || past_good > width || past_bad > width)
    return NAN;
  if (past_good >= 0)
    return good + dir * in;
  if (past_bad >= 0)
    return bad - dir * in;
  return r;
}

static bool inside(double x, double good, double bad, double dir) {
  return (x - good) * dir > 0 && (bad - x) * dir > 0;
}

double power_boundary(power_fn f, const void *ctx, double target, double good,
                      double bad) {
  double dir = bad > good ? 1 : -1, x = good;
  double width = fabs(bad - good);
  int stalled = 0, aimed_from = 0; /* 0: x is a midpoint */
  for (int k = 0; k < 400 && !adjacent(good, bad); k++) {
    double slope, fx = f(ctx, x, &slope) - target;
    int side = fx <= 0 ? -1 : 1;
    if (k == 0 && side > 0)
      break; /* f(good) above target: bisection would never move good */
    if (side < 0)
      good = x;
    else
      bad = x;
    double was = width;
    width = fabs(bad - good);
    stalled = width <= 0.5 * was ? 0 : stalled + 1;
    /* How far the rounding of f can move the crossing; when the last aim
     * fell short (f curves away from its tangent), a whole step more. */
    double blur = 0x1p-52 * (fabs(target) + fabs(fx)) / fabs(slope);
    if (side == aimed_from)
      blur += fabs(fx / slope);
    x = aim(x, fx, slope, blur, good, bad, dir);
    aimed_from = side;
    if (stalled >= 2 || !inside(x, good, bad, dir)) {
      x = 0.5 * (good + bad);
      stalled = aimed_from = 0;
    }
  }
  return good;
}

/* The inputs of a water-filling. */
typedef struct fill {
  const power_unit *units;
  size_t n;
  const double *w, *top;
} fill;

/* sum n_u clamp(lambda w_u, lo_u, top_u): rises with lambda, by the
 * weights of the units between their bounds. */
static double filled(const void *ctx, double lambda, double *slope) {
  const fill *fl = ctx;
  double sum = 0;
  *slope = 0;
  for (size_t u = 0; u < fl->n; u++) {
    const power_unit *p = &fl->units[u];
    double x = lambda * fl->w[u];
    if (x > p->lo && x < fl->top[u])
      *slope += p->n * fl->w[u];
    sum += p->n * clamp(x, p->lo, fl->top[u]);
  }
  return sum;
}

/* The largest lambda that spends no more than the budget, so the caps
 * never overshoot it. */
void power_fill(const power_unit *units, size_t n, const double *w,
                const double *top, double budget_w, double *cap) {
  fill fl = {units, n, w, top};
  double hi = 0;
  for (size_t u = 0; u < n; u++)
    if (w[u] > 0)
      hi = fmax(hi, top[u] / w[u]);
  double lo = hi, slope;
  if (filled(&fl, hi, &slope) > budget_w)
    lo = power_boundary(filled, &fl, budget_w, 0, hi);
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
