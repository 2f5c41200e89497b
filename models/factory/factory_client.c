/* factory_client.c - what a client stepping the run (libaifsim) reads
 * of the factory beyond its power, and the actions it takes on the
 * workloads and the plant (factory.h). Each read is of the models' state
 * as the last tick left it; each action takes effect from the next tick
 * or allocation, through the hooks the models already have, so the books
 * stay those of an ordinary run. */
#include "factory.h"

#include <math.h>

#include "factory_internal.h"
#include "factory_model.h"

extern const factory_model factory_model_work, factory_model_battery;

/* A model's state (NULL before its create, or when it has none). */
static void *state_of(const factory *f, const factory_model *m) {
  for (size_t k = 0; k < factory_nmodels; k++)
    if (factory_models[k] == m)
      return f->state[k];
  return NULL;
}

static work *work_of(const factory *f) {
  return state_of(f, &factory_model_work);
}

size_t factory_nservices(const factory *f) {
  const work *w = work_of(f);
  return w != NULL ? work_nservices(w) : 0;
}

const char *factory_service_name(const factory *f, size_t k) {
  const work *w = work_of(f);
  return w != NULL ? work_service_name(w, k) : NULL;
}

size_t factory_njobs(const factory *f) {
  const work *w = work_of(f);
  return w != NULL ? work_njobs(w) : 0;
}

const char *factory_job_name(const factory *f, size_t j) {
  const work *w = work_of(f);
  return w != NULL ? work_job_name(w, j) : NULL;
}

void factory_service_of(const factory *f, size_t k, factory_service_now *out) {
  const work *w = work_of(f);
  work_service_now s;
  work_service_of(w, k, &s);
  *out = (factory_service_now){.budget_w = work_budget_of(w, k),
                               .waiting = (double)s.waiting,
                               .in_batch = (double)s.in_batch,
                               .ended = (double)s.ended,
                               .met = (double)s.met};
  work_owner_power(w, k, &out->power_w, &out->gpus);
}

void factory_job_of(const factory *f, size_t j, factory_job_now *out) {
  const work *w = work_of(f);
  size_t o = work_nservices(w) + j;
  double held_gpus; /* those it holds: its ask is gpus */
  *out = (factory_job_now){.phase = (int)work_job_phase_of(w, j),
                           .held = work_job_held(w, j),
                           .gpus = work_job_gpus(w, j),
                           .budget_w = work_budget_of(w, o)};
  work_owner_power(w, o, &out->power_w, &held_gpus);
}

void factory_queue_of(const factory *f, factory_queue_now *out) {
  const work *w = work_of(f);
  *out = (factory_queue_now){0};
  for (size_t j = 0; w != NULL && j < work_njobs(w); j++) {
    work_job_phase ph = work_job_phase_of(w, j);
    out->jobs_waiting += ph == WORK_JOB_WAITING;
    out->jobs_held += ph == WORK_JOB_WAITING && work_job_held(w, j);
    out->jobs_running += ph == WORK_JOB_RUNNING;
  }
  for (size_t k = 0; w != NULL && k < work_nservices(w); k++) {
    work_service_now s;
    work_service_of(w, k, &s);
    out->requests_waiting += (double)s.waiting;
  }
}

int factory_hold_job(factory *f, size_t j, bool hold) {
  return work_hold_job(work_of(f), j, hold);
}

int factory_set_budget(factory *f, size_t owner, double budget_w) {
  work *w = work_of(f);
  int rc = work_set_budget(w, owner, budget_w);
  if (rc == SIM_OK)
    control_set_clamp(f->control, work_clamp, w);
  return rc;
}

double factory_owner_floor_w(const factory *f, size_t owner) {
  return work_owner_floor_w(work_of(f), owner);
}

/* GPU i's clock share; a GPU with the cap, load and type of the one
 * before (most of a rack, a replica) reuses its clock, as the workloads'
 * pacing does, so a read of every GPU stays cheap at 100,000. */
