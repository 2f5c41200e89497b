/* gpu_power.c - the power/DVFS model of gpu.h: a GPU's power at a clock
 * and load, the clock a cap allows, the speeds. The catalog is gpu.c. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_interp.h>

#include "alloc.h"
#include "bits.h"
#include "gpu.h"
#include "gpu_internal.h"

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
  size_t i =
      (size_t)(((p ^ y) * 0x9e3779b97f4a7c15ULL) >> (64 - POW_MEMO_BITS));
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

/* d(phi) with the type's phi_min at hand (gpu_phi_min's division is
 * the same each call; its callers in this file take it once), through
 * memo m (NULL: pow itself, the same result). */
static double dynamic_fraction(const gpu_spec *g, double phi_min, double phi,
                               struct gpu_pow_memo *m) {
  phi = clamp(phi, phi_min, 1);
  const struct gpu_curve *c = g->interp;
  if (c == NULL) /* pow(1, y) is exactly 1: full clock, the common case */
    return phi == 1 ? 1 : memo_pow(m, phi, g->gamma);
  /* Below the first measured point the curve goes on linearly to 0 at
   * phi = 0: the power law's shape at low clocks is not in the table. */
  if (phi < c->phi[0])
    return c->power[0] * phi / c->phi[0];
  return gsl_interp_eval(c->interp, c->phi, c->power, phi, c->accel);
}

double gpu_dynamic_fraction(const gpu_spec *g, double phi) {
  return dynamic_fraction(g, gpu_phi_min(g), phi, g->pow_memo);
}

static double speed_memory(const gpu_spec *g, double phi_min, double phi) {
  phi = clamp(phi, phi_min, 1);
  return phi >= g->knee ? 1 : phi / g->knee;
}

double gpu_sm_span(const gpu_spec *g) {
  return g->tdp_w - g->idle_w - g->busy_w;
}

gpu_load gpu_load_level(double a) {
  a = clamp(a, 0, 1);
  return (gpu_load){a, 0, a};
}

