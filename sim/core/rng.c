/* rng.c - reproducible random streams: taus2 generators whose whole state
 * is derived from (seed, kind, index, purpose).
 *
 * gsl_rng_set takes an unsigned long but taus2 keeps only 32 bits of it, so
 * among 1e5 streams two would likely coincide (birthday bound). We fill the
 * three 32-bit state words from a 64-bit mix instead, keeping taus2's own
 * constraints (s1 > 1, s2 > 7, s3 > 15) and its warm-up. The state layout
 * (three unsigned longs) is GSL's rng/taus.c; a size check guards it. */
#include "rng.h"

#include <stddef.h>

typedef struct taus_state {
  unsigned long s1, s2, s3;
} taus_state;

static uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t rng_mix(uint64_t seed, uint32_t kind, uint64_t index,
                 uint32_t purpose) {
  uint64_t h = splitmix64(seed);
  h = splitmix64(h ^ kind);
  h = splitmix64(h ^ index);
  return splitmix64(h ^ purpose);
}

static unsigned long word_above(uint64_t bits, unsigned long floor) {
  unsigned long w = (unsigned long)(bits & 0xffffffffUL);
  return w > floor ? w : w + floor + 1;
}

gsl_rng *rng_stream_create(uint64_t seed, uint32_t kind, uint64_t index,
                           uint32_t purpose) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  if (r == NULL)
    return NULL;
  if (gsl_rng_size(r) != sizeof(taus_state)) {
    gsl_rng_free(r);
    return NULL;
  }
  uint64_t a = rng_mix(seed, kind, index, purpose);
  uint64_t b = splitmix64(a);
  taus_state *st = gsl_rng_state(r);
  st->s1 = word_above(a, 1);
  st->s2 = word_above(a >> 32, 7);
  st->s3 = word_above(b, 15);
  /* taus2's own seeding discards six draws to leave the LCG-like start. */
  for (int i = 0; i < 6; i++)
    gsl_rng_get(r);
  return r;
}

void rng_stream_destroy(gsl_rng *r) {
  if (r != NULL)
    gsl_rng_free(r);
}
