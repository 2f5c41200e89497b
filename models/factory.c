/* factory.c - the run-time wiring of a factory: one periodic control tick
 * that integrates energy, samples telemetry when due, moves the load and
 * recomputes power; construction and the books. The scenario side (schema,
 * checks, loading) is factory_scn.c. */
#include "factory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factory_internal.h"
#include "plant.h"
#include "rack.h"
#include "rng.h"

/* RNG entity kinds of this module (rng.h: models count from MODEL). */
enum { RNG_KIND_RACK = RNG_KIND_MODEL + 1 };
enum { RNG_PURPOSE_LOAD_NOISE = 1 };

sim_time factory_duration(const factory_config *cfg) {
  return factory__to_ns(cfg->duration_s);
}

/* ------------------------------------------------------------------ */
/* Telemetry declarations                                              */
/* ------------------------------------------------------------------ */

enum {
  F_POWER,
  F_IT,
  F_LOSS,
  F_COOL,
  F_SMOOTH,
  F_BATTERY,
  F_SOC,
  F_PUE,
  F_GPU,
  F_CAP,
  F_PEAK,
  F_ENERGY,
  F_ACTIVITY,
  F_CARBON,
  F_PRICE,
  F_OUTDOOR,
  F_CO2,
  F_COST,
  F_NCOLS
};

static const tel_column facility_columns[F_NCOLS] = {
    [F_POWER] = {"power_w", "W",
                 "facility power from the feed, mean over the interval"},
    [F_IT] = {"it_power_w", "W", "IT power, mean over the interval"},
    [F_LOSS] = {"loss_power_w", "W",
                "power-conversion losses, mean over the interval"},
    [F_COOL] = {"cooling_power_w", "W",
                "chillers, pumps and fans, mean over the interval"},
    [F_SMOOTH] = {"smoothing_power_w", "W",
                  "drawn beyond the racks' load by in-rack smoothing (burned "
                  "or stored), mean over the interval"},
    [F_BATTERY] = {"battery_power_w", "W",
                   "battery power, discharge positive, mean over the "
                   "interval"},
    [F_SOC] = {"battery_soc", "1", "battery state of charge at sample time"},
    [F_PUE] = {"pue", "1", "facility energy / IT energy over the interval"},
    [F_GPU] = {"gpu_power_w", "W", "GPU power, mean over the interval"},
    [F_CAP] = {"cap_w", "W", "facility power cap"},
    [F_PEAK] = {"peak_power_w", "W",
                "highest facility power in force during the interval"},
    [F_ENERGY] = {"energy_j", "J", "facility energy since the start"},
    [F_ACTIVITY] = {"activity", "1",
                    "mean GPU activity over the interval (0-1)"},
    [F_CARBON] = {"carbon_g_per_kwh", "gCO2/kWh",
                  "grid carbon intensity, mean over the interval"},
    [F_PRICE] = {"price_per_mwh", "$/MWh",
                 "electricity price, mean over the interval"},
    [F_OUTDOOR] = {"outdoor_c", "degC",
                   "outdoor temperature, mean over the interval"},
    [F_CO2] = {"co2_kg", "kg", "CO2 of the energy drawn since the start"},
    [F_COST] = {"cost", "$", "cost of the energy drawn since the start"},
};

enum {
  R_POWER,
  R_GPU,
  R_LIMIT,
  R_CAP,
  R_ACTIVITY,
  R_CLOCK,
  R_JUNCTION,
  R_THROTTLED,
  R_NCOLS
};

static const tel_column rack_columns[R_NCOLS] = {
    [R_POWER] = {"power_w", "W", "rack IT power, mean over the interval"},
    [R_GPU] = {"gpu_power_w", "W", "rack GPU power, mean over the interval"},
    [R_LIMIT] = {"limit_w", "W", "rack power limit"},
    [R_CAP] = {"gpu_cap_w", "W", "mean per-GPU power cap in the rack"},
    [R_ACTIVITY] = {"activity", "1",
                    "mean GPU activity in the rack over the interval"},
    [R_CLOCK] = {"clock_ratio", "1",
                 "mean SM clock as a share of the maximum, at sample time"},
    [R_JUNCTION] = {"junction_c", "degC",
                    "hottest GPU junction in the rack at sample time (NaN "
                    "without thermal data)"},
    [R_THROTTLED] = {"throttled", "1",
                     "share of the rack's GPUs held below their cap by "
                     "heat, at sample time"},
};

