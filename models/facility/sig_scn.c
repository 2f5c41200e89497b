/* sig_scn.c - the scenario side of grid signals (sig.h): the physical
 * ranges of their values, the schemas of the price, temperature and
 * carbon signals and of a generation mix, and their checks (one way to
 * give a signal, its values in range, a daily schedule in order, a
 * start the time parser reads). */
#include "sig.h"

#include <math.h>
#include <stdio.h>

#include "sig_internal.h"

/* ------------------------------------------------------------------ */
/* Physical ranges                                                     */
/* ------------------------------------------------------------------ */

/* What a file's values (after scale) and a scenario's values may be: wide
 * enough for any real grid, narrow enough to stop a typo or a unit slip.
 *
 * Carbon, g/kWh: a grid cannot emit less than nothing, nor more per kWh
 * than its dirtiest plant. Lignite, the dirtiest, emits about 1,100-1,200
 * g/kWh at the stack and little more over its life cycle (IPCC AR5 WG3
 * Annex III, table A.III.2: coal 740-910 life-cycle); 2,000 leaves room.
 *
 * Price, $/MWh: prices go negative when renewables must run, but markets
 * bound them. ERCOT's offer cap is 5,000 $/MWh; Europe's day-ahead
 * coupling (SDAC) clears within -500..4,000 EUR/MWh, its cap since raised
 * to 5,000; Australia's NEM, the widest, within -1,000..17,500 AUD/MWh
 * (2024-25). -1,000..20,000 holds them all.
 *
 * Temperature, degC: the coldest and hottest air ever measured at the
 * ground are -89.2 (Vostok, 1983) and 56.7 (Death Valley, 1913, WMO);
 * -90..60 holds every site on Earth. */
const csv_range sig_carbon_range = {0, 2000, "g/kWh",
                                    "the range of a grid's carbon intensity"};
const csv_range sig_price_range = {-1000, 20000, "$/MWh",
                                   "the range of a market price"};
const csv_range sig_temperature_range = {-90, 60, "degC",
                                         "the range of an outdoor temperature"};
/* Relative humidity, %: 0-100 by definition. */
const csv_range sig_humidity_range = {0, 100, "%",
                                      "the range of a relative humidity"};

/* ------------------------------------------------------------------ */
/* Schemas                                                             */
/* ------------------------------------------------------------------ */

static const char *const interp_names[] = {"step", "linear", NULL};

#define DAILY_SCHEMA(ident, d)                                                 \
  static const scn_field ident##_daily_fields[] = {                            \
      {.key = "from",                                                          \
       .type = SCN_QUANTITY,                                                   \
       .offset = offsetof(sig_daily_step, from_s),                             \
       .dim = UNITS_TIME,                                                      \
       .min = 0,                                                               \
       .max = DAY_S,                                                           \
       .flags = SCN_REQUIRED,                                                  \
       .help = "time of day the value starts, e.g. 17 h"},                     \
      {.key = "value",                                                         \
       .type = SCN_QUANTITY,                                                   \
       .offset = offsetof(sig_daily_step, value),                              \
       .dim = d,                                                               \
       .flags = SCN_REQUIRED,                                                  \
       .help = "the value from then on"},                                      \
  };                                                                           \
  static const scn_schema ident##_daily_schema = SCN_SCHEMA(                   \
      "daily step", sig_daily_step, ident##_daily_fields, .check = NULL)

#define FIELD(k, t, member, ...)                                               \
  { .key = k, .type = t, .offset = offsetof(sig_config, member), __VA_ARGS__ }

/* The fields every signal shares; d is the dimension of its values and
 * vcol the value column's default (NULL: none, the carbon basis picks). */
