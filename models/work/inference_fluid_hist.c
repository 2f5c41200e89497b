/* inference_fluid_hist.c - a fluid span's TTFT and TPOT points added to
 * the service's weighted histograms (inference_fluid.c's book), an
 * interval's and the run's at once. */
#include "inference_fluid_internal.h"

#include <math.h>

/* The extremes of a book's points, as a pass adding them one by one
 * to an empty histogram would leave them (first: the first point's x;
 * lo, hi: of the points not NaN, a tie kept at the earlier; any: there
 * is one). */
typedef struct extremes {
  double first, lo, hi;
  bool some, any;
} extremes;

/* lo and hi from +inf and -inf, a point taking either only when beyond
 * it: a NaN never is, a tie keeps the earlier, and an infinite first
 * point leaves its own bits. So the loop needs no flag a point (minsd
 * and maxsd), and a point not NaN was met when lo <= hi. */
static inline void extremes_add(extremes *e, double x) {
  e->lo = x < e->lo ? x : e->lo;
  e->hi = x > e->hi ? x : e->hi;
}

static inline void extremes_end(extremes *e) { e->any = e->lo <= e->hi; }

/* h's min and max after the points of e, given to it one by one: each
 * point takes the min when below it (a NaN never is, and a NaN min
 * stays), the first point of an empty histogram takes both. */
static void extremes_give(wt_hist *h, bool empty, const extremes *e) {
  if (!e->some)
    return;
  if (empty && isnan(e->first)) {
    h->min = h->max = e->first;
    return;
  }
  if (empty) {
    h->min = e->lo;
    h->max = e->hi;
    return;
  }
  h->min = e->any && e->lo < h->min ? e->lo : h->min;
  h->max = e->any && e->hi > h->max ? e->hi : h->max;
}

/* The extremes of a book's points ended and given to both histograms. */
static void extremes_give_both(extremes *e, wt_hist *a, bool a_empty,
                               wt_hist *b, bool b_empty) {
  extremes_end(e);
  extremes_give(a, a_empty, e);
  extremes_give(b, b_empty, e);
}

/* The first point with a weight (hits * w > 0), or n. */
static inline size_t first_weighted(const double *w, size_t n, double hits) {
  size_t i = 0;
  while (i < n && !(hits * w[i] > 0))
    i++;
  return i;
}

/* The points after i at v[i]'s value, each weight added to the four sums
 * (the two counts and the bin's two), in the points' order; returns the
 * run's last index. Inlined, so the sums stay in registers. */
static inline __attribute__((always_inline)) size_t
add_run(const double *v, const double *w, size_t i, size_t n, double hits,
        double *const sums[4]) {
  double x = v[i];
  while (i + 1 < n && v[i + 1] == x) {
    double wr = hits * w[++i];
    if (!(wr > 0))
      continue;
    for (int k = 0; k < 4; k++)
      *sums[k] += wr;
  }
  return i;
}

/* The weights and the bins, point by point as before (their sums' order
 * is the points'); the extremes once a book, not twice a point. The
 * counts and the share under the range summed in locals (a and b are
 * two histograms: the bins' stores made the compiler keep them in
 * memory), the same adds in the same order. runs: the points come in
 * runs of one value (a constant where it is called). */
static inline __attribute__((always_inline)) void
add_points(wt_hist *a, wt_hist *b, const wh_bins *t, const double *v,
           const double *w, size_t n, double hits, bool runs) {
  bool a_empty = a->n == 0, b_empty = b->n == 0;
  extremes e = {0, INFINITY, -INFINITY, false, false};
  size_t i = first_weighted(w, n, hits);
  e.some = i < n;
  e.first = e.some ? v[i] : 0;
  double an = a->n, bn = b->n, au = a->under, bu = b->under;
  for (; i < n; i++) {
    double x = v[i], wt = hits * w[i];
    if (!(wt > 0))
      continue;
    extremes_add(&e, x);
    an += wt;
    bn += wt;
    if (!(x >= HIST_LO_S)) {
      au += wt;
      bu += wt;
      continue;
    }
    size_t bin = inf__wh_bin_above(t, x);
    if (bin >= HIST_BINS)
      continue;
    /* runs: the points after it at x added to the bin's two sums in
     * registers, stored once (each add to the bin in memory waited on
     * the store of the one before). The same adds in the same order;
     * x's extremes are taken. */
    double ra = a->bin[bin] + wt, rb = b->bin[bin] + wt;
    if (runs)
      i = add_run(v, w, i, n, hits, (double *[]){&an, &bn, &ra, &rb});
    a->bin[bin] = ra;
    b->bin[bin] = rb;
  }
  a->n = an;
  b->n = bn;
  a->under = au;
  b->under = bu;
  extremes_give_both(&e, a, a_empty, b, b_empty);
}

