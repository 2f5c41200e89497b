/* work.c - the workloads of a factory on its GPUs (see work.h). */
#include "work.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "control.h"
#include "deferral.h"
#include "file.h"
#include "rng.h"
#include "scheduler.h"

#define NO_SLOT CONTROL_NO_SLOT

/* A replica of a service or a pipeline stage of a job: GPUs that work in
 * step. Its GPUs' indices are gpus[first .. first + n). */
typedef struct slot {
  uint32_t owner; /* row of the /jobs table: services, then jobs */
  uint32_t part;  /* replica or stage */
  size_t first;
  uint32_t n;
  bool active;
  bool dark; /* a GPU of it is on a dark rack (a PDU fault) */
} slot;

struct work {
  const factory_scenario *sc;
  const factory_config *cfg;
  sim_engine *engine;
  rack_fleet *fleet;
  tel_sink *sink;
  work_settle_fn settle;
  void *settle_ctx;
  sched *sched;
  train_pool *train;
  inf_service **svc;  /* nservices */
  size_t *svc_tel;    /* their /services group ids */
  char **svc_group;   /* "services/NAME" */
  train_config *jobs; /* the training entries expanded, one per job */
  char **job_names;   /* of the jobs an entry's count made */
  size_t njobs;
  uint32_t *job_type; /* GPU type index per job */
  size_t *job_slot0;  /* first slot of each job */
  bool *job_dark;     /* per job: a GPU of it on a dark rack */
  slot *slots;
  size_t nslots;
  uint32_t *gpus;     /* the slots' GPU indices */
  uint32_t *gpu_slot; /* per fleet GPU: its slot or NO_SLOT */
  double *phi;        /* scratch: per stage of one job */
  double *tick_j;     /* scratch: per owner, one interval */
  double *owner_j;    /* per owner, the run */
  double idle_j, overhead_j;
  double iv_inference_j, iv_training_j; /* this sample interval */
  uint32_t busy;
  uint64_t arrived, running, queued, rejected, done;
  uint32_t arrival_kind, release_kind;
  double facility_w, cap_w;
  double dr_end_s; /* the demand-response event under way ends; NaN: none */
  /* Grid-aware timing, per job: its plan, where in it the job is, its
   * deadline, and the CO2 of its energy. */
  defer_plan *plans;
  size_t *plan_pos;
  double *deadline_s;
  double *owner_co2_kg;   /* per owner */
  sched_running *in_pass; /* a pass's running jobs, njobs of room */
  /* The free GPUs of dark racks, kept from the scheduler: per rack, its
   * list at blocked + first[r], how many, and whether it is dark. */
  uint32_t *blocked, *blocked_n;
  bool *blocked_dark;
};

static size_t nowners(const work *w) { return w->cfg->nservices + w->njobs; }

/* ------------------------------------------------------------------ */
/* Slots and GPUs                                                      */
/* ------------------------------------------------------------------ */

/* The GPU type index of a name, or -1. */
static long type_index(const rack_fleet *fl, const char *name) {
  for (size_t t = 0; t < fl->ntypes; t++)
    if (strcmp(fl->types[t]->name, name) == 0)
      return (long)t;
  return -1;
}

/* The type a workload asks for, or the fleet's only one. */
static uint32_t workload_type(const rack_fleet *fl, const char *gpu) {
  long t = gpu != NULL ? type_index(fl, gpu) : 0;
  return t < 0 ? 0 : (uint32_t)t;
}

/* Whether a GPU of slot s sits on a dark rack. */
static bool slot_on_dark(const work *w, const slot *s) {
  for (uint32_t i = 0; i < s->n; i++)
    if (w->fleet->dark[w->fleet->rack[w->gpus[s->first + i]]])
      return true;
  return false;
}

/* Gives slot k its GPUs (n of them from list) and marks them. */
static void slot_take(work *w, size_t k, const uint32_t *list) {
  slot *s = &w->slots[k];
  memcpy(w->gpus + s->first, list, s->n * sizeof *list);
  for (uint32_t i = 0; i < s->n; i++)
    w->gpu_slot[list[i]] = (uint32_t)k;
  s->active = true;
  s->dark = slot_on_dark(w, s);
  w->busy += s->n;
}

static void slot_free(work *w, size_t k) {
  slot *s = &w->slots[k];
  for (uint32_t i = 0; i < s->n; i++)
    w->gpu_slot[w->gpus[s->first + i]] = NO_SLOT;
  sched_release(w->sched, w->gpus + s->first, s->n);
  s->active = false;
  s->dark = false;
  w->busy -= s->n;
}

/* The slowest clock among a slot's GPUs: it paces the slot. GPUs often
 * share cap and activity, so a GPU like the one before is not solved
 * again. */
static double slot_phi(const work *w, const slot *s) {
  const rack_fleet *fl = w->fleet;
  double phi = 1, last_cap = NAN, last_a = NAN, last_phi = 1;
  for (uint32_t k = 0; k < s->n; k++) {
    uint32_t i = w->gpus[s->first + k];
    double cap = fmin(fl->cap_w[i], fl->thermal_cap_w[fl->rack[i]]);
    if (cap != last_cap || fl->activity[i] != last_a) {
      last_phi = rack_gpu_phi(fl, i);
      last_cap = cap;
      last_a = fl->activity[i];
    }
    phi = fmin(phi, last_phi);
  }
  return phi;
}

static void slot_set_activity(work *w, const slot *s, double a) {
  for (uint32_t k = 0; k < s->n; k++)
    w->fleet->activity[w->gpus[s->first + k]] = a;
}

/* ------------------------------------------------------------------ */
/* Training jobs and the scheduler                                     */
/* ------------------------------------------------------------------ */

static bool is_job(const work *w, uint32_t owner) {
  return owner >= w->cfg->nservices;
}

static size_t job_of(const work *w, uint32_t owner) {
  return owner - w->cfg->nservices;
}

/* The extra power a job draws when it runs: its GPUs from idle to
 * computing. */
static double job_power_w(const work *w, size_t j) {
  const train_config *c = &w->jobs[j];
  const gpu_spec *g = w->fleet->types[w->job_type[j]];
  return (double)train_gpus(w->train, j) * (g->tdp_w - g->idle_w) *
         c->act_compute;
}

