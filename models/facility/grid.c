/* grid.c - the feed's cap with DR events, its signals and the books. */
#include "grid.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"

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

static int check_tariff(void *obj, const scn_loc *loc, void *user,
                        sim_error *err);

/* The demand interval's default: 15 min, the window of most US demand
 * charges (tariffs in OpenEI's Utility Rate Database, which NREL's
 * "Maximum demand charge rates for commercial and industrial electricity
 * tariffs in the United States" draws on; 15-60 min are in use). */
static const scn_field tariff_fields[] = {
    {.key = "demand_charge",
     .type = SCN_QUANTITY,
     .offset = offsetof(grid_tariff, demand_charge),
     .dim = UNITS_DEMAND_PRICE,
     .min = 0,
     .max = 1e4,
     .dflt = "0 $/kW",
     .help = "per kW of each billing period's peak, e.g. 15 $/kW"},
    {.key = "demand_interval",
     .type = SCN_QUANTITY,
     .offset = offsetof(grid_tariff, demand_interval_s),
     .dim = UNITS_TIME,
     .min = 1,
     .max = 86400,
     .flags = SCN_POSITIVE,
     .dflt = "15 min",
     .help = "the window the billed peak is averaged over, e.g. 15 min"},
    {.key = "billing_period",
     .type = SCN_QUANTITY,
     .offset = offsetof(grid_tariff, billing_period_s),
     .dim = UNITS_TIME,
     .min = 60,
     .max = 366 * 86400.0,
     .flags = SCN_POSITIVE,
     .dflt = "30 d",
     .help = "a month as a fixed length from the start, e.g. 30 d"},
    {.key = "fixed_fee",
     .type = SCN_QUANTITY,
     .offset = offsetof(grid_tariff, fixed_fee),
     .dim = UNITS_MONEY,
     .min = 0,
     .max = 1e12,
     .dflt = "0 $",
     .help = "per billing period, prorated over the run, e.g. 2000 $"},
    {.key = "energy_adder",
     .type = SCN_QUANTITY,
     .offset = offsetof(grid_tariff, energy_adder),
     .dim = UNITS_PRICE,
     .min = -1e4,
     .max = 1e4,
     .dflt = "0 $/MWh",
     .help = "grid fees per MWh on top of the price, e.g. 30 $/MWh"},
};

static const scn_schema tariff_schema =
    SCN_SCHEMA("tariff", grid_tariff, tariff_fields, .check = check_tariff);

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
    {.key = "tariff",
     .type = SCN_MAP,
     .offset = offsetof(grid_config, tariff),
     .sub = &tariff_schema,
     .help = "demand_charge, demand_interval, billing_period, fixed_fee, "
             "energy_adder"},
    {.key = "outdoor",
     .type = SCN_MAP,
     .offset = offsetof(grid_config, outdoor),
     .sub = &sig_temperature_schema,
     .help = "outdoor temperature: a file, a value or low/high"},
    {.key = "humidity",
     .type = SCN_MAP,
     .offset = offsetof(grid_config, humidity),
     .sub = &sig_humidity_schema,
     .help = "outdoor relative humidity in % (e.g. the weather file's "
             "relative_humidity_2m_pct): evaporative loops follow the wet "
             "bulb"},
    {.key = "dr_events",
     .type = SCN_LIST,
     .offset = offsetof(grid_config, dr),
     .sub = &dr_schema,
     .count_offset = offsetof(grid_config, ndr),
     .help = "demand-response events: [{start, duration, cut or level}]"},
    {.key = "disturbances",
     .type = SCN_LIST,
     .offset = offsetof(grid_config, dist),
     .sub = &dist_event_schema,
     .count_offset = offsetof(grid_config, ndist),
     .flags = SCN_OMIT_EMPTY,
     .help = "voltage sags and frequency excursions at the point of "
             "interconnection: [{kind, start, duration, voltage or "
             "frequency}], in time order"},
    {.key = "dr_file",
     .type = SCN_STRING,
     .offset = offsetof(grid_config, dr_file),
     .flags = SCN_NONEMPTY,
     .help = "an operator's DR targets, a CSV of time_s and target_mw or "
             "cut, added to dr_events"},
    {.key = "dr_window",
     .type = SCN_QUANTITY,
     .offset = offsetof(grid_config, dr_window_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = 86400,
     .help = "the response window: alignment (the share of event periods "
             "at or under target) counts periods from this long after a "
             "cut; default 30 s with dr_file"},
};

static int check_grid(void *obj, const scn_loc *loc, void *user,
                      sim_error *err);

const scn_schema grid_schema =
    SCN_SCHEMA("grid", grid_config, grid_fields, .check = check_grid);

/* The facility's answer to a disturbance depends on the ones before it
 * (disturb.h), so they come in time order. */
static int check_grid(void *obj, const scn_loc *loc, void *user,
                      sim_error *err) {
  (void)user;
  grid_config *c = obj;
  /* Emerald AI's trial with National Grid: cuts within about 30 s. */
  if (c->dr_file != NULL && isnan(c->dr_window_s))
    c->dr_window_s = 30;
  for (size_t i = 1; i < c->ndist; i++)
    if (c->dist[i].start_s < c->dist[i - 1].start_s) {
      char key[48];
      snprintf(key, sizeof key, "disturbances.%zu.start", i);
      return scn_fail(loc, key, err, "list them in time order",
                      "disturbance %zu starts before disturbance %zu", i,
                      i - 1);
    }
  return SIM_OK;
}

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

