/* test_inference_fluid_hist.c - a book's points added to two weighted
 * histograms at once (inf__wh_add_points, inference_fluid_hist.c) leave
 * them the same bytes as the points added one by one to each (the
 * per-point add below, what book did before its extremes were made once
 * a book): point sets with weights 0 and below, NaN points first and
 * later, -0 and +0 tied, points under the histogram's range, into
 * histograms empty, holding points, and with a NaN extreme. And the
 * bins by a double's top bits (inf__wh_bin) are inf__hist_bin's for
 * every double: the edges and the doubles either side, each stretch's
 * ends, the special values, and millions drawn over the range and
 * over all bit patterns. The quantiles, a scan started at the min's
 * bin and each going on from the one below it, are the old scan's from
 * bin 0 (kept below), bit for bit, over histograms empty, all under,
 * with a NaN or infinite min, in one bin and spread, and drawn ones. */
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "inference_fluid_internal.h"

/* One point to one histogram, as book added it. */
static void add_one(wt_hist *h, double x, double w) {
  if (!(w > 0))
    return;
  h->min = h->n == 0 || x < h->min ? x : h->min;
  h->max = h->n == 0 || x > h->max ? x : h->max;
  h->n += w;
  if (!(x >= HIST_LO_S)) {
    h->under += w;
    return;
  }
  size_t bin = inf__hist_bin(x);
  if (bin < HIST_BINS)
    h->bin[bin] += w;
}

enum { PTS = 6 };

typedef struct hist_case {
  const char *name;
  double v[PTS], w[PTS];
  size_t n;
  int start; /* 0: both empty, 1: both hold a point, 2: the run's only,
                3: a NaN min and max in the run's */
} hist_case;

static const hist_case cases[] = {
    {"plain", {0.2, 0.05, 3, 0.7}, {1, 2, 0.5, 1}, 4, 0},
    {"into points", {0.2, 0.05, 3, 0.7}, {1, 2, 0.5, 1}, 4, 1},
    {"one empty", {0.2, 9, 0.01}, {1, 1, 1}, 3, 2},
    {"weights 0 and below", {0.1, 5, 0.3, 7}, {0, -1, 1, NAN}, 4, 0},
    {"none weighed", {0.1, 5}, {0, -1}, 2, 1},
    {"a NaN first", {NAN, 0.3, 0.02, 4}, {1, 1, 1, 1}, 4, 0},
    {"a NaN first, into points", {NAN, 0.3, 0.02, 4}, {1, 1, 1, 1}, 4, 1},
    {"a NaN later", {0.3, NAN, 0.02}, {1, 1, 1}, 3, 2},
    {"only NaNs", {NAN, NAN}, {1, 2}, 2, 1},
    {"-0 and +0 tied", {-0.0, 0.0, 0.0, -0.0}, {1, 1, 1, 1}, 4, 0},
    {"+0 then -0, into points", {0.0, -0.0}, {1, 1}, 2, 1},
    {"under the range", {1e-9, 2e-7, 0.5}, {1, 1, 1}, 3, 0},
    {"a NaN extreme kept", {0.3, 0.1}, {1, 1}, 2, 3},
    {"infinities", {INFINITY, -INFINITY, 1}, {1, 1, 1}, 3, 1},
    {"+inf alone, into empty", {INFINITY}, {1}, 1, 0},
    {"-inf then +inf, into empty", {-INFINITY, INFINITY}, {1, 1}, 2, 0},
    {"+inf, -inf, into the run's", {INFINITY, -INFINITY}, {1, 1}, 2, 2},
    {"a NaN first after weight 0", {0.2, NAN, 0.4}, {0, 1, 1}, 3, 0},
    {"weight 0 first, then a point", {NAN, 0.4, 0.1}, {0, 1, 1}, 3, 0},
    /* runs of one bin, their sums held until a point goes elsewhere */
    {"a run in one bin", {0.15, 0.15, 0.15}, {0.1, 0.2, 0.11}, 3, 1},
    {"a bin, another, the first again",
     {0.15, 0.15, 3, 0.15, 0.15},
     {1, 1, 1, 1, 0.25},
     5,
     1},
    {"a run past weight 0, under, over",
     {0.15, 0.15, 1e-9, 0.15, INFINITY, 0.15},
     {1, 0, 1, 1, 1, 1},
     6,
     2},
    {"a run into an empty one",
     {0.3, 0.3, 0.3001, 0.3},
     {0.1, 0.2, 0.3, 0.11},
     4,
     0},
};

