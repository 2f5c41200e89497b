/* load.h - synthetic utilisation of a rack group, until workloads exist:
 * constant, diurnal (a cosine day with its peak at a given hour) or steps,
 * plus per-rack noise as an Ornstein-Uhlenbeck process (mean-reverting, so
 * racks wander around the pattern instead of drifting away from it). */
#ifndef MODELS_LOAD_H
#define MODELS_LOAD_H

#include <stddef.h>

#include <gsl/gsl_rng.h>

#include "scenario.h"

typedef enum load_pattern {
  LOAD_CONSTANT,
  LOAD_DIURNAL,
  LOAD_STEPS
} load_pattern;

typedef struct load_step {
  double at_s;  /* from this time on (since the start) ... */
  double level; /* ... the activity is this, until the next step */
} load_step;

typedef struct load_config {
  int pattern;      /* load_pattern */
  double level;     /* constant: the activity */
  double low, high; /* diurnal: the activity at night and at the peak */
  double peak_s;    /* diurnal: time of day of the peak, seconds */
  load_step *steps; /* steps: sorted by at_s, the first at 0 */
  size_t nsteps;
  double noise;      /* standard deviation of the per-rack noise */
  double noise_time; /* its correlation time, seconds */
} load_config;

extern const scn_schema load_schema;

/* The pattern's activity at time t_s (no noise), in [0, 1]. */
double load_level(const load_config *c, double t_s);

/* The per-rack noise advanced by a fixed step: the exact OU update
 * x' = x rho + sigma sqrt(1 - rho^2) N(0, 1), rho = exp(-dt / tau), with
 * the coefficients worked out once per group. */
typedef struct load_noise {
  double rho, kick; /* kick = sigma sqrt(1 - rho^2) */
} load_noise;

load_noise load_noise_for(const load_config *c, double dt_s);

double load_noise_step(const load_noise *n, double x, gsl_rng *r);

#endif