static int start_job(void *ctx, const sched_job *job, const uint32_t *gpus) {
  work *w = ctx;
  size_t j = job->id;
  w->settle(w->settle_ctx, sim_engine_now(w->engine));
  uint32_t pp = (uint32_t)w->jobs[j].pp;
  uint32_t per_stage = job->gpus / pp;
  bool dark = false;
  for (uint32_t s = 0; s < pp; s++) {
    slot_take(w, w->job_slot0[j] + s, gpus + (size_t)s * per_stage);
    dark |= w->slots[w->job_slot0[j] + s].dark;
  }
  w->queued--;
  w->running++;
  int rc = train_start(w->train, j);
  /* Placed on a dark rack's free GPUs (the scheduler does not know of
   * faults): held from its start, with nothing to lose, until they are
   * back. */
  w->job_dark[j] = dark;
  if (rc == SIM_OK && dark)
    rc = train_hold(w->train, j, true);
  return rc;
}

/* One scheduling pass: the running jobs' estimated ends for backfill, the
 * headroom under the cap for power-aware admission. */
static int schedule(work *w) {
  size_t n = w->njobs, k = 0;
  sched_running *running = w->in_pass;
  double now = sim_time_to_s(sim_engine_now(w->engine));
  for (size_t j = 0; j < n; j++) {
    train_state st = train_state_of(w->train, j);
    if (st == TRAIN_WAITING || st == TRAIN_DONE)
      continue;
    running[k++] = (sched_running){now + train_remaining_s(w->train, j),
                                   train_gpus(w->train, j), w->job_type[j]};
  }
  double headroom = w->cfg->scheduler.admission == SCHED_POWER_AWARE
                        ? w->cap_w - w->facility_w
                        : INFINITY;
  return sched_pass(w->sched, now, headroom, running, k, start_job, w);
}

/* Queues job j for the scheduler now. */
static int submit(work *w, size_t j) {
  const train_config *c = &w->jobs[j];
  sched_job job = {.id = j,
                   .gpus = train_gpus(w->train, j),
                   .type = w->job_type[j],
                   .priority = c->priority,
                   .arrival_s = c->arrival_s,
                   .runtime_s = train_remaining_s(w->train, j),
                   .power_w = job_power_w(w, j)};
  int rc = sched_submit(w->sched, &job);
  if (rc != SIM_OK)
    return sim_engine_fail(w->engine, rc, "out of memory queueing job %s",
                           c->name);
  return schedule(w);
}

/* The signal a flexible job follows. */
static const sig_series *job_signal(const work *w, size_t j) {
  return w->jobs[j].deferral_signal == TRAIN_SIGNAL_PRICE ? &w->sc->feed.price
                                                          : &w->sc->feed.carbon;
}

/* A flexible job's plan from now: its run at full speed with its
 * checkpoints, its deadline, pauses on its checkpoint grid. A deadline it
 * cannot meet even at once leaves it to run at once. */
static void plan_job(work *w, size_t j) {
  const train_config *c = &w->jobs[j];
  double now = sim_time_to_s(sim_engine_now(w->engine));
  double run = train_remaining_s(w->train, j);
  if (c->checkpoint_every_s > 0)
    run *= 1 + c->checkpoint_s / c->checkpoint_every_s;
  /* Only a job that says it can wait has a deadline to meet. */
  bool flexible = c->flexibility > 0 || c->deferral != DEFER_NONE;
  w->deadline_s[j] = !isnan(c->deadline_s) ? c->deadline_s
                     : flexible            ? now + run * (1 + c->flexibility)
                                           : NAN;
  if (c->deferral == DEFER_NONE)
    return;
  const sig_series *sig = job_signal(w, j);
  double threshold = c->deferral_threshold;
  if (isnan(threshold) && w->deadline_s[j] > now)
    threshold =
        sig_integral(sig, now, w->deadline_s[j]) / (w->deadline_s[j] - now);
  /* The plan pauses on the job's checkpoint grid; a job that writes no
   * checkpoints gets a 15 min grid (test_deferral's population: with an
   * hour the 10% tier could never move). */
  double step = c->checkpoint_every_s > 0 ? c->checkpoint_every_s : 900;
  sim_error err = {0};
  if (defer_plan_make(sig, (defer_policy)c->deferral, threshold, now, run,
                      w->deadline_s[j], step, NULL, &w->plans[j],
                      &err) != SIM_OK)
    defer_plan_fini(&w->plans[j]); /* run at once */
}

static int on_arrival(sim_engine *e, void *ctx, const sim_event *ev) {
  work *w = ctx;
  size_t j = (size_t)ev->a;
  w->arrived++;
  w->queued++;
  plan_job(w, j);
  const defer_plan *plan = &w->plans[j];
  if (plan->n > 0 && plan->runs[0].start_s > sim_time_to_s(ev->time))
    return sim_engine_schedule(e,
                               (sim_time)llround(plan->runs[0].start_s * 1e9),
                               w->release_kind, j, 0, NULL);
  return submit(w, j);
}

/* A deferred job's window opens. */
static int on_release(sim_engine *e, void *ctx, const sim_event *ev) {
  (void)e;
  return submit(ctx, (size_t)ev->a);
}

/* Whether job j's plan lets it run now: between the runs of its plan it
 * waits; after its last run it runs on. */
static bool plan_allows(work *w, size_t j, double now) {
  const defer_plan *plan = &w->plans[j];
  if (plan->n < 2)
    return true;
  size_t *k = &w->plan_pos[j];
  while (*k + 1 < plan->n && now >= plan->runs[*k].end_s)
    (*k)++;
  return !(now < plan->runs[*k].start_s ||
           (*k + 1 < plan->n && now >= plan->runs[*k].end_s));
}

/* During a demand-response event a flexible job (one with a deadline)
 * pauses if its slack outlasts the event: training that can wait pays
 * for the cut before anything is capped. */
static bool dr_holds(const work *w, size_t j, double now) {
  if (isnan(w->dr_end_s) || isnan(w->deadline_s[j]) ||
      (w->jobs[j].flexibility <= 0 && isnan(w->jobs[j].deadline_s)))
    return false;
  double slack = w->deadline_s[j] - now - train_remaining_s(w->train, j);
  return slack >= w->dr_end_s - now;
}

