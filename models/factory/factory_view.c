/* factory_view.c - what every file of the factory reads of a scenario
 * and of the factory's state, and calls no other file of it: the run's
 * length, a rack group as the fleet sees it, the means of the grid's
 * signals, the loop temperatures and the warmest outdoor temperature.
 * It sits under factory.c, factory_build.c, factory_books.c and
 * racks_scn.c, so that none of them calls another in a circle. */
#include "factory.h"

#include <math.h>

#include "factory_internal.h"
#include "factory_model.h"

sim_time factory_duration(const factory_config *cfg) {
  return factory__to_ns(cfg->duration_s);
}

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
      .other_given = g->other_given,
      .gpu_limit_w = isnan(g->gpu_limit_w) ? 0 : g->gpu_limit_w};
}

/* The grid's signals over the interval ending at now, as means. */
/* The mean of signal s over [t0, t1]; NaN for a signal the scenario does
 * not give (an absent price is unknown, not free). */
double factory__mean_of(const sig_series *s, double t0, double t1) {
  return s->kind == SIG_NONE ? NAN : sig_integral(s, t0, t1) / (t1 - t0);
}

double factory__mean_next(const sig_series *s, sig_run *r, double t0,
                          double t1) {
  return s->kind == SIG_NONE ? NAN
                             : sig_integral_next(s, r, t0, t1) / (t1 - t0);
}

/* The loop temperature a rack's GPUs sit on: that of the loop taking most
 * of its group's heat; NaN without loops. */
double factory__rack_loop_c(const factory *f, uint32_t r) {
  long l = f->group_loop[f->fleet->group[r]];
  return l < 0 ? NAN : cool_loop_temp_c(f->plant.loops[l]);
}

/* The warmest outdoor temperature over [t, t + sample]. */
double factory__warmest(const factory *f, sim_time now) {
  double t = sim_time_to_s(now), h = sim_time_to_s(f->sample_every);
  return sig_max(&f->sc->feed.outdoor, t, t + h);
}

/* What the models draw in each rack group (their group_w hooks, in table
 * order), added to w. */
void factory__models_group_w(const factory *f, double *w) {
  for (size_t m = 0; m < factory_nmodels; m++)
    if (factory_models[m]->group_w != NULL)
      factory_models[m]->group_w(f, f->state[m], w);
}

const rack_fleet *factory__fleet(const factory *f) { return f->fleet; }

tel_sink *factory__sink(const factory *f) { return f->sink; }

const sim_allocator *factory__alloc(const factory *f) { return f->alloc; }

const void *factory__model_config(const factory *f, const factory_model *m) {
  (void)f, (void)m;
#define XX(key, type, schema, on, desc, help)                                  \
  extern const factory_model desc;                                             \
  if (m == &desc)                                                              \
    return &f->cfg->key;
  FACTORY_MODEL_MAP(XX)
#undef XX
  return NULL;
}

const factory_period *factory__period(const factory *f) { return &f->coming; }

void factory_power_of(const factory *f, factory_power_now *out) {
  *out = (factory_power_now){.facility_w = f->p_facility,
                             .it_w = f->p_it,
                             .gpu_w = f->p_gpu,
                             .cooling_w = f->p_cool,
                             .cap_w = f->cap,
                             .loss_w = f->p_loss,
                             .smoothing_w = f->p_smooth,
                             .battery_w = f->p_bat};
}

void factory_grid_of(const factory *f, factory_grid_now *out) {
  const grid *g = &f->sc->feed;
  double t0 = sim_time_to_s(sim_engine_now(f->engine));
  double t1 = t0 + f->control_dt_s;
  *out = (factory_grid_now){.price_per_mwh = factory__mean_of(&g->price, t0, t1),
                            .carbon_g_per_kwh =
                                factory__mean_of(&g->carbon, t0, t1),
                            .outdoor_c = factory__mean_of(&g->outdoor, t0, t1),
                            .dr_cap_w = grid_cap_at(g, t0)};
}

void factory_group_power(const factory *f, double *w) {
  const rack_fleet *fl = f->fleet;
  for (size_t g = 0; g < fl->ngroups; g++)
    w[g] = 0;
  for (uint32_t r = 0; r < fl->nracks; r++)
    w[fl->group[r]] += fl->rack_power_w[r];
}

sim_time factory_tick_period(const factory_config *cfg) {
  return factory__to_ns(cfg->control_period_s);
}
