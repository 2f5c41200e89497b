/* sweep.c - the sweep file, its grid of points and their checks (sweep.h);
 * sweep_run.c runs the points and writes the summary.
 *
 * Design: the file is bound with scenario.h's schema loader (so its own
 * mistakes get FILE:LINE:COLUMN like a scenario's), and the document stays
 * open for the life of the sweep, so a later check can still point into
 * it. The grid is kept as columns and axes: a column is one key with its
 * values (each value as written, and its "key=value" override); an axis
 * is a run of columns that vary together (one column, or a zip). The seed
 * column, when there is one, is the last axis. Points are not stored: the
 * index of point p on axis a is p / stride[a] % n[a], with stride the
 * product of the later axes' lengths, so a sweep of a million points costs
 * eight bytes a point (the hash of its resolved scenario).
 *
 * Invariants: every column belongs to exactly one axis and columns of one
 * axis have the same number of values; npoints is the product of the
 * axes' lengths and at most SWEEP_MAX_POINTS; scratch holds nfixed + ncols
 * pointers. */
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "units.h"

/* A range may give at most this many values. */
#define SWEEP_MAX_RANGE 100000

/* ---- The file's schema ------------------------------------------------- */

typedef struct range_cfg {
  char *from, *to, *step;
} range_cfg;

typedef struct axis_cfg {
  char *key;
  char **values;
  size_t nvalues;
  range_cfg range;
  struct axis_cfg *zip;
  size_t nzip;
} axis_cfg;

typedef struct sweep_cfg {
  char *base;
  char **set;
  size_t nset;
  axis_cfg *axes;
  size_t naxes;
  char **seeds;
  size_t nseeds;
  int64_t replicates;
} sweep_cfg;

#define TEXT_FIELD(k, st, field, h)                                            \
  {                                                                            \
    .key = k, .type = SCN_STRING, .offset = offsetof(st, field),               \
    .flags = SCN_NONEMPTY, .help = h                                           \
  }

static const scn_field range_fields[] = {
    TEXT_FIELD("from", range_cfg, from, "the first value, e.g. 500kW"),
    TEXT_FIELD("to", range_cfg, to, "the last value (included), e.g. 800kW"),
    TEXT_FIELD("step", range_cfg, step, "the step between values, e.g. 50kW"),
};
static const scn_schema range_schema =
    SCN_SCHEMA("range", range_cfg, range_fields, .check = NULL);

/* The fields an axis and a zipped axis share. */
#define AXIS_COMMON_FIELDS                                                     \
  TEXT_FIELD("key", axis_cfg, key,                                             \
             "a scenario key, as for --set: power.cap, racks.0.count"),        \
      {.key = "values",                                                        \
       .type = SCN_STRINGS,                                                    \
       .offset = offsetof(axis_cfg, values),                                   \
       .count_offset = offsetof(axis_cfg, nvalues),                            \
       .help = "the values, as in a scenario: [500kW, 600kW]"},                \
  {                                                                            \
    .key = "range", .type = SCN_MAP, .offset = offsetof(axis_cfg, range),      \
    .sub = &range_schema, .help = "{from: 500kW, to: 800kW, step: 50kW}"       \
  }

static const scn_field zipped_fields[] = {AXIS_COMMON_FIELDS};
static const scn_schema zipped_schema =
    SCN_SCHEMA("zipped axis", axis_cfg, zipped_fields, .check = NULL);

static const scn_field axis_fields[] = {
    AXIS_COMMON_FIELDS,
    {.key = "zip",
     .type = SCN_LIST,
     .offset = offsetof(axis_cfg, zip),
     .count_offset = offsetof(axis_cfg, nzip),
     .sub = &zipped_schema,
     .help = "keys that vary together, each with values or a range"},
};
static const scn_schema axis_schema =
    SCN_SCHEMA("axis", axis_cfg, axis_fields, .check = NULL);

