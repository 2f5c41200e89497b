/* gpu_internal.h - what gpu.c (the catalog) and gpu_power.c (the
 * power/DVFS model) share, not for other modules. */
#ifndef MODELS_GPU_INTERNAL_H
#define MODELS_GPU_INTERNAL_H
#include <gsl/gsl_interp.h>
#include <stdbool.h>

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

/* A cap's solve below full clock (gpu_power.c): the load's terms
 * P_mem L.mem and the core domain's power at full clock, the cap, the
 * bracket [lo, hi] and P there (p_lo <= cap < p_hi, finite). */
typedef struct gpu_cap_job {
  double mem, clocked, cap, lo, hi, p_lo, p_hi;
} gpu_cap_job;

/* What P takes of the type: P_idle, the knee as given, phi_min
 * (gpu_phi_min's bits). */
typedef struct gpu_cap_type {
  double idle_w, knee, phi_min;
} gpu_cap_type;

/* The clocks of n jobs of a type t whose P is a power law of gamma 2.5
 * in phi, four a time in an AVX2 register's lanes (for a CPU with AVX2
 * and fma; gpu_newton4.c): gpu_power.c's answers, the same doubles. */
void gpu__newton_lanes(const gpu_cap_type *t, const gpu_cap_job *j, size_t n,
                       double *phi);

/* A lone job of such a type whose bracket is above the knee (j->lo at
 * or over t->knee), by the closed form and one power of four
 * neighbouring doubles in the lanes (gpu_newton4.c): true and the same
 * double in *phi where they settle it, false where they do not (then
 * gpu__newton_lanes). */
bool gpu__newton_lone(const gpu_cap_type *t, const gpu_cap_job *j,
                      double *phi);

#endif
