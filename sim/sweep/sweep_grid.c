/* sweep_grid.c - the grid of a sweep file's points: its columns (one
 * key with its values and their "key=value" overrides) and axes, from
 * the file's values, ranges (from, to and step in one unit) and zips,
 * the seed column, and the strides and count of the points (sweep.c
 * describes the layout); and the small helpers every file of the sweep
 * module uses (sweep_internal.h). It calls into no other file of the
 * module. */
#include "sweep.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "sweep_internal.h"
#include "units.h"

/* A range may give at most this many values. */
#define SWEEP_MAX_RANGE 100000

int sweep__no_memory(sim_error *err) {
  return sim_error_set(err, SIM_ENOMEM, "out of memory");
}

/* A malloc'd printf, or NULL when out of memory. */
char *sweep__format(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s != NULL) {
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  return s;
}

/* "racks[0].count" -> "racks.0.count", as scn_doc_set reads both. */
static char *normalize_key(const char *key, size_t len) {
  char *k = malloc(len + 1), *o = k;
  for (size_t i = 0; k != NULL && i < len; i++)
    if (key[i] != ']')
      *o++ = key[i] == '[' ? '.' : key[i];
  if (k != NULL)
    *o = '\0';
  return k;
}

void sweep__free_strings(char **v, size_t n) {
  for (size_t i = 0; v != NULL && i < n; i++)
    free(v[i]);
  free(v);
}

void sweep__column_fini(column *c) {
  free(c->key);
  sweep__free_strings(c->values, c->n);
  sweep__free_strings(c->sets, c->n);
}

/* Appends an empty column on a new axis or (same_axis) the last one. */
static column *add_column(sweep *s, bool same_axis, sim_error *err) {
  column *cols = realloc(s->cols, (s->ncols + 1) * sizeof *cols);
  if (cols == NULL)
    return sweep__no_memory(err), NULL;
  s->cols = cols;
  if (!same_axis) {
    axis *axes = realloc(s->axes, (s->naxes + 1) * sizeof *axes);
    if (axes == NULL)
      return sweep__no_memory(err), NULL;
    s->axes = axes;
    s->axes[s->naxes++] = (axis){0, 0};
  }
  column *c = &s->cols[s->ncols++];
  memset(c, 0, sizeof *c);
  c->axis = s->naxes - 1;
  return c;
}

/* Gives column c the key and n values, copied; sets[i] is "key=value". */
static int column_fill(column *c, const char *key, const char *const *values,
                       size_t n, sim_error *err) {
  c->key = normalize_key(key, strlen(key));
  c->values = calloc(n ? n : 1, sizeof *c->values);
  c->sets = calloc(n ? n : 1, sizeof *c->sets);
  if (c->key == NULL || c->values == NULL || c->sets == NULL)
    return sweep__no_memory(err);
  for (; c->n < n; c->n++) {
    c->values[c->n] = strdup(values[c->n]);
    c->sets[c->n] = sweep__format("%s=%s", key, values[c->n]);
    if (c->values[c->n] == NULL || c->sets[c->n] == NULL) {
      c->n++;
      return sweep__no_memory(err);
    }
  }
  return SIM_OK;
}

/* ---- Ranges ------------------------------------------------------------ */

/* The dimension text parses in, trying plain numbers first. */
static int parse_any(const char *text, units_dim *dim, double *v) {
  for (int d = 0; d < UNITS_NDIMS; d++)
    if (units_parse(text, (units_dim)d, v, NULL) == 0) {
      *dim = (units_dim)d;
      return 0;
    }
  return -1;
}

/* Canonical units in one unit of the suffix ("kW": 1000; "": 1). */
static double unit_scale(const char *suffix, units_dim dim) {
  char one[64], zero[64];
  double a = 1, b = 0;
  snprintf(one, sizeof one, "1%s", suffix);
  snprintf(zero, sizeof zero, "0%s", suffix);
  if (units_parse(one, dim, &a, NULL) != 0 ||
      units_parse(zero, dim, &b, NULL) != 0)
    return 1;
  return a - b;
}

