/* factory.c - the run-time wiring of a factory: one periodic control tick
 * that integrates energy, samples telemetry when due, moves the load and
 * recomputes power, and the hooks power control calls. Every model it
 * runs it reaches through the table of descriptors (factory_model.h,
 * factory_models.c), at the stages that header lists. Construction is
 * factory_build.c, the telemetry and the books factory_books.c, the
 * scenario side (schema, checks, loading) factory_scn.c. */
#include "factory.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "factory_internal.h"
#include "factory_model.h"

/* Books the interval since the last tick at the power that was in
 * force: the factory's own integrals, then each model's (advance, in
 * table order). */
static void advance(factory *f, sim_time now) {
  double dt = sim_time_to_s(now - f->last);
  if (dt <= 0)
    return;
  const rack_fleet *fl = f->fleet;
  f->iv.energy_j += f->p_facility * dt;
  f->iv.it_j += f->p_it * dt;
  f->sum.it_outside_racks_j += f->p_outside * dt;
  f->iv.psu_j += f->p_psu * dt;
  f->iv.fan_j += f->p_fan * dt;
  f->iv.gpu_j += f->p_gpu * dt;
  f->iv.activity_s += f->activity * dt;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    f->sum.throttled_gpu_s += fl->throttled[r] * dt;
    f->iv.rack_j[r] += fl->rack_power_w[r] * dt;
    f->iv.rack_gpu_j[r] += fl->gpu_power_w[r] * dt;
    f->iv.rack_activity_s[r] += fl->activity_mean[r] * dt;
  }
  for (size_t m = 0; m < factory_nmodels; m++)
    if (factory_models[m]->advance != NULL)
      factory_models[m]->advance(f, f->state[m], now, dt);
  double stranded = fmax(0, f->cap - f->p_facility) * dt;
  f->iv.stranded_j += stranded;
  f->sum.stranded_j += stranded;
  double over = f->p_facility - f->cap;
  if (over > 0) {
    f->sum.cap_violation_s += dt;
    f->sum.cap_violation_j += over * dt;
  }
  f->last = now;
}

/* The fleet's free runs by rack (f->free_runs), once a making of its
 * runs (fresh): a run is of one key, so of free GPUs or of a slot's. */
static void list_free_runs(factory *f) {
  const rack_fleet *fl = f->fleet;
  if (f->free_seen == fl->runs_made)
    return;
  uint32_t m = 0;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    f->free_run0[r] = m;
    for (uint32_t q = fl->rack_run[r]; q < fl->rack_run[r + 1]; q++)
      if (fl->unit_key[fl->run_first[q]] == 0)
        f->free_runs[m++] = q;
  }
  f->free_run0[fl->nracks] = m;
  f->free_seen = fl->runs_made;
}

/* The background load l to rack r's GPUs. With the fleet's runs fresh,
 * to its free runs only (list_free_runs), once a run (rack_set_run_load):
 * a keyed GPU is an active slot's, and the workloads' drive, which comes
 * next, writes its slot's load over it (so the loads after both are the
 * same either way). */
static void give_rack_load(factory *f, uint32_t r, gpu_load l) {
  rack_fleet *fl = f->fleet;
  if (!rack_fleet_runs_fresh(fl)) {
    for (uint32_t i = fl->first[r]; i < fl->first[r] + fl->count[r]; i++)
      rack_set_load(fl, i, l);
    return;
  }
  for (uint32_t k = f->free_run0[r]; k < f->free_run0[r + 1]; k++)
    rack_set_run_load(fl, f->free_runs[k], l);
}

/* Every rack's noise a step on, group by group (rack_fleet_create lays
 * the racks out so). A group without noise (its kick 0: bench-10k's) is
 * skipped: its racks' noise started at 0 and x rho + 0 N(0, 1) keeps it
 * there (load.h), and each rack's stream feeds its noise alone. */
static void step_noise(factory *f) {
  const rack_fleet *fl = f->fleet;
  uint32_t r = 0;
  for (size_t g = 0; g < fl->ngroups; g++) {
    const load_noise *n = &f->noise_of[g];
    uint32_t end = r + (uint32_t)fl->groups[g].count;
    assert(end <= fl->nracks && (r == end || fl->group[end - 1] == g));
    for (; n->kick != 0 && r < end; r++)
      f->noise[r] = load_noise_step(n, f->noise[r], f->noise_rng[r]);
    for (; r < end; r++)
      assert(f->noise[r] == 0);
  }
}

