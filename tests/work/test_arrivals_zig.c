/* test_arrivals_zig.c - the arrivals' ziggurats draw their laws: the
 * exponential's and the normal's draws, their tails beyond the base strip
 * included, against the exact CDFs by a chi-square test on a fixed seed
 * at significance 0.001, which tables broken on purpose (a wrong strip, a
 * missing tail) fail; and the rounded lognormal lengths against their
 * exact PMFs and arr_length_moments' mean (or the exact one); and a
 * length's tokens without libm's exp (arr_exp_tokens) the same as with
 * it, at the half-integers' logs and around them above all. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "arrivals.h"
#include "arrivals_exp.h"
#include "arrivals_zig.h"
#include "rng.h"

#define ALPHA 0.001 /* the tests' significance */
#define TWO_24 16777216u

/* Marsaglia & Tsang 2000's constants, as arrivals_zig.c's. */
#define EXP_R 7.69711747013104972
#define EXP_V 3.949659822581572e-3
#define NORMAL_R 3.442619855899
#define NORMAL_V 9.91256303526217e-3

enum { MAX_EDGES = 64 };

/* Bins (-inf, e[0]), [e[0], e[1]), ..., [e[n - 1], inf) of a law whose
 * CDF is cdf(x, p), and their counts. */
typedef struct bins {
  double e[MAX_EDGES];
  int n;
  double count[MAX_EDGES + 1];
  double (*cdf)(double x, const double *p);
  double p[2];
} bins;

static void add(bins *b, double x) {
  int lo = 0, hi = b->n; /* the first edge above x */
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (x < b->e[mid])
      hi = mid;
    else
      lo = mid + 1;
  }
  b->count[lo]++;
}

/* The chi-square test of the counts (of draws in all): its p-value. */
static double chi_square_p(const bins *b, double draws) {
  double chi2 = 0, below = 0;
  for (int i = 0; i <= b->n; i++) {
    double above = i < b->n ? b->cdf(b->e[i], b->p) : 1;
    double want = draws * (above - below);
    assert_true(want >= 5); /* the test's approximation holds */
    chi2 += (b->count[i] - want) * (b->count[i] - want) / want;
    below = above;
  }
  return gsl_cdf_chisq_Q(chi2, b->n);
}

static void sort_edges(bins *b) {
  for (int i = 1; i < b->n; i++)
    for (int k = i; k > 0 && b->e[k - 1] > b->e[k]; k--) {
      double t = b->e[k];
      b->e[k] = b->e[k - 1];
      b->e[k - 1] = t;
    }
}

static double exponential_cdf(double x, const double *p) {
  (void)p;
  return x <= 0 ? 0 : -expm1(-x);
}

static double normal_cdf(double x, const double *p) {
  (void)p;
  return gsl_cdf_ugaussian_P(x);
}

/* 40 bins of equal probability, the last split at and beyond the tail's
 * start r (where a table's last strip ends) and far into the tail. */
static void exponential_bins(bins *b) {
  *b = (bins){.cdf = exponential_cdf};
  for (int i = 1; i < 40; i++)
    b->e[b->n++] = -log1p(-i / 40.0);
  static const double tail[] = {EXP_R - 0.4, EXP_R, EXP_R + 0.5, EXP_R + 1.5};
  for (size_t i = 0; i < N_OF(tail); i++)
    b->e[b->n++] = tail[i];
}

static void normal_bins(bins *b) {
  *b = (bins){.cdf = normal_cdf};
  for (int i = 1; i < 40; i++)
    b->e[b->n++] = gsl_cdf_ugaussian_Pinv(i / 40.0);
  static const double tail[] = {NORMAL_R - 0.3, NORMAL_R, NORMAL_R + 0.3,
                                NORMAL_R + 0.8};
  for (size_t i = 0; i < N_OF(tail); i++) {
    b->e[b->n++] = tail[i];
    b->e[b->n++] = -tail[i];
  }
  sort_edges(b);
}

/* Deliberately broken tables, which the test must see. */
static void none(arr_zig *z) { (void)z; }
/* The base strip takes all its points as its rectangle: no tail. */
static void no_tail(arr_zig *z) { z->k[0] = TWO_24; }
/* The strip next to the base as wide as the base. */
static void wide_strip(arr_zig *z) { z->w[z->mask] = z->w[0]; }
/* A strip's wedge taken whole, as if it lay under the density. */
static void whole_wedge(arr_zig *z) { z->k[z->mask] = TWO_24; }
/* The strips' common area 1% off: every edge of the table. */
static void wrong_area(arr_zig *z) {
  if (z->mask == 255)
    arr_zig_fill_exponential(z, 256, EXP_R, EXP_V * 1.01);
  else
    arr_zig_fill_normal(z, 128, NORMAL_R, NORMAL_V * 1.01);
}