static gpu_load clamp_load(gpu_load l) {
  return (gpu_load){clamp(l.sm, 0, 1), clamp(l.mem, 0, 1), clamp(l.busy, 0, 1)};
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

/* P(phi, L) for a clamped load, given phi_min and the load's clocked
 * part, d through memo m: gpu_load_power's sum, the same bits. */
static double power_at(const gpu_spec *g, double phi_min, gpu_load l,
                       double clocked, double phi, struct gpu_pow_memo *m) {
  phi = clamp(phi, phi_min, 1);
  return fixed_part(g, l, speed_memory(g, phi_min, phi)) +
         clocked * dynamic_fraction(g, phi_min, phi, m);
}

double gpu_load_power(const gpu_spec *g, double phi, gpu_load l) {
  l = clamp_load(l);
  return power_at(g, gpu_phi_min(g), l, clocked_part(g, l), phi, g->pow_memo);
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

/* The cap equation P(phi, L) - C for one load and cap, what does not
 * follow phi taken once (gpu_load_power's terms, the same bits). */
typedef struct cap_problem {
  const gpu_spec *g;
  gpu_load l; /* clamped */
  double cap_w, phi_min;
  double clocked; /* clocked_part */
} cap_problem;

static cap_problem cap_problem_of(const gpu_spec *g, double cap_w, gpu_load l) {
  l = clamp_load(l);
  return (cap_problem){g, l, cap_w, gpu_phi_min(g), clocked_part(g, l)};
}

/* P(phi, L) for the problem's load, d through the type's memo. */
static double problem_power(const cap_problem *p, double phi) {
  return power_at(p->g, p->phi_min, p->l, p->clocked, phi, p->g->pow_memo);
}

/* P(phi, L) - cap. The root finder's clocks are new ones: pow itself,
 * not the memo (misses that would push out the clocks asked again). */
static double cap_residual(const cap_problem *p, double phi) {
  return power_at(p->g, p->phi_min, p->l, p->clocked, phi, NULL) - p->cap_w;
}

/* Brent's method (R. P. Brent, "Algorithms for Minimization without
 * Derivatives", 1973, ch. 4) as GSL's gsl_root_fsolver_brent steps it,
 * operation for operation: this file solved the cap with GSL's solver
 * until 2026-12 and every output keeps its bits (test_gpu's
 * brent_is_gsls holds the two together). In line, with no solver to
 * allocate and no call through a pointer, a solve costs about 40% less
 * (docs/PERFORMANCE.md, ninth session). The state: b the best estimate,
 * a the previous one, c the bracket's other end; d the last step, e the
 * one before. */
typedef struct brent {
  double a, b, c, d, e, fa, fb, fc;
} brent;

static bool same_sign(double x, double y) {
  return (x < 0 && y < 0) || (x > 0 && y > 0);
}

/* The step from b: interpolation when it stays well inside the bracket
 * and shrinks fast enough, else bisection (m). */
static void brent_step(brent *s, double tol, double m, bool ac_equal) {
  if (fabs(s->e) < tol || fabs(s->fa) <= fabs(s->fb)) {
    s->d = s->e = m;
    return;
  }
  double p, q, r, sr = s->fb / s->fa;
  if (ac_equal) { /* secant */
    p = 2 * m * sr;
    q = 1 - sr;
  } else { /* inverse quadratic */
    q = s->fa / s->fc;
    r = s->fb / s->fc;
    p = sr * (2 * m * q * (q - r) - (s->b - s->a) * (r - 1));
    q = (q - 1) * (r - 1) * (sr - 1);
  }
  if (p > 0)
    q = -q;
  else
    p = -p;
  double lim = 3 * m * q - fabs(tol * q), e_q = fabs(s->e * q);
  if (2 * p < (lim < e_q ? lim : e_q)) {
    s->e = s->d;
    s->d = p / q;
  } else {
    s->d = s->e = m;
  }
}

/* One iteration; the new bracket in [*lo, *hi]. false: P was not finite
 * at the new clock (the state and bracket stay). */
static bool brent_iterate(brent *s, const cap_problem *p, double *lo,
                          double *hi) {
  brent t = *s;
  bool ac_equal = false;
  if (same_sign(t.fb, t.fc)) {
    ac_equal = true;
    t.c = t.a, t.fc = t.fa, t.d = t.e = t.b - t.a;
  }
  if (fabs(t.fc) < fabs(t.fb)) {
    ac_equal = true;
    t.a = t.b, t.b = t.c, t.c = t.a;
    t.fa = t.fb, t.fb = t.fc, t.fc = t.fa;
  }
  double tol = 0.5 * DBL_EPSILON * fabs(t.b), m = 0.5 * (t.c - t.b);
  if (t.fb == 0 || fabs(m) <= tol) { /* converged: the state stays */
    *lo = t.fb == 0 || t.b < t.c ? t.b : t.c;
    *hi = t.fb == 0 || t.b >= t.c ? t.b : t.c;
    return true;
  }
  brent_step(&t, tol, m, ac_equal);
  t.a = t.b, t.fa = t.fb;
  t.b += fabs(t.d) > tol ? t.d : m > 0 ? +tol : -tol;
  t.fb = cap_residual(p, t.b);
  if (!isfinite(t.fb))
    return false;
  *s = t;
  double c = same_sign(t.fb, t.fc) ? t.a : t.c;
  *lo = t.b < c ? t.b : c;
  *hi = t.b < c ? c : t.b;
  return true;
}

/* gsl_root_test_interval(lo, hi, 0, 1e-12): the bracket within 1e-12 of
 * its smaller end (GSL_MIN_DBL's compare, not a call to fmin). */
static bool converged(double lo, double hi) {
  double l = fabs(lo), h = fabs(hi);
  double min_abs = same_sign(lo, hi) ? (l < h ? l : h) : 0;
  return fabs(hi - lo) < 1e-12 * min_abs;
}

/* P(phi) - cap is monotone in phi: the root is unique and bracketed by
 * [lo, hi] when the caller gets here, with P there p_lo and p_hi (the
 * caller's checks found them: the residuals a solver would evaluate
 * first, the same bits). The lower end of the last bracket keeps P <=
 * cap; lo itself when the ends do not straddle the cap or P is not
 * finite there (a NaN cap or load). */
static double solve_cap(const cap_problem *p, double lo, double hi, double p_lo,
                        double p_hi) {
  brent s = {.a = lo,
             .b = hi,
             .c = hi,
             .d = hi - lo,
             .e = hi - lo,
             .fa = p_lo - p->cap_w,
             .fb = p_hi - p->cap_w};
  if (lo > hi || !isfinite(s.fa) || !isfinite(s.fb) || same_sign(s.fa, s.fb))
    return lo;
  s.fc = s.fb;
  double phi = lo;
  for (int i = 0; i < 100; i++) {
    if (!brent_iterate(&s, p, &lo, &hi))
      break;
    phi = lo;
    if (converged(lo, hi))
      break;
  }
  return phi;
}

/* Above the knee only the core domain follows the clock: for the power
 * law the cap gives the clock in closed form. */
static double solve_above_knee(const cap_problem *p, double lo, double p_lo,
                               double p_1) {
  const gpu_spec *g = p->g;
  double target = (p->cap_w - fixed_part(g, p->l, 1)) / p->clocked;
  if (g->interp == NULL)
    return clamp(pow(target, 1 / g->gamma), lo, 1);
  return solve_cap(p, lo, 1, p_lo, p_1);
}

double gpu_load_clock_under_cap(const gpu_spec *g, double cap_w, gpu_load l) {
  cap_problem p = cap_problem_of(g, cap_w, l);
  double phi_min = p.phi_min, p_1 = problem_power(&p, 1), p_min, p_knee;
  if (p_1 <= cap_w)
    return 1;
  if ((p_min = problem_power(&p, phi_min)) >= cap_w)
    return phi_min;
  double knee = fmax(phi_min, fmin(1, g->knee));
  if ((p_knee = problem_power(&p, knee)) <= cap_w)
    return solve_above_knee(&p, knee, p_knee, p_1);
  return solve_cap(&p, phi_min, knee, p_min, p_knee);
}

double gpu_speed_compute(const gpu_spec *g, double phi) {
  return clamp(phi, gpu_phi_min(g), 1);
}

double gpu_speed_memory(const gpu_spec *g, double phi) {
  return speed_memory(g, gpu_phi_min(g), phi);
}
