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
 * (power_boundary) finds the level that spends the budget. Units that do no
 * measured work (weight, c or activity 0) keep their minimum until the valued
 * ones are served, then share what is left up to demand. */
#include "power.h"
#include "power_level.h"
#include "power_policy.h"

#include <assert.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "bits.h"

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

/* For tests: the classes' clocks worked out (power__clock_evals), the
 * level's sums (power__level_evals) and the caps kept put back
 * (power__caps_put_back), over every split so far. A split counts in its
 * own level (level.counts) and adds its counts here once, at its end:
 * two groups' splits may run at once on two threads (control_set_each),
 * and a count shared as they went would race. */
static _Atomic unsigned long clock_evals, level_evals, caps_put_back;

unsigned long power__clock_evals(void) {
  return atomic_load_explicit(&clock_evals, memory_order_relaxed);
}

unsigned long power__level_evals(void) {
  return atomic_load_explicit(&level_evals, memory_order_relaxed);
}

unsigned long power__caps_put_back(void) {
  return atomic_load_explicit(&caps_put_back, memory_order_relaxed);
}

/* A split's counts added to the totals (none: no locked add). */
static void counts_add(const level_counts *k) {
  if (k->clock_evals > 0)
    atomic_fetch_add_explicit(&clock_evals, k->clock_evals,
                              memory_order_relaxed);
  if (k->level_evals > 0)
    atomic_fetch_add_explicit(&level_evals, k->level_evals,
                              memory_order_relaxed);
  if (k->caps_put_back > 0)
    atomic_fetch_add_explicit(&caps_put_back, k->caps_put_back,
                              memory_order_relaxed);
}

/* Whether a class's cap and slope, worked out at level mu as clock c,
 * are surely the same bits at every level above mu. There the base b is
 * no larger (class_stands), so the exact b^e is no larger, and pow (within a
 * few ULP of it in any libm; glibc's 0.52) gives a raw at most
 * raw (1 + 2^-47). Either raw lies 2^-40 below phi_min, so the clock
 * stays at phi_min (phi != raw: slope 0) and dyn and the cap are the
 * same bits; or p stays below lo: phi grows by 2^-47 at most, dyn by
 * (1 + 2^-47)^gamma (1 + 2^-48), under the 2^-40 that pbar adds for
 * gamma <= 64, and p's roundings, monotone, keep it at most pbar < lo
 * (cap lo != p: slope 0). A group held to its floor (the DR cut at the
 * request level's diurnal peak) has nearly every class at lo, and the
 * search's evaluations then work out only the few left. */
static bool surely_settled(const power_unit *u, clock_at c, double lo) {
  if (!(c.raw >= 0x1p-1000 && c.raw < INFINITY && u->gamma <= 64 &&
        c.dyn >= 0x1p-1000))
    return false;
  if (c.raw < u->phi_min * (1 - 0x1p-40))
    return true;
  double pbar = u->idle + u->span * u->activity * (c.dyn * (1 + 0x1p-40));
  return pbar < lo;
}

/* Whether class k is surely below its floor at level mu, found without
 * pow: under the anchor where it was below it (below_floor), or by
 * dyn_bound (whose bound the anchor keeps for below_floor; no clock for
 * near_at). */
static __attribute__((noinline)) bool
held_below_floor(level *l, size_t k, const power_unit *u, double mu) {
  if (mu < l->amu && l->mu_low[k] <= l->amu && /* below lo there */
      sim_same_bits(l->kmu[k], l->amu) && below_floor(l, k, u))
    return true;
  double b = base_of(u, mu), e = 1 / (u->gamma - u->c), dbar;
  if (!(b < 0.75 && bound_below_floor(l, k, u, b, e, &dbar)))
    return false;
  if (l->anchor)
    l->kraw[k] = NAN, l->kdyn[k] = dbar, l->ke[k] = e, l->kmu[k] = mu;
  return true;
}

