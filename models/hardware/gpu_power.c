/* gpu_power.c - the power/DVFS model of gpu.h: a GPU's power at a clock
 * and load, the clock a cap allows, the speeds. The catalog is gpu.c. */
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

/* The cap equation P(phi, L) = C for one load and cap. */
typedef struct cap_problem {
  load_terms t;
  double cap_w;
} cap_problem;

/* The clock a cap allows is defined by P as power_at evaluates it, not by
 * a solver's path: the largest double phi in the bracket whose P(phi) is
 * at most the cap (the cap held, nothing left under it). That is well
 * defined and found by a search on the bits because P as evaluated is
 * monotone non-decreasing in phi, term by term: the clamp is; s_mem is
 * phi / knee correctly rounded (monotone) below the knee, and under 1
 * there (phi / knee < 1 rounds to at most 1), 1 from it; mem * s_mem,
 * the sum with P_idle, clocked * d and the last sum are each a monotone
 * function of monotone non-negative terms, correctly rounded. d is pow's
 * (sim_pow, sim_pow25_fma: pow's bits, pow.h), within 0.54 ULP of
 * phi^gamma (glibc's e_pow.c bound): for doubles phi < phi' the exact
 * values differ by a factor (phi'/phi)^gamma >= 1 + gamma 2^-53, at least
 * 1.25 ULP of the smaller one for gamma 2.5 (2.5 ULP where the binade
 * changes and the larger one's ULP doubles), more than the 1.08 (1.62)
 * ULP the two roundings can take back: pow's phi^2.5 is increasing, and
 * pow(1, y) is 1, power_at's value at 1. The same holds for any gamma
 * over 2.16 (gamma / 2 ULP over 1.08); the schema allows 1 to 4, and for
 * a gamma under that or a measured curve (Steffen's interpolation,
 * monotone between its points in exact arithmetic) P is not proven
 * monotone in doubles: there the answer is still a clock with P(phi) <=
 * cap < P(next double), one crossing of the cap, the largest one
 * wherever P is monotone. */

/* P at phi clamped as power_at clamps it, P's slope and bend (its
 * second derivative) there, and the last sum's rounding error (the exact
 * sum less P: Knuth's TwoSum), for Newton's step to aim at the exact sum
 * that rounds over the cap. The slope: mem / knee below the knee, and
 * clocked d'(phi) with d' = gamma d / phi (phi^(gamma - 1) from the
 * power already taken), a curve's from its interpolation
 * (gsl_interp_eval_deriv; linear to 0 below its first point, as
 * curve_fraction). The bend: clocked (gamma - 1) d' / phi for the power
 * law (s_mem is linear), 0 for a curve (its Newton steps plain). */
typedef struct power_point {
  double slope, bend, err;
} power_point;

static inline double curve_slope(const struct gpu_curve *c, double phi) {
  if (phi < c->phi[0])
    return c->power[0] / c->phi[0];
  return gsl_interp_eval_deriv(c->interp, c->phi, c->power, phi, c->accel);
}

static inline __attribute__((always_inline)) double
power_slope(const cap_problem *p, double phi, double d, power_point *pt) {
  const gpu_spec *g = p->t.g;
  bool below = phi < g->knee;
  double s_mem = below ? phi / g->knee : 1;
  double dd = g->interp != NULL ? curve_slope(g->interp, phi)
                                : g->gamma * d / phi;
  pt->slope = (below ? p->t.mem / g->knee : 0) + p->t.clocked * dd;
  pt->bend = g->interp != NULL ? 0 : p->t.clocked * ((g->gamma - 1) * dd / phi);
  double a = g->idle_w + p->t.mem * s_mem, b = p->t.clocked * d;
  double sum = a + b, b_part = sum - a;
  pt->err = (a - (sum - b_part)) + (b - b_part);
  return sum;
}

/* power_at (memo NULL: pow's bits) and its slope at phi */
static inline __attribute__((always_inline)) double
power_any(const cap_problem *p, double phi, power_point *pt) {
  phi = clamp(phi, p->t.phi_min, 1);
  return power_slope(p, phi, fraction_at(p->t.g, phi, NULL), pt);
}

/* x^2.5 in line in the cap's solve (pow.h's sim_pow25_fma, sim_pow's
 * bits where the CPU has fma): a call there saved and restored the
 * solver's state (every xmm register is the caller's) and went through
 * sim_pow's checks each step. */
#ifdef SIM_POW_FMA
#define GPU_SOLVE_FMA 1
#endif

