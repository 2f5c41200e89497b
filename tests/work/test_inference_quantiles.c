/* test_inference_quantiles.c - the interval's p50 and p99
 * (inference_stats.c, inf__quantiles) are gsl_stats_quantile_from_sorted_data's
 * on a sorted copy, bit for bit: for every size from 1 to 300 and some
 * larger, values distinct, with many ties, and all equal. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "inference_internal.h"

typedef struct spread_row {
  const char *name;
  unsigned levels; /* values drawn from this many; 0: continuous */
} spread_row;

static const spread_row rows[] = {
    {"distinct", 0}, {"many ties", 7}, {"all equal", 1}};

static void check(const double *x, size_t n) {
  double *work = malloc(n * sizeof *work), *sorted = malloc(n * sizeof *sorted);
  assert_non_null(work);
  assert_non_null(sorted);
  memcpy(work, x, n * sizeof *x);
  memcpy(sorted, x, n * sizeof *x);
  gsl_sort(sorted, 1, n);
  double p50, p99;
  inf__quantiles(work, n, &p50, &p99);
  double w50 = gsl_stats_quantile_from_sorted_data(sorted, 1, n, 0.5);
  double w99 = gsl_stats_quantile_from_sorted_data(sorted, 1, n, 0.99);
  if (memcmp(&p50, &w50, sizeof p50) != 0 || memcmp(&p99, &w99, sizeof p99))
    fail_msg("n %zu: p50 %.17g (want %.17g), p99 %.17g (want %.17g)", n, p50,
             w50, p99, w99);
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
      x[i] = row->levels == 0
                 ? -log(gsl_rng_uniform_pos(r))
                 : 0.25 * (double)gsl_rng_uniform_int(r, row->levels);
    check(x, m);
  }
  free(x);
  gsl_rng_free(r);
}

static void no_values_no_quantiles(void **state) {
  (void)state;
  double p50 = 0, p99 = 0;
  inf__quantiles(NULL, 0, &p50, &p99);
  assert_true(isnan(p50) && isnan(p99));
}

int main(void) {
  struct CMUnitTest tests[8];
  size_t n = 0;
  TEST_ROWS(tests, n, quantiles_match_sorting, rows);
  TEST_ADD(tests, n, no_values_no_quantiles);
  return _cmocka_run_group_tests("inference_quantiles", tests, n, NULL, NULL);
}
