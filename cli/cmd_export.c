/* cmd_export.c - `aifsim export RUN.h5 --csv DIR`: a run file as tidy CSV
 * for tools that do not read HDF5, one file per group with the units in
 * the header, read through h5read.h.
 *
 * Tidy: one row per observation, one column per variable. A group of
 * series gives one row per sample ("time [s]", then each column as
 * "power_w [W]"); a group with an axis (racks, loops) one row per sample
 * and position, the position's name in a column named by the axis (its
 * number in "position" when the file names none). When
 * the run has a date, a "time_utc" column gives each row's UTC time in
 * ISO 8601. Tables (/jobs) give one row per row; /summary gives
 * summary.csv (metric, value, units), the root attributes run.csv, and
 * the resolved scenario scenario.yaml. Numbers are written in the
 * shortest form that reads back to the same double; NaN as an empty
 * cell. Each file is written as NAME.partial and renamed; after a failure
 * the files this command wrote are removed. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd_internal.h"
#include "h5read.h"
#include "runfile.h"
#include "sig.h"
#include "tel.h"

#define EXPORT_BLOCK_VALUES ((size_t)1 << 20) /* doubles read at a time */

typedef struct exporter {
  const char *run, *dir;
  char **written; /* files done, removed again if a later one fails */
  size_t nwritten;
  sim_error *err;
} exporter;

/* ---- Cells ----------------------------------------------------------- */

/* The shortest decimal that reads back to v; NaN as an empty cell. */
static void put_number(FILE *f, double v) {
  if (isnan(v))
    return;
  if (isinf(v)) {
    fputs(v > 0 ? "inf" : "-inf", f);
    return;
  }
  char buf[40];
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (strtod(buf, NULL) == v)
      break;
  }
  fputs(buf, f);
}

