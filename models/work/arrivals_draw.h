/* arrivals_draw.h - the arrival generator's uniform words and GSL's
 * draws, inline. GSL's gsl_rng_uniform and gsl_ran_exponential reach
 * taus2 through two calls, one of them through the type's function
 * pointer, for each uniform. These are the same operations in the same
 * order on the same state (GSL 2.7's rng/taus.c, randist/exponential.c),
 * so a stream gives the same bits whichever way it is drawn, and the two
 * may be mixed on one stream: the thinning uniforms and the MMPP's
 * states, which the fluid mode's windows draw too, are GSL's bits; the
 * gaps and the lengths are the ziggurat's (arrivals_zig.h), on these
 * words. The state is the generator's own (gsl_rng_state of a taus2
 * stream, whose layout rng.c fills, copied into the generator when it is
 * made). Internal to arrivals.c and its test,
 * which checks these draws against GSL's; the request level rounds an
 * arrival's nanoseconds with arr_llround. */
#ifndef MODELS_ARRIVALS_DRAW_H
#define MODELS_ARRIVALS_DRAW_H

#include <math.h>
#include <stdint.h>

#include "bits.h"

typedef struct arr_taus {
  unsigned long s1, s2, s3;
} arr_taus;

/* taus2's step, modulo 2^32 (unsigned long may be wider). Worked on the
 * state's own words: a version in uint32_t, without the masks, cost more
 * (its stores). */
static inline unsigned long arr_taus_word(unsigned long s, int a, int b,
                                          unsigned long c, int d) {
  const unsigned long m = 0xffffffffUL;
  return (((s & c) << d) & m) ^ ((((s << a) & m) ^ s) >> b);
}

/* gsl_rng_get: taus2's next 32-bit word. */
static inline uint32_t arr_word(arr_taus *t) {
  t->s1 = arr_taus_word(t->s1, 13, 19, 4294967294UL, 12);
  t->s2 = arr_taus_word(t->s2, 2, 25, 4294967288UL, 4);
  t->s3 = arr_taus_word(t->s3, 3, 11, 4294967280UL, 17);
  return (uint32_t)(t->s1 ^ t->s2 ^ t->s3);
}

/* gsl_rng_uniform: [0, 1). */
static inline double arr_uniform(arr_taus *t) {
  return (double)arr_word(t) / 4294967296.0;
}

/* gsl_ran_exponential: mean mu. */
static inline double arr_exponential(arr_taus *t, double mu) {
  double u = arr_uniform(t);
  return -mu * log1p(-u);
}

/* A lognormal's mu (a log a draw), kept with the bits of the mean and
 * sigma it is for (zeroed: none; sigma > 0 where used): two integer
 * compares a draw, where the doubles' compares took two branches each
 * for the NaN. Equal bits are equal inputs, so the same mu. */
typedef struct arr_mu {
  uint64_t mean, sigma;
  double mu;
} arr_mu;

/* log(mean) - sigma^2 / 2, from m when it is for these mean and sigma. */
static inline double arr_mu_of(arr_mu *m, double mean, double sigma) {
  uint64_t a = sim_bits(mean), b = sim_bits(sigma);
  if ((m->mean ^ a) | (m->sigma ^ b))
    *m = (arr_mu){a, b, log(mean) - 0.5 * sigma * sigma};
  return m->mu;
}

/* llround(x) without the call for 0 <= x < 2^52: x's whole part, up one
 * when its fraction (exact there: x - trunc(x) loses nothing) is at least
 * a half, as llround rounds halves away from zero. Other x (larger,
 * negative, NaN) go to llround. */
static inline int64_t arr_llround(double x) {
  if (!(x >= 0 && x < 0x1p52))
    return (int64_t)llround(x);
  int64_t n = (int64_t)x;
  return n + (x - (double)n >= 0.5);
}

/* A drawn length in tokens: rounded, at least 1. */
static inline int64_t arr_tokens(double x) {
  int64_t n = arr_llround(x);
  return n < 1 ? 1 : n;
}

#endif
