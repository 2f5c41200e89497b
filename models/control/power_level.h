/* power_level.h - the efficiency policy's level (power_efficiency.c)
 * as its two files share it: the units in runs and classes, a unit's
 * clock at a level, and the start of the level's search by Halley's steps
 * (power_efficiency_near.c), and the runs and classes made
 * (power_classes.c). Only those three files include it. */
#ifndef MODELS_CONTROL_POWER_LEVEL_H
#define MODELS_CONTROL_POWER_LEVEL_H
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pow.h"
#include "power.h"

static inline double clamp(double x, double lo, double hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

/* A unit's wanted cap: its demand within its range. */
static inline double wanted(const power_unit *u) {
  return clamp(u->demand, u->lo, u->hi);
}

/* Whether a unit does measured work: its clock follows the level. */
static inline bool valued(const power_unit *u) {
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
static inline bool surely_above_one(double b, double e) {
  return b >= 1 + 0x1p-40 && e >= 0x1p-10;
}

/* A unit's clock's base at level mu: falls as mu rises (each operation
 * monotone). */
static inline double base_of(const power_unit *u, double mu) {
  return u->weight * u->c / (mu * u->span * u->activity * u->gamma);
}

/* The raw clock from its base b = base_of(u, mu): its pow. Any raw
 * above 1 clamps to phi = 1 and leaves phi != raw, as pow's. */
static inline double raw_from(const power_unit *u, double b) {
  double e = 1 / (u->gamma - u->c);
  return surely_above_one(b, e) ? INFINITY : pow(b, e);
}

/* The clock from its raw clock raw_from: its phi and dyn. */
static inline clock_at clock_from_raw(const power_unit *u, double raw) {
  clock_at k;
  k.raw = raw;
  k.phi = clamp(k.raw, u->phi_min, 1);
  k.dyn = k.phi == 1 ? 1 : sim_pow(k.phi, u->gamma); /* pow(1, y) is 1 */
  return k;
}

/* The clock from its base b = base_of(u, mu). */
static inline clock_at clock_from(const power_unit *u, double b) {
  return clock_from_raw(u, raw_from(u, b));
}

static inline clock_at clock_of(const power_unit *u, double mu) {
  return clock_from(u, base_of(u, mu));
}

/* The units a level is found for, in runs and classes. A run is units
 * next to each other alike to the bit in every field the policy reads
 * (a service's replicas in one state; the caller's marks say where, or
 * else the units are compared): the policy works run by run and
 * its sums add a run's units at once, in their order (power_add_repeat),
 * so every sum and cap is the unit-by-unit one, bit for bit. Runs alike in
 * their clock inputs and, to the bit, their range form a class, whose
 * uncapped power per GPU p, cap (p clamped to the range) and slope in
 * log mu are computed once an evaluation, with the bits cap_at gives.
 * Units without measured work form classes by their lo, their cap:
 * cap_at's callers give them lo and the slope 0. */
/* Exponents whose factors a level keeps (level.fg): a group's classes
 * share a few (a service's or a job's c and the GPU's gamma). */
#define LEVEL_FACTORS 4

/* What one split counted for the tests (power__clock_evals,
 * power__level_evals, power__caps_put_back), added to their totals at
 * its end: nothing a split writes is shared with another group's. */
typedef struct level_counts {
  unsigned long clock_evals, level_evals, caps_put_back;
} level_counts;

typedef struct level {
  const power_unit *units;
  size_t n, nclass;
  power_runs runs;  /* first, len NULL (out of memory): a unit a run */
  size_t *rcls;     /* per run: its class; NULL (out of memory): none */
  size_t *rep;      /* per class: its first unit */
  double *cap, *ds; /* per class, at level exp(at) (NaN: none yet) */
  double at;
  double *gpus, *klo, *kwant; /* per class: its GPUs, its units' range */
  bool *valued;  /* per class: its units' clocks follow the level */
  double *rcap;  /* per run: its cap (the caller's array without runs) */
  double *rgpus; /* per run: a unit's GPUs (total_at reads no unit) */
  double *spare; /* 3 n + 1 doubles for serve_the_rest */
  /* per class: the largest mu yet at which its clock was surely full
   * (0: none), and its cap there (class_from_raw) */
  double *mu_one, *cap_one;
  /* per class: the least mu yet from which on its cap surely stands
   * (surely_settled; infinity: none), and that cap */
  double *mu_low, *cap_low;
  /* The valued classes classes_at works out at a level mu <= full_mu, in
   * their order: the others were surely full at a level of full_mu or
   * more (mu_one), so at mu too, and their caps and slopes (0) stand.
   * full_mu 0: none known; every valued class is worked out and the
   * list made again. Likewise the classes surely settled low at a level
   * of low_mu or less stand at any mu >= low_mu, so the list holds for
   * low_mu <= mu <= full_mu. */
  size_t *live, nlive;
  double full_mu, low_mu;
  /* The level good_at (NaN: none) whose sum good_sum last fitted the
   * budget: the search's answer is its last good point (each good point
   * inside the bracket is its new good end), which the search's last
   * evaluation, a bad one, often left behind in cap. With few classes
   * (POWER_FEW_CLASSES) every class's cap there too: caps_at takes them
   * from here, no pow again (a group of hundreds copied more than that
   * saved: the request level's peak). */
  double *good_cap, good_at, good_sum, budget;
  /* With more classes than that, the live classes at good_at alone
   * (good_live, good_nlive of them) and their caps (good_cap, in that
   * order), kept when classes_at leaves that level for another, at level
   * good_kept (NaN: none), good_mu its mu, and lists_at all_at's count
   * lists then: caps_at puts them back, the standing classes' caps being
   * the same bits at every level where they stand, and no class's clocks
   * are worked out again (some 350 a split of the request level's group
   * of 2,039 units at its peak). */
  double good_kept, good_mu;
  size_t *good_live, good_nlive;
  unsigned long lists, lists_at;
  /* What class_from_raw worked out for each class at Halley's first point
   * (anchor true while it is evaluated), at level kmu (NaN: nothing yet
   * in this split): its raw clock, dyn and exponent e (near_at's
   * anchor); and the mu of at. */
  double *kraw, *kdyn, *ke, *kmu;
  double mu;
  bool anchor;
  /* A group of over POWER_FEW_CLASSES classes whose budget is within a
   * part in 10^6 of their floor (the DR cut at the request level's
   * peak): the classes below their floor are then found without pow
   * (below_floor, dyn_bound), which elsewhere cost more in failed tries
   * than it saved. */
  bool held;
  /* The anchor's level and its mu (NaN: none in this split), and at the
   * level classes_at works out, fdx = anchor less level and the factors
   * exp(g fdx) of the first few exponents g met there (below_floor). */
  double ax, amu, fdx;
  size_t nf;
  double fg[LEVEL_FACTORS], fv[LEVEL_FACTORS];
  /* The last phi_min and gamma whose dyn at phi_min floor_dyn worked
   * out (pm_dyn; NaN: none yet). */
  double pm_phi, pm_gamma, pm_dyn;
  level_counts counts;
} level;

/* The slack below_floor and bound_below_floor multiply their dyn bounds
 * by: 2^-30 over the roundings they bound, which stay under 2^-38 and
 * 2^-40 (their comments). */
#define LEVEL_BOUND_SLACK (1 + 0x1p-30)

/* The factor exp(g fdx) of exponent g at the level being worked out,
 * kept for the first few exponents met there. */
static inline double level_factor(level *l, double g) {
  for (size_t j = 0; j < l->nf; j++)
    if (sim_same_bits(l->fg[j], g))
      return l->fv[j];
  double f = exp(g * l->fdx);
  if (l->nf < LEVEL_FACTORS)
    l->fg[l->nf] = g, l->fv[l->nf++] = f;
  return f;
}

/* Whether class k, its clock worked out at the anchor (kdyn there),
 * surely has its power p below its floor at the level being worked out,
 * mu below the anchor's amu: then its cap is lo and its slope 0 there
 * and at every level up to the anchor's (and beyond, surely_settled's
 * argument), with no pow. Its base b grows by amu / mu as the level
 * falls, so its exact raw clock by (amu / mu)^e and its unclamped dyn
 * by (amu / mu)^g, g = gamma e; a dyn clamped at phi_min or 1 is no
 * more than that. The factor by exp(g fdx) and the computed mus,
 * exponents, b's and pow's roundings move it by under 2^-38 for
 * |g fdx| < 2^10 (exp's range); the 2^-30 added covers them, and p's
 * roundings are monotone, so the bound pbar below lo puts p below lo.
 * At the request level's peak (a group held to its floor) the search's
 * first step below the anchor found every class worked out again. */
static inline bool below_floor(level *l, size_t k, const power_unit *u) {
  if (!(u->gamma <= 64 && l->kdyn[k] >= 0x1p-1000))
    return false;
  double f = level_factor(l, u->gamma * l->ke[k]);
  double pbar =
      u->idle + u->span * u->activity * (l->kdyn[k] * (f * LEVEL_BOUND_SLACK));
  return pbar < l->klo[k];
}

/* A unit's dyn at its lowest clock, sim_pow(phi_min, gamma): kept for
 * the last pair (a group's GPUs are mostly of one kind). */
static inline double floor_dyn(level *l, const power_unit *u) {
  if (!sim_same_bits(u->phi_min, l->pm_phi) ||
      !sim_same_bits(u->gamma, l->pm_gamma)) {
    l->pm_phi = u->phi_min, l->pm_gamma = u->gamma;
    l->pm_dyn = sim_pow(u->phi_min, u->gamma);
  }
  return l->pm_dyn;
}

/* An upper bound on the dyn of a unit whose clock's base is b < 3/4 (so
 * its clock is under 1), with no pow, or NaN: its clock's exact dyn is
 * b^g, g = gamma e >= 1 (c <= 1 < gamma), or phi_min^gamma where it
 * clamps there; b^g <= b^h for any h <= g, here h = 1 + j / 16 (j whole,
 * at most 16: four square roots and j products). pow's and sim_pow's
 * roundings, the square roots' and products', and g's own (g rounded to
 * h from a little under it; b >= 2^-60 keeps b^(h - g) within 2^-40 of
 * 1) are under 2^-40: the caller adds 2^-30. At the request level's peak, 96 in
 * 100 of the large group's classes worked out lie below their floor by
 * more than this bound's slack. */
static inline double dyn_bound(level *l, const power_unit *u, double b, double e) {
  double g = u->gamma * e;
  if (!(b >= 0x1p-60 && b < 0.75 && g >= 1 - 0x1p-48 && u->gamma <= 64))
    return NAN;
  double r = sqrt(sqrt(sqrt(sqrt(b)))), d = b; /* b^(1/16) */
  int j = g < 2 ? (int)((g - 1) * 16) : 16; /* (g - 1) 16 rounded down */
  for (; j > 0; j--)
    d *= r;
  double m = floor_dyn(l, u);
  return d > m ? d : m;
}

/* Whether class k, whose base at level mu is b, is surely below its floor
 * there by dyn_bound (its bound in *dbar), and so at every level above:
 * its cap lo and its slope 0 (cap lo != p), as surely_settled's. */
static inline bool bound_below_floor(level *l, size_t k, const power_unit *u,
                              double b, double e, double *dbar) {
  *dbar = dyn_bound(l, u, b, e);
  double pbar = u->idle + u->span * u->activity * (*dbar * LEVEL_BOUND_SLACK);
  return pbar < l->klo[k]; /* false for a NaN bound */
}

/* The bounds of the search on log mu: beyond them every unit is at an
 * end of its range. */
#define LEVEL_LO (-300.0)
#define LEVEL_HI 300.0

/* Classes at most in a group whose caps at the last fit are kept
 * (good_cap) and whose Halley steps after the first are near_at's
 * (power__level_near): in bench-10k's fluid groups 12 and 3, at the
 * request level 17 to 64 and some 500. */
#define POWER_FEW_CLASSES 64

/* Fills the level's runs and classes for its units (l->units, l->n):
 * the runs from the caller's marks (alike, NULL: none) or else found by
 * comparing the units; without memory, a unit a run and no classes
 * (l->rcls NULL), the caps to be worked out in cap itself
 * (power_classes.c). */
void power__level_init(level *l, power_memo *memo, double *cap,
                       const uint8_t *alike);

/* A start for total_at's search near the crossing of grouped (the
 * classes' power added class by class, power_efficiency.c's grouped_at),
 * from x (NaN: none; power_efficiency_near.c). */
double power__level_near(level *l, power_fn grouped, double budget_w,
                         double x);

#endif