#ifdef GPU_SOLVE_FMA
/* power_any for a power law of gamma 2.5: d through sim_pow25_fma. */
__attribute__((target("fma"), always_inline)) static inline double
power_fma(const cap_problem *p, double phi, power_point *pt) {
  phi = clamp(phi, p->t.phi_min, 1);
  return power_slope(p, phi, phi == 1 ? 1 : sim_pow25_fma(phi), pt);
}
#endif

typedef double (*power_fn)(const cap_problem *, double, power_point *);

/* Newton's step is taken as the last when it is under this part of
 * phi: with its second-order term (cap_newton) the error after it is
 * then of order step^3 / phi^2 for the power law, 2^-51 phi, a few ULP,
 * which the search on the bits (cap_bits) closes; a plain step (a
 * curve's) leaves about (P'' / 2 P') step^2, so it goes on to 2^-26. */
#define CAP_NEWTON_CLOSE 0x1p-17
#define CAP_NEWTON_CLOSE_PLAIN 0x1p-26

/* The root's bracket as bits (positive doubles order as their bits):
 * P(lo) <= cap < P(hi). */
typedef struct cap_bits {
  uint64_t lo, hi;
} cap_bits;

/* Whether P at the clock of bits x is under the cap, the bracket moved
 * to x; false also where P is not finite (*bad set: the answer is then
 * the lower end as it is). */
static inline __attribute__((always_inline)) bool
held_at(const cap_problem *p, cap_bits *b, uint64_t x, bool *bad, power_fn f) {
  power_point pt;
  double px = f(p, sim_of_bits(x), &pt);
  *bad = !isfinite(px);
  if (px <= p->cap_w)
    return b->lo = x, true;
  if (!*bad)
    b->hi = x;
  return false;
}

/* The largest clock of the bracket with P at most the cap, from a guess
 * x near it: its side of the root found at x, a gallop from there
 * (steps of 1, 2, 4, ... ULP, short of the far end) to bracket the
 * crossing, then halves of the bracket's bits to adjacent doubles. From
 * Newton's last step, x and its neighbour: two powers. */
static inline __attribute__((always_inline)) double
cap_search(const cap_problem *p, cap_bits b, double x, power_fn f) {
  uint64_t g = sim_bits(x);
  bool bad = false, up = g == b.lo; /* x an end: its side known */
  if (b.hi - b.lo <= 1)
    return sim_of_bits(b.lo);
  if (g != b.lo && g != b.hi) {
    if (!(g > b.lo && g < b.hi))
      g = b.lo + (b.hi - b.lo) / 2;
    up = held_at(p, &b, g, &bad, f);
  }
  for (uint64_t k = 1; !bad && b.hi - b.lo > k; k *= 2)
    if (held_at(p, &b, up ? b.lo + k : b.hi - k, &bad, f) != up)
      break;
  while (!bad && b.hi - b.lo > 1)
    held_at(p, &b, b.lo + (b.hi - b.lo) / 2, &bad, f);
  return sim_of_bits(b.lo);
}

/* Half an ULP of x > 0 (normal): the exact sum rounds over x past it. */
static inline double half_ulp(double x) {
  return sim_of_bits((sim_bits(x) & 0x7ff0000000000000ULL) - (53ULL << 52));
}

/* Newton's method on P(phi) = cap kept inside the bracket [lo, hi]
 * (P(lo) <= cap < P(hi), found by the caller) that each power shrinks: a
 * step out of it, or no slope, halves it instead. Each step s = (cap -
 * P) / P' takes its second-order term, s - (P'' / 2 P') s^2
 * (Chebyshev's method, cubic: in bench-10k's peak's first 20 minutes
 * 2.5 powers a solve where the plain step took 3.9, and 5.4 in all with
 * the search where it took 6.8). It starts at the chord's root (below the root where P
 * is convex: the power law), and aims at the clock where the exact sum
 * of P's two parts passes cap and half its ULP, where the rounded P
 * first goes over the cap (P is a staircase in phi: one ULP of P spans
 * several of phi where the idle power dominates). It stops once a step
 * is under CAP_NEWTON_CLOSE of phi and leaves the last ULPs, the inner
 * sums' roundings, to cap_search. P not finite at a clock: the
 * bracket's lower end. */