/* The load of rack r at its group's pattern (level) plus its noise. */
static gpu_load rack_load_now(const factory *f, uint32_t r) {
  double a = f->level_of[f->fleet->group[r]] + f->noise[r];
  return gpu_load_level(a < 0 ? 0 : a > 1 ? 1 : a);
}

/* Moves every rack's activity to its group's pattern at now plus the
 * rack's own noise, and gives it to the rack's GPUs: with the runs
 * fresh, to the racks with free runs alone, found from their list (at
 * bench-10k's, 2 racks of 142), the same loads in the same order. */
static void move_load(factory *f, sim_time now) {
  rack_fleet *fl = f->fleet;
  double t = sim_time_to_s(now);
  /* The pattern is the group's: worked out once per group, not per rack. */
  for (size_t g = 0; g < f->cfg->nracks; g++)
    f->level_of[g] = load_level(&f->cfg->racks[g].load, t);
  step_noise(f);
  if (!rack_fleet_runs_fresh(fl)) {
    for (uint32_t r = 0; r < fl->nracks; r++)
      give_rack_load(f, r, rack_load_now(f, r));
    return;
  }
  list_free_runs(f);
  for (uint32_t k = 0; k < f->free_run0[fl->nracks];) {
    uint32_t r = fl->run_rack[f->free_runs[k]];
    give_rack_load(f, r, rack_load_now(f, r));
    k = f->free_run0[r + 1];
  }
}

/* Thermal protection: where the GPUs' slowdown temperature and the rack's
 * thermal resistance are known, the power that holds the junction at the
 * slowdown temperature over the loop's current temperature caps the GPUs
 * (as their clocks fall, they settle there: cool.h's throttle law has its
 * fixed point at or above it, and the slowdown point is the conservative
 * one). Rack r's, from its group's loop, resistance and GPU. */
static double rack_thermal_cap(const factory *f, uint32_t r) {
  const rack_fleet *fl = f->fleet;
  const rack_group_spec *g = &fl->groups[fl->group[r]];
  double loop = factory__rack_loop_c(f, r);
  bool known = !isnan(g->r_th) && !isnan(g->gpu->slowdown_c) && !isnan(loop);
  return known ? cool_thermal_power_w(loop, g->gpu->slowdown_c, g->r_th)
               : INFINITY;
}

/* Every rack's thermal cap: a group's racks share all it is made of, so
 * it is worked out once a group (once a rack, it cost bench-10k's tick
 * 2.9 k instructions, 20 a rack), and given to its racks, which are the
 * fleet's next count (rack_fleet_create makes them group by group). */
static void thermal_caps(factory *f) {
  rack_fleet *fl = f->fleet;
  double *to = fl->thermal_cap_w;
  uint32_t r = 0;
  for (size_t g = 0; g < fl->ngroups; g++) {
    uint32_t end = r + (uint32_t)fl->groups[g].count;
    assert(end <= fl->nracks && fl->group[r] == g && fl->group[end - 1] == g);
    double cap = rack_thermal_cap(f, r);
    for (; r < end; r++)
      to[r] = cap;
  }
}

/* Sets the power in force from now for one control period: IT (with its
 * conversion losses and fans) from the fleet, with what the models draw
 * outside the racks (it_w), then each model's power in table order
 * (factory_models.c: smoothing, cooling stepped over the period with the
 * outdoor temperature's mean over it, the power chain, then the battery,
 * which decides what the grid sees). */
static int recompute_power(factory *f, sim_time now) {
  rack_fleet *fl = f->fleet;
  double t0 = sim_time_to_s(now), dt = f->control_dt_s;
  thermal_caps(f);
  f->p_rack_it = rack_fleet_update(fl, &f->p_psu);
  f->p_outside = 0;
  for (size_t m = 0; m < factory_nmodels; m++)
    if (factory_models[m]->it_w != NULL)
      f->p_outside += factory_models[m]->it_w(f, f->state[m]);
  f->p_it = f->p_outside > 0 ? f->p_rack_it + f->p_outside : f->p_rack_it;
  /* Not `= {0}`: that zeroed the 1 KiB message every tick (a rep stos);
   * a model that fails writes it. */
  sim_error err;
  err.code = SIM_OK;
  err.msg[0] = '\0';
  for (size_t m = 0; m < factory_nmodels; m++) {
    const factory_model *d = factory_models[m];
    int rc = d->power != NULL ? d->power(f, f->state[m], t0, dt, &err) : SIM_OK;
    if (rc != SIM_OK)
      return sim_engine_fail(f->engine, rc, "power at %.0f s: %s", t0, err.msg);
  }
  double gpu = 0, act = 0, fan = 0;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    gpu += fl->gpu_power_w[r];
    fan += fl->fan_w[r];
    act += fl->activity_mean[r] * fl->count[r];
  }
  f->p_gpu = gpu;
  f->p_fan = fan;
  f->activity = act / fl->n;
  f->iv.peak_w = fmax(f->iv.peak_w, f->p_facility);
  f->sum.peak_power_w = fmax(f->sum.peak_power_w, f->p_facility);
  return SIM_OK;
}

