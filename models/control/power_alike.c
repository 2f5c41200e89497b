/* power_alike.c - which of the policies' units are alike (see power.h):
 * alike to the bit in every field a policy reads, so that a run of them
 * is evaluated once. */
#include "power.h"

#include <stdbool.h>
#include <string.h>

#include "bits.h"

/* Whether two units are alike to the bit in every field the policy
 * reads (all but cls and priority): one run. */
static bool same_unit(const power_unit *a, const power_unit *b) {
  uint64_t x = (sim_bits(a->lo) ^ sim_bits(b->lo)) |
               (sim_bits(a->hi) ^ sim_bits(b->hi)) |
               (sim_bits(a->demand) ^ sim_bits(b->demand)) |
               (sim_bits(a->weight) ^ sim_bits(b->weight)) |
               (sim_bits(a->c) ^ sim_bits(b->c)) |
               (sim_bits(a->idle) ^ sim_bits(b->idle)) |
               (sim_bits(a->span) ^ sim_bits(b->span)) |
               (sim_bits(a->activity) ^ sim_bits(b->activity)) |
               (sim_bits(a->gamma) ^ sim_bits(b->gamma)) |
               (sim_bits(a->phi_min) ^ sim_bits(b->phi_min));
  return x == 0 && a->n == b->n;
}

bool power_alike(const power_unit *a, const power_unit *b) {
  return same_unit(a, b);
}

bool power_alike_ok(const power_unit *units, size_t n, const uint8_t *alike) {
  for (size_t u = 1; alike != NULL && u < n; u++)
    if (alike[u] != 0 && !same_unit(&units[u], &units[u - 1]))
      return false;
  return true;
}

/* Units a block at a time: what memcmp compares in one call. */
#define ALIKE_BLOCK 32

/* How many units from u on (0 < u <= n) are each alike the one before:
 * the first by same_unit (most runs of a group of services are one or
 * two units long: a memcmp call that fails at once, then same_unit over
 * the same bytes, would cost a short run twice), then byte for byte a
 * block at a time (memcmp, in bulk: a long run's units are copies of
 * one, padding and all), unit by unit by same_unit in a block that
 * differs (where a run ends, or units alike but for bytes the policy
 * does not read). */
size_t power_alike_from(const power_unit *units, size_t u, size_t n) {
  if (u >= n || !same_unit(&units[u], &units[u - 1]))
    return 0;
  size_t c = u + 1;
  while (c < n) {
    size_t end = n - c < ALIKE_BLOCK ? n : c + ALIKE_BLOCK;
    if (end - c == ALIKE_BLOCK &&
        memcmp(&units[c], &units[c - 1], ALIKE_BLOCK * sizeof *units) == 0) {
      c = end;
      continue;
    }
    for (; c < end; c++)
      if (!same_unit(&units[c], &units[c - 1]))
        return c - u;
  }
  return c - u;
}