typedef struct range_val {
  units_dim dim;
  double from, to, step;
} range_val;

static int range_part(sweep *s, const char *where, const char *part,
                      const char *text, const char *from, range_val *r,
                      double *out, sim_error *err) {
  units_problem p;
  if (units_parse(text, r->dim, out, &p) != 0)
    return scn_doc_fail(s->doc, where, err,
                        "from, to and step are quantities of one kind",
                        "'%s' is '%s', which does not go with 'from' (%s): %s",
                        part, text, from, p.msg);
  return SIM_OK;
}

/* Parses and checks from, to and step of the range at path. */
static int range_read(sweep *s, const range_cfg *rc, const char *path,
                      range_val *r, sim_error *err) {
  char at[128];
  if (rc->from == NULL || rc->to == NULL || rc->step == NULL)
    return scn_doc_fail(s->doc, path, err,
                        "{from: 500kW, to: 800kW, step: 50kW}",
                        "a range needs from, to and step");
  snprintf(at, sizeof at, "%s.from", path);
  if (parse_any(rc->from, &r->dim, &r->from) != 0)
    return scn_doc_fail(s->doc, at, err, "e.g. 500kW, 2h, 40%, 4",
                        "'from' is '%s', not a number with or without a unit",
                        rc->from);
  snprintf(at, sizeof at, "%s.to", path);
  int e = range_part(s, at, "to", rc->to, rc->from, r, &r->to, err);
  snprintf(at, sizeof at, "%s.step", path);
  if (e == SIM_OK)
    e = range_part(s, at, "step", rc->step, rc->from, r, &r->step, err);
  if (e == SIM_OK && !(r->step > 0))
    e = scn_doc_fail(s->doc, at, err, NULL, "'step' must be above zero");
  snprintf(at, sizeof at, "%s.to", path);
  if (e == SIM_OK && r->to < r->from)
    e = scn_doc_fail(s->doc, at, err, "ranges go upwards",
                     "'to' (%s) is below 'from' (%s)", rc->to, rc->from);
  return e;
}

/* The values of a range as texts in the unit 'from' is written in:
 * from 500kW step 0.05MW gives 500kW, 550kW, ... Written with 15
 * significant digits, so 0.1 steps read 0.3, not 0.30000000000000004. */
static int range_expand(sweep *s, const range_cfg *rc, const char *path,
                        char ***out, size_t *n, sim_error *err) {
  range_val r;
  int e = range_read(s, rc, path, &r, err);
  if (e != SIM_OK)
    return e;
  double span = (r.to - r.from) / r.step;
  if (span >= SWEEP_MAX_RANGE)
    return scn_doc_fail(s->doc, path, err, NULL,
                        "the range has more than %d values", SWEEP_MAX_RANGE);
  char *end;
  double num = strtod(rc->from, &end); /* parse_any accepted it */
  double step_u = r.step / unit_scale(end, r.dim);
  *n = (size_t)floor(span + 1e-9) + 1;
  *out = calloc(*n, sizeof **out);
  if (*out == NULL)
    return sweep__no_memory(err);
  for (size_t k = 0; k < *n; k++)
    if (((*out)[k] = sweep__format("%.15g%s", num + (double)k * step_u, end)) ==
        NULL)
      return sweep__no_memory(err);
  return SIM_OK;
}

/* ---- Axes -------------------------------------------------------------- */