/* Grid-aware pauses at checkpoints: a running job follows its plan and
 * gives way to demand response while it can afford to. */
static int follow_plans(work *w) {
  double now = sim_time_to_s(sim_engine_now(w->engine));
  int rc = SIM_OK;
  for (size_t j = 0; j < w->njobs && rc == SIM_OK; j++) {
    train_state st = train_state_of(w->train, j);
    if (st != TRAIN_COMPUTING && st != TRAIN_PAUSED)
      continue;
    bool run = plan_allows(w, j, now) && !dr_holds(w, j, now);
    rc = run ? train_resume(w->train, j) : train_pause(w->train, j);
  }
  return rc;
}

/* The training model tells of every change of state; only the end frees
 * the GPUs (a failed job keeps its GPUs through its restart). */
static void on_job_change(void *ctx, size_t j) {
  work *w = ctx;
  if (train_state_of(w->train, j) != TRAIN_DONE)
    return;
  w->settle(w->settle_ctx, sim_engine_now(w->engine));
  for (uint32_t s = 0; s < (uint32_t)w->jobs[j].pp; s++)
    slot_free(w, w->job_slot0[j] + s);
  w->job_dark[j] = false;
  w->running--;
  w->done++;
  int rc = schedule(w);
  if (rc != SIM_OK)
    sim_engine_fail(w->engine, rc, "scheduling after job %s", w->jobs[j].name);
}

/* ------------------------------------------------------------------ */
/* Construction                                                        */
/* ------------------------------------------------------------------ */

