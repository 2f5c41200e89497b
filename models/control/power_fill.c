/* power_fill.c - the water-filling the policies share (power.h's
 * power_fill, power_fill_from, power_fill_runs): the largest lambda whose
 * caps clamp(lambda w, lo, top) spend no more than the budget, searched
 * to the bit (power_boundary_warm), its sums kept from one evaluation to
 * the next where the budget is held at the units' floor. */
#include "power.h"

#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "alloc.h"
#include "bits.h"

static double clamp(double x, double lo, double hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

/* A run's inputs to the fill's sum, packed once a fill (the sum reads
 * every run at every evaluation, about 12 a split): its weight, range,
 * GPUs as a double, length, and its part of the slope, n w m. */
typedef struct fill_term {
  double w, lo, top, n, slope;
  size_t m;
} fill_term;

/* What the fill's last sum left (filled_kept): each term's value n
 * clamp(lambda w, lo, top) and the sum after it, and the terms that can
 * move (w > 0: the others are pinned at lo), in order. */
typedef struct fill_kept {
  double *v, *after;
  size_t *moving, nmoving;
  /* per moving term: the lambda up to which it surely sits at lo, and
   * that lambda if its value kept is lo (else -inf: it is worked out) */
  double *at_lo, *kept_lo;
  bool ok; /* v and after hold a sum */
  /* The lambda of that sum, and whether it changed one term at most of
   * the sum before (fill_finish is then worth asking) */
  double at;
  bool lone;
  /* The brackets fill_finish closed in this fill (power__fill_finishes),
   * added to the total at its end: not a count two threads' fills share
   * as they go. */
  unsigned long finishes;
} fill_kept;

/* The inputs of a water-filling, run by run; t: them packed (NULL: out
 * of memory, read from the units), nt of them. */
typedef struct fill {
  const power_unit *units;
  const power_runs *runs;
  const double *w, *top;
  const fill_term *t;
  size_t nt;
  fill_kept *kept; /* NULL: none (out of memory) */
  double budget;
} fill;

/* The runs' terms for filled_packed, in *nt terms: in buf (NULL: made,
 * the caller frees them); NULL when out of memory. Successive runs pinned at their lo (the valued runs the fill
 * leaves at lo: at request level about 360 of the large group's 570
 * runs) whose n lo are the same bits are one term, its length theirs
 * together: the sum adds the same terms in the same order (power_add_n
 * is the additions one at a time). A run is pinned where its weight is
 * 0 and lo > 0: x = lambda w is then a zero (lambda finite, at least 0),
 * below lo, so clamp gives lo; its slope part is 0 and never added. */
static fill_term *fill_pack(const fill *fl, size_t *nt, fill_term *buf) {
  size_t n = fl->runs->n, k = 0;
  fill_term *t = buf != NULL ? buf : sim_alloc(NULL, (n + 1) * sizeof *t);
  double last = NAN; /* the term before's n lo if pinned; NaN if not */
  for (size_t r = 0; t != NULL && r < n; r++) {
    const power_unit *p = power_run_unit(fl->units, fl->runs, r);
    size_t m = power_run_len(fl->runs, r);
    double w = fl->w[r], nlo = p->n * p->lo;
    if (w == 0 && p->lo > 0 && sim_same_bits(nlo, last)) {
      t[k - 1].m += m; /* last is a number: k > 0 */
      continue;
    }
    last = w == 0 && p->lo > 0 ? nlo : NAN;
    t[k++] = (fill_term){w, p->lo, fl->top[r], p->n, p->n * w * (double)m, m};
  }
  *nt = k;
  return t;
}

/* sum n_u clamp(lambda w_u, lo_u, top_u): rises with lambda, by the
 * weights of the units between their bounds. The sum adds unit by unit
 * in their order, a run's units at once (power_add_repeat); the slope,
 * which steers the search but never decides its answer (power.h), adds a
 * run's part at once. */
static double filled_packed(const fill_term *t, size_t n, double lambda,
                            double *slope) {
  double sum = 0, sl = 0;
  for (size_t r = 0; r < n; r++) {
    double x = lambda * t[r].w;
    if (x > t[r].lo && x < t[r].top)
      sl += t[r].slope;
    sum = power_add_n(sum, t[r].n * clamp(x, t[r].lo, t[r].top), t[r].m);
  }
  *slope = sl;
  return sum;
}

/* filled_packed's sum from the last one's: a term before the first
 * moving one whose value changed adds the same value to the same sum as
 * then, so the sum resumes after it with the same bits. Near the answer
 * the search's sums differ in a term or two (the group held to its
 * floor at the request level's peak: one unit between its bounds, its
 * sum some 920 terms, 25 sums a split). The slope adds the moving
 * terms' parts in their order, as filled_packed. */
static double filled_kept(const fill_term *t, size_t nt, fill_kept *k,
                          double lambda, double *slope) {
  double sl = 0;
  size_t from = k->ok ? nt : 0, last = 0; /* the first and last changed */
  for (size_t i = 0; i < k->nmoving; i++) {
    if (lambda <= k->kept_lo[i]) /* at lo then and now: n lo, no slope */
      continue;
    size_t r = k->moving[i];
    double x = lambda * t[r].w;
    k->kept_lo[i] = x <= t[r].lo ? k->at_lo[i] : -INFINITY;
    if (x > t[r].lo && x < t[r].top)
      sl += t[r].slope;
    double v = t[r].n * clamp(x, t[r].lo, t[r].top);
    if (!sim_same_bits(v, k->v[r])) {
      from = r < from ? r : from;
      last = r;
    }
    k->v[r] = v;
  }
  *slope = sl;
  k->at = lambda;
  k->lone = from == last;
  if (nt == 0)
    return 0;
  double sum = from > 0 ? k->after[from - 1] : 0;
  for (size_t r = from; r < nt; r++) {
    sum = power_add_n(sum, k->v[r], t[r].m);
    /* past the last change, a sum that meets the last one's goes on as
     * it did (the same terms added): its end is the last one's */
    if (r > last && k->ok && sim_same_bits(sum, k->after[r]))
      return k->after[nt - 1];
    k->after[r] = sum;
  }
  k->ok = true;
  return sum;
}

/* filled_packed read from the units (no packed terms: out of memory). */
static double filled(const void *ctx, double lambda, double *slope) {
  const fill *fl = ctx;
  if (fl->kept != NULL)
    return filled_kept(fl->t, fl->nt, fl->kept, lambda, slope);
  if (fl->t != NULL)
    return filled_packed(fl->t, fl->nt, lambda, slope);
  const double *w = fl->w, *top = fl->top;
  double sum = 0, sl = 0;
  for (size_t r = 0; r < fl->runs->n; r++) {
    const power_unit *p = power_run_unit(fl->units, fl->runs, r);
    size_t m = power_run_len(fl->runs, r);
    double x = lambda * w[r];
    if (x > p->lo && x < top[r])
      sl += p->n * w[r] * (double)m;
    sum = power_add_n(sum, p->n * clamp(x, p->lo, top[r]), m);
  }
  *slope = sl;
  return sum;
}

/* Terms at least for which the fill keeps its sums (filled_kept): the
 * request level's large group has some 920, the fluid groups' under
 * a hundred. */
#define FILL_KEPT_TERMS 256

/* Whether the terms' budget is held at their floor (power_held_at_floor:
 * where filled_kept pays). */
static bool fill_held(const fill_term *t, size_t nt, double budget_w) {
  double floor = 0;
  for (size_t r = 0; r < nt; r++)
    floor += t[r].n * t[r].lo * (double)t[r].m;
  return power_held_at_floor(budget_w, floor);
}

/* A lambda up to which term t's lambda w surely rounds to lo or under
 * (-inf: none known). lo / w rounded, less 2^-50 of it: lambda w is
 * then under lo (1 - 2^-51), which rounds to lo at most. */
static double at_lo_up_to(const fill_term *t) {
  if (!(t->w > 0 && t->lo > 0 && t->lo < INFINITY && t->w < INFINITY))
    return -INFINITY;
  double l = t->lo / t->w;
  return l * (1 - 0x1p-50) < INFINITY ? l * (1 - 0x1p-50) : -INFINITY;
}

/* The kept sums' arrays for nt terms t (the pinned terms' values made
 * once: clamp(0 w) is lo, lo > 0); false when out of memory. */
static bool kept_make(fill_kept *k, const fill_term *t, size_t nt) {
  k->v = sim_alloc(NULL, (nt + 1) * (4 * sizeof(double) + sizeof(size_t)));
  if (k->v == NULL)
    return false;
  k->after = k->v + nt + 1;
  k->at_lo = k->after + nt + 1;
  k->kept_lo = k->at_lo + nt + 1;
  k->moving = (size_t *)(k->kept_lo + nt + 1);
  k->nmoving = 0;
  k->ok = false;
  for (size_t r = 0; r < nt; r++) {
    k->v[r] = t[r].n * clamp(0 * t[r].w, t[r].lo, t[r].top);
    if (t[r].w == 0 && t[r].lo > 0)
      continue;
    k->at_lo[k->nmoving] = at_lo_up_to(&t[r]);
    k->kept_lo[k->nmoving] = -INFINITY;
    k->moving[k->nmoving++] = r;
  }
  return true;
}

/* Term t's value at lambda: filled_kept's (and filled_packed's) n
 * clamp(lambda w, lo, top), the same operations. */
static inline double term_at(const fill_term *t, double lambda) {
  return t->n * clamp(lambda * t->w, t->lo, t->top);
}

/* The one term whose value differs between lambdas g < b, or SIZE_MAX
 * (none, or more than one). Each term's value is monotone in lambda, so
 * a term the same bits at g and b is so all between. */
static size_t lone_term(const fill_term *t, const fill_kept *k, double g,
                        double b) {
  size_t lone = SIZE_MAX;
  for (size_t i = 0; i < k->nmoving; i++) {
    if (b <= k->at_lo[i]) /* at lo at both */
      continue;
    size_t r = k->moving[i];
    if (!sim_same_bits(term_at(&t[r], g), term_at(&t[r], b))) {
      if (lone != SIZE_MAX)
        return SIZE_MAX;
      lone = r;
    }
  }
  return lone;
}

/* Whether every term's value at lambda b is its value at 0 (its lo):
 * then the sum is the same at every lambda from 0 to b. */
static bool flat_down_to_0(const fill_term *t, const fill_kept *k, double b) {
  for (size_t i = 0; i < k->nmoving; i++) {
    size_t r = k->moving[i];
    if (b > k->at_lo[i] && !sim_same_bits(term_at(&t[r], 0), term_at(&t[r], b)))
      return false;
  }
  return true;
}

/* The sum from s after term r, adding the kept values of the terms after
 * it (filled_kept's additions): where it meets the kept sum's (the same
 * terms after), that sum's end. */
static double sum_after(const fill_term *t, size_t nt, const fill_kept *k,
                        size_t r, double s) {
  for (size_t j = r + 1; j < nt; j++) {
    s = power_add_n(s, k->v[j], t[j].m);
    if (sim_same_bits(s, k->after[j]))
      return k->after[nt - 1];
  }
  return s;
}

/* The largest sum s from sg up to sb (0 < sg < sb, doubles) whose sum
 * after term r fits the budget, given that sg's does and sb's does not:
 * bisection on the doubles between, whose order is their bits'. */
static double last_fitting_sum(const fill *fl, size_t r, double sg,
                               double sb) {
  uint64_t lo = sim_bits(sg), hi = sim_bits(sb);
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (sum_after(fl->t, fl->nt, fl->kept, r, sim_of_bits(mid)) <= fl->budget)
      lo = mid;
    else
      hi = mid;
  }
  return sim_of_bits(lo);
}

