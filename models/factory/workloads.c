/* workloads.c - the workloads of a factory on its GPUs at run time (see
 * workloads.h): slots, scheduling passes, the jobs' plans, faults, and
 * the attribution of energy. The tick's clocks, loads and owner sums are
 * workloads_tick.c, construction workloads_build.c, the books at the end
 * workloads_books.c. */
#include "workloads.h"

#include <math.h>
#include <string.h>

#include "workloads_internal.h"

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
uint32_t work__type(const rack_fleet *fl, const char *gpu) {
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
void work__slot_take(work *w, size_t k, const uint32_t *list) {
  slot *s = &w->slots[k];
  memcpy(w->gpus + s->first, list, s->n * sizeof *list);
  for (uint32_t i = 0; i < s->n; i++) {
    w->gpu_slot[list[i]] = (uint32_t)k;
    w->gpu_owner[list[i]] = s->owner;
    rack_set_unit_key(w->fleet, list[i], (uint32_t)k + 1);
  }
  s->active = true;
  s->dark = slot_on_dark(w, s);
  w->busy += s->n;
  w->slot_changes++;
}

static void slot_free(work *w, size_t k) {
  slot *s = &w->slots[k];
  for (uint32_t i = 0; i < s->n; i++) {
    w->gpu_slot[w->gpus[s->first + i]] = NO_SLOT;
    w->gpu_owner[w->gpus[s->first + i]] = (uint32_t)work__nowners(w);
    rack_set_unit_key(w->fleet, w->gpus[s->first + i], 0);
  }
  sched_release(w->sched, w->gpus + s->first, s->n);
  w->slot_changes++;
  s->active = false;
  s->dark = false;
  w->busy -= s->n;
}

/* ------------------------------------------------------------------ */
/* Training jobs and the scheduler                                     */
/* ------------------------------------------------------------------ */

/* The extra power a job draws when it runs: its GPUs from idle to
 * computing. */
static double job_power_w(const work *w, size_t j) {
  const gpu_spec *g = w->fleet->types[w->job_type[j]];
  return (double)train_gpus(w->train, j) * (g->tdp_w - g->idle_w) *
         train_compute_activity(w->train, j);
}

static int start_job(void *ctx, const sched_job *job, const uint32_t *gpus) {
  work *w = ctx;
  size_t j = job->id;
  w->settle(w->settle_ctx, sim_engine_now(w->engine));
  uint32_t pp = (uint32_t)w->jobs[j].pp;
  uint32_t per_stage = job->gpus / pp;
  bool dark = false;
  for (uint32_t s = 0; s < pp; s++) {
    work__slot_take(w, w->job_slot0[j] + s, gpus + (size_t)s * per_stage);
    dark |= w->slots[w->job_slot0[j] + s].dark;
  }
  w->queued--;
  w->running++;
  /* The hosts' share of the job's waveform, from its first rack. */
  const rack_fleet *fl = w->fleet;
  uint32_t r = fl->rack[gpus[0]];
  train_set_host_slope(w->train, j,
                       (fl->other_max_w[r] - fl->other_idle_w[r]) /
                           fl->count[r]);
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

/* Queues job j for the scheduler now; a job a client holds waits
 * outside the scheduler until released. */
static int submit(work *w, size_t j) {
  if (w->client != NULL && w->client->held[j]) {
    w->client->parked[j] = true;
    return SIM_OK;
  }
  return work__submit(w, j);
}

int work__submit(work *w, size_t j) {
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
  return w->jobs[j].deferral_signal == TRAIN_SIGNAL_PRICE ? w->cfg->price
                                                          : w->cfg->carbon;
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
                      w->deadline_s[j], step, w->alloc, &w->plans[j],
                      &err) != SIM_OK)
    defer_plan_fini(&w->plans[j]); /* run at once */
}

/* As logged (gpujob.h): job j starts now on free GPUs, past the queue;
 * a fleet too small for the log's own schedule stops the run. */