/* ------------------------------------------------------------------ */
/* Run time                                                            */
/* ------------------------------------------------------------------ */

/* Integrals over the current sample interval, per rack and in total. */
typedef struct interval {
  double energy_j, it_j, loss_j, cool_j, smooth_j, bat_j, gpu_j, activity_s;
  double peak_w;
  double *rack_j, *rack_gpu_j, *rack_activity_s;
} interval;

struct factory {
  const factory_scenario *sc;
  const factory_config *cfg;
  sim_engine *engine;
  tel_sink *sink;
  rack_fleet *fleet;
  gsl_rng **noise_rng;  /* per rack */
  double *noise;        /* per rack: the OU state */
  load_noise *noise_of; /* per group: its coefficients */
  double *level_of;     /* per group: the pattern's level now */
  uint32_t tick_kind;
  sim_time period, sample_every, last;
  double control_dt_s;
  tel_group facility_group, racks_group;
  size_t facility_id, racks_id;
  double *row; /* a racks row: R_NCOLS x nracks */
  const char **rack_labels;
  /* In force since `last`: */
  double p_facility, p_it, p_loss, p_cool, p_smooth, p_bat, p_gpu, activity;
  double cap;
  smo_bank *smooth;  /* NULL when smoothing is off */
  double *rack_load; /* per rack: IT plus its conversion losses */
  double *rack_heat; /* per rack: that plus what smoothing burned */
  bat_state bat;
  plant plant;
  double *group_heat; /* per group: IT heat now */
  long *group_loop;   /* per group: the loop taking most of its heat, -1 */
  double reserve_outdoor_c; /* the outdoor temperature the split assumed */
  tel_group loops_group;
  size_t loops_id;
  double *loop_row;
  grid_books books;
  pq_window pq;
  interval iv;
  factory_summary sum;
  double sampled_energy_j;
};

static void advance(factory *f, sim_time now) {
  double dt = sim_time_to_s(now - f->last);
  if (dt <= 0)
    return;
  const rack_fleet *fl = f->fleet;
  f->iv.energy_j += f->p_facility * dt;
  f->iv.it_j += f->p_it * dt;
  f->iv.loss_j += f->p_loss * dt;
  f->iv.cool_j += f->p_cool * dt;
  f->iv.smooth_j += f->p_smooth * dt;
  f->iv.bat_j += f->p_bat * dt;
  plant_accumulate(&f->plant, dt);
  f->iv.gpu_j += f->p_gpu * dt;
  f->iv.activity_s += f->activity * dt;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    f->sum.throttled_gpu_s += fl->throttled[r] * dt;
    f->iv.rack_j[r] += fl->rack_power_w[r] * dt;
    f->iv.rack_gpu_j[r] += fl->gpu_power_w[r] * dt;
    f->iv.rack_activity_s[r] += fl->activity_mean[r] * dt;
  }
  grid_account(&f->sc->feed, f->p_facility, sim_time_to_s(f->last),
               sim_time_to_s(now), &f->books);
  double over = f->p_facility - f->cap;
  if (over > 0) {
    f->sum.cap_violation_s += dt;
    f->sum.cap_violation_j += over * dt;
  }
  f->last = now;
}

/* Moves every rack's activity to its group's pattern at now plus the
 * rack's own noise, and gives it to the rack's GPUs. */
static void move_load(factory *f, sim_time now) {
  rack_fleet *fl = f->fleet;
  double t = sim_time_to_s(now);
  /* The pattern is the group's: worked out once per group, not per rack. */
  for (size_t g = 0; g < f->cfg->nracks; g++)
    f->level_of[g] = load_level(&f->cfg->racks[g].load, t);
  for (uint32_t r = 0; r < fl->nracks; r++) {
    uint32_t g = fl->group[r];
    f->noise[r] =
        load_noise_step(&f->noise_of[g], f->noise[r], f->noise_rng[r]);
    double a = f->level_of[g] + f->noise[r];
    a = a < 0 ? 0 : a > 1 ? 1 : a;
    for (uint32_t i = fl->first[r]; i < fl->first[r] + fl->count[r]; i++)
      fl->activity[i] = a;
  }
}

/* The groups' heat now: IT power, its conversion losses and what
 * smoothing burns all become heat in the racks' loops. */
static void group_heat(factory *f) {
  const rack_fleet *fl = f->fleet;
  memset(f->group_heat, 0, fl->ngroups * sizeof *f->group_heat);
  for (uint32_t r = 0; r < fl->nracks; r++)
    f->group_heat[fl->group[r]] += f->smooth != NULL
                                       ? f->rack_heat[r]
                                       : fl->rack_power_w[r] + fl->loss_w[r];
}