static inline __attribute__((always_inline)) double
cap_newton(const cap_problem *p, double lo, double hi, double p_lo,
           double p_hi, power_fn f) {
  double x = lo + (hi - lo) * ((p->cap_w - p_lo) / (p_hi - p_lo));
  double over = half_ulp(p->cap_w);
  double close =
      p->t.g->interp != NULL ? CAP_NEWTON_CLOSE_PLAIN : CAP_NEWTON_CLOSE;
  for (int i = 0; i < 100; i++) {
    if (!(x > lo && x < hi) && !((x = lo + 0.5 * (hi - lo)) > lo && x < hi))
      break; /* lo and hi adjacent */
    power_point pt;
    double px = f(p, x, &pt);
    if (!isfinite(px))
      return lo;
    if (px <= p->cap_w)
      lo = x;
    else
      hi = x;
    double step = ((p->cap_w - px) + (over - pt.err)) / pt.slope;
    step -= 0.5 * (pt.bend / pt.slope) * step * step;
    x += step;
    if (fabs(step) <= close * x)
      break;
  }
  return cap_search(p, (cap_bits){sim_bits(lo), sim_bits(hi)}, x, f);
}

static double solve_any(const cap_problem *p, double lo, double hi,
                        double p_lo, double p_hi) {
  return cap_newton(p, lo, hi, p_lo, p_hi, power_any);
}

#ifdef GPU_SOLVE_FMA
/* With no contraction (ISO C's -ffp-contract=off) the only fma
 * instructions here are sim_pow25_fma's. */
__attribute__((target("fma"))) static double
solve_fma(const cap_problem *p, double lo, double hi, double p_lo,
          double p_hi) {
  return cap_newton(p, lo, hi, p_lo, p_hi, power_fma);
}
#endif

/* Whether g's solves are solve_fma's: a power law of gamma 2.5 on a CPU
 * with fma. */
static bool fma_solves(const gpu_spec *g) {
#ifdef GPU_SOLVE_FMA
  return g->interp == NULL && g->gamma == 2.5 && __builtin_cpu_supports("fma");
#else
  (void)g;
  return false;
#endif
}

/* The cap's answer where the bracket [lo, hi] settles it (true: lo
 * itself where P is not finite at an end, a NaN cap or load, or P(lo)
 * is over the cap; hi where P(hi) is not), else its solve in *job. */
static bool bracket_settles(const cap_problem *p, double lo, double hi,
                            double p_lo, double p_hi, double *phi,
                            gpu_cap_job *job) {
  if (!isfinite(p_lo) || !isfinite(p_hi) || !(p_lo <= p->cap_w) || !(lo < hi))
    return *phi = lo, true;
  if (p_hi <= p->cap_w)
    return *phi = hi, true;
  *job = (gpu_cap_job){p->t.mem, p->t.clocked, p->cap_w, lo, hi, p_lo, p_hi};
  return false;
}

/* Job j's cap problem for a type g (phi_min gpu_phi_min's). */
static cap_problem job_problem(const gpu_spec *g, double phi_min,
                               const gpu_cap_job *j) {
  return (cap_problem){{g, phi_min, j->mem, j->clocked}, j->cap};
}

/* The clocks of n jobs of g into phi: in lanes where g's solves are
 * solve_fma's and the CPU has AVX2 (gpu_newton4.c), else one by one;
 * the same doubles either way (the definition's, P as evaluated
 * monotone; test_gpu_batch holds them to it). Out of line: jobs_solved's
 * lone solves keep out of its frame. */
static __attribute__((noinline)) void
jobs_solved_all(const gpu_spec *g, double phi_min, bool fma,
                const gpu_cap_job *job, size_t n, double *phi) {
#ifdef GPU_SOLVE_FMA
  if (fma && sim_lanes_wide()) {
    gpu_cap_type t = {g->idle_w, g->knee, phi_min};
    gpu__newton_lanes(&t, job, n, phi);
    return;
  }
#endif
  for (size_t i = 0; i < n; i++) {
    const gpu_cap_job *j = &job[i];
    cap_problem p = job_problem(g, phi_min, j);
#ifdef GPU_SOLVE_FMA
    if (fma) {
      phi[i] = solve_fma(&p, j->lo, j->hi, j->p_lo, j->p_hi);
      continue;
    }
#endif
    phi[i] = solve_any(&p, j->lo, j->hi, j->p_lo, j->p_hi);
  }
}

/* jobs_solved_all, a lone job above the knee first by the closed form
 * and four neighbouring doubles' powers where g's solves are in lanes
 * (gpu__newton_lone): the fluid mode's solves are mostly lone, about 13
 * a tick, 92% above the knee, where a group of four lanes for one cost
 * about 790 instructions. */