/* The feed smoothing holds a rack at, at least (0 when off). */
static double smoothing_floor_w(const factory *f, const rack_group_spec *s) {
  const smo_config *c = &f->cfg->smoothing;
  return c->enabled ? c->floor * factory__rack_tdp_w(s) : 0;
}

/* The static policy: every GPU the same share of its TDP, the largest for
 * which the facility at full load stays under the cap: the GPUs at their
 * caps and every rack's host at full activity, the conversion losses (for
 * a group without a system) at its curve's lowest efficiency, and the
 * cooling the loops would draw in steady state for all that heat at the
 * warmest outdoor temperature of the coming sample interval (loops only
 * approach their steady state, so the cooling stays below it). */
static bool facility_fits(void *ctx, const rack_fleet *fl, const double *caps) {
  factory *f = ctx;
  double feed = 0;
  for (size_t g = 0; g < fl->ngroups; g++) {
    const rack_group_spec *s = &fl->groups[g];
    /* Dark racks draw nothing; emergency racks' GPUs are at their
     * minimum caps whatever the split gives. */
    double it = f->group_free[g] * rack_fleet_group_worst_w(fl, g, caps[g]);
    if (f->group_emergency[g] > 0)
      it += f->group_emergency[g] *
            rack_fleet_group_worst_w(fl, g, s->gpu->cap_min_w);
    /* What the group draws, losses included, is the heat its loops take.
     * (Smoothing keeps a dark rack's floor: its bank is not reset.) */
    f->group_heat[g] = fmax(it, s->count * smoothing_floor_w(f, s));
  }
  factory__models_group_w(f, f->group_heat);
  for (size_t g = 0; g < fl->ngroups; g++)
    feed += f->group_heat[g];
  feed += elec_overhead_w(&f->cfg->electrical, feed);
  if (f->plant.nloops > 0)
    /* Saturated air at the warmest dry bulb bounds the wet bulb. */
    feed += plant_steady_w(&f->plant, f->group_heat, f->reserve_outdoor_c,
                           f->reserve_outdoor_c);
  return feed <= f->limit;
}

/* Per group, its racks whose caps the split decides (neither dark nor
 * in emergency) and its emergency racks: what facility_fits reads, after
 * a model changed the fleet (a fault's step). */
static void count_usable(factory *f) {
  rack_fleet *fl = f->fleet;
  memset(f->group_free, 0, fl->ngroups * sizeof *f->group_free);
  memset(f->group_emergency, 0, fl->ngroups * sizeof *f->group_emergency);
  for (uint32_t r = 0; r < fl->nracks; r++) {
    f->group_free[fl->group[r]] += rack_fleet_rack_usable(fl, r);
    f->group_emergency[fl->group[r]] += fl->emergency[r];
  }
}

/* The coming period as the models decide it: each model's period hook
 * in table order, from the contracted cap (or the one a client set)
 * down; when one changed the
 * fleet, the split's counts are redone and the others react (fault). */
static void decide_period(factory *f, double t) {
  double cap = isnan(f->cap_set) ? f->cfg->power.cap_w : f->cap_set;
  factory_period p = {.cap_w = cap,
                      .dr_end_s = NAN,
                      .fault_on = f->coming.fault_on,
                      .target_w = NAN,
                      .grid_share = 1};
  for (size_t m = 0; m < factory_nmodels; m++)
    if (factory_models[m]->period != NULL)
      factory_models[m]->period(f, f->state[m], t, &p);
  f->coming = p;
  if (!p.changed)
    return;
  count_usable(f);
  for (size_t m = 0; m < factory_nmodels; m++)
    if (factory_models[m]->fault != NULL)
      factory_models[m]->fault(f, f->state[m]);
}

/* The period's power is set: each model's after, in table order. */
static void after_period(factory *f, double t) {
  for (size_t m = 0; m < factory_nmodels; m++)
    if (factory_models[m]->after != NULL)
      factory_models[m]->after(f, f->state[m], t);
}

