/* training.c - training jobs (docs/MODELS.md): the pool, and the events
 * that move a job (checkpoints, failures, restarts, completion, pauses
 * and holds). The equations and their sources are in training.h; the
 * 1F1B iteration and its activity profile are in training_iteration.c,
 * the scenario schema in training_scn.c.
 *
 * A job's progress is one sim_fluid in iterations: its remaining work is
 * iterations - progress, drained at 1 / T(phi) while computing and held
 * otherwise. Three handles name everything a job has pending: the fluid's
 * completion, the next failure, and one phase timer (checkpoint due while
 * computing, checkpoint end while checkpointing, restart end while
 * restarting: the states exclude each other, so one handle is enough).
 * Every transition cancels what the new state must not see, so a stale
 * event never runs; the handlers still check the state, as a guard.
 *
 * Loss accounting keeps two marks: risk_from, the time from which GPU
 * time is lost if a failure comes now (the start of the last completed
 * checkpoint, the job's start, or the end of the last restart), and
 * energy_mark, the job's energy counter at that point. A failure moves
 * risk_from to its restart's end, so a second failure never counts a span
 * twice; energy added while restarting goes straight to lost. */
#include "training.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "bits.h"
#include "training_internal.h"
#include "vec.h"

/* ------------------------------------------------------------------ */
/* Jobs                                                                */
/* ------------------------------------------------------------------ */

static int on_ckpt_due(sim_engine *e, void *ctx, const sim_event *ev);
static int on_ckpt_end(sim_engine *e, void *ctx, const sim_event *ev);
static int on_failure(sim_engine *e, void *ctx, const sim_event *ev);
static int on_restart_end(sim_engine *e, void *ctx, const sim_event *ev);
static int on_done(sim_engine *e, void *ctx, const sim_event *ev);

train_pool *train_pool_create(sim_engine *e, uint64_t seed,
                              train_done_fn on_done_fn, void *ctx) {
  static const struct {
    const char *name;
    sim_handle_fn fn;
  } ev[EV_N] = {{"training checkpoint", on_ckpt_due},
                {"training checkpoint end", on_ckpt_end},
                {"training failure", on_failure},
                {"training restart end", on_restart_end},
                {"training done", on_done}};
  const sim_allocator *a = sim_engine_allocator(e);
  train_pool *p = sim_calloc(a, 1, sizeof *p);
  if (p == NULL)
    return NULL;
  *p = (train_pool){
      .e = e, .alloc = a, .seed = seed, .on_done = on_done_fn, .ctx = ctx};
  for (int k = 0; k < EV_N; k++)
    if (sim_engine_register(e, ev[k].name, ev[k].fn, p, &p->kind[k]) !=
        SIM_OK) {
      sim_free(a, p);
      return NULL;
    }
  return p;
}

void train_pool_destroy(train_pool *p) {
  if (p == NULL)
    return;
  for (size_t i = 0; i < p->n; i++) {
    sim_free(p->alloc, p->jobs[i].tau);
    rng_stream_destroy(p->jobs[i].rng);
  }
  sim_free(p->alloc, p->jobs);
  sim_free(p->alloc, p);
}

/* What train_add refuses: what would break the arithmetic (a hand-made
 * config skips the schema) and a precision the GPU lacks. */
static int check_job(const train_config *c, const gpu_spec *g,
                     const llm_model *m, const llm_precision *w,
                     sim_error *err) {
  if (c->dp < 1 || c->pp < 1 || c->tp < 1 ||
      (double)c->dp * (double)c->pp * (double)c->tp > UINT32_MAX)
    return sim_error_set(err, SIM_EINPUT,
                         "job '%s': dp %lld x pp %lld x tp %lld GPUs", c->name,
                         (long long)c->dp, (long long)c->pp, (long long)c->tp);
  if (c->nstage_work != 0 && c->nstage_work != (size_t)c->pp)
    return sim_error_set(err, SIM_EINPUT,
                         "job '%s': %zu stage works for %lld stages", c->name,
                         c->nstage_work, (long long)c->pp);
  if (c->iteration_s > 0) /* a generic job: no LLM (gpujob.h) */
    return c->iterations >= 1 && c->comm_share >= 0 && c->comm_share < 1
               ? SIM_OK
               : sim_error_set(err, SIM_EINPUT,
                               "job '%s': comm %g, %lld iterations: out of "
                               "range",
                               c->name, c->comm_share,
                               (long long)c->iterations);
  sim_error why = {0};
  if (llm_check_precision(g, w, &why) != SIM_OK)
    return sim_error_set(err, SIM_EINPUT, "job '%s': %s", c->name, why.msg);
  if (!(m->active_parameters > 0 && c->tokens_per_iteration > 0 && c->mfu > 0 &&
        c->mfu <= 1 && c->comm_share >= 0 && c->comm_share < 1 &&
        c->microbatches >= 1 && c->iterations >= 1))
    return sim_error_set(err, SIM_EINPUT,
                         "job '%s': model %s, %g tokens, MFU %g, comm %g, "
                         "%lld microbatches, %lld iterations: out of range",
                         c->name, m->name, c->tokens_per_iteration, c->mfu,
                         c->comm_share, (long long)c->microbatches,
                         (long long)c->iterations);
  return SIM_OK;
}

