/* test_inference_hist.c - the latency histograms' one binning
 * (inference_internal.h's inf__hist_bin, which both the request level's
 * inf__hist_add and the fluid mode's histograms use): a value's bin is
 * guessed from its bits and settled by one edge of a table written once
 * (inference_hist_edges.c, by tools/hist_edges.py), without a log10, and
 * must be the bin log10 puts it in (inf__hist_pos, truncated). Checked:
 * every edge of the table against log10, the 64 doubles either side of
 * every edge, values drawn over the whole range and beyond, a dense sweep
 * of every bin, and the values below the first bin and above the last. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_rng.h>

#include "inference_internal.h"

/* The bin log10 puts x in (HIST_BINS: above the top bin; -1: below the
 * first). */
static long log10_bin(double x) {
  if (!(x >= HIST_LO_S))
    return -1;
  double pos = inf__hist_pos(x);
  return pos < HIST_BINS ? (long)pos : HIST_BINS;
}

/* Adds x to h and checks the bin it went to against log10's. */
static void check_bin(histogram *h, double x) {
  uint64_t n = h->n, under = h->under, before = 0;
  long want = log10_bin(x);
  if (want >= 0 && want < HIST_BINS)
    before = h->bin[want];
  inf__hist_add(h, x);
  assert_int_equal(h->n, n + 1);
  if (want < 0) {
    assert_int_equal(h->under, under + 1);
    return;
  }
  if (want < HIST_BINS && h->bin[want] != before + 1)
    fail_msg("%.17g (position %.17g) not counted in bin %ld", x,
             inf__hist_pos(x), want);
}

/* x's bin by inf__hist_bin, capped at HIST_BINS, against log10's. */
static void same_bin(double x) {
  size_t got = inf__hist_bin(x);
  long want = log10_bin(x);
  if ((got < HIST_BINS ? (long)got : HIST_BINS) != want)
    fail_msg("x %.17g: bin %zu, log10's %ld", x, got, want);
}

/* Every edge of the table is where log10's position reaches its bin, and
 * the 64 doubles either side of it land where log10 puts them. */
static void edges_are_log10s(void **state) {
  (void)state;
  histogram *h = malloc(sizeof *h);
  assert_non_null(h);
  inf__hist_init(h);
  assert_true(inf__hist_edge[0] == HIST_LO_S);
  for (int b = 1; b <= HIST_BINS; b++) {
    const double e = inf__hist_edge[b];
    assert_true(e > inf__hist_edge[b - 1]);
    assert_true(inf__hist_pos(e) >= b);
    assert_true(inf__hist_pos(nextafter(e, 0)) < b);
    double x = e;
    for (int i = 0; i < 64; i++)
      x = nextafter(x, 0);
    for (int i = 0; i < 129; i++, x = nextafter(x, INFINITY))
      check_bin(h, x);
  }
  assert_true(isinf(inf__hist_edge[HIST_BINS + 1]));
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
  static const double odd[] = {0, HIST_LO_S, 1e4, 0.5, 0x1p-20, 0x1p13};
  for (size_t i = 0; i < sizeof odd / sizeof *odd; i++)
    check_bin(h, odd[i]);
  check_bin(h, NAN);
  check_bin(h, INFINITY);
  gsl_rng_free(r);
  free(h);
}

/* Each bin at 1,000 points across it, each binary order (where the
 * guess's quadratic restarts) at its first doubles, and a million values
 * log-uniform from 1e-6 s to 1e5 s, past the last bin and its doubles
 * to the largest: where the guess is furthest from log2, the one edge
 * compared must still settle it. */
static void every_bin_swept(void **state) {
  (void)state;
  for (int b = 0; b < HIST_BINS + 100; b++)
    for (int i = 0; i < 1000; i++)
      same_bin(HIST_LO_S * pow(10, (b + i / 1000.0) / HIST_PER_DECADE));
  for (int e = -19; e <= 40; e++) {
    double x = ldexp(1, e);
    for (int u = 0; u < 4; u++, x = nextafter(x, INFINITY))
      same_bin(x);
  }
  uint64_t r = 88172645463325252u;
  for (int i = 0; i < 1000000; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17; /* xorshift64 */
    same_bin(HIST_LO_S * pow(10, 11 * (double)(r >> 11) / 0x1p53));
  }
  same_bin(0x1.fffffffffffffp+1023);
  assert_true(inf__hist_bin(INFINITY) >= HIST_BINS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(edges_are_log10s),
      cmocka_unit_test(values_land_where_log10_puts_them),
      cmocka_unit_test(every_bin_swept),
  };
  return cmocka_run_group_tests_name("inference_hist", tests, NULL, NULL);
}