/* Class k's cap per GPU at level mu and its slope where nothing is
 * clamped (class_stands, class_from_raw): cap_at's expressions, so the
 * bits are the same. Its clock's base b = w c / (mu span a gamma) falls
 * as mu rises, each operation being monotone, so at a mu no larger than one where b was surely above
 * one (surely_above_one: phi = 1, no pow, slope 0) it is again, and the
 * cap is the one kept then: at request level most of a large group's
 * classes run full at every level the search tries. Likewise at a mu no
 * smaller than one where it was surely settled low (surely_settled).
 * Those two paths here (true: the class is done). */
static inline __attribute__((always_inline)) bool stands_kept(level *l,
                                                              size_t k,
                                                              double mu) {
  if (!(mu <= l->mu_one[k] || mu >= l->mu_low[k]))
    return false;
  l->cap[k] = mu <= l->mu_one[k] ? l->cap_one[k] : l->cap_low[k];
  l->ds[k] = 0;
  return true;
}

/* stands_kept, or held below its floor at mu (held_below_floor); false:
 * its clock to be worked out (class_raw, class_from_raw). */
static inline __attribute__((always_inline)) bool class_stands(level *l,
                                                               size_t k,
                                                               double mu) {
  if (stands_kept(l, k, mu))
    return true;
  const power_unit *u = &l->units[l->rep[k]];
  if (l->held && held_below_floor(l, k, u, mu)) {
    l->cap[k] = l->cap_low[k] = l->klo[k]; /* and so from this up */
    l->ds[k] = 0;
    l->mu_low[k] = mu;
    return true;
  }
  return false;
}

/* Class k's raw clock at level mu (raw_from: its pow). */
static inline double class_raw(const level *l, size_t k, double mu) {
  const power_unit *u = &l->units[l->rep[k]];
  return raw_from(u, base_of(u, mu));
}

/* The rest of class k's clock at level mu from its raw clock (class_raw):
 * its cap and slope, kept where surely full or settled. */
static inline __attribute__((always_inline)) void
class_from_raw(level *l, size_t k, double mu, double raw) {
  const power_unit *u = &l->units[l->rep[k]];
  clock_at c = clock_from_raw(u, raw);
  l->counts.clock_evals++;
  double p = u->idle + u->span * u->activity * c.dyn;
  double e = 1 / (u->gamma - u->c);
  double cap = clamp(p, l->klo[k], l->kwant[k]);
  if (l->anchor) /* Halley's first point: kept for near_at */
    l->kraw[k] = c.raw, l->kdyn[k] = c.dyn, l->ke[k] = e, l->kmu[k] = mu;
  l->cap[k] = cap;
  l->ds[k] = c.phi == c.raw && cap == p ? -u->gamma * e * (p - u->idle) : 0;
  if (c.raw == INFINITY) { /* surely full: kept for every mu up to this */
    l->mu_one[k] = mu;
    l->cap_one[k] = cap;
  } else if ((c.raw < u->phi_min || p < l->klo[k]) && /* rare: the call */
             surely_settled(u, c, l->klo[k])) { /* and from this up */
    l->mu_low[k] = mu;
    l->cap_low[k] = cap;
  }
}

/* Classes whose clocks chunk_at works out together (perf of the request
 * peak's first 25 minutes: 4, 8 and 16 alike, within the runs' spread). */
#define CLOCK_CHUNK 16

/* Whether the level's classes are worked out one at a time: a group of
 * few classes (the fluid mode's, of 12 and 3, where the chunks' loops
 * cost more instructions than their overlap saved), a group held at its
 * floor (the request peak under the cut: its classes found below it
 * without pow, held_below_floor, so no chains to overlap; chunks there
 * cost 68 k instructions a period, +0.7%), or the tests' switch. */
static inline bool one_at_a_time(const level *l) {
  return l->nclass <= POWER_FEW_CLASSES || l->held ||
         (power__plain & POWER_PLAIN_CLOCK_CHUNKS);
}

/* Classes ks[0 .. m) (m at most CLOCK_CHUNK) at level mu, each as
 * class_stands and class_from_raw would one class at a time: their pow
 * calls first, one after another, then their sim_pow and caps. A
 * class's clock is a chain (its base's quotient, pow's, the clamp,
 * sim_pow's square root and quotient) whose steps wait on each other:
 * class after class, the next one's chain began only as this one's
 * ended (perf: pow_fma's samples on the instructions after its square
 * root and its quotient), where side by side they overlap. A class's
 * fields are its own (held_below_floor's and floor_dyn's kept factors
 * are the same values in any order), so every bit is as before. */
