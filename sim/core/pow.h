/* pow.h - pow(x, y) with the bits of the C library's pow (glibc's), at
 * a third of its cost for y = 2.5 (the default gamma of the GPU power
 * model, docs/MODELS.md), on x86-64 with fma; elsewhere pow itself. */
#ifndef SIM_POW_H
#define SIM_POW_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "bits.h"

/* pow(x, y), the same bits. */
double sim_pow(double x, double y);

/* A double-double h + t (|t| < |h|) within 2^-100 of x^y, rounded once
 * to *r, with e = (h + t) - r exactly (Fast2Sum); whether pow(x, y)
 * returns *r. glibc's pow is within 0.54 ULP of x^y (its e_pow.c's
 * bound): where x^y is within near ULP (of r's binade, r not a power of
 * two) of r, near 0.45, every other double is over 0.54 ULP away, so pow
 * returns r (a closer bound on pow's error for some x and y, a larger
 * near: sim_pow25_near). False near a midpoint (one in ten at 0.45): the
 * caller asks pow itself. Every term must be normal. */
static inline bool sim_pow_rounded_near(double h, double t, double near,
                                        double *r) {
  double e = t - ((*r = h + t) - h);
  uint64_t b = sim_bits(*r);
  double ulp = sim_of_bits((b & 0x7ff0000000000000ULL) - (52ULL << 52));
  return (b & 0xfffffffffffffULL) != 0 && fabs(e) <= near * ulp;
}

/* sim_pow_rounded_near's near for any x and y, and for x^2.5 from
 * SIM_POW25_NEAR_FROM up (sim_pow25_near says why). */
#define SIM_POW_NEAR 0.45
#define SIM_POW25_NEAR 0.48
#define SIM_POW25_NEAR_FROM 0x1p-8

/* sim_pow_rounded_near at SIM_POW_NEAR, for any x and y. */
static inline bool sim_pow_rounded(double h, double t, double *r) {
  return sim_pow_rounded_near(h, t, SIM_POW_NEAR, r);
}

/* sim_pow_rounded_near's near for x^2.5. e_pow.c's 0.54 is 0.509 ULP (exp's
 * error, its final rounding's half among it) + |y log x| 1.3 2^-68 2^53
 * (log's relative error, carried through exp) at |y log x| = 1024 ln 2,
 * its worst. For x in [2^-8, 1], |2.5 log x| < 13.9 and the second term
 * is under 0.0006 ULP: pow is within 0.5096 ULP of x^2.5 there, and
 * every other double is over 0.52 ULP away where x^2.5 is within 0.48
 * ULP of r (the same margin, 0.01 ULP, as 0.45 under 0.54). Measured:
 * of 4e8 draws in [2^-8, 1], pow's answer was the other neighbour of
 * x^2.5 only 0.4913 ULP or more from r. 0.48 leaves pow to one draw in
 * 25 where 0.45 left it one in ten (the clocks of the cap's solve are
 * all in [phi_min, 1], phi_min about 0.1). */
static inline double sim_pow25_near(double x) {
  return x >= SIM_POW25_NEAR_FROM ? SIM_POW25_NEAR : SIM_POW_NEAR;
}

/* x^2.5 with pow's bits, for code built for fma (the target attribute)
 * on a CPU that has it. x^2.5 = x^2 sqrt(x) is taken as a double-double
 * within 2^-100 of it (each product's error exact through fma, the square
 * root's through x - s^2), rounded once where pow would return it
 * (sim_pow_rounded_near, sim_pow25_near). Near a midpoint (one in 25 in
 * [2^-8, 1], one in ten below) or elsewhere, pow
 * itself. [2^-200, 1] keeps every term normal. In the header so that a
 * hot loop built for fma takes it in line (the GPU model's cap solve): a
 * call there saves and restores every xmm register of its caller. */
#if defined(__GNUC__) && defined(__x86_64__)
#define SIM_POW_FMA 1
__attribute__((target("fma"))) static inline double sim_pow25_fma(double x) {
  if (!(x >= 0x1p-200 && x <= 1))
    return pow(x, 2.5);
  double s = sqrt(x), q = s * s;
  double s_lo = ((x - q) - __builtin_fma(s, s, -q)) / (2 * s);
  double p = x * x, p_err = __builtin_fma(x, x, -p);
  double h = p * s, h_err = __builtin_fma(p, s, -h);
  double t = h_err + (p * s_lo + p_err * s), r;
  return sim_pow_rounded_near(h, t, sim_pow25_near(x), &r) ? r
                                                          : pow(x, 2.5);
}

#include <immintrin.h>