typedef struct zig_row {
  const char *name;
  bool normal;
  void (*breaks)(arr_zig *z);
  bool passes;
} zig_row;

static const zig_row zig_rows[] = {
    {"exponential", false, none, true},
    {"exponential without its tail", false, no_tail, false},
    {"exponential with a wide strip", false, wide_strip, false},
    {"exponential with a wedge taken whole", false, whole_wedge, false},
    {"exponential with the wrong area", false, wrong_area, false},
    {"normal", true, none, true},
    {"normal without its tail", true, no_tail, false},
    {"normal with a wide strip", true, wide_strip, false},
    {"normal with a wedge taken whole", true, whole_wedge, false},
    {"normal with the wrong area", true, wrong_area, false},
};

/* A row's table, broken as it says, draws its law or fails the test. */
static void ziggurat_draws_its_law(void **state) {
  const zig_row *r = *state;
  enum { N = 4000000 };
  arr_zig z;
  bins b;
  if (r->normal) {
    arr_zig_fill_normal(&z, 128, NORMAL_R, NORMAL_V);
    normal_bins(&b);
  } else {
    arr_zig_fill_exponential(&z, 256, EXP_R, EXP_V);
    exponential_bins(&b);
  }
  r->breaks(&z);
  gsl_rng *g = rng_stream_create(20001, ARR_RNG_KIND, 3, ARR_RNG_TIMES);
  assert_non_null(g);
  arr_taus *t = gsl_rng_state(g);
  for (int i = 0; i < N; i++)
    add(&b, r->normal ? arr_zig_normal(&z, t) : arr_zig_exponential(&z, t));
  double p = chi_square_p(&b, N);
  print_message("%s: chi-square p = %.3g\n", r->name, p);
  assert_true((p >= ALPHA) == r->passes);
  rng_stream_destroy(g);
}

/* P(length < x) for a lognormal of mean m and sigma s: x at half tokens
 * gives the rounded lengths' PMF summed. */
static double length_cdf(double x, const double *p) {
  double mu = log(p[0]) - 0.5 * p[1] * p[1];
  return gsl_cdf_ugaussian_P((log(x) - mu) / p[1]);
}

/* Edges at the half tokens nearest the law's 1/30 quantiles (first 1.5:
 * below it all is 1 token), merged where they round together. */
static void length_bins(bins *b, const arr_length *l) {
  *b = (bins){.cdf = length_cdf, .p = {l->mean, l->sigma}};
  double mu = log(l->mean) - 0.5 * l->sigma * l->sigma;
  for (int i = 1; i < 30; i++) {
    double q = exp(mu + l->sigma * gsl_cdf_ugaussian_Pinv(i / 30.0));
    double e = fmax(1.5, floor(q) + 0.5);
    if (b->n == 0 || e > b->e[b->n - 1])
      b->e[b->n++] = e;
  }
}

/* The rounded lengths' exact mean, 1 + sum over n >= 2 of P(X >= n -
 * 1/2), for a law whose tail is short. */
static double exact_mean(const arr_length *l) {
  const double p[2] = {l->mean, l->sigma};
  double mean = 1;
  for (double n = 2; n < 1e6; n++)
    mean += 1 - length_cdf(n - 0.5, p);
  return mean;
}

/* moments: whether arr_length_moments' mean (rounding adds nothing on
 * average) holds to the test's precision; the short lengths' is off by
 * 1%, and they are tested against their exact mean. */
typedef struct length_row {
  const char *name;
  double mean, sigma;
  bool moments;
} length_row;

static const length_row length_rows[] = {
    {"bench-10k's prompts", 1155, 0.99, true},
    {"bench-10k's outputs", 211, 0.86, true},
    {"short, most of them one token", 2, 1, false},
    {"wide, far into the normal's tails", 300, 2.5, true},
    {"narrow", 50, 0.05, true},
};

/* Each row's lengths on the output stream, drawn after the row before's
 * on the same generator (its kept mu follows the change): their counts
 * against the exact PMF, and their mean within four standard errors of
 * arr_length_moments' (or the exact mean; the variance is the moments'). */
