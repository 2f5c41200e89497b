/* sweep_summary.c - a sweep's summary (sweep.h): one row a point, its
 * axes' values and every /summary metric of its run file, written as
 * summary.h5 and summary.csv, rebuilt from the directory in point order
 * so every way of running the points gives the same bytes. */
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5read.h"
#include "sweep_internal.h"
#include "tel.h"
#include "units.h"

typedef struct table {
  size_t n; /* rows: one per point */
  int64_t *point;
  const char **status;
  char **error;    /* owned; NULL when none */
  char **names;    /* metric names, sorted by strcmp */
  double **metric; /* [nnames][n], NaN where a row has none */
  char **units;    /* [nnames]: as the first run declaring it said; NULL */
  size_t nnames;
  size_t failed, missing;
} table;

static void table_fini(table *t) {
  for (size_t i = 0; t->error != NULL && i < t->n; i++)
    free(t->error[i]);
  for (size_t i = 0; i < t->nnames; i++) {
    free(t->names[i]);
    free(t->metric[i]);
    free(t->units[i]);
  }
  free(t->units);
  free(t->point);
  free(t->status);
  free(t->error);
  free(t->names);
  free(t->metric);
}

static int table_init(table *t, size_t n, sim_error *err) {
  memset(t, 0, sizeof *t);
  t->n = n;
  t->point = calloc(n, sizeof *t->point);
  t->status = calloc(n, sizeof *t->status);
  t->error = calloc(n, sizeof *t->error);
  return t->point && t->status && t->error ? SIM_OK : sweep__no_memory(err);
}

/* Room for one more metric column in t's arrays. */
static int grow_columns(table *t) {
  char **names = realloc(t->names, (t->nnames + 1) * sizeof *names);
  if (names != NULL)
    t->names = names;
  double **cols = realloc(t->metric, (t->nnames + 1) * sizeof *cols);
  if (cols != NULL)
    t->metric = cols;
  char **units = realloc(t->units, (t->nnames + 1) * sizeof *units);
  if (units != NULL)
    t->units = units;
  return names != NULL && cols != NULL && units != NULL ? 0 : -1;
}

/* The index of metric name's column; a new one goes in its sorted place,
 * NaN, without units. SIZE_MAX when out of memory. */
static size_t metric_column(table *t, const char *name) {
  size_t i = 0;
  while (i < t->nnames && strcmp(t->names[i], name) < 0)
    i++;
  if (i < t->nnames && strcmp(t->names[i], name) == 0)
    return i;
  char *copy = grow_columns(t) == 0 ? strdup(name) : NULL;
  double *col = copy != NULL ? malloc(t->n * sizeof *col) : NULL;
  if (col == NULL) {
    free(copy);
    return SIZE_MAX;
  }
  for (size_t r = 0; r < t->n; r++)
    col[r] = NAN;
  size_t tail = t->nnames - i;
  memmove(t->names + i + 1, t->names + i, tail * sizeof *t->names);
  memmove(t->metric + i + 1, t->metric + i, tail * sizeof *t->metric);
  memmove(t->units + i + 1, t->units + i, tail * sizeof *t->units);
  t->names[i] = copy;
  t->metric[i] = col;
  t->units[i] = NULL;
  t->nnames++;
  return i;
}

/* Row p's metrics, and each column's units from the first run that
 * declares them (/summary's units attribute). */
static int put_metrics(table *t, size_t p, const h5r_run *run, sim_error *err) {
  char units[64];
  for (size_t m = 0; m < run->nmetrics; m++) {
    size_t i = metric_column(t, run->names[m]);
    if (i == SIZE_MAX)
      return sweep__no_memory(err);
    t->metric[i][p] = run->values[m];
    const char *u =
        tel_metric_lookup(run->units, run->names[m], units, sizeof units);
    if (t->units[i] == NULL && u != NULL && (t->units[i] = strdup(u)) == NULL)
      return sweep__no_memory(err);
  }
  return SIM_OK;
}

/* Row p from point p's file, or its error file, or "missing". */
static int gather_row(table *t, const sweep *s, const char *dir, size_t p,
                      sim_error *err) {
  char efile[SWEEP_PATH];
  point_file f;
  int e = sweep__read_point(s, dir, p, &f, err);
  t->point[p] = (int64_t)p;
  t->status[p] = "ok";
  if (e == SIM_OK && f.done) {
    e = put_metrics(t, p, &f.run, err);
  } else if (e == SIM_OK) {
    sweep__point_path(s, dir, p, ".error", efile);
    t->error[p] = f.exists ? strdup(f.why) : sweep__read_text_file(efile);
    t->status[p] = f.exists || t->error[p] != NULL ? "failed" : "missing";
    t->failed += t->status[p][0] == 'f';
    t->missing += t->status[p][0] == 'm';
  }
  h5r_run_release(&f.run);
  return e;
}

