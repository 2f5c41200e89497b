/* bits.h - a double's bits, for the comparisons that must be to the bit.
 * The memos and runs that keep every output the same bytes ask "is this
 * the same double?" as bits, not as ==: a NaN is like itself and -0 is
 * unlike 0, so a hit never stands for a value that would have come out
 * different. memcpy is the defined way to read the bits; compilers make
 * it one move. */
#ifndef SIM_BITS_H
#define SIM_BITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t sim_bits(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static inline double sim_of_bits(uint64_t b) {
  double x;
  memcpy(&x, &b, sizeof x);
  return x;
}

/* x[i]'s bits loaded as such, with no trip through a float register. */
static inline uint64_t sim_bits_at(const double *x, size_t i) {
  uint64_t b;
  memcpy(&b, &x[i], sizeof b);
  return b;
}

static inline bool sim_same_bits(double a, double b) {
  return sim_bits(a) == sim_bits(b);
}

#endif
