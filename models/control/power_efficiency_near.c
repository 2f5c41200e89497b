/* power_efficiency_near.c - where the efficiency policy's search for its
 * level starts (power_efficiency.c): Halley's steps on grouped_at from
 * last period's level. Only the work depends on the start: total_at's
 * search ends at the same double from anywhere (power_boundary_warm). */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "bits.h"
#include "power_level.h"

/* Halley's steps at most on grouped_at from x, last period's level. */
#define NEAR_STEPS 4

/* grouped_at's second derivative in log mu where classes_at last worked:
 * an unclamped class's slope ds = -gamma e (cap - idle) has derivative
 * -gamma e ds; only live classes have a slope. */
static double grouped_curve(const level *l) {
  double cv = 0;
  for (size_t i = 0; i < l->nlive; i++) {
    size_t k = l->live[i];
    const power_unit *u = &l->units[l->rep[k]];
    cv -= l->gpus[k] * l->ds[k] * (u->gamma / (u->gamma - u->c));
  }
  return cv;
}

/* Each exponent's factor from the anchor to a level dx on: a class's raw
 * clock b^e moves by exp(-e dx) and its unclamped dyn (b^e)^gamma by
 * exp(-g dx), g = gamma e. The classes of a group share a few exponents
 * (a service's or a job's c and the GPU's gamma), so a few exp calls
 * stand for two pow calls a class. */
#define NEAR_EXPS 4

typedef struct near_exps {
  double dx;
  size_t n;
  double e[NEAR_EXPS], gamma[NEAR_EXPS], re[NEAR_EXPS], rg[NEAR_EXPS];
} near_exps;

/* The factors for exponent e of a class of gamma (made when new). */
static void near_factors(near_exps *t, double e, double gamma, double *re,
                         double *rg) {
  size_t j = 0;
  while (j < t->n && !(t->e[j] == e && t->gamma[j] == gamma))
    j++;
  if (j == t->n) {
    double r = exp(-e * t->dx), q = exp(-(gamma * e) * t->dx);
    if (t->n == NEAR_EXPS) { /* more exponents than kept: this class's */
      *re = r, *rg = q;
      return;
    }
    t->e[j] = e, t->gamma[j] = gamma, t->re[j] = r, t->rg[j] = q;
    t->n++;
  }
  *re = t->re[j], *rg = t->rg[j];
}

/* Class k's dyn at the anchor's level moved by the factors: NaN where
 * the anchor did not work out what is needed (a clock surely full
 * there, or clamped there and not here). */
static double near_dyn(const level *l, size_t k, const power_unit *u,
                       double re, double rg, double *raw, double *phi) {
  double raw0 = l->kraw[k];
  *raw = raw0 * re;
  *phi = clamp(*raw, u->phi_min, 1);
  if (*phi == 1)
    return 1;
  if (*phi == *raw) /* the anchor's own clock unclamped too */
    return raw0 >= u->phi_min && raw0 <= 1 ? l->kdyn[k] * rg : NAN;
  return raw0 < u->phi_min ? l->kdyn[k] : NAN; /* at phi_min both */
}

/* Class k's cap and slope at level mu, x0 + dx, from the anchor mu0 =
 * exp(x0) where class_from_raw last worked it out: its clock and dyn
 * moved by the exponents' factors, not pow's; else worked out here as
 * class_from_raw would (clock_of: the two pow calls). The slope's factor gamma e in *g.
 * Writes nothing of the level. */
static double near_class(const level *l, size_t k, double mu, double mu0,
                         near_exps *t, double *ds, double *g) {
  const power_unit *u = &l->units[l->rep[k]];
  double e, raw, phi, dyn = NAN;
  if (sim_same_bits(l->kmu[k], mu0) && l->kraw[k] > 0 &&
      l->kraw[k] < INFINITY) {
    double re, rg;
    e = l->ke[k];
    near_factors(t, e, u->gamma, &re, &rg);
    dyn = near_dyn(l, k, u, re, rg, &raw, &phi);
  }
  if (isnan(dyn)) {
    clock_at c = clock_of(u, mu);
    e = 1 / (u->gamma - u->c);
    raw = c.raw, phi = c.phi, dyn = c.dyn;
  }
  double p = u->idle + u->span * u->activity * dyn;
  double cap = clamp(p, l->klo[k], l->kwant[k]);
  *g = u->gamma * e;
  *ds = phi == raw && cap == p ? -*g * (p - u->idle) : 0;
  return cap;
}