static const scn_field sweep_fields[] = {
    {.key = "base",
     .type = SCN_STRING,
     .offset = offsetof(sweep_cfg, base),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "the scenario of every point, relative to the sweep file"},
    {.key = "set",
     .type = SCN_STRINGS,
     .offset = offsetof(sweep_cfg, set),
     .count_offset = offsetof(sweep_cfg, nset),
     .help = "overrides of every point, as for --set: [duration=6h]"},
    {.key = "axes",
     .type = SCN_LIST,
     .offset = offsetof(sweep_cfg, axes),
     .count_offset = offsetof(sweep_cfg, naxes),
     .sub = &axis_schema,
     .help = "the grid: a list of {key, values} or {key, range} or {zip}"},
    {.key = "seeds",
     .type = SCN_STRINGS,
     .offset = offsetof(sweep_cfg, seeds),
     .count_offset = offsetof(sweep_cfg, nseeds),
     .help = "replicate seeds: [1, 2, 3]"},
    {.key = "replicates",
     .type = SCN_INT,
     .offset = offsetof(sweep_cfg, replicates),
     .min = 1,
     .max = 100000,
     .help = "replicates with seeds S, S+1, ... (S: the scenario's seed)"},
};
static const scn_schema sweep_schema =
    SCN_SCHEMA("sweep", sweep_cfg, sweep_fields, .check = NULL);

/* ---- The grid ---------------------------------------------------------- */

/* Where a column's values were written, for messages. */
typedef enum src_kind {
  SRC_VALUES,    /* WHERE.values.J */
  SRC_RANGE,     /* WHERE.range.from */
  SRC_SEEDS,     /* seeds.J */
  SRC_REPLICATES /* replicates */
} src_kind;

typedef struct column {
  char *key;     /* normalized: racks.0.count */
  char **values; /* n, as written */
  char **sets;   /* n, "key=value" */
  size_t n;
  size_t axis;
  src_kind src;
  char where[64]; /* "axes.2" or "axes.2.zip.1"; "" for seeds */
} column;

typedef struct axis {
  size_t n;      /* values */
  size_t stride; /* points between two of its values */
} axis;

struct sweep {
  scn_doc *doc;
  sweep_cfg cfg;
  char *base;
  char **fixed; /* the file's set, then the command line's (copies) */
  size_t nfixed, nfile_sets;
  column *cols;
  size_t ncols;
  axis *axes;
  size_t naxes;
  size_t npoints;
  uint64_t *hash;
  int width;
  const char **scratch;
};

static int no_memory(sim_error *err) {
  return sim_error_set(err, SIM_ENOMEM, "out of memory");
}

static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A malloc'd printf, or NULL when out of memory. */
static char *format(const char *fmt, ...) {
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

static void free_strings(char **v, size_t n) {
  for (size_t i = 0; v != NULL && i < n; i++)
    free(v[i]);
  free(v);
}

static void column_fini(column *c) {
  free(c->key);
  free_strings(c->values, c->n);
  free_strings(c->sets, c->n);
}

void sweep_destroy(sweep *s) {
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->ncols; i++)
    column_fini(&s->cols[i]);
  free(s->cols);
  free(s->axes);
  free_strings(s->fixed, s->nfixed);
  scn_release(&sweep_schema, &s->cfg);
  scn_doc_destroy(s->doc);
  free(s->base);
  free(s->hash);
  free(s->scratch);
  free(s);
}

