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
#include "lanes.h"
#include "pow.h"

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
/* The two clocks every cap's solve below full clock starts from, phi_min
 * and the knee (held to [phi_min, 1]), with the memory speed s and d
 * there: what power_at takes at them, the same bits. made: for the type
 * fields in key (the clocks, knee, gamma, curve), to the bit; a copy of
 * the type with others shares the memo and makes them again. */
typedef struct cap_ends {
  bool made;
  uint64_t key[4];
  const struct gpu_curve *interp;
  double phi_min, knee, s_min, s_knee, d_min, d_knee;
} cap_ends;

struct gpu_pow_memo {
  uint64_t phi[POW_MEMO], gamma[POW_MEMO];
  double d[POW_MEMO];
  cap_ends ends;
};

struct gpu_pow_memo *gpu__pow_memo_new(void) {
  struct gpu_pow_memo *m = sim_alloc(NULL, sizeof *m);
  /* The bits of a NaN no clamped clock has: every entry empty. */
  for (size_t i = 0; m != NULL && i < POW_MEMO; i++)
    m->phi[i] = UINT64_MAX;
  if (m != NULL)
    m->ends.made = false;
  return m;
}

/* pow(phi, gamma), from m when it holds them (m NULL: pow). */
static double memo_pow(struct gpu_pow_memo *m, double phi, double gamma) {
  if (m == NULL)
    return sim_pow(phi, gamma);
  uint64_t p = sim_bits(phi), y = sim_bits(gamma);
  size_t i =
      (size_t)(((p ^ y) * 0x9e3779b97f4a7c15ULL) >> (64 - POW_MEMO_BITS));
  if (m->phi[i] != p || m->gamma[i] != y) {
    m->phi[i] = p;
    m->gamma[i] = y;
    m->d[i] = sim_pow(phi, gamma);
  }
  return m->d[i];
}

double gpu_phi_min(const gpu_spec *g) {
  return g->clock_min_hz / g->clock_max_hz;
}