static inline __attribute__((always_inline)) void
chunk_at(level *l, const size_t *ks, size_t m, double mu) {
  double raw[CLOCK_CHUNK];
  bool clock[CLOCK_CHUNK];
  for (size_t i = 0; i < m; i++)
    if ((clock[i] = !class_stands(l, ks[i], mu)))
      raw[i] = class_raw(l, ks[i], mu);
  for (size_t i = 0; i < m; i++)
    if (clock[i])
      class_from_raw(l, ks[i], mu, raw[i]);
}

/* Unit u's cap and slope at level mu, one unit at a time (no classes). */
static double unit_at(const power_unit *p, double mu, double *ds) {
  *ds = 0;
  return valued(p) ? cap_at(p, clock_of(p, mu), ds) : p->lo;
}

/* all_at's lists and sums as it goes: the live list, full_mu, low_mu
 * and the slope. */
typedef struct all_lists {
  double sl, full_mu, low_mu;
  size_t n;
} all_lists;

/* Class k, its cap and slope at level mu made, in all_at's lists. */
static inline __attribute__((always_inline)) void
list_class(level *l, all_lists *a, size_t k, double mu) {
  if (mu <= l->mu_one[k])
    a->full_mu = l->mu_one[k] < a->full_mu ? l->mu_one[k] : a->full_mu;
  else if (mu >= l->mu_low[k])
    a->low_mu = l->mu_low[k] > a->low_mu ? l->mu_low[k] : a->low_mu;
  else
    l->live[a->n++] = k;
}

/* Classes ks[0 .. m) at level mu (chunk_at), then in all_at's lists and
 * slope in their order. */
static inline __attribute__((always_inline)) void
chunk_listed(level *l, all_lists *a, const size_t *ks, size_t m, double mu) {
  chunk_at(l, ks, m, mu);
  for (size_t i = 0; i < m; i++) {
    a->sl += l->gpus[ks[i]] * l->ds[ks[i]];
    list_class(l, a, ks[i], mu);
  }
}

/* Every valued class at level mu, the live list made again: the classes
 * neither surely full nor surely settled low at mu; full_mu the least
 * mu_one of the full (each at least mu), low_mu the largest mu_low of the
 * settled (each at most mu). Returns the slope, class by class. A full
 * or settled class's slope is 0 and adds +0, which leaves the sum (never
 * -0: it starts at +0) as it is, so the live classes' slopes alone add
 * to the same bits. So the classes standing at mu (class_stands' first
 * test: most of them at the request level's night) are listed as they
 * come, and the others in chunks (chunk_at): the live list keeps their
 * order, and the least and largest mus are the same whatever the order
 * (numbers, none NaN). */
static double all_at(level *l, double mu) {
  all_lists a = {0, INFINITY, 0, 0};
  size_t ks[CLOCK_CHUNK], m = 0;
  const bool one = one_at_a_time(l);
  for (size_t k = 0; k < l->nclass; k++) {
    if (!l->valued[k])
      continue;
    if (stands_kept(l, k, mu)) {
      list_class(l, &a, k, mu);
      continue;
    }
    if (one) { /* a chunk of one, in line */
      chunk_listed(l, &a, &k, 1, mu);
      continue;
    }
    ks[m++] = k;
    if (m == CLOCK_CHUNK) {
      chunk_listed(l, &a, ks, m, mu);
      m = 0;
    }
  }
  chunk_listed(l, &a, ks, m, mu);
  l->nlive = a.n;
  l->lists++;
  l->full_mu = a.full_mu;
  l->low_mu = a.low_mu;
  return a.sl;
}