/* A text cell, quoted (RFC 4180) when it holds a comma, quote or newline. */
static void put_text(FILE *f, const char *s) {
  if (strpbrk(s, ",\"\r\n") == NULL) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s != '\0'; s++) {
    if (*s == '"')
      fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* A header cell: "name [units]", or the name alone without units. */
static void put_head(FILE *f, const char *name, const char *units) {
  char buf[512];
  if (units != NULL && units[0] != '\0')
    snprintf(buf, sizeof buf, "%s [%s]", name, units);
  else
    snprintf(buf, sizeof buf, "%s", name);
  put_text(f, buf);
}

/* ---- Files ------------------------------------------------------------ */

/* DIR/NAME into buf. */
static const char *out_path(const exporter *e, const char *name, char *buf,
                            size_t size, const char *suffix) {
  snprintf(buf, size, "%s/%s%s", e->dir, name, suffix);
  return buf;
}

/* Opens DIR/NAME.partial for writing; NULL with err set. */
static FILE *open_out(exporter *e, const char *name) {
  char path[4200];
  FILE *f = fopen(out_path(e, name, path, sizeof path, ".partial"), "w");
  if (f == NULL)
    sim_error_set(e->err, SIM_EIO, "aifsim: export: cannot write %s: %s", path,
                  strerror(errno));
  return f;
}

/* Closes f and renames DIR/NAME.partial to DIR/NAME; on failure removes
 * the partial file. rc is the writing's status so far. */
static int close_out(exporter *e, FILE *f, const char *name, int rc) {
  char partial[4200], path[4200];
  out_path(e, name, partial, sizeof partial, ".partial");
  out_path(e, name, path, sizeof path, "");
  bool bad = ferror(f) != 0;
  if (fclose(f) != 0 || bad) {
    if (rc == SIM_OK)
      rc = sim_error_set(e->err, SIM_EIO, "aifsim: export: cannot write %s: %s",
                         partial, strerror(errno));
  }
  char *copy = NULL;
  char **grown = realloc(e->written, (e->nwritten + 1) * sizeof *grown);
  if (grown != NULL)
    e->written = grown;
  if (rc == SIM_OK && (grown == NULL || (copy = strdup(path)) == NULL))
    rc = sim_error_set(e->err, SIM_ENOMEM, "aifsim: export: out of memory");
  if (rc == SIM_OK && rename(partial, path) != 0)
    rc = sim_error_set(e->err, SIM_EIO, "aifsim: export: cannot rename %s: %s",
                       partial, strerror(errno));
  if (rc != SIM_OK) {
    free(copy);
    unlink(partial);
    return rc;
  }
  e->written[e->nwritten++] = copy;
  return SIM_OK;
}

/* A group's file name: "services/chat" -> "services_chat.csv". */
static void csv_name(const char *group, char *buf, size_t size) {
  snprintf(buf, size, "%s.csv", group);
  for (char *p = buf; *p != '\0'; p++)
    if (*p == '/')
      *p = '_';
}

/* ---- Series ------------------------------------------------------------- */

/* The UTC seconds of t = 0 from time units "seconds since ORIGIN"; NAN
 * for a group without a date. */
static double origin_of(const char *time_units) {
  static const char since[] = "seconds since ";
  double utc_s;
  if (strncmp(time_units, since, sizeof since - 1) != 0 ||
      sig_parse_time(time_units + sizeof since - 1, &utc_s, NULL) != 0)
    return NAN;
  return utc_s;
}

static void series_header(FILE *f, const h5r_series_info *i, bool dated) {
  put_head(f, "time", "s");
  if (dated)
    fputs(",time_utc", f);
  if (i->width > 1 || i->axis != NULL) {
    fputc(',', f);
    put_text(f, i->axis != NULL ? i->axis : "position");
  }
  for (size_t c = 0; c < i->ncols; c++) {
    fputc(',', f);
    put_head(f, i->names[c], i->units[c]);
  }
  fputc('\n', f);
}

/* The rows of one block: each sample's time, then per position its label
 * and the columns' values there. */
static void series_block(FILE *f, const h5r_series_info *i, size_t count,
                         const double *time, const double *v, double origin) {
  char utc[64];
  for (size_t r = 0; r < count; r++)
    for (size_t j = 0; j < i->width; j++) {
      put_number(f, time[r]);
      if (!isnan(origin))
        fprintf(f, ",%s",
                runfile_utc_text(origin + time[r], utc, sizeof utc) ? utc : "");
      if (i->axis != NULL) {
        fputc(',', f);
        put_text(f, i->labels[j]);
      } else if (i->width > 1) { /* positions without names: numbered */
        fprintf(f, ",%zu", j);
      }
      for (size_t c = 0; c < i->ncols; c++) {
        fputc(',', f);
        put_number(f, v[(c * count + r) * i->width + j]);
      }
      fputc('\n', f);
    }
}

/* Writes the series to f a block of rows at a time. */
static int series_rows(exporter *e, h5r_series *s, FILE *f) {
  const h5r_series_info *i = h5r_series_info_of(s);
  double origin = origin_of(i->time_units);
  size_t per_row = i->ncols * i->width + 1;
  size_t block =
      EXPORT_BLOCK_VALUES / per_row > 0 ? EXPORT_BLOCK_VALUES / per_row : 1;
  double *time = malloc(block * sizeof *time);
  double *v = malloc(block * per_row * sizeof *v);
  int rc = time != NULL && v != NULL
               ? SIM_OK
               : sim_error_set(e->err, SIM_ENOMEM, "aifsim: out of memory");
  series_header(f, i, !isnan(origin));
  for (size_t at = 0; rc == SIM_OK && at < i->nrows; at += block) {
    size_t count = i->nrows - at < block ? i->nrows - at : block;
    rc = h5r_series_rows(s, at, count, time, v, e->err);
    if (rc == SIM_OK)
      series_block(f, i, count, time, v, origin);
  }
  free(time);
  free(v);
  return rc;
}

static int export_series(exporter *e, const char *group) {
  h5r_series *s = NULL;
  int rc = h5r_series_open(e->run, group, &s, e->err);
  if (rc != SIM_OK)
    return rc;
  char name[1024];
  csv_name(group, name, sizeof name);
  FILE *f = open_out(e, name);
  rc = f == NULL ? SIM_EIO : series_rows(e, s, f);
  if (f != NULL)
    rc = close_out(e, f, name, rc);
  if (rc == SIM_OK)
    printf("wrote %s/%s: %zu rows\n", e->dir, name,
           h5r_series_info_of(s)->nrows * h5r_series_info_of(s)->width);
  h5r_series_close(s);
  return rc;
}

/* ---- Tables, the summary, the root, the scenario ----------------------- */

static void rows_write(FILE *f, const h5r_rows *t) {
  for (size_t c = 0; c < t->ncols; c++) {
    if (c > 0)
      fputc(',', f);
    put_head(f, t->names[c], t->texts[c] != NULL ? "" : t->units[c]);
  }
  fputc('\n', f);
  for (size_t r = 0; r < t->nrows; r++) {
    for (size_t c = 0; c < t->ncols; c++) {
      if (c > 0)
        fputc(',', f);
      if (t->texts[c] != NULL)
        put_text(f, t->texts[c][r]);
      else
        put_number(f, t->values[c][r]);
    }
    fputc('\n', f);
  }
}

static int export_rows(exporter *e, const char *group) {
  h5r_rows t;
  int rc = h5r_rows_read(e->run, group, &t, e->err);
  char name[1024];
  csv_name(group, name, sizeof name);
  FILE *f = rc == SIM_OK ? open_out(e, name) : NULL;
  if (f != NULL) {
    rows_write(f, &t);
    rc = close_out(e, f, name, rc);
  } else if (rc == SIM_OK) {
    rc = SIM_EIO;
  }
  if (rc == SIM_OK)
    printf("wrote %s/%s: %zu rows\n", e->dir, name, t.nrows);
  h5r_rows_release(&t);
  return rc;
}

/* The units of a /summary metric from its name, for files written
 * before /summary declared them (a metric's name ends in its unit).
 * "" for a count or a name this table does not know. */
static const char *units_by_name(const char *key) {
  static const struct {
    const char *suffix, *units;
  } by_end[] = {
      {"_w_per_s", "W/s"},
      {"_w_rms", "W"},
      {"_g_per_kwh", "gCO2/kWh"},
      {"_mwh", "MWh"},
      {"_kwh", "kWh"},
      {"_kw", "kW"},
      {"_hours", "h"},
      {"tokens_per_joule", "1/J"},
      {"_j", "J"},
      {"_w", "W"},
      {"_s", "s"},
      {"_kg", "kg"},
      {"co2_t", "t"},
      {"pue", "1"},
      {"_share", "1"},
      {"attainment", "1"},
      {"activity", "1"},
      {"cost", "$"},
      {"cost_energy", "$"},
      {"cost_demand", "$"},
      {"cost_fees", "$"},
  };
  size_t n = strlen(key);
  for (size_t i = 0; i < sizeof by_end / sizeof by_end[0]; i++) {
    size_t m = strlen(by_end[i].suffix);
    if (n >= m && strcmp(key + n - m, by_end[i].suffix) == 0)
      return by_end[i].units;
  }
  return "";
}

/* The text attribute name of a, or NULL. */
static const char *attr_text(const h5r_attrs *a, const char *name) {
  for (size_t i = 0; i < a->n; i++)
    if (strcmp(a->names[i], name) == 0)
      return a->texts[i];
  return NULL;
}

/* A summary metric's units: as /summary's units attribute declares them
 * (docs/OUTPUT.md), else from its name; "" for a text. */
static const char *metric_units(const h5r_attrs *a, size_t i, char *buf,
                                size_t size) {
  if (a->texts[i] != NULL)
    return "";
  const char *u =
      tel_metric_lookup(attr_text(a, "units"), a->names[i], buf, size);
  return u != NULL ? u : units_by_name(a->names[i]);
}

/* Whether attribute i of the summary describes the metrics (units,
 * long_names, groups) rather than being one. */
static bool declaration(const h5r_attrs *a, size_t i) {
  static const char *const meta[] = {"units", "long_names", "groups"};
  for (size_t k = 0; k < sizeof meta / sizeof meta[0]; k++)
    if (strcmp(a->names[i], meta[k]) == 0 && a->texts[i] != NULL)
      return true;
  return false;
}

/* An object's attributes as key, value rows; the summary's as metric,
 * value and units rows, without the metrics' declarations. */
static size_t attrs_write(FILE *f, const h5r_attrs *a, bool with_units) {
  char units[64];
  size_t rows = 0;
  fputs(with_units ? "metric,value,units\n" : "key,value\n", f);
  for (size_t i = 0; i < a->n; i++) {
    if (with_units && declaration(a, i))
      continue;
    put_text(f, a->names[i]);
    fputc(',', f);
    if (a->texts[i] != NULL)
      put_text(f, a->texts[i]);
    else
      put_number(f, a->values[i]);
    if (with_units)
      fprintf(f, ",%s", metric_units(a, i, units, sizeof units));
    fputc('\n', f);
    rows++;
  }
  return rows;
}

static int export_attrs(exporter *e, const char *object, const char *name,
                        bool with_units) {
  h5r_attrs a;
  size_t rows = 0;
  int rc = h5r_attrs_read(e->run, object, &a, e->err);
  FILE *f = rc == SIM_OK ? open_out(e, name) : NULL;
  if (f != NULL) {
    rows = attrs_write(f, &a, with_units);
    rc = close_out(e, f, name, rc);
  } else if (rc == SIM_OK) {
    rc = SIM_EIO;
  }
  if (rc == SIM_OK)
    printf("wrote %s/%s: %zu rows\n", e->dir, name, rows);
  h5r_attrs_release(&a);
  return rc;
}

static int export_scenario(exporter *e, const char *text) {
  FILE *f = open_out(e, "scenario.yaml");
  if (f == NULL)
    return SIM_EIO;
  fputs(text, f);
  int rc = close_out(e, f, "scenario.yaml", SIM_OK);
  if (rc == SIM_OK)
    printf("wrote %s/scenario.yaml: the resolved scenario\n", e->dir);
  return rc;
}

/* ---- The command -------------------------------------------------------- */

/* The run file must be a complete aifsim run: SIM_OK, else SIM_EINPUT
 * with the reason (or the reader's error). The scenario text comes back
 * in *scenario (the caller frees it). */
static int check_run(exporter *e, char **scenario) {
  h5r_run r;
  sim_error why = {0};
  int rc = h5r_run_read(e->run, &r, &why);
  if (rc != SIM_OK)
    rc = sim_error_set(e->err, SIM_EINPUT,
                       "aifsim: export: %s is not an aifsim run file (%s)",
                       e->run, why.msg);
  if (rc == SIM_OK && (r.complete != 1 || r.scenario == NULL))
    rc = sim_error_set(
        e->err, SIM_EINPUT,
        "aifsim: export: %s is not a complete aifsim run "
        "(%s)",
        e->run, r.scenario == NULL ? "no /scenario" : "not marked complete");
  *scenario = rc == SIM_OK ? r.scenario : NULL;
  r.scenario = rc == SIM_OK ? NULL : r.scenario;
  h5r_run_release(&r);
  return rc;
}

/* DIR, made if missing (its parent must exist). */
static int make_dir(exporter *e) {
  struct stat st;
  if (mkdir(e->dir, 0777) != 0 && errno != EEXIST)
    return sim_error_set(e->err, SIM_EINPUT,
                         "aifsim: export: cannot create "
                         "%s: %s",
                         e->dir, strerror(errno));
  if (stat(e->dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return sim_error_set(e->err, SIM_EINPUT,
                         "aifsim: export: %s is not a directory", e->dir);
  return SIM_OK;
}

/* Every group of series or table, then the summary, root and scenario. */
static int export_all(exporter *e, const char *scenario) {
  h5r_entry *groups = NULL;
  size_t n = 0;
  int rc = h5r_groups_list(e->run, &groups, &n, e->err);
  for (size_t i = 0; i < n && rc == SIM_OK; i++)
    rc = groups[i].kind == H5R_SERIES ? export_series(e, groups[i].name)
                                      : export_rows(e, groups[i].name);
  h5r_entries_free(groups, n);
  if (rc == SIM_OK)
    rc = export_attrs(e, "/summary", "summary.csv", true);
  if (rc == SIM_OK)
    rc = export_attrs(e, "/", "run.csv", false);
  return rc == SIM_OK ? export_scenario(e, scenario) : rc;
}

int cmd__export(const options *o) {
  if (o->scenario == NULL)
    return cmd__usage_error("%s", "export needs a run file: export RUN.h5 "
                                  "--csv DIR");
  if (o->csv == NULL)
    return cmd__usage_error("%s", "export needs --csv DIR (the one format "
                                  "it writes; see docs/OUTPUT.md for others)");
  sim_error err = {0};
  exporter e = {o->scenario, o->csv, NULL, 0, &err};
  char *scenario = NULL;
  int rc = check_run(&e, &scenario);
  if (rc == SIM_OK)
    rc = make_dir(&e);
  if (rc == SIM_OK)
    rc = export_all(&e, scenario);
  for (size_t i = 0; i < e.nwritten; i++) {
    if (rc != SIM_OK)
      unlink(e.written[i]);
    free(e.written[i]);
  }
  free(e.written);
  free(scenario);
  if (rc == SIM_OK)
    return 0;
  fprintf(stderr, "%s\n", err.msg);
  return rc == SIM_EINPUT || (rc == SIM_EIO && strncmp(err.msg, "h5r:", 4) == 0)
             ? EXIT_BAD_INPUT
             : EXIT_RUN_FAILED;
}
