/* test_inference_quantiles.c - the interval's p50 and p99
 * (inference_stats.c, inf__quantiles) are gsl_stats_quantile_from_sorted_data's
 * on a sorted copy, bit for bit: for every size from 1 to 300 and some
 * larger, values distinct, with many ties, all equal, in order, in reverse
 * order, in an organ pipe, with zeros and DBL_MAX (the bins over nearly all
 * the bits of +0 to +inf) and in one cluster with far ones (the
 * quantiles' bins the same or adjacent). From 128 values on the
 * quantiles are read by bins first. Values with a NaN or a -0 take GSL's
 * selection, bit for bit as before (gsl_stats_select, then the next order
 * statistic by a pass). */
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "inference_internal.h"
#include "lanes.h"

typedef enum {
  DRAWN,
  ASCENDING,
  DESCENDING,
  ORGAN,
  WIDE,
  CLUSTER
} spread_order;

typedef struct spread_row {
  const char *name;
  unsigned levels; /* values drawn from this many; 0: continuous */
  spread_order order;
} spread_row;

static const spread_row rows[] = {
    {"distinct", 0, DRAWN},         {"many ties", 7, DRAWN},
    {"all equal", 1, DRAWN},        {"ascending", 0, ASCENDING},
    {"descending", 0, DESCENDING},  {"organ pipe", 5, ORGAN},
    {"zeros and DBL_MAX", 0, WIDE}, {"a cluster, far ones", 50, CLUSTER}};

/* Values i of m in the row's order (drawn ones from r). */
static double value(const spread_row *row, gsl_rng *r, size_t i, size_t m) {
  switch (row->order) {
  case ASCENDING:
    return 1e-3 * (double)i;
  case DESCENDING:
    return 1e-3 * (double)(m - i);
  case ORGAN:
    return (double)(i < m / 2 ? i : m - i) / (double)row->levels;
  case WIDE: /* the bins span nearly all the bits of +0 to +inf */
    return i % 13 == 0   ? 0
           : i % 17 == 0 ? DBL_MAX
                         : -log(gsl_rng_uniform_pos(r));
  case CLUSTER: /* the order statistics read in one bin or bins that meet */
    return i % 97 == 0
               ? 1e6 * (double)(i % 5)
               : 1 + 0x1p-52 * (double)gsl_rng_uniform_int(r, row->levels);
  default:
    return row->levels == 0
               ? -log(gsl_rng_uniform_pos(r))
               : 0.25 * (double)gsl_rng_uniform_int(r, row->levels);
  }
}

/* Through the AVX2 build of the bounds and the gather where the CPU has
 * it, and the plain one (sim_lanes_narrow, the tests' switch). */
static void check(const double *x, size_t n) {
  double *work = malloc(n * sizeof *work), *sorted = malloc(n * sizeof *sorted);
  assert_non_null(work);
  assert_non_null(sorted);
  memcpy(sorted, x, n * sizeof *x);
  gsl_sort(sorted, 1, n);
  double w50 = gsl_stats_quantile_from_sorted_data(sorted, 1, n, 0.5);
  double w99 = gsl_stats_quantile_from_sorted_data(sorted, 1, n, 0.99);
  for (int narrow = 0; narrow < 2; narrow++) {
    memcpy(work, x, n * sizeof *x);
    double p50, p99;
    sim_lanes_narrow = narrow;
    inf__quantiles(work, n, &p50, &p99);
    sim_lanes_narrow = false;
    if (memcmp(&p50, &w50, sizeof p50) != 0 || memcmp(&p99, &w99, sizeof p99))
      fail_msg("n %zu narrow %d: p50 %.17g (want %.17g), p99 %.17g (want "
               "%.17g)",
               n, narrow, p50, w50, p99, w99);
  }
  free(work);
  free(sorted);
}

static void quantiles_match_sorting(void **state) {
  const spread_row *row = *state;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  assert_non_null(r);
  gsl_rng_set(r, 24);
  static const size_t big[] = {1000, 4097, 20000};
  double *x = malloc(20000 * sizeof *x);
  assert_non_null(x);
  for (size_t n = 1; n < 300 + sizeof big / sizeof big[0]; n++) {
    size_t m = n < 300 ? n : big[n - 300];
    for (size_t i = 0; i < m; i++)
      x[i] = value(row, r, i, m);
    check(x, m);
  }
  free(x);
  gsl_rng_free(r);
}