/* The largest lambda from g up to b (0 <= g < b) whose sum through term
 * t, before plus its value m times, is at most s, given that g's is and
 * b's is not: bisection on the doubles between. */
static double last_lambda_to(const fill_term *t, double before, double g,
                             double b, double s) {
  uint64_t lo = sim_bits(g), hi = sim_bits(b);
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (power_add_n(before, term_at(t, sim_of_bits(mid)), t->m) <= s)
      lo = mid;
    else
      hi = mid;
  }
  return sim_of_bits(lo);
}

/* Doubles at most between the sums through the lone term at a
 * bracket's ends for which fill_finish closes it: each halving of them
 * is a sum of the terms after (sum_after). From a wider bracket the
 * search's Newton step, the lone term's value being linear in lambda,
 * lands within a stair of the sum's roundings. The request peak's
 * first 20 minutes: with no bound 4,086 of the search's sums and 20,205
 * of fill_finish's (perf: more than the base's 18,088 sums cost); at
 * most 16 doubles, 6,944 and 461; 256 or 4,096, some 6,700 and 780. */
#define FILL_FINISH_SUMS 16

/* For tests: the brackets fill_finish closed, and a switch to leave it
 * off (power.h). */
bool power__fill_finish_off;
static _Atomic unsigned long fill_finishes;

