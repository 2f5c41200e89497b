/* arrivals_exp.h - a lognormal length's tokens, arr_tokens(exp(y)),
 * without libm's exp for almost every y. A drawn length is only ever
 * rounded to whole tokens, so exp(y) itself reaches nothing: what must
 * not change is the integer. An estimate a of e^y within a relative
 * 2^-43 (a table of 2^(j / 64) and a degree-4 polynomial) is rounded as
 * arr_tokens rounds; when a lies farther than a x 2^-36 from the two
 * half-integers that bound its token count, libm's exp(y), within an ULP
 * (2^-52 relative) of e^y, lies between the same two, so rounds to the
 * same count. Nearer (a band 2 a x 2^-36 wide about each half-integer:
 * one draw in 30 million at a thousand tokens), and out of the
 * estimate's range (y below 1/4, rare; above 23, where a x 2^-36 nears
 * half a token; NaN), exp(y) decides. The error bound:
 * r = y - k ln2 / 64 to within 1.2e-14 (k ln2 / 64 <= 23.1 rounded once,
 * ln2 / 64 within half an ULP), |r| <= 0.00542, so the polynomial's
 * truncation is below r^5 / 120 x e^r < 4e-14 and its and the table's
 * roundings below 1e-15: under 6e-14 < 2^-43 in all. Internal to
 * arrivals.c and its tests. */
#ifndef MODELS_ARRIVALS_EXP_H
#define MODELS_ARRIVALS_EXP_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "arrivals_draw.h"
#include "bits.h"

/* 2^(j / 64), j = 0 .. 63, the nearest doubles (arrivals_exp.c). */
extern const double arr_exp2_64ths[64];

/* e^y to within a relative 2^-43, for 1/4 <= y <= 23 (k then from 23
 * to 2124 sixty-fourths, k ln2 / 64 at most 23.01). The polynomial in
 * two halves (Estrin's scheme) and the power of 2 added to the table's
 * exponent: the chain from y to the count is what an arrival waits on. */
static inline double arr_exp_near(double y) {
  const double shift = 0x1.8p52, to_k = 0x1.71547652b82fep+6 /* 64/ln2 */,
               ln2_64 = 0x1.62e42fefa39efp-7; /* ln2 / 64 */
  double kd = (y * to_k + shift) - shift; /* y's nearest sixty-fourth */
  int64_t k = (int64_t)kd;
  double r = y - kd * ln2_64, r2 = r * r;
  double p = (1 + r) + r2 * ((0.5 + r * (1.0 / 6)) + r2 * (1.0 / 24));
  double t = sim_of_bits(sim_bits(arr_exp2_64ths[k & 63]) +
                         ((uint64_t)(k >> 6) << 52)); /* 2^(k / 64) */
  return t * p;
}

/* The estimate's count, and whether it is decided (*sure): a + 1/2's
 * fraction more than tol from 0 and from 1 (a + 1/2 rounded by under
 * 2^-53 of itself, far below tol; its fraction and what follows exact
 * or as near). a < e^23 (1 + 2^-43) < 2^34, so the truncation is exact. */
static inline int64_t arr_exp_tokens_near(double y, bool *sure) {
  double a = arr_exp_near(y), tol = a * 0x1p-36, h = a + 0.5;
  int64_t n = (int64_t)h;
  *sure = fabs((h - (double)n) - 0.5) < 0.5 - tol;
  return n;
}

/* arr_tokens(exp(y)): the same count for every y. The estimate's range
 * as one compare of y's bits (positive doubles order as their bits; a
 * negative y or a NaN wraps above it). */
static inline int64_t arr_exp_tokens(double y) {
  const uint64_t lo = 0x3fd0000000000000u /* 0.25 */,
                 hi = 0x4037000000000000u /* 23 */;
  if (sim_bits(y) - lo <= hi - lo) {
    bool sure;
    int64_t n = arr_exp_tokens_near(y, &sure);
    if (sure)
      return n;
  }
  return arr_tokens(exp(y));
}

#endif
