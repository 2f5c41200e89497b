/* test_pow.c - sim_pow against the C library's pow, bit for bit: the
 * fast path's exact cases (0.25^2.5 = 2^-5), powers of two, its range's
 * ends and what is outside it (pow itself), other exponents, and spans
 * of the clocks the GPU model's cap solve and the efficiency policy ask;
 * x^2.5 where it is 0.45 to 0.48 ULP from its nearest double in [2^-8,
 * 1] (sim_pow25_near's band, where pow's closer bound lets sim_pow
 * answer), pow's there too. */
#include "test_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pow.h"

static double draw(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0;
}

/* sim_pow against pow at y: the points pts, then n x drawn in [lo, hi]. */
typedef struct pow_row {
  const char *name;
  double y, lo, hi;
  int n;
  const double *pts;
  size_t npts;
} pow_row;

static const double pow_edges[] = {
    0.25, 1,    0.0625, 0x1p-200, 0x1.fffffffffffffp-201, 0x1.0000000000001p+0,
    0,    -0.5, NAN,    INFINITY};

static const pow_row pow_rows[] = {
    {"pow: exact cases and the range's ends", 2.5, 0, 0, 0, pow_edges, 10},
    {"pow: another y is pow's", 2.25, 0, 0, 0, pow_edges, 10},
    {"pow: the cap solve's clocks", 2.5, 0.05, 1, 200000, NULL, 0},
    {"pow: the range's low end", 2.5, 0x1p-200, 0x1p-100, 20000, NULL, 0},
    {"pow: near 1", 2.5, 0.9, 1, 20000, NULL, 0},
    {"pow: another gamma", 2.75, 0.05, 1, 2000, NULL, 0},
    {"pow: above 1", 2.5, 1, 4, 2000, NULL, 0},
};

static void pow_is_glibcs(void **state) {
  const pow_row *row = *state;
  uint64_t s = 17;
  for (size_t i = 0; i < row->npts + (size_t)row->n; i++) {
    double u = draw(&s);
    double x = i < row->npts ? row->pts[i] : row->lo + (row->hi - row->lo) * u;
    double want = pow(x, row->y), got = sim_pow(x, row->y);
    if (memcmp(&want, &got, sizeof got) != 0)
      fail_msg("pow(%a, %g): %a, pow %a", x, row->y, got, want);
  }
}

#ifdef SIM_POW_FMA
/* sim_pow25_fma4 against sim_pow25_fma lane by lane, to the bit: the
 * points (each in every lane, beside three drawn), then n sets of four
 * drawn in [lo, hi] (a tenth near a midpoint: pow's lanes among others);
 * where all four are in [2^-8, 1], sim_pow25_fma4_try_mid's lanes and
 * values sim_pow25_fma4_try's. */
static const double pow4_edges[] = {0.25,
                                    1,
                                    0x1.fffffffffffffp-1,
                                    0.0625,
                                    0.5,
                                    0x1p-200,
                                    0x1.fffffffffffffp-201,
                                    0x1.0000000000001p-200,
                                    0x1.0000000000001p+0,
                                    0,
                                    -0.0,
                                    -0.5,
                                    0x1p-1074,
                                    0x1p-1022,
                                    NAN,
                                    -NAN,
                                    INFINITY,
                                    -INFINITY,
                                    2,
                                    0.1,
                                    0.3,
                                    0.35};

static const pow_row pow4_rows[] = {
    {"pow25_fma4: the edges in each lane", 2.5, 0.05, 1, 0, pow4_edges, 22},
    {"pow25_fma4: the cap solve's clocks", 2.5, 0.05, 1, 100000, NULL, 0},
    {"pow25_fma4: the range's low end", 2.5, 0x1p-200, 0x1p-100, 10000, NULL,
     0},
    {"pow25_fma4: near 1", 2.5, 0.9, 1, 10000, NULL, 0},
    {"pow25_fma4: over the range's ends", 2.5, -0.5, 1.5, 10000, NULL, 0},
};

/* Whether sim_pow25_fma(x) is pow's answer rather than its own: its
 * steps to sim_pow_rounded, written again (a lane's choice is not seen
 * in its answer where pow and the rounding agree). */