int train_add(train_pool *p, const train_config *c, const gpu_spec *g,
              const llm_model *m, const llm_precision *w, size_t *out,
              sim_error *err) {
  int rc = check_job(c, g, m, w, err);
  if (rc != SIM_OK)
    return rc;
  if (sim_vec_reserve(p->alloc, &p->jobs, &p->cap, p->n + 1,
                      sizeof *p->jobs) != SIM_OK)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  job *j = &p->jobs[p->n];
  *j = (job){.c = c, .g = g, .state = TRAIN_WAITING, .x0_now = -1};
  j->gpus = (uint32_t)(c->dp * c->pp * c->tp);
  j->pp = (uint32_t)c->pp;
  j->m = (double)c->microbatches;
  j->stats.start_s = j->stats.end_s = NAN;
  j->tau = sim_alloc(p->alloc, 14 * (size_t)j->pp * sizeof *j->tau);
  j->rng = rng_stream_create(p->seed, TRAIN_RNG_KIND, p->n, 1);
  if (j->tau == NULL || j->rng == NULL) {
    sim_free(p->alloc, j->tau);
    rng_stream_destroy(j->rng);
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  j->t = j->tau + j->pp;
  j->warm = j->t + j->pp;
  j->phi = j->warm + j->pp;
  j->star = j->phi + j->pp;
  j->u = j->star + j->pp;
  j->ratio = j->u + j->pp;
  j->block = j->ratio + j->pp;
  j->bend = j->block + j->pp;
  j->mean_a = j->bend + j->pp;
  j->mean_p = j->mean_a + j->pp;
  j->inst_a = j->mean_p + j->pp;
  j->inst_p = j->inst_a + j->pp;
  j->inst_w = j->inst_p + j->pp;
  train__init_times(j, m, w);
  j->act_c = train_config_compute_activity(c, g);
  *out = p->n++;
  return SIM_OK;
}

size_t train_count(const train_pool *p) { return p->n; }

uint32_t train_gpus(const train_pool *p, size_t i) { return p->jobs[i].gpus; }

train_state train_state_of(const train_pool *p, size_t i) {
  return p->jobs[i].state;
}

/* Progress moves between events, so the stats are refreshed when read;
 * the jobs array is not part of the pool's constness. */
const train_stats *train_stats_of(const train_pool *p, size_t i) {
  job *j = &p->jobs[i];
  j->stats.iterations_done = train__progress(j, sim_engine_now(p->e));
  return &j->stats;
}

double train_iteration_s(const train_pool *p, size_t i) {
  return p->jobs[i].t0;
}

double train_bubble_share(const train_pool *p, size_t i, uint32_t stage) {
  const job *j = &p->jobs[i];
  return 1 - j->m * j->tau[stage] / j->pipe0;
}

double train_current_iteration_s(const train_pool *p, size_t i) {
  return p->jobs[i].iter;
}

double train_stage_clock(const train_pool *p, size_t i, uint32_t stage) {
  return p->jobs[i].star[stage];
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

/* The engine time s seconds from now, rounded to the nanosecond, at most
 * the end of time. */
static sim_time after(const sim_engine *e, double s) {
  sim_time now = sim_engine_now(e);
  double ns = nearbyint(s * 1e9);
  if (!(ns < (double)(SIM_TIME_MAX - now)))
    return SIM_TIME_MAX;
  return now + (ns > 0 ? (sim_time)ns : 0);
}

static void notify(train_pool *p, size_t i) {
  if (p->on_done != NULL)
    p->on_done(p->ctx, i);
}

/* Computing from now: the fluid drains at 1 / T, and the next checkpoint
 * is due checkpoint_every from now. */
static int compute(train_pool *p, size_t i) {
  job *j = &p->jobs[i];
  j->state = TRAIN_COMPUTING;
  int rc =
      sim_fluid_set_rate(p->e, &j->fluid, 1 / j->iter, p->kind[EV_DONE], i, 0);
  if (rc == SIM_OK && j->c->checkpoint_every_s > 0)
    rc = sim_engine_schedule(p->e, after(p->e, j->c->checkpoint_every_s),
                             p->kind[EV_CKPT_DUE], i, 0, &j->timer);
  return rc;
}

/* Schedules the next interruption: exponential at rate G / mtbf, from
 * the job's own stream. NaN, 0 or infinite MTBF: none. */
static int draw_failure(train_pool *p, size_t i) {
  job *j = &p->jobs[i];
  double mtbf = j->c->mtbf_s;
  if (!(mtbf > 0 && isfinite(mtbf)))
    return SIM_OK;
  double gap = gsl_ran_exponential(j->rng, mtbf / j->gpus);
  return sim_engine_schedule(p->e, after(p->e, gap), p->kind[EV_FAIL], i, 0,
                             &j->fail);
}

int train_start(train_pool *p, size_t i) {
  job *j = &p->jobs[i];
  if (j->state != TRAIN_WAITING)
    return sim_engine_fail(p->e, SIM_ESTATE, "training job '%s' has started",
                           j->c->name);
  sim_time now = sim_engine_now(p->e);
  j->stats.start_s = sim_time_to_s(now);
  j->risk_from = now;
  j->energy_mark = j->stats.energy_j;
  sim_fluid_start(p->e, &j->fluid, (double)j->c->iterations);
  int rc = compute(p, i);
  return rc == SIM_OK ? draw_failure(p, i) : rc;
}

/* The job an event names if it is in state want; NULL for a stale event
 * (which the handles' cancellation already rules out). */
static job *event_job(train_pool *p, const sim_event *ev, train_state want) {
  if (ev->a >= p->n || p->jobs[ev->a].state != want)
    return NULL;
  return &p->jobs[ev->a];
}

/* Pauses progress and takes the checkpoint's state; it counts only once
 * written (on_ckpt_end). */
static int on_ckpt_due(sim_engine *e, void *ctx, const sim_event *ev) {
  train_pool *p = ctx;
  job *j = event_job(p, ev, TRAIN_COMPUTING);
  if (j == NULL)
    return SIM_OK;
  sim_time now = sim_engine_now(e);
  sim_fluid_stop(e, &j->fluid);
  j->pending = train__progress(j, now);
  j->pending_at = now;
  j->pending_mark = j->stats.energy_j;
  j->state = TRAIN_CHECKPOINTING;
  j->resume_at = after(e, j->c->checkpoint_s);
  int rc = sim_engine_schedule(e, j->resume_at, p->kind[EV_CKPT_END], ev->a, 0,
                               &j->timer);
  notify(p, ev->a);
  return rc;
}

/* The checkpoint is written: its progress is safe, and only what comes
 * after its start is at risk. */
static int on_ckpt_end(sim_engine *e, void *ctx, const sim_event *ev) {
  (void)e;
  train_pool *p = ctx;
  job *j = event_job(p, ev, TRAIN_CHECKPOINTING);
  if (j == NULL)
    return SIM_OK;
  j->saved = j->pending;
  j->risk_from = j->pending_at;
  j->energy_mark = j->pending_mark;
  j->stats.checkpoints++;
  int rc = compute(p, ev->a);
  notify(p, ev->a);
  return rc;
}

/* Books what a failure at now throws away (training.h): the progress
 * since the saved point, G x the time from risk_from to the restart's
 * end, and the energy since energy_mark. */
static void lose(job *j, sim_time now, sim_time restart_end) {
  train_stats *st = &j->stats;
  st->failures++;
  st->lost_iterations += train__progress(j, now) - j->saved;
  st->lost_gpu_s += j->gpus * sim_time_to_s(restart_end - j->risk_from);
  st->lost_energy_j += st->energy_j - j->energy_mark;
  j->energy_mark = st->energy_j;
  j->risk_from = restart_end;
}

/* An interruption of job i in a state that holds GPUs: back to the saved
 * point, idle for restart_time (restarted afresh if already restarting).
 * *lost_gpu_s gets the GPU-seconds it adds to the job's loss. A GPU
 * failure draws the next one (redraw); any other interruption leaves the
 * pending failure as it is (the failures are memoryless, and the job's
 * stream of draws stays what it would have been). */
static int interrupt(train_pool *p, size_t i, bool redraw, double *lost_gpu_s) {
  sim_engine *e = p->e;
  job *j = &p->jobs[i];
  sim_time now = sim_engine_now(e);
  double before = j->stats.lost_gpu_s;
  j->resume_at = after(e, j->c->restart_s);
  lose(j, now, j->resume_at);
  *lost_gpu_s = j->stats.lost_gpu_s - before;
  sim_engine_cancel(e, &j->timer);
  sim_fluid_stop(e, &j->fluid);
  sim_fluid_start(e, &j->fluid, (double)j->c->iterations - j->saved);
  j->state = TRAIN_RESTARTING;
  int rc = sim_engine_schedule(e, j->resume_at, p->kind[EV_RESTART_END], i, 0,
                               &j->timer);
  if (rc == SIM_OK && redraw)
    rc = draw_failure(p, i);
  notify(p, i);
  return rc;
}

/* A GPU failure: an interruption in any state that holds GPUs. */
static int on_failure(sim_engine *e, void *ctx, const sim_event *ev) {
  (void)e;
  train_pool *p = ctx;
  if (ev->a >= p->n)
    return SIM_OK;
  train_state st = p->jobs[ev->a].state;
  if (st == TRAIN_WAITING || st == TRAIN_DONE)
    return SIM_OK;
  double lost;
  return interrupt(p, ev->a, true, &lost);
}

int train_interrupt(train_pool *p, size_t i) {
  job *j = &p->jobs[i];
  if (j->state != TRAIN_COMPUTING && j->state != TRAIN_CHECKPOINTING &&
      j->state != TRAIN_RESTARTING)
    return SIM_OK;
  double lost;
  int rc = interrupt(p, i, false, &lost);
  j->stats.fault_interruptions++;
  j->stats.fault_lost_gpu_s += lost;
  return rc;
}

/* Stops the job where it stands: its events cancelled, its progress so
 * far saved (a later failure loses nothing before it), paused. A pause
 * (train_pause) counts itself; a hold (train_hold) waits at its saved
 * point the same way, with no failures drawn and no pause counted, until
 * released and resumed. */
static void hold_still(train_pool *p, size_t i) {
  job *j = &p->jobs[i];
  sim_time now = sim_engine_now(p->e);
  sim_engine_cancel(p->e, &j->timer);
  sim_engine_cancel(p->e, &j->fail);
  sim_fluid_stop(p->e, &j->fluid);
  j->saved = train__progress(j, now);
  j->risk_from = now;
  j->energy_mark = j->stats.energy_j;
  j->state = TRAIN_PAUSED;
}

static int on_restart_end(sim_engine *e, void *ctx, const sim_event *ev) {
  (void)e;
  train_pool *p = ctx;
  job *j = event_job(p, ev, TRAIN_RESTARTING);
  if (j == NULL)
    return SIM_OK;
  int rc = SIM_OK;
  if (j->held) { /* the GPUs are still away: reload once they are back */
    hold_still(p, ev->a);
    j->reload = true;
  } else {
    rc = compute(p, ev->a);
  }
  notify(p, ev->a);
  return rc;
}

/* The fluid ran out: the job is done and lets its GPUs go. */
static int on_done(sim_engine *e, void *ctx, const sim_event *ev) {
  train_pool *p = ctx;
  job *j = event_job(p, ev, TRAIN_COMPUTING);
  if (j == NULL)
    return SIM_OK;
  sim_engine_cancel(e, &j->timer);
  sim_engine_cancel(e, &j->fail);
  sim_fluid_stop(e, &j->fluid);
  j->state = TRAIN_DONE;
  j->stats.end_s = sim_time_to_s(sim_engine_now(e));
  j->stats.iterations_done = (double)j->c->iterations;
  notify(p, ev->a);
  return SIM_OK;
}

/* ------------------------------------------------------------------ */
/* Clocks, activity, energy                                            */
/* ------------------------------------------------------------------ */

int train_set_clocks(train_pool *p, size_t i, const double *phi) {
  job *j = &p->jobs[i];
  /* A hair of slack: a share computed elsewhere from the same clocks may
   * round just outside; gpu_speed_compute clamps it anyway. */
  double lo = gpu_phi_min(j->g) * (1 - 1e-9), hi = 1 + 1e-9;
  for (uint32_t s = 0; s < j->pp; s++)
    if (!(phi[s] >= lo && phi[s] <= hi))
      return sim_engine_fail(p->e, SIM_EINVAL,
                             "training job '%s': stage %u clock share %g is "
                             "outside [%g, 1] (%s)",
                             j->c->name, s, phi[s], gpu_phi_min(j->g),
                             j->g->name);
  /* Callers set clocks at every control tick: unchanged clocks change
   * nothing (and skip the tuning's bisections). */
  if (memcmp(j->phi, phi, j->pp * sizeof *phi) == 0)
    return SIM_OK;
  memcpy(j->phi, phi, j->pp * sizeof *phi);
  double before = j->iter;
  train__apply_clocks(j);
  /* Callers set clocks at every control tick; an unchanged rate keeps
   * its completion event rather than rounding it anew. */
  if (j->state != TRAIN_COMPUTING || j->iter == before)
    return SIM_OK;
  return sim_fluid_set_rate(p->e, &j->fluid, 1 / j->iter, p->kind[EV_DONE], i,
                            0);
}

int train_pause(train_pool *p, size_t i) {
  job *j = &p->jobs[i];
  if (j->state != TRAIN_COMPUTING)
    return SIM_OK;
  hold_still(p, i);
  j->stats.pauses++;
  notify(p, i);
  return SIM_OK;
}

int train_hold(train_pool *p, size_t i, bool hold) {
  job *j = &p->jobs[i];
  bool was = j->held;
  j->held = hold;
  if (hold && j->state == TRAIN_COMPUTING) {
    hold_still(p, i);
    notify(p, i);
  }
  /* GPUs that are away (a dark rack) cannot fail: no draws while held. */
  if (hold && !was && j->state == TRAIN_RESTARTING)
    sim_engine_cancel(p->e, &j->fail);
  if (!hold && was && j->state == TRAIN_RESTARTING)
    return draw_failure(p, i);
  return SIM_OK;
}

/* After a hold that outlasted the restart, the job reloads its checkpoint
 * for restart_time once its GPUs are back, the time lost to the fault. */
static int reload(train_pool *p, size_t i) {
  job *j = &p->jobs[i];
  j->reload = false;
  j->resume_at = after(p->e, j->c->restart_s);
  double lost = j->gpus * j->c->restart_s;
  j->stats.lost_gpu_s += lost;
  j->stats.fault_lost_gpu_s += lost;
  j->state = TRAIN_RESTARTING;
  j->risk_from = j->resume_at;
  int rc = sim_engine_schedule(p->e, j->resume_at, p->kind[EV_RESTART_END], i,
                               0, &j->timer);
  if (rc == SIM_OK)
    rc = draw_failure(p, i);
  notify(p, i);
  return rc;
}

bool train_held(const train_pool *p, size_t i) { return p->jobs[i].held; }

int train_resume(train_pool *p, size_t i) {
  job *j = &p->jobs[i];
  if (j->state != TRAIN_PAUSED || j->held)
    return SIM_OK;
  if (j->reload)
    return reload(p, i);
  j->risk_from = sim_engine_now(p->e);
  j->energy_mark = j->stats.energy_j;
  int rc = compute(p, i);
  if (rc == SIM_OK)
    rc = draw_failure(p, i);
  notify(p, i);
  return rc;
}

void train_set_host_slope(train_pool *p, size_t i, double w_per_gpu) {
  job *j = &p->jobs[i];
  if (!sim_same_bits(j->host_w, w_per_gpu))
    j->mean_gen = 0; /* the wave's kept terms hold the slope: made again */
  j->host_w = w_per_gpu;
}

void train_add_energy(train_pool *p, size_t i, double joules) {
  job *j = &p->jobs[i];
  j->stats.energy_j += joules;
  if (j->state == TRAIN_RESTARTING) {
    j->stats.lost_energy_j += joules;
    j->energy_mark += joules;
  }
}

double train_remaining_s(const train_pool *p, size_t i) {
  const job *j = &p->jobs[i];
  sim_time now = sim_engine_now(p->e);
  switch (j->state) {
  case TRAIN_DONE:
    return 0;
  case TRAIN_WAITING:
    return (double)j->c->iterations * j->t0;
  case TRAIN_COMPUTING:
  case TRAIN_PAUSED: /* how long the pause lasts is the caller's */
    return sim_fluid_remaining(&j->fluid, now) * j->iter;
  default: /* the checkpoint or restart under way, then the rest */
    return sim_time_to_s(j->resume_at - now) +
           sim_fluid_remaining(&j->fluid, now) * j->iter;
  }
}