/* One CSV field (RFC 4180): quoted when it holds a comma, a quote or a
 * line break. Line breaks of messages (their hint lines) become "; ". */
static void csv_field(FILE *f, const char *text, bool last) {
  bool quote = strpbrk(text, ",\"\n\r") != NULL;
  if (quote)
    fputc('"', f);
  for (const char *c = text; *c != '\0'; c++) {
    if (*c == '\n') {
      fputs("; ", f);
      while (c[1] == ' ')
        c++;
    } else {
      if (*c == '"')
        fputc('"', f);
      fputc(*c, f);
    }
  }
  if (quote)
    fputc('"', f);
  fputc(last ? '\n' : ',', f);
}

static void csv_row(FILE *f, const table *t, const sweep *s, size_t p) {
  char num[32];
  snprintf(num, sizeof num, "%zu", p);
  csv_field(f, num, false);
  csv_field(f, t->status[p], false);
  for (size_t c = 0; c < sweep_ncolumns(s); c++)
    csv_field(f, sweep_point_value(s, p, c), false);
  for (size_t m = 0; m < t->nnames; m++) {
    double v = t->metric[m][p];
    if (!isnan(v))
      snprintf(num, sizeof num, "%.17g", v);
    csv_field(f, isnan(v) ? "" : num, false);
  }
  csv_field(f, t->error[p] != NULL ? t->error[p] : "", true);
}

/* summary.csv: point, status, the grid's columns, the metrics, error. */
static int write_csv(const table *t, const sweep *s, const char *path,
                     sim_error *err) {
  char partial[SWEEP_PATH + 16];
  snprintf(partial, sizeof partial, "%s.partial", path);
  FILE *f = fopen(partial, "w");
  if (f == NULL)
    return sim_error_set(err, SIM_EIO, "%s: cannot write: %s", partial,
                         strerror(errno));
  csv_field(f, "point", false);
  csv_field(f, "status", false);
  for (size_t c = 0; c < sweep_ncolumns(s); c++)
    csv_field(f, sweep_column_key(s, c), false);
  for (size_t m = 0; m < t->nnames; m++)
    csv_field(f, t->names[m], false);
  csv_field(f, "error", true);
  for (size_t p = 0; p < t->n; p++)
    csv_row(f, t, s, p);
  int bad = ferror(f) | (fclose(f) != 0);
  if (bad || rename(partial, path) != 0) {
    unlink(partial);
    return sim_error_set(err, SIM_EIO, "%s: cannot write", path);
  }
  return SIM_OK;
}

/* The dimension every value of column c parses in, if there is one. */
static bool column_numeric(const sweep *s, size_t c, units_dim *dim) {
  for (int d = 0; d < UNITS_NDIMS; d++) {
    size_t p = 0;
    double v;
    while (p < sweep_npoints(s) &&
           units_parse(sweep_point_value(s, p, c), (units_dim)d, &v, NULL) == 0)
      p++;
    if (p == sweep_npoints(s)) {
      *dim = (units_dim)d;
      return true;
    }
  }
  return false;
}

/* The arrays and names the HDF5 table borrows. */
typedef struct h5_parts {
  h5r_column *cols;
  size_t ncols;
  void **data;  /* owned arrays */
  char **paths; /* owned names */
  size_t nowned;
} h5_parts;

static void parts_fini(h5_parts *h) {
  for (size_t i = 0; i < h->nowned; i++) {
    free(h->data[i]);
    free(h->paths[i]);
  }
  free(h->data);
  free(h->paths);
  free(h->cols);
}

/* Adds a column whose path and data the parts own (data may be NULL). */
static int add_owned(h5_parts *h, char *path, h5r_type type, void *data,
                     const char *units) {
  h->paths[h->nowned] = path;
  h->data[h->nowned++] = data;
  if (path == NULL || data == NULL)
    return -1;
  h->cols[h->ncols++] = (h5r_column){path, type, data, units};
  return 0;
}

