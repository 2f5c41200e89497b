/* battery.c - the on-site battery: its schema, feasibility and dispatch. */
#include "battery.h"

#include <assert.h>
#include <math.h>

/* The default power rating is capacity over this duration: NREL's ATB
 * represents utility-scale batteries of 2-10 h and builds its
 * performance figures around a 4 h device (ATB 2020, "Utility-Scale
 * Battery Storage", capacity factor 4/24). */
#define DEFAULT_DURATION_S (4 * 3600.0)

static const char *const mode_names[] = {"none", "peak_shaving",
                                         "dr_ride_through", NULL};

static int check_battery(void *obj, const scn_loc *loc, void *user,
                         sim_error *err);

#define FRACTION(k, field, def, h)                                             \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(bat_config, field),     \
    .dim = UNITS_FRACTION, .min = 0, .max = 1, .dflt = def, .help = h          \
  }

#define POWER(k, field, h)                                                     \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(bat_config, field),     \
    .dim = UNITS_POWER, .min = 0, .max = HUGE_VAL, .help = h                   \
  }

static const scn_field bat_fields[] = {
    {.key = "capacity",
     .type = SCN_QUANTITY,
     .offset = offsetof(bat_config, capacity_j),
     .dim = UNITS_ENERGY,
     .min = 0,
     .max = HUGE_VAL,
     .dflt = "0 J",
     .help = "energy the battery holds when full, e.g. 40 MWh; 0: none"},
    POWER("charge_power", charge_max_w,
          "most it draws to charge, e.g. 10 MW; default capacity / 4 h"),
    POWER("discharge_power", discharge_max_w,
          "most it delivers, e.g. 10 MW; default capacity / 4 h"),
    {.key = "round_trip_efficiency",
     .type = SCN_QUANTITY,
     .offset = offsetof(bat_config, rte),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .flags = SCN_POSITIVE,
     .dflt = "85%",
     .help = "energy out over energy in for a full cycle, e.g. 85%"},
    FRACTION("soc_min", soc_min, "10%", "lowest state of charge, 0-100%"),
    FRACTION("soc_max", soc_max, "90%", "highest state of charge, 0-100%"),
    FRACTION("soc_initial", soc_initial, NULL,
             "state of charge at the start; default soc_max"),
    {.key = "mode",
     .type = SCN_ENUM,
     .offset = offsetof(bat_config, mode),
     .names = mode_names,
     .dflt = "peak_shaving",
     .help = "none, peak_shaving or dr_ride_through"},
    FRACTION("threshold", threshold, "100%",
             "shave the draw above this share of the cap in force"),
    POWER("threshold_power", threshold_w,
          "or above this power (never above the cap), e.g. 18 MW"),
    FRACTION("recharge_margin", recharge_margin, "5%",
             "recharge only while the draw is this share of the cap below "
             "the threshold"),
};

const scn_schema bat_schema =
    SCN_SCHEMA("battery", bat_config, bat_fields, .check = check_battery);

/* Fills the computed defaults, then checks what spans fields. */
static int check_battery(void *obj, const scn_loc *loc, void *user,
                         sim_error *err) {
  (void)user;
  bat_config *c = obj;
  if (isnan(c->charge_max_w))
    c->charge_max_w = c->capacity_j / DEFAULT_DURATION_S;
  if (isnan(c->discharge_max_w))
    c->discharge_max_w = c->capacity_j / DEFAULT_DURATION_S;
  if (c->soc_min > c->soc_max)
    return scn_fail(loc, "soc_min", err, NULL, "'soc_min' is above 'soc_max'");
  if (isnan(c->soc_initial))
    c->soc_initial = c->soc_max;
  if (c->soc_initial < c->soc_min || c->soc_initial > c->soc_max)
    return scn_fail(loc, "soc_initial", err, "between soc_min and soc_max",
                    "'soc_initial' is outside [soc_min, soc_max]");
  if (scn_given(loc, "threshold") && scn_given(loc, "threshold_power"))
    return scn_fail(loc, "threshold_power", err,
                    "e.g. threshold: 95% or threshold_power: 18 MW",
                    "give 'threshold' or 'threshold_power', not both");
  return SIM_OK;
}

