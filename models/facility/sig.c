/* sig.c - grid signals from CSV files or synthesised, with exact
 * integrals. Their schemas and the checks of a scenario's signals are in
 * sig_scn.c.
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

#include "bits.h"
#include "csv.h"
#include "sig_internal.h"
#include "vec.h"

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
                    .swing = displaced / sig__shape_mean(m),
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

double sig_integral_next(const sig_series *s, sig_run *r, double t0,
                         double t1) {
  double c0 = r->kept && sim_same_bits(r->t, t0) ? r->cum : cum(s, t0);
  double c1 = cum(s, t1);
  *r = (sig_run){.kept = true, .t = t1, .cum = c1};
  return c1 - c0;
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