/* The loop temperature a rack's GPUs sit on: that of the loop taking most
 * of its group's heat; NaN without loops. */
static double rack_loop_c(const factory *f, uint32_t r) {
  long l = f->group_loop[f->fleet->group[r]];
  return l < 0 ? NAN : cool_loop_temp_c(f->plant.loops[l]);
}

static double hottest_junction(const factory *f, uint32_t r) {
  const rack_fleet *fl = f->fleet;
  double r_th = fl->groups[fl->group[r]].r_th, p = 0;
  for (uint32_t i = fl->first[r]; i < fl->first[r] + fl->count[r]; i++)
    p = fmax(p, fl->power_w[i]);
  return cool_junction_c(rack_loop_c(f, r), p, r_th);
}

/* Thermal protection: where the GPUs' slowdown temperature and the rack's
 * thermal resistance are known, the power that holds the junction at the
 * slowdown temperature over the loop's current temperature caps the GPUs
 * (as their clocks fall, they settle there: cool.h's throttle law has its
 * fixed point at or above it, and the slowdown point is the conservative
 * one). */
static void thermal_caps(factory *f) {
  rack_fleet *fl = f->fleet;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    const rack_group_spec *g = &fl->groups[fl->group[r]];
    double loop = rack_loop_c(f, r);
    bool known = !isnan(g->r_th) && !isnan(g->gpu->slowdown_c) && !isnan(loop);
    fl->thermal_cap_w[r] =
        known ? cool_thermal_power_w(loop, g->gpu->slowdown_c, g->r_th)
              : INFINITY;
  }
}

/* In-rack smoothing: each rack's feed follows its load (IT and its
 * conversion losses) within the ramp limits; what it draws beyond the
 * load is burned or stored. */
static int smooth_racks(factory *f, double t0, double dt, sim_error *err) {
  const rack_fleet *fl = f->fleet;
  if (f->smooth == NULL)
    return SIM_OK;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    f->rack_load[r] = fl->rack_power_w[r] + fl->loss_w[r];
    f->rack_heat[r] = f->smooth->burned_j[r]; /* before the period */
  }
  double feed = 0;
  int rc = smo_bank_step(f->smooth, f->rack_load, t0, dt, &feed, err);
  if (rc != SIM_OK)
    return rc;
  for (uint32_t r = 0; r < fl->nracks; r++)
    f->rack_heat[r] =
        f->rack_load[r] + (f->smooth->burned_j[r] - f->rack_heat[r]) / dt;
  f->p_smooth = feed - f->p_it - f->p_loss;
  return SIM_OK;
}

static int cool_racks(factory *f, double t0, double dt, sim_error *err) {
  if (f->plant.nloops == 0)
    return SIM_OK;
  double out = sig_integral(&f->sc->feed.outdoor, t0, t0 + dt) / dt;
  group_heat(f);
  int rc = plant_step(&f->plant, f->group_heat, out, dt, err);
  f->p_cool = f->plant.total_w;
  return rc;
}

/* Sets the power in force from now for one control period: IT and its
 * conversion losses from the fleet, in-rack smoothing, cooling from the
 * loops stepped over the period (with the outdoor temperature's mean over
 * it), then the battery, which decides what the grid sees. */
static int recompute_power(factory *f, sim_time now) {
  rack_fleet *fl = f->fleet;
  double t0 = sim_time_to_s(now), dt = f->control_dt_s;
  thermal_caps(f);
  f->p_it = rack_fleet_update(fl, &f->p_loss);
  sim_error err = {0};
  int rc = smooth_racks(f, t0, dt, &err);
  if (rc == SIM_OK)
    rc = cool_racks(f, t0, dt, &err);
  if (rc != SIM_OK)
    return sim_engine_fail(f->engine, rc, "power at %.0f s: %s", t0, err.msg);
  double load = f->p_it + f->p_loss + f->p_smooth + f->p_cool;
  bool dr = f->cap < f->cfg->power.cap_w;
  f->p_bat = bat_step(&f->cfg->battery, &f->bat, load, f->cap, dr, dt, NULL);
  f->p_facility = load - f->p_bat;
  double gpu = 0, act = 0;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    gpu += fl->gpu_power_w[r];
    act += fl->activity_mean[r] * fl->count[r];
  }
  f->p_gpu = gpu;
  f->activity = act / fl->n;
  f->iv.peak_w = fmax(f->iv.peak_w, f->p_facility);
  f->sum.peak_power_w = fmax(f->sum.peak_power_w, f->p_facility);
  return SIM_OK;
}

