/* training_internal.h - what the two files of training share: a job's
 * state, the pool's, and the iteration at the clocks. training.c moves
 * jobs through their states by events (checkpoints, failures, restarts,
 * completion); training_iteration.c computes a job's 1F1B iteration at
 * its stages' clocks and its activity profile. */
#ifndef AIFSIM_TRAINING_INTERNAL_H
#define AIFSIM_TRAINING_INTERNAL_H

#include <gsl/gsl_rng.h>
#include <math.h>

#include "training.h"

enum { EV_CKPT_DUE, EV_CKPT_END, EV_FAIL, EV_RESTART_END, EV_DONE, EV_N };

/* Where the instant x and x + dt fall in a job's periodic profile
 * (span_until's whole iterations n and what is left, y - n iter, at
 * each, for dt > 0), and the closing all-reduce's share of [x, x + dt),
 * which every stage's profile shares: made once for a job's stages, not
 * once a stage. Kept for x, dt, iter and comm (set: made). */
typedef struct x_cut {
  double x, dt, iter, comm_len; /* what it is for */
  double n0, r0, n1, r1;        /* at x and at x + dt */
  double comm;                  /* the all-reduce's share */
  bool set;
} x_cut;

typedef struct job {
  const train_config *c;
  const gpu_spec *g;
  uint32_t gpus, pp;
  double m;      /* microbatches */
  double t0;     /* iteration at full clock, s */
  double pipe0;  /* its pipeline part, sum tau + (m - 1) max tau, s */
  double comm;   /* c T0, s: clocks do not change it */
  double *tau;   /* stage times at full clock, s (pp; one block with */
  double *t;     /* the stage times at the current clocks, */
  double *warm;  /* the warm-up bubbles at the current clocks, */
  double *phi;   /* the current clock shares, */
  double *star;  /* the tuned clocks phi*_s (phi_s untuned), */
  double *u;     /* a steady-state microbatch at phi*_s, s, */
  double *ratio; /* D(phi*_s) / D(phi_s) (training.h), */
  double *block; /* the compute block, t_s + (m - 1) u_s, s, */
  double *bend;  /* and its end, warm + block, s) */
  bool slowed;   /* a stage's ratio is not 1 (its bits) */
  double iter;   /* iteration time at the current clocks, s */
  uint64_t shape_gen; /* train__apply_clocks' count: the times above */
  /* Each stage's mean activity over a period and its power (pp each),
   * for the period from mean_x0 of mean_period s at shape_gen mean_gen
   * (0: none yet): train_wave_w's samples of a period share them. */
  double *mean_a, *mean_p;
  double mean_x0, mean_period;
  uint64_t mean_gen;
  /* Each stage's last instant activity in the wave and its power (pp
   * each), at shape_gen inst_gen (0: none): a period's samples mostly
   * fall in one phase, so mostly one activity. */
  double *inst_a, *inst_p;
  uint64_t inst_gen;
  /* Each stage's term of the wave at its last instant (pp): gpus / pp
   * times (inst_p - mean_p + host_w (inst_a - mean_a)), made again when
   * either moves (train_set_host_slope drops the means for host_w). */
  double *inst_w;
  /* The wave's last sum for this job (train_wave_w): from dev_in (its
   * bits) the stages' terms took it to dev_out, at an x in [lo, hi),
   * where no stage's block nor the all-reduce starts or ends, so every
   * stage's instant is the same and so is every term. Valid while
   * wave_ok (period_means drops it with the terms). */
  uint64_t wave_in;
  double wave_out, wave_lo, wave_hi;
  bool wave_ok;
  /* The wave's last x0 (the job's place in its iteration), at time
   * x0_now from the fluid and iteration time in x0_key (their bits): the
   * wave's samples of a period all ask at one time. x0_now -1: none. */
  sim_time x0_now;
  uint64_t x0_key[4];
  double x0;
  /* train_activity's last x: the factory asks for a job's stages in a
   * row at one instant */
  x_cut act_cut;
  train_state state;
  sim_fluid fluid;     /* iterations left */
  sim_handle timer;    /* checkpoint due or end, or restart end */
  sim_handle fail;     /* the next failure */
  sim_time resume_at;  /* end of the checkpoint or restart under way */
  double saved;        /* progress of the last completed checkpoint */
  double pending;      /* progress of the checkpoint being written, */
  sim_time pending_at; /* when it was taken, */
  double pending_mark; /* and the energy counter then */
  sim_time risk_from;  /* see the top of training.c */
  double energy_mark;
  double host_w; /* train_set_host_slope */
  double act_c;  /* act_compute, or from the MFU (training.h) */
  gsl_rng *rng;  /* failures */
  bool held;     /* train_hold: no computing until released */
  bool reload;   /* a restart ran out while held: reload before computing */
  train_stats stats;
} job;

struct train_pool {
  sim_engine *e;
  const sim_allocator *alloc; /* the engine's: the pool and its jobs */
  uint64_t seed;
  train_done_fn on_done;
  void *ctx;
  uint32_t kind[EV_N];
  job *jobs;
  size_t n, cap;
};

/* Progress in iterations at now: what the fluid has drained. */
static inline double train__progress(const job *j, sim_time now) {
  switch (j->state) {
  case TRAIN_WAITING:
    return 0;
  case TRAIN_DONE:
    return (double)j->c->iterations;
  default:
    return (double)j->c->iterations - sim_fluid_remaining(&j->fluid, now);
  }
}

/* training_iteration.c: the stage times, warm-up bubbles, iteration time
 * and tuned clocks at the clocks in j->phi; and at a job's creation, its
 * full-clock times from the MFU (then train__apply_clocks). */
void train__apply_clocks(job *j);
void train__init_times(job *j, const llm_model *m, const llm_precision *w);

/* fmod(y, iter) for iter > 0, the same bits, without the call where its
 * answer is plain: y itself while |y| < iter, y - iter for y in
 * [iter, 2 iter) (exact: the two within a factor of two). The wave asks
 * it for every job at each of its samples. */
static inline double train__wrap_iter(double y, double iter) {
  if (fabs(y) < iter)
    return y;
  if (y >= iter && y < 2 * iter)
    return y - iter;
  return fmod(y, iter);
}

#endif
