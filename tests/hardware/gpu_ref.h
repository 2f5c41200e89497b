/* gpu_ref.h - test_gpu's and test_gpu_pow's reference for the cap's
 * clock (its definition, gpu.h: the largest phi in [phi_min, 1] with
 * P(phi, L) <= cap, P gpu_load_power's bits, found by halving the
 * clocks' bits) and their draws of a load's share. */
#ifndef TEST_GPU_REF_H
#define TEST_GPU_REF_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "bits.h"
#include "gpu.h"

/* The cap's clock by its definition, no solver: P at phi 1 at most the
 * cap, 1; P at phi_min over it (or NaN), phi_min; else the bits of
 * [phi_min, 1] halved (positive doubles order as their bits) with
 * P(lo) <= cap < P(hi) until lo and hi are adjacent doubles: lo, the
 * largest held clock as P is monotone (gpu_power.c says why). */
static inline double ref_clock_under_cap(const gpu_spec *g, double cap_w,
                                         gpu_load l) {
  double phi_min = gpu_phi_min(g);
  if (gpu_load_power(g, 1, l) <= cap_w)
    return 1;
  if (!(gpu_load_power(g, phi_min, l) <= cap_w))
    return phi_min;
  uint64_t lo = sim_bits(phi_min), hi = sim_bits(1.0);
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (gpu_load_power(g, sim_of_bits(mid), l) <= cap_w)
      lo = mid;
    else
      hi = mid;
  }
  return sim_of_bits(lo);
}

/* Whether phi is held at cap by the definition, checked where it stands:
 * P(phi) <= cap < P(the next double up) below phi 1, P(1) <= cap at 1,
 * and at phi_min either that or P(phi_min) over the cap (the floor). */
static inline bool ref_held_exactly(const gpu_spec *g, double cap_w,
                                    gpu_load l, double phi) {
  double p = gpu_load_power(g, phi, l);
  if (phi == 1)
    return p <= cap_w;
  bool crossing = p <= cap_w && gpu_load_power(g, nextafter(phi, 2), l) > cap_w;
  return crossing || (phi == gpu_phi_min(g) && !(p <= cap_w));
}

/* Uniform in [0, 1): a small LCG, the same draws on every machine. */
static inline double draw(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0;
}

/* A load drawn field by field: an initializer list's evaluations are
 * unspecified in order, and the draws are to be the same whatever the
 * compiler. */
static inline gpu_load draw_load(uint64_t *s) {
  gpu_load l;
  l.sm = draw(s);
  l.mem = draw(s);
  l.busy = draw(s);
  return l;
}

/* A share: uniform in [0, 1] mostly, else an end, a value out of range
 * or NaN (clamped or carried through as before). */
static inline double draw_share(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  static const double odd[] = {0, 1, -0.25, 1.5, NAN, 0.5};
  double u = (double)(*s >> 11) / 9007199254740992.0;
  return (*s >> 3) % 16 == 0 ? odd[(*s >> 7) % 6] : u;
}

#endif