/* One key with its values or range into a column of the current axis. */
static int add_key(sweep *s, const axis_cfg *a, const char *where,
                   bool same_axis, sim_error *err) {
  char at[96];
  snprintf(at, sizeof at, "%s.key", where);
  if (a->key == NULL)
    return scn_doc_fail(s->doc, where, err, "key: power.cap",
                        "an axis needs a key (or a zip of keys)");
  if (strchr(a->key, '=') != NULL || strchr(a->key, ' ') != NULL)
    return scn_doc_fail(s->doc, at, err, "e.g. power.cap, racks.0.count",
                        "'%s' is not a key path", a->key);
  bool ranged = a->range.from || a->range.to || a->range.step;
  if ((a->nvalues > 0) == ranged)
    return scn_doc_fail(s->doc, where, err,
                        "values: [500kW, 600kW] or range: {from, to, step}",
                        "axis '%s' needs either values or a range", a->key);
  column *c = add_column(s, same_axis, err);
  if (c == NULL)
    return SIM_ENOMEM;
  snprintf(c->where, sizeof c->where, "%s", where);
  c->src = ranged ? SRC_RANGE : SRC_VALUES;
  if (!ranged)
    return column_fill(c, a->key, (const char *const *)a->values, a->nvalues,
                       err);
  char **vals = NULL, rpath[96];
  size_t n = 0;
  snprintf(rpath, sizeof rpath, "%s.range", where);
  int e = range_expand(s, &a->range, rpath, &vals, &n, err);
  if (e == SIM_OK)
    e = column_fill(c, a->key, (const char *const *)vals, n, err);
  sweep__free_strings(vals, n);
  return e;
}

/* A zip: its keys in one axis, all with as many values as the first. */
static int add_zip(sweep *s, const axis_cfg *a, const char *where,
                   sim_error *err) {
  char at[96];
  if (a->key != NULL || a->nvalues > 0 || a->range.from || a->range.to ||
      a->range.step)
    return scn_doc_fail(s->doc, where, err,
                        "zip: [{key: a, values: [..]}, {key: b, ...}]",
                        "a zip axis has its keys and values inside 'zip'");
  for (size_t z = 0; z < a->nzip; z++) {
    snprintf(at, sizeof at, "%s.zip.%zu", where, z);
    int e = add_key(s, &a->zip[z], at, z > 0, err);
    if (e != SIM_OK)
      return e;
    const column *c = &s->cols[s->ncols - 1], *first = c - z;
    if (c->n != first->n)
      return scn_doc_fail(s->doc, at, err,
                          "zipped keys vary together: one value each per point",
                          "'%s' has %zu values but '%s' has %zu", c->key, c->n,
                          first->key, first->n);
  }
  return SIM_OK;
}

/* The key part of a fixed override "key=value", normalized; NULL if none. */
char *sweep__set_key(const char *set) {
  const char *eq = strchr(set, '=');
  return eq != NULL && eq > set ? normalize_key(set, (size_t)(eq - set)) : NULL;
}

/* A key varied by two axes, or set for every point and varied, is a
 * mistake: one would silently win. Reported at the later axis. */
static int check_duplicates(sweep *s, sim_error *err) {
  for (size_t i = 0; i < s->ncols; i++) {
    const column *c = &s->cols[i];
    char at[96];
    snprintf(at, sizeof at, "%s.key", c->where);
    for (size_t j = 0; j < i; j++)
      if (strcmp(c->key, s->cols[j].key) == 0)
        return scn_doc_fail(s->doc, at, err,
                            "one axis per key; zip keys "
                            "that must vary together",
                            "'%s' is already an axis (%s)", c->key,
                            s->cols[j].where);
    for (size_t k = 0; k < s->cfg.nset; k++) {
      char *key = sweep__set_key(s->cfg.set[k]);
      bool same = key != NULL && strcmp(key, c->key) == 0;
      free(key);
      if (same)
        return scn_doc_fail(
            s->doc, at, err, "remove it from 'set', or the axis",
            "'%s' is also set for every point (set.%zu)", c->key, k);
    }
  }
  return SIM_OK;
}