/* The live classes at level low_mu <= mu <= full_mu (the others stand). */
static double live_at(level *l, double mu) {
  double sl = 0;
  if (one_at_a_time(l)) { /* chunks of one, in line */
    for (size_t i = 0; i < l->nlive; i++) {
      chunk_at(l, l->live + i, 1, mu);
      sl += l->gpus[l->live[i]] * l->ds[l->live[i]];
    }
    return sl;
  }
  const size_t chunk = CLOCK_CHUNK;
  for (size_t i = 0; i < l->nlive; i += chunk) {
    size_t m = l->nlive - i < chunk ? l->nlive - i : chunk;
    chunk_at(l, l->live + i, m, mu);
    for (size_t j = i; j < i + m; j++)
      sl += l->gpus[l->live[j]] * l->ds[l->live[j]];
  }
  return sl;
}

/* The live classes and their caps at the last fit, about to be left,
 * kept for caps_at (level.good_kept): a group of many classes. */
static void keep_good(level *l) {
  for (size_t i = 0; i < l->nlive; i++)
    l->good_cap[i] = l->cap[l->live[i]];
  memcpy(l->good_live, l->live, l->nlive * sizeof *l->live);
  l->good_nlive = l->nlive;
  l->good_kept = l->at;
  l->good_mu = l->mu;
  l->lists_at = l->lists;
}

/* The valued classes' caps and slopes at level exp(log_mu), kept with
 * the level they are for: a level tried again (total_at's search starts
 * where grouped_at's ended; the caps are wanted at the answer, which the
 * search tried) costs no pow. Returns the slope, class by class. */
static double classes_at(level *l, double log_mu) {
  double sl = 0; /* class by class, as the caps are made or kept */
  if (!sim_same_bits(log_mu, l->at)) {
    if (l->nclass > POWER_FEW_CLASSES && sim_same_bits(l->at, l->good_at))
      keep_good(l);
    double mu = exp(log_mu);
    l->at = log_mu;
    l->mu = mu;
    if (l->held) { /* below_floor's anchor and factors */
      if (l->anchor)
        l->ax = log_mu, l->amu = mu;
      l->fdx = l->ax - log_mu;
      l->nf = 0;
    }
    if (mu <= l->full_mu && mu >= l->low_mu) /* the others stand */
      return live_at(l, mu);
    return all_at(l, mu);
  }
  for (size_t i = 0; i < l->nlive; i++) /* the others' slopes are 0 */
    sl += l->gpus[l->live[i]] * l->ds[l->live[i]];
  return sl;
}

/* Power of the valued units at level exp(log_mu), the others at their
 * minimum: falls as the level rises. The sum adds unit by unit in their
 * order, as the answer is defined (a run's at once: the same bits); the
 * slope, which only guides the search (its answer is the crossing's,
 * power.h), adds class by class. */
static double total_at(const void *ctx, double log_mu, double *slope) {
  level *l = (level *)ctx;
  double sum = 0, sl = 0;
  l->counts.level_evals++;
  if (l->rcls == NULL) { /* a unit a run, no classes */
    double mu = exp(log_mu); /* classes_at's own, where it is not kept */
    for (size_t u = 0; u < l->n; u++) {
      double ds, cap = unit_at(&l->units[u], mu, &ds);
      sl += l->units[u].n * ds;
      sum += l->units[u].n * cap;
    }
    *slope = sl;
    return sum;
  }
  /* From the runs' arrays alone, not the units (a read of every run's
   * unit each evaluation, scattered over the group's units): n * cap is
   * the same product with n a double, exact. */
  *slope = classes_at(l, log_mu);
  const double *gpus = l->rgpus, *cap = l->cap;
  const size_t *cls = l->rcls, *len = l->runs.len;
  for (size_t r = 0; r < l->runs.n; r++)
    sum = power_add_n(sum, gpus[r] * cap[cls[r]], len[r]);
  if (sum <= l->budget) { /* a fit: maybe the answer (good_cap) */
    if (l->nclass <= POWER_FEW_CLASSES)
      memcpy(l->good_cap, cap, l->nclass * sizeof *cap);
    l->good_at = log_mu;
    l->good_sum = sum;
  }
  return sum;
}

/* The same power added class by class: a class's units share their cap,
 * so this is total_at but for the rounding of the additions, at a cost
 * per class, not per unit. Its crossing is within that rounding of
 * total_at's: a search on it first brings total_at's own search to a
 * start a few hundred doubles from the answer, without total_at's
 * evaluations on the way (power_split_efficiency_from). */