unsigned long power__fill_finishes(void) {
  return atomic_load_explicit(&fill_finishes, memory_order_relaxed);
}

/* The search's answer in the bracket [g, b] (g good, b bad) where one
 * term alone, r, differs between g and b (lone_term): the sum at lambda
 * in [g, b] is then S(s(lambda)), s(lambda) the sum through r (before, the
 * kept sum of the terms ahead of r, the same at g and b, plus r's value
 * m times) and S the additions of the terms after r, both monotone. So
 * the largest lambda that fits is the largest whose s is at most s*, the
 * largest s from s(g) on whose S fits: f(lambda) <= S(s*) fits, and the
 * double after lambda has s in (s*, s(b)], where S does not. Bisections
 * on s (a few doubles of the sum: S its tail of terms) and on lambda (no
 * sum) for the search's dozen sums of every term past r: at the request
 * level the fill's budget is its floor, one idle replica's cap between
 * its bounds, and the search closed a bracket thousands of doubles wide
 * by halving it. NaN where it does not apply: the kept sum must be at g
 * or b, so that its values and sums are theirs. And where the search
 * walks down from a bad b (g its good end, 0) and every term at b is at
 * its value at 0, the sum at 0 is b's: nothing fits and the walk's
 * answer is 0, without its steps down to 0 (some seven sums in the
 * request level's fills whose budget is under their floor). */