#define SIGNAL_FIELDS(ident, d, vcol)                                          \
  FIELD("file", SCN_STRING, file,                                              \
        .help = "a CSV file (relative to the scenario) with a time and a "     \
                "value column"),                                               \
      FIELD("time_column", SCN_STRING, time_column, .dflt = "#1",              \
            .help = "header name of the time column, or #N"),                  \
      FIELD("value_column", SCN_STRING, value_column, .dflt = vcol,            \
            .help = "header name of the value column, or #N"),                 \
      FIELD("time_offset", SCN_QUANTITY, time_offset_s, .dim = UNITS_TIME,     \
            .min = -86400, .max = 86400, .dflt = "0 s",                        \
            .help = "added to the file's times to make them UTC, e.g. -1 h "   \
                    "for times in UTC+1"),                                     \
      FIELD("start", SCN_STRING, start,                                        \
            .help = "UTC time the run starts at, e.g. '2023-06-01 00:00'; "    \
                    "default: the file's first row"),                          \
      FIELD("interpolation", SCN_ENUM, interpolation, .names = interp_names,   \
            .dflt = "step", .help = "step (hold each row) or linear"),         \
      FIELD("max_gap", SCN_QUANTITY, max_gap_s, .dim = UNITS_TIME,             \
            .flags = SCN_POSITIVE, .dflt = "2 h",                              \
            .help = "a larger gap between rows is an error"),                  \
      FIELD("repeat", SCN_BOOL, repeat, .dflt = "false",                       \
            .help = "wrap around past the file's end"),                        \
      FIELD("scale", SCN_QUANTITY, scale, .dim = UNITS_NUMBER, .dflt = "1",    \
            .help = "multiplies the file's values (e.g. 1.07764 EUR->USD)"),   \
      FIELD("value", SCN_QUANTITY, value, .dim = d,                            \
            .help = "a constant value"),                                       \
      FIELD("daily", SCN_LIST, daily, .sub = &ident##_daily_schema,            \
            .count_offset = offsetof(sig_config, ndaily),                      \
            .help = "a daily schedule: [{from: 0 h, value: ...}, ...]"),       \
      FIELD("low", SCN_QUANTITY, low, .dim = d,                                \
            .help = "diurnal: the daily minimum"),                             \
      FIELD("high", SCN_QUANTITY, high, .dim = d,                              \
            .help = "diurnal: the daily maximum"),                             \
      FIELD("peak_at", SCN_QUANTITY, peak_s, .dim = UNITS_TIME, .min = 0,      \
            .max = DAY_S, .dflt = "15 h", .help = "diurnal: time of the peak")

static int check_price(void *obj, const scn_loc *loc, void *user,
                       sim_error *err);
static int check_temperature(void *obj, const scn_loc *loc, void *user,
                             sim_error *err);
static int check_humidity(void *obj, const scn_loc *loc, void *user,
                          sim_error *err);

DAILY_SCHEMA(carbon, UNITS_CARBON);
DAILY_SCHEMA(price, UNITS_PRICE);
DAILY_SCHEMA(temperature, UNITS_TEMPERATURE);
DAILY_SCHEMA(humidity, UNITS_NUMBER);

#define SHARE(k, member)                                                       \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(sig_mix, member),       \
    .dim = UNITS_FRACTION, .min = 0, .max = 1, .dflt = "0%",                   \
    .help = "share of generation, e.g. 20%"                                    \
  }

static int check_mix(void *obj, const scn_loc *loc, void *user, sim_error *err);