void bat_state_init(bat_state *s, const bat_config *c) {
  *s = (bat_state){.stored_j = c->soc_initial * c->capacity_j};
}

double bat_soc(const bat_config *c, const bat_state *s) {
  return c->capacity_j > 0 ? s->stored_j / c->capacity_j : 0;
}

/* The threshold in force: its power, or its share of the cap; never
 * above the cap, so a DR cut lowers it too. */
static double target_w(const bat_config *c, double cap_w) {
  double t = isnan(c->threshold_w) ? c->threshold * cap_w : c->threshold_w;
  return fmin(t, cap_w);
}

/* The power the mode asks for, before feasibility; sets *aim to the
 * target it aims at (INFINITY when it aims at none). */
static double request_w(const bat_config *c, double load_w, double cap_w,
                        bool dr_active, double *aim) {
  double t = target_w(c, cap_w);
  double ceiling = t - c->recharge_margin * cap_w;
  *aim = INFINITY;
  if (c->mode == BAT_NONE)
    return 0;
  bool shave = c->mode == BAT_PEAK_SHAVING || dr_active;
  if (shave)
    *aim = t;
  if (shave && load_w > t)
    return load_w - t;
  bool charge = c->mode == BAT_PEAK_SHAVING || !dr_active;
  if (charge && load_w < ceiling)
    return -(ceiling - load_w);
  return 0;
}

/* Holds a request to the power limits and to what reaches a SoC bound at
 * the interval's end at most. */
static double feasible_w(const bat_config *c, const bat_state *s, double p,
                         double eta, double dt_s) {
  if (p > 0) {
    double room = fmax(s->stored_j - c->soc_min * c->capacity_j, 0);
    return fmin(fmin(p, c->discharge_max_w), room * eta / dt_s);
  }
  if (p < 0) {
    double room = fmax(c->soc_max * c->capacity_j - s->stored_j, 0);
    return -fmin(fmin(-p, c->charge_max_w), room / (eta * dt_s));
  }
  return 0;
}

/* Discharges at p >= 0 for dt. When the draw meets the lower bound, the
 * bound is stored exactly (E - (E - E_min) need not round to E_min). */
static void discharge(const bat_config *c, bat_state *s, double p, double eta,
                      double dt_s) {
  double floor_j = c->soc_min * c->capacity_j;
  double out = p * dt_s, drawn = out / eta;
  if (drawn >= s->stored_j - floor_j) {
    drawn = s->stored_j - floor_j;
    s->stored_j = floor_j;
  } else {
    s->stored_j = fmax(s->stored_j - drawn, floor_j);
  }
  s->discharged_j += out;
  s->loss_j += drawn - out;
}

/* Charges at q >= 0 (from the feed) for dt, storing the upper bound
 * exactly when it is met. */
static void charge(const bat_config *c, bat_state *s, double q, double eta,
                   double dt_s) {
  double ceil_j = c->soc_max * c->capacity_j;
  double in = q * dt_s, gained = in * eta;
  if (gained >= ceil_j - s->stored_j) {
    gained = ceil_j - s->stored_j;
    s->stored_j = ceil_j;
  } else {
    s->stored_j = fmin(s->stored_j + gained, ceil_j);
  }
  s->charged_j += in;
  s->loss_j += in - gained;
}

double bat_step(const bat_config *c, bat_state *s, double load_w, double cap_w,
                bool dr_active, double dt_s, bat_result *out) {
  assert(dt_s > 0 && load_w >= 0);
  double aim, eta = sqrt(c->rte);
  double p = request_w(c, load_w, cap_w, dr_active, &aim);
  p = c->capacity_j > 0 ? feasible_w(c, s, p, eta, dt_s) : 0;
  if (p > 0)
    discharge(c, s, p, eta, dt_s);
  else if (p < 0)
    charge(c, s, -p, eta, dt_s);
  double grid = load_w - p;
  double shortfall = grid > aim ? grid - aim : 0;
  s->shortfall_j += shortfall * dt_s;
  if (out != NULL)
    *out = (bat_result){p, grid, aim, shortfall};
  return p;
}