/* The control tick: close the interval up to now with the power that was
 * in force, sample if due, then set the power for the next period. */
int factory__on_tick(sim_engine *e, void *ctx, const sim_event *ev) {
  factory *f = ctx;
  advance(f, ev->time);
  if (ev->time > 0 && ev->time % f->sample_every == 0) {
    int rc = factory__sample(f, ev->time);
    if (rc != SIM_OK)
      return sim_engine_fail(e, rc, "writing telemetry: %s",
                             tel_errmsg(f->sink));
  }
  f->sum.ticks++;
  if (ev->time >= factory_duration(f->cfg))
    return SIM_OK;
  double t = sim_time_to_s(ev->time);
  decide_period(f, t);
  double cap = f->coming.cap_w;
  double limit = fmin(cap, f->coming.target_w); /* NaN: no target */
  bool new_interval = ev->time % f->sample_every == 0;
  bool recap = cap != f->cap || limit != f->limit || f->coming.changed ||
               f->resplit ||
               (new_interval && f->plant.nloops > 0 &&
                factory__warmest(f, ev->time) != f->reserve_outdoor_c);
  f->resplit = false;
  if (recap) {
    f->cap = cap;
    f->limit = limit;
    f->reserve_outdoor_c = factory__warmest(f, ev->time);
  }
  control_view v = {.cap_w = f->cap,
                    .limit_w = f->limit,
                    .recap = recap,
                    .dr = f->coming.dr,
                    .fault_on = f->coming.fault_on,
                    .facility_w = f->p_facility,
                    .it_w = f->p_it,
                    .psu_loss_w = f->p_psu,
                    .dr_window_s = f->cfg->grid.dr_window_s};
  int rc = control_period(f->control, &v, ev->time);
  after_period(f, t);
  return rc;
}

void factory_set_cap(factory *f, double cap_w) { f->cap_set = cap_w; }

/* Books the energy up to now before GPUs change hands. */
void factory__settle(void *ctx, sim_time now) { advance(ctx, now); }

/* The hooks of power control (control.h), on the factory. */

/* The models take the clocks of the period ending now. */
static void clocks(void *ctx) {
  factory *f = ctx;
  for (size_t m = 0; m < factory_nmodels; m++)
    if (factory_models[m]->clocks != NULL)
      factory_models[m]->clocks(f, f->state[m]);
}

/* The load for the coming period: the factory's background load moves,
 * then the models set the activity of the GPUs they hold over it. */
static void drive(void *ctx, sim_time now) {
  factory *f = ctx;
  move_load(f, now);
  for (size_t m = 0; m < factory_nmodels; m++)
    if (factory_models[m]->drive != NULL)
      factory_models[m]->drive(f, f->state[m], f->control_dt_s);
}

static int set_power(void *ctx, sim_time now, double *facility_w) {
  factory *f = ctx;
  int rc = recompute_power(f, now);
  *facility_w = f->p_facility;
  return rc;
}

static const uint32_t *gpu_slots(void *ctx) {
  factory *f = ctx;
  size_t m = f->holder; /* the workloads (factory_build.c) */
  return factory_models[m]->slots(f->state[m]);
}

static uint64_t slots_changed(void *ctx) {
  factory *f = ctx;
  size_t m = f->holder;
  return factory_models[m]->slots_changed(f->state[m]);
}

static void slot_units(void *ctx, const uint32_t *key, size_t n,
                       power_unit *u) {
  factory *f = ctx;
  size_t m = f->holder;
  factory_models[m]->units(f->state[m], key, n, u);
}

/* Every model's requests, added up. */
static void request_counts(void *ctx, uint64_t *done, uint64_t *met) {
  factory *f = ctx;
  *done = *met = 0;
  for (size_t m = 0; m < factory_nmodels; m++) {
    uint64_t d = 0, k = 0;
    if (factory_models[m]->requests != NULL)
      factory_models[m]->requests(f->state[m], &d, &k);
    *done += d;
    *met += k;
  }
}

control_hooks factory__control_hooks(factory *f) {
  return (control_hooks){.ctx = f,
                         .fits = facility_fits,
                         .drive = drive,
                         .power = set_power,
                         .gpu_slots = gpu_slots,
                         .slots_changed =
                             factory_models[f->holder]->slots_changed != NULL
                                 ? slots_changed
                                 : NULL,
                         .clocks = clocks,
                         .slot_units = slot_units,
                         .request_counts = request_counts};
}
