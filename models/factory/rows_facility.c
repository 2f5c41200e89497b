/* rows_facility.c - the facility's models as the factory's descriptors
 * (factory_model.h): in-rack smoothing, the cooling plant, the faults,
 * the electrical chain and the battery. The battery keeps its state in
 * its own slot (self) and fills its own /facility cell; the others' state
 * is still in the factory's struct (factory_internal.h), and they take
 * self as NULL. */
#include "factory_model.h"

#include <math.h>
#include <stdlib.h>

#include "factory_internal.h"
#include "water.h"

/* ------------------------------------------------------------------ */
/* Smoothing: each rack's feed follows its load within ramp limits      */
/* ------------------------------------------------------------------ */

/* The bank, when smoothing is on, starting at every rack's TDP. */
static int smoothing_create(factory *f, void **self, sim_error *err) {
  (void)self;
  if (!f->cfg->smoothing.enabled)
    return SIM_OK;
  const rack_fleet *fl = f->fleet;
  for (uint32_t r = 0; r < fl->nracks; r++)
    f->rack_load[r] = factory__rack_tdp_w(&fl->groups[fl->group[r]]);
  f->smooth = smo_bank_create(&f->cfg->smoothing, fl->nracks, f->rack_load,
                              f->alloc, err);
  return f->smooth != NULL ? SIM_OK : err->code;
}

/* Each rack's feed follows its load (its IT at the inlet) within the
 * ramp limits; what it draws beyond the load is burned or stored. */
static int smoothing_power(factory *f, void *self, double t0, double dt,
                           sim_error *err) {
  (void)self;
  const rack_fleet *fl = f->fleet;
  if (f->smooth == NULL)
    return SIM_OK;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    f->rack_load[r] = fl->rack_power_w[r];
    f->rack_heat[r] = f->smooth->burned_j[r]; /* before the period */
  }
  double feed = 0;
  int rc = smo_bank_step(f->smooth, f->rack_load, t0, dt, &feed, err);
  if (rc != SIM_OK)
    return rc;
  for (uint32_t r = 0; r < fl->nracks; r++)
    f->rack_heat[r] =
        f->rack_load[r] + (f->smooth->burned_j[r] - f->rack_heat[r]) / dt;
  f->p_smooth = feed - f->p_rack_it; /* the racks' own: what it follows */
  return SIM_OK;
}

static void smoothing_advance(factory *f, void *self, sim_time now, double dt) {
  (void)self, (void)now;
  f->iv.smooth_j += f->p_smooth * dt;
}

static int smoothing_close(factory *f, void *self, factory_summary *s,
                           sim_error *err) {
  (void)self, (void)err;
  for (uint32_t r = 0; f->smooth != NULL && r < f->fleet->nracks; r++)
    s->smoothing_violation_s += f->smooth->violation_s[r];
  return SIM_OK;
}

/* Its /summary metrics (0 when off: a run's summary lists them).
 * Key, units, long name, group and value of each. */
#define SMOOTHING_METRICS(X)                                                   \
  X("smoothing_energy_mwh", "MWh", "Power smoothing", "Energy",                \
    s->smoothing_energy_j / 3.6e9)                                             \
  X("smoothing_violation_s", "s", "Smoothing limit exceeded", "Power",         \
    s->smoothing_violation_s)

static const tel_metric smoothing_rows[] = {SMOOTHING_METRICS(TEL_METRIC_ROW)};

static int smoothing_metrics(const factory *f, const void *self,
                             tel_sink *sink, char *absent, size_t size) {
  (void)self;
  const factory_summary *s = &f->sum;
  const double v[] = {SMOOTHING_METRICS(TEL_METRIC_VALUE)};
  return factory__put_metrics(sink, smoothing_rows, v, sizeof v / sizeof v[0],
                              NULL, absent, size);
}

static void smoothing_destroy(factory *f, void *self) {
  (void)self;
  smo_bank_destroy(f->smooth);
}

const factory_model factory_model_smoothing = {
    .name = "smoothing",
    .schema = &smo_schema,
    .create = smoothing_create,
    .power = smoothing_power,
    .advance = smoothing_advance,
    .close = smoothing_close,
    .metrics = smoothing_metrics,
    .metric_rows = smoothing_rows,
    .nmetric_rows = sizeof smoothing_rows / sizeof smoothing_rows[0],
    .destroy = smoothing_destroy,
};

