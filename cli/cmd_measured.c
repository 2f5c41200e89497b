/* cmd_measured.c - a meter's power series beside a run, for `aifsim
 * calibrate`: the CSV (docs/CALIBRATION.md gives its format), the run's
 * power averaged over each of its rows' intervals through the library,
 * and ASHRAE Guideline 14's error metrics (the analysis package's
 * compare-measured computes the same: analysis/aifsim/measured.py). */
#include "cmd_calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aifsim.h"
#include "csv.h"
#include "sig.h"

/* A meter's file of a year at one-minute rows, with room to spare. */
#define MS_MAX_BYTES ((size_t)64 << 20)

static const struct {
  const char *name;
  double w;
} unit_scale[] = {{"W", 1.0}, {"kW", 1e3}, {"MW", 1e6}};

static const char *const scope_names[] = {"facility", "it", "gpu",
                                          "cooling"};

/* Splits "SCOPE_UNIT" into s's scope and *scale (W per unit). */
static int parse_column(csv_reader *r, char *field, ms_series *s,
                        double *scale) {
  const char *us = strrchr(field, '_');
  *scale = NAN;
  for (size_t i = 0; us != NULL && i < 3; i++)
    if (strcmp(us + 1, unit_scale[i].name) == 0)
      *scale = unit_scale[i].w;
  if (isnan(*scale) || strlen(field) >= sizeof s->column)
    return csv_fail(r, field, NULL, "a power column is named SCOPE_UNIT, "
                    "e.g. facility_kW or rack:hgx-h100_W (unit W, kW or MW)");
  size_t len = (size_t)(us - field);
  strcpy(s->column, field);
  s->scope = -1;
  for (int i = 0; i < 4; i++)
    if (strlen(scope_names[i]) == len && strncmp(field, scope_names[i], len) == 0)
      s->scope = i;
  if (s->scope < 0 && strncmp(field, "rack:", 5) == 0 && len > 5 &&
      len - 5 < sizeof s->group) {
    s->scope = MS_GROUP;
    memcpy(s->group, field + 5, len - 5);
    s->group[len - 5] = '\0';
  }
  return s->scope >= 0 ? SIM_OK
                       : csv_fail(r, field, NULL, "calibrate reads the "
                                  "scopes facility, it, gpu, cooling and "
                                  "rack:GROUP");
}

/* Finds the power column among the header's n fields; its index in *col. */
static int pick_column(csv_reader *r, char **h, size_t n, const char *want,
                       ms_series *s, double *scale, long *col) {
  if (n < 2 || strcmp(h[0], "timestamp") != 0)
    return csv_fail(r, h[0], NULL, "expected a header 'timestamp,"
                    "SCOPE_UNIT[,...]', e.g. timestamp,facility_kW");
  *col = want != NULL ? csv_column(h, n, want) : (n == 2 ? 1 : -1);
  if (*col < 1)
    return csv_fail(r, h[0], NULL, want != NULL
                    ? "no such power column (--column names one)"
                    : "several power columns: name one with --column");
  return parse_column(r, h[*col], s, scale);
}

/* Whether a time's text names its zone: Z or an offset after the clock. */
static bool has_zone(const char *t) {
  const char *clock = strpbrk(t, "T ");
  return clock != NULL && strpbrk(clock, "Z+-") != NULL;
}

static int grow(ms_series *s, size_t *cap) {
  if (s->n < *cap)
    return SIM_OK;
  size_t c = *cap ? *cap * 2 : 256;
  double *t = realloc(s->t, c * sizeof *t);
  if (t != NULL)
    s->t = t;
  double *w = realloc(s->w, c * sizeof *w);
  if (w != NULL)
    s->w = w;
  if (t == NULL || w == NULL)
    return SIM_ENOMEM;
  *cap = c;
  return SIM_OK;
}

/* One data line: its time (UTC seconds) and power (W) appended. */
static int read_row(csv_reader *r, char *line, long col, double scale,
                    ms_series *s, size_t *cap) {
  char *f[CSV_MAX_FIELDS];
  size_t nf = csv_split(line, f);
  double utc, w;
  size_t bad;
  if ((size_t)col >= nf)
    return csv_fail(r, NULL, NULL, "the row has %zu fields; the power "
                    "column is field %ld", nf, col + 1);
  if (sig_parse_time(f[0], &utc, &bad) != 0 || !has_zone(f[0]))
    return csv_fail(r, f[0], "timestamp", "not a time with its zone like "
                    "2026-07-01T00:00:00Z or 2026-07-01 02:00+02:00");
  static const csv_range power = {0, 1e12, "W", "a power"};
  if (csv_number(r, f[col], s->column, &power, scale, &w) != SIM_OK)
    return SIM_EINPUT;
  if (s->n > 0 && utc <= s->t[s->n - 1])
    return csv_fail(r, f[0], "timestamp", "times must increase row by row");
  if (grow(s, cap) != SIM_OK)
    return sim_error_set(r->err, SIM_ENOMEM, "out of memory");
  s->t[s->n] = utc;
  s->w[s->n++] = w;
  return SIM_OK;
}

