/* training.c - training jobs (DESIGN 4.5): the scenario schema, the 1F1B
 * iteration and its activity profile, and the events that move a job
 * (checkpoints, failures, restarts, completion). The equations and their
 * sources are in training.h.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

/* ------------------------------------------------------------------ */
/* Schema                                                              */
/* ------------------------------------------------------------------ */

static int check_train(void *obj, const scn_loc *loc, void *user,
                       sim_error *err);
static void release_train(void *obj);

#define INTEGER(k, field, lo, hi, def, fl, h)                                  \
  {                                                                            \
    .key = k, .type = SCN_INT, .offset = offsetof(train_config, field),        \
    .min = lo, .max = hi, .flags = fl, .dflt = def, .help = h                  \
  }

#define SHARE(k, field, def, fl, h)                                            \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(train_config, field),   \
    .dim = UNITS_FRACTION, .min = 0, .max = 1, .flags = fl, .dflt = def,       \
    .help = h                                                                  \
  }

#define TIME(k, field, def, h)                                                 \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(train_config, field),   \
    .dim = UNITS_TIME, .min = 0, .max = INFINITY, .dflt = def, .help = h       \
  }

#define NAME(k, field, def, fl, h)                                             \
  {                                                                            \
    .key = k, .type = SCN_STRING, .offset = offsetof(train_config, field),     \
    .flags = fl, .dflt = def, .help = h                                        \
  }

static const char *const deferral_names[] = {"none", "threshold", "window",
                                             NULL};
static const char *const signal_names[] = {"carbon", "price", NULL};