/* ------------------------------------------------------------------ */
/* Cooling: the plant's loops                                          */
/* ------------------------------------------------------------------ */

/* The loops with each group's share of heat in each loop. */
static int cooling_create(factory *f, void **self, sim_error *err) {
  (void)self;
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

static int cooling_declare(factory *f, void *self, sim_error *err) {
  (void)self;
  f->loops_group = (tel_group){"loops",         plant_columns, PLANT_NCOLS,
                               f->plant.nloops, "loop",        f->plant.names};
  if (f->plant.nloops == 0)
    return SIM_OK;
  int rc = tel_open_group(f->sink, &f->loops_group, &f->loops_id);
  return rc == SIM_OK ? SIM_OK
                      : sim_error_set(err, rc, "%s", tel_errmsg(f->sink));
}

/* The groups' heat now: IT power (its conversion losses and fans
 * included) and what smoothing burns all become heat in the racks'
 * loops, with what the other models draw in each group. */
static void group_heat(factory *f) {
  const rack_fleet *fl = f->fleet;
  rack_fleet_group_sums(fl, f->smooth != NULL ? f->rack_heat : fl->rack_power_w,
                        f->group_heat);
  factory__models_group_w(f, f->group_heat);
}

static int cooling_power(factory *f, void *self, double t0, double dt,
                         sim_error *err) {
  (void)self;
  if (f->plant.nloops == 0)
    return SIM_OK;
  double out =
      sig_integral_next(&f->sc->feed.outdoor, &f->outdoor_run, t0, t0 + dt) /
      dt;
  /* The period's wet bulb from its mean dry bulb and humidity (Stull,
   * water.h); without a humidity the air is taken as saturated, the
   * worst case for a tower (check_feed refuses that for evaporative
   * loops). */
  const sig_series *rh = &f->sc->feed.humidity;
  double wet = rh->kind == SIG_NONE
                   ? out
                   : water_wet_bulb_c(out, sig_integral_next(
                                                   rh, &f->humidity_run, t0,
                                                   t0 + dt) /
                                                   dt);
  group_heat(f);
  int rc = plant_step(&f->plant, f->group_heat, out, wet, dt, err);
  f->p_cool = f->plant.total_w;
  return rc;
}

static void cooling_advance(factory *f, void *self, sim_time now, double dt) {
  (void)self, (void)now;
  f->iv.cool_j += f->p_cool * dt;
  plant_accumulate(&f->plant, dt);
}

static int cooling_sample(factory *f, void *self, double t, double dt) {
  (void)self;
  if (f->plant.nloops == 0)
    return SIM_OK;
  plant_sample(&f->plant, dt, f->loop_row);
  return tel_append(f->sink, f->loops_id, t, f->loop_row);
}

/* Site water and WUE (The Green Grid: site water, L, per IT kWh): 0 for a
 * dry plant or none, so every run's summary lists them.
 * Key, units, long name, group and value of each. */
#define WATER_METRICS(X)                                                       \
  X("wue_l_per_kwh", "L/kWh", "WUE (site water per IT kWh)", "Energy",         \
    factory_wue(s))                                                            \
  X("water_m3", "m3", "Site water (make-up)", "Energy", s->water_kg / 1e3)     \
  X("water_evaporation_m3", "m3", "Water evaporated", "Energy",                \
    s->water_evaporation_kg / 1e3)                                             \
  X("water_blowdown_m3", "m3", "Water blown down", "Energy",                   \
    s->water_blowdown_kg / 1e3)                                                \
  X("water_drift_m3", "m3", "Water lost as drift", "Energy",                   \
    s->water_drift_kg / 1e3)

static const tel_metric water_rows[] = {WATER_METRICS(TEL_METRIC_ROW)};

static const factory_reason water_reasons[] = {
    {"wue", "no IT energy"},
    {NULL, NULL},
};

static int cooling_close(factory *f, void *self, factory_summary *s,
                         sim_error *err) {
  (void)self, (void)err;
  plant_water w = plant_water_used(&f->plant);
  s->water_kg = w.total_kg;
  s->water_evaporation_kg = w.evaporation_kg;
  s->water_blowdown_kg = w.blowdown_kg;
  s->water_drift_kg = w.drift_kg;
  return SIM_OK;
}

static int cooling_metrics(const factory *f, const void *self, tel_sink *sink,
                           char *absent, size_t size) {
  (void)self;
  const factory_summary *s = &f->sum;
  const double v[] = {WATER_METRICS(TEL_METRIC_VALUE)};
  return factory__put_metrics(sink, water_rows, v, sizeof v / sizeof v[0],
                              water_reasons, absent, size);
}

static void cooling_destroy(factory *f, void *self) {
  (void)self;
  plant_fini(&f->plant);
}

const factory_model factory_model_cooling = {
    .name = "loops",
    .schema = &cool_loop_schema,
    .create = cooling_create,
    .declare = cooling_declare,
    .power = cooling_power,
    .advance = cooling_advance,
    .sample = cooling_sample,
    .close = cooling_close,
    .metrics = cooling_metrics,
    .metric_rows = water_rows,
    .nmetric_rows = sizeof water_rows / sizeof water_rows[0],
    .destroy = cooling_destroy,
};

/* ------------------------------------------------------------------ */
/* Faults: PDU trips, cooling losses, feed drops                       */
/* ------------------------------------------------------------------ */

/* The faults' state (their slot): the plan, and whether a fault is in
 * force since the last step. */
typedef struct faults {
  fault_plan *plan;
  bool on;
} faults;

/* The run's fault entries: the scenario's, then one for each time a
 * disturbance left the IT without power (disturb.h: the backup could not
 * carry it), darkening every rack, so the workloads lose their work as
 * under a PDU trip. *n gets the count; group names are borrowed from
 * names. NULL when out of memory. */
static fault_config *plan_entries(factory *f, char **names, size_t *n) {
  const factory_config *c = f->cfg;
  size_t nd = c->grid.ndist;
  fault_config *e = sim_calloc(f->alloc, c->nfaults + nd + 1, sizeof *e);
  dist_response *r = sim_calloc(f->alloc, nd + 1, sizeof *r);
  if (e == NULL || r == NULL) {
    sim_free(f->alloc, e), sim_free(f->alloc, r);
    return NULL;
  }
  for (size_t k = 0; k < c->nfaults; k++)
    e[k] = c->faults[k];
  *n = c->nfaults;
  dist_respond(&c->ride_through, c->grid.dist, nd, r);
  for (size_t i = 0; i < nd; i++)
    if (r[i].dark_end_s > r[i].dark_start_s) /* false for NaN */
      e[(*n)++] = (fault_config){.kind = FAULT_PDU,
                                 .racks = names,
                                 .nracks = f->fleet->ngroups,
                                 .capacity = NAN,
                                 .limit_w = NAN,
                                 .at_s = r[i].dark_start_s,
                                 .duration_s = r[i].dark_end_s -
                                               r[i].dark_start_s,
                                 .mtbf_s = NAN,
                                 .mttr_s = NAN};
  sim_free(f->alloc, r);
  return e;
}

/* The plan over the run, from the run's seed, on the fleet's groups (laid
 * out as fault.h's site says) and the plant's loops. */
static fault_plan *make_plan(factory *f, sim_error *err) {
  const factory_config *c = f->cfg;
  const rack_fleet *fl = f->fleet;
  fault_plan *plan = NULL;
  const char **groups = sim_calloc(f->alloc, fl->ngroups, sizeof *groups);
  uint32_t *counts = sim_calloc(f->alloc, fl->ngroups, sizeof *counts);
  fault_config *entries = NULL;
  size_t n = 0;
  if (groups != NULL && counts != NULL) {
    for (size_t g = 0; g < fl->ngroups; g++) {
      groups[g] = fl->groups[g].name;
      counts[g] = fl->groups[g].count;
    }
    entries = plan_entries(f, (char **)groups, &n);
  }
  if (entries != NULL) {
    fault_site site = {groups, counts, fl->ngroups, f->plant.names,
                       f->plant.nloops};
    plan = fault_plan_create(entries, n, (uint64_t)c->seed, c->duration_s,
                             &site, f->alloc, err);
  } else {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  sim_free(f->alloc, entries);
  sim_free(f->alloc, groups);
  sim_free(f->alloc, counts);
  return plan;
}

/* No slot without faults or disturbances: every hook then has nothing
 * to do. */
static int faults_create(factory *f, void **self, sim_error *err) {
  if (f->cfg->nfaults == 0 && f->cfg->grid.ndist == 0)
    return SIM_OK;
  faults *x = sim_calloc(f->alloc, 1, sizeof *x);
  if (x == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  *self = x;
  x->plan = make_plan(f, err);
  return x->plan != NULL ? SIM_OK : err->code;
}

/* The racks a cooling fault puts in emergency: every rack of a group the
 * derated loop takes heat from, unless dark. */
static void mark_emergency(factory *f, size_t l) {
  rack_fleet *fl = f->fleet;
  for (uint32_t r = 0; r < fl->nracks; r++)
    if (f->plant.share[l * f->plant.ngroups + fl->group[r]] > 0)
      fl->emergency[r] = !fl->dark[r];
}

/* What the faults in force now do to the fleet and the loops. */
static void apply_faults(factory *f, const fault_plan *plan) {
  rack_fleet *fl = f->fleet;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    fl->dark[r] = fault_plan_dark(plan, r);
    fl->emergency[r] = false;
  }
  for (size_t l = 0; l < f->plant.nloops; l++) {
    double share = fault_plan_loop_share(plan, l);
    plant_set_derate(&f->plant, l, share);
    if (share < 1)
      mark_emergency(f, l);
  }
}

/* A step of the plan changes the fleet (the factory then redoes the
 * split, and the workloads let go of dark racks); a feed fault holds the
 * facility to the backup limit, if lower than the cap. */
static void faults_period(factory *f, void *self, double t, factory_period *p) {
  faults *x = self;
  if (x == NULL)
    return;
  if (fault_plan_step(x->plan, t)) {
    apply_faults(f, x->plan);
    x->on = fault_plan_active(x->plan) > 0;
    p->changed = true;
  }
  p->fault_on = x->on;
  p->cap_w = fmin(p->cap_w, fault_plan_feed_limit_w(x->plan));
}

static void faults_advance(factory *f, void *self, sim_time now, double dt) {
  (void)now;
  const faults *x = self;
  if (x != NULL && x->on)
    f->sum.fault_s += dt;
}

/* The faults in force at the end of the interval (0 without faults). */
static int faults_columns(factory *f, void *self, double t, double dt,
                          double *row) {
  (void)f, (void)t, (void)dt;
  const faults *x = self;
  row[F_FAULTS] = x != NULL ? (double)fault_plan_active(x->plan) : 0;
  return SIM_OK;
}

static int faults_close(factory *f, void *self, factory_summary *s,
                        sim_error *err) {
  (void)f, (void)err;
  const faults *x = self;
  s->fault_events = x != NULL ? fault_plan_events(x->plan) : 0;
  return SIM_OK;
}

/* Its /summary metrics: key, units, long name, group. */
static const tel_metric faults_metric_rows[] = {
    {"fault_events", "1", "Faults", "Reliability"},
    {"fault_s", "s", "Time in faults", "Reliability"},
};

/* Written with or without faults (0 then): a run's summary lists them. */
static int faults_metrics(const factory *f, const void *self, tel_sink *sink,
                          char *absent, size_t size) {
  (void)self;
  const double v[] = {(double)f->sum.fault_events, f->sum.fault_s};
  return factory__put_metrics(sink, faults_metric_rows, v, 2, NULL, absent,
                              size);
}

static void faults_destroy(factory *f, void *self) {
  faults *x = self;
  if (x == NULL)
    return;
  fault_plan_destroy(x->plan);
  sim_free(f->alloc, x);
}

const factory_model factory_model_faults = {
    .name = "faults",
    .schema = &fault_schema,
    .create = faults_create,
    .advance = faults_advance,
    .period = faults_period,
    .columns = faults_columns,
    .close = faults_close,
    .metrics = faults_metrics,
    .metric_rows = faults_metric_rows,
    .nmetric_rows = sizeof faults_metric_rows / sizeof faults_metric_rows[0],
    .destroy = faults_destroy,
};

/* ------------------------------------------------------------------ */
/* The electrical chain: its losses and fixed load                     */
/* ------------------------------------------------------------------ */

static int electrical_power(factory *f, void *self, double t0, double dt,
                            sim_error *err) {
  (void)self, (void)t0, (void)dt, (void)err;
  f->p_loss = elec_overhead_w(&f->cfg->electrical, f->p_it + f->p_smooth);
  return SIM_OK;
}

static void electrical_advance(factory *f, void *self, sim_time now,
                               double dt) {
  (void)self, (void)now;
  f->iv.loss_j += f->p_loss * dt;
}

const factory_model factory_model_electrical = {
    .name = "electrical",
    .schema = &elec_schema,
    .power = electrical_power,
    .advance = electrical_advance,
};

/* ------------------------------------------------------------------ */
/* The battery behind the feed: it decides what the grid sees          */
/* ------------------------------------------------------------------ */

/* The battery's state is its own (its slot): the factory sees only the
 * power it delivers. */
static int battery_create(factory *f, void **self, sim_error *err) {
  bat_state *b = sim_calloc(f->alloc, 1, sizeof *b);
  if (b == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  bat_state_init(b, &f->cfg->battery);
  *self = b;
  return SIM_OK;
}

static int battery_power(factory *f, void *self, double t0, double dt,
                         sim_error *err) {
  (void)t0, (void)err;
  double load = f->p_it + f->p_loss + f->p_smooth + f->p_cool;
  bool dr = f->cap < f->cfg->power.cap_w;
  f->p_bat = bat_step(&f->cfg->battery, self, load, f->cap, dr, dt, NULL);
  f->p_facility = load - f->p_bat;
  return SIM_OK;
}

static void battery_advance(factory *f, void *self, sim_time now, double dt) {
  (void)self, (void)now;
  f->iv.bat_j += f->p_bat * dt;
}

/* Its state of charge in the /facility row (NaN without a battery). */
static int battery_columns(factory *f, void *self, double t, double dt,
                           double *row) {
  (void)t, (void)dt;
  const bat_config *c = &f->cfg->battery;
  row[F_SOC] = c->capacity_j > 0 ? bat_soc(c, self) : NAN;
  return SIM_OK;
}

static int battery_close(factory *f, void *self, factory_summary *s,
                         sim_error *err) {
  (void)f, (void)err;
  s->battery_loss_j = ((const bat_state *)self)->loss_j;
  return SIM_OK;
}

/* Its /summary metrics (0 without a battery: a run's summary lists
 * them). Key, units, long name, group and value of each. */
#define BATTERY_METRICS(X)                                                     \
  X("battery_net_mwh", "MWh", "Battery, net", "Energy",                        \
    s->battery_net_j / 3.6e9)                                                  \
  X("battery_loss_mwh", "MWh", "Battery losses", "Energy",                     \
    s->battery_loss_j / 3.6e9)

static const tel_metric battery_rows[] = {BATTERY_METRICS(TEL_METRIC_ROW)};

static int battery_metrics(const factory *f, const void *self, tel_sink *sink,
                           char *absent, size_t size) {
  (void)self;
  const factory_summary *s = &f->sum;
  const double v[] = {BATTERY_METRICS(TEL_METRIC_VALUE)};
  return factory__put_metrics(sink, battery_rows, v, sizeof v / sizeof v[0],
                              NULL, absent, size);
}

static void battery_destroy(factory *f, void *self) {
  sim_free(f->alloc, self);
}

const factory_model factory_model_battery = {
    .name = "battery",
    .schema = &bat_schema,
    .create = battery_create,
    .power = battery_power,
    .advance = battery_advance,
    .columns = battery_columns,
    .close = battery_close,
    .metrics = battery_metrics,
    .metric_rows = battery_rows,
    .nmetric_rows = sizeof battery_rows / sizeof battery_rows[0],
    .destroy = battery_destroy,
};