static double clamp(double x, double lo, double hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

/* A measured curve's d at a clamped phi. Below the first measured point
 * the curve goes on linearly to 0 at phi = 0: the power law's shape at
 * low clocks is not in the table. */
static double curve_fraction(const struct gpu_curve *c, double phi) {
  if (phi < c->phi[0])
    return c->power[0] * phi / c->phi[0];
  return gsl_interp_eval(c->interp, c->phi, c->power, phi, c->accel);
}

/* d(phi) at a phi already clamped to [phi_min, 1], through memo m (NULL:
 * pow itself, the same result). In line: the cap's solve calls it on
 * each of its clocks. */
static inline double fraction_at(const gpu_spec *g, double phi,
                                 struct gpu_pow_memo *m) {
  if (g->interp != NULL)
    return curve_fraction(g->interp, phi);
  /* pow(1, y) is exactly 1: full clock, the common case */
  return phi == 1 ? 1 : memo_pow(m, phi, g->gamma);
}

double gpu_dynamic_fraction(const gpu_spec *g, double phi) {
  return fraction_at(g, clamp(phi, gpu_phi_min(g), 1), g->pow_memo);
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

/* P(phi, L)'s terms that do not follow phi, for one load (clamped to
 * [0, 1]), taken once by gpu_load_power and by a cap's solve:
 *
 *   P = (P_idle + mem s_m(phi)) + clocked d(phi)
 *
 * with mem = P_mem L.mem (the memory part at full speed: P_mem L.mem
 * s_m is that product times s_m, so the same bits) and clocked = P_busy
 * L.busy + (P_tdp - P_idle - P_busy) L.sm, the core domain's power at
 * full clock (the busy floor: clock tree, L2, crossbar, the SMs' issue;
 * and the SM part; both scale as V^2 f, d(phi): gpu.h). */
typedef struct load_terms {
  const gpu_spec *g;
  double phi_min, mem, clocked;
} load_terms;

static load_terms load_terms_of(const gpu_spec *g, gpu_load l) {
  double sm = clamp(l.sm, 0, 1), mem = clamp(l.mem, 0, 1);
  double busy = clamp(l.busy, 0, 1);
  return (load_terms){g, gpu_phi_min(g), g->mem_w * mem,
                      g->busy_w * busy + gpu_sm_span(g) * sm};
}

/* P(phi, L), d through memo m: the sum in the order above. */
static inline double power_at(const load_terms *t, double phi,
                              struct gpu_pow_memo *m) {
  const gpu_spec *g = t->g;
  phi = clamp(phi, t->phi_min, 1);
  double s_mem = phi >= g->knee ? 1 : phi / g->knee;
  return (g->idle_w + t->mem * s_mem) + t->clocked * fraction_at(g, phi, m);
}

double gpu_load_power(const gpu_spec *g, double phi, gpu_load l) {
  load_terms t = load_terms_of(g, l);
  return power_at(&t, phi, g->pow_memo);
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

/* The cap equation P(phi, L) - C for one load and cap. */
typedef struct cap_problem {
  load_terms t;
  double cap_w;
} cap_problem;

/* P(phi, L) - cap. The root finder's clocks are new ones: pow itself,
 * not the memo (misses that would push out the clocks asked again). */
static inline double cap_residual(const cap_problem *p, double phi) {
  return power_at(&p->t, phi, NULL) - p->cap_w;
}

static bool same_sign(double x, double y) {
  return (x < 0 && y < 0) || (x > 0 && y > 0);
}

/* gsl_root_test_interval(lo, hi, 0, 1e-12): the bracket within 1e-12 of
 * its smaller end (GSL_MIN_DBL's compare, not a call to fmin). */
static bool converged(double lo, double hi) {
  double l = fabs(lo), h = fabs(hi);
  double min_abs = same_sign(lo, hi) ? (l < h ? l : h) : 0;
  return fabs(hi - lo) < 1e-12 * min_abs;
}

/* Brent's method (R. P. Brent, "Algorithms for Minimization without
 * Derivatives", 1973, ch. 4) as GSL's gsl_root_fsolver_brent steps it,
 * operation for operation: this file solved the cap with GSL's solver
 * until 2026-12 and every output keeps its bits (test_gpu's
 * brent_is_gsls holds the two together). The state: b the best estimate,
 * a the previous one, c the bracket's other end; d the last step, e the
 * one before. */
typedef struct brent {
  double a, b, c, d, e, fa, fb, fc;
} brent;

/* The step from b: interpolation when it stays well inside the bracket
 * and shrinks fast enough, else bisection (m). */
static inline void brent_step(brent *s, double tol, double m, bool ac_equal) {
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

/* x^2.5 in line in the cap's solve (pow.h's sim_pow25_fma, sim_pow's
 * bits where the CPU has fma): a call there saved and restored the
 * solver's state (every xmm register is the caller's) and went through
 * sim_pow's checks each step. */
#ifdef SIM_POW_FMA
#define GPU_SOLVE_FMA 1
#endif

#ifdef GPU_SOLVE_FMA
/* cap_residual for a power law of gamma 2.5, d = phi^2.5 through
 * sim_pow25_fma: sim_pow's bits where the CPU has fma. */
__attribute__((target("fma"))) static inline double
residual_fma(const cap_problem *p, double phi) {
  const gpu_spec *g = p->t.g;
  phi = clamp(phi, p->t.phi_min, 1);
  double s_mem = phi >= g->knee ? 1 : phi / g->knee;
  double d = phi == 1 ? 1 : sim_pow25_fma(phi);
  return ((g->idle_w + p->t.mem * s_mem) + p->t.clocked * d) - p->cap_w;
}
#endif

/* The solve's loop (solve_cap) on the residual f, in line in each of its
 * two callers: f a constant there, called directly and put in line.
 * GSL's iteration turned about: a step's interval test needs the sign
 * test the next step's orientation opens with (c set from a where fb
 * and fc agree), and the bracket the test reads, [b, c] then, is the
 * same after the swap that may follow. So each turn orients, tests the
 * step before and steps: one sign test a step, the state in locals.
 * The same operations on the same values, the same answers. */
static inline __attribute__((always_inline)) double
brent_loop(const cap_problem *p, double lo, double hi, double fa, double fb,
           double (*f)(const cap_problem *, double)) {
  double a = lo, b = hi, c = hi, d = hi - lo, e = hi - lo, fc = fb, phi = lo;
  for (int i = 0;; i++) {
    bool ac_equal = false;
    if (same_sign(fb, fc)) {
      ac_equal = true;
      c = a, fc = fa, d = e = b - a;
    }
    if (i > 0) { /* the last step's lower end and interval test */
      double up = b < c ? c : b;
      phi = b < c ? b : c;
      /* converged's answer where phi > 0 (so up too): |up - phi| is
       * up - phi and the smaller magnitude phi */
      if ((phi > 0 ? up - phi < 1e-12 * phi : converged(phi, up)) || i == 100)
        return phi;
    }
    if (fabs(fc) < fabs(fb)) {
      ac_equal = true;
      a = b, b = c, c = a;
      fa = fb, fb = fc, fc = fa;
    }
    double tol = 0.5 * DBL_EPSILON * fabs(b), m = 0.5 * (c - b);
    if (fb == 0 || fabs(m) <= tol) /* converged: the state stays */
      return fb == 0 || b < c ? b : c;
    brent t = {a, b, c, d, e, fa, fb, fc};
    brent_step(&t, tol, m, ac_equal);
    d = t.d, e = t.e;
    a = b, fa = fb;
    double next = b + (fabs(d) > tol ? d : m > 0 ? +tol : -tol);
    double f_next = f(p, next);
    if (!isfinite(f_next))
      return phi;
    b = next, fb = f_next;
  }
}

static double brent_any(const cap_problem *p, double lo, double hi, double fa,
                        double fb) {
  return brent_loop(p, lo, hi, fa, fb, cap_residual);
}

#ifdef GPU_SOLVE_FMA
/* With no contraction (ISO C's -ffp-contract=off) the only fma
 * instructions here are sim_pow25_fma's. */
__attribute__((target("fma"))) static double
brent_fma(const cap_problem *p, double lo, double hi, double fa, double fb) {
  return brent_loop(p, lo, hi, fa, fb, residual_fma);
}
#endif

/* P(phi) - cap is monotone in phi: the root is unique and bracketed by
 * [lo, hi] when the caller gets here, with P there p_lo and p_hi (the
 * caller's checks found them: the residuals a solver would evaluate
 * first, the same bits). The answer is the lower end of GSL's bracket
 * once gsl_root_test_interval(lo, hi, 0, 1e-12) holds, which keeps P <=
 * cap; lo itself when the ends do not straddle the cap or P is not
 * finite there (a NaN cap or load); the last lower end when P is not
 * finite at a new clock (GSL's error) or after 100 iterations.
 *
 * One loop on a state in locals, no solver to allocate, no call through
 * a pointer; when GSL's iteration finds b converged (fb 0 or the
 * bracket's half under its tolerance) it leaves its state as it was, so
 * every later iteration would find the same bracket: its lower end is
 * the answer whatever the interval test says. A power law of gamma 2.5
 * on a CPU with fma takes brent_fma: the same steps, x^2.5 in line; that
 * solve is left to the caller as *job (false), the others answered in
 * *phi (true). */
static inline bool solve_or_job(const cap_problem *p, double lo, double hi,
                                double p_lo, double p_hi, bool fma, double *phi,
                                gpu_brent_job *job) {
  double fa = p_lo - p->cap_w, fb = p_hi - p->cap_w;
  if (lo > hi || !isfinite(fa) || !isfinite(fb) || same_sign(fa, fb))
    return *phi = lo, true;
  if (fma) {
    *job = (gpu_brent_job){p->t.mem, p->t.clocked, p->cap_w, lo, hi, fa, fb};
    return false;
  }
  return *phi = brent_any(p, lo, hi, fa, fb), true;
}

/* Whether g's solves are brent_fma's: a power law of gamma 2.5 on a CPU
 * with fma. */
static bool fma_solves(const gpu_spec *g) {
#ifdef GPU_SOLVE_FMA
  return g->interp == NULL && g->gamma == 2.5 && __builtin_cpu_supports("fma");
#else
  (void)g;
  return false;
#endif
}

#ifdef GPU_SOLVE_FMA
double gpu__brent_job(const gpu_spec *g, const gpu_brent_job *j) {
  cap_problem p = {{g, gpu_phi_min(g), j->mem, j->clocked}, j->cap};
  return brent_fma(&p, j->lo, j->hi, j->fa, j->fb);
}
#endif

/* solve_or_job's answer, the job solved here. */
static double solve_cap(const cap_problem *p, double lo, double hi, double p_lo,
                        double p_hi) {
  double phi;
  gpu_brent_job job;
  if (solve_or_job(p, lo, hi, p_lo, p_hi, fma_solves(p->t.g), &phi, &job))
    return phi;
#ifdef GPU_SOLVE_FMA
  return gpu__brent_job(p->t.g, &job);
#else
  return lo; /* no job without fma */
#endif
}

/* Above the knee only the core domain follows the clock: for the power
 * law the cap gives the clock in closed form. */
static inline double solve_above_knee(const cap_problem *p, double lo,
                                      double p_lo, double p_1) {
  const gpu_spec *g = p->t.g;
  double target = (p->cap_w - (g->idle_w + p->t.mem)) / p->t.clocked;
  if (g->interp == NULL)
    return clamp(pow(target, 1 / g->gamma), lo, 1);
  return solve_cap(p, lo, 1, p_lo, p_1);
}

/* s_mem and d at phi clamped as power_at clamps it. */
static void end_at(const gpu_spec *g, double phi_min, double phi, double *s,
                   double *d) {
  phi = clamp(phi, phi_min, 1);
  *s = phi >= g->knee ? 1 : phi / g->knee;
  *d = fraction_at(g, phi, NULL);
}

static void cap_ends_make(const gpu_spec *g, cap_ends *e) {
  e->made = true;
  e->key[0] = sim_bits(g->clock_min_hz), e->key[1] = sim_bits(g->clock_max_hz);
  e->key[2] = sim_bits(g->knee), e->key[3] = sim_bits(g->gamma);
  e->interp = g->interp;
  e->phi_min = gpu_phi_min(g);
  e->knee = fmax(e->phi_min, fmin(1, g->knee));
  end_at(g, e->phi_min, e->phi_min, &e->s_min, &e->d_min);
  end_at(g, e->phi_min, e->knee, &e->s_knee, &e->d_knee);
}

/* g's cap ends: its memo's when they are g's (made again when not), else
 * made in *local (no memo). */
static inline const cap_ends *cap_ends_of(const gpu_spec *g, cap_ends *local) {
  cap_ends *e = g->pow_memo != NULL ? &g->pow_memo->ends : local;
  if (e == local || !e->made || e->interp != g->interp ||
      e->key[0] != sim_bits(g->clock_min_hz) ||
      e->key[1] != sim_bits(g->clock_max_hz) ||
      e->key[2] != sim_bits(g->knee) || e->key[3] != sim_bits(g->gamma))
    cap_ends_make(g, e);
  return e;
}

/* power_at at an end: its s_mem and d known. */
static inline double power_at_end(const load_terms *t, double s, double d) {
  return (t->g->idle_w + t->mem * s) + t->clocked * d;
}

/* gpu_load_clock_under_cap's checks where P at full clock, p_1, is
 * above the cap: its answer in *phi (true), or false where it is
 * brent_fma's solve (fma), that solve in *job. */
static inline bool below_full(const cap_problem *p, const cap_ends *e,
                              double p_1, bool fma, double *phi,
                              gpu_brent_job *job) {
  double p_min, p_knee;
  if ((p_min = power_at_end(&p->t, e->s_min, e->d_min)) >= p->cap_w)
    return *phi = e->phi_min, true;
  if ((p_knee = power_at_end(&p->t, e->s_knee, e->d_knee)) <= p->cap_w)
    return *phi = solve_above_knee(p, e->knee, p_knee, p_1), true;
  return solve_or_job(p, e->phi_min, e->knee, p_min, p_knee, fma, phi, job);
}

double gpu_load_clock_under_cap(const gpu_spec *g, double cap_w, gpu_load l) {
  cap_problem p = {load_terms_of(g, l), cap_w};
  double p_1 = power_at(&p.t, 1, g->pow_memo), phi;
  if (p_1 <= cap_w)
    return 1;
  cap_ends local;
  gpu_brent_job job;
  if (below_full(&p, cap_ends_of(g, &local), p_1, fma_solves(g), &phi, &job))
    return phi;
#ifdef GPU_SOLVE_FMA
  return gpu__brent_job(g, &job);
#else
  return phi;
#endif
}

/* What the checks before Brent take of a type, once a batch: its cap's
 * ends, power_at's s_mem and d at phi 1 (clamped as it clamps, d through
 * the memo: pow's bits), whether its solves are brent_fma's. */
typedef struct type_view {
  const gpu_spec *g;
  const cap_ends *e;
  double s_1, d_1;
  bool fma;
} type_view;

static type_view type_view_of(const gpu_spec *g, cap_ends *local) {
  type_view v = {g, cap_ends_of(g, local), 0, 0, fma_solves(g)};
  double one = clamp(1, v.e->phi_min, 1);
  v.s_1 = one >= g->knee ? 1 : one / g->knee;
  v.d_1 = fraction_at(g, one, g->pow_memo);
  return v;
}

/* gpu_load_clock_under_cap's checks with the type's view: P at phi 1 by
 * power_at_end (power_at's sum), the load's terms as load_terms_of takes
 * them (phi_min the ends'). */
static bool clock_or_job(const type_view *v, double cap_w, gpu_load l,
                         double *phi, gpu_brent_job *job) {
  const gpu_spec *g = v->g;
  double sm = clamp(l.sm, 0, 1), mem = clamp(l.mem, 0, 1);
  double busy = clamp(l.busy, 0, 1);
  cap_problem p = {{g, v->e->phi_min, g->mem_w * mem,
                    g->busy_w * busy + gpu_sm_span(g) * sm},
                   cap_w};
  double p_1 = power_at_end(&p.t, v->s_1, v->d_1);
  if (p_1 <= cap_w)
    return *phi = 1, true;
  return below_full(&p, v->e, p_1, v->fma, phi, job);
}

/* Clocks a batch at most: the jobs on the stack. */
#define CAPS_BATCH 64

/* The batch's brent_fma jobs, in lanes where the CPU has AVX2 (and fma:
 * it has, or there would be no job) and more than one is left. */
static void jobs_solved(const gpu_spec *g, const gpu_brent_job *job, size_t n,
                        double *phi) {
#ifdef GPU_SOLVE_FMA
  if (n > 1 && sim_lanes_wide()) {
    gpu_brent_type t = {g->idle_w, g->knee, gpu_phi_min(g)};
    gpu__brent_lanes(&t, job, n, phi);
    return;
  }
  for (size_t i = 0; i < n; i++)
    phi[i] = gpu__brent_job(g, &job[i]);
#else
  (void)g, (void)job, (void)n, (void)phi;
#endif
}

void gpu_load_clocks_under_caps(const gpu_spec *g, size_t n, const double *cap,
                                const gpu_load *l, double *phi) {
  gpu_brent_job job[CAPS_BATCH];
  size_t at[CAPS_BATCH];
  double solved[CAPS_BATCH];
  cap_ends local;
  type_view v = type_view_of(g, &local);
  for (size_t k = 0; k < n;) {
    size_t m = 0, end = n - k < CAPS_BATCH ? n : k + CAPS_BATCH;
    for (; k < end; k++)
      if (!clock_or_job(&v, cap[k], l[k], &phi[k], &job[m]))
        at[m++] = k;
    jobs_solved(g, job, m, solved);
    for (size_t i = 0; i < m; i++)
      phi[at[i]] = solved[i];
  }
}

double gpu_speed_compute(const gpu_spec *g, double phi) {
  return clamp(phi, gpu_phi_min(g), 1);
}

double gpu_speed_memory(const gpu_spec *g, double phi) {
  return speed_memory(g, gpu_phi_min(g), phi);
}