static double fill_finish(const void *ctx, double g, double b) {
  const fill *fl = ctx;
  const fill_kept *k = fl->kept;
  if (power__fill_finish_off || !k->ok || fl->nt == 0 ||
      !(g >= 0 && g < b && b < INFINITY) ||
      !(sim_same_bits(k->at, g) || sim_same_bits(k->at, b)))
    return NAN;
  if (g == 0 && sim_same_bits(k->at, b) && flat_down_to_0(fl->t, k, b)) {
    fl->kept->finishes++; /* b bad and the sum the same at 0: nothing fits */
    return 0;
  }
  if (!k->lone)
    return NAN;
  size_t r = lone_term(fl->t, k, g, b);
  if (r == SIZE_MAX)
    return NAN;
  const fill_term *t = &fl->t[r];
  double before = r > 0 ? k->after[r - 1] : 0;
  double sg = power_add_n(before, term_at(t, g), t->m);
  double sb = power_add_n(before, term_at(t, b), t->m);
  if (!(sg > 0 && sg < sb && sb < INFINITY) ||
      sim_bits(sb) - sim_bits(sg) > FILL_FINISH_SUMS)
    return NAN;
  fl->kept->finishes++;
  return last_lambda_to(t, before, g, b, last_fitting_sum(fl, r, sg, sb));
}