static double grouped_at(const void *ctx, double log_mu, double *slope) {
  level *l = (level *)ctx;
  double sum = 0;
  l->counts.level_evals++;
  *slope = classes_at(l, log_mu);
  for (size_t k = 0; k < l->nclass; k++)
    sum += l->gpus[k] * l->cap[k];
  return sum;
}

/* Whether the budget of a group of many classes is held at their floor
 * (power_held_at_floor; level.held: the fluid mode's groups of a few
 * classes are not asked). */
static bool held_at_floor(const level *l, double budget_w) {
  if (l->rcls == NULL || l->nclass <= POWER_FEW_CLASSES)
    return false;
  double floor = 0;
  for (size_t k = 0; k < l->nclass; k++)
    floor += l->gpus[k] * l->klo[k];
  return power_held_at_floor(budget_w, floor);
}

/* The smallest level (the most power) at which f fits the budget, to the
 * bit of its logarithm, searched from the whole range. */
static double level_cold(level *l, power_fn f, double budget_w) {
  double slope;
  if (f(l, LEVEL_LO, &slope) <= budget_w)
    return LEVEL_LO;
  return power_boundary(f, l, budget_w, LEVEL_HI, LEVEL_LO);
}

/* The same level searched from x, last period's (power_boundary_warm,
 * the good end LEVEL_HI): the answer is level_cold's, bit for bit,
 * whatever x is (tests/control/test_power.c holds it to it), LEVEL_LO
 * if even it fits, LEVEL_HI if even it does not. */
static double level_warm(level *l, power_fn f, double budget_w, double x) {
  return power_boundary_warm(f, l, budget_w, LEVEL_HI, LEVEL_LO, x);
}

/* f's level, from x if it lies inside the range, else from the whole. */
static double level_search(level *l, power_fn f, double budget_w, double x) {
  return x > LEVEL_LO && x < LEVEL_HI ? level_warm(l, f, budget_w, x)
                                      : level_cold(l, f, budget_w);
}

/* Whether run r does no measured work: from its class when there are
 * classes (valued() once a run a split, not thrice). */
static inline bool unvalued(const level *l, size_t r) {
  return l->rcls != NULL ? !l->valued[l->rcls[r]]
                         : !valued(power_run_unit(l->units, &l->runs, r));
}

/* Whether some run does no measured work. */
static bool any_unvalued(const level *l) {
  for (size_t r = 0; r < l->runs.n; r++)
    if (unvalued(l, r))
      return true;
  return false;
}

/* What is left goes to the units without measured work, up to their
 * demand and in proportion to it. power_fill puts weight-0 units at lo,
 * so the valued ones count at lo in the fill, their power above it comes
 * off the budget, and only the rest's caps are taken from it. Run by
 * run, in l->rcap; the level's spare doubles hold the fill's arrays. */
static void fill_the_rest(const level *l, double budget_w, power_memo *memo) {
  const power_unit *units = l->units;
  size_t n = l->runs.n;
  double *cap = l->rcap;
  double *buf =
      l->rcls != NULL ? l->spare : sim_calloc(NULL, 3 * n + 1, sizeof *buf);
  if (buf == NULL)
    return;
  double *w = buf, *top = buf + n, *next = buf + 2 * n, above = 0;
  for (size_t r = 0; r < n; r++) {
    const power_unit *p = power_run_unit(units, &l->runs, r);
    bool rest = unvalued(l, r);
    w[r] = rest ? p->demand : 0;
    top[r] = rest ? wanted(p) : cap[r];
    if (!rest)
      above = power_add_n(above, p->n * (cap[r] - p->lo),
                          power_run_len(&l->runs, r));
  }
  power_fill_runs(units, &l->runs, w, top, budget_w - above, next, &memo->fill);
  for (size_t r = 0; r < n; r++)
    if (unvalued(l, r))
      cap[r] = next[r];
  if (l->rcls == NULL)
    sim_free(NULL, buf);
}

/* The units without measured work filled (fill_the_rest: where every
 * run's clock follows the level, as in a group of services and jobs,
 * the fill would give its caps to no run, so it is not done; its memo
 * only guides its search), then what is left spread over everyone's
 * room. */