static sched *make_sched(const factory_config *c, const rack_fleet *fl,
                         sim_error *err) {
  sched_rack *racks = calloc(fl->nracks, sizeof *racks);
  if (racks == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  for (uint32_t r = 0; r < fl->nracks; r++) {
    const rack_group_config *g = &c->racks[fl->group[r]];
    racks[r] = (sched_rack){fl->first[r], fl->count[r], fl->type[fl->first[r]],
                            (uint32_t)g->nvlink_domain};
  }
  sched *s = sched_create(racks, fl->nracks, fl->n, c->scheduler.policy,
                          c->scheduler.admission, NULL, err);
  free(racks);
  return s;
}

/* RNG streams of job arrivals (rng.h: models count from MODEL). */
enum { WORK_RNG_KIND = RNG_KIND_MODEL + 0x61 };
enum { WORK_RNG_GAPS = 1, WORK_RNG_SIZES = 2 };

/* Job i of an entry that stands for a stream: its own name and
 * data-parallel degree, arriving gap after the one before. */
static int stream_job(work *w, const train_config *c, size_t i, gsl_rng *gaps,
                      gsl_rng *sizes, train_config *out) {
  *out = *c; /* strings and arrays stay the entry's */
  out->count = 1;
  if (i > 0)
    out->arrival_s =
        out[-1].arrival_s + gsl_ran_exponential(gaps, c->interarrival_s);
  if (c->ndp_choices > 0)
    out->dp = c->dp_choices[gsl_rng_uniform_int(sizes, c->ndp_choices)];
  size_t n = strlen(c->name) + 24;
  char *name = malloc(n);
  if (name == NULL)
    return SIM_ENOMEM;
  snprintf(name, n, "%s-%zu", c->name, i + 1);
  out->name = w->job_names[w->njobs] = name;
  return SIM_OK;
}

/* Entry k of the scenario's training list as jobs: itself, or count jobs
 * arriving as a Poisson stream with sizes drawn from dp_choices. */
static int expand_entry(work *w, size_t k) {
  const train_config *c = &w->cfg->training[k];
  if (c->count == 1) {
    w->jobs[w->njobs++] = *c;
    return SIM_OK;
  }
  uint64_t seed = (uint64_t)w->cfg->seed;
  gsl_rng *gaps = rng_stream_create(seed, WORK_RNG_KIND, k, WORK_RNG_GAPS);
  gsl_rng *sizes = rng_stream_create(seed, WORK_RNG_KIND, k, WORK_RNG_SIZES);
  int rc = gaps != NULL && sizes != NULL ? SIM_OK : SIM_ENOMEM;
  for (int64_t i = 0; i < c->count && rc == SIM_OK; i++, w->njobs++)
    rc = stream_job(w, c, (size_t)i, gaps, sizes, &w->jobs[w->njobs]);
  rng_stream_destroy(gaps);
  rng_stream_destroy(sizes);
  return rc;
}

static int expand_jobs(work *w, sim_error *err) {
  size_t n = 0;
  for (size_t k = 0; k < w->cfg->ntraining; k++)
    n += (size_t)w->cfg->training[k].count;
  w->jobs = calloc(n + 1, sizeof *w->jobs);
  w->job_names = calloc(n + 1, sizeof *w->job_names);
  int rc = w->jobs != NULL && w->job_names != NULL ? SIM_OK : SIM_ENOMEM;
  for (size_t k = 0; k < w->cfg->ntraining && rc == SIM_OK; k++)
    rc = expand_entry(w, k);
  return rc == SIM_OK ? SIM_OK : sim_error_set(err, rc, "out of memory");
}

/* The slots every workload needs: a service's replicas, a job's stages,
 * each with its share of the GPU-index array. */
static void lay_out_slots(work *w) {
  const factory_config *c = w->cfg;
  size_t first = 0;
  for (size_t s = 0; s < c->nservices; s++)
    for (int64_t r = 0; r < c->services[s].replicas; r++) {
      w->slots[w->nslots++] =
          (slot){(uint32_t)s, (uint32_t)r, first, (uint32_t)c->services[s].tp,
                 false,       false};
      first += (size_t)c->services[s].tp;
    }
  for (size_t j = 0; j < w->njobs; j++) {
    const train_config *t = &w->jobs[j];
    uint32_t n = (uint32_t)(t->dp * t->tp);
    w->job_slot0[j] = w->nslots;
    for (int64_t s = 0; s < t->pp; s++) {
      w->slots[w->nslots++] = (slot){
          (uint32_t)(c->nservices + j), (uint32_t)s, first, n, false, false};
      first += n;
    }
  }
}

static int alloc_slots(work *w) {
  const factory_config *c = w->cfg;
  size_t nslots = 0, ngpus = 0, maxpp = 1;
  for (size_t s = 0; s < c->nservices; s++) {
    nslots += (size_t)c->services[s].replicas;
    ngpus += (size_t)(c->services[s].replicas * c->services[s].tp);
  }
  for (size_t j = 0; j < w->njobs; j++) {
    const train_config *t = &w->jobs[j];
    nslots += (size_t)t->pp;
    ngpus += (size_t)(t->dp * t->pp * t->tp);
    maxpp = (size_t)t->pp > maxpp ? (size_t)t->pp : maxpp;
  }
  w->slots = calloc(nslots + 1, sizeof *w->slots);
  w->gpus = calloc(ngpus + 1, sizeof *w->gpus);
  w->gpu_slot = malloc(w->fleet->n * sizeof *w->gpu_slot);
  w->tick_j = calloc(nowners(w) + 1, sizeof *w->tick_j);
  w->owner_j = calloc(nowners(w) + 1, sizeof *w->owner_j);
  w->svc = calloc(c->nservices + 1, sizeof *w->svc);
  w->svc_tel = calloc(c->nservices + 1, sizeof *w->svc_tel);
  w->svc_group = calloc(c->nservices + 1, sizeof *w->svc_group);
  w->job_type = calloc(w->njobs + 1, sizeof *w->job_type);
  w->job_slot0 = calloc(w->njobs + 1, sizeof *w->job_slot0);
  w->job_dark = calloc(w->njobs + 1, sizeof *w->job_dark);
  w->phi = calloc(maxpp, sizeof *w->phi);
  w->blocked = calloc(w->fleet->n, sizeof *w->blocked);
  w->in_pass = calloc(w->njobs + 1, sizeof *w->in_pass);
  w->blocked_n = calloc(w->fleet->nracks, sizeof *w->blocked_n);
  w->blocked_dark = calloc(w->fleet->nracks, sizeof *w->blocked_dark);
  w->plans = calloc(w->njobs + 1, sizeof *w->plans);
  w->plan_pos = calloc(w->njobs + 1, sizeof *w->plan_pos);
  w->deadline_s = calloc(w->njobs + 1, sizeof *w->deadline_s);
  w->owner_co2_kg = calloc(nowners(w) + 1, sizeof *w->owner_co2_kg);
  if (w->slots == NULL || w->gpus == NULL || w->gpu_slot == NULL ||
      w->tick_j == NULL || w->owner_j == NULL || w->svc == NULL ||
      w->svc_tel == NULL || w->svc_group == NULL || w->job_type == NULL ||
      w->job_slot0 == NULL || w->job_dark == NULL || w->phi == NULL ||
      w->blocked == NULL || w->blocked_n == NULL || w->blocked_dark == NULL ||
      w->in_pass == NULL || w->plans == NULL || w->plan_pos == NULL ||
      w->deadline_s == NULL || w->owner_co2_kg == NULL)
    return SIM_ENOMEM;
  for (uint32_t i = 0; i < w->fleet->n; i++)
    w->gpu_slot[i] = NO_SLOT;
  for (size_t j = 0; j < w->njobs; j++)
    w->deadline_s[j] = NAN;
  lay_out_slots(w);
  return SIM_OK;
}

/* Service s on its replicas, each packed into one NVLink domain. */
static int place_service(work *w, size_t s, size_t slot0, sim_error *err) {
  const inf_config *c = &w->cfg->services[s];
  uint32_t type = workload_type(w->fleet, c->gpu), tp = (uint32_t)c->tp;
  uint32_t list[tp];
  for (int64_t r = 0; r < c->replicas; r++) {
    if (!sched_place(w->sched, tp, type, list))
      return sim_error_set(
          err, SIM_EINPUT,
          "service %s: replica %lld of %u %s GPUs does not fit: %u of that "
          "type are free, in pieces smaller than an NVLink domain or taken "
          "by the services before it",
          c->name, (long long)r + 1, tp, w->fleet->types[type]->name,
          sched_free_gpus(w->sched, type));
    slot_take(w, slot0 + (size_t)r, list);
  }
  return SIM_OK;
}

static int make_service(work *w, size_t s, size_t slot0, const char *dir,
                        sim_error *err) {
  const factory_scenario *sc = w->sc;
  const inf_config *c = &w->cfg->services[s];
  const gpu_spec *g = w->fleet->types[workload_type(w->fleet, c->gpu)];
  rl_replica proto;
  int rc = rl_replica_init(&proto, g, llm_catalog_find(&sc->llms, c->model),
                           llm_catalog_precision(&sc->llms, c->precision),
                           (int)c->tp, err);
  if (rc != SIM_OK)
    return rc;
  arr_gen *gen =
      arr_create(&c->arrivals, dir, (uint64_t)w->cfg->seed, s, NULL, err);
  if (gen == NULL)
    return err->code;
  w->svc[s] = inf_create(w->engine, c, &proto, gen, w->cfg->duration_s, err);
  if (w->svc[s] == NULL)
    return err->code;
  return place_service(w, s, slot0, err);
}

static int make_services(work *w, sim_error *err) {
  char dir[4096];
  sim_path_dir(w->sc->path, dir, sizeof dir);
  size_t slot0 = 0;
  for (size_t s = 0; s < w->cfg->nservices; s++) {
    int rc = make_service(w, s, slot0, dir, err);
    if (rc != SIM_OK)
      return rc;
    slot0 += (size_t)w->cfg->services[s].replicas;
  }
  return SIM_OK;
}

static int make_jobs(work *w, sim_error *err) {
  const factory_config *c = w->cfg;
  w->train = train_pool_create(w->engine, (uint64_t)c->seed, on_job_change, w);
  if (w->train == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  int rc = sim_engine_register(w->engine, "job arrival", on_arrival, w,
                               &w->arrival_kind);
  if (rc == SIM_OK)
    rc = sim_engine_register(w->engine, "job release", on_release, w,
                             &w->release_kind);
  for (size_t j = 0; j < w->njobs && rc == SIM_OK; j++) {
    const train_config *t = &w->jobs[j];
    w->job_type[j] = workload_type(w->fleet, t->gpu);
    size_t id;
    rc = train_add(w->train, t, w->fleet->types[w->job_type[j]],
                   llm_catalog_find(&w->sc->llms, t->model),
                   llm_catalog_precision(&w->sc->llms, t->precision), &id, err);
    if (rc == SIM_OK && t->arrival_s < c->duration_s)
      rc = sim_engine_schedule(w->engine, (sim_time)llround(t->arrival_s * 1e9),
                               w->arrival_kind, j, 0, NULL);
  }
  if (rc == SIM_ENOMEM)
    sim_error_set(err, rc, "out of memory");
  return rc;
}

static int declare_services(work *w, sim_error *err) {
  for (size_t s = 0; w->sink != NULL && s < w->cfg->nservices; s++) {
    const char *name = w->cfg->services[s].name;
    size_t n = strlen("services/") + strlen(name) + 1;
    if ((w->svc_group[s] = malloc(n)) == NULL)
      return sim_error_set(err, SIM_ENOMEM, "out of memory");
    snprintf(w->svc_group[s], n, "services/%s", name);
    tel_group g = {w->svc_group[s], inf_columns, INF_NCOLS, 1, NULL, NULL};
    if (tel_open_group(w->sink, &g, &w->svc_tel[s]) != SIM_OK)
      return sim_error_set(err, SIM_EIO, "telemetry: %s", tel_errmsg(w->sink));
  }
  return SIM_OK;
}

work *work_create(const factory_scenario *sc, sim_engine *e, rack_fleet *fl,
                  tel_sink *sink, work_settle_fn settle, void *ctx,
                  sim_error *err) {
  work *w = calloc(1, sizeof *w);
  if (w == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  *w = (work){.sc = sc,
              .cfg = &sc->cfg,
              .engine = e,
              .fleet = fl,
              .sink = sink,
              .settle = settle,
              .settle_ctx = ctx,
              .cap_w = sc->cfg.power.cap_w,
              .dr_end_s = NAN};
  int rc = expand_jobs(w, err);
  if (rc == SIM_OK && (rc = alloc_slots(w)) != SIM_OK)
    sim_error_set(err, rc, "out of memory");
  if (rc == SIM_OK && (w->sched = make_sched(w->cfg, fl, err)) == NULL)
    rc = err->code;
  if (rc == SIM_OK)
    rc = make_services(w, err);
  if (rc == SIM_OK)
    rc = make_jobs(w, err);
  if (rc == SIM_OK)
    rc = declare_services(w, err);
  if (rc != SIM_OK) {
    work_destroy(w);
    return NULL;
  }
  return w;
}

void work_destroy(work *w) {
  if (w == NULL)
    return;
  for (size_t s = 0; w->svc != NULL && s < w->cfg->nservices; s++) {
    inf_destroy(w->svc[s]);
    free(w->svc_group != NULL ? w->svc_group[s] : NULL);
  }
  train_pool_destroy(w->train);
  for (size_t j = 0; w->job_names != NULL && j < w->njobs; j++)
    free(w->job_names[j]);
  free(w->job_names);
  free(w->jobs);
  sched_destroy(w->sched);
  free(w->svc);
  free(w->svc_tel);
  free(w->svc_group);
  free(w->job_type);
  free(w->job_slot0);
  free(w->job_dark);
  free(w->slots);
  free(w->gpus);
  free(w->gpu_slot);
  free(w->phi);
  free(w->tick_j);
  free(w->owner_j);
  free(w->blocked);
  free(w->in_pass);
  free(w->blocked_n);
  free(w->blocked_dark);
  for (size_t j = 0; w->plans != NULL && j < w->njobs; j++)
    defer_plan_fini(&w->plans[j]);
  free(w->plans);
  free(w->plan_pos);
  free(w->deadline_s);
  free(w->owner_co2_kg);
  free(w);
}

/* ------------------------------------------------------------------ */
/* Run time                                                            */
/* ------------------------------------------------------------------ */

void work_set_power(work *w, double facility_w, double cap_w, double dr_end_s) {
  w->facility_w = facility_w;
  w->cap_w = cap_w;
  w->dr_end_s = dr_end_s;
}

/* The clocks the slots run at now go to the models: a replica's to its
 * service, a job's stages together to the job. */
static void drive_clocks(work *w) {
  for (size_t k = 0; k < w->nslots; k++) {
    const slot *s = &w->slots[k];
    if (s->active && !is_job(w, s->owner))
      inf_set_clock(w->svc[s->owner], s->part, slot_phi(w, s));
  }
  for (size_t j = 0; j < w->njobs; j++) {
    if (!w->slots[w->job_slot0[j]].active)
      continue;
    for (int64_t s = 0; s < w->jobs[j].pp; s++)
      w->phi[s] = slot_phi(w, &w->slots[w->job_slot0[j] + (size_t)s]);
    train_set_clocks(w->train, j, w->phi);
  }
}

void work_clocks(work *w) {
  /* Headroom changes with every tick: a job held back for power gets
   * another chance at each one. */
  if (w->queued > 0 && w->cfg->scheduler.admission == SCHED_POWER_AWARE &&
      schedule(w) != SIM_OK)
    return; /* the engine holds the failure and stops */
  if (follow_plans(w) != SIM_OK)
    return;
  drive_clocks(w);
}

void work_drive(work *w, double dt) {
  for (size_t k = 0; k < w->nslots; k++) {
    const slot *s = &w->slots[k];
    if (!s->active)
      continue;
    double a = is_job(w, s->owner)
                   ? train_activity(w->train, job_of(w, s->owner), s->part, dt)
                   : inf_take_activity(w->svc[s->owner], s->part);
    slot_set_activity(w, s, a);
  }
}

/* A job whose racks went dark is interrupted like a GPU failure and held
 * until they are back; one whose racks came back is released (its plan
 * resumes it at the next work_clocks). */
static int job_dark_changed(work *w, size_t j, bool dark) {
  w->job_dark[j] = dark;
  int rc = dark ? train_interrupt(w->train, j) : SIM_OK;
  return rc == SIM_OK ? train_hold(w->train, j, dark) : rc;
}

/* The slots whose darkness changed, and their workloads. */
static int mark_dark_slots(work *w) {
  for (size_t k = 0; k < w->nslots; k++) {
    slot *s = &w->slots[k];
    if (!s->active)
      continue;
    bool dark = slot_on_dark(w, s);
    if (dark == s->dark)
      continue;
    s->dark = dark;
    if (!is_job(w, s->owner) &&
        inf_set_down(w->svc[s->owner], s->part, dark) != SIM_OK)
      return SIM_ENOMEM;
  }
  return SIM_OK;
}

/* A dark rack's free GPUs leave the scheduler's pool, so no job is
 * placed where it could not run, and return with the rack. */
static void block_dark_racks(work *w) {
  const rack_fleet *fl = w->fleet;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    bool dark = fl->dark[r] != 0;
    if (dark == (w->blocked_n[r] > 0 || w->blocked_dark[r]))
      continue;
    uint32_t *list = w->blocked + fl->first[r];
    if (dark) {
      w->blocked_n[r] = sched_take_rack(w->sched, r, list);
    } else {
      sched_release(w->sched, list, w->blocked_n[r]);
      w->blocked_n[r] = 0;
    }
    w->blocked_dark[r] = dark;
  }
}

void work_faults(work *w) {
  block_dark_racks(w);
  int rc = mark_dark_slots(w);
  for (size_t j = 0; j < w->njobs && rc == SIM_OK; j++) {
    if (!w->slots[w->job_slot0[j]].active)
      continue;
    bool dark = false;
    for (int64_t s = 0; s < w->jobs[j].pp; s++)
      dark |= w->slots[w->job_slot0[j] + (size_t)s].dark;
    if (dark != w->job_dark[j])
      rc = job_dark_changed(w, j, dark);
  }
  if (rc != SIM_OK)
    sim_engine_fail(w->engine, rc, "applying a fault: %s", sim_strerror(rc));
}

void work_attribute(work *w, double dt, double g_per_kwh) {
  const rack_fleet *fl = w->fleet;
  size_t n = nowners(w);
  memset(w->tick_j, 0, (n + 1) * sizeof *w->tick_j);
  double idle = 0, overhead = 0;
  for (uint32_t i = 0; i < fl->n; i++) {
    uint32_t k = w->gpu_slot[i];
    if (k == NO_SLOT)
      idle += fl->power_w[i];
    else
      w->tick_j[w->slots[k].owner] += fl->power_w[i];
  }
  for (uint32_t r = 0; r < fl->nracks; r++)
    overhead += fl->rack_power_w[r] - fl->gpu_power_w[r];
  w->idle_j += idle * dt;
  w->overhead_j += overhead * dt;
  for (size_t o = 0; o < n; o++) {
    double joules = w->tick_j[o] * dt;
    if (joules == 0)
      continue;
    w->owner_j[o] += joules;
    if (!isnan(g_per_kwh))
      w->owner_co2_kg[o] += joules / 3.6e6 * g_per_kwh / 1e3;
    if (is_job(w, (uint32_t)o)) {
      train_add_energy(w->train, job_of(w, (uint32_t)o), joules);
      w->iv_training_j += joules;
    } else {
      inf_add_energy(w->svc[o], joules);
      w->iv_inference_j += joules;
    }
  }
}

int work_sample(work *w, double t, double dt, work_row *row) {
  double vals[INF_NCOLS];
  *row = (work_row){0,
                    w->busy,
                    (double)w->running,
                    (double)w->queued,
                    w->iv_inference_j / dt,
                    w->iv_training_j / dt};
  w->iv_inference_j = w->iv_training_j = 0;
  for (size_t s = 0; s < w->cfg->nservices; s++) {
    inf_sample(w->svc[s], dt, vals);
    row->tokens_per_s += vals[INF_TOKENS_PER_S];
    if (w->sink != NULL) {
      int rc = tel_append(w->sink, w->svc_tel[s], t, vals);
      if (rc != SIM_OK)
        return rc;
    }
  }
  return SIM_OK;
}

/* ------------------------------------------------------------------ */
/* The books                                                           */
/* ------------------------------------------------------------------ */

/* An owner's CO2; NaN without a carbon signal. */
static double co2_of(const work *w, size_t owner) {
  return w->sc->feed.carbon.kind == SIG_NONE ? NAN : w->owner_co2_kg[owner];
}

/* Requests: every one that arrived is done, rejected, waiting or being
 * served; the summary's request and token figures. */
static int close_services(work *w, factory_summary *s, sim_error *err) {
  double met = 0;
  for (size_t k = 0; k < w->cfg->nservices; k++) {
    inf_totals t = inf_totals_of(w->svc[k]);
    if (t.arrived !=
        t.completed + t.rejected + t.dropped + t.waiting + t.in_batch)
      return sim_error_set(
          err, SIM_ESTATE,
          "service %s: %llu requests arrived but %llu completed, %llu "
          "rejected, %llu dropped, %llu waiting and %llu in a batch",
          w->cfg->services[k].name, (unsigned long long)t.arrived,
          (unsigned long long)t.completed, (unsigned long long)t.rejected,
          (unsigned long long)t.dropped, (unsigned long long)t.waiting,
          (unsigned long long)t.in_batch);
    s->requests_arrived += t.arrived;
    s->requests_completed += t.completed;
    s->requests_rejected += t.rejected;
    s->requests_dropped += t.dropped;
    s->tokens += t.tokens_generated;
    s->inference_energy_j += w->owner_j[k];
    met += (double)t.slo_met;
  }
  s->tokens_per_joule =
      s->inference_energy_j > 0 ? s->tokens / s->inference_energy_j : NAN;
  /* A dropped request missed its SLOs: it counts against attainment. */
  double served = (double)(s->requests_completed + s->requests_dropped);
  s->slo_attainment = served > 0 ? met / served : NAN;
  return SIM_OK;
}

/* Jobs: arrived = done + running + queued + rejected; completion times
 * and the work lost to failures. */
static int close_jobs(work *w, factory_summary *s, sim_error *err) {
  double jct = 0;
  for (size_t j = 0; j < w->njobs; j++) {
    const train_stats *st = train_stats_of(w->train, j);
    s->training_energy_j += w->owner_j[w->cfg->nservices + j];
    s->lost_gpu_hours += st->lost_gpu_s / 3600;
    s->fault_lost_gpu_hours += st->fault_lost_gpu_s / 3600;
    s->job_failures += st->failures;
    s->training_tokens += st->iterations_done * w->jobs[j].tokens_per_iteration;
    if (train_state_of(w->train, j) == TRAIN_DONE)
      jct += st->end_s - w->jobs[j].arrival_s;
    /* Late: done after its deadline, or not done when it passed. */
    double end =
        train_state_of(w->train, j) == TRAIN_DONE ? st->end_s : s->duration_s;
    if (end > w->deadline_s[j]) /* false for NaN: no deadline */
      s->jobs_late++;
    s->training_co2_kg += co2_of(w, w->cfg->nservices + j);
    s->job_pauses += st->pauses;
  }
  s->jobs_arrived = w->arrived;
  s->jobs_done = w->done;
  s->jobs_running = w->running;
  s->jobs_queued = w->queued;
  s->jobs_rejected = w->rejected;
  s->jct_mean_s = w->done > 0 ? jct / (double)w->done : NAN;
  if (w->arrived != w->done + w->running + w->queued + w->rejected)
    return sim_error_set(
        err, SIM_ESTATE,
        "jobs: %llu arrived but %llu done, %llu running, "
        "%llu queued and %llu rejected",
        (unsigned long long)w->arrived, (unsigned long long)w->done,
        (unsigned long long)w->running, (unsigned long long)w->queued,
        (unsigned long long)w->rejected);
  return SIM_OK;
}

/* The jobs, idle and overhead add up to the IT energy. */
static int close_energy(const work *w, factory_summary *s, sim_error *err) {
  s->idle_energy_j = w->idle_j;
  s->overhead_energy_j = w->overhead_j;
  double sum =
      s->inference_energy_j + s->training_energy_j + w->idle_j + w->overhead_j;
  if (!(fabs(sum - s->it_energy_j) <= 1e-9 * fmax(1, s->it_energy_j)))
    return sim_error_set(err, SIM_ESTATE,
                         "energy attribution: workloads %.17g J + idle "
                         "%.17g J + overhead %.17g J = %.17g J, but the IT "
                         "energy is %.17g J",
                         s->inference_energy_j + s->training_energy_j,
                         w->idle_j, w->overhead_j, sum, s->it_energy_j);
  return SIM_OK;
}

/* The numeric columns of the /jobs table, in job_numbers' order. */
enum {
  J_ARRIVAL,
  J_START,
  J_END,
  J_GPUS,
  J_ENERGY,
  J_WORK,
  J_FAILURES,
  J_LOST,
  J_REQUESTS,
  J_SLO,
  J_TOKENS_PER_J,
  J_CO2,
  J_DEADLINE,
  J_PAUSES,
  JOB_NUMBERS
};

/* One row of the /jobs table. */
typedef struct job_row {
  const char *kind, *name, *status;
  double v[JOB_NUMBERS];
} job_row;

static const char *const train_status[] = {
    [TRAIN_WAITING] = "queued",        [TRAIN_COMPUTING] = "running",
    [TRAIN_CHECKPOINTING] = "running", [TRAIN_RESTARTING] = "running",
    [TRAIN_PAUSED] = "paused",         [TRAIN_DONE] = "done",
};

/* A row with every number NaN (not applicable) to start from. */
static job_row blank_row(const char *kind, const char *name,
                         const char *status) {
  job_row r = {kind, name, status, {0}};
  for (size_t c = 0; c < JOB_NUMBERS; c++)
    r.v[c] = NAN;
  return r;
}

static job_row service_row(const work *w, size_t k) {
  const inf_config *c = &w->cfg->services[k];
  inf_totals t = inf_totals_of(w->svc[k]);
  job_row r = blank_row("inference", c->name, "serving");
  r.v[J_ARRIVAL] = r.v[J_START] = 0;
  r.v[J_END] = w->cfg->duration_s;
  r.v[J_GPUS] = (double)(c->replicas * c->tp);
  r.v[J_ENERGY] = w->owner_j[k];
  r.v[J_WORK] = t.tokens_generated;
  r.v[J_REQUESTS] = (double)t.completed;
  if (t.completed + t.dropped > 0) /* a dropped request missed */
    r.v[J_SLO] = (double)t.slo_met / (double)(t.completed + t.dropped);
  if (r.v[J_ENERGY] > 0)
    r.v[J_TOKENS_PER_J] = t.tokens_generated / r.v[J_ENERGY];
  r.v[J_CO2] = co2_of(w, k);
  return r;
}

static job_row training_row(const work *w, size_t j) {
  const train_config *c = &w->jobs[j];
  const train_stats *st = train_stats_of(w->train, j);
  bool arrived = c->arrival_s < w->cfg->duration_s;
  job_row r =
      blank_row("training", c->name,
                arrived ? train_status[train_state_of(w->train, j)] : "future");
  r.v[J_ARRIVAL] = c->arrival_s;
  r.v[J_START] = st->start_s;
  r.v[J_END] = st->end_s;
  r.v[J_GPUS] = (double)train_gpus(w->train, j);
  r.v[J_ENERGY] = w->owner_j[w->cfg->nservices + j];
  r.v[J_WORK] = st->iterations_done;
  r.v[J_FAILURES] = (double)st->failures;
  r.v[J_LOST] = st->lost_gpu_s / 3600;
  r.v[J_CO2] = co2_of(w, w->cfg->nservices + j);
  r.v[J_DEADLINE] = w->deadline_s[j];
  r.v[J_PAUSES] = (double)st->pauses;
  return r;
}

/* Idle GPUs and the racks' other IT power, so the table adds up. */
static job_row rest_row(const char *kind, double energy_j, double gpus,
                        double duration_s) {
  job_row r = blank_row(kind, kind, "");
  r.v[J_START] = 0;
  r.v[J_END] = duration_s;
  r.v[J_GPUS] = gpus;
  r.v[J_ENERGY] = energy_j;
  return r;
}

static const tel_table_column job_numbers[JOB_NUMBERS] = {
    {"arrival_s", "s", "when it was submitted", NULL, NULL},
    {"start_s", "s", "when it started (NaN: never)", NULL, NULL},
    {"end_s", "s", "when it ended (NaN: not yet)", NULL, NULL},
    {"gpus", "1", "GPUs it holds when running", NULL, NULL},
    {"energy_j", "J",
     "GPU energy attributed to it; with idle and overhead the IT energy", NULL,
     NULL},
    {"work", "1", "tokens generated (inference), iterations done (training)",
     NULL, NULL},
    {"failures", "1", "interruptions by GPU failures", NULL, NULL},
    {"lost_gpu_hours", "h", "GPU-hours lost to failures", NULL, NULL},
    {"requests", "1", "requests completed", NULL, NULL},
    {"slo_attainment", "1", "share of completed requests within both SLOs",
     NULL, NULL},
    {"tokens_per_j", "1/J", "tokens generated per joule of its GPUs", NULL,
     NULL},
    {"co2_kg", "kg",
     "CO2 of its GPU energy at the grid's carbon intensity (NaN: no "
     "carbon signal)",
     NULL, NULL},
    {"deadline_s", "s", "when a training job had to be done", NULL, NULL},
    {"pauses", "1", "grid-aware pauses at checkpoints", NULL, NULL},
};

static int put_jobs(work *w, const factory_summary *s) {
  size_t n = nowners(w) + 2;
  job_row *rows = calloc(n, sizeof *rows);
  double *num = calloc(n * (JOB_NUMBERS + 1), sizeof *num);
  const char **text = calloc(3 * n, sizeof *text);
  if (rows == NULL || num == NULL || text == NULL) {
    free(rows), free(num), free(text);
    return SIM_ENOMEM;
  }
  size_t r = 0;
  for (size_t k = 0; k < w->cfg->nservices; k++)
    rows[r++] = service_row(w, k);
  for (size_t j = 0; j < w->njobs; j++)
    rows[r++] = training_row(w, j);
  rows[r++] = rest_row("idle", w->idle_j, w->fleet->n - w->busy, s->duration_s);
  rows[r++] = rest_row("overhead", w->overhead_j, 0, s->duration_s);
  tel_table_column cols[JOB_NUMBERS + 4];
  cols[0] = (tel_table_column){"id", "1", "row number", num, NULL};
  for (size_t i = 0; i < n; i++) {
    num[i] = (double)i;
    for (size_t c = 0; c < JOB_NUMBERS; c++)
      num[(c + 1) * n + i] = rows[i].v[c];
    text[i] = rows[i].kind;
    text[n + i] = rows[i].name;
    text[2 * n + i] = rows[i].status;
  }
  cols[1] = (tel_table_column){
      "kind", NULL, "inference, training, idle or overhead", NULL, text};
  cols[2] =
      (tel_table_column){"name", NULL, "service or job name", NULL, text + n};
  cols[3] = (tel_table_column){"status", NULL,
                               "done, running, queued, serving, future", NULL,
                               text + 2 * n};
  for (size_t c = 0; c < JOB_NUMBERS; c++) {
    cols[4 + c] = job_numbers[c];
    cols[4 + c].values = num + (c + 1) * n;
  }
  tel_table t = {"jobs", cols, JOB_NUMBERS + 4, n};
  int rc = tel_put_table(w->sink, &t);
  free(rows), free(num), free(text);
  return rc;
}

static int put_service_attrs(work *w) {
  int rc = SIM_OK;
  for (size_t k = 0; k < w->cfg->nservices && rc == SIM_OK; k++) {
    inf_totals t = inf_totals_of(w->svc[k]);
    const char *g = w->svc_group[k];
    rc = tel_put_group_attr(w->sink, g, "requests_arrived", (double)t.arrived);
    if (rc == SIM_OK)
      rc = tel_put_group_attr(w->sink, g, "requests_completed",
                              (double)t.completed);
    if (rc == SIM_OK)
      rc = tel_put_group_attr(w->sink, g, "requests_rejected",
                              (double)t.rejected);
    if (rc == SIM_OK)
      rc =
          tel_put_group_attr(w->sink, g, "requests_dropped", (double)t.dropped);
    if (rc == SIM_OK)
      rc = tel_put_group_attr(w->sink, g, "tokens_generated",
                              t.tokens_generated);
    if (rc == SIM_OK)
      rc = tel_put_group_attr(w->sink, g, "ttft_slo_s",
                              w->cfg->services[k].ttft_slo_s);
    if (rc == SIM_OK)
      rc = tel_put_group_attr(w->sink, g, "tpot_slo_s",
                              w->cfg->services[k].tpot_slo_s);
    if (rc == SIM_OK)
      rc = tel_put_group_attr(w->sink, g, "ttft_p99_s",
                              inf_ttft_quantile(w->svc[k], 0.99));
    if (rc == SIM_OK)
      rc = tel_put_group_attr(w->sink, g, "tpot_p99_s",
                              inf_tpot_quantile(w->svc[k], 0.99));
  }
  return rc;
}

int work_finish(work *w, factory_summary *s, sim_error *err) {
  int rc = close_services(w, s, err);
  if (rc == SIM_OK)
    rc = close_jobs(w, s, err);
  if (rc == SIM_OK)
    rc = close_energy(w, s, err);
  if (rc != SIM_OK || w->sink == NULL)
    return rc;
  rc = put_service_attrs(w);
  if (rc == SIM_OK)
    rc = put_jobs(w, s);
  return rc != SIM_OK
             ? sim_error_set(err, rc, "telemetry: %s", tel_errmsg(w->sink))
             : SIM_OK;
}

/* ------------------------------------------------------------------ */
/* Power allocation (control.c builds the units)                       */
/* ------------------------------------------------------------------ */

const uint32_t *work_gpu_slots(const work *w) { return w->gpu_slot; }

void work_slot_unit(const work *w, uint32_t k, power_unit *u) {
  const slot *s = &w->slots[k];
  u->weight = 1;
  if (is_job(w, s->owner)) {
    u->cls = POWER_TRAINING;
    u->c = 1 - w->jobs[job_of(w, s->owner)].comm_share;
    u->priority = w->jobs[job_of(w, s->owner)].priority;
  } else {
    u->cls = POWER_INFERENCE;
    u->c = inf_compute_share(w->svc[s->owner], s->part);
    u->priority = w->cfg->services[s->owner].priority;
  }
}

void work_request_counts(const work *w, uint64_t *completed, uint64_t *met) {
  *completed = *met = 0;
  for (size_t k = 0; k < w->cfg->nservices; k++) {
    inf_totals t = inf_totals_of(w->svc[k]);
    *completed += t.completed + t.dropped; /* dropped ones missed */
    *met += t.slo_met;
  }
}