/* sim_pow25_fma four lanes a register (AVX2 and fma), for a caller that
 * solves four caps at once: each lane the scalar's operations (the same
 * correctly rounded adds, products, quotient, square root and fmas,
 * sim_pow_rounded's test on the bits), the rounded value in *r. Returns
 * the lanes (bit i, lane i) whose answer is pow's instead: outside
 * [2^-200, 1] or near a midpoint, where the caller asks pow(x, 2.5) of
 * the lanes it needs (sim_pow25_fma4 does it for all). */
__attribute__((target("avx2,fma"), always_inline)) static inline int
sim__pow25_fma4_lanes(__m256d x, __m256d *r, bool mid) {
  const __m256d two = _mm256_set1_pd(2);
  __m256d in = mid ? _mm256_castsi256_pd(_mm256_set1_epi64x(-1))
                   : _mm256_and_pd(
                         _mm256_cmp_pd(x, _mm256_set1_pd(0x1p-200), _CMP_GE_OQ),
                         _mm256_cmp_pd(x, _mm256_set1_pd(1), _CMP_LE_OQ));
  __m256d s = _mm256_sqrt_pd(x), q = _mm256_mul_pd(s, s);
  __m256d s_lo = _mm256_div_pd(
      _mm256_sub_pd(_mm256_sub_pd(x, q), _mm256_fmsub_pd(s, s, q)),
      _mm256_mul_pd(two, s));
  __m256d p = _mm256_mul_pd(x, x), p_err = _mm256_fmsub_pd(x, x, p);
  __m256d h = _mm256_mul_pd(p, s), h_err = _mm256_fmsub_pd(p, s, h);
  __m256d t = _mm256_add_pd(
      h_err, _mm256_add_pd(_mm256_mul_pd(p, s_lo), _mm256_mul_pd(p_err, s)));
  __m256d sum = _mm256_add_pd(h, t);
  __m256d e = _mm256_sub_pd(t, _mm256_sub_pd(sum, h));
  __m256i b = _mm256_castpd_si256(sum);
  __m256d ulp = _mm256_castsi256_pd(_mm256_sub_epi64(
      _mm256_and_si256(b, _mm256_set1_epi64x(0x7ff0000000000000LL)),
      _mm256_set1_epi64x(52LL << 52)));
  __m256i mant = _mm256_and_si256(b, _mm256_set1_epi64x(0xfffffffffffffLL));
  __m256d whole = _mm256_castsi256_pd(
      _mm256_cmpeq_epi64(mant, _mm256_setzero_si256())); /* a power of 2 */
  /* sim_pow25_near's, lane by lane */
  __m256d bound =
      mid ? _mm256_set1_pd(SIM_POW25_NEAR)
          : _mm256_blendv_pd(
                _mm256_set1_pd(SIM_POW_NEAR), _mm256_set1_pd(SIM_POW25_NEAR),
                _mm256_cmp_pd(x, _mm256_set1_pd(SIM_POW25_NEAR_FROM),
                              _CMP_GE_OQ));
  __m256d near = _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), e),
                               _mm256_mul_pd(bound, ulp), _CMP_LE_OQ);
  *r = sum;
  return ~_mm256_movemask_pd(_mm256_andnot_pd(whole, _mm256_and_pd(in, near))) &
         0xf;
}

__attribute__((target("avx2,fma"))) static inline int
sim_pow25_fma4_try(__m256d x, __m256d *r) {
  return sim__pow25_fma4_lanes(x, r, false);
}

/* sim_pow25_fma4_try for lanes known to be in [2^-8, 1] (a cap's solve
 * inside its bracket), the same lanes and bits there: the range's tests
 * left out. */
__attribute__((target("avx2,fma"))) static inline int
sim_pow25_fma4_try_mid(__m256d x, __m256d *r) {
  return sim__pow25_fma4_lanes(x, r, true);
}

/* r with pow(x, 2.5) in the lanes of pow_lanes (bit i, lane i): what
 * sim_pow25_fma4_try left to pow. */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256d
sim_pow25_into(__m256d x, __m256d r, int pow_lanes) {
  double xs[4], rs[4];
  _mm256_storeu_pd(xs, x);
  _mm256_storeu_pd(rs, r);
  for (int i = 0; i < 4; i++)
    if (pow_lanes >> i & 1)
      rs[i] = pow(xs[i], 2.5);
  return _mm256_loadu_pd(rs);
}

/* sim_pow25_fma of each lane, the same bits. */
__attribute__((target("avx2,fma"))) static inline __m256d
sim_pow25_fma4(__m256d x) {
  __m256d r;
  int pow_lanes = sim_pow25_fma4_try(x, &r);
  return pow_lanes != 0 ? sim_pow25_into(x, r, pow_lanes) : r;
}
#endif

#endif
