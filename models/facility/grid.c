/* grid.c - the feed's cap with DR events, its signals and the books. */
#include "grid.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* J per MWh: cost = P dt [J] x price [$/MWh] / J_PER_MWH, and CO2 [kg] =
 * P dt [J] x carbon [g/kWh = kg/MWh] / J_PER_MWH. */
#define J_PER_MWH 3.6e9

static int check_event(void *obj, const scn_loc *loc, void *user,
                       sim_error *err);

static const scn_field dr_fields[] = {
    {.key = "start",
     .type = SCN_QUANTITY,
     .offset = offsetof(dr_event, start_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = 366 * 86400.0,
     .flags = SCN_REQUIRED,
     .help = "when the cut starts, e.g. 14 h"},
    {.key = "duration",
     .type = SCN_QUANTITY,
     .offset = offsetof(dr_event, duration_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = 366 * 86400.0,
     .flags = SCN_REQUIRED | SCN_POSITIVE,
     .help = "how long it lasts, e.g. 3 h"},
    {.key = "cut",
     .type = SCN_QUANTITY,
     .offset = offsetof(dr_event, cut),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .help = "the share of contracted capacity taken away, e.g. 25%"},
    {.key = "level",
     .type = SCN_QUANTITY,
     .offset = offsetof(dr_event, level_w),
     .dim = UNITS_POWER,
     .min = 0,
     .max = HUGE_VAL,
     .help = "or the cap during the event, e.g. 15 MW"},
    {.key = "notice",
     .type = SCN_QUANTITY,
     .offset = offsetof(dr_event, notice_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = 366 * 86400.0,
     .dflt = "0 s",
     .help = "how long before start the event is announced"},
};

static const scn_schema dr_schema = SCN_SCHEMA(
    "demand-response event", dr_event, dr_fields, .check = check_event);

static const scn_field grid_fields[] = {
    {.key = "carbon",
     .type = SCN_MAP,
     .offset = offsetof(grid_config, carbon),
     .sub = &sig_carbon_schema,
     .help = "carbon intensity: a file, a value, a daily schedule or a mix"},
    {.key = "price",
     .type = SCN_MAP,
     .offset = offsetof(grid_config, price),
     .sub = &sig_price_schema,
     .help = "electricity price: a file, a value or a daily schedule"},
    {.key = "outdoor",
     .type = SCN_MAP,
     .offset = offsetof(grid_config, outdoor),
     .sub = &sig_temperature_schema,
     .help = "outdoor temperature: a file, a value or low/high"},
    {.key = "dr_events",
     .type = SCN_LIST,
     .offset = offsetof(grid_config, dr),
     .sub = &dr_schema,
     .count_offset = offsetof(grid_config, ndr),
     .help = "demand-response events: [{start, duration, cut or level}]"},
};

const scn_schema grid_schema =
    SCN_SCHEMA("grid", grid_config, grid_fields, .check = NULL);

static int check_event(void *obj, const scn_loc *loc, void *user,
                       sim_error *err) {
  (void)user;
  const dr_event *e = obj;
  if (isnan(e->cut) == isnan(e->level_w))
    return scn_fail(loc, NULL, err, "e.g. cut: 25% or level: 15 MW",
                    "a demand-response event needs a cut or a level, not "
                    "both");
  return SIM_OK;
}

static int init_signal(sig_series *s, const sig_config *c, const char *name,
                       const char *base_dir, double duration_s,
                       sim_error *err) {
  int rc = sig_init(s, c, base_dir, NULL, err);
  if (rc != SIM_OK)
    return rc;
  if (!sig_covers(s, 0, duration_s))
    return sim_error_set(err, SIM_ERANGE,
                         "the %s file %s covers %.6g h from the start, the "
                         "run %.6g h",
                         name, c->file, sig_end(s) / 3600, duration_s / 3600);
  return SIM_OK;
}

int grid_init(grid *g, const grid_config *c, double contracted_w,
              const char *base_dir, double duration_s, const char **which,
              sim_error *err) {
  static const char *const names[] = {"carbon", "price", "outdoor"};
  const sig_config *cfgs[] = {&c->carbon, &c->price, &c->outdoor};
  sig_series *series[] = {&g->carbon, &g->price, &g->outdoor};
  memset(g, 0, sizeof *g);
  g->contracted_w = contracted_w;
  g->dr = c->dr;
  g->ndr = c->ndr;
  for (int k = 0; k < 3; k++) {
    int rc =
        init_signal(series[k], cfgs[k], names[k], base_dir, duration_s, err);
    if (rc != SIM_OK) {
      if (which != NULL)
        *which = names[k];
      grid_fini(g);
      return rc;
    }
  }
  return SIM_OK;
}

void grid_fini(grid *g) {
  sig_fini(&g->carbon);
  sig_fini(&g->price);
  sig_fini(&g->outdoor);
}

static double event_level(const grid *g, const dr_event *e) {
  return isnan(e->cut) ? e->level_w : g->contracted_w * (1 - e->cut);
}

double grid_cap_at(const grid *g, double t) {
  double cap = g->contracted_w;
  for (size_t i = 0; i < g->ndr; i++) {
    const dr_event *e = &g->dr[i];
    if (t >= e->start_s && t < e->start_s + e->duration_s)
      cap = fmin(cap, event_level(g, e));
  }
  return cap;
}

double grid_next_change(const grid *g, double t) {
  double next = INFINITY;
  for (size_t i = 0; i < g->ndr; i++) {
    double a = g->dr[i].start_s, b = a + g->dr[i].duration_s;
    if (a > t)
      next = fmin(next, a);
    if (b > t)
      next = fmin(next, b);
  }
  return next;
}

void grid_account(const grid *g, double p_w, double t0, double t1,
                  grid_books *b) {
  b->energy_j += p_w * (t1 - t0);
  b->cost += p_w * sig_integral(&g->price, t0, t1) / J_PER_MWH;
  b->co2_kg += p_w * sig_integral(&g->carbon, t0, t1) / J_PER_MWH;
}
