/* training_iteration.c - a training job's 1F1B iteration at its
 * stages' clocks (training.h gives the equations and their sources): the
 * stage times and warm-up bubbles, speed tuning's clocks, the iteration
 * time; and the activity profile over an iteration, which the factory
 * reads each control period (train_activity) and power quality samples
 * within one (train_wave_w). The events that move a job are training.c's. */
#include "training.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "bits.h"
#include "training_internal.h"

/* The lowest clock in [phi_min, phi] at which work tau takes at most
 * slot (training.h, speed tuning): phi itself when it takes slot or more
 * there already (the critical stage), phi_min when even that fits, else
 * bisection on the monotone speed, keeping the end that fits. A share a
 * hair below phi_min (train_set_clocks' slack) stays as it is. */
static double tuned_clock(const gpu_spec *g, double tau, double phi,
                          double slot) {
  double lo = fmin(gpu_phi_min(g), phi), hi = phi;
  if (!(tau / gpu_speed_compute(g, hi) < slot))
    return phi;
  if (tau / gpu_speed_compute(g, lo) <= slot)
    return lo;
  for (int k = 0; k < 200; k++) { /* about 53 halvings reach one ulp */
    double mid = lo + (hi - lo) / 2;
    if (!(mid > lo && mid < hi))
      break;
    if (tau / gpu_speed_compute(g, mid) <= slot)
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

/* Stage times, warm-up bubbles and the iteration time at the clocks in
 * phi (training.h): the warm-up of stage s is half the stage times before
 * it, the forward passes of the first microbatch. Then each stage's
 * steady-state clock: phi_s, or with speed tuning the lowest that fits
 * the critical stage's t_c, and its compute block. */
void train__apply_clocks(job *j) {
  double sum = 0, max = 0;
  j->shape_gen++; /* the means train_wave_w keeps are of other times */
  for (uint32_t s = 0; s < j->pp; s++) {
    j->t[s] =
        j->tau[s] / (j->c->fixed_time ? 1 : gpu_speed_compute(j->g, j->phi[s]));
    j->warm[s] = sum / 2;
    sum += j->t[s];
    max = fmax(max, j->t[s]);
  }
  j->iter = sum + (j->m - 1) * max + j->comm;
  for (uint32_t s = 0; s < j->pp; s++) {
    double star = j->c->speed_tuning && j->m > 1
                      ? tuned_clock(j->g, j->tau[s], j->phi[s], max)
                      : j->phi[s];
    j->star[s] = star;
    if (star == j->phi[s]) {
      j->u[s] = j->t[s];
      j->ratio[s] = 1;
      j->block[s] = j->m * j->t[s];
    } else {
      j->u[s] = j->tau[s] / gpu_speed_compute(j->g, star);
      /* What a level draws above idle at each clock (gpu.h: the busy
       * floor does not follow the clock, the SM part does). */
      j->ratio[s] = (gpu_power(j->g, star, 1) - j->g->idle_w) /
                    (gpu_power(j->g, j->phi[s], 1) - j->g->idle_w);
      j->block[s] = j->t[s] + (j->m - 1) * j->u[s];
    }
  }
  j->slowed = false;
  for (uint32_t s = 0; s < j->pp; s++) {
    j->bend[s] = j->warm[s] + j->block[s];
    j->slowed |= !sim_same_bits(j->ratio[s], 1.0);
  }
}

/* T0 from the MFU, then tau so that the 1F1B pipeline takes (1 - c) T0. */
void train__init_times(job *j, const llm_model *m, const llm_precision *w) {
  const train_config *c = j->c;
  if (c->iteration_s > 0) { /* a generic job (gpujob.h) */
    j->t0 = c->iteration_s;
  } else {
    double flops = 6 * m->active_parameters * c->tokens_per_iteration;
    j->t0 = flops / (j->gpus * gpu_peak_flops(j->g, w->compute) * c->mfu);
  }
  j->comm = c->comm_share * j->t0;
  double sum = 0, max = 0;
  for (uint32_t s = 0; s < j->pp; s++) {
    double ws = c->nstage_work > 0 ? c->stage_work[s] : 1;
    sum += ws;
    max = fmax(max, ws);
  }
  double tau = (1 - c->comm_share) * j->t0 / (sum + (j->m - 1) * max);
  for (uint32_t s = 0; s < j->pp; s++) {
    j->tau[s] = tau * (c->nstage_work > 0 ? c->stage_work[s] : 1);
    j->phi[s] = 1;
  }
  j->pipe0 = tau * (sum + (j->m - 1) * max);
  train__apply_clocks(j);
}

/* Time in [0, y) of the periodic profile, y >= 0, that falls in the
 * window [from, from + len) of each iteration: n whole iterations and
 * the part of the window in the last one, r = y - n iter (cut_of keeps
 * n and r a job's stages share; r - from is y - n iter - from's bits). */
static double span_cut(double n, double r, double from, double len) {
  double in = r - from;
  return n * len + (in < 0 ? 0 : in > len ? len : in);
}

/* The share of [x, x + dt) (dt > 0; dt = 0: the instant x) inside the
 * window [from, from + len) of each iteration, in [0, 1]. */
static double share_cut(const x_cut *c, double from, double len) {
  double share;
  if (c->dt > 0)
    share = (span_cut(c->n1, c->r1, from, len) -
             span_cut(c->n0, c->r0, from, len)) /
            c->dt;
  else
    share = c->x >= from && c->x < from + len;
  return share < 0 ? 0 : share > 1 ? 1 : share;
}

/* x's cut in j's profile at its current iteration (x_cut). */
static void cut_of(const job *j, double x, double dt, x_cut *c) {
  c->x = x;
  c->dt = dt;
  c->iter = j->iter;
  c->comm_len = j->comm;
  if (dt > 0) {
    double y = x + dt;
    c->n0 = floor(x / j->iter);
    c->r0 = x - c->n0 * j->iter;
    c->n1 = floor(y / j->iter);
    c->r1 = y - c->n1 * j->iter;
  }
  c->comm = share_cut(c, j->iter - j->comm, j->comm);
  c->set = true;
}

/* Stage s's activity over [x, x + dt) of its iteration (c, x's cut):
 * act_compute in its compute block, act_comm in the closing all-reduce,
 * act_idle in the bubbles between; with speed tuning the slowed
 * microbatches between the first forward half and the last backward
 * half count act_compute d(phi*_s) / d(phi_s), the activity that gives
 * their power at the clock phi_s the factory keeps (training.h). */
static double profile(const job *j, uint32_t s, const x_cut *c) {
  const train_config *cf = j->c;
  double busy = share_cut(c, j->warm[s], j->block[s]);
  double comm = c->comm;
  double a = cf->act_idle + (j->act_c - cf->act_idle) * busy +
             (cf->act_comm - cf->act_idle) * comm;
  if (j->ratio[s] != 1) {
    double slow = share_cut(c, j->warm[s] + j->t[s] / 2, (j->m - 1) * j->u[s]);
    a += j->act_c * (j->ratio[s] - 1) * fmin(slow, busy);
  }
  return a < 0 ? 0 : a;
}

/* Whether x is in [from, from + len): share_cut's instant. */
static bool inside(double x, double from, double len) {
  return x >= from && x < from + len;
}

/* profile's sums at an instant before the slowed microbatches: for a
 * stage idle (a[0]) and busy (a[1]), and the same clamped at 0. */
typedef struct instant {
  double a[2], clamped[2];
} instant;

/* profile at x with dt 0, the same bits, for the wave's samples (34 a
 * period, each every stage of every job). An instant's shares are 0 or
 * 1 (which the clamp leaves), and the all-reduce's is every stage's, so
 * the sum before the slowed microbatches takes two values a job, made
 * once (at_instant). A stage not slowed (its ratio's bits 1's) takes
 * one of them, clamped; fmin of two shares of 0 or 1 is their and. */
static double profile_at(const job *j, uint32_t s, double x,
                         const instant *in) {
  bool busy = inside(x, j->warm[s], j->block[s]);
  if (sim_same_bits(j->ratio[s], 1.0))
    return in->clamped[busy];
  double a = in->a[busy];
  bool slow = inside(x, j->warm[s] + j->t[s] / 2, (j->m - 1) * j->u[s]);
  a += j->act_c * (j->ratio[s] - 1) * (double)(slow && busy);
  return a < 0 ? 0 : a;
}

/* profile's sum of the shares at x before the slowed microbatches, for a
 * stage idle and busy: the same expression. */
static void at_instant(const job *j, double x, instant *in) {
  const train_config *c = j->c;
  double comm = inside(x, j->iter - j->comm, j->comm);
  for (int busy = 0; busy < 2; busy++) {
    in->a[busy] = c->act_idle + (j->act_c - c->act_idle) * busy +
                  (c->act_comm - c->act_idle) * comm;
    in->clamped[busy] = in->a[busy] < 0 ? 0 : in->a[busy];
  }
}

double train_activity(const train_pool *p, size_t i, uint32_t stage,
                      double dt) {
  const job *j = &p->jobs[i];
  if (j->state == TRAIN_CHECKPOINTING)
    return j->c->act_checkpoint;
  if (j->state != TRAIN_COMPUTING)
    return 0;
  double done = train__progress(j, sim_engine_now(p->e));
  double x = (done - floor(done)) * j->iter;
  /* The factory asks for a job's stages in a row at one instant: x's
   * cut is theirs (a cache, not the job's state: hence the pool's const
   * kept). */
  x_cut *c = &p->jobs[i].act_cut;
  if (!(c->set && sim_same_bits(c->x, x) && sim_same_bits(c->dt, dt) &&
        sim_same_bits(c->iter, j->iter) && sim_same_bits(c->comm_len, j->comm)))
    cut_of(j, x, dt, c);
  return profile(j, stage, c);
}

/* Shares of peak the tensor pipes and the memory reach when they run: the
 * roofline's eff_flops and eff_bw defaults (roofline.h gives their
 * sources), so training and serving price a GPU's work alike. */
#define TRAIN_TENSOR_EFF 0.6
#define TRAIN_MEM_EFF 0.8

double train_config_compute_activity(const train_config *c, const gpu_spec *g) {
  if (!isnan(c->act_compute))
    return c->act_compute;
  /* Equal stages at full clock: the block is m tau, the iteration
   * (m + p - 1) tau / (1 - c). */
  double m = (double)c->microbatches, pp = (double)c->pp;
  double block_share = (1 - c->comm_share) * m / (m + pp - 1);
  double sm = fmin(1, c->mfu / (block_share * TRAIN_TENSOR_EFF));
  gpu_load l = {sm, (1 - sm) * TRAIN_MEM_EFF, 1};
  return gpu_load_share(g, l);
}

double train_compute_activity(const train_pool *p, size_t i) {
  return p->jobs[i].act_c;
}

/* Stage s's power per GPU at activity a and its clock phi_s: linear in a
 * (gpu.h), so the mean of the power is the power of the mean. */
static double stage_power(const job *j, uint32_t s, double a) {
  return gpu_power(j->g, j->phi[s], a);
}

/* Replica groups a drifting job is drawn as: their offsets are the
 * normal's quantiles at (k + 1/2) / K, so the draw is deterministic and
 * its spread is the jitter's. */
#define DRIFT_GROUPS 8

static bool drifts(const job *j) {
  return j->c->jitter_s > 0 || j->c->transition_s > 0;
}

/* A drifting job's deviation at x from its period's means (period_means):
 * its replicas in DRIFT_GROUPS groups at their offsets, each phase change
 * spread over the transition (the activity's mean over a transition-long
 * window centred on the instant). */
static double drift_dev(const job *j, double x) {
  double jit = j->c->jitter_s > 0 ? j->c->jitter_s : 0;
  double tr = j->c->transition_s > 0 ? j->c->transition_s : 0;
  double dp = (double)j->gpus / ((double)j->pp * (double)j->c->tp);
  uint32_t groups = (uint32_t)fmax(1, fmin(DRIFT_GROUPS, floor(dp)));
  double per_stage = (double)j->gpus / j->pp / groups, dev = 0;
  for (uint32_t k = 0; k < groups; k++) {
    double off = jit * gsl_cdf_ugaussian_Pinv((k + 0.5) / groups);
    double xk = fmod(fmod(x + off - tr / 2, j->iter) + j->iter, j->iter);
    x_cut c;
    cut_of(j, xk, tr, &c);
    for (uint32_t s = 0; s < j->pp; s++) {
      double a = profile(j, s, &c), mean = j->mean_a[s];
      dev += per_stage *
             (stage_power(j, s, a) - j->mean_p[s] + j->host_w * (a - mean));
    }
  }
  return dev;
}

/* Stage s's term of the wave at its last instant: the sum the wave adds
 * for it, the same expression and order, kept in inst_w. */
static double stage_term(const job *j, uint32_t s) {
  double per_stage = (double)j->gpus / j->pp;
  return per_stage * (j->inst_p[s] - j->mean_p[s] +
                      j->host_w * (j->inst_a[s] - j->mean_a[s]));
}

/* Stage s's last instant moved to activity a: its power and its term
 * made again (period_means keeps them to the clocks and the means). Out
 * of line: a stage's activity moves about once in 40 samples, and the
 * call in the stages' loop kept its sum and arrays out of registers. */
static __attribute__((noinline)) void instant_moved(job *j, uint32_t s,
                                                    double a) {
  j->inst_a[s] = a;
  j->inst_p[s] = stage_power(j, s, a);
  j->inst_w[s] = stage_term(j, s);
}

/* profile_at for a stage slowed (its ratio's bits not 1's): out of line,
 * none is in the benches' jobs without speed tuning. */
static __attribute__((noinline)) double slowed_at(const job *j, uint32_t s,
                                                  double x, const instant *in) {
  return profile_at(j, s, x, in);
}

/* *dev plus the terms of stages s, s + 1, ... while a stage is not slowed
 * and its activity at x is its last instant's (profile_at's bits: in's
 * clamped sum for busy or idle, busy being inside's, the same compares
 * with no short cut), in the stages' order; returns the stage it stopped
 * at (pp: none). No call in it: with one, the sum and x lived on the
 * stack and the job's arrays were read again every stage. */
static inline __attribute__((always_inline)) uint32_t
kept_run(const job *j, uint32_t s, double x, const instant *in, double *dev,
         bool slowed) {
  const double *warm = j->warm, *bend = j->bend, *ratio = j->ratio;
  const double *inst_a = j->inst_a, *inst_w = j->inst_w;
  double idle = in->clamped[0], busy = in->clamped[1], sum = *dev;
  uint32_t pp = j->pp;
  for (; s < pp; s++) {
    bool in_block = (x >= warm[s]) & (x < bend[s]);
    double a = in_block ? busy : idle;
    if ((slowed && !sim_same_bits(ratio[s], 1.0)) ||
        !sim_same_bits(inst_a[s], a))
      break;
    sum += inst_w[s];
  }
  *dev = sum;
  return s;
}

/* The block's end kept (bend: warm + block, the sum inside takes), and
 * the ratios' test left out for a job with no stage slowed. */
static uint32_t terms_kept(const job *j, uint32_t s, double x,
                           const instant *in, double *dev) {
  return j->slowed ? kept_run(j, s, x, in, dev, true)
                   : kept_run(j, s, x, in, dev, false);
}

/* dev plus each stage's term at x, in the stages' order: runs of stages
 * whose term is kept (terms_kept), and between them a stage whose
 * activity moved or that is slowed, its term made again (instant_moved)
 * and added. */
static double stages_at(job *j, double x, const instant *in, double dev) {
  for (uint32_t s = terms_kept(j, 0, x, in, &dev); s < j->pp;
       s = terms_kept(j, s + 1, x, in, &dev)) {
    double a = sim_same_bits(j->ratio[s], 1.0) ? profile_at(j, s, x, in)
                                               : slowed_at(j, s, x, in);
    if (!sim_same_bits(j->inst_a[s], a))
      instant_moved(j, s, a);
    dev += j->inst_w[s];
  }
  return dev;
}

/* Each stage's mean activity over [x0, x0 + period_s) and its power, as
 * the wave subtracts them: computed once a period, not at each of its
 * samples (power_quality.c asks train_wave_w for every sample, 34 a
 * period in bench-10k). The key is all profile and stage_power read
 * that moves: x0 and the period to the bit, and the times and clocks
 * (train__apply_clocks counts their changes); the rest is the job's
 * config and act_c, set at its creation, and host_w, whose setter drops
 * the key. The last instants' terms hold the means: made again. */
static void period_means(job *j, double x0, double period_s) {
  if (j->mean_gen == j->shape_gen && sim_same_bits(j->mean_x0, x0) &&
      sim_same_bits(j->mean_period, period_s))
    return;
  if (j->inst_gen != j->shape_gen) {       /* the last instants' clocks moved */
    for (uint32_t s = 0; s < j->pp; s++) { /* a true pair to start from */
      j->inst_a[s] = j->c->act_idle;
      j->inst_p[s] = stage_power(j, s, j->inst_a[s]);
    }
    j->inst_gen = j->shape_gen;
  }
  x_cut c;
  cut_of(j, x0, period_s, &c);
  for (uint32_t s = 0; s < j->pp; s++) {
    j->mean_a[s] = profile(j, s, &c);
    j->mean_p[s] = stage_power(j, s, j->mean_a[s]);
    j->inst_w[s] = stage_term(j, s);
  }
  j->mean_x0 = x0;
  j->mean_period = period_s;
  j->mean_gen = j->shape_gen;
  j->wave_ok = false; /* its terms made again */
}

/* The stretch [lo, hi) around x in which no stage's block and not the
 * all-reduce starts or ends (the bounds profile_at and at_instant
 * compare x with, computed as they compute them): the nearest at or
 * below x, the nearest above. */
static void wave_stretch(const job *j, double x, double *lo, double *hi) {
  double a = j->iter - j->comm, b = j->iter - j->comm + j->comm;
  double l = a <= x ? a : -INFINITY, h = a > x ? a : INFINITY;
  l = b <= x && b > l ? b : l;
  h = b > x && b < h ? b : h;
  for (uint32_t s = 0; s < j->pp; s++) {
    double w = j->warm[s], e = j->bend[s];
    l = w <= x && w > l ? w : l;
    h = w > x && w < h ? w : h;
    l = e <= x && e > l ? e : l;
    h = e > x && e < h ? e : h;
  }
  *lo = l;
  *hi = h;
}

/* dev plus job j's stages' terms at x (stages_at), or the sum kept when
 * dev and x's stretch are the last call's: every stage's activity is
 * then its last instant's, so stages_at would add the same terms to the
 * same dev and move none. A job with a stage slowed is summed always
 * (its slowed microbatches' bounds are not in the stretch). */
static double job_wave(job *j, double x, double dev) {
  if (j->wave_ok && sim_bits(dev) == j->wave_in && x >= j->wave_lo &&
      x < j->wave_hi)
    return j->wave_out;
  instant in;
  at_instant(j, x, &in);
  double out = stages_at(j, x, &in, dev);
  j->wave_ok = !j->slowed && x == x; /* x NaN: no stretch holds it */
  j->wave_in = sim_bits(dev);
  j->wave_out = out;
  if (j->wave_ok)
    wave_stretch(j, x, &j->wave_lo, &j->wave_hi);
  return out;
}

/* A computing job's place in its iteration at now, (done - floor(done))
 * iter, kept with what it is made of: the fluid's remaining work, rate
 * and start, the iteration time, and now (the iterations are the
 * config's). */
static double place_at(job *j, sim_time now) {
  uint64_t key[4] = {sim_bits(j->fluid.remaining), sim_bits(j->fluid.rate),
                     (uint64_t)j->fluid.since, sim_bits(j->iter)};
  if (j->x0_now == now && memcmp(key, j->x0_key, sizeof key) == 0)
    return j->x0;
  double done = train__progress(j, now);
  j->x0 = (done - floor(done)) * j->iter;
  j->x0_now = now;
  memcpy(j->x0_key, key, sizeof key);
  return j->x0;
}

double train_wave_w(train_pool *p, double period_s, double offset_s) {
  double dev = 0;
  sim_time now = sim_engine_now(p->e);
  for (size_t i = 0; i < p->n; i++) {
    job *j = &p->jobs[i];
    if (j->state != TRAIN_COMPUTING || !(j->iter > 0))
      continue;
    double x0 = place_at(j, now);
    double x = train__wrap_iter(x0 + offset_s, j->iter);
    period_means(j, x0, period_s);
    if (drifts(j)) {
      dev += drift_dev(j, x);
      continue;
    }
    dev = job_wave(j, x, dev);
  }
  return dev;
}