/* grouped_at's sum, slope and curvature at level x, nearly: from the
 * classes as class_from_raw worked them out at the anchor x0 (mu0 =
 * exp(x0)), within a few roundings of grouped_at's (exp's and the factor's against
 * pow's). A guide for Halley's steps only: nothing of the level is
 * written, so total_at's caps and classes_at's kept ones stay exact. */
static double near_at(const level *l, double x, double x0, double mu0,
                      double *slope, double *curve) {
  double mu = exp(x), sum = 0, sl = 0, cv = 0;
  near_exps t = {.dx = x - x0, .n = 0};
  for (size_t k = 0; k < l->nclass; k++) {
    double cap = l->cap[k], ds, g; /* a class without work: its lo */
    if (l->valued[k]) {
      if (mu <= l->mu_one[k] || mu >= l->mu_low[k]) {
        cap = mu <= l->mu_one[k] ? l->cap_one[k] : l->cap_low[k];
      } else {
        cap = near_class(l, k, mu, mu0, &t, &ds, &g);
        sl += l->gpus[k] * ds; /* (gamma e, grouped_curve's factor) */
        cv -= l->gpus[k] * ds * g;
      }
    }
    sum += l->gpus[k] * cap;
  }
  *slope = sl;
  *curve = cv;
  return sum;
}

/* A start for total_at's search near grouped_at's crossing (within the
 * rounding of total_at's answer), from x: Halley's steps on grouped_at
 * (the error cubed a step) while they shrink, stopped once one is within
 * 2^-20 of the level. Newton's took four evaluations on bench-10k's
 * fluid tick (errors about 0.2, 4e-3, 1e-5, 6e-11), Halley's three. The
 * first is grouped_at's own (every class's two pow calls), the anchor;
 * the next are near_at's, from it, each a few exp calls. That last step
 * is taken unevaluated: stopping before it cost total_at's search about
 * three evaluations more (the fluid group of three long runs: 8.5 from
 * thousands of doubles off, 5.7 within sixteen); only from the anchor,
 * a step of under about eight doubles (2^-49 of the level) is not, and
 * the point returned is the anchor, where total_at's first evaluation
 * costs no pow. Groups of many classes (POWER_FEW_CLASSES: the request
 * level's of some 500, most of them full at one level and not at the
 * next, whose clocks the anchor has not worked out) take grouped_at's
 * own at every step, as near_at cost more there than it saved, and
 * return the last evaluated point after a short step. The answer is the
 * crossing's whatever the start (power_boundary_warm): only the work
 * depends on this. NaN where the steps cannot go on (a flat sum: every
 * class clamped; a step out of the range): the caller searches
 * grouped_at's crossing whole. */
double power__level_near(level *l, power_fn grouped, double budget_w,
                         double x) {
  double last_step = INFINITY, x0 = x, mu0 = NAN;
  for (int k = 0; k < NEAR_STEPS; k++) {
    double slope, cv, f;
    bool exact = k == 0 || l->nclass > POWER_FEW_CLASSES;
    if (exact) { /* grouped_at's own */
      l->anchor = k == 0 && (l->nclass <= POWER_FEW_CLASSES || l->held);
      f = grouped(l, x, &slope) - budget_w;
      l->anchor = false;
      cv = grouped_curve(l);
      x0 = x, mu0 = l->mu;
    } else {
      f = near_at(l, x, x0, mu0, &slope, &cv) - budget_w;
    }
    double den = 2 * slope * slope - f * cv;
    /* Newton's where the curvature would turn the step around */
    double step = den > slope * slope ? 2 * f * slope / den : f / slope;
    double y = x - step;
    if (!(slope < 0) || !(y > LEVEL_LO && y < LEVEL_HI))
      return NAN;
    if (!(fabs(step) < last_step))
      return x;
    if (fabs(step) <= 0x1p-20 * fmax(1, fabs(x)))
      return !exact || fabs(step) > 0x1p-49 * fabs(x) ? y : x;
    last_step = fabs(step);
    x = y;
  }
  return x;
}
