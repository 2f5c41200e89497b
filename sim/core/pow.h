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

/* sim_pow_rounded_near lane by lane (near in bound's lanes), of the
 * lanes in `in` (all ones: taken): the rounded h + t in *r; returns the
 * lanes (bit i, lane i) whose answer is pow's instead. */
__attribute__((target("avx2,fma"), always_inline)) static inline int
sim__pow_rounded4(__m256d h, __m256d t, __m256d bound, __m256d in,
                  __m256d *r) {
  __m256d sum = _mm256_add_pd(h, t);
  __m256d e = _mm256_sub_pd(t, _mm256_sub_pd(sum, h));
  __m256i b = _mm256_castpd_si256(sum);
  __m256d ulp = _mm256_castsi256_pd(_mm256_sub_epi64(
      _mm256_and_si256(b, _mm256_set1_epi64x(0x7ff0000000000000LL)),
      _mm256_set1_epi64x(52LL << 52)));
  __m256i mant = _mm256_and_si256(b, _mm256_set1_epi64x(0xfffffffffffffLL));
  __m256d whole = _mm256_castsi256_pd(
      _mm256_cmpeq_epi64(mant, _mm256_setzero_si256())); /* a power of 2 */
  __m256d near = _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), e),
                               _mm256_mul_pd(bound, ulp), _CMP_LE_OQ);
  *r = sum;
  return ~_mm256_movemask_pd(_mm256_andnot_pd(whole, _mm256_and_pd(in, near))) &
         0xf;
}

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
  /* sim_pow25_near's, lane by lane */
  __m256d bound =
      mid ? _mm256_set1_pd(SIM_POW25_NEAR)
          : _mm256_blendv_pd(
                _mm256_set1_pd(SIM_POW_NEAR), _mm256_set1_pd(SIM_POW25_NEAR),
                _mm256_cmp_pd(x, _mm256_set1_pd(SIM_POW25_NEAR_FROM),
                              _CMP_GE_OQ));
  return sim__pow_rounded4(h, t, bound, in, r);
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

/* x^0.625 = x^(5/8) with pow's bits, four lanes a register (AVX2 and
 * fma): the efficiency policy's raw clock b^(1 / (gamma - c)) at its
 * defaults (gamma 2.5, c 0.9: the exponent rounds to 0.625 exactly),
 * some two in three of its pow calls. One lane costs what libm's pow
 * does (three dependent square roots); four lanes cost about one.
 * s1 = sqrt(x), s2 = sqrt(s1), s3 = sqrt(s2), each correctly rounded,
 * so r_i = a_i - s_i^2 (a_i its operand) is exact through fma and
 * d_i = r_i / (2 s_i^2) is within 2^-53 (1 + 2^-50) of 0 (|sqrt(a) - s|
 * <= ulp(s) / 2 <= 2^-53 s). Then sqrt(a_i) = s_i (1 + d_i) within
 * d_i^2 / 2 <= 2^-106 and
 *   x^(5/8) = x^(1/2) x^(1/8) = s1 s3 (1 + d1)^(5/4) (1 + d2)^(1/2)
 *   (1 + d3) = s1 s3 (1 + E), E = 1.25 d1 + 0.5 d2 + d3,
 * within 2^-102 (the squares and cross products of the d_i, 2.75^2 2^-106
 * / 2 and the three roots' 2^-106 carried). The d_i are taken as r_i
 * times 1 / (2 s_i^2) approximated by 0.5 / x, s1 (0.5 / x) and s2 s1
 * (0.5 / x) (s_i^2 is s_(i-1), and x, to within 2^-52 each): three, four
 * and five roundings or approximations of 2^-52 at most, so each d_i
 * within 2^-49 of itself, E within 2.75 2^-53 2^-49 < 2^-100 plus its own
 * three roundings (2^-104). With h + h_err = s1 s3 exactly (fma), h + t,
 * t = h_err + h E, leaves out h_err E (2^-104) and rounds twice (2^-104
 * each): h + t is within 2^-98 of x^(5/8), relatively. sim_pow_rounded's
 * 0.45 ULP then answers r where pow does (its 0.54 ULP bound: the margin
 * of 0.01 ULP is over 2^-60 of r, far over 2^-98), and 0.48 ULP from
 * 2^-8 up (sim_pow25_near's bound, pow's 0.5096 ULP there); near a
 * midpoint (one lane in 25 from 2^-8 up, one in ten below) or outside
 * [2^-200, 2] (every term normal there), the lane is pow's.
 * Measured: 1e8 draws over [2^-12, 2] the same bits as pow (with pow's
 * lanes asked of pow: tests/sim/core/test_pow.c). The lanes returned as
 * sim_pow25_fma4_try's. */
__attribute__((target("avx2,fma"))) static inline int
sim_pow0625_fma4_try(__m256d x, __m256d *r) {
  __m256d in = _mm256_and_pd(
      _mm256_cmp_pd(x, _mm256_set1_pd(0x1p-200), _CMP_GE_OQ),
      _mm256_cmp_pd(x, _mm256_set1_pd(2), _CMP_LE_OQ));
  __m256d s1 = _mm256_sqrt_pd(x), s2 = _mm256_sqrt_pd(s1);
  __m256d s3 = _mm256_sqrt_pd(s2);
  __m256d r1 = _mm256_fnmadd_pd(s1, s1, x), r2 = _mm256_fnmadd_pd(s2, s2, s1);
  __m256d r3 = _mm256_fnmadd_pd(s3, s3, s2);
  __m256d i1 = _mm256_div_pd(_mm256_set1_pd(0.5), x); /* off the roots' chain */
  __m256d i2 = _mm256_mul_pd(s1, i1), i3 = _mm256_mul_pd(s2, i2);
  __m256d e = _mm256_add_pd(
      _mm256_mul_pd(_mm256_set1_pd(1.25), _mm256_mul_pd(r1, i1)),
      _mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(0.5), _mm256_mul_pd(r2, i2)),
                    _mm256_mul_pd(r3, i3)));
  __m256d h = _mm256_mul_pd(s1, s3), h_err = _mm256_fmsub_pd(s1, s3, h);
  __m256d t = _mm256_add_pd(h_err, _mm256_mul_pd(h, e));
  /* sim_pow25_near's bound: its argument holds for any y with |y log x|
   * under 13.9, and |0.625 log x| is under 3.5 in [2^-8, 2] */
  __m256d bound = _mm256_blendv_pd(
      _mm256_set1_pd(SIM_POW_NEAR), _mm256_set1_pd(SIM_POW25_NEAR),
      _mm256_cmp_pd(x, _mm256_set1_pd(SIM_POW25_NEAR_FROM), _CMP_GE_OQ));
  return sim__pow_rounded4(h, t, bound, in, r);
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