/* The fill's lambda: searched from memo's last lambda when it lies
 * inside (0, hi) (power_boundary_warm: the same answer), else from hi
 * down. The memo keeps the answer; an answer of 0 (even the floor over
 * the budget, as in a group whose budget is within rounding of it) keeps
 * the last lambda above 0, negated: the next call first sees whether 0
 * is still the answer (f(0) > budget: power_boundary's answer too), then
 * searches from that lambda, not from hi (about 30 evaluations, halving
 * through flat stretches). */
static double fill_level(const fill *fl, double hi, double budget_w,
                         double *memo) {
  double slope, lo = hi, m = memo != NULL ? *memo : 0;
  if (m < 0 && filled(fl, 0, &slope) > budget_w)
    return 0;
  m = fabs(m);
  if (m > 0 && m < hi)
    lo = power_boundary_warm_finish(filled, fl->kept != NULL ? fill_finish : NULL,
                                    fl, budget_w, 0, hi, m);
  else if (filled(fl, hi, &slope) > budget_w)
    lo = power_boundary(filled, fl, budget_w, 0, hi);
  if (memo != NULL)
    *memo = lo == 0 && m > 0 && m < hi ? -m : lo;
  return lo;
}

/* Runs at most whose terms the fill packs on the stack (6 KB), not in an
 * allocation a call: bench-10k's fluid group of some 66 runs, where the
 * allocation and its free were some 550 instructions a tick. */
#define FILL_STACK_TERMS 128

void power_fill_runs(const power_unit *units, const power_runs *runs,
                     const double *w, const double *top, double budget_w,
                     double *cap, double *memo) {
  fill fl = {units, runs, w, top, NULL, 0, NULL, budget_w};
  fill_term stack[FILL_STACK_TERMS];
  fill_term *t =
      fill_pack(&fl, &fl.nt, runs->n < FILL_STACK_TERMS ? stack : NULL);
  fl.t = t;
  fill_kept kept = {0};
  if (t != NULL && fl.nt >= FILL_KEPT_TERMS && fill_held(t, fl.nt, budget_w) &&
      kept_make(&kept, t, fl.nt))
    fl.kept = &kept;
  /* fmax(hi, q) without the call (libm's, through the PLT, a call a
   * run whose chain the divisions waited on: a fifth of this function's
   * samples over the request day): hi is never NaN, and for a NaN q both
   * keep hi; q is never -0 beside hi = +0 (w > 0, top a cap). */
  double hi = 0;
  for (size_t r = 0; r < runs->n; r++)
    if (w[r] > 0) {
      double q = top[r] / w[r];
      hi = q > hi ? q : hi;
    }
  double lo = fill_level(&fl, hi, budget_w, memo);
  if (kept.finishes > 0)
    atomic_fetch_add_explicit(&fill_finishes, kept.finishes,
                              memory_order_relaxed);
  sim_free(NULL, kept.v);
  if (t != stack)
    sim_free(NULL, t);
  for (size_t r = 0; r < runs->n; r++)
    cap[r] = clamp(lo * w[r], power_run_unit(units, runs, r)->lo, top[r]);
}

void power_fill_from(const power_unit *units, size_t n, const double *w,
                     const double *top, double budget_w, double *cap,
                     double *memo) {
  power_runs each = {n, NULL, NULL};
  power_fill_runs(units, &each, w, top, budget_w, cap, memo);
}

/* The largest lambda that spends no more than the budget, so the caps
 * never overshoot it. */
void power_fill(const power_unit *units, size_t n, const double *w,
                const double *top, double budget_w, double *cap) {
  power_fill_from(units, n, w, top, budget_w, cap, NULL);
}