__attribute__((target("fma"))) static bool scalar_asks_pow(double x) {
  if (!(x >= 0x1p-200 && x <= 1))
    return true;
  double s = sqrt(x), q = s * s;
  double s_lo = ((x - q) - __builtin_fma(s, s, -q)) / (2 * s);
  double p = x * x, p_err = __builtin_fma(x, x, -p);
  double h = p * s, h_err = __builtin_fma(p, s, -h);
  double t = h_err + (p * s_lo + p_err * s), r;
  return !sim_pow_rounded_near(h, t, sim_pow25_near(x), &r);
}

__attribute__((target("avx2,fma"))) static void pow4_check(const double x[4]) {
  double got[4];
  __m256d r;
  int pow_lanes = sim_pow25_fma4_try(_mm256_loadu_pd(x), &r);
  _mm256_storeu_pd(got, sim_pow25_fma4(_mm256_loadu_pd(x)));
  for (int k = 0; k < 4; k++) {
    double want = sim_pow25_fma(x[k]);
    if (memcmp(&want, &got[k], sizeof want) != 0)
      fail_msg("lane %d, x %a: %a, scalar %a", k, x[k], got[k], want);
    if ((pow_lanes >> k & 1) != scalar_asks_pow(x[k]))
      fail_msg("lane %d, x %a: pow asked %d", k, x[k], pow_lanes >> k & 1);
  }
  bool mid = true;
  for (int k = 0; k < 4; k++)
    mid = mid && x[k] >= 0x1p-8 && x[k] <= 1;
  if (!mid)
    return;
  __m256d r_mid;
  int mid_lanes = sim_pow25_fma4_try_mid(_mm256_loadu_pd(x), &r_mid);
  if (mid_lanes != pow_lanes ||
      memcmp(&r_mid, &r, sizeof r) != 0) /* _mid: the same there */
    fail_msg("x %a %a %a %a: _mid's lanes %x, not %x", x[0], x[1], x[2], x[3],
             mid_lanes, pow_lanes);
}

static void pow4_is_scalars(void **state) {
  const pow_row *row = *state;
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    skip();
  uint64_t s = 29;
  for (size_t i = 0; i < row->npts * 4 + (size_t)row->n; i++) {
    double x[4];
    for (int k = 0; k < 4; k++)
      x[k] = row->lo + (row->hi - row->lo) * draw(&s);
    if (i < row->npts * 4) /* point i / 4 in lane i % 4 */
      x[i % 4] = row->pts[i / 4];
    pow4_check(x);
  }
}
#endif


#ifdef SIM_POW_FMA
/* The distance of x^2.5 from its nearest double r, in r's ULPs, by
 * sim_pow25_fma's double-double (within 2^-100 of x^2.5); r in *r. */
__attribute__((target("fma"))) static double ulps_off(double x, double *r) {
  double s = sqrt(x), q = s * s;
  double s_lo = ((x - q) - __builtin_fma(s, s, -q)) / (2 * s);
  double p = x * x, p_err = __builtin_fma(x, x, -p);
  double h = p * s, h_err = __builtin_fma(p, s, -h);
  double t = h_err + (p * s_lo + p_err * s);
  double e = t - ((*r = h + t) - h);
  uint64_t b = sim_bits(*r);
  return fabs(e) / sim_of_bits((b & 0x7ff0000000000000ULL) - (52ULL << 52));
}

/* Drawn x in [2^-8, 1] until 20,000 of them are in the band (0.45 to
 * sim_pow25_near's ULP from r): there sim_pow answers r itself, and it
 * is pow's. */
static void pow_band_is_glibcs(void **state) {
  (void)state;
  if (!__builtin_cpu_supports("fma"))
    skip();
  uint64_t s = 5;
  int in_band = 0;
  while (in_band < 20000) {
    double x = 0x1p-8 + (1 - 0x1p-8) * draw(&s), r;
    double d = ulps_off(x, &r);
    if (!(d > 0.45 && d <= sim_pow25_near(x)))
      continue;
    in_band++;
    double want = pow(x, 2.5), got = sim_pow(x, 2.5);
    if (memcmp(&want, &got, sizeof got) != 0 || memcmp(&r, &got, sizeof r) != 0)
      fail_msg("pow(%a, 2.5), %.4f ULP off: %a, pow %a", x, d, got, want);
  }
}
#endif

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, pow_is_glibcs, pow_rows);
#ifdef SIM_POW_FMA
  TEST_ROWS(tests, n, pow4_is_scalars, pow4_rows);
  TEST_ADD(tests, n, pow_band_is_glibcs);
#endif
  return _cmocka_run_group_tests("pow", tests, n, NULL, NULL);
}
