/* tel.c - the telemetry wrappers: argument checks shared by every sink,
 * then a call through the sink's ops table (tel.h), timed so a run can
 * say what share of it writing the output took.
 * Checking the declaration here, once, means the memory sink and the HDF5
 * writer accept exactly the same groups, so a test on the memory sink
 * says something about a real run. */
#include "tel.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tel_internal.h"

/* The root attribute that commit writes; a caller may not set it, or a
 * partial file could claim to be complete. */
#define TEL_RESERVED_META "complete"

static int fail(tel_sink *s, int code, const char *what) {
  return sim_error_set(&s->err, code, "telemetry: %s", what);
}

/* A group name is a relative path: components separated by single '/',
 * none empty, none "." or "..". */
static int group_name_ok(const char *name) {
  if (name == NULL || name[0] == '\0')
    return 0;
  const char *p = name;
  for (;;) {
    size_t len = strcspn(p, "/");
    if (len == 0 || (len == 1 && p[0] == '.') ||
        (len == 2 && p[0] == '.' && p[1] == '.'))
      return 0;
    if (p[len] == '\0')
      return 1;
    p += len + 1;
  }
}

/* A leaf name (column, axis): one non-empty component. */
static int leaf_name_ok(const char *name) {
  return name != NULL && name[0] != '\0' && strchr(name, '/') == NULL &&
         strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* The axis of a 2-D group: a name and width labels, none NULL. A group
 * without an axis is 1-D and has width 1. */
static int check_axis(tel_sink *s, const tel_group *g) {
  if (g->axis_name == NULL && g->width == 1)
    return SIM_OK;
  if (!leaf_name_ok(g->axis_name) || strcmp(g->axis_name, "time") == 0)
    return sim_error_set(&s->err, SIM_EINVAL,
                         "telemetry: group %s: width %zu needs an axis name "
                         "other than \"time\"",
                         g->name, g->width);
  if (g->axis_labels == NULL)
    return sim_error_set(&s->err, SIM_EINVAL,
                         "telemetry: group %s: no axis labels", g->name);
  for (size_t j = 0; j < g->width; j++)
    if (g->axis_labels[j] == NULL)
      return sim_error_set(&s->err, SIM_EINVAL,
                           "telemetry: group %s: axis label %zu is NULL",
                           g->name, j);
  return SIM_OK;
}

/* Column c: a valid name not taken by the time or axis datasets nor by an
 * earlier column, with units and a long name. */
static int check_column(tel_sink *s, const tel_group *g, size_t c) {
  const tel_column *col = &g->columns[c];
  if (!leaf_name_ok(col->name) || col->units == NULL || col->long_name == NULL)
    return sim_error_set(&s->err, SIM_EINVAL,
                         "telemetry: group %s: column %zu needs a name "
                         "without '/', units and a long name",
                         g->name, c);
  int taken = strcmp(col->name, "time") == 0 ||
              (g->axis_name != NULL && strcmp(col->name, g->axis_name) == 0);
  for (size_t k = 0; k < c && !taken; k++)
    taken = strcmp(col->name, g->columns[k].name) == 0;
  if (taken)
    return sim_error_set(&s->err, SIM_EINVAL,
                         "telemetry: group %s: column name %s is taken",
                         g->name, col->name);
  return SIM_OK;
}

static int check_group(tel_sink *s, const tel_group *g) {
  if (!group_name_ok(g->name))
    return sim_error_set(&s->err, SIM_EINVAL,
                         "telemetry: bad group name \"%s\"",
                         g->name != NULL ? g->name : "(null)");
  if (g->columns == NULL || g->ncolumns == 0 || g->width == 0 ||
      g->ncolumns > SIZE_MAX / sizeof(double) / g->width)
    return sim_error_set(&s->err, SIM_EINVAL,
                         "telemetry: group %s: needs columns and a width "
                         ">= 1 (ncolumns %zu, width %zu)",
                         g->name, g->ncolumns, g->width);
  int rc = check_axis(s, g);
  for (size_t c = 0; c < g->ncolumns && rc == SIM_OK; c++)
    rc = check_column(s, g, c);
  return rc;
}

static double wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Charges the time since t0 to the sink and passes rc on. */
static int timed(tel_sink *s, double t0, int rc) {
  s->busy_s += wall_s() - t0;
  return rc;
}

double tel_busy_s(const tel_sink *s) { return s != NULL ? s->busy_s : 0; }

int tel_open_group(tel_sink *s, const tel_group *g, size_t *id) {
  if (s == NULL)
    return SIM_EINVAL;
  if (g == NULL || id == NULL)
    return fail(s, SIM_EINVAL, "open_group: NULL group or id");
  int rc = check_group(s, g);
  double t0 = wall_s();
  return timed(s, t0, rc != SIM_OK ? rc : s->ops->open_group(s, g, id));
}

int tel_append(tel_sink *s, size_t id, double time_s, const double *values) {
  if (s == NULL)
    return SIM_EINVAL;
  if (values == NULL)
    return fail(s, SIM_EINVAL, "append: NULL values");
  double t0 = wall_s();
  return timed(s, t0, s->ops->append(s, id, time_s, values));
}

/* A metric's declaration: a leaf key not one of the sink's own, a long
 * name and a group, units exactly when it holds a number. */
static int check_metric(tel_sink *s, const tel_metric *m, bool text,
                        const char *op) {
  if (m == NULL || !leaf_name_ok(m->key) || tel__metric_reserved(m->key) ||
      m->long_name == NULL || m->group == NULL || (m->units == NULL) != text)
    return sim_error_set(&s->err, SIM_EINVAL,
                         "telemetry: %s: a metric needs a key (not units, "
                         "long_names or groups), a long name, a group and, "
                         "if a number, units",
                         op);
  return SIM_OK;
}

int tel_put_summary(tel_sink *s, const tel_metric *m, double value) {
  if (s == NULL)
    return SIM_EINVAL;
  int rc = check_metric(s, m, false, "put_summary");
  if (rc == SIM_OK)
    rc = tel__metric_note(s, m);
  if (rc != SIM_OK || isnan(value))
    return rc;
  return s->ops->put_summary(s, m->key, value);
}

int tel_put_summary_str(tel_sink *s, const tel_metric *m, const char *value) {
  if (s == NULL)
    return SIM_EINVAL;
  int rc = check_metric(s, m, true, "put_summary_str");
  if (rc == SIM_OK && value == NULL)
    rc = fail(s, SIM_EINVAL, "put_summary_str: NULL value");
  if (rc == SIM_OK)
    rc = tel__metric_note(s, m);
  /* A sink without text metrics drops them: they describe, not measure. */
  if (rc != SIM_OK || s->ops->put_summary_str == NULL)
    return rc;
  return s->ops->put_summary_str(s, m->key, value);
}

/* A metadata key: a leaf name, and not the one commit owns. */
static int check_meta_key(tel_sink *s, const char *key) {
  if (!leaf_name_ok(key))
    return fail(s, SIM_EINVAL, "put_meta: bad key");
  if (strcmp(key, TEL_RESERVED_META) == 0)
    return fail(s, SIM_EINVAL,
                "put_meta: \"" TEL_RESERVED_META "\" is set by commit");
  return SIM_OK;
}

int tel_put_meta_str(tel_sink *s, const char *key, const char *value) {
  if (s == NULL)
    return SIM_EINVAL;
  int rc = check_meta_key(s, key);
  if (rc == SIM_OK && value == NULL)
    rc = fail(s, SIM_EINVAL, "put_meta_str: NULL value");
  return rc != SIM_OK ? rc : s->ops->put_meta_str(s, key, value);
}

int tel_put_meta_int(tel_sink *s, const char *key, int64_t value) {
  if (s == NULL)
    return SIM_EINVAL;
  int rc = check_meta_key(s, key);
  return rc != SIM_OK ? rc : s->ops->put_meta_int(s, key, value);
}

int tel_put_text(tel_sink *s, const char *name, const char *text) {
  if (s == NULL)
    return SIM_EINVAL;
  if (!leaf_name_ok(name) || text == NULL)
    return fail(s, SIM_EINVAL, "put_text: bad name or NULL text");
  return s->ops->put_text(s, name, text);
}

/* Names unique (the row axis's too), leaf names, each column numbers or
 * text for every row. */
static int check_table(tel_sink *s, const tel_table *t) {
  if (t == NULL || !leaf_name_ok(t->name) || t->columns == NULL ||
      t->ncolumns == 0 || (t->axis_name != NULL && !leaf_name_ok(t->axis_name)))
    return fail(s, SIM_EINVAL, "put_table: bad name or no columns");
  for (size_t c = 0; c < t->ncolumns; c++) {
    const tel_table_column *col = &t->columns[c];
    if (!leaf_name_ok(col->name) || col->long_name == NULL ||
        (col->values == NULL) == (col->texts == NULL) ||
        (col->values != NULL && col->units == NULL))
      return fail(s, SIM_EINVAL,
                  "put_table: a column lacks a name, long "
                  "name, units or cells");
    for (size_t k = 0; k < c; k++)
      if (strcmp(t->columns[k].name, col->name) == 0)
        return fail(s, SIM_EINVAL, "put_table: a column name is taken");
    if (t->axis_name != NULL && strcmp(t->axis_name, col->name) == 0)
      return fail(s, SIM_EINVAL, "put_table: the row axis is a column's name");
    for (size_t r = 0; col->texts != NULL && r < t->nrows; r++)
      if (col->texts[r] == NULL)
        return fail(s, SIM_EINVAL, "put_table: a NULL text cell");
  }
  return SIM_OK;
}

int tel_put_group_attr(tel_sink *s, const char *group, const char *key,
                       double value) {
  if (s == NULL)
    return SIM_EINVAL;
  if (!group_name_ok(group) || !leaf_name_ok(key))
    return fail(s, SIM_EINVAL, "put_group_attr: bad group or key");
  return s->ops->put_group_attr(s, group, key, value);
}

int tel_put_table(tel_sink *s, const tel_table *t) {
  if (s == NULL)
    return SIM_EINVAL;
  int rc = check_table(s, t);
  double t0 = wall_s();
  return timed(s, t0, rc != SIM_OK ? rc : s->ops->put_table(s, t));
}

/* The metrics' declarations go in just before the commit, so a failed
 * run, which never commits, wrote none. */
int tel_commit(tel_sink *s) {
  if (s == NULL)
    return SIM_EINVAL;
  double t0 = wall_s();
  int rc = tel__metric_commit(s);
  return timed(s, t0, rc != SIM_OK ? rc : s->ops->commit(s));
}

void tel_destroy(tel_sink *s) {
  if (s != NULL) {
    tel__metric_free(s);
    s->ops->destroy(s);
  }
}

const char *tel_errmsg(const tel_sink *s) {
  return s != NULL ? s->err.msg : "no telemetry sink";
}

/* ---- Copies of declarations ------------------------------------------ */

static size_t str_size(const char *s) { return s != NULL ? strlen(s) + 1 : 0; }

/* Copies s to *at (advancing it); NULL stays NULL. */
static const char *put_str(char **at, const char *s) {
  if (s == NULL)
    return NULL;
  size_t n = strlen(s) + 1;
  memcpy(*at, s, n);
  *at += n;
  return *at - n;
}

static size_t group_bytes(const tel_group *g) {
  size_t n = sizeof *g + g->ncolumns * sizeof(tel_column) + str_size(g->name) +
             str_size(g->axis_name);
  for (size_t c = 0; c < g->ncolumns; c++)
    n += str_size(g->columns[c].name) + str_size(g->columns[c].units) +
         str_size(g->columns[c].long_name);
  if (g->axis_labels != NULL)
    for (size_t j = 0; j < g->width; j++)
      n += sizeof(char *) + str_size(g->axis_labels[j]);
  return n;
}

tel_group *tel__group_dup(const tel_group *g) {
  tel_group *d = malloc(group_bytes(g));
  if (d == NULL)
    return NULL;
  tel_column *cols = (tel_column *)(d + 1);
  const char **labels = (const char **)(cols + g->ncolumns);
  char *at = (char *)(labels + (g->axis_labels != NULL ? g->width : 0));
  *d = *g;
  d->name = put_str(&at, g->name);
  d->axis_name = put_str(&at, g->axis_name);
  for (size_t c = 0; c < g->ncolumns; c++)
    cols[c] = (tel_column){put_str(&at, g->columns[c].name),
                           put_str(&at, g->columns[c].units),
                           put_str(&at, g->columns[c].long_name)};
  d->columns = cols;
  for (size_t j = 0; g->axis_labels != NULL && j < g->width; j++)
    labels[j] = put_str(&at, g->axis_labels[j]);
  d->axis_labels = g->axis_labels != NULL ? labels : NULL;
  return d;
}

void tel__group_destroy(tel_group *g) { free(g); }