static inline void jobs_solved(const gpu_spec *g, double phi_min, bool fma,
                               const gpu_cap_job *job, size_t n, double *phi) {
#ifdef GPU_SOLVE_FMA
  if (n == 1 && fma && job->lo >= g->knee && sim_lanes_wide()) {
    gpu_cap_type t = {g->idle_w, g->knee, phi_min};
    if (gpu__newton_lone(&t, job, phi))
      return;
  }
#endif
  jobs_solved_all(g, phi_min, fma, job, n, phi);
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

/* Whether g's memo holds g's ends (cap_ends_of would read them alone). */
static bool cap_ends_hold(const gpu_spec *g) {
  const cap_ends *e = &g->pow_memo->ends;
  return e->made && e->interp == g->interp &&
         e->key[0] == sim_bits(g->clock_min_hz) &&
         e->key[1] == sim_bits(g->clock_max_hz) &&
         e->key[2] == sim_bits(g->knee) && e->key[3] == sim_bits(g->gamma);
}

bool gpu_solves_shareable(const gpu_spec *const *types, size_t n) {
  cap_ends local;
  for (size_t t = 0; t < n; t++) {
    if (types[t]->interp != NULL)
      return false;
    (void)cap_ends_of(types[t], &local); /* no memo: each solve's own */
  }
  for (size_t t = 0; t < n; t++) /* a later type's ends made over one's */
    if (types[t]->pow_memo != NULL && !cap_ends_hold(types[t]))
      return false;
  return true;
}

/* power_at at an end: its s_mem and d known. */
static inline double power_at_end(const load_terms *t, double s, double d) {
  return (t->g->idle_w + t->mem * s) + t->clocked * d;
}

/* gpu_load_clock_under_cap's checks where P at full clock, p_1, is
 * above the cap: its answer in *phi (true), or false where it is a solve,
 * that solve in *job: phi_min where even it draws more than the cap (the
 * floor), else the bracket above the knee or below it, whichever side
 * holds the crossing (P at the knee against the cap). */
static inline bool below_full(const cap_problem *p, const cap_ends *e,
                              double p_1, double *phi, gpu_cap_job *job) {
  double p_min, p_knee;
  if (!((p_min = power_at_end(&p->t, e->s_min, e->d_min)) <= p->cap_w))
    return *phi = e->phi_min, true;
  if ((p_knee = power_at_end(&p->t, e->s_knee, e->d_knee)) <= p->cap_w)
    return bracket_settles(p, e->knee, 1, p_knee, p_1, phi, job);
  return bracket_settles(p, e->phi_min, e->knee, p_min, p_knee, phi, job);
}

double gpu_load_clock_under_cap(const gpu_spec *g, double cap_w, gpu_load l) {
  cap_problem p = {load_terms_of(g, l), cap_w};
  double p_1 = power_at(&p.t, 1, g->pow_memo), phi;
  if (p_1 <= cap_w)
    return 1;
  cap_ends local;
  const cap_ends *e = cap_ends_of(g, &local);
  gpu_cap_job job;
  if (!below_full(&p, e, p_1, &phi, &job))
    jobs_solved(g, e->phi_min, fma_solves(g), &job, 1, &phi);
  return phi;
}

/* What the checks before the solve take of a type, once a batch: its
 * cap's ends, power_at's s_mem and d at phi 1 (clamped as it clamps, d
 * through the memo: pow's bits), whether its solves are solve_fma's. */
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
 * them (phi_min the ends'); the answer in *phi (true) or its solve in
 * *job. */
static bool clock_or_job(const type_view *v, double cap_w, gpu_load l,
                         double *phi, gpu_cap_job *job) {
  const gpu_spec *g = v->g;
  double sm = clamp(l.sm, 0, 1), mem = clamp(l.mem, 0, 1);
  double busy = clamp(l.busy, 0, 1);
  cap_problem p = {{g, v->e->phi_min, g->mem_w * mem,
                    g->busy_w * busy + gpu_sm_span(g) * sm},
                   cap_w};
  double p_1 = power_at_end(&p.t, v->s_1, v->d_1);
  if (p_1 <= cap_w)
    return *phi = 1, true;
  return below_full(&p, v->e, p_1, phi, job);
}

/* Clocks a batch at most: the jobs on the stack. */
#define CAPS_BATCH 64

void gpu_load_clocks_under_caps(const gpu_spec *g, size_t n, const double *cap,
                                const gpu_load *l, double *phi) {
  gpu_cap_job job[CAPS_BATCH];
  size_t at[CAPS_BATCH];
  double solved[CAPS_BATCH];
  cap_ends local;
  type_view v = type_view_of(g, &local);
  for (size_t k = 0; k < n;) {
    size_t m = 0, end = n - k < CAPS_BATCH ? n : k + CAPS_BATCH;
    for (; k < end; k++)
      if (!clock_or_job(&v, cap[k], l[k], &phi[k], &job[m]))
        at[m++] = k;
    jobs_solved(g, v.e->phi_min, v.fma, job, m, solved);
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
