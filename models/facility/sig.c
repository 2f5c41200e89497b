/* sig.c - grid signals from CSV files or synthesised, with exact
 * integrals.
 *
 * Files are held as (t_i, v_i) in seconds since the simulated start, with
 * a cumulative integral F_i at every row, so the integral over any
 * interval is two look-ups and two partial segments; a repeating file
 * adds whole periods. Synthetic kinds integrate in closed form. */
#include "sig.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "vec.h"

#define DAY_S 86400.0
#define PI 3.14159265358979323846
/* A year of 5-minute rows with a dozen columns is about 10 MB; 64 MB
 * leaves room for finer series while refusing what is surely not one. */
#define MAX_FILE_BYTES ((size_t)64 << 20)

/* ------------------------------------------------------------------ */
/* Emission factors                                                    */
/* ------------------------------------------------------------------ */

/* kg CO2 per MWh. Coal and gas: the seed table (900, 400). The others lie
 * in the seed's ranges (solar/wind 10-50, nuclear 10-20, hydro 10-30) at
 * the life-cycle medians of IPCC AR5 WG3 Annex III, table A.III.2:
 * utility PV 48, onshore wind 11, nuclear 12, hydro 24. */
const sig_factors sig_seed_factors = {900, 400, 12, 24, 11, 48};

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

DAILY_SCHEMA(carbon, UNITS_CARBON);
DAILY_SCHEMA(price, UNITS_PRICE);
DAILY_SCHEMA(temperature, UNITS_TEMPERATURE);

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

const scn_schema sig_carbon_schema = SCN_SCHEMA(
    "carbon intensity", sig_config, carbon_fields, .check = check_carbon);
const scn_schema sig_price_schema =
    SCN_SCHEMA("price", sig_config, price_fields, .check = check_price);
const scn_schema sig_temperature_schema =
    SCN_SCHEMA("outdoor temperature", sig_config, temperature_fields,
               .check = check_temperature);

/* ------------------------------------------------------------------ */
/* Checks                                                              */
/* ------------------------------------------------------------------ */

static double mix_total(const sig_mix *m) {
  return m->coal + m->gas + m->nuclear + m->hydro + m->wind + m->solar;
}