/* Rows to run seconds with their lengths (the last as long as the one
 * before), keeping those wholly within [0, duration_s]. */
static int keep_within(ms_series *s, double duration_s, sim_error *err,
                       const char *path) {
  size_t total = s->n, k = 0;
  if ((s->len = malloc((total ? total : 1) * sizeof *s->len)) == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  for (size_t i = 0; i < total; i++)
    s->len[i] = i + 1 < total ? s->t[i + 1] - s->t[i] : s->t[i] - s->t[i - 1];
  for (size_t i = 0; i < total; i++) {
    double len = s->len[i], t = s->t[i] - s->start_utc;
    if (t < -1e-6 || t + len > duration_s + 1e-6)
      continue;
    s->t[k] = t;
    s->len[k] = len;
    s->w[k++] = s->w[i];
  }
  s->n = k;
  s->dropped = total - k;
  if (k < 2)
    return sim_error_set(err, SIM_EINPUT,
                         "%s:1:1: %zu of its %zu rows fall within the run "
                         "(from its start for %g s): the series and the "
                         "run do not overlap (check the zone of the times, "
                         "--start, the scenario's duration)",
                         path, k, total, duration_s);
  return SIM_OK;
}

int ms_read(const char *path, const char *column, double start_utc,
            double duration_s, ms_series *s, sim_error *err) {
  csv_reader r;
  char *h[CSV_MAX_FIELDS], *line;
  size_t nh, cap = 0;
  double scale = NAN;
  long col = -1;
  memset(s, 0, sizeof *s);
  int rc = csv_open(&r, path, MS_MAX_BYTES, err);
  if (rc != SIM_OK)
    return rc;
  rc = csv_header(&r, h, &nh, "timestamp,SCOPE_UNIT");
  if (rc == SIM_OK)
    rc = pick_column(&r, h, nh, column, s, &scale, &col);
  while (rc == SIM_OK && (line = csv_next_line(&r)) != NULL)
    if (line[0] != '\0')
      rc = read_row(&r, line, col, scale, s, &cap);
  if (rc == SIM_OK && s->n < 2)
    rc = sim_error_set(err, SIM_EINPUT, "%s:1:1: fewer than two rows of "
                       "power", path);
  csv_close(&r);
  if (rc == SIM_OK) {
    s->start_utc = isnan(start_utc) ? s->t[0] : start_utc;
    rc = keep_within(s, duration_s, err, path);
  }
  if (rc != SIM_OK)
    ms_free(s);
  return rc;
}

void ms_free(ms_series *s) {
  free(s->t);
  free(s->len);
  free(s->w);
  s->t = s->len = s->w = NULL;
  s->n = 0;
}

/* The power the column reads from the run now, W. */
static int read_power(aifsim *a, const ms_series *s, size_t group,
                      double *gw, double *w) {
  aifsim_power p;
  int rc = aifsim_power_now(a, &p);
  if (rc != AIFSIM_OK)
    return rc;
  const double v[] = {p.facility_w, p.it_w, p.gpu_w, p.cooling_w};
  if (s->scope != MS_GROUP) {
    *w = v[s->scope];
    return AIFSIM_OK;
  }
  rc = aifsim_group_power(a, gw, aifsim_ngroups(a));
  *w = gw[group];
  return rc;
}

static int find_group(aifsim *a, const ms_series *s, size_t *g,
                      sim_error *err) {
  for (*g = 0; s->scope == MS_GROUP && *g < aifsim_ngroups(a); ++*g)
    if (strcmp(aifsim_group_name(a, *g), s->group) == 0)
      return SIM_OK;
  return s->scope != MS_GROUP
             ? SIM_OK
             : sim_error_set(err, SIM_EINPUT, "column '%s': the scenario "
                             "has no rack group '%s'", s->column, s->group);
}

/* Steps a control period at a time, adding each period's energy to the
 * rows it overlaps. */
static int bin_run(aifsim *a, const ms_series *s, size_t group, double *sim) {
  double dt = aifsim_period(a), end = aifsim_duration(a), w;
  double *gw = malloc((aifsim_ngroups(a) + 1) * sizeof *gw);
  int rc = gw != NULL ? AIFSIM_OK : AIFSIM_ENOMEM;
  size_t k = 0;
  memset(sim, 0, s->n * sizeof *sim);
  while (rc == AIFSIM_OK && !aifsim_at_end(a) && k < s->n) {
    double t0 = aifsim_time(a), t1 = fmin(t0 + dt, end);
    rc = read_power(a, s, group, gw, &w);
    for (size_t j = k; rc == AIFSIM_OK && j < s->n && s->t[j] < t1; j++) {
      double o = fmin(t1, s->t[j] + s->len[j]) - fmax(t0, s->t[j]);
      if (o > 0)
        sim[j] += w * o;
    }
    while (k < s->n && s->t[k] + s->len[k] <= t1)
      k++;
    if (rc == AIFSIM_OK)
      rc = aifsim_step(a, 1);
  }
  for (size_t j = 0; j < s->n; j++)
    sim[j] /= s->len[j];
  free(gw);
  return rc == AIFSIM_ERANGE ? AIFSIM_OK : rc;
}

int ms_simulate(const char *path, const char *const *sets, size_t nsets,
                const ms_series *s, double *sim, bool *bad_input,
                sim_error *err) {
  aifsim *a = NULL;
  size_t g = 0;
  int rc = aifsim_open(path, sets, nsets, NULL, &a);
  if (rc == AIFSIM_OK)
    rc = find_group(a, s, &g, err) == SIM_OK ? bin_run(a, s, g, sim)
                                              : SIM_EINPUT;
  if (rc != AIFSIM_OK && err->code == SIM_OK)
    sim_error_set(err, rc, "%s", a != NULL ? aifsim_errmsg(a) : "out of memory");
  *bad_input = rc == SIM_EINPUT || (a != NULL && aifsim_bad_input(a));
  aifsim_close(a);
  return rc;
}

static ms_metrics metrics(const double *m, const double *p, size_t n) {
  ms_metrics x = {NAN, NAN, NAN, n};
  if (n < 2)
    return x;
  double sm = 0, se = 0, sb = 0, sa = 0;
  for (size_t i = 0; i < n; i++) {
    double d = m[i] - p[i];
    sm += m[i];
    se += d * d;
    sb += d;
    sa += fabs(d) / fabs(m[i]);
  }
  double mean = sm / (double)n, dof = (double)(n - 1);
  x.cv_rmse = sqrt(se / dof) / mean;
  x.nmbe = sb / (dof * mean);
  x.mape = sa / (double)n;
  return x;
}

/* Rows [a, b) averaged into the UTC clock hours they cover whole: the
 * hours' means into m and p (room for as many as there are), their count
 * returned. */
static size_t hours(const ms_series *s, const double *sim, size_t a, size_t b,
                    double *m, double *p) {
  double h0 = floor((s->start_utc + s->t[a]) / 3600.0);
  size_t nh = (size_t)ceil((s->start_utc + s->t[b - 1] + s->len[b - 1]) /
                           3600.0 - h0) + 1, out = 0;
  double *cov = calloc(nh, sizeof *cov), *em = calloc(nh, sizeof *em),
         *ep = calloc(nh, sizeof *ep);
  for (size_t i = a; cov != NULL && em != NULL && ep != NULL && i < b; i++) {
    double u0 = s->start_utc + s->t[i], u1 = u0 + s->len[i];
    for (double h = floor(u0 / 3600.0); h * 3600.0 < u1; h++) {
      double o = fmin(u1, (h + 1) * 3600.0) - fmax(u0, h * 3600.0);
      size_t k = (size_t)(h - h0);
      cov[k] += o;
      em[k] += s->w[i] * o;
      ep[k] += sim[i] * o;
    }
  }
  for (size_t k = 0; cov != NULL && em != NULL && ep != NULL && k < nh; k++)
    if (cov[k] > 3600.0 - 1e-6) {
      m[out] = em[k] / cov[k];
      p[out++] = ep[k] / cov[k];
    }
  free(cov);
  free(em);
  free(ep);
  return out;
}

ms_metrics ms_metrics_of(const ms_series *s, const double *p, size_t a,
                         size_t b, bool hourly) {
  ms_metrics none = {NAN, NAN, NAN, 0};
  if (b <= a)
    return none;
  if (!hourly)
    return metrics(s->w + a, p + a, b - a);
  double span = s->t[b - 1] + s->len[b - 1] - s->t[a];
  size_t room = (size_t)(span / 3600.0) + 3;
  double *hm = malloc(room * sizeof *hm), *hp = malloc(room * sizeof *hp);
  ms_metrics x = none;
  if (hm != NULL && hp != NULL)
    x = metrics(hm, hp, hours(s, p, a, b, hm, hp));
  free(hm);
  free(hp);
  return x;
}
