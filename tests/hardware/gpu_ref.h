/* gpu_ref.h - test_gpu's and test_gpu_pow's reference for the cap's
 * clock (GSL's solver, as gpu_power.c solved it until 2026-12) and their
 * draws of a load's share. */
#ifndef TEST_GPU_REF_H
#define TEST_GPU_REF_H

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <math.h>
#include <stdint.h>

#include "gpu.h"

/* The cap's clock as gpu_power.c solved it until 2026-12: GSL's Brent
 * solver on gpu_load_power, the reference its in-line Brent keeps to the
 * bit. */
typedef struct ref_cap {
  const gpu_spec *g;
  gpu_load l;
  double cap_w;
} ref_cap;

static inline double ref_residual(double phi, void *params) {
  const ref_cap *p = params;
  return gpu_load_power(p->g, phi, p->l) - p->cap_w;
}

static inline double ref_solve(ref_cap *p, double lo, double hi) {
  gsl_function fn = {ref_residual, p};
  gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  double phi = lo;
  if (gsl_root_fsolver_set(s, &fn, lo, hi) == GSL_SUCCESS)
    for (int i = 0; i < 100; i++) {
      if (gsl_root_fsolver_iterate(s) != GSL_SUCCESS)
        break;
      lo = gsl_root_fsolver_x_lower(s);
      hi = gsl_root_fsolver_x_upper(s);
      phi = lo;
      if (gsl_root_test_interval(lo, hi, 0, 1e-12) == GSL_SUCCESS)
        break;
    }
  gsl_root_fsolver_free(s);
  return phi;
}

static inline double ref_clock_under_cap(const gpu_spec *g, double cap_w,
                                         gpu_load l) {
  ref_cap p = {g, l, cap_w};
  double phi_min = gpu_phi_min(g), knee = fmax(phi_min, fmin(1, g->knee));
  if (gpu_load_power(g, 1, l) <= cap_w)
    return 1;
  if (gpu_load_power(g, phi_min, l) >= cap_w)
    return phi_min;
  if (!(gpu_load_power(g, knee, l) <= cap_w)) /* NaN too */
    return ref_solve(&p, phi_min, knee);
  if (g->interp != NULL)
    return ref_solve(&p, knee, 1);
  gpu_load c = {fmin(fmax(l.sm, 0), 1), fmin(fmax(l.mem, 0), 1),
                fmin(fmax(l.busy, 0), 1)};
  double target = (cap_w - (g->idle_w + g->mem_w * c.mem)) /
                  (g->busy_w * c.busy + gpu_sm_span(g) * c.sm);
  return fmin(fmax(pow(target, 1 / g->gamma), knee), 1);
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