static void start(wt_hist *h, int kind, bool run) {
  memset(h, 0, sizeof *h);
  if (kind == 1 || (kind >= 2 && run))
    add_one(h, 0.15, 1);
  if (kind == 3 && run)
    h->min = h->max = NAN;
}

static wh_bins bins; /* made once, in main */

/* Through the AVX2 build of the adds where the CPU has it, and the
 * plain one (sim_lanes_narrow, the tests' switch); by inf__wh_add_points
 * and by inf__wh_add_runs (a run of one value's adds in registers). */
static void points_are_one_by_one(void **state) {
  const hist_case *c = *state;
  static wt_hist want[2], got[2]; /* big: off the stack */
  for (int m = 0; m < 4; m++) {
    bool narrow = m % 2, runs = m >= 2;
    sim_lanes_narrow = narrow;
    for (int k = 0; k < 2; k++) {
      start(&want[k], c->start, k == 1);
      start(&got[k], c->start, k == 1);
    }
    const double hits = 3;
    for (size_t i = 0; i < c->n; i++)
      for (int k = 0; k < 2; k++)
        add_one(&want[k], c->v[i], hits * c->w[i]);
    (runs ? inf__wh_add_runs : inf__wh_add_points)(&got[0], &got[1], &bins,
                                                   c->v, c->w, c->n, hits);
    sim_lanes_narrow = false;
    assert_memory_equal(want, got, sizeof want);
  }
}

/* x binned by the table as by inf__hist_bin (the bits shown on a
 * failure). */
static void same_bin(double x) {
  size_t want = inf__hist_bin(x), got = inf__wh_bin(&bins, x);
  if (got != want)
    fail_msg("%a (bits %016llx): %zu, want %zu", x,
             (unsigned long long)sim_bits(x), got, want);
  if (!(x >= 0 && x < 0x1p-20)) /* the book's bin, for all but those */
    got = inf__wh_bin_above(&bins, x);
  if (got != want)
    fail_msg("%a (bits %016llx): %zu above, want %zu", x,
             (unsigned long long)sim_bits(x), got, want);
}

/* x and the k doubles either side of it, of both signs. */
static void around(double x, int k) {
  double lo = x, hi = x;
  for (int i = 0; i <= k; i++) {
    same_bin(lo);
    same_bin(hi);
    same_bin(-lo);
    same_bin(-hi);
    lo = nextafter(lo, -INFINITY);
    hi = nextafter(hi, INFINITY);
  }
}

static void bins_at_the_edges(void **state) {
  (void)state;
  for (size_t b = 0; b <= HIST_BINS; b++)
    around(inf__hist_edge[b], 64);
  /* Each stretch's first double, the last one before it, and those of
   * the stretches a step beyond the table either side. */
  for (uint64_t i = WH_LO - 64; i <= WH_HI + 64; i++)
    around(sim_of_bits(i << WH_SHIFT), 2);
}

static void bins_of_special_values(void **state) {
  (void)state;
  static const double special[] = {0,
                                   -0.0,
                                   DBL_TRUE_MIN,
                                   DBL_MIN,
                                   DBL_MAX,
                                   INFINITY,
                                   NAN,
                                   HIST_LO_S,
                                   1,
                                   1e4,
                                   16384,
                                   1e-300,
                                   1e300,
                                   0.5,
                                   2,
                                   9.5367431640625e-7,
                                   1e-5};
  for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
    around(special[i], 3);
  same_bin(-INFINITY);
  same_bin(-NAN);
  same_bin(sim_of_bits(0x7ff0000000000001u)); /* a signalling NaN */
  same_bin(sim_of_bits(0xfff8000000000001u));
}

/* xorshift64*: enough spread, and the same draws on every machine. */
static uint64_t draw(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545f4914f6cdd1du;
}

static void bins_of_drawn_values(void **state) {
  (void)state;
  uint64_t s = 0x9e3779b97f4a7c15u;
  for (int i = 0; i < 2000000; i++) /* any bits at all */
    same_bin(sim_of_bits(draw(&s)));
  for (int i = 0; i < 4000000; i++) { /* 1e-7 .. 1e5, log-uniform */
    double u = (double)(draw(&s) >> 11) * 0x1p-53;
    same_bin(1e-7 * pow(10, 12 * u));
  }
}

/* The quantile as inference_fluid.c scanned for it before: from bin 0,
 * each quantile afresh. */
