/* test_inference_hist.c - the run-wide latency histograms
 * (inference_stats.c): inf__hist_add bins a value among edges found once,
 * without a log10, and must put every value in the bin log10 puts it in
 * (inf__hist_pos, truncated): checked for 64 doubles either side of every
 * edge, for values drawn over the whole range and beyond, and for the
 * values below the first bin and above the last. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_rng.h>

#include "inference_internal.h"

/* Adds x to h and checks the bin it went to against log10's. */
static void check_bin(histogram *h, double x) {
  uint64_t n = h->n, under = h->under, before = 0;
  double pos = x >= HIST_LO_S ? inf__hist_pos(x) : -1;
  size_t want = pos >= 0 && pos < HIST_BINS ? (size_t)pos : HIST_BINS;
  if (want < HIST_BINS)
    before = h->bin[want];
  inf__hist_add(h, x);
  assert_int_equal(h->n, n + 1);
  if (!(x >= HIST_LO_S)) {
    assert_int_equal(h->under, under + 1);
    return;
  }
  if (want < HIST_BINS && h->bin[want] != before + 1)
    fail_msg("%.17g (position %.17g) not counted in bin %zu", x, pos, want);
}

/* Every edge is where log10's position reaches its bin, and the 64
 * doubles either side of it land where log10 puts them. */
static void edges_are_log10s(void **state) {
  (void)state;
  histogram *h = malloc(sizeof *h);
  assert_non_null(h);
  inf__hist_init(h);
  for (int b = 1; b <= HIST_BINS; b++) {
    assert_true(inf__hist_pos(h->edge[b]) >= b);
    assert_true(inf__hist_pos(nextafter(h->edge[b], 0)) < b);
    double x = h->edge[b];
    for (int i = 0; i < 64; i++)
      x = nextafter(x, 0);
    for (int i = 0; i < 129; i++, x = nextafter(x, INFINITY))
      check_bin(h, x);
  }
  assert_true(isinf(h->edge[HIST_EDGES - 1]));
  free(h);
}

/* Values log-uniform from 1e-8 s to 1e5 s (under, every bin, over), and
 * the odd ones: 0, the first edge, NaN, +inf. */
static void values_land_where_log10_puts_them(void **state) {
  (void)state;
  histogram *h = malloc(sizeof *h);
  assert_non_null(h);
  inf__hist_init(h);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  assert_non_null(r);
  for (int i = 0; i < 300000; i++)
    check_bin(h, pow(10, -8 + 13 * gsl_rng_uniform(r)));
  static const double odd[] = {0, HIST_LO_S, 1e4, 0.5};
  for (size_t i = 0; i < sizeof odd / sizeof *odd; i++)
    check_bin(h, odd[i]);
  check_bin(h, NAN);
  check_bin(h, INFINITY);
  gsl_rng_free(r);
  free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(edges_are_log10s),
      cmocka_unit_test(values_land_where_log10_puts_them),
  };
  return cmocka_run_group_tests_name("inference_hist", tests, NULL, NULL);
}
