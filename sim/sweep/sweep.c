/* sweep.c - the sweep file, its points and their checks (sweep.h):
 * loading, the accessors, the check of every point; sweep_grid.c builds
 * the grid of columns and axes, sweep_shard.c parses shards, sweep_run.c
 * runs the points and writes the summary.
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "sweep_internal.h"

/* ---- The file's schema ------------------------------------------------- */

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

void sweep_destroy(sweep *s) {
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->ncols; i++)
    sweep__column_fini(&s->cols[i]);
  free(s->cols);
  free(s->axes);
  sweep__free_strings(s->fixed, s->nfixed);
  scn_release(&sweep_schema, &s->cfg);
  scn_doc_destroy(s->doc);
  free(s->base);
  free(s->hash);
  free(s->scratch);
  free(s);
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
    s->base = sweep__format("%.*s/%s", (int)(slash - path), path, s->cfg.base);
  return s->base != NULL ? SIM_OK : sweep__no_memory(err);
}

/* The file's `set`, then the command line's; a command-line key that is
 * also an axis is refused at its --set. */
static int read_fixed(sweep *s, const char *const *sets, size_t nsets,
                      sim_error *err) {
  s->nfile_sets = s->cfg.nset;
  s->fixed = calloc(s->cfg.nset + nsets + 1, sizeof *s->fixed);
  if (s->fixed == NULL)
    return sweep__no_memory(err);
  for (size_t i = 0; i < s->cfg.nset + nsets; i++) {
    const char *text = i < s->cfg.nset ? s->cfg.set[i] : sets[i - s->cfg.nset];
    if ((s->fixed[s->nfixed++] = strdup(text)) == NULL)
      return sweep__no_memory(err);
    char *key = i >= s->cfg.nset ? sweep__set_key(text) : NULL;
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
    e = sweep__read_axes(s, err);
  if (e == SIM_OK)
    e = read_fixed(s, sets, nsets, err);
  if (e == SIM_OK)
    e = check_base(s, h, &seed, err);
  if (e == SIM_OK)
    e = sweep__add_seeds(s, seed, err);
  if (e == SIM_OK)
    e = sweep__count_points(s, err);
  return e == SIM_OK ? check_points(s, h, err) : e;
}

sweep *sweep_load(const char *path, const char *const *sets, size_t nsets,
                  const sweep_hooks *hooks, sim_error *err) {
  sweep *s = calloc(1, sizeof *s);
  if (s == NULL) {
    sweep__no_memory(err);
    return NULL;
  }
  s->doc = scn_doc_read_file(path, err);
  if (s->doc == NULL || load_all(s, path, sets, nsets, hooks, err) != SIM_OK) {
    sweep_destroy(s);
    return NULL;
  }
  return s;
}