static void serve_the_rest(const level *l, double budget_w, power_memo *memo,
                           double x) {
  bool filled = any_unvalued(l);
  if (filled)
    fill_the_rest(l, budget_w, memo);
  /* No fill: the caps are the classes' at x, whose sum (in the spread's
   * order, the same products) total_at made at its last fit, x. */
  if (!filled && l->rcls != NULL && sim_same_bits(x, l->good_at))
    power_spread_rest_summed(l->units, &l->runs, budget_w, l->rcap,
                             l->good_sum);
  else
    power_spread_rest_runs(l->units, &l->runs, budget_w, l->rcap);
}

unsigned power__plain;

/* Whether keep_good kept the live classes' caps at level log_mu. */
static bool good_kept_for(const level *l, double log_mu) {
  return sim_same_bits(log_mu, l->good_kept) &&
         !(power__plain & POWER_PLAIN_CAPS_KEPT);
}

/* The live classes' caps at good_kept put back: every class's cap in
 * l->cap is then its cap there, the same bits as classes_at's (a class's
 * cap is one function of the level, whichever path of class_stands' or
 * class_from_raw's works it out). Every valued class off that list stood there, full or settled
 * low (by mu_one or mu_low, which only move outwards, so they still say
 * so), and l->cap holds that cap unless all_at has written the classes
 * since (the search stepped past full_mu or low_mu: most splits): then
 * the standing ones' caps from cap_one and cap_low first. Its slopes are
 * not put back: no level is kept (at NaN). */
static void good_put_back(level *l) {
  if (l->lists_at != l->lists) {
    for (size_t k = 0; k < l->nclass; k++) {
      if (l->valued[k] && l->good_mu <= l->mu_one[k])
        l->cap[k] = l->cap_one[k];
      else if (l->valued[k] && l->good_mu >= l->mu_low[k])
        l->cap[k] = l->cap_low[k];
    }
  }
  for (size_t i = 0; i < l->good_nlive; i++)
    l->cap[l->good_live[i]] = l->good_cap[i];
  l->at = NAN;
  l->counts.caps_put_back++;
}

/* Each run's cap at level exp(log_mu): its class's (cap_at's result, bit
 * for bit), or cap_at itself without classes. */
static void caps_at(level *l, double log_mu) {
  if (l->rcls == NULL) {
    double ds, mu = exp(log_mu);
    for (size_t u = 0; u < l->n; u++)
      l->rcap[u] = unit_at(&l->units[u], mu, &ds);
    return;
  }
  /* The classes' caps as total_at makes them, without its sum (the
   * search has its answer: the sum is not wanted), or as it kept them. */
  const double *kcap = l->good_cap;
  if (l->nclass > POWER_FEW_CLASSES && !sim_same_bits(log_mu, l->at) &&
      good_kept_for(l, log_mu)) {
    good_put_back(l);
    kcap = l->cap;
  } else if (sim_same_bits(log_mu, l->at) ||
             !sim_same_bits(log_mu, l->good_at) ||
             l->nclass > POWER_FEW_CLASSES) {
    classes_at(l, log_mu);
    kcap = l->cap;
  }
  for (size_t r = 0; r < l->runs.n; r++)
    l->rcap[r] = kcap[l->rcls[r]];
}

/* Each unit's cap: its run's. */
static void caps_out(const level *l, double *cap) {
  if (l->rcap != cap)
    power_runs_out(&l->runs, l->rcap, cap);
}

/* Units a run, on average, and units in all, at most, for which
 * total_at's search first tries the start's neighbour (level_close). */
#define SHORT_RUNS 8
#define FEW_UNITS 512

