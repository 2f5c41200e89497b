/* gpu_internal.h - what gpu.c (the catalog) and gpu_power.c (the
 * power/DVFS model) share, not for other modules. */
#ifndef MODELS_GPU_INTERNAL_H
#define MODELS_GPU_INTERNAL_H
#include <gsl/gsl_interp.h>

#include "gpu.h"

/* The measured curve as GSL interpolation state. Steffen's method keeps a
 * monotone table monotone between points, so the cap equation has one
 * root. */
struct gpu_curve {
  gsl_interp *interp;
  gsl_interp_accel *accel;
  double *phi, *power;
};

/* A type's memo of phi^gamma (gpu_power.c), made when the catalog loads
 * the type and freed with it; NULL when out of memory. */
struct gpu_pow_memo *gpu__pow_memo_new(void);

/* A cap's solve by brent_fma (gpu_power.c: a power law of gamma 2.5, the
 * CPU with fma): the load's terms P_mem L.mem and the core domain's
 * power at full clock, the cap, the bracket [lo, hi] and its residuals
 * there (fa, fb, apart in sign, finite). */
typedef struct gpu_brent_job {
  double mem, clocked, cap, lo, hi, fa, fb;
} gpu_brent_job;

/* brent_fma's answer for job j of a type g (gpu_power.c). */
double gpu__brent_job(const gpu_spec *g, const gpu_brent_job *j);

/* What brent_fma's residual takes of the type: P_idle, the knee as
 * given, phi_min (gpu_phi_min's bits). */
typedef struct gpu_brent_type {
  double idle_w, knee, phi_min;
} gpu_brent_type;

/* gpu__brent_job's answers for n jobs of a type t in phi, four a time in
 * an AVX2 register's lanes, the same bits: for a CPU with AVX2 and fma
 * (gpu_brent4.c). */
void gpu__brent_lanes(const gpu_brent_type *t, const gpu_brent_job *j, size_t n,
                      double *phi);

#endif