int sweep__read_axes(sweep *s, sim_error *err) {
  for (size_t i = 0; i < s->cfg.naxes; i++) {
    char where[64];
    snprintf(where, sizeof where, "axes.%zu", i);
    const axis_cfg *a = &s->cfg.axes[i];
    int e = a->nzip > 0 ? add_zip(s, a, where, err)
                        : add_key(s, a, where, false, err);
    if (e != SIM_OK)
      return e;
    s->axes[s->naxes - 1].n = s->cols[s->ncols - 1].n;
  }
  return check_duplicates(s, err);
}

/* ---- Seeds ------------------------------------------------------------- */

/* Seeds or replicates, not both; seeds whole numbers; no seed axis. */
static int check_seeds(sweep *s, sim_error *err) {
  const sweep_cfg *f = &s->cfg;
  if (f->nseeds > 0 && f->replicates > 0)
    return scn_doc_fail(s->doc, "replicates", err, "keep one of the two",
                        "give either 'seeds' or 'replicates', not both");
  for (size_t i = 0; i < f->nseeds; i++) {
    uint64_t v;
    char at[64];
    snprintf(at, sizeof at, "seeds.%zu", i);
    if (units_parse_count(f->seeds[i], &v) != 0)
      return scn_doc_fail(s->doc, at, err, "seeds: [1, 2, 3]",
                          "a seed is a whole number, not '%s'", f->seeds[i]);
  }
  for (size_t i = 0; i < s->ncols; i++)
    if (strcmp(s->cols[i].key, "seed") == 0 &&
        (f->nseeds > 0 || f->replicates > 0))
      return scn_doc_fail(s->doc, f->nseeds > 0 ? "seeds" : "replicates", err,
                          NULL, "the seed is already an axis (%s)",
                          s->cols[i].where);
  return SIM_OK;
}

/* The seed column, the last axis: the listed seeds, or base_seed + 0 ..
 * replicates - 1. */
int sweep__add_seeds(sweep *s, int64_t base_seed, sim_error *err) {
  const sweep_cfg *f = &s->cfg;
  int e = check_seeds(s, err);
  if (e != SIM_OK || (f->nseeds == 0 && f->replicates == 0))
    return e;
  size_t n = f->nseeds > 0 ? f->nseeds : (size_t)f->replicates;
  char **texts = calloc(n, sizeof *texts);
  e = texts != NULL ? SIM_OK : sweep__no_memory(err);
  for (size_t i = 0; e == SIM_OK && i < n; i++)
    if ((texts[i] = f->nseeds > 0
                        ? strdup(f->seeds[i])
                        : sweep__format("%lld", (long long)base_seed +
                                                    (long long)i)) == NULL)
      e = sweep__no_memory(err);
  column *c = e == SIM_OK ? add_column(s, false, err) : NULL;
  if (c != NULL) {
    c->src = f->nseeds > 0 ? SRC_SEEDS : SRC_REPLICATES;
    e = column_fill(c, "seed", (const char *const *)texts, n, err);
    s->axes[s->naxes - 1].n = n;
  } else if (e == SIM_OK) {
    e = SIM_ENOMEM;
  }
  sweep__free_strings(texts, n);
  return e;
}

/* Strides and the number of points, refusing grids beyond the limit. */
int sweep__count_points(sweep *s, sim_error *err) {
  size_t n = 1;
  for (size_t a = s->naxes; a-- > 0;) {
    s->axes[a].stride = n;
    if (s->axes[a].n > SWEEP_MAX_POINTS / n)
      return scn_doc_fail(s->doc, "axes", err, "split it into several sweeps",
                          "the grid has more than %d points", SWEEP_MAX_POINTS);
    n *= s->axes[a].n;
  }
  s->npoints = n;
  for (s->width = 4; n > 10000; n /= 10)
    s->width++;
  s->hash = calloc(s->npoints, sizeof *s->hash);
  s->scratch = calloc(s->nfixed + s->ncols + 1, sizeof *s->scratch);
  return s->hash != NULL && s->scratch != NULL ? SIM_OK : sweep__no_memory(err);
}