static int check_tariff(void *obj, const scn_loc *loc, void *user,
                        sim_error *err) {
  (void)user;
  const grid_tariff *t = obj;
  if (fmod(t->billing_period_s, t->demand_interval_s) != 0)
    return scn_fail(loc, "billing_period", err,
                    "e.g. billing_period: 30 d with demand_interval: 15 min",
                    "billing_period must be a whole number of "
                    "demand_intervals");
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
  static const char *const names[] = {"carbon", "price", "outdoor",
                                      "humidity"};
  const sig_config *cfgs[] = {&c->carbon, &c->price, &c->outdoor,
                              &c->humidity};
  sig_series *series[] = {&g->carbon, &g->price, &g->outdoor, &g->humidity};
  memset(g, 0, sizeof *g);
  g->contracted_w = contracted_w;
  g->tariff = &c->tariff;
  g->carbon_basis = c->carbon.basis;
  g->dr = c->dr;
  g->ndr = c->ndr;
  for (int k = 0; k < 4; k++) {
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
  sim_free(NULL, g->dr_own);
  g->dr_own = NULL;
  sig_fini(&g->carbon);
  sig_fini(&g->price);
  sig_fini(&g->outdoor);
  sig_fini(&g->humidity);
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

/* A config not bound through the schema (zeroed) has no demand interval:
 * then no demand is tracked. */
static bool tracks_demand(const grid *g) {
  return g->tariff != NULL && g->tariff->demand_interval_s > 0;
}

static int64_t intervals_per_period(const grid_tariff *t) {
  return (int64_t)llround(t->billing_period_s / t->demand_interval_s);
}

/* Books share x of the open period's demand charge and opens the next. */
static void close_period(const grid *g, grid_books *b, double share) {
  b->demand_cost += share * g->tariff->demand_charge * b->period_peak_w / 1e3;
  b->billed_peak_w = fmax(b->billed_peak_w, b->period_peak_w);
  b->period_peak_w = 0;
}

/* Closes the open interval, whose energy covers len seconds. */
static void close_interval(const grid *g, grid_books *b, double len) {
  b->period_peak_w = fmax(b->period_peak_w, b->dem_j / len);
  b->dem_j = 0;
  b->dem_k++;
  if (b->dem_k % intervals_per_period(g->tariff) == 0)
    close_period(g, b, 1);
}

static void account_demand(const grid *g, double p_w, double t0, double t1,
                           grid_books *b) {
  double len = g->tariff->demand_interval_s;
  double end = (double)(b->dem_k + 1) * len;
  while (t1 >= end) {
    b->dem_j += p_w * (end - t0);
    close_interval(g, b, len);
    t0 = end;
    end = (double)(b->dem_k + 1) * len;
  }
  b->dem_j += p_w * (t1 - t0);
}

void grid_account(const grid *g, double p_w, double t0, double t1,
                  grid_books *b) {
  if (tracks_demand(g))
    account_demand(g, p_w, t0, t1, b);
  b->energy_j += p_w * (t1 - t0);
  b->cost += p_w * sig_integral_next(&g->price, &b->price_run, t0, t1) /
             J_PER_MWH;
  b->co2_kg += p_w * sig_integral_next(&g->carbon, &b->carbon_run, t0, t1) /
               J_PER_MWH;
}

/* A partial last interval averages over what it covers; a partial last
 * period pays its share of the charge, as the fixed fee does. Prorating
 * keeps a week's run comparable with a month's: it pays the charge as if
 * the week repeated for the period. */
void grid_close(const grid *g, double duration_s, grid_books *b,
                grid_bill *bill) {
  const grid_tariff *t = g->tariff;
  memset(bill, 0, sizeof *bill);
  bill->energy = b->cost;
  if (tracks_demand(g)) {
    double len = t->demand_interval_s, covered = duration_s - b->dem_k * len;
    if (covered > 0)
      b->period_peak_w = fmax(b->period_peak_w, b->dem_j / covered);
    double start =
        (double)(b->dem_k / intervals_per_period(t)) * t->billing_period_s;
    double share = (duration_s - start) / t->billing_period_s;
    if (share > 0)
      close_period(g, b, share);
    bill->energy += t->energy_adder * b->energy_j / J_PER_MWH;
    bill->fees = t->fixed_fee * duration_s / t->billing_period_s;
  }
  bill->demand = b->demand_cost;
  bill->peak_w = b->billed_peak_w;
  bill->total = bill->energy + bill->demand + bill->fees;
}

bool grid_has_tariff(const grid *g) {
  const grid_tariff *t = g->tariff;
  return t != NULL &&
         (t->demand_charge > 0 || t->fixed_fee > 0 || t->energy_adder != 0);
}

const char *grid_carbon_basis(const grid *g) {
  return g->carbon.kind == SIG_NONE ? "none" : sig_basis_names[g->carbon_basis];
}
