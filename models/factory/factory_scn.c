/* factory_scn.c - a whole factory as a scenario: the schema, the checks
 * that span models (GPU names, periods, the cap's floor, DR timing, which
 * loop cools which racks), and loading with the catalog and the grid's
 * files. The run-time side is factory.c. */
#include "factory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factory_internal.h"
#include "file.h"
#include "names.h"
#include "plant.h"
#include "power.h"
#include "suggest.h"

/* Fleets above this size would need more memory than the machines this
 * project targets; the message says so instead of failing in malloc. */
#define MAX_GPUS 2000000

/* ------------------------------------------------------------------ */
/* Schema                                                              */
/* ------------------------------------------------------------------ */

static int check_factory(void *obj, const scn_loc *loc, void *user,
                         sim_error *err);

#define TIME(k, field, fl, def, h)                                             \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(factory_config, field), \
    .dim = UNITS_TIME, .min = 0, .max = 366 * 86400.0, .flags = fl,            \
    .dflt = def, .help = h                                                     \
  }

static const scn_field factory_fields[] = {
    {.key = "name",
     .type = SCN_STRING,
     .offset = offsetof(factory_config, name),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "the scenario's name"},
    {.key = "description",
     .type = SCN_STRING,
     .offset = offsetof(factory_config, description),
     .dflt = ""},
    {.key = "seed",
     .type = SCN_INT,
     .offset = offsetof(factory_config, seed),
     .min = 0,
     .max = 9007199254740992.0,
     .dflt = "1",
     .help = "the run's random seed (aifsim run --seed N overrides it)"},
    TIME("duration", duration_s, SCN_REQUIRED | SCN_POSITIVE, NULL,
         "simulated time, e.g. 24 h (at most 366 d)"),
    TIME("control_period", control_period_s, SCN_POSITIVE, "1 s",
         "how often load and power are recomputed"),
    TIME("sample_period", sample_period_s, SCN_POSITIVE, "1 min",
         "telemetry interval, a multiple of control_period"),
    {.key = "catalog",
     .type = SCN_STRING,
     .offset = offsetof(factory_config, catalog),
     .help = "a GPU catalog file (relative to the scenario): its types "
             "add to the built-in ones, or replace those of the same name "
             "(all of them with replace: true)"},
    {.key = "models",
     .type = SCN_STRING,
     .offset = offsetof(factory_config, models),
     .help = "an LLM catalog file (relative to the scenario): its models "
             "and precisions add to the built-in ones, or replace those of "
             "the same name (all of them with replace: true)"},
    {.key = "grid_code",
     .type = SCN_STRING,
     .offset = offsetof(factory_config, grid_code),
     .help = "a grid-code file (relative to the scenario) the run is held "
             "to: its classes and cited limits (data/grid_codes/)"},
    {.key = "grid",
     .type = SCN_MAP,
     .offset = offsetof(factory_config, grid),
     .sub = &grid_schema,
     .help = "the grid feed: carbon, price, outdoor temperature, dr_events"},
    {.key = "power_quality",
     .type = SCN_MAP,
     .offset = offsetof(factory_config, power_quality),
     .sub = &pq_schema,
     .help = "the high-rate window for ramps and 0.1-20 Hz oscillation"},
    {.key = "power",
     .type = SCN_MAP,
     .offset = offsetof(factory_config, power),
     .sub = &control_power_schema,
     .flags = SCN_REQUIRED,
     .help = "power: {cap: 18 MW, policy: static}"},
    {.key = "loops",
     .type = SCN_LIST,
     .offset = offsetof(factory_config, loops),
     .sub = &cool_loop_schema,
     .count_offset = offsetof(factory_config, nloops),
     .help = "cooling loops: [{name, kind: liquid or air, capacity, racks: "
             "[groups], heat_share}]; absent: a default plant per rack "
             "group from its GPU; []: no cooling power"},
    {.key = "electrical",
     .type = SCN_MAP,
     .offset = offsetof(factory_config, electrical),
     .sub = &elec_schema,
     .help = "the power chain: losses (true), rating, transformer, ups, "
             "distribution, fixed_load"},
    {.key = "smoothing",
     .type = SCN_MAP,
     .offset = offsetof(factory_config, smoothing),
     .sub = &smo_schema,
     .help = "in-rack power smoothing: enabled, store, ramp_up, ramp_down, "
             "floor, hysteresis"},
    {.key = "battery",
     .type = SCN_MAP,
     .offset = offsetof(factory_config, battery),
     .sub = &bat_schema,
     .help = "on-site battery: capacity, powers, round_trip_efficiency, "
             "SoC bounds, mode"},
    {.key = "racks",
     .type = SCN_LIST,
     .offset = offsetof(factory_config, racks),
     .sub = &factory__group_schema,
     .count_offset = offsetof(factory_config, nracks),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "a list of rack groups: {name, count, gpu, gpus_per_rack, ...}"},
    {.key = "services",
     .type = SCN_LIST,
     .offset = offsetof(factory_config, services),
     .sub = &inf_schema,
     .count_offset = offsetof(factory_config, nservices),
     .help = "inference services: [{name, model, precision, tp, replicas, "
             "arrivals, ttft_slo, tpot_slo}]"},
    {.key = "training",
     .type = SCN_LIST,
     .offset = offsetof(factory_config, training),
     .sub = &train_schema,
     .count_offset = offsetof(factory_config, ntraining),
     .help = "training jobs: [{name, model, dp, pp, tp, "
             "tokens_per_iteration, iterations, mfu, arrival, ...}]"},
    {.key = "jobs",
     .type = SCN_LIST,
     .offset = offsetof(factory_config, gjobs),
     .sub = &gjob_schema,
     .count_offset = offsetof(factory_config, ngjobs),
     .flags = SCN_OMIT_EMPTY,
     .help = "generic GPU jobs: [{name, gpus, duration or work, activity, "
             "phases, arrival, start}]"},
    {.key = "scheduler",
     .type = SCN_MAP,
     .offset = offsetof(factory_config, scheduler),
     .sub = &sched_schema,
     .help = "the training queue: {policy: easy, admission: admit_and_cap}"},
    {.key = "faults",
     .type = SCN_LIST,
     .offset = offsetof(factory_config, faults),
     .sub = &fault_schema,
     .count_offset = offsetof(factory_config, nfaults),
     .help = "faults: [{kind: pdu, racks: [nvl72-3], at: 6 h, duration: 30 "
             "min}, {kind: cooling, loop, capacity: 50%, ...}, {kind: feed, "
             "limit: 600 kW, mtbf: 30 d, mttr: 2 h}]"},
    /* Written by --set-file (docs/CALIBRATION.md); absent otherwise, so
     * files without an overlay are unchanged. */
    {.key = "calibrated_keys",
     .type = SCN_STRINGS,
     .offset = offsetof(factory_config, calibrated_keys),
     .count_offset = offsetof(factory_config, ncalibrated_keys),
     .flags = SCN_OMIT_EMPTY,
     .help = "the keys a calibration overlay set (aifsim calibrate, "
             "--set-file): their values are fitted, not modelled"},
    {.key = "calibration_overlay",
     .type = SCN_STRING,
     .offset = offsetof(factory_config, calibration_overlay),
     .help = "the calibration overlay those values came from"},
    /* The resolved scenario leaves it out at its default (written_at),
     * so files from before it are unchanged. */
    {.key = "inference",
     .type = SCN_MAP,
     .offset = offsetof(factory_config, inference),
     .sub = &inf_settings_schema,
     .help = "every service: {granularity: request or fluid}"},
    {.key = "ride_through",
     .type = SCN_MAP,
     .offset = offsetof(factory_config, ride_through),
     .sub = &dist_schema,
     .help = "how the power chain answers grid.disturbances: {curve, trip, "
             "ups_autonomy, generator, generator_start, reconnect_delay, "
             "return_ramp, frequency_low, frequency_high, ride_low, "
             "ride_high}"},
/* The models of factory.h's map: a key each, last. */
#define XX(k, ty, sch, on, desc, h)                                       \
  {.key = #k,                                                                  \
   .type = SCN_MAP,                                                            \
   .offset = offsetof(factory_config, k),                                      \
   .sub = &sch,                                                                \
   .help = h},
    FACTORY_MODEL_MAP(XX)
#undef XX
};

