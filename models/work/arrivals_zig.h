/* arrivals_zig.h - the arrival generator's exponential and normal draws
 * by the ziggurat (Marsaglia & Tsang 2000, "The Ziggurat Method for
 * Generating Random Variables", J. Stat. Softw. 5(8)): the density cut
 * into n strips of equal area, a draw picks a strip and a point in it,
 * and is taken at once (a multiply and a compare) unless it falls in the
 * wedge a strip sticks out of the density by, or in the base strip's
 * tail, where the exact tests and the tail's own sampler decide. So the
 * law is the exact exponential or normal for uniforms of 24 bits (the
 * strip's width times j / 2^24), as GSL's gsl_ran_gaussian_ziggurat.
 * One taus2 word a draw on the fast path (the tables' k give 97.8% of
 * the exponential's draws, 97.2% of the normal's): its low bits choose
 * the strip (and the normal's sign, bit 7), its high 24 bits j the
 * point, apart, as in GSL, so the strip and the point are independent.
 * Replaces libm's log1p a gap, and Box-Muller's two or more uniforms,
 * log, sqrt and division a length. */
#ifndef MODELS_ARRIVALS_ZIG_H
#define MODELS_ARRIVALS_ZIG_H

#include <stdint.h>

#include "arrivals_draw.h"

enum { ARR_ZIG_STRIPS = 256 };

/* A ziggurat's tables, strip i = 0 .. n - 1 (x[0] = 0 < x[1] < ... <
 * x[n - 1] = r, strip 0 the base with its tail beyond r):
 * k[i] = 2^24 x[i - 1] / x[i] (k[0] = 2^24 r / q, q the base's width),
 * the j below which the point lies under the density for sure;
 * w[i] = x[i] / 2^24 (w[0] = q / 2^24); f[i] = the density at x[i]. */
typedef struct arr_zig {
  uint32_t k[ARR_ZIG_STRIPS];
  double w[ARR_ZIG_STRIPS], f[ARR_ZIG_STRIPS];
  double r;      /* where the tail begins */
  uint32_t mask; /* n - 1 */
} arr_zig;

/* The exponential's (mean 1, 256 strips) and the normal's (0, 1; 128
 * strips of its positive half), filled once by the first call of any
 * thread. */
void arr_zig_tables(const arr_zig **exponential, const arr_zig **normal);

/* The tables from the strips' area v and the tail's start r (Marsaglia &
 * Tsang's constants), for tests that break them. */
void arr_zig_fill_exponential(arr_zig *z, int n, double r, double v);
void arr_zig_fill_normal(arr_zig *z, int n, double r, double v);

/* The rare paths: a wedge, or the tail. w is the word drawn first. */
double arr_zig_exponential_slow(const arr_zig *z, arr_taus *t, uint32_t w);
double arr_zig_normal_slow(const arr_zig *z, arr_taus *t, uint32_t w);

/* An exponential of mean 1. */
static inline double arr_zig_exponential(const arr_zig *z, arr_taus *t) {
  uint32_t w = arr_word(t), i = w & z->mask, j = w >> 8;
  if (j < z->k[i])
    return (double)j * z->w[i];
  return arr_zig_exponential_slow(z, t, w);
}

/* A normal of mean 0 and deviation 1. */
static inline double arr_zig_normal(const arr_zig *z, arr_taus *t) {
  uint32_t w = arr_word(t), i = w & z->mask, j = w >> 8;
  double x = j < z->k[i] ? (double)j * z->w[i] : arr_zig_normal_slow(z, t, w);
  return w & 0x80 ? -x : x;
}

#endif