/* The mean clock share of rack r's GPUs. GPUs of a rack often share cap
 * and activity, so a GPU like the one before reuses its clock instead of
 * solving again. */
static double rack_mean_phi(const rack_fleet *fl, uint32_t r) {
  double sum = 0, phi = 0, last_cap = NAN, last_a = NAN;
  for (uint32_t i = fl->first[r]; i < fl->first[r] + fl->count[r]; i++) {
    if (fl->cap_w[i] != last_cap || fl->activity[i] != last_a) {
      phi = rack_gpu_phi(fl, i);
      last_cap = fl->cap_w[i];
      last_a = fl->activity[i];
    }
    sum += phi;
  }
  return sum / fl->count[r];
}

static void rack_row(factory *f, double dt) {
  const rack_fleet *fl = f->fleet;
  uint32_t n = fl->nracks;
  for (uint32_t r = 0; r < n; r++) {
    double cap = 0;
    for (uint32_t i = fl->first[r]; i < fl->first[r] + fl->count[r]; i++)
      cap += fl->cap_w[i];
    f->row[R_POWER * n + r] = f->iv.rack_j[r] / dt;
    f->row[R_GPU * n + r] = f->iv.rack_gpu_j[r] / dt;
    f->row[R_LIMIT * n + r] = fl->limit_w[r];
    f->row[R_CAP * n + r] = cap / fl->count[r];
    f->row[R_ACTIVITY * n + r] = f->iv.rack_activity_s[r] / dt;
    f->row[R_CLOCK * n + r] = rack_mean_phi(fl, r);
    f->row[R_JUNCTION * n + r] = hottest_junction(f, r);
    f->row[R_THROTTLED * n + r] = (double)fl->throttled[r] / fl->count[r];
  }
}

static void reset_interval(factory *f) {
  uint32_t n = f->fleet->nracks;
  f->iv.energy_j = f->iv.it_j = f->iv.loss_j = f->iv.cool_j = 0;
  f->iv.smooth_j = f->iv.bat_j = 0;
  f->iv.gpu_j = f->iv.activity_s = 0;
  f->iv.peak_w = 0;
  memset(f->iv.rack_j, 0, n * sizeof(double));
  memset(f->iv.rack_gpu_j, 0, n * sizeof(double));
  memset(f->iv.rack_activity_s, 0, n * sizeof(double));
}

/* The grid's signals over the interval ending at now, as means. */
/* The mean of signal s over [t0, t1]; NaN for a signal the scenario does
 * not give (an absent price is unknown, not free). */
static double mean_of(const sig_series *s, double t0, double t1) {
  return s->kind == SIG_NONE ? NAN : sig_integral(s, t0, t1) / (t1 - t0);
}

static void signal_means(const factory *f, sim_time now, double dt,
                         double *row) {
  const grid *g = &f->sc->feed;
  double t1 = sim_time_to_s(now), t0 = t1 - dt;
  row[F_CARBON] = mean_of(&g->carbon, t0, t1);
  row[F_PRICE] = mean_of(&g->price, t0, t1);
  row[F_OUTDOOR] = mean_of(&g->outdoor, t0, t1);
  if (g->carbon.kind == SIG_NONE)
    row[F_CO2] = NAN;
  if (g->price.kind == SIG_NONE)
    row[F_COST] = NAN;
}

