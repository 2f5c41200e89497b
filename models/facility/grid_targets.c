/* grid_targets.c - an operator's demand-response targets as a series
 * (grid.h, grid_read_targets): a CSV of time_s and target_mw or cut,
 * turned into the DR events the rest of the model already knows. */
#include "grid.h"

#include <math.h>
#include <string.h>

#include "alloc.h"
#include "csv.h"
#include "vec.h"

/* A DR target file is a few thousand rows at most; 64 MB is a typo. */
#define MAX_FILE_BYTES (64u << 20)

static const csv_range time_range = {0, 366 * 86400.0, "s", "a time"};
static const csv_range mw_range = {0, 1e6, "MW", "a target"};
static const csv_range cut_range = {0, 1, "", "a share"};

typedef struct targets {
  csv_reader r;
  long tcol, vcol;
  bool cut; /* the value column is cut, not target_mw */
  double last_s; /* the latest time read */
  dr_event *ev;
  size_t n, cap;
  size_t rows; /* rows read, past the run's end included */
} targets;

static int read_header(targets *t) {
  char *h[CSV_MAX_FIELDS];
  size_t n;
  int rc = csv_header(&t->r, h, &n, "time_s and target_mw or cut");
  if (rc != SIM_OK)
    return rc;
  t->tcol = csv_column(h, n, "time_s");
  long mw = csv_column(h, n, "target_mw"), cut = csv_column(h, n, "cut");
  if (t->tcol < 0 || (mw < 0) == (cut < 0))
    return csv_fail(&t->r, NULL, NULL,
                    "expected a header naming time_s and one of target_mw "
                    "or cut");
  t->cut = cut >= 0;
  t->vcol = t->cut ? cut : mw;
  return SIM_OK;
}

/* A row's time: rising, on the grain. */
static int read_time(targets *t, char *field, double grain_s, double *out) {
  int rc = csv_number(&t->r, field, "time_s", &time_range, 1, out);
  if (rc != SIM_OK)
    return rc;
  if (*out <= t->last_s)
    return csv_fail(&t->r, field, "time_s", "times must rise");
  t->last_s = *out;
  if (fmod(*out, grain_s) != 0)
    return csv_fail(&t->r, field, "time_s",
                    "%.6g s is not a whole multiple of sample_period %.6g s",
                    *out, grain_s);
  return SIM_OK;
}

/* One row: a step from its time (an empty target: no event, a NaN level
 * dropped once the steps are closed). */
static int read_row(targets *t, char *line, double grain_s, double end_s) {
  char *f[CSV_MAX_FIELDS];
  size_t n = csv_split(line, f);
  long need = t->tcol > t->vcol ? t->tcol : t->vcol;
  if ((long)n <= need)
    return csv_fail(&t->r, NULL, NULL, "expected %ld fields, found %zu",
                    need + 1, n);
  dr_event e = {.cut = NAN, .level_w = NAN};
  int rc = read_time(t, f[t->tcol], grain_s, &e.start_s);
  t->rows++;
  char *v = f[t->vcol];
  v += strspn(v, " ");
  if (rc == SIM_OK && e.start_s >= end_s)
    return SIM_OK; /* past the run (a shortened one): not an event */
  if (rc == SIM_OK && *v != '\0')
    rc = t->cut ? csv_number(&t->r, v, "cut", &cut_range, 1, &e.cut)
                : csv_number(&t->r, v, "target_mw", &mw_range, 1e6,
                             &e.level_w);
  if (rc == SIM_OK &&
      sim_vec_reserve(NULL, &t->ev, &t->cap, t->n + 1, sizeof *t->ev) != 0)
    rc = sim_error_set(t->r.err, SIM_ENOMEM, "out of memory");
  if (rc == SIM_OK)
    t->ev[t->n++] = e;
  return rc;
}

/* Each step lasts to the next; empty ones go; the scenario's events come
 * first. */
static int merge(grid *g, targets *t, double end_s, sim_error *err) {
  dr_event *all = sim_alloc(NULL, (g->ndr + t->n + 1) * sizeof *all);
  if (all == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  size_t k = g->ndr;
  if (g->ndr > 0)
    memcpy(all, g->dr, g->ndr * sizeof *all);
  for (size_t i = 0; i < t->n; i++) {
    dr_event e = t->ev[i];
    e.duration_s = (i + 1 < t->n ? t->ev[i + 1].start_s : end_s) - e.start_s;
    if (!isnan(e.cut) || !isnan(e.level_w))
      all[k++] = e;
  }
  sim_free(NULL, g->dr_own);
  g->dr_own = all;
  g->dr = all;
  g->ndr = k;
  return SIM_OK;
}

int grid_read_targets(grid *g, const char *path, double grain_s,
                      double duration_s, sim_error *err) {
  targets t = {.last_s = -1};
  int rc = csv_open(&t.r, path, MAX_FILE_BYTES, err);
  if (rc != SIM_OK)
    return rc;
  rc = read_header(&t);
  for (char *line; rc == SIM_OK && (line = csv_next_line(&t.r)) != NULL;)
    if (line[strspn(line, " \t")] != '\0')
      rc = read_row(&t, line, grain_s, duration_s);
  if (rc == SIM_OK && t.rows == 0) /* rows all past a shortened run: none */
    rc = csv_fail(&t.r, NULL, NULL, "no targets: expected rows of "
                                    "time_s and a target");
  if (rc == SIM_OK)
    rc = merge(g, &t, duration_s, err);
  sim_free(NULL, t.ev);
  csv_close(&t.r);
  return rc;
}
