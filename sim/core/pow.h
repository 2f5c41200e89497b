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
 * bound): where x^y is within 0.45 ULP (of r's binade, r not a power of
 * two) of r, every other double is over 0.54 ULP away, so pow returns r.
 * False near a midpoint (one in ten): the caller asks pow itself. Every
 * term must be normal. */
static inline bool sim_pow_rounded(double h, double t, double *r) {
  double e = t - ((*r = h + t) - h);
  uint64_t b = sim_bits(*r);
  double ulp = sim_of_bits((b & 0x7ff0000000000000ULL) - (52ULL << 52));
  return (b & 0xfffffffffffffULL) != 0 && fabs(e) <= 0.45 * ulp;
}

/* x^2.5 with pow's bits, for code built for fma (the target attribute)
 * on a CPU that has it. x^2.5 = x^2 sqrt(x) is taken as a double-double
 * within 2^-100 of it (each product's error exact through fma, the square
 * root's through x - s^2), rounded once where pow would return it
 * (sim_pow_rounded). Near a midpoint (one in ten) or elsewhere, pow
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
  return sim_pow_rounded(h, t, &r) ? r : pow(x, 2.5);
}
#endif

#endif