static const scn_field train_fields[] = {
    NAME("name", name, NULL, SCN_REQUIRED | SCN_NONEMPTY, "a name for the job"),
    NAME("model", model, NULL, SCN_REQUIRED | SCN_NONEMPTY,
         "an LLM of the catalog, e.g. Llama-3.1-70B"),
    NAME("precision", precision, "fp16", SCN_NONEMPTY,
         "a precision of the catalog; fp16 stands for BF16 math"),
    NAME("gpu", gpu, NULL, 0, "the GPU type to run on; absent: any"),
    INTEGER("dp", dp, 1, 1e6, "1", 0, "data-parallel degree"),
    INTEGER("pp", pp, 1, 4096, "1", 0, "pipeline-parallel degree (stages)"),
    INTEGER("tp", tp, 1, 1024, "1", 0, "tensor-parallel degree"),
    {.key = "tokens_per_iteration",
     .type = SCN_QUANTITY,
     .offset = offsetof(train_config, tokens_per_iteration),
     .dim = UNITS_NUMBER,
     .min = 0,
     .max = 1e12,
     .flags = SCN_REQUIRED | SCN_POSITIVE,
     .help = "global batch in tokens (Llama 3 405B: 16777216)"},
    INTEGER("iterations", iterations, 1, 1e15, NULL, SCN_REQUIRED,
            "the job's length in iterations"),
    /* 40%: Llama 3 405B trained at 38-43% BF16 MFU on 8,192-16,384 H100s
     * (Dubey et al. 2024, arXiv:2407.21783, Table 4); PaLM 46.2% on TPU
     * v4 (Chowdhery et al. 2022, Table 3). */
    SHARE("mfu", mfu, "40%", SCN_POSITIVE,
          "model-FLOPs utilisation over an iteration, (0, 100%]"),
    INTEGER("microbatches", microbatches, 1, 1e6, "8", 0,
            "microbatches per iteration and pipeline (m)"),
    {.key = "stage_work",
     .type = SCN_STRINGS,
     .offset = offsetof(train_config, stage_work_text),
     .count_offset = offsetof(train_config, nstage_work_text),
     .help = "relative work per stage, pp numbers, e.g. [1.2, 1, 1, 1.3]; "
             "absent: equal"},
    /* 10%: a starting point for the exposed data-parallel all-reduce and
     * optimizer step; frameworks overlap most of the all-reduce with the
     * backward pass, but every iteration of a large job ends in a visible
     * communication phase (Choukse et al. 2025, arXiv:2508.14318). */
    SHARE("comm_share", comm_share, "10%", 0,
          "share of the iteration in exposed communication, below 100%"),
    /* Compute phases draw close to TDP, communication phases and
     * checkpoints far less, toward idle (Choukse et al. 2025, section 2
     * and figure 1, DGX-H100 production data). NCCL kernels keep some SMs
     * and the links busy, so communication sits above a checkpoint,
     * during which the GPUs wait on storage. */
    SHARE("act_compute", act_compute, "90%", 0,
          "activity while a stage computes (near TDP)"),
    SHARE("act_idle", act_idle, "25%", 0,
          "activity in pipeline bubbles and communication"),
    SHARE("act_checkpoint", act_checkpoint, "10%", 0,
          "activity while a checkpoint is written"),
    /* 30 min: Young's interval sqrt(2 x checkpoint_time x job MTBF)
     * (Young 1974) is 19 min for a 1-min checkpoint at Llama 3's job MTBF
     * (54 days / 419 = 3.1 h); 30 min is a common round figure. */
    TIME("checkpoint_every", checkpoint_every_s, "30 min",
         "wall time between checkpoints; 0 s: never"),
    /* 1 min: Llama 3's checkpoints hold 1 MB to 4 GB per GPU, written to
     * storage that sustains 2 TB/s (Dubey et al. 2024, section 3.3.1):
     * 16,384 x 4 GB takes about 33 s. */
    TIME("checkpoint_time", checkpoint_s, "1 min",
         "how long one checkpoint takes (progress paused)"),
    TIME("mtbf", mtbf_s, NULL,
         "mean time between failures of one GPU; absent or 0 s: none. "
         "Llama 3: 419 interruptions in 54 days on 16,384 GPUs, about "
         "50,700 h"),
    /* 10 min: a starting point for detecting the failure, replacing the
     * node, rescheduling and loading the checkpoint. */
    TIME("restart_time", restart_s, "10 min",
         "GPUs held idle after a failure before computing again"),
    /* Off: frameworks run every stage flat out unless told otherwise;
     * Perseus (Chung et al. 2024) is the opt-in. */
    {.key = "deferral",
     .type = SCN_ENUM,
     .offset = offsetof(train_config, deferral),
     .names = deferral_names,
     .dflt = "none",
     .help = "grid-aware timing: none, threshold (pause while the signal "
             "is above deferral_threshold) or window (start in the "
             "cleanest window that meets the deadline)"},
    {.key = "deferral_signal",
     .type = SCN_ENUM,
     .offset = offsetof(train_config, deferral_signal),
     .names = signal_names,
     .dflt = "carbon",
     .help = "what deferral follows: carbon or price"},
    {.key = "flexibility",
     .type = SCN_QUANTITY,
     .offset = offsetof(train_config, flexibility),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 10,
     .dflt = "0%",
     .help = "the slowdown the job tolerates (tiers 0/10/25/50%): its "
             "deadline is arrival + run x (1 + flexibility)"},
    TIME("deadline", deadline_s, NULL,
         "when the job must be done, from the start of the run; absent: "
         "from flexibility"),
    {.key = "deferral_threshold",
     .type = SCN_QUANTITY,
     .offset = offsetof(train_config, deferral_threshold),
     .dim = UNITS_NUMBER,
     .min = 0,
     .max = INFINITY,
     .help = "threshold: the signal's level (gCO2/kWh or $/MWh) above "
             "which the job pauses; absent: the signal's mean until the "
             "deadline"},
    {.key = "speed_tuning",
     .type = SCN_BOOL,
     .offset = offsetof(train_config, speed_tuning),
     .dflt = "false",
     .help = "Perseus: run each non-critical stage's steady-state "
             "microbatches at the lowest clock that still fits the critical "
             "stage's time (less energy, same iteration time)"},
    TIME("arrival", arrival_s, "0 s", "when the job is submitted"),
    INTEGER("priority", priority, 0, 0, "0", 0, "higher runs first"),
    INTEGER("count", count, 1, 100000, "1", 0,
            "jobs this entry submits: the first at arrival, the rest after "
            "exponential gaps (Poisson arrivals)"),
    {.key = "interarrival",
     .type = SCN_QUANTITY,
     .offset = offsetof(train_config, interarrival_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = INFINITY,
     .flags = SCN_POSITIVE,
     .dflt = "1 h",
     .help = "count > 1: the mean gap between the jobs' arrivals"},
    {.key = "dp_choices",
     .type = SCN_STRINGS,
     .offset = offsetof(train_config, dp_choices_text),
     .count_offset = offsetof(train_config, ndp_choices_text),
     .help = "count > 1: data-parallel degrees drawn with equal "
             "probability for each job, e.g. [1, 2, 4, 8]; absent: dp"},
};

const scn_schema train_schema =
    SCN_SCHEMA("training job", train_config, train_fields, .check = check_train,
               .release = release_train);

static void release_train(void *obj) {
  train_config *c = obj;
  free(c->stage_work);
  c->stage_work = NULL;
  c->nstage_work = 0;
  free(c->dp_choices);
  c->dp_choices = NULL;
  c->ndp_choices = 0;
}

/* Parses the written dp_choices into whole numbers >= 1. */
static int parse_dp_choices(train_config *c, const scn_loc *loc,
                            sim_error *err) {
  size_t n = c->ndp_choices_text;
  if (c->dp_choices_text == NULL || n == 0)
    return SIM_OK;
  if ((c->dp_choices = malloc(n * sizeof *c->dp_choices)) == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  c->ndp_choices = n;
  for (size_t k = 0; k < n; k++) {
    const char *text = c->dp_choices_text[k];
    char key[64], *end;
    snprintf(key, sizeof key, "dp_choices.%zu", k);
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || v < 1 || v > 1000000)
      return scn_fail(loc, key, err, NULL,
                      "'dp_choices' entry %zu must be a whole number from 1 "
                      "to 1000000 (got %s)",
                      k, text);
    c->dp_choices[k] = v;
  }
  return SIM_OK;
}

/* Parses the written stage_work into numbers, one per stage. An empty
 * list is an absent one (all equal): it is how the resolved scenario
 * writes the absent key, and must read back. */
static int parse_stage_work(train_config *c, const scn_loc *loc,
                            sim_error *err) {
  size_t n = c->nstage_work_text;
  if (c->stage_work_text == NULL || n == 0)
    return SIM_OK;
  if (n != (size_t)c->pp)
    return scn_fail(loc, "stage_work", err,
                    "one relative work per pipeline stage, e.g. "
                    "[1.2, 1, 1, 1.3] for pp: 4",
                    "'stage_work' has %zu entries; pp is %lld", n,
                    (long long)c->pp);
  if ((c->stage_work = malloc(n * sizeof *c->stage_work)) == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  c->nstage_work = n;
  for (size_t k = 0; k < n; k++) {
    units_problem prob = {0};
    const char *text = c->stage_work_text[k];
    char key[64];
    snprintf(key, sizeof key, "stage_work.%zu", k);
    if (units_parse(text, UNITS_NUMBER, &c->stage_work[k], &prob) != 0)
      return scn_fail(loc, key, err, NULL, "'stage_work' entry %zu: %s", k,
                      prob.msg);
    if (!(c->stage_work[k] > 0))
      return scn_fail(loc, key, err, NULL,
                      "'stage_work' entry %zu must be greater than zero "
                      "(got %s)",
                      k, text);
  }
  return SIM_OK;
}

static int check_train(void *obj, const scn_loc *loc, void *user,
                       sim_error *err) {
  (void)user;
  train_config *c = obj;
  const char *keys[] = {"dp", "pp", "tp"};
  const int64_t deg[] = {c->dp, c->pp, c->tp};
  for (int k = 0; k < 3; k++)
    if (deg[k] < 1)
      return scn_fail(loc, keys[k], err, "dp x pp x tp is the job's GPUs",
                      "'%s' is %lld: a job needs at least one GPU", keys[k],
                      (long long)deg[k]);
  if ((double)c->dp * (double)c->pp * (double)c->tp > UINT32_MAX)
    return scn_fail(loc, "dp", err, NULL,
                    "dp x pp x tp = %.0f GPUs is more than a run can hold",
                    (double)c->dp * (double)c->pp * (double)c->tp);
  if (!(c->comm_share < 1))
    return scn_fail(loc, "comm_share", err, NULL,
                    "'comm_share' must be below 100%%: the pipeline needs "
                    "some of the iteration");
  if (c->count > 1 && !isnan(c->deadline_s))
    return scn_fail(loc, "deadline", err,
                    "give a stream its slack with flexibility instead",
                    "one deadline for a stream of %lld jobs would make its "
                    "later arrivals late on arrival",
                    (long long)c->count);
  int rc = parse_stage_work(c, loc, err);
  return rc == SIM_OK ? parse_dp_choices(c, loc, err) : rc;
}

/* ------------------------------------------------------------------ */
/* Jobs                                                                */
/* ------------------------------------------------------------------ */

enum { EV_CKPT_DUE, EV_CKPT_END, EV_FAIL, EV_RESTART_END, EV_DONE, EV_N };

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
  double *ratio; /* d(phi*_s) / d(phi_s), */
  double *block; /* and the compute block, t_s + (m - 1) u_s, s) */
  double iter;   /* iteration time at the current clocks, s */
  train_state state;
  sim_fluid fluid;     /* iterations left */
  sim_handle timer;    /* checkpoint due or end, or restart end */
  sim_handle fail;     /* the next failure */
  sim_time resume_at;  /* end of the checkpoint or restart under way */
  double saved;        /* progress of the last completed checkpoint */
  double pending;      /* progress of the checkpoint being written, */
  sim_time pending_at; /* when it was taken, */
  double pending_mark; /* and the energy counter then */
  sim_time risk_from;  /* see the top of the file */
  double energy_mark;
  gsl_rng *rng; /* failures */
  bool held;    /* train_hold: no computing until released */
  bool reload;  /* a restart ran out while held: reload before computing */
  train_stats stats;
} job;

struct train_pool {
  sim_engine *e;
  uint64_t seed;
  train_done_fn on_done;
  void *ctx;
  uint32_t kind[EV_N];
  job *jobs;
  size_t n, cap;
};

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
  train_pool *p = calloc(1, sizeof *p);
  if (p == NULL)
    return NULL;
  *p = (train_pool){.e = e, .seed = seed, .on_done = on_done_fn, .ctx = ctx};
  for (int k = 0; k < EV_N; k++)
    if (sim_engine_register(e, ev[k].name, ev[k].fn, p, &p->kind[k]) !=
        SIM_OK) {
      free(p);
      return NULL;
    }
  return p;
}

