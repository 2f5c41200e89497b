/* workloads_build.c - building the workloads of a factory: the jobs the
 * training entries stand for, their slots, the scheduler, the services
 * placed on their replicas, the jobs' arrivals; and tearing them down. */
#include "workloads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "file.h"
#include "rng.h"
#include "workloads_internal.h"

/* ------------------------------------------------------------------ */
/* Construction                                                        */
/* ------------------------------------------------------------------ */

static sched *make_sched(const work_config *c, const rack_fleet *fl,
                         const sim_allocator *a, sim_error *err) {
  sched_rack *racks = sim_calloc(a, fl->nracks + 1, sizeof *racks);
  if (racks == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  for (uint32_t r = 0; r < fl->nracks; r++) {
    racks[r] = (sched_rack){fl->first[r], fl->count[r], fl->type[fl->first[r]],
                            c->nvlink_domain[fl->group[r]]};
  }
  sched *s = sched_create(racks, fl->nracks, fl->n, c->scheduler.policy,
                          c->scheduler.admission, a, err);
  sim_free(a, racks);
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
  char *name = sim_alloc(w->alloc, n);
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
  n += w->cfg->ngjobs;
  w->jobs = sim_calloc(w->alloc, n + 1, sizeof *w->jobs);
  w->job_names = sim_calloc(w->alloc, n + 1, sizeof *w->job_names);
  int rc = w->jobs != NULL && w->job_names != NULL ? SIM_OK : SIM_ENOMEM;
  for (size_t k = 0; k < w->cfg->ntraining && rc == SIM_OK; k++)
    rc = expand_entry(w, k);
  for (size_t k = 0; k < w->cfg->ngjobs && rc == SIM_OK; k++)
    gjob_to_train(&w->cfg->gjobs[k], &w->jobs[w->njobs++]);
  return rc == SIM_OK ? SIM_OK : sim_error_set(err, rc, "out of memory");
}

/* The slots every workload needs: a service's replicas, a job's stages,
 * each with its share of the GPU-index array. */
static void lay_out_slots(work *w) {
  const work_config *c = w->cfg;
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

/* How many slots and slot GPUs the workloads need, and the most stages
 * of a job. */
static void count_slots(const work *w, size_t *nslots, size_t *ngpus,
                        size_t *maxpp) {
  const work_config *c = w->cfg;
  *nslots = *ngpus = 0;
  *maxpp = 1;
  for (size_t s = 0; s < c->nservices; s++) {
    *nslots += (size_t)c->services[s].replicas;
    *ngpus += (size_t)(c->services[s].replicas * c->services[s].tp);
  }
  for (size_t j = 0; j < w->njobs; j++) {
    const train_config *t = &w->jobs[j];
    *nslots += (size_t)t->pp;
    *ngpus += (size_t)(t->dp * t->pp * t->tp);
    *maxpp = (size_t)t->pp > *maxpp ? (size_t)t->pp : *maxpp;
  }
}

/* The arrays per service, per job and per owner. */
static bool alloc_owners(work *w) {
  const sim_allocator *a = w->alloc;
  size_t ns = w->cfg->nservices + 1, nj = w->njobs + 1;
  size_t no = work__nowners(w) + 1;
  w->tick_j = sim_calloc(a, no, sizeof *w->tick_j);
  w->owner_j = sim_calloc(a, no, sizeof *w->owner_j);
  w->owner_co2_kg = sim_calloc(a, no, sizeof *w->owner_co2_kg);
  w->svc = sim_calloc(a, ns, sizeof *w->svc);
  w->svc_tel = sim_calloc(a, ns, sizeof *w->svc_tel);
  w->svc_group = sim_calloc(a, ns, sizeof *w->svc_group);
  w->job_type = sim_calloc(a, nj, sizeof *w->job_type);
  w->job_slot0 = sim_calloc(a, nj, sizeof *w->job_slot0);
  w->job_dark = sim_calloc(a, nj, sizeof *w->job_dark);
  w->in_pass = sim_calloc(a, nj, sizeof *w->in_pass);
  w->plans = sim_calloc(a, nj, sizeof *w->plans);
  w->plan_pos = sim_calloc(a, nj, sizeof *w->plan_pos);
  w->deadline_s = sim_calloc(a, nj, sizeof *w->deadline_s);
  return w->tick_j && w->owner_j && w->owner_co2_kg && w->svc && w->svc_tel &&
         w->svc_group && w->job_type && w->job_slot0 && w->job_dark &&
         w->in_pass && w->plans && w->plan_pos && w->deadline_s;
}

/* The services' replicas' packed runs and the tick's scratch for them
 * (workloads_tick.c): their slots come first (lay_out_slots); and the
 * fleet's runs' owners for the owners' sums. */
static bool alloc_replicas(work *w) {
  const sim_allocator *a = w->alloc;
  size_t nrep = 0, ngpus = 0, most = 0;
  for (size_t s = 0; s < w->cfg->nservices; s++) {
    size_t n = (size_t)w->cfg->services[s].replicas;
    most = n > most ? n : most;
    nrep += n;
    ngpus += (size_t)(w->cfg->services[s].replicas * w->cfg->services[s].tp);
  }
  w->nrep = (uint32_t)nrep;
  w->rep_run0 = sim_calloc(a, nrep + 1, sizeof *w->rep_run0);
  w->rep_runs = sim_calloc(a, ngpus + 1, sizeof *w->rep_runs);
  w->rep_rack = sim_calloc(a, ngpus + 1, sizeof *w->rep_rack);
  w->rep_type = sim_calloc(a, ngpus + 1, sizeof *w->rep_type);
  w->rep_phi = sim_calloc(a, nrep + 1, sizeof *w->rep_phi);
  w->rep_key = sim_calloc(a, nrep + 1, sizeof *w->rep_key);
  most = most < WORK_LOADS_CHUNK ? most : WORK_LOADS_CHUNK;
  w->rep_load = sim_calloc(a, most + 1, sizeof *w->rep_load);
  w->run_owner = sim_calloc(a, w->fleet->n + 1, sizeof *w->run_owner);
  w->run_len = sim_calloc(a, w->fleet->n + 1, sizeof *w->run_len);
  w->own_owner = sim_calloc(a, w->fleet->n + 1, sizeof *w->own_owner);
  w->own_end = sim_calloc(a, w->fleet->n + 1, sizeof *w->own_end);
  return w->rep_run0 && w->rep_runs && w->rep_rack && w->rep_type &&
         w->rep_phi && w->rep_key && w->rep_load && w->run_owner &&
         w->run_len && w->own_owner && w->own_end;
}

/* The slots, their GPUs, and the arrays per fleet GPU and rack. */
static bool alloc_gpus(work *w, size_t nslots, size_t ngpus, size_t maxpp) {
  const sim_allocator *a = w->alloc;
  const rack_fleet *fl = w->fleet;
  w->slots = sim_calloc(a, nslots + 1, sizeof *w->slots);
  w->gpus = sim_calloc(a, ngpus + 1, sizeof *w->gpus);
  w->gpu_slot = sim_calloc(a, fl->n, sizeof *w->gpu_slot);
  w->gpu_owner = sim_calloc(a, fl->n, sizeof *w->gpu_owner);
  w->phi = sim_calloc(a, maxpp, sizeof *w->phi);
  w->slot_runs = sim_calloc(a, ngpus + 1, sizeof *w->slot_runs);
  w->slot_nruns = sim_calloc(a, nslots + 1, sizeof *w->slot_nruns);
  w->blocked = sim_calloc(a, fl->n, sizeof *w->blocked);
  w->blocked_n = sim_calloc(a, fl->nracks, sizeof *w->blocked_n);
  w->blocked_dark = sim_calloc(a, fl->nracks, sizeof *w->blocked_dark);
  return w->slots && w->gpus && w->gpu_slot && w->gpu_owner && w->phi &&
         w->slot_runs && w->slot_nruns && w->blocked &&
         w->blocked_n && w->blocked_dark && alloc_replicas(w);
}

/* What alloc_gpus made. */
static void free_gpus(work *w) {
  const sim_allocator *a = w->alloc;
  sim_free(a, w->slots);
  sim_free(a, w->gpus);
  sim_free(a, w->gpu_slot);
  sim_free(a, w->gpu_owner);
  sim_free(a, w->phi);
  sim_free(a, w->slot_runs);
  sim_free(a, w->slot_nruns);
  sim_free(a, w->blocked);
  sim_free(a, w->blocked_n);
  sim_free(a, w->blocked_dark);
  sim_free(a, w->rep_run0);
  sim_free(a, w->rep_runs);
  sim_free(a, w->rep_rack);
  sim_free(a, w->rep_type);
  sim_free(a, w->rep_phi);
  sim_free(a, w->rep_key);
  sim_free(a, w->rep_load);
  sim_free(a, w->run_owner);
  sim_free(a, w->run_len);
  sim_free(a, w->own_owner);
  sim_free(a, w->own_end);
}

static int alloc_slots(work *w) {
  size_t nslots, ngpus, maxpp;
  count_slots(w, &nslots, &ngpus, &maxpp);
  /* The fleet keeps units from the slots' keys (rack.h): the tick's
   * per-GPU loops run once per run of a slot's GPUs. */
  if (!alloc_gpus(w, nslots, ngpus, maxpp) || !alloc_owners(w) ||
      rack_fleet_keep_units(w->fleet) != SIM_OK)
    return SIM_ENOMEM;
  for (uint32_t i = 0; i < w->fleet->n; i++) {
    w->gpu_slot[i] = NO_SLOT;
    w->gpu_owner[i] = (uint32_t)work__nowners(w);
  }
  for (size_t j = 0; j < w->njobs; j++)
    w->deadline_s[j] = NAN;
  lay_out_slots(w);
  return SIM_OK;
}

/* Service s on its replicas, each packed into one NVLink domain. */
static int place_service(work *w, size_t s, size_t slot0, sim_error *err) {
  const inf_config *c = &w->cfg->services[s];
  uint32_t type = work__type(w->fleet, c->gpu), tp = (uint32_t)c->tp;
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
    work__slot_take(w, slot0 + (size_t)r, list);
  }
  return SIM_OK;
}

static int make_service(work *w, size_t s, size_t slot0, const char *dir,
                        sim_error *err) {
  const inf_config *c = &w->cfg->services[s];
  const gpu_spec *g = w->fleet->types[work__type(w->fleet, c->gpu)];
  rl_replica proto;
  int rc = rl_replica_init(&proto, g, llm_catalog_find(w->cfg->llms, c->model),
                           llm_catalog_precision(w->cfg->llms, c->precision),
                           llm_catalog_engine(w->cfg->llms, c->engine),
                           (int)c->tp, err);
  if (rc != SIM_OK)
    return rc;
  proto.kv = llm_catalog_precision(w->cfg->llms, c->kv_precision);
  arr_gen *gen =
      arr_create(&c->arrivals, dir, (uint64_t)w->cfg->seed, s, w->alloc, err);
  if (gen == NULL)
    return err->code;
  sim_engine *e; /* the service's own at the request level */
  if (work__service_engine(w, s, &e) != SIM_OK) {
    arr_destroy(gen);
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  w->svc[s] = w->cfg->granularity == INF_FLUID
                  ? inf_create_fluid(e, c, &proto, gen, w->cfg->duration_s, err)
                  : inf_create(e, c, &proto, gen, w->cfg->duration_s, err);
  if (w->svc[s] == NULL)
    return err->code;
  return place_service(w, s, slot0, err);
}

static int make_services(work *w, sim_error *err) {
  char dir[4096];
  sim_path_dir(w->cfg->scenario_path, dir, sizeof dir);
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
  const work_config *c = w->cfg;
  w->train =
      train_pool_create(w->engine, (uint64_t)c->seed, work__on_job_change, w);
  if (w->train == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  int rc = sim_engine_register(w->engine, "job arrival", work__on_arrival, w,
                               &w->arrival_kind);
  if (rc == SIM_OK)
    rc = sim_engine_register(w->engine, "job release", work__on_release, w,
                             &w->release_kind);
  for (size_t j = 0; j < w->njobs && rc == SIM_OK; j++) {
    const train_config *t = &w->jobs[j];
    w->job_type[j] = work__type(w->fleet, t->gpu);
    size_t id;
    bool llm = t->model != NULL; /* generic jobs have none (gpujob.h) */
    rc = train_add(w->train, t, w->fleet->types[w->job_type[j]],
                   llm ? llm_catalog_find(w->cfg->llms, t->model) : NULL,
                   llm ? llm_catalog_precision(w->cfg->llms, t->precision)
                       : NULL,
                   &id, err);
    /* As logged, a job comes in when its log started it. */
    double at = t->fixed_start ? t->start_s : t->arrival_s;
    if (rc == SIM_OK && at < c->duration_s)
      rc = sim_engine_schedule(w->engine, (sim_time)llround(at * 1e9),
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
    if ((w->svc_group[s] = sim_alloc(w->alloc, n)) == NULL)
      return sim_error_set(err, SIM_ENOMEM, "out of memory");
    snprintf(w->svc_group[s], n, "services/%s", name);
    tel_group g = {w->svc_group[s], inf_columns, INF_NCOLS, 1, NULL, NULL};
    if (tel_open_group(w->sink, &g, &w->svc_tel[s]) != SIM_OK)
      return sim_error_set(err, SIM_EIO, "telemetry: %s", tel_errmsg(w->sink));
  }
  return SIM_OK;
}

/* work_create's steps in order, the first failure's code (err set). */
static int build_steps(work *w, sim_error *err) {
  int rc = expand_jobs(w, err);
  if (rc == SIM_OK && (rc = alloc_slots(w)) != SIM_OK)
    sim_error_set(err, rc, "out of memory");
  if (rc == SIM_OK &&
      (w->sched = make_sched(w->cfg, w->fleet, w->alloc, err)) == NULL)
    rc = err->code;
  if (rc == SIM_OK)
    rc = make_services(w, err);
  if (rc == SIM_OK)
    rc = make_jobs(w, err);
  if (rc == SIM_OK)
    rc = declare_services(w, err);
  if (rc == SIM_OK && (rc = work__crew_start(w)) != SIM_OK)
    sim_error_set(err, rc, "starting the services' threads: %s",
                  sim_strerror(rc));
  return rc;
}

work *work_create(const work_config *cfg, sim_engine *e, rack_fleet *fl,
                  tel_sink *sink, work_settle_fn settle, void *ctx,
                  sim_error *err) {
  sim_error scratch = {0};
  if (err == NULL) /* the steps read back err->code */
    err = &scratch;
  const sim_allocator *a = sim_engine_allocator(e);
  work *w = sim_calloc(a, 1, sizeof *w);
  if (w == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  *w = (work){.alloc = a,
              .config = *cfg,
              .engine = e,
              .fleet = fl,
              .sink = sink,
              .settle = settle,
              .settle_ctx = ctx,
              .cap_w = cfg->cap_w,
              .dr_end_s = NAN};
  w->cfg = &w->config;
  if (build_steps(w, err) != SIM_OK) {
    work_destroy(w);
    return NULL;
  }
  return w;
}

void work_destroy(work *w) {
  if (w == NULL)
    return;
  work__crew_stop(w); /* its threads joined before the services go */
  work__dr_free(w);
  for (size_t s = 0; w->svc != NULL && s < w->cfg->nservices; s++) {
    inf_destroy(w->svc[s]);
    sim_free(w->alloc, w->svc_group != NULL ? w->svc_group[s] : NULL);
  }
  work__crew_free_engines(w); /* their engines, after them */
  train_pool_destroy(w->train);
  work__client_free(w);
  for (size_t j = 0; w->job_names != NULL && j < w->njobs; j++)
    sim_free(w->alloc, w->job_names[j]);
  sim_free(w->alloc, w->job_names);
  sim_free(w->alloc, w->jobs);
  sched_destroy(w->sched);
  sim_free(w->alloc, w->svc);
  sim_free(w->alloc, w->svc_tel);
  sim_free(w->alloc, w->svc_group);
  sim_free(w->alloc, w->job_type);
  sim_free(w->alloc, w->job_slot0);
  sim_free(w->alloc, w->job_dark);
  free_gpus(w);
  sim_free(w->alloc, w->tick_j);
  sim_free(w->alloc, w->owner_j);
  sim_free(w->alloc, w->in_pass);
  for (size_t j = 0; w->plans != NULL && j < w->njobs; j++)
    defer_plan_fini(&w->plans[j]);
  sim_free(w->alloc, w->plans);
  sim_free(w->alloc, w->plan_pos);
  sim_free(w->alloc, w->deadline_s);
  sim_free(w->alloc, w->owner_co2_kg);
  sim_free(w->alloc, w);
}