/* The selection before: GSL's, then the next order statistic by a pass
 * (lo again if more than k + 1 values are at most lo). */
static double old_quantile(double *x, size_t n, double q) {
  double index = (double)(n - 1) * q;
  size_t k = (size_t)index;
  double delta = index - (double)k;
  double lo = gsl_stats_select(x, 1, n, k);
  if (delta == 0 || k + 1 >= n)
    return lo;
  size_t at_most = 0;
  double above = INFINITY;
  for (size_t i = 0; i < n; i++) {
    at_most += x[i] <= lo;
    if (x[i] > lo && x[i] < above)
      above = x[i];
  }
  return (1 - delta) * lo + delta * (at_most > k + 1 ? lo : above);
}

/* Values beyond latencies' +0 to +inf (zeros of both signs, a NaN,
 * negatives): the bits GSL's selection gave. */
static double odd_value(int kind, size_t i, size_t n) {
  if (kind == 1 && i == n / 2)
    return NAN;
  if (kind == 2)
    return i % 4 == 0 ? -1.5 * (double)(i % 7) : (double)(i % 5);
  return i % 3 == 0 ? -0.0 : i % 3 == 1 ? 0.0 : (double)(i % 5);
}

static void odd_values_keep_gsl_s_selection(void **state) {
  (void)state;
  double a[301], b[301];
  for (size_t n = 1; n <= 301; n += 4) {
    for (int kind = 0; kind < 3; kind++) {
      for (int narrow = 0; narrow < 2; narrow++) {
        for (size_t i = 0; i < n; i++)
          a[i] = b[i] = odd_value(kind, i, n);
        double p50, p99;
        sim_lanes_narrow = narrow;
        inf__quantiles(a, n, &p50, &p99);
        sim_lanes_narrow = false;
        double w50 = old_quantile(b, n, 0.5), w99 = old_quantile(b, n, 0.99);
        if (memcmp(&p50, &w50, sizeof p50) != 0 ||
            memcmp(&p99, &w99, sizeof p99))
          fail_msg("n %zu kind %d narrow %d: p50 %g (want %g), p99 %g (want "
                   "%g)",
                   n, kind, narrow, p50, w50, p99, w99);
      }
    }
  }
}

static void no_values_no_quantiles(void **state) {
  (void)state;
  double p50 = 0, p99 = 0;
  inf__quantiles(NULL, 0, &p50, &p99);
  assert_true(isnan(p50) && isnan(p99));
}

/* The interval's buffers (inf__interval_push) keep every TTFT and TPOT
 * in order across their growths, a push into room allocating nothing;
 * a growth that fails answers SIM_ENOMEM and keeps what was there. */
static void interval_pushes_keep_every_value(void **state) {
  (void)state;
  static const long fail_at[] = {0, 1, 2, 5};
  for (size_t f = 0; f < sizeof fail_at / sizeof *fail_at; f++) {
    test_alloc t;
    test_alloc_init(&t, fail_at[f]);
    interval iv = {0};
    size_t n = 0;
    for (size_t i = 0; i < 1000; i++) {
      long calls = t.calls;
      size_t cap = iv.cap;
      int rc = inf__interval_push(&t.hook, &iv, (double)i, -(double)i);
      if (rc != SIM_OK) {
        assert_int_equal(rc, SIM_ENOMEM);
        assert_int_equal(iv.n, n);
        break;
      }
      assert_int_equal(iv.n, ++n);
      if (i < cap)
        assert_int_equal(t.calls, calls);
    }
    for (size_t i = 0; i < n; i++) {
      assert_true(iv.ttft[i] == (double)i);
      assert_true(iv.tpot[i] == -(double)i);
    }
    if (fail_at[f] == 0)
      assert_int_equal(n, 1000);
    sim_free(&t.hook, iv.ttft);
    sim_free(&t.hook, iv.tpot);
    assert_int_equal(t.live, 0);
  }
}

int main(void) {
  struct CMUnitTest tests[15];
  size_t n = 0;
  TEST_ROWS(tests, n, quantiles_match_sorting, rows);
  TEST_ADD(tests, n, odd_values_keep_gsl_s_selection);
  TEST_ADD(tests, n, no_values_no_quantiles);
  TEST_ADD(tests, n, interval_pushes_keep_every_value);
  return _cmocka_run_group_tests("inference_quantiles", tests, n, NULL, NULL);
}
