/* rng.h - reproducible random streams.
 * Every entity owns its streams, one per purpose. A stream's state is
 * derived from (run seed, entity kind, entity index, purpose) through a
 * mixing function, never from the order in which streams are created, so
 * adding a rack does not move the draws of another. */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

/* Entity kinds below RNG_KIND_MODEL are the engine's own; models number
 * theirs from RNG_KIND_MODEL up, so changes in the engine never move model
 * streams. */
enum { RNG_KIND_ENGINE = 1, RNG_KIND_MODEL = 256 };

/* A 64-bit value mixed from the four identifiers (splitmix64 finalisers
 * chained); equal inputs give equal outputs, near inputs far outputs. */
uint64_t rng_mix(uint64_t seed, uint32_t kind, uint64_t index,
                 uint32_t purpose);

/* A new taus2 generator (24 bytes of state) whose full state is filled from
 * rng_mix, not from gsl_rng_set's 32-bit seed. Returns NULL when out of
 * memory. Free with rng_stream_destroy (gsl_rng_free). */
gsl_rng *rng_stream_create(uint64_t seed, uint32_t kind, uint64_t index,
                           uint32_t purpose);

void rng_stream_destroy(gsl_rng *r);

#endif
