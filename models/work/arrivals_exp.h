/* arrivals_exp.h - a lognormal length's tokens, arr_tokens(exp(y)),
 * without libm's exp for almost every y. A drawn length is only ever
 * rounded to whole tokens, so exp(y) itself reaches nothing: what must
 * not change is the integer. An estimate a of e^y within a relative
 * 2^-43 (a table of 2^(j / 64) and a degree-4 polynomial) is rounded as
 * arr_tokens rounds; when a lies farther than a x 2^-36 from the two
 * half-integers that bound its token count, libm's exp(y), within an ULP
 * (2^-52 relative) of e^y, lies between the same two, so rounds to the
 * same count. Nearer (about one draw in a million at a thousand tokens),
 * and out of the estimate's range (y above 23, where a x 2^-36 nears
 * half a token, and NaN), exp(y) decides.
 * y below 1/4 is one token either way (e^(1/4) < 1.29). The error bound:
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
 * to 2124 sixty-fourths, k ln2 / 64 at most 23.01). */
static inline double arr_exp_near(double y) {
  const double shift = 0x1.8p52, to_k = 0x1.71547652b82fep+6 /* 64/ln2 */,
               ln2_64 = 0x1.62e42fefa39efp-7; /* ln2 / 64 */
  double kd = (y * to_k + shift) - shift; /* y's nearest sixty-fourth */
  int64_t k = (int64_t)kd;
  double r = y - kd * ln2_64;
  double p = 1 + r * (1 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24))));
  double scale = sim_of_bits((uint64_t)((k >> 6) + 1023) << 52);
  return arr_exp2_64ths[k & 63] * scale * p;
}

/* The estimate's count when it is decided (*sure), else 0. */
static inline int64_t arr_exp_tokens_near(double y, bool *sure) {
  double a = arr_exp_near(y), tol = a * 0x1p-36;
  int64_t n = arr_llround(a); /* a < e^23 (1 + 2^-43) < 2^34 */
  *sure = a - ((double)n - 0.5) > tol && ((double)n + 0.5) - a > tol;
  return n;
}

/* arr_tokens(exp(y)): the same count for every y. */
static inline int64_t arr_exp_tokens(double y) {
  if (y < 0.25)
    return 1; /* exp(y) < 1.29: rounds to 1 or 0, counted as 1 */
  if (y <= 23) {
    bool sure;
    int64_t n = arr_exp_tokens_near(y, &sure);
    if (sure)
      return n;
  }
  return arr_tokens(exp(y));
}

#endif
