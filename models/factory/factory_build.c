/* factory_build.c - building a factory from a scenario: the fleet, the
 * plant, the faults' plan, storage, power control, the workloads and the
 * control tick; and tearing it down. */
#include "factory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "factory_internal.h"
#include "rng.h"

/* RNG entity kinds of this module (rng.h: models count from MODEL). */
enum { RNG_KIND_RACK = RNG_KIND_MODEL + 1 };
enum { RNG_PURPOSE_LOAD_NOISE = 1 };

sim_time factory_duration(const factory_config *cfg) {
  return factory__to_ns(cfg->duration_s);
}

/* ------------------------------------------------------------------ */
/* Construction                                                        */
/* ------------------------------------------------------------------ */

rack_group_spec factory__group_spec(const factory_scenario *sc,
                                    const rack_group_config *g) {
  return (rack_group_spec){
      .name = g->name,
      .gpu = gpu_catalog_find(&sc->catalog, g->gpu),
      .count = (uint32_t)g->count,
      .gpus_per_rack = (uint32_t)g->gpus_per_rack,
      .limit_w = g->limit_w,
      .other_idle_w = g->other_given || g->system == NULL ? g->other_idle_w : 0,
      .other_max_w = g->other_given || g->system == NULL ? g->other_max_w : 0,
      .conv = g->conv,
      .nconv = g->nconv,
      .r_th = g->r_th,
      .system =
          g->system != NULL ? sys_catalog_find(&sc->systems, g->system) : NULL,
      .host_load = g->host_load,
      .other_given = g->other_given};
}

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