const scn_schema factory_schema = SCN_SCHEMA(
    "scenario", factory_config, factory_fields, .check = check_factory);

/* ------------------------------------------------------------------ */
/* Checks                                                              */
/* ------------------------------------------------------------------ */

/* Far more ticks than any study needs, and about an hour of run time at
 * the reference day's speed: beyond it a typo (1 us for 1 s) is likelier
 * than intent. */
#define MAX_TICKS 1e9

static int check_periods(const factory_config *c, const scn_loc *loc,
                         sim_error *err) {
  sim_time dur = factory__to_ns(c->duration_s),
           ctl = factory__to_ns(c->control_period_s),
           smp = factory__to_ns(c->sample_period_s);
  if (ctl < 1000)
    return scn_fail(loc, "control_period", err, NULL,
                    "control_period must be at least 1 us");
  if (smp < ctl || smp % ctl != 0)
    return scn_fail(loc, "sample_period", err,
                    "e.g. control_period 1 s, sample_period 1 min",
                    "sample_period must be a multiple of control_period");
  if (dur < smp || dur % smp != 0)
    return scn_fail(loc, "duration", err,
                    "so that every sample covers an equal interval",
                    "duration must be a multiple of sample_period");
  sim_time alloc = factory__to_ns(c->power.allocation_period_s);
  if (alloc % ctl != 0)
    return scn_fail(loc, "power.allocation_period", err,
                    "e.g. control_period 1 s, allocation_period 10 s",
                    "allocation_period must be a multiple of control_period");
  if ((double)dur / (double)ctl > MAX_TICKS)
    return scn_fail(loc, "control_period", err,
                    "lengthen control_period or shorten duration",
                    "%.3g control ticks; at most %.0e are allowed",
                    (double)dur / (double)ctl, MAX_TICKS);
  return SIM_OK;
}