static int sample(factory *f, sim_time now) {
  double dt = sim_time_to_s(f->sample_every);
  double row[F_NCOLS] = {
      [F_POWER] = f->iv.energy_j / dt,
      [F_IT] = f->iv.it_j / dt,
      [F_LOSS] = f->iv.loss_j / dt,
      [F_COOL] = f->iv.cool_j / dt,
      [F_SMOOTH] = f->iv.smooth_j / dt,
      [F_BATTERY] = f->iv.bat_j / dt,
      [F_SOC] = f->cfg->battery.capacity_j > 0
                    ? bat_soc(&f->cfg->battery, &f->bat)
                    : NAN,
      [F_PUE] = f->iv.it_j > 0 ? f->iv.energy_j / f->iv.it_j : NAN,
      [F_GPU] = f->iv.gpu_j / dt,
      [F_CAP] = f->cap,
      [F_PEAK] = f->iv.peak_w,
      [F_ACTIVITY] = f->iv.activity_s / dt,
      [F_CO2] = f->books.co2_kg,
      [F_COST] = f->books.cost,
  };
  signal_means(f, now, dt, row);
  f->sum.energy_j += f->iv.energy_j;
  f->sum.it_energy_j += f->iv.it_j;
  f->sum.loss_energy_j += f->iv.loss_j;
  f->sum.cooling_energy_j += f->iv.cool_j;
  f->sum.smoothing_energy_j += f->iv.smooth_j;
  f->sum.battery_net_j += f->iv.bat_j;
  f->sum.gpu_energy_j += f->iv.gpu_j;
  f->sum.mean_activity += f->iv.activity_s;
  f->sampled_energy_j += row[F_POWER] * dt;
  row[F_ENERGY] = f->sum.energy_j;
  f->sum.samples++;
  int rc = SIM_OK;
  if (f->sink != NULL) {
    rack_row(f, dt);
    double t = sim_time_to_s(now);
    rc = tel_append(f->sink, f->facility_id, t, row);
    if (rc == SIM_OK)
      rc = tel_append(f->sink, f->racks_id, t, f->row);
    if (rc == SIM_OK && f->plant.nloops > 0) {
      plant_sample(&f->plant, dt, f->loop_row);
      rc = tel_append(f->sink, f->loops_id, t, f->loop_row);
    }
  }
  reset_interval(f);
  return rc;
}

/* The static policy: every GPU the same share of its TDP, the largest for
 * which the facility at full load stays under the cap: the GPUs at their
 * caps and every rack's other IT at its maximum, the conversion losses at
 * the curves' lowest efficiency, and the cooling the loops would draw in
 * steady state for all that heat at the warmest outdoor temperature of
 * the coming sample interval (loops only approach their steady state, so
 * the cooling stays below it). */
/* A rack's power at full load with every GPU at TDP: what smoothing's
 * floor is a share of. */
static double rack_tdp_w(const rack_group_spec *s) {
  return s->gpus_per_rack * s->gpu->tdp_w + s->other_max_w;
}

/* The feed smoothing holds a rack at, at least (0 when off). */
static double smoothing_floor_w(const factory *f, const rack_group_spec *s) {
  const smo_config *c = &f->cfg->smoothing;
  return c->enabled ? c->floor * rack_tdp_w(s) : 0;
}

static bool facility_fits(void *ctx, const rack_fleet *fl, const double *caps) {
  factory *f = ctx;
  double eta = rack_fleet_min_efficiency(fl), feed = 0;
  for (size_t g = 0; g < fl->ngroups; g++) {
    const rack_group_spec *s = &fl->groups[g];
    double it = s->count * (s->gpus_per_rack * caps[g] + s->other_max_w);
    /* What the group draws, losses included, is the heat its loops take. */
    f->group_heat[g] = fmax(it, s->count * smoothing_floor_w(f, s)) / eta;
    feed += f->group_heat[g];
  }
  if (f->plant.nloops > 0)
    feed += plant_steady_w(&f->plant, f->group_heat, f->reserve_outdoor_c);
  return feed <= f->cap;
}

/* The warmest outdoor temperature over [t, t + sample]. */
static double warmest(const factory *f, sim_time now) {
  double t = sim_time_to_s(now), h = sim_time_to_s(f->sample_every);
  return sig_max(&f->sc->feed.outdoor, t, t + h);
}

/* Splits again for the cap and the weather now. A cap below the fleet's
 * floor (a deep DR cut) puts every GPU at its minimum cap; the books then
 * show the violation. */
static void apply_cap(factory *f, sim_time now) {
  f->reserve_outdoor_c = warmest(f, now);
  if (rack_fleet_split(f->fleet, facility_fits, f, NULL) != SIM_OK)
    rack_fleet_cap_all_min(f->fleet);
}

/* The control tick: close the interval up to now with the power that was
 * in force, sample if due, then set the power for the next period. */
