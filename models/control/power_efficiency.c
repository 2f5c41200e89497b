/* power_efficiency.c - the efficiency policy (power.h): water-filling on
 * marginal useful work per watt. With speed phi^c and power idle + span a
 * phi^gamma, a unit's marginal work per watt at clock phi is
 *
 *   m(phi) = w c phi^(c-1) / (span a gamma phi^(gamma-1)),
 *
 * falling in phi (gamma > 1 >= c), so the clock where m = mu is
 *
 *   phi(mu) = (w c / (mu span a gamma))^(1 / (gamma - c)),
 *
 * and the power sum over units falls as mu rises: bisection on log mu
 * finds the level that spends the budget. Units that do no measured work
 * (weight, c or activity 0) keep their minimum until the valued ones are
 * served, then share what is left up to demand. */
#include "power.h"
#include "power_policy.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "alloc.h"

static double clamp(double x, double lo, double hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

static double wanted(const power_unit *u) {
  return clamp(u->demand, u->lo, u->hi);
}

static bool valued(const power_unit *u) {
  return u->weight > 0 && u->c > 0 && u->activity > 0 && u->span > 0 &&
         u->gamma > u->c;
}

/* The per-GPU cap of unit u at level mu, and its derivative in log mu
 * (where neither the clock nor the cap is clamped, phi ~ mu^-e, so
 * d cap / d log mu = -gamma e (cap - idle)). */
static double cap_at(const power_unit *u, double mu, double *slope) {
  double e = 1 / (u->gamma - u->c);
  double raw =
      pow(u->weight * u->c / (mu * u->span * u->activity * u->gamma), e);
  double phi = clamp(raw, u->phi_min, 1);
  double p = u->idle + u->span * u->activity * pow(phi, u->gamma);
  double cap = clamp(p, u->lo, wanted(u));
  *slope = phi == raw && cap == p ? -u->gamma * e * (p - u->idle) : 0;
  return cap;
}

/* The units a level is found for. */
typedef struct level {
  const power_unit *units;
  size_t n;
} level;

/* Power of the valued units at level exp(log_mu), the others at their
 * minimum: falls as the level rises. */
static double total_at(const void *ctx, double log_mu, double *slope) {
  const level *l = ctx;
  double mu = exp(log_mu), sum = 0;
  *slope = 0;
  for (size_t u = 0; u < l->n; u++) {
    const power_unit *p = &l->units[u];
    double ds = 0;
    sum += p->n * (valued(p) ? cap_at(p, mu, &ds) : p->lo);
    *slope += p->n * ds;
  }
  return sum;
}

/* The smallest level (the most power) that fits the budget, to the bit
 * of its logarithm. */
static double level_for(const power_unit *units, size_t n, double budget_w) {
  level l = {units, n};
  double lo = -300, hi = 300, slope; /* log mu */
  if (total_at(&l, lo, &slope) <= budget_w)
    return exp(lo);
  return exp(power_boundary(total_at, &l, budget_w, hi, lo));
}

/* What is left goes to the units without measured work, up to their
 * demand and in proportion to it, then over everyone's room. power_fill
 * puts weight-0 units at lo, so the valued ones count at lo in the fill,
 * their power above it comes off the budget, and only the rest's caps are
 * taken from it. */
static void serve_the_rest(const power_unit *units, size_t n, double budget_w,
                           double *cap) {
  double *buf = sim_calloc(NULL, 3 * n + 1, sizeof *buf);
  if (buf != NULL) {
    double *w = buf, *top = buf + n, *next = buf + 2 * n, above = 0;
    for (size_t u = 0; u < n; u++) {
      bool rest = !valued(&units[u]);
      w[u] = rest ? units[u].demand : 0;
      top[u] = rest ? wanted(&units[u]) : cap[u];
      if (!rest)
        above += units[u].n * (cap[u] - units[u].lo);
    }
    power_fill(units, n, w, top, budget_w - above, next);
    for (size_t u = 0; u < n; u++)
      if (!valued(&units[u]))
        cap[u] = next[u];
    sim_free(NULL, buf);
  }
  power_spread_rest(units, n, budget_w, cap);
}

void power_split_efficiency(const power_unit *units, size_t n, double budget_w,
                            double *cap) {
  double mu = level_for(units, n, budget_w);
  for (size_t u = 0; u < n; u++) {
    double slope;
    cap[u] = valued(&units[u]) ? cap_at(&units[u], mu, &slope) : units[u].lo;
  }
  serve_the_rest(units, n, budget_w, cap);
}