/* No two rack groups share a name: the first group whose name came
 * before is the error. */
static int check_group_names(const factory_config *c, const scn_loc *loc,
                             sim_error *err) {
  char where[64];
  sim_names *ix = sim_names_create(c->nracks, NULL);
  if (ix == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  int rc = SIM_OK;
  for (size_t i = 0; i < c->nracks && rc == SIM_OK; i++)
    if (sim_names_add(ix, c->racks[i].name, i, NULL) != SIM_OK) {
      snprintf(where, sizeof where, "racks.%zu.name", i);
      rc = scn_fail(loc, where, err, "names identify the groups",
                    "two rack groups are called '%s'", c->racks[i].name);
    }
  sim_names_destroy(ix);
  return rc;
}

/* The racks' IT at the floor: every GPU at its minimum cap, the host at
 * full load, losses at the curves' lowest efficiency, as the static split
 * reserves them. */
static int check_fleet(const factory_scenario *sc, const scn_loc *loc,
                       sim_error *err) {
  const factory_config *c = &sc->cfg;
  double floor = 0, gpus = 0;
  for (size_t i = 0; i < c->nracks; i++) {
    const rack_group_config *g = &c->racks[i];
    rack_group_spec spec = factory__group_spec(sc, g);
    gpus += (double)g->count * (double)g->gpus_per_rack;
    floor += (double)g->count * rack_group_worst_w(&spec, spec.gpu->cap_min_w);
  }
  int rc = check_group_names(c, loc, err);
  if (rc != SIM_OK)
    return rc;
  if (gpus > MAX_GPUS)
    return scn_fail(loc, "racks", err, NULL,
                    "%.0f GPUs; at most %d are supported", gpus, MAX_GPUS);
  if (c->power.cap_w < floor) {
    char hint[128];
    snprintf(hint, sizeof hint, "the cap must be at least %.6g kW",
             floor / 1e3);
    return scn_fail(loc, "power.cap", err, hint,
                    "the cap %.6g kW is below what the factory draws with "
                    "every GPU at its minimum cap",
                    c->power.cap_w / 1e3);
  }
  return SIM_OK;
}

/* DR events start and end on sample boundaries, so the cap is constant
 * within every sample interval and power never exceeds the cap column. */
static int check_dr(const factory_config *c, const scn_loc *loc,
                    sim_error *err) {
  sim_time smp = factory__to_ns(c->sample_period_s);
  for (size_t i = 0; i < c->grid.ndr; i++) {
    const dr_event *e = &c->grid.dr[i];
    char where[64];
    snprintf(where, sizeof where, "grid.dr_events.%zu", i);
    if (factory__to_ns(e->start_s) % smp != 0 ||
        factory__to_ns(e->duration_s) % smp != 0)
      return scn_fail(loc, where, err, "or shorten sample_period",
                      "DR event %zu must start and last whole multiples of "
                      "sample_period",
                      i + 1);
  }
  return SIM_OK;
}

/* The feed's files are read here, while positions are at hand, and kept
 * in the loaded scenario for the run. */
static int check_feed(factory_scenario *sc, const scn_loc *loc,
                      sim_error *err) {
  char dir[4096], where[64], msg[sizeof err->msg];
  const char *which = NULL;
  sim_path_dir(scn_loc_file(loc), dir, sizeof dir);
  int rc = grid_init(&sc->feed, &sc->cfg.grid, sc->cfg.power.cap_w, dir,
                     sc->cfg.duration_s, &which, err);
  if (rc == SIM_OK && sc->cfg.grid.dr_file != NULL)
    return factory__read_targets(sc, loc, err);
  if (rc != SIM_EIO && rc != SIM_ERANGE)
    return rc; /* bad content: the file's own FILE:LINE: column says it */
  snprintf(msg, sizeof msg, "%s", err->msg);
  snprintf(where, sizeof where, "grid.%s.%s", which,
           rc == SIM_EIO ? "file" : "start");
  return scn_fail(loc, where, err,
                  rc == SIM_EIO ? "paths are relative to the scenario's folder"
                                : "set 'repeat: true' or an earlier 'start'",
                  "%s", msg);
}

/* The rack groups' names, in group order, in *names (malloc'd: free it),
 * and an index of them in *ix (sim_names_destroy it). SIM_OK or
 * SIM_ENOMEM. */
static int index_groups(const factory_config *c, const char ***names,
                        sim_names **ix, sim_error *err) {
  *names = malloc((c->nracks + 1) * sizeof **names);
  *ix = sim_names_create(c->nracks, NULL);
  if (*names == NULL || *ix == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  for (size_t g = 0; g < c->nracks; g++) {
    (*names)[g] = c->racks[g].name;
    sim_names_add(*ix, c->racks[g].name, g, NULL);
  }
  return SIM_OK;
}

/* Power groups name rack groups, each in one at most (steer.h). */
static int check_power_groups(const factory_config *c, const scn_loc *loc,
                              sim_error *err) {
  const char **names = NULL;
  sim_names *ix = NULL;
  const power_config *p = &c->power;
  int rc = index_groups(c, &names, &ix, err);
  if (rc == SIM_OK)
    rc = steer_check(p->groups, p->ngroups, p->load_target, p->nload_target,
                     names, c->nracks, loc, err);
  sim_names_destroy(ix);
  free(names);
  return rc;
}

/* Every rack a loop names is a rack group. */
static int check_loop_names(const factory_config *c, const sim_names *ix,
                            const scn_loc *loc, sim_error *err) {
  char where[64], hint[256];
  for (size_t l = 0; l < c->nloops; l++)
    for (size_t k = 0; k < c->loops[l].nracks; k++)
      if (sim_names_find(ix, c->loops[l].racks[k]) < 0) {
        snprintf(where, sizeof where, "loops.%zu.racks.%zu", l, k);
        return scn_fail(loc, where, err,
                        factory__group_hint(c, c->loops[l].racks[k],
                                            "name a rack group", hint,
                                            sizeof hint),
                        "no rack group is called '%s'", c->loops[l].racks[k]);
      }
  return SIM_OK;
}

/* The loops' shares of each group's heat add up to 100%: summed over the
 * plant's links (in loop order; a loop naming a group twice takes one
 * share of it), in time linear in the scenario. */
static int check_loop_shares(const factory_config *c, const char **names,
                             const scn_loc *loc, sim_error *err) {
  plant_link *links = NULL;
  size_t n = 0;
  char where[64];
  double *sum = calloc(c->nracks + 1, sizeof *sum);
  size_t *seen = calloc(c->nracks + 1, sizeof *seen); /* last loop + 1 */
  int rc =
      sum != NULL && seen != NULL
          ? plant_links(c->loops, c->nloops, names, c->nracks, &links, &n, err)
          : sim_error_set(err, SIM_ENOMEM, "out of memory");
  for (size_t k = 0; rc == SIM_OK && k < n; k++)
    if (seen[links[k].group] != links[k].loop + 1) {
      seen[links[k].group] = links[k].loop + 1;
      sum[links[k].group] += links[k].share;
    }
  for (size_t g = 0; g < c->nracks && rc == SIM_OK; g++) {
    snprintf(where, sizeof where, "racks.%zu.name", g);
    if (fabs(sum[g] - 1) > 1e-9)
      rc = scn_fail(loc, where, err,
                    "list the group under loops' racks, heat shares adding "
                    "up to 100%",
                    "the loops take %.6g%% of rack group '%s''s heat",
                    100 * sum[g], c->racks[g].name);
  }
  free(links);
  free(seen);
  free(sum);
  return rc;
}

/* Every rack group's heat goes to loops whose shares add up to 100%. */
static int check_loops(const factory_config *c, const scn_loc *loc,
                       sim_error *err) {
  const char **names = NULL;
  sim_names *ix = NULL;
  if (c->nloops == 0)
    return SIM_OK;
  int rc = index_groups(c, &names, &ix, err);
  if (rc == SIM_OK)
    rc = check_loop_names(c, ix, loc, err);
  if (rc == SIM_OK)
    rc = check_loop_shares(c, names, loc, err);
  sim_names_destroy(ix);
  free(names);
  return rc;
}

static int check_factory(void *obj, const scn_loc *loc, void *user,
                         sim_error *err) {
  factory_scenario *sc = user;
  int rc = check_periods(obj, loc, err);
  if (rc == SIM_OK)
    rc = check_fleet(sc, loc, err);
  if (rc == SIM_OK)
    rc = factory__default_facility(sc, loc, err);
  if (rc == SIM_OK)
    rc = check_dr(obj, loc, err);
  if (rc == SIM_OK)
    rc = check_power_groups(obj, loc, err);
  if (rc == SIM_OK)
    rc = check_loops(obj, loc, err);
  if (rc == SIM_OK)
    rc = factory__check_faults(obj, loc, err);
  if (rc == SIM_OK)
    rc = check_feed(sc, loc, err);
  if (rc == SIM_OK)
    rc = factory__check_work(sc, loc, err);
  if (rc == SIM_OK && sc->cfg.nloops > 0 && sc->feed.outdoor.kind == SIG_NONE)
    rc = scn_fail(loc, "loops", err, "e.g. grid: {outdoor: {value: 20 degC}}",
                  "cooling loops need an outdoor temperature (grid.outdoor)");
  for (size_t l = 0; rc == SIM_OK && l < sc->cfg.nloops; l++)
    if (sc->cfg.loops[l].rejection == COOL_EVAPORATIVE &&
        sc->feed.humidity.kind == SIG_NONE)
      rc = scn_fail(loc, "loops", err,
                    "e.g. grid: {humidity: {file: ..., value_column: "
                    "relative_humidity_2m_pct}} or {value: 60}",
                    "loop '%s' is evaporative: it follows the wet bulb and "
                    "needs the outdoor humidity (grid.humidity)",
                    sc->cfg.loops[l].name);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

/* The catalog must be known before the rack groups are checked, so the
 * "catalog" key is read first, straight from the document. */
static int load_catalog(scn_doc *doc, gpu_catalog *cat, sim_error *err) {
  const char *path = scn_doc_scalar(doc, "catalog");
  if (path == NULL)
    return gpu_catalog_load(cat, NULL, err);
  char full[4096];
  sim_path_beside(scn_doc_name(doc), path, full, sizeof full);
  int rc = gpu_catalog_load(cat, full, err);
  if (rc == SIM_EIO)
    return scn_doc_fail(doc, "catalog", err,
                        "the path is relative to the "
                        "scenario's folder",
                        "cannot read the catalog: %s", err->msg);
  return rc;
}

/* The same for the LLM catalog, under "models". */
static int load_models(scn_doc *doc, llm_catalog *cat, sim_error *err) {
  const char *path = scn_doc_scalar(doc, "models");
  if (path == NULL)
    return llm_catalog_load(cat, NULL, err);
  char full[4096];
  sim_path_beside(scn_doc_name(doc), path, full, sizeof full);
  int rc = llm_catalog_load(cat, full, err);
  if (rc == SIM_EIO)
    return scn_doc_fail(doc, "models", err,
                        "the path is relative to the scenario's folder",
                        "cannot read the model catalog: %s", err->msg);
  return rc;
}

/* The grid code, under "grid_code": a bad file's errors point into it. */
static int load_grid_code(scn_doc *doc, gcode *code, sim_error *err) {
  const char *path = scn_doc_scalar(doc, "grid_code");
  if (path == NULL)
    return SIM_OK;
  char full[4096];
  sim_path_beside(scn_doc_name(doc), path, full, sizeof full);
  int rc = gcode_load(code, full, err);
  if (rc == SIM_EIO)
    return scn_doc_fail(doc, "grid_code", err,
                        "the path is relative to the scenario's folder",
                        "cannot read the grid code: %s", err->msg);
  return rc;
}

/* Whether the resolved scenario writes key fl: `inference` only when it
 * is not the default, `ride_through` only with disturbances, and a model of factory.h's map only when it is on,
 * so files from before either stay as they were. */
static bool written(const factory_config *c, const scn_field *fl) {
  if (strcmp(fl->key, "inference") == 0)
    return c->inference.granularity != INF_REQUEST;
  if (strcmp(fl->key, "ride_through") == 0)
    return c->grid.ndist > 0;
#define XX(k, ty, sch, on, desc, h)                                       \
  if (strcmp(fl->key, #k) == 0)                                                \
    return c->k.on;
  FACTORY_MODEL_MAP(XX)
#undef XX
  return true;
}

/* The resolved scenario: every key with its default filled in, but those
 * `written` leaves out. */
static int emit_resolved(factory_scenario *sc, sim_error *err) {
  enum { NFIELDS = sizeof factory_fields / sizeof factory_fields[0] };
  scn_field fields[NFIELDS];
  size_t n = 0;
  for (size_t i = 0; i < NFIELDS; i++)
    if (written(&sc->cfg, &factory_fields[i]))
      fields[n++] = factory_fields[i];
  scn_schema emit = factory_schema;
  emit.fields = fields;
  emit.nfields = n;
  sc->resolved = scn_emit(&emit, &sc->cfg);
  return sc->resolved != NULL ? SIM_OK
                              : sim_error_set(err, SIM_ENOMEM, "out of memory");
}

static int load_doc(scn_doc *doc, const char *const *sets, size_t nsets,
                    factory_scenario *sc, sim_error *err) {
  for (size_t i = 0; i < nsets; i++) {
    int rc = scn_doc_set(doc, sets[i], err);
    if (rc != SIM_OK)
      return rc;
  }
  int rc = load_catalog(doc, &sc->catalog, err);
  if (rc == SIM_OK)
    rc = sys_catalog_load_builtin(&sc->systems, err);
  if (rc == SIM_OK)
    rc = load_models(doc, &sc->llms, err);
  if (rc == SIM_OK)
    rc = load_grid_code(doc, &sc->code, err);
  if (rc != SIM_OK)
    return rc;
  rc = scn_bind(doc, &factory_schema, &sc->cfg, sc, err);
  if (rc != SIM_OK)
    return rc;
  return emit_resolved(sc, err);
}

int factory_scenario_load(const char *path, const char *const *sets,
                          size_t nsets, factory_scenario *sc, sim_error *err) {
  sim_error scratch = {0};
  if (err == NULL) /* the checks read back err->code and err->msg */
    err = &scratch;
  memset(sc, 0, sizeof *sc);
  if ((sc->path = strdup(path)) == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  scn_doc *doc = scn_doc_read_file(path, err);
  if (doc == NULL) {
    factory_scenario_release(sc);
    return err->code;
  }
  int rc = load_doc(doc, sets, nsets, sc, err);
  scn_doc_destroy(doc);
  if (rc != SIM_OK)
    factory_scenario_release(sc);
  return rc;
}

void factory_scenario_release(factory_scenario *sc) {
  grid_fini(&sc->feed);
  scn_release(&factory_schema, &sc->cfg);
  gpu_catalog_fini(&sc->catalog);
  sys_catalog_fini(&sc->systems);
  llm_catalog_fini(&sc->llms);
  gcode_fini(&sc->code);
  free(sc->resolved);
  sc->resolved = NULL;
  free(sc->path);
  sc->path = NULL;
}

const char *factory_start_utc(const factory_config *cfg) {
  const sig_config *sigs[] = {&cfg->grid.carbon, &cfg->grid.price,
                              &cfg->grid.outdoor, &cfg->grid.humidity};
  for (size_t i = 0; i < 4; i++)
    if (sigs[i]->start != NULL)
      return sigs[i]->start;
  return NULL;
}