/* The loops with each group's share of heat in each loop. */
static int build_plant(factory *f, sim_error *err) {
  const factory_config *c = f->cfg;
  const char **names = sim_calloc(f->alloc, c->nracks + 1, sizeof *names);
  plant_link *links = NULL;
  size_t nlinks = 0;
  if (names == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  for (size_t g = 0; g < c->nracks; g++)
    names[g] = c->racks[g].name;
  int rc =
      plant_links(c->loops, c->nloops, names, c->nracks, &links, &nlinks, err);
  if (rc == SIM_OK)
    rc = plant_init(&f->plant, c->loops, c->nloops, links, nlinks, c->nracks,
                    f->alloc, err);
  for (size_t g = 0; rc == SIM_OK && g < c->nracks; g++)
    f->group_loop[g] = f->plant.main_loop[g];
  free(links);
  sim_free(f->alloc, names);
  return rc;
}

/* The faults' plan over the run, from the run's seed, on the fleet's
 * groups (laid out as fault.h's site says) and the plant's loops. */
static int build_faults(factory *f, sim_error *err) {
  const factory_config *c = f->cfg;
  const rack_fleet *fl = f->fleet;
  if (c->nfaults == 0)
    return SIM_OK;
  const char **groups = sim_calloc(f->alloc, fl->ngroups, sizeof *groups);
  uint32_t *counts = sim_calloc(f->alloc, fl->ngroups, sizeof *counts);
  if (groups != NULL && counts != NULL) {
    for (size_t g = 0; g < fl->ngroups; g++) {
      groups[g] = fl->groups[g].name;
      counts[g] = fl->groups[g].count;
    }
    fault_site site = {groups, counts, fl->ngroups, f->plant.names,
                       f->plant.nloops};
    f->faults = fault_plan_create(c->faults, c->nfaults, (uint64_t)c->seed,
                                  c->duration_s, &site, f->alloc, err);
  } else {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  sim_free(f->alloc, groups);
  sim_free(f->alloc, counts);
  return f->faults != NULL ? SIM_OK : err->code;
}

/* The smoothing bank, when smoothing is on, and the battery's state. */
static int build_storage(factory *f, sim_error *err) {
  bat_state_init(&f->bat, &f->cfg->battery);
  if (!f->cfg->smoothing.enabled)
    return SIM_OK;
  const rack_fleet *fl = f->fleet;
  for (uint32_t r = 0; r < fl->nracks; r++)
    f->rack_load[r] = factory__rack_tdp_w(&fl->groups[fl->group[r]]);
  f->smooth = smo_bank_create(&f->cfg->smoothing, fl->nracks, f->rack_load,
                              f->alloc, err);
  return f->smooth != NULL ? SIM_OK : err->code;
}

/* The first split, at t = 0: a cap the factory cannot be held under even
 * at its minimum caps, cooling included, is refused before the run. */
static int first_split(factory *f, sim_error *err) {
  f->reserve_outdoor_c = factory__warmest(f, 0);
  int rc = control_split(f->control, err);
  if (rc == SIM_OK || rc == SIM_ENOMEM)
    return rc;
  return sim_error_set(err, SIM_EINPUT,
                       "%s: power.cap %.6g kW is below what the factory "
                       "draws with every GPU at its minimum cap, with its "
                       "conversion losses and cooling at the start",
                       f->cfg->name, f->cfg->power.cap_w / 1e3);
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

static int build_control(factory *f, sim_error *err) {
  control_hooks h = factory__control_hooks(f);
  f->control = control_create(&f->cfg->power, f->fleet, f->engine, &h, err);
  return f->control != NULL ? SIM_OK : err->code;
}

/* The workloads on the fleet, configured from the scenario. */
static int build_work(factory *f, sim_error *err) {
  const factory_config *c = f->cfg;
  uint32_t *nvlink = sim_calloc(f->alloc, c->nracks + 1, sizeof *nvlink);
  if (nvlink == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  for (size_t g = 0; g < c->nracks; g++)
    nvlink[g] = (uint32_t)c->racks[g].nvlink_domain;
  work_config wc = {.services = c->services,
                    .nservices = c->nservices,
                    .training = c->training,
                    .ntraining = c->ntraining,
                    .scheduler = c->scheduler,
                    .llms = &f->sc->llms,
                    .price = &f->sc->feed.price,
                    .carbon = &f->sc->feed.carbon,
                    .scenario_path = f->sc->path,
                    .nvlink_domain = nvlink,
                    .seed = c->seed,
                    .duration_s = c->duration_s,
                    .cap_w = c->power.cap_w,
                    .granularity = c->inference.granularity};
  f->work =
      work_create(&wc, f->engine, f->fleet, f->sink, factory__settle, f, err);
  sim_free(f->alloc, nvlink);
  return f->work != NULL ? SIM_OK : err->code;
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

/* The parts of f, in order; SIM_OK or the first failure's code (err
 * set). */
static int build_parts(factory *f, sim_error *err) {
  f->fleet = build_fleet(f->sc, f->alloc, err);
  int rc = f->fleet != NULL ? SIM_OK : err->code;
  if (rc == SIM_OK && alloc_state(f) != SIM_OK)
    rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
  if (rc == SIM_OK)
    rc = build_plant(f, err);
  if (rc == SIM_OK)
    rc = build_faults(f, err);
  if (rc == SIM_OK)
    rc = build_storage(f, err);
  if (rc == SIM_OK)
    rc = build_control(f, err);
  if (rc == SIM_OK)
    rc = first_split(f, err);
  if (rc == SIM_OK)
    rc = pq_init(&f->pq, &f->cfg->power_quality, f->cfg->duration_s, f->alloc,
                 err);
  if (rc == SIM_OK)
    rc = factory__declare_telemetry(f, err);
  if (rc == SIM_OK)
    rc = build_work(f, err);
  if (rc == SIM_OK) /* the jobs' phases inside each period (pq, smooth) */
    pq_set_wave(&f->pq, work_wave_w, f->work, f->control_dt_s,
                f->cfg->smoothing.enabled);
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
  f->cap = f->grid_cap = sc->cfg.power.cap_w;
  if (build_parts(f, err) != SIM_OK) {
    factory_destroy(f);
    return NULL;
  }
  return f;
}

void factory_destroy(factory *f) {
  if (f == NULL)
    return;
  for (uint32_t r = 0; f->noise_rng != NULL && r < f->fleet->nracks; r++)
    rng_stream_destroy(f->noise_rng[r]);
  sim_free(f->alloc, f->noise_rng);
  sim_free(f->alloc, f->noise);
  sim_free(f->alloc, f->noise_of);
  sim_free(f->alloc, f->level_of);
  sim_free(f->alloc, f->row);
  sim_free(f->alloc, f->rack_labels);
  sim_free(f->alloc, f->iv.rack_j);
  sim_free(f->alloc, f->iv.rack_gpu_j);
  sim_free(f->alloc, f->iv.rack_activity_s);
  sim_free(f->alloc, f->group_heat);
  sim_free(f->alloc, f->rack_load);
  sim_free(f->alloc, f->rack_heat);
  sim_free(f->alloc, f->group_loop);
  control_destroy(f->control);
  sim_free(f->alloc, f->group_free);
  sim_free(f->alloc, f->group_emergency);
  fault_plan_destroy(f->faults);
  smo_bank_destroy(f->smooth);
  work_destroy(f->work);
  sim_free(f->alloc, f->loop_row);
  plant_fini(&f->plant);
  rack_fleet_destroy(f->fleet);
  pq_fini(&f->pq);
  sim_free(f->alloc, f);
}
