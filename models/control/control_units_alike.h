/* control_units_alike.h - control_units.c's search for the stretches of
 * a direct rack's units alike the one before in load and worth (its
 * refresh_direct): the fluid mode's units come in long ones, a service's
 * replicas in one state. Only control_units.c includes it. */
#ifndef MODELS_CONTROL_UNITS_ALIKE_H
#define MODELS_CONTROL_UNITS_ALIKE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bits.h"
#include "lanes.h"
#include "power.h"

/* A unit's worth, weight then c, read as one pair. */
_Static_assert(offsetof(power_unit, c) == offsetof(power_unit, weight) + 8,
               "a unit's weight and c are next to each other");
static inline sim_u2 worth_at(const power_unit *p) {
  return sim_u2_at((const char *)p + offsetof(power_unit, weight));
}

/* Units k .. k + 3's ten pairs of words (load and worth) xor-ed against
 * load (s, m, b) and worth wc and or-ed into one pair: zeros where all
 * four are alike. */
static inline sim_u2 four_diff(const double *sm, const double *mem,
                               const double *busy, const power_unit *p,
                               size_t k, sim_u2 s, sim_u2 m, sim_u2 b,
                               sim_u2 wc) {
  return (sim_u2_at(sm + k) ^ s) | (sim_u2_at(sm + k + 2) ^ s) |
         (sim_u2_at(mem + k) ^ m) | (sim_u2_at(mem + k + 2) ^ m) |
         (sim_u2_at(busy + k) ^ b) | (sim_u2_at(busy + k + 2) ^ b) |
         (worth_at(p + k) ^ wc) | (worth_at(p + k + 1) ^ wc) |
         (worth_at(p + k + 2) ^ wc) | (worth_at(p + k + 3) ^ wc);
}

/* The end of the stretch of units from k on (k < n, k > 0) alike unit
 * k - 1 in their load (load j of sm, mem, busy) and worth (p[j]'s weight
 * and c), to the bit: each such unit's load is the unit before's (so the
 * last base's key) and its worth the unit before's, so it takes the base
 * and its mark is its n_alike. Its first units one at a time (a compare
 * and branch a word, the first eight: the request level's stretches are
 * short), then eight a turn (two four_diff, one test: the turn's
 * count and the test once for eight units), four once, the last few one
 * at a time. */
static inline size_t alike_end(const double *sm, const double *mem,
                               const double *busy, const power_unit *p,
                               size_t k, size_t n) {
  const uint64_t s = sim_bits_at(sm, k - 1), m = sim_bits_at(mem, k - 1),
                 b = sim_bits_at(busy, k - 1), w = sim_bits(p[k - 1].weight),
                 c = sim_bits(p[k - 1].c);
#define UNIT_DIFFERS(j)                                                        \
  (sim_bits_at(sm, j) != s || sim_bits_at(mem, j) != m ||                      \
   sim_bits_at(busy, j) != b || sim_bits(p[j].weight) != w ||                  \
   sim_bits(p[j].c) != c)
  for (size_t first = n - k < 8 ? n : k + 8; k < first; k++)
    if (UNIT_DIFFERS(k))
      return k;
  const sim_u2 vs = {s, s}, vm = {m, m}, vb = {b, b}, wc = {w, c};
  for (; k + 8 <= n; k += 8)
    if (!sim_u2_zero(four_diff(sm, mem, busy, p, k, vs, vm, vb, wc) |
                    four_diff(sm, mem, busy, p, k + 4, vs, vm, vb, wc)))
      break;
  if (k + 4 <= n && sim_u2_zero(four_diff(sm, mem, busy, p, k, vs, vm, vb, wc)))
    k += 4;
  for (; k < n; k++)
    if (UNIT_DIFFERS(k))
      break;
#undef UNIT_DIFFERS
  return k;
}

#endif