#ifdef SIM_LANES_AVX2
/* add_points built for AVX2 (where the CPU has it): the same operations
 * on the same doubles, in their three-operand forms, so a point's min
 * and max (x < lo ? x : lo, which must keep lo on a tie or a NaN) need
 * no copies of x: about four instructions of 33 a point. */
__attribute__((target("avx2"))) static void
add_points_avx2(wt_hist *a, wt_hist *b, const wh_bins *t, const double *v,
                const double *w, size_t n, double hits) {
  add_points(a, b, t, v, w, n, hits, false);
}

__attribute__((target("avx2"))) static void
add_runs_avx2(wt_hist *a, wt_hist *b, const wh_bins *t, const double *v,
              const double *w, size_t n, double hits) {
  add_points(a, b, t, v, w, n, hits, true);
}
#endif

/* add_points by the CPU's tier, runs or not. */
static void add_by_tier(wt_hist *a, wt_hist *b, const wh_bins *t,
                        const double *v, const double *w, size_t n, double hits,
                        bool runs) {
#ifdef SIM_LANES_AVX2
  if (sim_lanes_wide()) {
    (runs ? add_runs_avx2 : add_points_avx2)(a, b, t, v, w, n, hits);
    return;
  }
#endif
  if (runs)
    add_points(a, b, t, v, w, n, hits, true);
  else
    add_points(a, b, t, v, w, n, hits, false);
}

void inf__wh_add_points(wt_hist *a, wt_hist *b, const wh_bins *t,
                        const double *v, const double *w, size_t n,
                        double hits) {
  add_by_tier(a, b, t, v, w, n, hits, false);
}

void inf__wh_add_runs(wt_hist *a, wt_hist *b, const wh_bins *t, const double *v,
                      const double *w, size_t n, double hits) {
  add_by_tier(a, b, t, v, w, n, hits, true);
}

void inf__wh_bins_init(wh_bins *t) {
  for (uint64_t i = WH_LO; i <= WH_HI; i++)
    t->at[i - WH_LO] = (uint16_t)inf__hist_bin(sim_of_bits(i << WH_SHIFT));
}

wh_scan inf__wh_scan(const wh_bins *t, const wt_hist *h) {
  wh_scan at = {0, h->under};
  if (h->min >= HIST_LO_S) { /* not NaN, nor under the range */
    size_t b = inf__wh_bin(t, h->min);
    at.b = b < HIST_BINS ? b : HIST_BINS;
  }
  return at;
}

double inf__wh_quantile(const wt_hist *h, double q, wh_scan *at) {
  if (!(h->n > 0) || !(q >= 0 && q <= 1))
    return NAN;
  double target = q * h->n;
  if (target <= h->under)
    return h->min;
  double seen = at->seen;
  for (size_t b = at->b; b < HIST_BINS; b++) {
    if (h->bin[b] > 0 && seen + h->bin[b] >= target) {
      *at = (wh_scan){b, seen};
      double frac = (target - seen) / h->bin[b];
      double x = HIST_LO_S * pow(10, (b + frac) / HIST_PER_DECADE);
      return fmin(fmax(x, h->min), h->max);
    }
    seen += h->bin[b];
  }
  *at = (wh_scan){HIST_BINS, seen};
  return h->max;
}