static int on_tick(sim_engine *e, void *ctx, const sim_event *ev) {
  factory *f = ctx;
  advance(f, ev->time);
  if (ev->time > 0 && ev->time % f->sample_every == 0) {
    int rc = sample(f, ev->time);
    if (rc != SIM_OK)
      return sim_engine_fail(e, rc, "writing telemetry: %s",
                             tel_errmsg(f->sink));
  }
  f->sum.ticks++;
  if (ev->time >= factory_duration(f->cfg))
    return SIM_OK;
  double cap = grid_cap_at(&f->sc->feed, sim_time_to_s(ev->time));
  bool new_interval = ev->time % f->sample_every == 0;
  if (cap != f->cap || (new_interval && f->plant.nloops > 0 &&
                        warmest(f, ev->time) != f->reserve_outdoor_c)) {
    f->cap = cap;
    apply_cap(f, ev->time);
  }
  move_load(f, ev->time);
  int rc = recompute_power(f, ev->time);
  pq_step(&f->pq, sim_time_to_s(ev->time), f->p_facility);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Construction                                                        */
/* ------------------------------------------------------------------ */

static rack_fleet *build_fleet(const factory_scenario *sc, sim_error *err) {
  const factory_config *c = &sc->cfg;
  rack_group_spec *groups = calloc(c->nracks, sizeof *groups);
  if (groups == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  for (size_t i = 0; i < c->nracks; i++) {
    const rack_group_config *g = &c->racks[i];
    groups[i] = (rack_group_spec){.name = g->name,
                                  .gpu = gpu_catalog_find(&sc->catalog, g->gpu),
                                  .count = (uint32_t)g->count,
                                  .gpus_per_rack = (uint32_t)g->gpus_per_rack,
                                  .limit_w = g->limit_w,
                                  .other_idle_w = g->other_idle_w,
                                  .other_max_w = g->other_max_w,
                                  .conv = g->conv,
                                  .nconv = g->nconv,
                                  .r_th = g->r_th};
  }
  rack_fleet *fl = rack_fleet_create(groups, c->nracks, err);
  free(groups);
  return fl;
}

/* The loops with each group's share of heat in each loop. */
static int build_plant(factory *f, sim_error *err) {
  const factory_config *c = f->cfg;
  double *share = calloc(c->nloops * c->nracks + 1, sizeof *share);
  if (share == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  for (size_t l = 0; l < c->nloops; l++)
    for (size_t g = 0; g < c->nracks; g++)
      share[l * c->nracks + g] = factory__loop_share(c, l, g);
  for (size_t g = 0; g < c->nracks; g++) {
    f->group_loop[g] = -1;
    for (size_t l = 0; l < c->nloops; l++)
      if (share[l * c->nracks + g] > 0 &&
          (f->group_loop[g] < 0 ||
           share[l * c->nracks + g] >
               share[(size_t)f->group_loop[g] * c->nracks + g]))
        f->group_loop[g] = (long)l;
  }
  int rc = plant_init(&f->plant, c->loops, c->nloops, share, c->nracks, err);
  free(share);
  return rc;
}

/* The smoothing bank, when smoothing is on, and the battery's state. */
static int build_storage(factory *f, sim_error *err) {
  bat_state_init(&f->bat, &f->cfg->battery);
  if (!f->cfg->smoothing.enabled)
    return SIM_OK;
  const rack_fleet *fl = f->fleet;
  for (uint32_t r = 0; r < fl->nracks; r++)
    f->rack_load[r] = rack_tdp_w(&fl->groups[fl->group[r]]);
  f->smooth =
      smo_bank_create(&f->cfg->smoothing, fl->nracks, f->rack_load, NULL, err);
  return f->smooth != NULL ? SIM_OK : err != NULL ? err->code : SIM_ENOMEM;
}

/* The first split, at t = 0: a cap the factory cannot be held under even
 * at its minimum caps, cooling included, is refused before the run. */
static int first_split(factory *f, sim_error *err) {
  f->reserve_outdoor_c = warmest(f, 0);
  if (rack_fleet_split(f->fleet, facility_fits, f, err) == SIM_OK)
    return SIM_OK;
  return sim_error_set(err, SIM_EINPUT,
                       "%s: power.cap %.6g kW is below what the factory "
                       "draws with every GPU at its minimum cap, with its "
                       "conversion losses and cooling at the start",
                       f->cfg->name, f->cfg->power.cap_w / 1e3);
}

static int alloc_state(factory *f) {
  uint32_t n = f->fleet->nracks;
  f->noise_rng = calloc(n, sizeof *f->noise_rng);
  f->noise = calloc(n, sizeof *f->noise);
  f->row = calloc((size_t)R_NCOLS * n, sizeof *f->row);
  f->rack_labels = calloc(n, sizeof *f->rack_labels);
  f->iv.rack_j = calloc(n, sizeof(double));
  f->iv.rack_gpu_j = calloc(n, sizeof(double));
  f->iv.rack_activity_s = calloc(n, sizeof(double));
  f->noise_of = calloc(f->cfg->nracks, sizeof *f->noise_of);
  f->level_of = calloc(f->cfg->nracks, sizeof *f->level_of);
  f->group_heat = calloc(f->cfg->nracks, sizeof *f->group_heat);
  f->rack_load = calloc(n, sizeof *f->rack_load);
  f->rack_heat = calloc(n, sizeof *f->rack_heat);
  f->group_loop = calloc(f->cfg->nracks, sizeof *f->group_loop);
  f->loop_row = calloc(PLANT_NCOLS * f->cfg->nloops + 1, sizeof *f->loop_row);
  if (!f->noise_rng || !f->noise || !f->noise_of || !f->level_of || !f->row ||
      !f->group_heat || !f->loop_row || !f->rack_load || !f->rack_heat ||
      !f->group_loop || !f->rack_labels || !f->iv.rack_j || !f->iv.rack_gpu_j ||
      !f->iv.rack_activity_s)
    return SIM_ENOMEM;
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

static int declare_telemetry(factory *f, sim_error *err) {
  if (f->sink == NULL)
    return SIM_OK;
  tel_group fac = {"facility", facility_columns, F_NCOLS, 1, NULL, NULL};
  tel_group racks = {"racks",          rack_columns, R_NCOLS,
                     f->fleet->nracks, "rack",       f->rack_labels};
  /* The sink keeps pointers to the declarations: they live in f. */
  f->facility_group = fac;
  f->racks_group = racks;
  f->loops_group = (tel_group){"loops",         plant_columns, PLANT_NCOLS,
                               f->plant.nloops, "loop",        f->plant.names};
  int rc = tel_open_group(f->sink, &f->facility_group, &f->facility_id);
  if (rc == SIM_OK)
    rc = tel_open_group(f->sink, &f->racks_group, &f->racks_id);
  if (rc == SIM_OK && f->plant.nloops > 0)
    rc = tel_open_group(f->sink, &f->loops_group, &f->loops_id);
  if (rc != SIM_OK)
    return sim_error_set(err, rc, "%s", tel_errmsg(f->sink));
  return SIM_OK;
}

static int start(factory *f, sim_error *err) {
  int rc =
      sim_engine_register(f->engine, "factory tick", on_tick, f, &f->tick_kind);
  if (rc == SIM_OK)
    rc = sim_engine_every(f->engine, 0, f->period, f->tick_kind, 0, 0, NULL);
  if (rc != SIM_OK)
    return sim_error_set(err, rc, "cannot schedule the control tick: %s",
                         sim_strerror(rc));
  return SIM_OK;
}

factory *factory_create(const factory_scenario *sc, sim_engine *e,
                        tel_sink *sink, sim_error *err) {
  factory *f = calloc(1, sizeof *f);
  if (f == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  f->sc = sc;
  f->cfg = &sc->cfg;
  f->engine = e;
  f->sink = sink;
  f->period = factory__to_ns(f->cfg->control_period_s);
  f->sample_every = factory__to_ns(f->cfg->sample_period_s);
  f->control_dt_s = sim_time_to_s(f->period);
  f->cap = sc->cfg.power.cap_w;
  f->fleet = build_fleet(sc, err);
  int rc = f->fleet != NULL ? SIM_OK : SIM_EINPUT;
  if (rc == SIM_OK && alloc_state(f) != SIM_OK)
    rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
  if (rc == SIM_OK)
    rc = build_plant(f, err);
  if (rc == SIM_OK)
    rc = build_storage(f, err);
  if (rc == SIM_OK)
    rc = first_split(f, err);
  if (rc == SIM_OK)
    rc = pq_init(&f->pq, &f->cfg->power_quality, f->cfg->duration_s, err);
  if (rc == SIM_OK)
    rc = declare_telemetry(f, err);
  if (rc == SIM_OK)
    rc = start(f, err);
  if (rc != SIM_OK) {
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
  free(f->noise_rng);
  free(f->noise);
  free(f->noise_of);
  free(f->level_of);
  free(f->row);
  free(f->rack_labels);
  free(f->iv.rack_j);
  free(f->iv.rack_gpu_j);
  free(f->iv.rack_activity_s);
  free(f->group_heat);
  free(f->rack_load);
  free(f->rack_heat);
  free(f->group_loop);
  smo_bank_destroy(f->smooth);
  free(f->loop_row);
  plant_fini(&f->plant);
  rack_fleet_destroy(f->fleet);
  pq_fini(&f->pq);
  free(f);
}

/* ------------------------------------------------------------------ */
/* The books                                                           */
/* ------------------------------------------------------------------ */

static int put_summary(factory *f) {
  const factory_summary *s = &f->sum;
  struct {
    const char *key;
    double value;
  } metrics[] = {
      {"energy_mwh", s->energy_j / 3.6e9},
      {"it_energy_mwh", s->it_energy_j / 3.6e9},
      {"loss_energy_mwh", s->loss_energy_j / 3.6e9},
      {"cooling_energy_mwh", s->cooling_energy_j / 3.6e9},
      {"smoothing_energy_mwh", s->smoothing_energy_j / 3.6e9},
      {"smoothing_violation_s", s->smoothing_violation_s},
      {"throttled_gpu_s", s->throttled_gpu_s},
      {"battery_net_mwh", s->battery_net_j / 3.6e9},
      {"battery_loss_mwh", s->battery_loss_j / 3.6e9},
      {"mean_pue", s->it_energy_j > 0 ? s->energy_j / s->it_energy_j : NAN},
      {"max_ramp_w_per_s", s->max_ramp_w_per_s},
      {"oscillation_j", s->oscillation_j},
      {"oscillation_w_rms", s->oscillation_w_rms},
      {"gpu_energy_mwh", s->gpu_energy_j / 3.6e9},
      {"mean_power_w", s->mean_power_w},
      {"peak_power_w", s->peak_power_w},
      {"cap_w", s->cap_w},
      {"cap_violation_s", s->cap_violation_s},
      {"cap_violation_j", s->cap_violation_j},
      {"cost", s->cost},
      {"co2_t", s->co2_kg / 1000},
      {"carbon_g_per_kwh",
       s->energy_j > 0 ? s->co2_kg / s->energy_j * 3.6e9 : NAN},
      {"mean_activity", s->mean_activity},
      {"duration_s", s->duration_s},
      {"gpus", (double)s->gpus},
      {"racks", (double)s->racks},
  };
  for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++) {
    int rc = tel_put_summary(f->sink, metrics[i].key, metrics[i].value);
    if (rc != SIM_OK)
      return rc;
  }
  return SIM_OK;
}

int factory_finish(factory *f, factory_summary *out, sim_error *err) {
  factory_summary *s = &f->sum;
  s->duration_s = sim_time_to_s(factory_duration(f->cfg));
  const grid *g = &f->sc->feed;
  s->cost = g->price.kind == SIG_NONE ? NAN : f->books.cost;
  s->co2_kg = g->carbon.kind == SIG_NONE ? NAN : f->books.co2_kg;
  pq_result pq;
  int rc = pq_finish(&f->pq, s->duration_s, &pq, err);
  if (rc != SIM_OK)
    return rc;
  s->max_ramp_w_per_s = pq.max_ramp_w_per_s;
  s->oscillation_j = pq.oscillation_j;
  s->oscillation_w_rms = pq.oscillation_w_rms;
  s->mean_power_w = s->energy_j / s->duration_s;
  s->mean_activity /= s->duration_s;
  s->cap_w = f->cfg->power.cap_w;
  s->gpus = f->fleet->n;
  s->racks = f->fleet->nracks;
  /* The books: the samples must carry all the energy that was drawn. */
  s->battery_loss_j = f->bat.loss_j;
  for (uint32_t r = 0; f->smooth != NULL && r < f->fleet->nracks; r++)
    s->smoothing_violation_s += f->smooth->violation_s[r];
  double parts = s->it_energy_j + s->loss_energy_j + s->cooling_energy_j +
                 s->smoothing_energy_j - s->battery_net_j;
  /* Written as !(a <= b) so that a NaN fails the books too. */
  double tol = 1e-9 * fabs(s->energy_j);
  if (!(fabs(f->sampled_energy_j - s->energy_j) <= tol) ||
      !(fabs(f->books.energy_j - s->energy_j) <= tol) ||
      !(fabs(parts - s->energy_j) <= tol))
    return sim_error_set(err, SIM_ESTATE,
                         "energy books do not balance: samples %.17g J, "
                         "integrated %.17g J",
                         f->sampled_energy_j, s->energy_j);
  if (f->sink != NULL && put_summary(f) != SIM_OK)
    return sim_error_set(err, SIM_EIO, "%s", tel_errmsg(f->sink));
  if (out != NULL)
    *out = *s;
  return SIM_OK;
}