static char *join(const char *group, const char *name) {
  size_t n = strlen(group) + strlen(name) + 2;
  char *s = malloc(n);
  if (s != NULL)
    snprintf(s, n, "%s/%s", group, name);
  return s;
}

/* axes/KEY (text as written) and, when every value is a quantity of one
 * kind, axis_values/KEY in canonical units. */
static int add_axis(h5_parts *h, const sweep *s, size_t c, size_t n) {
  const char *key = sweep_column_key(s, c);
  const char **text = malloc(n * sizeof *text);
  for (size_t p = 0; text != NULL && p < n; p++)
    text[p] = sweep_point_value(s, p, c);
  if (add_owned(h, join("axes", key), H5R_STRING, text, NULL) != 0)
    return -1;
  units_dim dim;
  if (!column_numeric(s, c, &dim))
    return 0;
  double *v = malloc(n * sizeof *v);
  for (size_t p = 0; v != NULL && p < n; p++)
    units_parse(sweep_point_value(s, p, c), dim, &v[p], NULL);
  const char *units = units_canonical(dim)[0] ? units_canonical(dim) : "1";
  return add_owned(h, join("axis_values", key), H5R_FLOAT64, v, units);
}

static int build_parts(h5_parts *h, const table *t, const sweep *s) {
  size_t nc = sweep_ncolumns(s), max = 3 + 2 * nc + t->nnames;
  h->cols = calloc(max, sizeof *h->cols);
  h->data = calloc(max, sizeof *h->data);
  h->paths = calloc(max, sizeof *h->paths);
  if (h->cols == NULL || h->data == NULL || h->paths == NULL)
    return -1;
  h->cols[h->ncols++] = (h5r_column){"point", H5R_INT64, t->point, NULL};
  h->cols[h->ncols++] = (h5r_column){"status", H5R_STRING, t->status, NULL};
  h->cols[h->ncols++] = (h5r_column){"error", H5R_STRING, t->error, NULL};
  for (size_t c = 0; c < nc; c++)
    if (add_axis(h, s, c, t->n) != 0)
      return -1;
  for (size_t m = 0; m < t->nnames; m++) {
    h->paths[h->nowned++] = join("metrics", t->names[m]);
    if (h->paths[h->nowned - 1] == NULL)
      return -1;
    h->cols[h->ncols++] = (h5r_column){h->paths[h->nowned - 1], H5R_FLOAT64,
                                       t->metric[m], t->units[m]};
  }
  return 0;
}

static int write_h5(const table *t, const sweep *s, const char *path,
                    const char *version, sim_error *err) {
  h5_parts h = {0};
  const char *file = strrchr(sweep_path(s), '/');
  const char *keys[] = {"format", "sweep", "base", "aifsim_version"};
  const char *values[] = {"aifsim-sweep-summary",
                          file ? file + 1 : sweep_path(s),
                          sweep_base_written(s), version};
  int e = build_parts(&h, t, s) == 0 ? SIM_OK : sweep__no_memory(err);
  h5r_table tab = {t->n, h.cols, h.ncols, keys, values, version ? 4 : 3};
  if (e == SIM_OK)
    e = h5r_table_write(path, &tab, err);
  parts_fini(&h);
  return e;
}

/* Rebuilds summary.h5 and summary.csv from the files in dir. */
int sweep__write_summary(const sweep *s, const char *dir, const char *version,
                         size_t *failed, size_t *missing, sim_error *err) {
  table t;
  char path[SWEEP_PATH];
  int e = table_init(&t, sweep_npoints(s), err);
  for (size_t p = 0; e == SIM_OK && p < t.n; p++)
    e = gather_row(&t, s, dir, p, err);
  snprintf(path, sizeof path, "%s/summary.h5", dir);
  if (e == SIM_OK)
    e = write_h5(&t, s, path, version, err);
  snprintf(path, sizeof path, "%s/summary.csv", dir);
  if (e == SIM_OK)
    e = write_csv(&t, s, path, err);
  *failed = t.failed;
  *missing = t.missing;
  table_fini(&t);
  return e;
}

int sweep_collect(const sweep *s, const char *dir, const char *version,
                  sweep_stats *st, sim_error *err) {
  struct stat sb;
  memset(st, 0, sizeof *st);
  st->points = st->mine = sweep_npoints(s);
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return sim_error_set(err, SIM_EIO, "%s: no such directory", dir);
  int e = sweep__write_summary(s, dir, version, &st->failed, &st->missing, err);
  st->summary = e == SIM_OK;
  return e;
}
