/* power_fixture.c - what the power policies' tests share (power_fixture.h). */
#include "power_fixture.h"

#include <math.h>
#include <string.h>

#include "test_util.h"

/* An H100-like unit: idle 70 W, TDP 700 W, caps 200-700 W. */
power_unit unit(uint32_t n, double activity, int cls, double c) {
  double idle = 70, span = 630;
  return (power_unit){.n = n,
                      .lo = 200,
                      .hi = 700,
                      .demand = idle + span * activity,
                      .cls = cls,
                      .weight = cls == POWER_OTHER ? 0 : 1,
                      .c = c,
                      .idle = idle,
                      .span = span,
                      .activity = activity,
                      .gamma = 2.5,
                      .phi_min = 0.3};
}

/* A small LCG: the fleets are the same on every machine. */
double uniform(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0;
}

size_t random_fleet(uint64_t *seed, power_unit *u, double *budget) {
  size_t n = 1 + (size_t)(uniform(seed) * (MAXU - 1));
  double floor = 0, top = 0;
  for (size_t k = 0; k < n; k++) {
    /* Drawn one statement each: a call's arguments are evaluated in an
     * unspecified order (GCC last to first, clang first to last), and
     * the fleet is to be the same whatever the compiler. GCC's order,
     * which the counts in test_power.c were taken with. */
    double c = uniform(seed);
    int cls = (int)(uniform(seed) * POWER_NCLASSES);
    double activity = uniform(seed);
    uint32_t gpus = 1 + (uint32_t)(uniform(seed) * 72);
    u[k] = unit(gpus, activity, cls, c);
    u[k].hi = 300 + 400 * uniform(seed); /* a rack's room may bind */
    floor += u[k].n * u[k].lo;
    top += u[k].n * u[k].hi;
  }
  *budget = floor + uniform(seed) * 1.2 * (top - floor);
  return n;
}

/* The efficiency policy's power sum at level exp(x), written out apart
 * from the policy (power_efficiency.c's model: the same expressions). */
double efficiency_total(const power_unit *u, size_t n, double x) {
  double mu = exp(x), sum = 0;
  for (size_t k = 0; k < n; k++) {
    const power_unit *p = &u[k];
    double want = fmin(fmax(p->demand, p->lo), p->hi), cap = p->lo;
    if (p->weight > 0 && p->c > 0 && p->activity > 0 && p->span > 0 &&
        p->gamma > p->c) {
      double raw = pow(p->weight * p->c /
                           (mu * p->span * p->activity * p->gamma),
                       1 / (p->gamma - p->c));
      double phi = raw < p->phi_min ? p->phi_min : raw > 1 ? 1 : raw;
      double w = p->idle + p->span * p->activity * pow(phi, p->gamma);
      cap = w < p->lo ? p->lo : w > want ? want : w;
    }
    sum += p->n * cap;
  }
  return sum;
}

/* The level by plain bisection on log mu over [-300, 300], to the bit. */
double efficiency_bisect(const power_unit *u, size_t n, double budget) {
  double good = 300, bad = -300;
  if (efficiency_total(u, n, bad) <= budget)
    return bad;
  if (efficiency_total(u, n, good) > budget)
    return good;
  for (double mid = 0; mid != good && mid != bad; mid = 0.5 * (good + bad))
    if (efficiency_total(u, n, mid) <= budget)
      good = mid;
    else
      bad = mid;
  return good;
}

/* A budget drawn between the units' floor and 1.2 times their top. */
double drawn_budget(uint64_t *seed, const power_unit *u, size_t n) {
  double floor = 0, top = 0;
  for (size_t k = 0; k < n; k++) {
    floor += u[k].n * u[k].lo;
    top += u[k].n * u[k].hi;
  }
  return floor + uniform(seed) * 1.2 * (top - floor);
}

/* A random fleet whose units come in classes alike (replicas of a
 * service), with a budget drawn for it. */
size_t classed_fleet(uint64_t *seed, power_unit *u, double *budget) {
  size_t n = random_fleet(seed, u, budget);
  for (size_t k = 1; k < n; k++)
    if (uniform(seed) < 0.6)
      u[k] = u[(size_t)(uniform(seed) * (double)k)];
  *budget = drawn_budget(seed, u, n);
  return n;
}

/* The fill's sum at lambda unit by unit, as the docs define it. */
static double plain_filled(const power_unit *u, size_t n, const double *w,
                           const double *top, double lambda) {
  double sum = 0;
  for (size_t k = 0; k < n; k++) {
    double x = lambda * w[k];
    sum += u[k].n * (x < u[k].lo ? u[k].lo : x > top[k] ? top[k] : x);
  }
  return sum;
}

/* The fill's lambda by plain bisection over the doubles of [0, hi]: the
 * largest whose sum fits the budget (0 if none does, hi if hi does). */
double plain_fill_lambda(const power_unit *u, size_t n,
                                const double *w, const double *top,
                                double budget) {
  double good = 0, bad = 0;
  for (size_t k = 0; k < n; k++)
    if (w[k] > 0)
      bad = fmax(bad, top[k] / w[k]);
  if (plain_filled(u, n, w, top, bad) <= budget)
    return bad;
  for (;;) {
    double mid = good + (bad - good) / 2;
    if (mid == good || mid == bad)
      return good;
    *(plain_filled(u, n, w, top, mid) <= budget ? &good : &bad) = mid;
  }
}

void assert_fill_caps(const char *tag, double x, const power_unit *u, size_t n,
                      const double *w, const double *top, const double *cap,
                      double lambda) {
  for (size_t r = 0; r < n; r++) {
    double c = lambda * w[r];
    double want = c < u[r].lo ? u[r].lo : c > top[r] ? top[r] : c;
    if (memcmp(&cap[r], &want, sizeof want) != 0)
      fail_msg("%s %g, run %zu: cap %.17g, bisection's %.17g", tag, x, r,
               cap[r], want);
  }
}