void train_pool_destroy(train_pool *p) {
  if (p == NULL)
    return;
  for (size_t i = 0; i < p->n; i++) {
    free(p->jobs[i].tau);
    rng_stream_destroy(p->jobs[i].rng);
  }
  free(p->jobs);
  free(p);
}

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
static void apply_clocks(job *j) {
  double sum = 0, max = 0;
  for (uint32_t s = 0; s < j->pp; s++) {
    j->t[s] = j->tau[s] / gpu_speed_compute(j->g, j->phi[s]);
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
      j->ratio[s] = gpu_dynamic_fraction(j->g, star) /
                    gpu_dynamic_fraction(j->g, j->phi[s]);
      j->block[s] = j->t[s] + (j->m - 1) * j->u[s];
    }
  }
}

/* T0 from the MFU, then tau so that the 1F1B pipeline takes (1 - c) T0. */
static void init_times(job *j, const llm_model *m, const llm_precision *w) {
  const train_config *c = j->c;
  double flops = 6 * m->active_parameters * c->tokens_per_iteration;
  j->t0 = flops / (j->gpus * gpu_peak_flops(j->g, w->compute) * c->mfu);
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
  apply_clocks(j);
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

static int grow(train_pool *p) {
  if (p->n < p->cap)
    return SIM_OK;
  size_t cap = p->cap ? 2 * p->cap : 8;
  job *jobs = realloc(p->jobs, cap * sizeof *jobs);
  if (jobs == NULL)
    return SIM_ENOMEM;
  p->jobs = jobs;
  p->cap = cap;
  return SIM_OK;
}

int train_add(train_pool *p, const train_config *c, const gpu_spec *g,
              const llm_model *m, const llm_precision *w, size_t *out,
              sim_error *err) {
  int rc = check_job(c, g, m, w, err);
  if (rc != SIM_OK)
    return rc;
  if (grow(p) != SIM_OK)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  job *j = &p->jobs[p->n];
  *j = (job){.c = c, .g = g, .state = TRAIN_WAITING};
  j->gpus = (uint32_t)(c->dp * c->pp * c->tp);
  j->pp = (uint32_t)c->pp;
  j->m = (double)c->microbatches;
  j->stats.start_s = j->stats.end_s = NAN;
  j->tau = malloc(8 * (size_t)j->pp * sizeof *j->tau);
  j->rng = rng_stream_create(p->seed, TRAIN_RNG_KIND, p->n, 1);
  if (j->tau == NULL || j->rng == NULL) {
    free(j->tau);
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
  init_times(j, m, w);
  *out = p->n++;
  return SIM_OK;
}

size_t train_count(const train_pool *p) { return p->n; }

uint32_t train_gpus(const train_pool *p, size_t i) { return p->jobs[i].gpus; }

train_state train_state_of(const train_pool *p, size_t i) {
  return p->jobs[i].state;
}

/* Progress in iterations at now: what the fluid has drained. */
static double progress(const job *j, sim_time now) {
  switch (j->state) {
  case TRAIN_WAITING:
    return 0;
  case TRAIN_DONE:
    return (double)j->c->iterations;
  default:
    return (double)j->c->iterations - sim_fluid_remaining(&j->fluid, now);
  }
}

/* Progress moves between events, so the stats are refreshed when read;
 * the jobs array is not part of the pool's constness. */
const train_stats *train_stats_of(const train_pool *p, size_t i) {
  job *j = &p->jobs[i];
  j->stats.iterations_done = progress(j, sim_engine_now(p->e));
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
  j->pending = progress(j, now);
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
  st->lost_iterations += progress(j, now) - j->saved;
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

/* Held (train_hold): the job waits at its saved point like a pause, with
 * no failures drawn and no pause counted, until released and resumed. */
static void hold_still(train_pool *p, size_t i) {
  job *j = &p->jobs[i];
  sim_time now = sim_engine_now(p->e);
  sim_engine_cancel(p->e, &j->timer);
  sim_engine_cancel(p->e, &j->fail);
  sim_fluid_stop(p->e, &j->fluid);
  j->saved = progress(j, now);
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
  apply_clocks(j);
  /* Callers set clocks at every control tick; an unchanged rate keeps
   * its completion event rather than rounding it anew. */
  if (j->state != TRAIN_COMPUTING || j->iter == before)
    return SIM_OK;
  return sim_fluid_set_rate(p->e, &j->fluid, 1 / j->iter, p->kind[EV_DONE], i,
                            0);
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
 * its compute block, act_idle outside; with speed tuning the slowed
 * microbatches between the first forward half and the last backward
 * half count act_compute d(phi*_s) / d(phi_s), the activity that gives
 * their power at the clock phi_s the factory keeps (training.h). */
static double profile(const job *j, uint32_t s, double x, double dt) {
  const train_config *c = j->c;
  double busy = share_in(j, x, dt, j->warm[s], j->block[s]);
  double a = c->act_idle + (c->act_compute - c->act_idle) * busy;
  if (j->ratio[s] != 1) {
    double slow =
        share_in(j, x, dt, j->warm[s] + j->t[s] / 2, (j->m - 1) * j->u[s]);
    a += c->act_compute * (j->ratio[s] - 1) * fmin(slow, busy);
  }
  return a < 0 ? 0 : a;
}

int train_pause(train_pool *p, size_t i) {
  job *j = &p->jobs[i];
  if (j->state != TRAIN_COMPUTING)
    return SIM_OK;
  sim_time now = sim_engine_now(p->e);
  sim_engine_cancel(p->e, &j->timer);
  sim_engine_cancel(p->e, &j->fail);
  sim_fluid_stop(p->e, &j->fluid);
  /* The pause's checkpoint: a later failure loses nothing before it. */
  j->saved = progress(j, now);
  j->risk_from = now;
  j->energy_mark = j->stats.energy_j;
  j->state = TRAIN_PAUSED;
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

double train_activity(const train_pool *p, size_t i, uint32_t stage,
                      double dt) {
  const job *j = &p->jobs[i];
  if (j->state == TRAIN_CHECKPOINTING)
    return j->c->act_checkpoint;
  if (j->state != TRAIN_COMPUTING)
    return 0;
  double done = progress(j, sim_engine_now(p->e));
  double x = (done - floor(done)) * j->iter;
  return profile(j, stage, x, dt);
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
