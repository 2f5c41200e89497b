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

#endif