static double old_quantile(const wt_hist *h, double q) {
  if (!(h->n > 0) || !(q >= 0 && q <= 1))
    return NAN;
  double target = q * h->n, seen = h->under;
  if (target <= seen)
    return h->min;
  for (size_t b = 0; b < HIST_BINS; b++) {
    if (h->bin[b] > 0 && seen + h->bin[b] >= target) {
      double frac = (target - seen) / h->bin[b];
      double x = HIST_LO_S * pow(10, (b + frac) / HIST_PER_DECADE);
      return fmin(fmax(x, h->min), h->max);
    }
    seen += h->bin[b];
  }
  return h->max;
}

/* Every quantile of qs (ascending, bad ones among them) by one scan
 * going on, against the old scan's. */
static void same_quantiles(const wt_hist *h) {
  static const double qs[] = {-0.5, 0,    1e-12, 0.01, 0.25,  0.5, 0.5,
                              NAN,  0.75, 0.9,   0.99, 0.999, 1,   1.5};
  wh_scan at = inf__wh_scan(&bins, h);
  for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
    double want = old_quantile(h, qs[i]);
    double got = inf__wh_quantile(h, qs[i], &at);
    if (memcmp(&want, &got, sizeof got) != 0)
      fail_msg("q %g: %a, want %a", qs[i], got, want);
    wh_scan fresh = inf__wh_scan(&bins, h); /* and each afresh */
    got = inf__wh_quantile(h, qs[i], &fresh);
    assert_memory_equal(&want, &got, sizeof got);
  }
}

typedef struct quant_case {
  const char *name;
  double v[PTS], w[PTS];
  size_t n;
  int books; /* the points added this many times */
} quant_case;

static const quant_case quants[] = {
    {"empty", {0}, {0}, 0, 1},
    {"all under", {1e-9, 5e-7}, {1, 2}, 2, 1},
    {"under and in range", {1e-9, 0.02, 0.3}, {5, 1, 1}, 3, 2},
    {"a NaN min", {NAN, 0.02, 0.3, 2}, {1, 1, 1, 1}, 4, 2},
    {"one bin", {0.0123, 0.0123}, {1, 3}, 2, 3},
    {"spread", {2e-6, 0.004, 0.05, 0.7, 9, 900}, {1, 2, 3, 2, 1, 0.5}, 6, 2},
    {"the first edge", {HIST_LO_S}, {1}, 1, 1},
    {"above the top", {2e4, 1e9}, {1, 1}, 2, 1},
    {"infinite", {INFINITY}, {1}, 1, 2},
    {"the top and in range", {0.5, 1e5}, {1, 100}, 2, 1},
    {"weight 0 below the min", {1e-5, 0.2, 0.4}, {0, 1, 1}, 3, 1},
};

static void quantiles_as_scanned_from_0(void **state) {
  const quant_case *c = *state;
  static wt_hist h[2];
  memset(h, 0, sizeof h);
  for (int k = 0; k < c->books; k++)
    inf__wh_add_points(&h[0], &h[1], &bins, c->v, c->w, c->n, 1 + k);
  same_quantiles(&h[0]);
}

static void quantiles_of_drawn_points(void **state) {
  (void)state;
  static wt_hist h[2];
  uint64_t s = 0x853c49e6748fea9bu;
  for (int r = 0; r < 300; r++) {
    memset(h, 0, sizeof h);
    int books = 1 + (int)(draw(&s) % 6);
    for (int k = 0; k < books; k++) {
      double v[PTS], w[PTS];
      for (int i = 0; i < PTS; i++) {
        double u = (double)(draw(&s) >> 11) * 0x1p-53;
        v[i] = 1e-7 * pow(10, (r % 3 == 0 ? 12 : 4) * u);
        w[i] = (double)(draw(&s) % 4);
      }
      inf__wh_add_points(&h[0], &h[1], &bins, v, w, PTS, 0.5 + k);
    }
    same_quantiles(&h[0]);
    same_quantiles(&h[1]);
  }
}

int main(void) {
  inf__wh_bins_init(&bins);
  struct CMUnitTest tests[48];
  size_t n = 0;
  TEST_ROWS(tests, n, points_are_one_by_one, cases);
  tests[n++] = (struct CMUnitTest)cmocka_unit_test(bins_at_the_edges);
  tests[n++] = (struct CMUnitTest)cmocka_unit_test(bins_of_special_values);
  tests[n++] = (struct CMUnitTest)cmocka_unit_test(bins_of_drawn_values);
  TEST_ROWS(tests, n, quantiles_as_scanned_from_0, quants);
  tests[n++] = (struct CMUnitTest)cmocka_unit_test(quantiles_of_drawn_points);
  return _cmocka_run_group_tests("inference_fluid_hist", tests, n, NULL, NULL);
}
