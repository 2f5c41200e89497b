/* gpu_power.c - the power/DVFS model of gpu.h: a GPU's power at a clock
 * and load, the clock a cap allows, the speeds. The catalog is gpu.c. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>
#include <gsl/gsl_roots.h>

#include "alloc.h"
#include "gpu.h"
#include "gpu_internal.h"
#include "bits.h"

/* Entries of a type's memo of phi^gamma, a power of two. The callers ask
 * a few clocks over and over (a job's stages, a replica's steps at the
 * clock its cap allows, each tick): glibc's pow costs about 125
 * instructions, a hit about 20. 1,024 entries caught only 5% more of
 * bench-10k's request-level calls (most misses are new clocks). */
#define POW_MEMO_BITS 6
#define POW_MEMO (1 << POW_MEMO_BITS)

/* A direct-mapped cache of pow(phi, gamma), keyed by both to the bit: a
 * hit returns what pow returned for the same arguments, so no result
 * changes (pow is a function of its arguments). */
struct gpu_pow_memo {
  uint64_t phi[POW_MEMO], gamma[POW_MEMO];
  double d[POW_MEMO];
};

struct gpu_pow_memo *gpu__pow_memo_new(void) {
  struct gpu_pow_memo *m = sim_alloc(NULL, sizeof *m);
  /* The bits of a NaN no clamped clock has: every entry empty. */
  for (size_t i = 0; m != NULL && i < POW_MEMO; i++)
    m->phi[i] = UINT64_MAX;
  return m;
}

/* pow(phi, gamma), from m when it holds them (m NULL: pow). */
static double memo_pow(struct gpu_pow_memo *m, double phi, double gamma) {
  if (m == NULL)
    return pow(phi, gamma);
  uint64_t p = sim_bits(phi), y = sim_bits(gamma);
  size_t i = (size_t)(((p ^ y) * 0x9e3779b97f4a7c15ULL) >> (64 - POW_MEMO_BITS));
  if (m->phi[i] != p || m->gamma[i] != y) {
    m->phi[i] = p;
    m->gamma[i] = y;
    m->d[i] = pow(phi, gamma);
  }
  return m->d[i];
}

double gpu_phi_min(const gpu_spec *g) {
  return g->clock_min_hz / g->clock_max_hz;
}

static double clamp(double x, double lo, double hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

double gpu_dynamic_fraction(const gpu_spec *g, double phi) {
  phi = clamp(phi, gpu_phi_min(g), 1);
  const struct gpu_curve *c = g->interp;
  if (c == NULL) /* pow(1, y) is exactly 1: full clock, the common case */
    return phi == 1 ? 1 : memo_pow(g->pow_memo, phi, g->gamma);
  /* Below the first measured point the curve goes on linearly to 0 at
   * phi = 0: the power law's shape at low clocks is not in the table. */
  if (phi < c->phi[0])
    return c->power[0] * phi / c->phi[0];
  return gsl_interp_eval(c->interp, c->phi, c->power, phi, c->accel);
}

double gpu_sm_span(const gpu_spec *g) {
  return g->tdp_w - g->idle_w - g->busy_w;
}

gpu_load gpu_load_level(double a) {
  a = clamp(a, 0, 1);
  return (gpu_load){a, 0, a};
}

static gpu_load clamp_load(gpu_load l) {
  return (gpu_load){clamp(l.sm, 0, 1), clamp(l.mem, 0, 1),
                    clamp(l.busy, 0, 1)};
}

/* The part of P that does not follow the SM clock, at memory speed s_mem:
 * idle and the HBM's energy per byte (the memory clock holds). */
static double fixed_part(const gpu_spec *g, gpu_load l, double s_mem) {
  return g->idle_w + g->mem_w * l.mem * s_mem;
}

/* The core domain's power at full clock, W: the busy floor (clock tree,
 * L2, crossbar, the SMs' issue, whatever the kernel) and the SM part;
 * both scale as V^2 f, d(phi) (gpu.h). */
static double clocked_part(const gpu_spec *g, gpu_load l) {
  return g->busy_w * l.busy + gpu_sm_span(g) * l.sm;
}

double gpu_load_power(const gpu_spec *g, double phi, gpu_load l) {
  l = clamp_load(l);
  phi = clamp(phi, gpu_phi_min(g), 1);
  return fixed_part(g, l, gpu_speed_memory(g, phi)) +
         clocked_part(g, l) * gpu_dynamic_fraction(g, phi);
}

double gpu_load_share(const gpu_spec *g, gpu_load l) {
  return (gpu_load_power(g, 1, l) - g->idle_w) / (g->tdp_w - g->idle_w);
}

double gpu_power(const gpu_spec *g, double phi, double activity) {
  return gpu_load_power(g, phi, gpu_load_level(activity));
}

double gpu_clock_under_cap(const gpu_spec *g, double cap_w, double activity) {
  return gpu_load_clock_under_cap(g, cap_w, gpu_load_level(activity));
}

typedef struct cap_problem {
  const gpu_spec *g;
  gpu_load l;
  double cap_w;
} cap_problem;

static double cap_residual(double phi, void *params) {
  const cap_problem *p = params;
  return gpu_load_power(p->g, phi, p->l) - p->cap_w;
}

/* Brent's method on P(phi) - cap, monotone in phi: the root is unique and
 * bracketed by [lo, hi] when the caller gets here. The lower end of the
 * last bracket keeps P <= cap. */
static double solve_cap(const cap_problem *p, double lo, double hi) {
  gsl_function fn = {cap_residual, (void *)p};
  gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  double phi = lo;
  if (s == NULL || gsl_root_fsolver_set(s, &fn, lo, hi) != GSL_SUCCESS) {
    gsl_root_fsolver_free(s);
    return lo;
  }
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

/* Above the knee only the core domain follows the clock: for the power
 * law the cap gives the clock in closed form. */
static double solve_above_knee(const cap_problem *p, double lo) {
  const gpu_spec *g = p->g;
  double target = (p->cap_w - fixed_part(g, p->l, 1)) / clocked_part(g, p->l);
  if (g->interp == NULL)
    return clamp(pow(target, 1 / g->gamma), lo, 1);
  return solve_cap(p, lo, 1);
}

double gpu_load_clock_under_cap(const gpu_spec *g, double cap_w, gpu_load l) {
  cap_problem p = {g, clamp_load(l), cap_w};
  double phi_min = gpu_phi_min(g);
  if (gpu_load_power(g, 1, p.l) <= cap_w)
    return 1;
  if (gpu_load_power(g, phi_min, p.l) >= cap_w)
    return phi_min;
  double knee = fmax(phi_min, fmin(1, g->knee));
  if (gpu_load_power(g, knee, p.l) <= cap_w)
    return solve_above_knee(&p, knee);
  return solve_cap(&p, phi_min, knee);
}

double gpu_speed_compute(const gpu_spec *g, double phi) {
  return clamp(phi, gpu_phi_min(g), 1);
}

double gpu_speed_memory(const gpu_spec *g, double phi) {
  phi = clamp(phi, gpu_phi_min(g), 1);
  return phi >= g->knee ? 1 : phi / g->knee;
}