static int start_fixed(work *w, size_t j) {
  sched_job job = {.id = j,
                   .gpus = train_gpus(w->train, j),
                   .type = w->job_type[j],
                   .priority = w->jobs[j].priority,
                   .arrival_s = w->jobs[j].arrival_s};
  uint32_t *gpus = sim_alloc(w->alloc, job.gpus * sizeof *gpus);
  if (gpus == NULL)
    return sim_engine_fail(w->engine, SIM_ENOMEM, "out of memory");
  int rc = SIM_OK;
  if (!sched_place(w->sched, job.gpus, job.type, gpus))
    rc = sim_engine_fail(
        w->engine, SIM_EINPUT,
        "job %s starts as logged at %.0f s on %u GPUs, and only %u are "
        "free: give the racks at least the log's peak (aifsim import "
        "prints it)",
        w->jobs[j].name, w->jobs[j].start_s, job.gpus,
        sched_free_gpus(w->sched, job.type));
  else
    rc = start_job(w, &job, gpus);
  sim_free(w->alloc, gpus);
  return rc;
}

int work__on_arrival(sim_engine *e, void *ctx, const sim_event *ev) {
  work *w = ctx;
  size_t j = (size_t)ev->a;
  w->arrived++;
  w->queued++;
  if (w->jobs[j].fixed_start)
    return start_fixed(w, j);
  plan_job(w, j);
  const defer_plan *plan = &w->plans[j];
  if (plan->n > 0 && plan->runs[0].start_s > sim_time_to_s(ev->time))
    return sim_engine_schedule(e,
                               (sim_time)llround(plan->runs[0].start_s * 1e9),
                               w->release_kind, j, 0, NULL);
  return submit(w, j);
}

/* A deferred job's window opens. */
int work__on_release(sim_engine *e, void *ctx, const sim_event *ev) {
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
void work__on_job_change(void *ctx, size_t j) {
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
/* Run time                                                            */
/* ------------------------------------------------------------------ */

void work_set_power(work *w, double facility_w, double cap_w, double dr_end_s) {
  w->facility_w = facility_w;
  w->cap_w = cap_w;
  w->dr_end_s = dr_end_s;
}

void work_clocks(work *w) {
  /* Headroom changes with every tick: a job held back for power gets
   * another chance at each one. */
  if (w->queued > 0 && w->cfg->scheduler.admission == SCHED_POWER_AWARE &&
      schedule(w) != SIM_OK)
    return; /* the engine holds the failure and stops */
  if (follow_plans(w) != SIM_OK)
    return;
  work__drive_clocks(w);
}

double work_wave_w(void *ctx, double period_s, double offset_s) {
  return train_wave_w(((work *)ctx)->train, period_s, offset_s);
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
    if (!work__is_job(w, s->owner) &&
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
  size_t n = work__nowners(w);
  double overhead = 0;
  memset(w->tick_j, 0, (n + 1) * sizeof *w->tick_j);
  work__owner_power(w, w->tick_j);
  double idle = w->tick_j[n];
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
    if (work__is_job(w, (uint32_t)o)) {
      train_add_energy(w->train, work__job_of(w, (uint32_t)o), joules);
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
  /* each service's on its member's thread, else here; added in order */
  bool taken = work__crew_samples(w, dt);
  for (size_t s = 0; s < w->cfg->nservices; s++) {
    const double *v = taken ? w->svc_vals + s * INF_NCOLS : vals;
    if (!taken)
      inf_sample(w->svc[s], dt, vals);
    row->tokens_per_s += v[INF_TOKENS_PER_S];
    if (w->sink != NULL) {
      int rc = tel_append(w->sink, w->svc_tel[s], t, v);
      if (rc != SIM_OK)
        return rc;
    }
  }
  return SIM_OK;
}

void work_request_counts(const work *w, uint64_t *completed, uint64_t *met) {
  *completed = *met = 0;
  for (size_t k = 0; k < w->cfg->nservices; k++) {
    inf_totals t = inf_totals_of(w->svc[k]);
    *completed += inf_totals_ended(&t); /* unserved ones missed */
    *met += t.slo_met;
  }
}
