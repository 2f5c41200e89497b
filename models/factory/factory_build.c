/* factory_build.c - building a factory from a scenario: the fleet, the
 * factory's own state, its models (factory_model.h, in the order of
 * factory_models.c), the telemetry and the control tick; and tearing it
 * down. */
#include "factory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "factory_internal.h"
#include "factory_model.h"
#include "rng.h"

/* RNG entity kinds of this module (rng.h: models count from MODEL). */
enum { RNG_KIND_RACK = RNG_KIND_MODEL + 1 };
enum { RNG_PURPOSE_LOAD_NOISE = 1 };

/* ------------------------------------------------------------------ */
/* Construction                                                        */
/* ------------------------------------------------------------------ */

static rack_fleet *build_fleet(const factory_scenario *sc,
                               const sim_allocator *a, sim_error *err) {
  const factory_config *c = &sc->cfg;
  rack_group_spec *groups = sim_calloc(a, c->nracks + 1, sizeof *groups);
  if (groups == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  for (size_t i = 0; i < c->nracks; i++)
    groups[i] = factory__group_spec(sc, &c->racks[i]);
  rack_fleet *fl = rack_fleet_create(groups, c->nracks, a, err);
  sim_free(a, groups);
  return fl;
}

static int alloc_state(factory *f) {
  uint32_t n = f->fleet->nracks;
  f->noise_rng = sim_calloc(f->alloc, n, sizeof *f->noise_rng);
  f->noise = sim_calloc(f->alloc, n, sizeof *f->noise);
  f->rack_labels = sim_calloc(f->alloc, n, sizeof *f->rack_labels);
  f->iv.rack_j = sim_calloc(f->alloc, n, sizeof(double));
  f->iv.rack_gpu_j = sim_calloc(f->alloc, n, sizeof(double));
  f->iv.rack_activity_s = sim_calloc(f->alloc, n, sizeof(double));
  f->noise_of = sim_calloc(f->alloc, f->cfg->nracks, sizeof *f->noise_of);
  f->level_of = sim_calloc(f->alloc, f->cfg->nracks, sizeof *f->level_of);
  f->free_runs = sim_calloc(f->alloc, f->fleet->n + 1, sizeof *f->free_runs);
  f->free_run0 = sim_calloc(f->alloc, n + 1, sizeof *f->free_run0);
  f->group_heat = sim_calloc(f->alloc, f->cfg->nracks, sizeof *f->group_heat);
  f->rack_load = sim_calloc(f->alloc, n, sizeof *f->rack_load);
  f->rack_heat = sim_calloc(f->alloc, n, sizeof *f->rack_heat);
  f->group_loop = sim_calloc(f->alloc, f->cfg->nracks, sizeof *f->group_loop);
  f->group_free = sim_calloc(f->alloc, f->cfg->nracks, sizeof *f->group_free);
  f->group_emergency =
      sim_calloc(f->alloc, f->cfg->nracks, sizeof *f->group_emergency);
  f->loop_row = sim_calloc(f->alloc, PLANT_NCOLS * f->cfg->nloops + 1,
                           sizeof *f->loop_row);
  if (!f->noise_rng || !f->noise || !f->noise_of || !f->level_of ||
      !f->free_runs || !f->free_run0 ||
      !f->group_heat || !f->loop_row || !f->rack_load || !f->rack_heat ||
      !f->group_loop || !f->rack_labels || !f->iv.rack_j || !f->iv.rack_gpu_j ||
      !f->iv.rack_activity_s || !f->group_free || !f->group_emergency)
    return SIM_ENOMEM;
  for (size_t g = 0; g < f->cfg->nracks; g++)
    f->group_free[g] = f->fleet->groups[g].count;
  for (size_t g = 0; g < f->cfg->nracks; g++)
    f->noise_of[g] = load_noise_for(&f->cfg->racks[g].load, f->control_dt_s);
  for (uint32_t r = 0; r < n; r++) {
    f->rack_labels[r] = f->fleet->names[r];
    f->noise_rng[r] = rng_stream_create((uint64_t)f->cfg->seed, RNG_KIND_RACK,
                                        r, RNG_PURPOSE_LOAD_NOISE);
    if (f->noise_rng[r] == NULL)
      return SIM_ENOMEM;
  }
  return SIM_OK;
}

static int start(factory *f, sim_error *err) {
  int rc = sim_engine_register(f->engine, "factory tick", factory__on_tick, f,
                               &f->tick_kind);
  if (rc == SIM_OK)
    rc = sim_engine_every(f->engine, 0, f->period, f->tick_kind, 0, 0, NULL);
  if (rc != SIM_OK)
    return sim_error_set(err, rc, "cannot schedule the control tick: %s",
                         sim_strerror(rc));
  return SIM_OK;
}

/* Each model's create, in table order; SIM_OK or the first failure's
 * code (err set). */
static int create_models(factory *f, sim_error *err) {
  f->state = sim_calloc(f->alloc, factory_nmodels + 1, sizeof *f->state);
  if (f->state == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  f->holder = 0;
  while (f->holder + 1 < factory_nmodels &&
         factory_models[f->holder]->slots == NULL)
    f->holder++;
  int rc = SIM_OK;
  for (size_t m = 0; m < factory_nmodels && rc == SIM_OK; m++)
    if (factory_models[m]->create != NULL)
      rc = factory_models[m]->create(f, &f->state[m], err);
  return rc;
}

/* Each model's start, in table order, once the telemetry is declared. */
static int start_models(factory *f, sim_error *err) {
  int rc = SIM_OK;
  for (size_t m = 0; m < factory_nmodels && rc == SIM_OK; m++)
    if (factory_models[m]->start != NULL)
      rc = factory_models[m]->start(f, &f->state[m], err);
  return rc;
}

/* The parts of f, in order: the fleet and the factory's own state, the
 * models, the telemetry, what starts the run; SIM_OK or the first
 * failure's code (err set). */
static int build_parts(factory *f, sim_error *err) {
  f->fleet = build_fleet(f->sc, f->alloc, err);
  int rc = f->fleet != NULL ? SIM_OK : err->code;
  if (rc == SIM_OK && alloc_state(f) != SIM_OK)
    rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
  if (rc == SIM_OK)
    rc = create_models(f, err);
  if (rc == SIM_OK)
    rc = factory__declare_telemetry(f, err);
  if (rc == SIM_OK)
    rc = start_models(f, err);
  if (rc == SIM_OK)
    rc = start(f, err);
  return rc;
}

factory *factory_create(const factory_scenario *sc, sim_engine *e,
                        tel_sink *sink, sim_error *err) {
  sim_error scratch = {0};
  if (err == NULL) /* the steps read back err->code */
    err = &scratch;
  const sim_allocator *a = sim_engine_allocator(e);
  factory *f = sim_calloc(a, 1, sizeof *f);
  if (f == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  f->alloc = a;
  f->sc = sc;
  f->cfg = &sc->cfg;
  f->engine = e;
  f->sink = sink;
  f->period = factory__to_ns(f->cfg->control_period_s);
  f->sample_every = factory__to_ns(f->cfg->sample_period_s);
  f->control_dt_s = sim_time_to_s(f->period);
  f->cap = f->limit = sc->cfg.power.cap_w;
  f->coming =
      (factory_period){.cap_w = f->cap, .dr_end_s = NAN, .target_w = NAN,
                       .grid_share = 1};
  f->cap_set = NAN;
  if (build_parts(f, err) != SIM_OK) {
    factory_destroy(f);
    return NULL;
  }
  return f;
}

void factory_destroy(factory *f) {
  if (f == NULL)
    return;
  for (size_t m = factory_nmodels; f->state != NULL && m-- > 0;)
    if (factory_models[m]->destroy != NULL)
      factory_models[m]->destroy(f, f->state[m]);
  sim_free(f->alloc, f->state);
  for (uint32_t r = 0; f->noise_rng != NULL && r < f->fleet->nracks; r++)
    rng_stream_destroy(f->noise_rng[r]);
  sim_free(f->alloc, f->noise_rng);
  sim_free(f->alloc, f->noise);
  sim_free(f->alloc, f->noise_of);
  sim_free(f->alloc, f->level_of);
  sim_free(f->alloc, f->free_runs);
  sim_free(f->alloc, f->free_run0);
  sim_free(f->alloc, f->row);
  sim_free(f->alloc, f->rack_labels);
  sim_free(f->alloc, f->iv.rack_j);
  sim_free(f->alloc, f->iv.rack_gpu_j);
  sim_free(f->alloc, f->iv.rack_activity_s);
  sim_free(f->alloc, f->group_heat);
  sim_free(f->alloc, f->rack_load);
  sim_free(f->alloc, f->rack_heat);
  sim_free(f->alloc, f->group_loop);
  sim_free(f->alloc, f->group_free);
  sim_free(f->alloc, f->group_emergency);
  sim_free(f->alloc, f->loop_row);
  rack_fleet_destroy(f->fleet);
  sim_free(f->alloc, f);
}
