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

/* Whether pow(b, e) is surely above 1 without calling it: b at least
 * 1 + 2^-40 and e at least 2^-10 put the exact power 2^-50 (4 ULP) or
 * more above 1, beyond the error of any libm's pow (glibc's: 0.52 ULP).
 * A clock that clamps at 1 (three in four at request level, where lightly
 * loaded replicas want more than full speed) then skips its pow. */
static bool surely_above_one(double b, double e) {
  return b >= 1 + 0x1p-40 && e >= 0x1p-10;
}

static clock_at clock_of(const power_unit *u, double mu) {
  clock_at k;
  double b = u->weight * u->c / (mu * u->span * u->activity * u->gamma);
  double e = 1 / (u->gamma - u->c);
  /* Any raw above 1 clamps to phi = 1 and leaves phi != raw, as pow's. */
  k.raw = surely_above_one(b, e) ? INFINITY : pow(b, e);
  k.phi = clamp(k.raw, u->phi_min, 1);
  k.dyn = k.phi == 1 ? 1 : pow(k.phi, u->gamma); /* pow(1, y) is 1 exactly */
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

/* The units a level is found for, as structure of arrays. Units alike in
 * their clock inputs (a service's replicas at one activity, a job's
 * stages) form a class, whose uncapped power per GPU p and slope in
 * log mu are computed once an evaluation, with the bits cap_at gives;
 * each unit then only clamps p to its own range. Class 0 stands for the
 * units without measured work: p = -inf, so the clamp gives their lo and
 * the slope 0, as cap_at's callers do. */
typedef struct level {
  const power_unit *units;
  size_t n, nclass;
  size_t *cls;   /* per unit: its class; NULL (out of memory): none */
  double *count, *lo, *want; /* per unit */
  size_t *rep;   /* per class: its first unit */
  double *p, *ds; /* per class, at the level last tried */
} level;

/* Class k's power per GPU at level mu and its slope where nothing is
 * clamped: cap_at's expressions, so the bits are the same. */
static void class_at(level *l, size_t k, double mu) {
  const power_unit *u = &l->units[l->rep[k]];
  clock_at c = clock_of(u, mu);
  double p = u->idle + u->span * u->activity * c.dyn;
  double e = 1 / (u->gamma - u->c);
  l->p[k] = p;
  l->ds[k] = c.phi == c.raw ? -u->gamma * e * (p - u->idle) : 0;
}

/* Unit u's cap and slope at level mu, one unit at a time (no classes). */
static double unit_at(const power_unit *p, double mu, double *ds) {
  *ds = 0;
  return valued(p) ? cap_at(p, clock_of(p, mu), ds) : p->lo;
}

/* Power of the valued units at level exp(log_mu), the others at their
 * minimum: falls as the level rises. */
static double total_at(const void *ctx, double log_mu, double *slope) {
  level *l = (level *)ctx;
  double mu = exp(log_mu), sum = 0, sl = 0;
  if (l->cls == NULL) {
    for (size_t u = 0; u < l->n; u++) {
      double ds, cap = unit_at(&l->units[u], mu, &ds);
      sum += l->units[u].n * cap;
      sl += l->units[u].n * ds;
    }
    *slope = sl;
    return sum;
  }
  for (size_t k = 1; k < l->nclass; k++)
    class_at(l, k, mu);
  for (size_t u = 0; u < l->n; u++) {
    double p = l->p[l->cls[u]];
    double cap = clamp(p, l->lo[u], l->want[u]);
    sum += l->count[u] * cap;
    sl += l->count[u] * (cap == p ? l->ds[l->cls[u]] : 0);
  }
  *slope = sl;
  return sum;
}

/* Room for the arrays of n units (in one block); false when out of
 * memory. */
static bool level_alloc(level *l, size_t n) {
  double *d = sim_calloc(NULL, 5 * n + 3, sizeof *d);
  size_t *z = sim_calloc(NULL, 2 * n + 2, sizeof *z);
  if (d == NULL || z == NULL) {
    sim_free(NULL, d);
    sim_free(NULL, z);
    return false;
  }
  l->count = d, l->lo = d + n, l->want = d + 2 * n;
  l->p = d + 3 * n, l->ds = d + 4 * n + 1;
  l->cls = z, l->rep = z + n;
  return true;
}

/* The class of unit u through a hash on the clock inputs (open
 * addressing in slot[], size a power of two; an entry is a class + 1,
 * 0 empty). */
static size_t class_of(level *l, size_t *slot, size_t size, size_t u) {
  const power_unit *p = &l->units[u];
  uint64_t h;
  double key = p->activity + 7 * p->weight + 13 * p->c;
  memcpy(&h, &key, sizeof h);
  h *= 0x9e3779b97f4a7c15ULL;
  size_t i = (size_t)(h >> 32) & (size - 1);
  while (slot[i] != 0 && !same_clock(&l->units[l->rep[slot[i] - 1]], p))
    i = (i + 1) & (size - 1);
  if (slot[i] == 0) {
    l->rep[l->nclass] = u;
    slot[i] = ++l->nclass;
  }
  return slot[i] - 1;
}

/* Fills the level's arrays and classes; leaves l->cls NULL (one unit at
 * a time) when out of memory. */
static void level_init(level *l) {
  size_t size = 2;
  while (size < 2 * l->n)
    size *= 2;
  size_t *slot = sim_calloc(NULL, size, sizeof *slot);
  if (slot == NULL || !level_alloc(l, l->n)) {
    sim_free(NULL, slot);
    l->cls = NULL;
    return;
  }
  l->nclass = 1;
  l->p[0] = -INFINITY;
  for (size_t u = 0; u < l->n; u++) {
    const power_unit *p = &l->units[u];
    l->count[u] = p->n;
    l->lo[u] = p->lo;
    l->want[u] = wanted(p);
    l->cls[u] = valued(p) ? class_of(l, slot, size, u) : 0;
  }
  sim_free(NULL, slot);
}

static void level_free(level *l) {
  if (l->cls == NULL)
    return;
  sim_free(NULL, l->count);
  sim_free(NULL, l->cls);
}

/* The bounds of the search on log mu: beyond them every unit is at an
 * end of its range. */
#define LEVEL_LO (-300.0)
#define LEVEL_HI 300.0

/* The smallest level (the most power) that fits the budget, to the bit
 * of its logarithm, searched from the whole range. */
static double level_cold(level *l, double budget_w) {
  double slope;
  if (total_at(l, LEVEL_LO, &slope) <= budget_w)
    return LEVEL_LO;
  return power_boundary(total_at, l, budget_w, LEVEL_HI, LEVEL_LO);
}

/* The level between a good end g and a bad end b of the range, where
 * total_at less the budget is fg <= 0 and fb > 0: searched from the
 * secant's crossing (power_boundary_from), both ends being known. */
static double level_between(level *l, double budget_w, double g, double fg,
                            double b, double fb) {
  double x = g + (b - g) * (fg / (fg - fb));
  return power_boundary_from(total_at, l, budget_w, g, b, x);
}

/* The same level searched from x, last period's: a step past Newton's
 * estimate of the crossing, growing fourfold until the budget is crossed,
 * brackets it, and the search closes the bracket. total_at is monotone,
 * so the crossing is unique: the answer is level_cold's, bit for bit,
 * whatever x is (tests/control/test_power.c holds it to it). At a bound
 * of the range the answer is level_cold's there too: LEVEL_LO if even it
 * fits, LEVEL_HI if even it does not. */
static double level_warm(level *l, double budget_w, double x) {
  double slope, fx = total_at(l, x, &slope) - budget_w;
  bool good = fx <= 0;
  double dir = good ? -1 : 1, end = good ? LEVEL_LO : LEVEL_HI;
  double step = slope != 0 ? 2 * fabs(fx / slope) : 1;
  step = fmax(step, 16 * fabs(nextafter(x, end) - x));
  for (;;) {
    double y = (end - x) * dir <= step ? end : x + dir * step, sy;
    double fy = total_at(l, y, &sy) - budget_w;
    if ((fy <= 0) != good)
      return good ? level_between(l, budget_w, x, fx, y, fy)
                  : level_between(l, budget_w, y, fy, x, fx);
    if (y == end)
      return end;
    x = y;
    fx = fy;
    step = isfinite(step) && step < 1e3 ? 4 * step : 1e3;
  }
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

/* Each unit's cap at level exp(log_mu): its class's power clamped to its
 * range (cap_at's result, bit for bit), or cap_at itself without
 * classes. */
static void caps_at(level *l, double log_mu, double *cap) {
  double ds;
  if (l->cls == NULL) {
    for (size_t u = 0; u < l->n; u++)
      cap[u] = unit_at(&l->units[u], exp(log_mu), &ds);
    return;
  }
  total_at(l, log_mu, &ds);
  for (size_t u = 0; u < l->n; u++)
    cap[u] = clamp(l->p[l->cls[u]], l->lo[u], l->want[u]);
}

void power_split_efficiency(const power_unit *units, size_t n, double budget_w,
                            double *cap) {
  power_memo memo = {NAN};
  power_split_efficiency_from(units, n, budget_w, cap, &memo);
}

void power_split_efficiency_from(const power_unit *units, size_t n,
                                 double budget_w, double *cap,
                                 power_memo *memo) {
  level l = {units, n, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  level_init(&l);
  double x = memo->level;
  x = x > LEVEL_LO && x < LEVEL_HI ? level_warm(&l, budget_w, x)
                                   : level_cold(&l, budget_w);
  memo->level = x;
  caps_at(&l, x, cap);
  level_free(&l);
  serve_the_rest(units, n, budget_w, cap);
}