typedef struct phi_memo {
  double cap, phi;
  gpu_load load;
  uint32_t type;
} phi_memo;

static double gpu_phi(const rack_fleet *fl, uint32_t i, phi_memo *m) {
  double cap = rack_gpu_cap_w(fl, i);
  if (cap != m->cap || fl->type[i] != m->type || !rack_load_is(fl, i, m->load))
    *m =
        (phi_memo){cap, rack_gpu_phi(fl, i), rack_gpu_load(fl, i), fl->type[i]};
  return m->phi;
}

void factory_gpus_of(const factory *f, size_t g, factory_gpus_now *out) {
  const rack_fleet *fl = f->fleet;
  const double *power = rack_fleet_gpu_power(f->fleet);
  rack_fleet_gpu_loads(f->fleet); /* gpu_phi reads every GPU */
  rack_fleet_gpu_caps(f->fleet);
  factory_gpus_now s = {
      .cap_min_w = INFINITY, .cap_max_w = -INFINITY, .clock_min = INFINITY};
  phi_memo m = {.cap = NAN};
  for (uint32_t r = 0; r < fl->nracks; r++) {
    if (fl->group[r] != g)
      continue;
    for (uint32_t i = fl->first[r]; i < fl->first[r] + fl->count[r]; i++) {
      double cap = rack_gpu_cap_w(fl, i), phi = gpu_phi(fl, i, &m);
      s.n++;
      s.cap_mean_w += cap;
      s.cap_min_w = fmin(s.cap_min_w, cap);
      s.cap_max_w = fmax(s.cap_max_w, cap);
      s.clock_mean += phi;
      s.clock_min = fmin(s.clock_min, phi);
      s.power_w += power[i];
    }
  }
  s.cap_mean_w /= s.n;
  s.clock_mean /= s.n;
  *out = s;
}

size_t factory_ngpus(const factory *f) { return f->fleet->n; }

void factory_gpus_each(const factory *f, double *cap_w, double *clock) {
  const rack_fleet *fl = f->fleet;
  phi_memo m = {.cap = NAN};
  rack_fleet_gpu_loads(f->fleet);
  rack_fleet_gpu_caps(f->fleet);
  for (uint32_t i = 0; i < fl->n; i++) {
    if (cap_w != NULL)
      cap_w[i] = rack_gpu_cap_w(fl, i);
    if (clock != NULL)
      clock[i] = gpu_phi(fl, i, &m);
  }
}

size_t factory_nloops(const factory *f) { return f->plant.nloops; }

const char *factory_loop_name(const factory *f, size_t l) {
  return l < f->plant.nloops ? f->plant.names[l] : NULL;
}

void factory_loop_of(const factory *f, size_t l, factory_loop_now *out) {
  const cool_loop *loop = f->plant.loops[l];
  double lo, hi;
  cool_loop_supply_range(loop, &lo, &hi);
  *out = (factory_loop_now){.temp_c = cool_loop_temp_c(loop),
                            .supply_c = cool_loop_config_of(loop)->supply_c,
                            .supply_min_c = lo,
                            .supply_max_c = hi,
                            .heat_w = f->plant.heat_w[l],
                            .power_w = f->plant.power_w[l]};
}

int factory_set_supply(factory *f, size_t l, double supply_c) {
  int rc = cool_loop_set_supply(f->plant.loops[l], supply_c);
  f->resplit |= rc == SIM_OK; /* the split's cooling reserve moves with it */
  return rc;
}

void factory_it_parts_of(const factory *f, double *psu_w, double *fan_w,
                         double *outside_w) {
  *psu_w = f->p_psu;
  *fan_w = f->p_fan;
  *outside_w = f->p_outside;
}

double factory_battery_soc(const factory *f) {
  const bat_state *b = state_of(f, &factory_model_battery);
  if (b == NULL || !(f->cfg->battery.capacity_j > 0))
    return NAN;
  return bat_soc(&f->cfg->battery, b);
}
