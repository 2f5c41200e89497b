/* training_iteration.c - a training job's 1F1B iteration at its
 * stages' clocks (training.h gives the equations and their sources): the
 * stage times and warm-up bubbles, speed tuning's clocks, the iteration
 * time; and the activity profile over an iteration, which the factory
 * reads each control period (train_activity) and power quality samples
 * within one (train_wave_w). The events that move a job are training.c's. */
#include "training.h"

#include <math.h>

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
  for (uint32_t s = 0; s < j->pp; s++) {
    j->t[s] = j->tau[s] /
              (j->c->fixed_time ? 1 : gpu_speed_compute(j->g, j->phi[s]));
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
 * the part of the window in the last one. */
static double span_until(const job *j, double y, double from, double len) {
  double n = floor(y / j->iter), r = y - n * j->iter - from;
  return n * len + (r < 0 ? 0 : r > len ? len : r);
}

/* The share of [x, x + dt) (dt > 0; dt = 0: the instant x) inside the
 * window [from, from + len) of each iteration, in [0, 1]. */
static double share_in(const job *j, double x, double dt, double from,
                       double len) {
  double share;
  if (dt > 0)
    share =
        (span_until(j, x + dt, from, len) - span_until(j, x, from, len)) / dt;
  else
    share = x >= from && x < from + len;
  return share < 0 ? 0 : share > 1 ? 1 : share;
}

/* Stage s's activity over [x, x + dt) of its iteration: act_compute in
 * its compute block, act_comm in the closing all-reduce, act_idle in the
 * bubbles between; with speed tuning the slowed
 * microbatches between the first forward half and the last backward
 * half count act_compute d(phi*_s) / d(phi_s), the activity that gives
 * their power at the clock phi_s the factory keeps (training.h). */
static double profile(const job *j, uint32_t s, double x, double dt) {
  const train_config *c = j->c;
  double busy = share_in(j, x, dt, j->warm[s], j->block[s]);
  double comm = share_in(j, x, dt, j->iter - j->comm, j->comm);
  double a = c->act_idle + (j->act_c - c->act_idle) * busy +
             (c->act_comm - c->act_idle) * comm;
  if (j->ratio[s] != 1) {
    double slow =
        share_in(j, x, dt, j->warm[s] + j->t[s] / 2, (j->m - 1) * j->u[s]);
    a += j->act_c * (j->ratio[s] - 1) * fmin(slow, busy);
  }
  return a < 0 ? 0 : a;
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
  return profile(j, stage, x, dt);
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

double train_wave_w(const train_pool *p, double period_s, double offset_s) {
  double dev = 0;
  sim_time now = sim_engine_now(p->e);
  for (size_t i = 0; i < p->n; i++) {
    const job *j = &p->jobs[i];
    if (j->state != TRAIN_COMPUTING || !(j->iter > 0))
      continue;
    double done = train__progress(j, now);
    double x0 = (done - floor(done)) * j->iter;
    double x = fmod(x0 + offset_s, j->iter);
    double per_stage = (double)j->gpus / j->pp;
    for (uint32_t s = 0; s < j->pp; s++) {
      double a = profile(j, s, x, 0), mean = profile(j, s, x0, period_s);
      dev += per_stage * (stage_power(j, s, a) - stage_power(j, s, mean) +
                          j->host_w * (a - mean));
    }
  }
  return dev;
}
