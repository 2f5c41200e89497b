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
 * and the power sum over units falls as mu rises: a search on log mu
 * (power_boundary) finds the level that spends the budget. Units that do no measured work
 * (weight, c or activity 0) keep their minimum until the valued ones are
 * served, then share what is left up to demand. */
#include "power.h"
#include "power_policy.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* A unit's clock at level mu and its dynamic power share phi^gamma: the
 * two pow calls, which depend only on the unit's work and power model. */
typedef struct clock_at {
  double raw, phi, dyn;
} clock_at;

static clock_at clock_of(const power_unit *u, double mu) {
  clock_at k;
  k.raw = pow(u->weight * u->c / (mu * u->span * u->activity * u->gamma),
              1 / (u->gamma - u->c));
  k.phi = clamp(k.raw, u->phi_min, 1);
  k.dyn = pow(k.phi, u->gamma);
  return k;
}

/* Unit u's per-GPU cap at its clock k, and its derivative in log mu
 * (where neither the clock nor the cap is clamped, phi ~ mu^-e, so
 * d cap / d log mu = -gamma e (cap - idle)). */
static double cap_at(const power_unit *u, clock_at k, double *slope) {
  double p = u->idle + u->span * u->activity * k.dyn;
  double cap = clamp(p, u->lo, wanted(u));
  double e = 1 / (u->gamma - u->c);
  *slope = k.phi == k.raw && cap == p ? -u->gamma * e * (p - u->idle) : 0;
  return cap;
}

/* Whether two units' clocks are the same function of the level. */
static bool same_clock(const power_unit *a, const power_unit *b) {
  return a->weight == b->weight && a->c == b->c && a->span == b->span &&
         a->activity == b->activity && a->gamma == b->gamma &&
         a->phi_min == b->phi_min && a->idle == b->idle;
}

/* The units a level is found for. Units alike (a service's replicas at
 * one activity, a job's stages) share their clock: like[u] is the first
 * unit like u, and clocks[] holds the firsts' clocks at the level being
 * tried, so each is computed once an evaluation, with the same bits. */
typedef struct level {
  const power_unit *units;
  size_t n;
  size_t *like;     /* NULL: every unit its own */
  clock_at *clocks;
} level;

static clock_at unit_clock(const level *l, size_t u, double mu) {
  if (l->like == NULL)
    return clock_of(&l->units[u], mu);
  if (l->like[u] == u)
    l->clocks[u] = clock_of(&l->units[u], mu);
  return l->clocks[l->like[u]];
}

/* Power of the valued units at level exp(log_mu), the others at their
 * minimum: falls as the level rises. */
static double total_at(const void *ctx, double log_mu, double *slope) {
  const level *l = ctx;
  double mu = exp(log_mu), sum = 0;
  *slope = 0;
  for (size_t u = 0; u < l->n; u++) {
    const power_unit *p = &l->units[u];
    double ds = 0;
    sum += p->n * (valued(p) ? cap_at(p, unit_clock(l, u, mu), &ds) : p->lo);
    *slope += p->n * ds;
  }
  return sum;
}

/* Fills l->like with a hash on the clock inputs (open addressing in a
 * table of twice the units); leaves it NULL when out of memory. */
static void find_alike(level *l) {
  size_t size = 2;
  while (size < 2 * l->n)
    size *= 2;
  size_t *buf = sim_calloc(NULL, l->n + size, sizeof *buf);
  l->clocks = sim_calloc(NULL, l->n + 1, sizeof *l->clocks);
  if (buf == NULL || l->clocks == NULL) {
    sim_free(NULL, buf);
    sim_free(NULL, l->clocks);
    l->clocks = NULL;
    return;
  }
  size_t *slot = buf + l->n; /* unit + 1; 0: empty */
  for (size_t u = 0; u < l->n; u++) {
    const power_unit *p = &l->units[u];
    uint64_t h;
    double key = p->activity + 7 * p->weight + 13 * p->c;
    memcpy(&h, &key, sizeof h);
    h *= 0x9e3779b97f4a7c15ULL;
    size_t i = (size_t)(h >> 32) & (size - 1);
    while (slot[i] != 0 && !same_clock(&l->units[slot[i] - 1], p))
      i = (i + 1) & (size - 1);
    if (slot[i] == 0)
      slot[i] = u + 1;
    buf[u] = slot[i] - 1;
  }
  l->like = buf;
}

static void level_free(level *l) {
  sim_free(NULL, l->like);
  sim_free(NULL, l->clocks);
}

/* The smallest level (the most power) that fits the budget, to the bit
 * of its logarithm. */
static double level_for(const level *l, double budget_w) {
  double lo = -300, hi = 300, slope; /* log mu */
  if (total_at(l, lo, &slope) <= budget_w)
    return exp(lo);
  return exp(power_boundary(total_at, l, budget_w, hi, lo));
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
  level l = {units, n, NULL, NULL};
  find_alike(&l);
  double mu = level_for(&l, budget_w);
  for (size_t u = 0; u < n; u++) {
    double slope;
    cap[u] = valued(&units[u]) ? cap_at(&units[u], unit_clock(&l, u, mu), &slope)
                               : units[u].lo;
  }
  level_free(&l);
  serve_the_rest(units, n, budget_w, cap);
}