static void lengths_draw_their_law(void **state) {
  (void)state;
  enum { N = 400000 };
  arr_config c;
  memset(&c, 0, sizeof c);
  sim_error err = {0};
  assert_int_equal(
      scn_bind_string("arr.yaml", "rate: 10\n", &arr_schema, &c, NULL, &err),
      SIM_OK);
  arr_gen *g = arr_create(&c, NULL, 77, 0, NULL, &err);
  assert_non_null(g);
  for (size_t k = 0; k < N_OF(length_rows); k++) {
    const length_row *r = &length_rows[k];
    c.output = (arr_length){ARR_LOGNORMAL, r->mean, r->sigma};
    bins b;
    length_bins(&b, &c.output);
    double sum = 0, t;
    int64_t p, o;
    for (int i = 0; i < N; i++) {
      assert_true(arr_next(g, &t, &p, &o));
      assert_true(o >= 1);
      add(&b, (double)o);
      sum += (double)o;
    }
    double mean, mean_sq, one;
    arr_length_moments(&c.output, &mean, &mean_sq, &one);
    if (!r->moments)
      mean = exact_mean(&c.output);
    double se = sqrt((mean_sq - mean * mean) / N), pv = chi_square_p(&b, N);
    print_message("%s: chi-square p = %.3g over %d bins, mean %.4f (want "
                  "%.4f +- %.4f)\n",
                  r->name, pv, b.n + 1, sum / N, mean, se);
    assert_true(pv >= ALPHA);
    assert_close(sum / N, mean, 0, 4 * se);
  }
  arr_destroy(g);
  scn_release(&arr_schema, &c);
}

/* arr_exp_tokens(y) against arr_tokens(exp(y)), *fast counting the
 * draws the estimate decided alone. */
static void same_tokens(double y, long *fast) {
  bool sure = false;
  if (y >= 0.25 && y <= 23)
    (void)arr_exp_tokens_near(y, &sure);
  *fast += sure;
  int64_t want = arr_tokens(exp(y)), got = arr_exp_tokens(y);
  if (got != want)
    fail_msg("y = %a: %lld tokens, exp's %lld", y, (long long)got,
             (long long)want);
}

/* The table is 2^(j / 64) to the nearest double (half an ULP, and a
 * little for exp2l's own rounding). */
static void exp_table_is_exact(void **state) {
  (void)state;
  for (int j = 0; j < 64; j++) {
    long double want = exp2l((long double)j / 64);
    long double err = fabsl((long double)arr_exp2_64ths[j] - want);
    assert_true(err <= 0x1.02p-53L * want);
  }
}

/* Where the estimate and exp could part, at a half-integer's log: 16
 * doubles either side of each, for counts to 2^16 and a sample beyond,
 * and 10^6 draws of y over the range and past its ends. */
static void exp_tokens_as_exp_rounds(void **state) {
  (void)state;
  long fast = 0, n = 0;
  for (double h = 0.5; h < 0x1p42; h = h < 0x1p16 ? h + 1 : h * 1.37 + 0.5) {
    double y = log(h);
    for (int i = 0; i < 16; i++)
      y = nextafter(y, -INFINITY);
    for (int i = 0; i < 33; i++, n++, y = nextafter(y, INFINITY))
      same_tokens(y, &fast);
  }
  print_message("at the half-integers' logs: %ld of %ld decided alone\n",
                fast, n);
  uint64_t x = 88172645463325252u; /* xorshift64 */
  long fast_u = 0;
  for (int i = 0; i < 1000000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    same_tokens(-2 + 42 * (double)(x >> 11) * 0x1p-53, &fast_u);
  }
  /* about 108 in 200 of them in the estimate's range, [1/4, 23], and
   * nearly all of those decided by it */
  print_message("uniform over [-2, 40): %ld of 1000000 decided alone\n",
                fast_u);
  assert_true(fast_u > 525000);
  const double odd[] = {NAN, INFINITY, -INFINITY, 0.25, 23, 36,
                        0x1.0000000000001p-2, 0x1.6ffffffffffffp+4,
                        -0.0, 0, 800, -800};
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
    same_tokens(odd[i], &fast);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, ziggurat_draws_its_law, zig_rows);
  TEST_ADD(tests, n, lengths_draw_their_law);
  TEST_ADD(tests, n, exp_table_is_exact);
  TEST_ADD(tests, n, exp_tokens_as_exp_rounds);
  return _cmocka_run_group_tests("arrivals_zig", tests, n, NULL, NULL);
}
