/* workloads_client.c - what a client stepping the run (libaifsim) reads
 * of the workloads and how it steers them: per service and per job
 * power, queues and SLOs so far, jobs held back from the scheduler, and
 * budgets on a job's or a service's GPU caps. The client's state is made
 * on its first hold or budget, so a run without them is as before. */
#include "workloads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workloads_internal.h"

size_t work_nservices(const work *w) { return w->cfg->nservices; }

const char *work_service_name(const work *w, size_t k) {
  return k < w->cfg->nservices ? w->cfg->services[k].name : NULL;
}

size_t work_njobs(const work *w) { return w->njobs; }

const char *work_job_name(const work *w, size_t j) {
  return j < w->njobs ? w->jobs[j].name : NULL;
}

void work_owner_power(const work *w, size_t o, double *power_w, double *gpus) {
  double p = 0, n = 0;
  const double *power = rack_fleet_gpu_power(w->fleet);
  for (size_t k = 0; k < w->nslots; k++) {
    const slot *s = &w->slots[k];
    if (!s->active || s->owner != o)
      continue;
    for (uint32_t i = 0; i < s->n; i++)
      p += power[w->gpus[s->first + i]];
    n += s->n;
  }
  *power_w = p;
  *gpus = n;
}

void work_service_of(const work *w, size_t k, work_service_now *out) {
  inf_totals t = inf_totals_of(w->svc[k]);
  *out = (work_service_now){.waiting = t.waiting,
                            .in_batch = t.in_batch,
                            .ended = inf_totals_ended(&t),
                            .met = t.slo_met};
}

work_job_phase work_job_phase_of(const work *w, size_t j) {
  train_state st = train_state_of(w->train, j);
  if (st == TRAIN_DONE)
    return WORK_JOB_DONE;
  if (st != TRAIN_WAITING)
    return WORK_JOB_RUNNING;
  /* Its arrival event runs at its time: by now, or never in the run. */
  const train_config *c = &w->jobs[j];
  bool arrived =
      c->arrival_s < w->cfg->duration_s &&
      (sim_time)llround(c->arrival_s * 1e9) <= sim_engine_now(w->engine);
  return arrived ? WORK_JOB_WAITING : WORK_JOB_COMING;
}

uint32_t work_job_gpus(const work *w, size_t j) {
  return train_gpus(w->train, j);
}

/* The client's state, made on first use. */
static struct work_client *client_of(work *w) {
  if (w->client != NULL)
    return w->client;
  const sim_allocator *a = w->alloc;
  size_t nj = w->njobs + 1, no = work__nowners(w) + 1;
  struct work_client *c = sim_calloc(a, 1, sizeof *c);
  if (c == NULL)
    return NULL;
  c->held = sim_calloc(a, nj, sizeof *c->held);
  c->parked = sim_calloc(a, nj, sizeof *c->parked);
  c->budget_w = sim_calloc(a, no, sizeof *c->budget_w);
  c->sum = sim_calloc(a, no, sizeof *c->sum);
  c->floor = sim_calloc(a, no, sizeof *c->floor);
  w->client = c;
  if (!(c->held && c->parked && c->budget_w && c->sum && c->floor)) {
    work__client_free(w);
    return NULL;
  }
  for (size_t o = 0; o < no; o++)
    c->budget_w[o] = INFINITY;
  return c;
}

void work__client_free(work *w) {
  struct work_client *c = w->client;
  if (c == NULL)
    return;
  sim_free(w->alloc, c->held);
  sim_free(w->alloc, c->parked);
  sim_free(w->alloc, c->budget_w);
  sim_free(w->alloc, c->sum);
  sim_free(w->alloc, c->floor);
  sim_free(w->alloc, c);
  w->client = NULL;
}

int work_hold_job(work *w, size_t j, bool hold) {
  work_job_phase ph = work_job_phase_of(w, j);
  if (ph == WORK_JOB_RUNNING || ph == WORK_JOB_DONE)
    return SIM_EINVAL;
  struct work_client *c = client_of(w);
  if (c == NULL)
    return SIM_ENOMEM;
  if (hold == c->held[j])
    return SIM_OK;
  c->held[j] = hold;
  if (hold) { /* a queued job waits outside the queue from now */
    if (sched_withdraw(w->sched, j))
      c->parked[j] = true;
    return SIM_OK;
  }
  if (!c->parked[j])
    return SIM_OK; /* its arrival, or its window, submits it */
  c->parked[j] = false;
  return work__submit(w, j);
}

bool work_job_held(const work *w, size_t j) {
  return w->client != NULL && w->client->held[j];
}

int work_set_budget(work *w, size_t owner, double budget_w) {
  struct work_client *c = client_of(w);
  if (c == NULL)
    return SIM_ENOMEM;
  c->budget_w[owner] = budget_w;
  return SIM_OK;
}

double work_budget_of(const work *w, size_t owner) {
  return w->client != NULL ? w->client->budget_w[owner] : INFINITY;
}

double work_owner_floor_w(const work *w, size_t owner) {
  const rack_fleet *fl = w->fleet;
  uint32_t type = work__is_job(w, (uint32_t)owner)
                      ? w->job_type[work__job_of(w, (uint32_t)owner)]
                      : work__type(fl, w->cfg->services[owner].gpu);
  double n = 0;
  for (size_t k = 0; k < w->nslots; k++)
    if (w->slots[k].owner == owner)
      n += w->slots[k].n;
  return n * fl->types[type]->cap_min_w;
}

/* Each owner over its budget has its units' caps lowered to
 * lo + s (cap - lo), the one s in [0, 1) that brings the sum of n cap to
 * the budget (s = 0 where even the minimum caps exceed it). */
void work_clamp(void *ctx, const power_unit *units, const uint32_t *key,
                size_t n, double *cap) {
  work *w = ctx;
  struct work_client *c = w->client;
  size_t no = work__nowners(w);
  memset(c->sum, 0, no * sizeof *c->sum);
  memset(c->floor, 0, no * sizeof *c->floor);
  for (size_t k = 0; k < n; k++) {
    if (key[k] == CONTROL_NO_SLOT)
      continue;
    uint32_t o = w->slots[key[k]].owner;
    c->sum[o] += units[k].n * cap[k];
    c->floor[o] += units[k].n * units[k].lo;
  }
  for (size_t o = 0; o < no; o++) {
    double b = c->budget_w[o];
    c->sum[o] = c->sum[o] > b
                    ? fmax(0, (b - c->floor[o]) / (c->sum[o] - c->floor[o]))
                    : 1;
  }
  for (size_t k = 0; k < n; k++) {
    if (key[k] == CONTROL_NO_SLOT)
      continue;
    double s = c->sum[w->slots[key[k]].owner];
    if (s < 1)
      cap[k] = units[k].lo + s * (cap[k] - units[k].lo);
  }
}