/* Appends an empty column on a new axis or (same_axis) the last one. */
static column *add_column(sweep *s, bool same_axis, sim_error *err) {
  column *cols = realloc(s->cols, (s->ncols + 1) * sizeof *cols);
  if (cols == NULL)
    return no_memory(err), NULL;
  s->cols = cols;
  if (!same_axis) {
    axis *axes = realloc(s->axes, (s->naxes + 1) * sizeof *axes);
    if (axes == NULL)
      return no_memory(err), NULL;
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
    return no_memory(err);
  for (; c->n < n; c->n++) {
    c->values[c->n] = strdup(values[c->n]);
    c->sets[c->n] = format("%s=%s", key, values[c->n]);
    if (c->values[c->n] == NULL || c->sets[c->n] == NULL) {
      c->n++;
      return no_memory(err);
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
    return no_memory(err);
  for (size_t k = 0; k < *n; k++)
    if (((*out)[k] = format("%.15g%s", num + (double)k * step_u, end)) == NULL)
      return no_memory(err);
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
  free_strings(vals, n);
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
static char *set_key(const char *set) {
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
      char *key = set_key(s->cfg.set[k]);
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

static int read_axes(sweep *s, sim_error *err) {
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

static int parse_seed(const char *text, long long *v) {
  char *end;
  errno = 0;
  *v = strtoll(text, &end, 10);
  return *text == '\0' || *end != '\0' || errno != 0 || *v < 0 ? -1 : 0;
}

/* Seeds or replicates, not both; seeds whole numbers; no seed axis. */
static int check_seeds(sweep *s, sim_error *err) {
  const sweep_cfg *f = &s->cfg;
  if (f->nseeds > 0 && f->replicates > 0)
    return scn_doc_fail(s->doc, "replicates", err, "keep one of the two",
                        "give either 'seeds' or 'replicates', not both");
  for (size_t i = 0; i < f->nseeds; i++) {
    long long v;
    char at[64];
    snprintf(at, sizeof at, "seeds.%zu", i);
    if (parse_seed(f->seeds[i], &v) != 0)
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
static int add_seeds(sweep *s, int64_t base_seed, sim_error *err) {
  const sweep_cfg *f = &s->cfg;
  int e = check_seeds(s, err);
  if (e != SIM_OK || (f->nseeds == 0 && f->replicates == 0))
    return e;
  size_t n = f->nseeds > 0 ? f->nseeds : (size_t)f->replicates;
  char **texts = calloc(n, sizeof *texts);
  e = texts != NULL ? SIM_OK : no_memory(err);
  for (size_t i = 0; e == SIM_OK && i < n; i++)
    if ((texts[i] = f->nseeds > 0 ? strdup(f->seeds[i])
                                  : format("%lld", (long long)base_seed +
                                                       (long long)i)) == NULL)
      e = no_memory(err);
  column *c = e == SIM_OK ? add_column(s, false, err) : NULL;
  if (c != NULL) {
    c->src = f->nseeds > 0 ? SRC_SEEDS : SRC_REPLICATES;
    e = column_fill(c, "seed", (const char *const *)texts, n, err);
    s->axes[s->naxes - 1].n = n;
  } else if (e == SIM_OK) {
    e = SIM_ENOMEM;
  }
  free_strings(texts, n);
  return e;
}

/* Strides and the number of points, refusing grids beyond the limit. */
static int count_points(sweep *s, sim_error *err) {
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
  return s->hash != NULL && s->scratch != NULL ? SIM_OK : no_memory(err);
}

/* ---- Accessors ----------------------------------------------------------
 */

const char *sweep_base(const sweep *s) { return s->base; }
const char *sweep_path(const sweep *s) { return scn_doc_name(s->doc); }
const char *sweep_base_written(const sweep *s) { return s->cfg.base; }
size_t sweep_npoints(const sweep *s) { return s->npoints; }
size_t sweep_ncolumns(const sweep *s) { return s->ncols; }

const char *sweep_column_key(const sweep *s, size_t c) {
  return s->cols[c].key;
}

const char *const *sweep_fixed_sets(const sweep *s, size_t *n) {
  *n = s->nfixed;
  return (const char *const *)s->fixed;
}

const char *const *sweep_given_sets(const sweep *s, size_t *n) {
  *n = s->nfixed - s->nfile_sets;
  return (const char *const *)s->fixed + s->nfile_sets;
}

static size_t value_index(const sweep *s, size_t p, size_t c) {
  const axis *a = &s->axes[s->cols[c].axis];
  return p / a->stride % a->n;
}

const char *sweep_point_value(const sweep *s, size_t p, size_t c) {
  return s->cols[c].values[value_index(s, p, c)];
}

size_t sweep_point_sets(const sweep *s, size_t p, const char **out,
                        size_t max) {
  for (size_t c = 0; c < s->ncols && c < max; c++)
    out[c] = s->cols[c].sets[value_index(s, p, c)];
  return s->ncols;
}

uint64_t sweep_point_hash(const sweep *s, size_t p) { return s->hash[p]; }

uint64_t sweep_hash_text(const char *text) {
  uint64_t h = 14695981039346656037u;
  for (const unsigned char *t = (const unsigned char *)text; *t; t++)
    h = (h ^ *t) * 1099511628211u;
  return h;
}

int sweep_point_path(const sweep *s, const char *dir, size_t p,
                     const char *suffix, char *buf, size_t size) {
  size_t len = strlen(dir);
  const char *sep = len > 0 && dir[len - 1] == '/' ? "" : "/";
  int n =
      snprintf(buf, size, "%s%spoint-%0*zu%s", dir, sep, s->width, p, suffix);
  return n >= 0 && (size_t)n < size ? SIM_OK : SIM_ERANGE;
}

/* Every override of point p into s->scratch: fixed, then the point's. */
static size_t all_sets(sweep *s, size_t p) {
  for (size_t i = 0; i < s->nfixed; i++)
    s->scratch[i] = s->fixed[i];
  return s->nfixed + sweep_point_sets(s, p, s->scratch + s->nfixed, s->ncols);
}

/* ---- Checking the points ----------------------------------------------- */

/* Where override j of point p was written in the sweep file: its key
 * (key true) or its value. False for the command line's overrides. */
static bool source_path(const sweep *s, size_t p, size_t j, bool key, char *buf,
                        size_t size) {
  if (j < s->nfile_sets)
    return snprintf(buf, size, "set.%zu", j), true;
  if (j < s->nfixed)
    return false;
  const column *c = &s->cols[j - s->nfixed];
  size_t v = value_index(s, p, j - s->nfixed);
  if (c->src == SRC_SEEDS)
    snprintf(buf, size, key ? "seeds" : "seeds.%zu", v);
  else if (c->src == SRC_REPLICATES)
    snprintf(buf, size, "replicates");
  else if (key)
    snprintf(buf, size, "%s.key", c->where);
  else if (c->src == SRC_RANGE)
    snprintf(buf, size, "%s.range.from", c->where);
  else
    snprintf(buf, size, "%s.values.%zu", c->where, v);
  return true;
}

/* If msg is the loader's "--set TEXT:1:COL: rest" for one of sets, gives
 * its index, whether COL falls on the key, and rest. */
static bool override_error(const char *msg, const char *const *sets, size_t n,
                           size_t *j, bool *on_key, const char **rest) {
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(sets[i]);
    if (strncmp(msg, "--set ", 6) != 0 || strncmp(msg + 6, sets[i], len) != 0 ||
        strncmp(msg + 6 + len, ":1:", 3) != 0)
      continue;
    char *end;
    long col = strtol(msg + 9 + len, &end, 10);
    if (strncmp(end, ": ", 2) != 0)
      continue;
    *j = i;
    *on_key = col <= (long)strcspn(sets[i], "=");
    *rest = end + 2;
    return true;
  }
  return false;
}

/* Turns the loader's error for point p (p = SIZE_MAX: the base with the
 * fixed overrides) into one at the sweep file's axis value. */
static int map_error(sweep *s, size_t p, const char *const *sets, size_t n,
                     sim_error *err) {
  char msg[sizeof err->msg], at[128], what[64] = "";
  size_t j;
  bool on_key;
  const char *rest;
  if (err == NULL || err->code != SIM_EINPUT)
    return err != NULL ? err->code : SIM_EINPUT;
  memcpy(msg, err->msg, sizeof msg);
  if (p != SIZE_MAX)
    snprintf(what, sizeof what, "point %zu: ", p);
  if (override_error(msg, sets, n, &j, &on_key, &rest))
    return source_path(s, p, j, on_key, at, sizeof at)
               ? scn_doc_fail(s->doc, at, err, NULL, "%s%s", what, rest)
               : SIM_EINPUT;
  if (p == SIZE_MAX || s->ncols == 0)
    return SIM_EINPUT; /* the base scenario's own position says it all */
  char point[256] = "";
  for (size_t c = 0; c < s->ncols; c++)
    snprintf(point + strlen(point), sizeof point - strlen(point), "%s%s",
             c > 0 ? " " : "", sets[s->nfixed + c]);
  source_path(s, p, s->nfixed, false, at, sizeof at);
  return scn_doc_fail(s->doc, at, err, NULL, "point %zu (%s): %s", p, point,
                      msg);
}

/* The base with the fixed overrides: a missing base file is reported at
 * 'base', other problems where the loader found them. */
static int check_base(sweep *s, const sweep_hooks *h, int64_t *seed,
                      sim_error *err) {
  char *resolved = NULL;
  int e = h->check(h->user, s->base, (const char *const *)s->fixed, s->nfixed,
                   seed, &resolved, err);
  free(resolved);
  if (e == SIM_EIO) {
    char msg[sizeof err->msg];
    memcpy(msg, err->msg, sizeof msg);
    return scn_doc_fail(s->doc, "base", err, NULL, "the base scenario: %s",
                        msg);
  }
  return e == SIM_OK ? SIM_OK
                     : map_error(s, SIZE_MAX, (const char *const *)s->fixed,
                                 s->nfixed, err);
}

/* Every point through the check hook, telling the checking hook as it
 * goes (it may stop the checks: SIM_ECANCELED). A listing checks none. */
static int check_points(sweep *s, const sweep_hooks *h, sim_error *err) {
  for (size_t p = 0; p < s->npoints && !h->unchecked; p++) {
    if (h->checking != NULL && h->checking(h->user, p, s->npoints) != 0)
      return sim_error_set(err, SIM_ECANCELED,
                           "stopped while checking point %zu of %zu", p,
                           s->npoints);
    size_t n = all_sets(s, p);
    char *resolved = NULL;
    int64_t seed;
    int e = h->check(h->user, s->base, s->scratch, n, &seed, &resolved, err);
    if (e != SIM_OK) {
      free(resolved);
      return map_error(s, p, s->scratch, n, err);
    }
    s->hash[p] = sweep_hash_text(resolved != NULL ? resolved : "");
    free(resolved);
  }
  return SIM_OK;
}

/* ---- Loading ----------------------------------------------------------- */

/* The base path relative to the sweep file's folder (unless absolute). */
static int resolve_base(sweep *s, const char *path, sim_error *err) {
  const char *slash = strrchr(path, '/');
  if (s->cfg.base[0] == '/' || slash == NULL)
    s->base = strdup(s->cfg.base);
  else
    s->base = format("%.*s/%s", (int)(slash - path), path, s->cfg.base);
  return s->base != NULL ? SIM_OK : no_memory(err);
}

/* The file's `set`, then the command line's; a command-line key that is
 * also an axis is refused at its --set. */
static int read_fixed(sweep *s, const char *const *sets, size_t nsets,
                      sim_error *err) {
  s->nfile_sets = s->cfg.nset;
  s->fixed = calloc(s->cfg.nset + nsets + 1, sizeof *s->fixed);
  if (s->fixed == NULL)
    return no_memory(err);
  for (size_t i = 0; i < s->cfg.nset + nsets; i++) {
    const char *text = i < s->cfg.nset ? s->cfg.set[i] : sets[i - s->cfg.nset];
    if ((s->fixed[s->nfixed++] = strdup(text)) == NULL)
      return no_memory(err);
    char *key = i >= s->cfg.nset ? set_key(text) : NULL;
    for (size_t c = 0; key != NULL && c < s->ncols; c++)
      if (strcmp(key, s->cols[c].key) == 0) {
        free(key);
        return sim_error_set(err, SIM_EINPUT,
                             "--set %s:1:1: '%s' is an axis of the sweep "
                             "(%s); it cannot also be set for every point",
                             text, s->cols[c].key, s->cols[c].where);
      }
    free(key);
  }
  return SIM_OK;
}

static int load_all(sweep *s, const char *path, const char *const *sets,
                    size_t nsets, const sweep_hooks *h, sim_error *err) {
  int64_t seed = 0;
  int e = scn_bind(s->doc, &sweep_schema, &s->cfg, NULL, err);
  if (e == SIM_OK)
    e = resolve_base(s, path, err);
  if (e == SIM_OK)
    e = read_axes(s, err);
  if (e == SIM_OK)
    e = read_fixed(s, sets, nsets, err);
  if (e == SIM_OK)
    e = check_base(s, h, &seed, err);
  if (e == SIM_OK)
    e = add_seeds(s, seed, err);
  if (e == SIM_OK)
    e = count_points(s, err);
  return e == SIM_OK ? check_points(s, h, err) : e;
}

sweep *sweep_load(const char *path, const char *const *sets, size_t nsets,
                  const sweep_hooks *hooks, sim_error *err) {
  sweep *s = calloc(1, sizeof *s);
  if (s == NULL) {
    no_memory(err);
    return NULL;
  }
  s->doc = scn_doc_read_file(path, err);
  if (s->doc == NULL || load_all(s, path, sets, nsets, hooks, err) != SIM_OK) {
    sweep_destroy(s);
    return NULL;
  }
  return s;
}

/* ---- Shards ------------------------------------------------------------ */

static int parse_size(const char *text, size_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (*text < '0' || *text > '9' || *end != '\0' || errno != 0)
    return -1;
  *out = (size_t)v;
  return 0;
}

int sweep_shard_parse(const char *text, sweep_shard *out, sim_error *err) {
  char buf[64];
  const char *slash = strchr(text, '/');
  size_t len = slash != NULL ? (size_t)(slash - text) : 0;
  if (slash != NULL && len < sizeof buf) {
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (parse_size(buf, &out->index) == 0 &&
        parse_size(slash + 1, &out->count) == 0 && out->count > 0 &&
        out->index < out->count)
      return SIM_OK;
  }
  return sim_error_set(err, SIM_EINPUT,
                       "--shard takes I/N with 0 <= I < N (shard I of N), "
                       "not '%s'",
                       text);
}

int sweep_shard_from_slurm(const char *id, const char *min, const char *step,
                           const char *count, sweep_shard *out, bool *found,
                           sim_error *err) {
  size_t i, lo = 0, st = 1, n;
  *found = id != NULL && count != NULL;
  if (!*found)
    return SIM_OK;
  if (parse_size(id, &i) != 0 || parse_size(count, &n) != 0 ||
      (min != NULL && parse_size(min, &lo) != 0) ||
      (step != NULL && parse_size(step, &st) != 0) || n == 0 || st == 0 ||
      i < lo || (i - lo) % st != 0 || (i - lo) / st >= n)
    return sim_error_set(
        err, SIM_EINPUT,
        "SLURM_ARRAY_TASK_ID=%s (min %s, step %s) of "
        "SLURM_ARRAY_TASK_COUNT=%s does not make a shard; use a plain "
        "range such as --array=0-%s, or --shard I/N",
        id, min ? min : "-", step ? step : "-", count, count);
  out->index = (i - lo) / st;
  out->count = n;
  return SIM_OK;
}

int sweep_shard_from_step(const char *procid, const char *ntasks,
                          sweep_shard *out, bool *found, sim_error *err) {
  *found = procid != NULL && ntasks != NULL;
  if (!*found)
    return SIM_OK;
  if (parse_size(procid, &out->index) != 0 ||
      parse_size(ntasks, &out->count) != 0 || out->count == 0 ||
      out->index >= out->count)
    return sim_error_set(err, SIM_EINPUT,
                         "SLURM_PROCID=%s of SLURM_STEP_NUM_TASKS=%s does not "
                         "make a shard; use --shard I/N",
                         procid, ntasks);
  return SIM_OK;
}

sweep_shard sweep_shard_split(sweep_shard outer, sweep_shard inner) {
  if (outer.count == 0)
    outer = (sweep_shard){0, 1};
  if (inner.count == 0)
    inner = (sweep_shard){0, 1};
  return (sweep_shard){outer.index + outer.count * inner.index,
                       outer.count * inner.count};
}

bool sweep_shard_has(const sweep_shard *sh, size_t p) {
  return sh->count <= 1 || p % sh->count == sh->index;
}