/* total_at's level from x, grouped_at's crossing. Where the runs are
 * short, total_at's sum is grouped_at's but for a few roundings of its
 * adds and its crossing mostly x itself or the double above (bench-10k's
 * fluid group of 66 runs: 370 starts in 600), so x and its neighbour
 * towards the crossing are tried first: f monotone, a good point with a
 * bad one next to it is the bisection's answer (power_boundary's
 * adjacent ends). Else the search goes on from the neighbour, whose caps
 * classes_at keeps (no pow again). Long runs (the group of three runs of
 * 680 units) add a staircase some sixteen doubles a stair, where the
 * neighbour seldom crosses: there the warm search alone, its first step
 * short of Newton's (power_boundary_near: a step of 16 doubles or twice
 * Newton's overshot the crossing by about a stair, which then took as
 * many sums to close; 6.6 sums a split -> 5.8). Many units of short
 * runs, whose sum's roundings are more (the request level's groups of a
 * unit a run: the neighbour's try cost 6 k instructions a period,
 * docs/performance-log.md), take power_boundary_newton's search from x: its
 * start mostly within a few doubles of the answer, where the sixteen
 * doubles of power_boundary_warm's first step overshot. */
static double level_close(level *l, double budget_w, double x) {
  double slope, y;
  if (l->rcls != NULL && l->n > SHORT_RUNS * l->runs.n && x > LEVEL_LO &&
      x < LEVEL_HI) /* long runs: their stairs */
    return power_boundary_near(total_at, l, budget_w, LEVEL_HI, LEVEL_LO, x);
  if (l->rcls != NULL && l->n > FEW_UNITS && l->n <= SHORT_RUNS * l->runs.n &&
      x > LEVEL_LO && x < LEVEL_HI) /* many short runs: near */
    return power_boundary_newton(total_at, l, budget_w, LEVEL_HI, LEVEL_LO, x);
  if (l->rcls != NULL && l->n <= SHORT_RUNS * l->runs.n &&
      l->n <= FEW_UNITS && x > LEVEL_LO && x < LEVEL_HI) {
    bool good = total_at(l, x, &slope) <= budget_w;
    y = nextafter(x, good ? LEVEL_LO : LEVEL_HI);
    if (y > LEVEL_LO && y < LEVEL_HI) {
      if ((total_at(l, y, &slope) <= budget_w) != good)
        return good ? x : y;
      x = y;
    }
  }
  return level_search(l, total_at, budget_w, x);
}

/* The level from memo's: last period's answer at LEVEL_LO (every unit at
 * its top) is this one's if that end still fits (level_cold's first
 * test: one evaluation, at a level where no clock needs pow); else the
 * search starts from the last level found inside the range, not from the
 * whole range (some thirty evaluations, halving through the flat
 * stretches near its ends). Only the work depends on the start. */
static double level_of(level *l, double budget_w, const power_memo *memo) {
  double slope, x = memo->level;
  if (x == LEVEL_LO && total_at(l, LEVEL_LO, &slope) <= budget_w)
    return LEVEL_LO;
  if (x == LEVEL_LO || x == LEVEL_HI)
    x = memo->inner;
  if (l->rcls != NULL) { /* near total_at's answer, cheaply; its answer below */
    double near = x > LEVEL_LO && x < LEVEL_HI
                      ? power__level_near(l, grouped_at, budget_w, x)
                      : NAN;
    x = isnan(near) ? level_search(l, grouped_at, budget_w, x) : near;
  }
  return level_close(l, budget_w, x);
}

void power_split_efficiency(const power_unit *units, size_t n, double budget_w,
                            double *cap) {
  power_memo memo = {NAN, 0, 0, NULL};
  power_split_efficiency_from(units, n, budget_w, cap, &memo, NULL);
  power_memo_clear(&memo);
}

void power_split_efficiency_from(const power_unit *units, size_t n,
                                 double budget_w, double *cap, power_memo *memo,
                                 const uint8_t *alike) {
  assert(power_alike_ok(units, n, alike)); /* reads every unit: debug */
  level l = {.units = units, .n = n, .at = NAN, .mu = NAN, .good_at = NAN,
             .budget = budget_w, .ax = NAN, .amu = NAN, .pm_phi = NAN,
             .good_kept = NAN};
  power__level_init(&l, memo, cap, alike);
  l.held = held_at_floor(&l, budget_w);
  double x = level_of(&l, budget_w, memo);
  memo->level = x;
  if (x > LEVEL_LO && x < LEVEL_HI)
    memo->inner = x;
  caps_at(&l, x);
  serve_the_rest(&l, budget_w, memo, x);
  caps_out(&l, cap);
  counts_add(&l.counts);
}