/* The mean of the daylight shape max(0, sin) over a day. */
static double shape_mean(const sig_mix *m) {
  return (m->sunset_s - m->sunrise_s) / DAY_S * 2 / PI;
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
  if (m->gas + m->solar - m->solar / shape_mean(m) < -1e-12)
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

/* ------------------------------------------------------------------ */
/* Time parsing                                                        */
/* ------------------------------------------------------------------ */

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil). */
static long days_from_civil(long y, long m, long d) {
  y -= m <= 2;
  long era = (y >= 0 ? y : y - 399) / 400;
  long yoe = y - era * 400;
  long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static long days_in_month(long y, long m) {
  static const long days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : days[m - 1];
}

/* Reads exactly n digits at *p into *out; false if they are not there. */
static bool digits(const char **p, int n, long *out) {
  *out = 0;
  for (int i = 0; i < n; i++, (*p)++) {
    if (!isdigit((unsigned char)**p))
      return false;
    *out = *out * 10 + (**p - '0');
  }
  return true;
}

static bool expect(const char **p, char c) {
  if (**p != c)
    return false;
  (*p)++;
  return true;
}

/* "+HH:MM", "-HH:MM", "Z" or nothing, as seconds east of UTC. */
static bool zone(const char **p, double *east_s) {
  long h, m;
  *east_s = 0;
  if (**p == 'Z') {
    (*p)++;
    return true;
  }
  if (**p != '+' && **p != '-')
    return true;
  int sign = **p == '-' ? -1 : 1;
  (*p)++;
  if (!digits(p, 2, &h) || !expect(p, ':') || !digits(p, 2, &m))
    return false;
  *east_s = sign * (double)(h * 3600 + m * 60);
  return true;
}

static bool clock_part(const char **p, double *secs) {
  long hh, mm, ss = 0;
  if (!digits(p, 2, &hh) || !expect(p, ':') || !digits(p, 2, &mm))
    return false;
  double frac = 0;
  if (**p == ':') {
    (*p)++;
    if (!digits(p, 2, &ss))
      return false;
    if (**p == '.') {
      double scale = 0.1;
      for ((*p)++; isdigit((unsigned char)**p); (*p)++, scale /= 10)
        frac += (**p - '0') * scale;
    }
  }
  if (hh > 23 || mm > 59 || ss > 60)
    return false;
  *secs = (double)(hh * 3600 + mm * 60 + ss) + frac;
  return true;
}

int sig_parse_time(const char *text, double *utc_s, size_t *bad_at) {
  const char *p = text;
  long y, mo, d;
  double secs, east;
  bool ok = digits(&p, 4, &y) && expect(&p, '-') && digits(&p, 2, &mo) &&
            expect(&p, '-') && digits(&p, 2, &d) && mo >= 1 && mo <= 12 &&
            d >= 1 && d <= days_in_month(y, mo) &&
            (expect(&p, ' ') || expect(&p, 'T')) && clock_part(&p, &secs) &&
            zone(&p, &east) && *p == '\0';
  if (!ok) {
    if (bad_at != NULL)
      *bad_at = (size_t)(p - text);
    return -1;
  }
  *utc_s = (double)days_from_civil(y, mo, d) * DAY_S + secs - east;
  return 0;
}

/* ------------------------------------------------------------------ */
/* CSV reading                                                         */
/* ------------------------------------------------------------------ */

typedef struct rows {
  const sim_allocator *a;
  double *t, *v;
  size_t n, cap;
} rows;

static int rows_push(rows *r, double t, double v) {
  size_t tcap = r->cap, vcap = r->cap;
  if (sim_vec_reserve(r->a, &r->t, &tcap, r->n + 1, sizeof *r->t) != SIM_OK ||
      sim_vec_reserve(r->a, &r->v, &vcap, r->n + 1, sizeof *r->v) != SIM_OK)
    return SIM_ENOMEM;
  r->cap = tcap;
  r->t[r->n] = t;
  r->v[r->n++] = v;
  return SIM_OK;
}

typedef struct columns {
  long tcol, vcol;
  const char *tname, *vname;
} columns;

static int read_row(csv_reader *c, char *line, const columns *k,
                    const sig_config *g, rows *r) {
  char *f[CSV_MAX_FIELDS];
  size_t n = csv_split(line, f);
  if ((size_t)k->tcol >= n || (size_t)k->vcol >= n)
    return csv_fail(c, NULL, NULL, "%zu fields; the columns need %ld", n,
                    (k->tcol > k->vcol ? k->tcol : k->vcol) + 1);
  double t, v;
  size_t bad;
  if (sig_parse_time(f[k->tcol], &t, &bad) != 0)
    return csv_fail(c, f[k->tcol], k->tname,
                    "not a time like 2023-06-01 00:00 (at character %zu)",
                    bad + 1);
  int rc = csv_number(c, f[k->vcol], k->vname, g->range, g->scale, &v);
  if (rc != SIM_OK)
    return rc;
  t += g->time_offset_s;
  if (r->n > 0 && !(t > r->t[r->n - 1]))
    return csv_fail(c, f[k->tcol], k->tname, "time %s is %s the row before",
                    f[k->tcol],
                    t == r->t[r->n - 1] ? "the same as" : "earlier than");
  if (r->n > 0 && t - r->t[r->n - 1] > g->max_gap_s)
    return csv_fail(c, f[k->tcol], k->tname,
                    "a gap of %.0f s before %s, more than "
                    "max_gap (%.0f s)",
                    t - r->t[r->n - 1], f[k->tcol], g->max_gap_s);
  return rows_push(r, t, v) == SIM_OK
             ? SIM_OK
             : sim_error_set(c->err, SIM_ENOMEM, "out of memory");
}

/* The carbon column of the basis: the one header holding "(LCA)" or
 * "(direct)", as Electricity Maps names them; -1 if none. */
static long basis_column(char **h, size_t n, int basis) {
  const char *tag = basis == SIG_BASIS_DIRECT ? "(direct)" : "(LCA)";
  for (size_t i = 0; i < n; i++)
    if (strstr(h[i], tag) != NULL)
      return (long)i;
  return -1;
}

static int read_header(csv_reader *c, const sig_config *g, columns *k) {
  char *h[CSV_MAX_FIELDS], want[300];
  size_t n;
  bool by_basis = g->value_column == NULL;
  snprintf(want, sizeof want, "%s (time) and %s%s%s (value)", g->time_column,
           by_basis ? "one with '" : "",
           by_basis ? (g->basis == SIG_BASIS_DIRECT ? "(direct)" : "(LCA)")
                    : g->value_column,
           by_basis ? "'" : "");
  int rc = csv_header(c, h, &n, want);
  if (rc != SIM_OK)
    return rc;
  k->tcol = csv_column(h, n, g->time_column);
  k->vcol = by_basis ? basis_column(h, n, g->basis)
                     : csv_column(h, n, g->value_column);
  k->tname = g->time_column;
  k->vname = g->value_column;
  if (k->tcol < 0)
    return csv_fail(c, NULL, g->time_column, "no such column in the header");
  if (k->vcol < 0 && by_basis)
    return csv_fail(c, NULL, NULL,
                    "no %s column (a header with '%s'); name it with "
                    "value_column and give its basis",
                    sig_basis_names[g->basis],
                    g->basis == SIG_BASIS_DIRECT ? "(direct)" : "(LCA)");
  if (k->vcol < 0)
    return csv_fail(c, NULL, g->value_column, "no such column in the header");
  k->tname = h[k->tcol];
  k->vname = h[k->vcol];
  return SIM_OK;
}

static int read_rows(csv_reader *c, const sig_config *g, rows *r) {
  columns k = {0, 0, NULL, NULL};
  int rc = read_header(c, g, &k);
  char *line;
  while (rc == SIM_OK && (line = csv_next_line(c)) != NULL)
    if (*line != '\0')
      rc = read_row(c, line, &k, g, r);
  if (rc == SIM_OK && r->n < 2)
    return csv_fail(c, NULL, NULL, "%zu data rows; a signal needs 2 or more",
                    r->n);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Building signals                                                    */
/* ------------------------------------------------------------------ */

/* Cumulative integral at every row, in s->v's units x seconds; stored in
 * a block after the values so one free releases both. */
static double *cumulative(const sig_series *s) { return s->v + s->n; }

static void build_cumulative(sig_series *s) {
  double *F = cumulative(s);
  F[0] = 0;
  for (size_t i = 1; i < s->n; i++) {
    double dt = s->t[i] - s->t[i - 1];
    double mean = s->linear ? 0.5 * (s->v[i] + s->v[i - 1]) : s->v[i - 1];
    F[i] = F[i - 1] + mean * dt;
  }
}

static int align_start(sig_series *s, const sig_config *g, const char *path,
                       sim_error *err) {
  double t0 = s->t[0];
  if (g->start != NULL) {
    size_t bad;
    if (sig_parse_time(g->start, &t0, &bad) != 0)
      return sim_error_set(err, SIM_EINPUT,
                           "%s: start '%s' is not a time like "
                           "'2023-06-01 00:00'",
                           path, g->start);
    /* SIM_ERANGE: the scenario's start is at fault, not the file, and the
     * scenario loader reports it at grid.<signal>.start. */
    if (t0 < s->t[0] || t0 > s->t[s->n - 1])
      return sim_error_set(err, SIM_ERANGE,
                           "%s: start '%s' is outside the file's times", path,
                           g->start);
  }
  for (size_t i = 0; i < s->n; i++)
    s->t[i] -= t0;
  return SIM_OK;
}

static int init_file(sig_series *s, const sig_config *g, const char *base_dir,
                     const sim_allocator *a, sim_error *err) {
  char path[4096];
  if (base_dir == NULL || base_dir[0] == '\0' || g->file[0] == '/')
    snprintf(path, sizeof path, "%s", g->file);
  else
    snprintf(path, sizeof path, "%s%s%s", base_dir,
             strcmp(base_dir, "/") == 0 ? "" : "/", g->file);
  csv_reader c;
  int rc = csv_open(&c, path, MAX_FILE_BYTES, err);
  if (rc != SIM_OK)
    return rc;
  rows r = {.a = a};
  rc = read_rows(&c, g, &r);
  csv_close(&c);
  double *v = rc == SIM_OK ? sim_resize(a, r.v, 2 * r.n * sizeof *v) : NULL;
  if (rc == SIM_OK && v == NULL)
    rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
  if (rc != SIM_OK) {
    sim_free(a, r.t);
    sim_free(a, v != NULL ? v : r.v);
    return rc;
  }
  *s = (sig_series){.alloc = a,
                    .kind = SIG_FILE,
                    .t = r.t,
                    .v = v,
                    .n = r.n,
                    .linear = g->interpolation == 1};
  build_cumulative(s);
  /* One more step after the last row makes a repeating file periodic. */
  if (g->repeat)
    s->period = (s->t[s->n - 1] - s->t[0]) + (s->t[s->n - 1] - s->t[s->n - 2]);
  return align_start(s, g, path, err);
}

static int init_daily(sig_series *s, const sig_config *g,
                      const sim_allocator *a, sim_error *err) {
  size_t n = g->ndaily;
  *s = (sig_series){.alloc = a, .kind = SIG_DAILY, .n = n, .period = DAY_S};
  s->t = sim_alloc(a, n * sizeof *s->t);
  s->v = sim_alloc(a, 2 * n * sizeof *s->v);
  if (s->t == NULL || s->v == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    s->t[i] = g->daily[i].from_s;
    s->v[i] = g->daily[i].value;
  }
  build_cumulative(s);
  return SIM_OK;
}

static void init_mix(sig_series *s, const sig_mix *m) {
  const sig_factors *f = &sig_seed_factors;
  double mean = m->coal * f->coal + m->gas * f->gas + m->nuclear * f->nuclear +
                m->hydro * f->hydro + m->wind * f->wind + m->solar * f->solar;
  double displaced = m->solar * (f->solar - f->gas);
  /* I(t) = mean + displaced (shape(t) / mean_shape - 1). */
  *s = (sig_series){.kind = SIG_MIX,
                    .flat = mean - displaced,
                    .swing = displaced / shape_mean(m),
                    .rise_s = m->sunrise_s,
                    .set_s = m->sunset_s};
}

int sig_init(sig_series *s, const sig_config *c, const char *base_dir,
             const sim_allocator *alloc, sim_error *err) {
  *s = (sig_series){.alloc = alloc};
  int rc = SIM_OK;
  if (c->file != NULL)
    rc = init_file(s, c, base_dir, alloc, err);
  else if (c->ndaily > 0)
    rc = init_daily(s, c, alloc, err);
  if (rc != SIM_OK)
    sig_fini(s);
  if (c->file != NULL || c->ndaily > 0)
    return rc;
  if (c->has_mix)
    init_mix(s, &c->mix);
  else if (c->diurnal)
    *s = (sig_series){.kind = SIG_DIURNAL,
                      .low = c->low,
                      .high = c->high,
                      .peak_s = c->peak_s};
  else if (!isnan(c->value))
    *s = (sig_series){.kind = SIG_CONSTANT, .value = c->value};
  return SIM_OK;
}

void sig_fini(sig_series *s) {
  sim_free(s->alloc, s->t);
  sim_free(s->alloc, s->v);
  memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------ */
/* Evaluation                                                          */
/* ------------------------------------------------------------------ */

/* The last row i with t[i] <= x (0 when x is before the first). */
static size_t row_at(const sig_series *s, double x) {
  size_t lo = 0, hi = s->n;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->t[mid] <= x)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* x folded into the table's range, and the whole periods folded away. */
static double fold(const sig_series *s, double x, double *periods) {
  *periods = 0;
  if (s->period > 0) {
    double base = s->kind == SIG_DAILY ? 0 : s->t[0];
    *periods = floor((x - base) / s->period);
    x -= *periods * s->period;
  }
  return x;
}

static double table_at(const sig_series *s, double x) {
  double periods;
  x = fold(s, x, &periods);
  size_t i = row_at(s, x);
  if (!s->linear || i + 1 >= s->n || x <= s->t[i])
    return s->v[i];
  double w = (x - s->t[i]) / (s->t[i + 1] - s->t[i]);
  return s->v[i] + w * (s->v[i + 1] - s->v[i]);
}

/* The integral from the table's start to x. Past the last row the last
 * value holds (step) or stays (linear). */
static double table_cum(const sig_series *s, double x) {
  double periods;
  x = fold(s, x, &periods);
  const double *F = cumulative(s);
  double total = F[s->n - 1];
  if (s->period > 0) /* the tail from the last row to the period's end */
    total += s->v[s->n - 1] * (s->period - (s->t[s->n - 1] - s->t[0]));
  size_t i = row_at(s, x);
  double dx = x - s->t[i];
  double part = s->v[i] * dx;
  if (s->linear && i + 1 < s->n && dx > 0)
    part += 0.5 * dx * dx * (s->v[i + 1] - s->v[i]) / (s->t[i + 1] - s->t[i]);
  return periods * total + F[i] + part;
}

static double diurnal_at(const sig_series *s, double t) {
  double mid = 0.5 * (s->low + s->high), amp = 0.5 * (s->high - s->low);
  return mid + amp * cos(2 * PI * (t - s->peak_s) / DAY_S);
}

static double diurnal_cum(const sig_series *s, double t) {
  double mid = 0.5 * (s->low + s->high), amp = 0.5 * (s->high - s->low);
  return mid * t + amp * DAY_S / (2 * PI) *
                       (sin(2 * PI * (t - s->peak_s) / DAY_S) -
                        sin(2 * PI * (-s->peak_s) / DAY_S));
}

static double daylight(const sig_series *s, double t) {
  double h = t - DAY_S * floor(t / DAY_S);
  if (h <= s->rise_s || h >= s->set_s)
    return 0;
  return sin(PI * (h - s->rise_s) / (s->set_s - s->rise_s));
}

/* The integral of the daylight shape from 0 to t. */
static double daylight_cum(const sig_series *s, double t) {
  double len = s->set_s - s->rise_s, day = 2 * len / PI;
  double days = floor(t / DAY_S), h = t - days * DAY_S;
  double part = 0;
  if (h >= s->set_s)
    part = day;
  else if (h > s->rise_s)
    part = len / PI * (1 - cos(PI * (h - s->rise_s) / len));
  return days * day + part;
}

double sig_at(const sig_series *s, double t) {
  switch (s->kind) {
  case SIG_CONSTANT:
    return s->value;
  case SIG_FILE:
  case SIG_DAILY:
    return table_at(s, t);
  case SIG_DIURNAL:
    return diurnal_at(s, t);
  case SIG_MIX:
    return s->flat + s->swing * daylight(s, t);
  default:
    return 0;
  }
}

static double cum(const sig_series *s, double t) {
  switch (s->kind) {
  case SIG_CONSTANT:
    return s->value * t;
  case SIG_FILE:
  case SIG_DAILY:
    return table_cum(s, t);
  case SIG_DIURNAL:
    return diurnal_cum(s, t);
  case SIG_MIX:
    return s->flat * t + s->swing * daylight_cum(s, t);
  default:
    return 0;
  }
}

double sig_integral(const sig_series *s, double t0, double t1) {
  return cum(s, t1) - cum(s, t0);
}

double sig_end(const sig_series *s) {
  if (s->kind != SIG_FILE || s->period > 0)
    return INFINITY;
  double last = s->t[s->n - 1];
  /* A step signal's last row holds for one more step. */
  return s->linear ? last : last + (last - s->t[s->n - 2]);
}

bool sig_covers(const sig_series *s, double t0, double t1) {
  return s->kind != SIG_FILE || s->period > 0 ||
         (s->t[0] <= t0 && t1 <= sig_end(s));
}

/* The largest of the table's values at rows strictly inside (a, b), both
 * folded into one period, and -INFINITY if none. */
static double rows_max(const sig_series *s, double a, double b) {
  double m = -INFINITY;
  size_t i = row_at(s, a);
  if (s->t[i] <= a)
    i++;
  for (; i < s->n && s->t[i] < b; i++)
    m = fmax(m, s->v[i]);
  return m;
}

/* The table's maximum over [t0, t1]: the ends, and every row between
 * them (a step or a linear segment peaks at a row or an end). */
static double table_max(const sig_series *s, double t0, double t1) {
  double m = fmax(table_at(s, t0), table_at(s, t1));
  if (s->period > 0 && t1 - t0 >= s->period)
    return rows_max(s, -INFINITY, INFINITY) > m
               ? rows_max(s, -INFINITY, INFINITY)
               : m;
  double periods0, periods1;
  double a = fold(s, t0, &periods0), b = fold(s, t1, &periods1);
  if (periods1 > periods0) /* the interval wraps: two pieces */
    return fmax(m, fmax(rows_max(s, a, INFINITY), rows_max(s, -INFINITY, b)));
  return fmax(m, rows_max(s, a, b));
}

/* Whether time of day h (seconds) falls in [t0, t1] on any day. */
static bool hits_time_of_day(double h, double t0, double t1) {
  double first = h + DAY_S * ceil((t0 - h) / DAY_S);
  return first <= t1;
}

double sig_max(const sig_series *s, double t0, double t1) {
  double m = fmax(sig_at(s, t0), sig_at(s, t1));
  switch (s->kind) {
  case SIG_FILE:
  case SIG_DAILY:
    return table_max(s, t0, t1);
  case SIG_DIURNAL:
    return hits_time_of_day(s->peak_s, t0, t1) ? s->high : m;
  case SIG_MIX: {
    double noon = 0.5 * (s->rise_s + s->set_s);
    return hits_time_of_day(noon, t0, t1) ? fmax(m, sig_at(s, noon)) : m;
  }
  default:
    return m;
  }
}