static const scn_field mix_fields[] = {
    SHARE("coal", coal),
    SHARE("gas", gas),
    SHARE("nuclear", nuclear),
    SHARE("hydro", hydro),
    SHARE("wind", wind),
    SHARE("solar", solar),
    {.key = "sunrise",
     .type = SCN_QUANTITY,
     .offset = offsetof(sig_mix, sunrise_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = DAY_S,
     .dflt = "6 h",
     .help = "time of day solar starts"},
    {.key = "sunset",
     .type = SCN_QUANTITY,
     .offset = offsetof(sig_mix, sunset_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = DAY_S,
     .dflt = "18 h",
     .help = "time of day solar ends"},
};

static const scn_schema mix_schema =
    SCN_SCHEMA("generation mix", sig_mix, mix_fields, .check = check_mix);

const char *const sig_basis_names[] = {"lifecycle", "direct", NULL};

static int check_carbon(void *obj, const scn_loc *loc, void *user,
                        sim_error *err);

static const scn_field carbon_fields[] = {
    SIGNAL_FIELDS(carbon, UNITS_CARBON, NULL),
    FIELD("basis", SCN_ENUM, basis, .names = sig_basis_names,
          .dflt = "lifecycle",
          .help = "lifecycle (a file's '(LCA)' column) or direct (its "
                  "'(direct)' column); required with value_column"),
    FIELD("mix", SCN_MAP, mix, .sub = &mix_schema,
          .help = "a generation mix: coal, gas, nuclear, hydro, wind, solar "
                  "shares; solar follows daylight"),
};
static const scn_field price_fields[] = {
    SIGNAL_FIELDS(price, UNITS_PRICE, "#2")};
static const scn_field temperature_fields[] = {
    SIGNAL_FIELDS(temperature, UNITS_TEMPERATURE, "#2")};
static const scn_field humidity_fields[] = {
    SIGNAL_FIELDS(humidity, UNITS_NUMBER, "#2")};

const scn_schema sig_carbon_schema = SCN_SCHEMA(
    "carbon intensity", sig_config, carbon_fields, .check = check_carbon);
const scn_schema sig_price_schema =
    SCN_SCHEMA("price", sig_config, price_fields, .check = check_price);
const scn_schema sig_temperature_schema =
    SCN_SCHEMA("outdoor temperature", sig_config, temperature_fields,
               .check = check_temperature);
const scn_schema sig_humidity_schema =
    SCN_SCHEMA("relative humidity", sig_config, humidity_fields,
               .check = check_humidity);

/* ------------------------------------------------------------------ */
/* Checks                                                              */
/* ------------------------------------------------------------------ */

static double mix_total(const sig_mix *m) {
  return m->coal + m->gas + m->nuclear + m->hydro + m->wind + m->solar;
}

static int check_mix(void *obj, const scn_loc *loc, void *user,
                     sim_error *err) {
  (void)user;
  sig_mix *m = obj;
  if (mix_total(m) == 0)
    return SIM_OK; /* no mix: every share 0, as written or by default */
  if (fabs(mix_total(m) - 1) > 1e-9)
    return scn_fail(loc, NULL, err, "the shares must add up to 100%",
                    "the mix adds up to %.6g%%", 100 * mix_total(m));
  if (!(m->sunrise_s < m->sunset_s))
    return scn_fail(loc, "sunset", err, NULL, "sunset must follow sunrise");
  /* Gas is the marginal fuel that solar displaces: at solar noon its share
   * must not go below zero. */
  if (m->gas + m->solar - m->solar / sig__shape_mean(m) < -1e-12)
    return scn_fail(loc, "gas", err,
                    "raise gas or lower solar: gas absorbs solar's swing",
                    "at solar noon solar would displace more than the gas "
                    "share");
  return SIM_OK;
}

static int ways_given(const sig_config *c) {
  return (c->file != NULL) + !isnan(c->value) + (c->ndaily > 0) + c->diurnal +
         c->has_mix;
}

static int check_daily(const sig_config *c, const scn_loc *loc,
                       sim_error *err) {
  if (c->daily[0].from_s != 0)
    return scn_fail(loc, "daily", err, "e.g. daily: [{from: 0 h, value: ..}]",
                    "the daily schedule must start at 0 h");
  for (size_t i = 1; i < c->ndaily; i++)
    if (!(c->daily[i].from_s > c->daily[i - 1].from_s)) {
      char where[64];
      snprintf(where, sizeof where, "daily.%zu.from", i);
      return scn_fail(loc, where, err, NULL,
                      "daily step %zu does not come after step %zu", i + 1, i);
    }
  return SIM_OK;
}

static int out_of_range(const scn_loc *loc, const char *key, double v,
                        const csv_range *r, sim_error *err) {
  return scn_fail(loc, key, err, NULL, "%g %s is outside %g..%g %s, %s", v,
                  r->unit, r->min, r->max, r->unit, r->what);
}

static bool outside(const csv_range *r, double v) {
  return !isnan(v) && !(v >= r->min && v <= r->max);
}

/* The scenario's own values lie in the signal's range, as a file's do. */
static int check_values(const sig_config *c, const scn_loc *loc,
                        sim_error *err) {
  const csv_range *r = c->range;
  if (outside(r, c->value))
    return out_of_range(loc, "value", c->value, r, err);
  if (outside(r, c->low))
    return out_of_range(loc, "low", c->low, r, err);
  if (outside(r, c->high))
    return out_of_range(loc, "high", c->high, r, err);
  for (size_t i = 0; i < c->ndaily; i++)
    if (outside(r, c->daily[i].value)) {
      char where[64];
      snprintf(where, sizeof where, "daily.%zu.value", i);
      return out_of_range(loc, where, c->daily[i].value, r, err);
    }
  return SIM_OK;
}

/* A malformed start is the scenario's error, at its line and column; the
 * file is read only later, when the factory is built. */
static int check_start(const sig_config *c, const scn_loc *loc,
                       sim_error *err) {
  double t;
  size_t bad;
  if (c->start == NULL || sig_parse_time(c->start, &t, &bad) == 0)
    return SIM_OK;
  return scn_fail(loc, "start", err, "e.g. start: '2023-06-01 00:00'",
                  "'%s' is not a time YYYY-MM-DD HH:MM[:SS] (UTC)", c->start);
}

/* What every signal checks; range is the one of its values. */
static int check_signal(sig_config *c, const scn_loc *loc,
                        const csv_range *range, sim_error *err) {
  c->range = range;
  c->diurnal = !isnan(c->low) || !isnan(c->high);
  c->has_mix = mix_total(&c->mix) > 0;
  if (c->diurnal && (isnan(c->low) || isnan(c->high) || c->low > c->high))
    return scn_fail(loc, isnan(c->low) ? "high" : "low", err,
                    "diurnal: give both, low <= high",
                    "a diurnal signal needs 'low' and 'high', low <= high");
  if (ways_given(c) > 1)
    return scn_fail(loc, NULL, err,
                    "give one of: file, value, daily, low/high, mix",
                    "the %s is given in more than one way",
                    c->has_mix ? "carbon intensity" : "signal");
  int rc = check_values(c, loc, err);
  if (rc == SIM_OK)
    rc = check_start(c, loc, err);
  return rc == SIM_OK && c->ndaily > 0 ? check_daily(c, loc, err) : rc;
}

static int check_price(void *obj, const scn_loc *loc, void *user,
                       sim_error *err) {
  (void)user;
  return check_signal(obj, loc, &sig_price_range, err);
}

static int check_temperature(void *obj, const scn_loc *loc, void *user,
                             sim_error *err) {
  (void)user;
  return check_signal(obj, loc, &sig_temperature_range, err);
}

static int check_humidity(void *obj, const scn_loc *loc, void *user,
                          sim_error *err) {
  (void)user;
  return check_signal(obj, loc, &sig_humidity_range, err);
}

/* A column named by hand says nothing of its basis, so the scenario must;
 * the mix's factors are life-cycle (IPCC AR5 medians), never direct. */
static int check_carbon(void *obj, const scn_loc *loc, void *user,
                        sim_error *err) {
  (void)user;
  int rc = check_signal(obj, loc, &sig_carbon_range, err);
  const sig_config *c = obj;
  if (rc != SIM_OK)
    return rc;
  if (c->file != NULL && c->value_column != NULL && !scn_given(loc, "basis"))
    return scn_fail(loc, "value_column", err,
                    "add basis: lifecycle or basis: direct",
                    "a carbon column named by hand needs its basis");
  if (c->has_mix && c->basis != SIG_BASIS_LIFECYCLE)
    return scn_fail(loc, "basis", err, "drop basis, or give a file or value",
                    "the mix's emission factors are life-cycle ones");
  return SIM_OK;
}
