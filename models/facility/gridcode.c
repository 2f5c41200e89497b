/* gridcode.c - a grid code's classes and limits, read from a file, and
 * the facility's class and verdict against them (gridcode.h). */
#include "gridcode.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- The metrics ----------------------------------------------------------
 */

typedef struct metric_info {
  const char *key, *units, *long_name;
  units_dim dim;
} metric_info;

static const metric_info metrics[GCODE_NMETRICS] = {
#define GCODE_INFO(id, k, d, u, l)                                             \
  {.key = k, .units = u, .long_name = l, .dim = d},
    GCODE_METRIC_MAP(GCODE_INFO)
#undef GCODE_INFO
};

static const char *const metric_names[GCODE_NMETRICS + 1] = {
#define GCODE_NAME(id, k, d, u, l) k,
    GCODE_METRIC_MAP(GCODE_NAME)
#undef GCODE_NAME
        NULL};

const char *gcode_metric_key(gcode_metric m) { return metrics[m].key; }

const char *gcode_metric_units(gcode_metric m) { return metrics[m].units; }

/* ---- The file -------------------------------------------------------------
 */

static int check_bound(void *obj, const scn_loc *loc, void *user,
                       sim_error *err);
static int check_gcode(void *obj, const scn_loc *loc, void *user,
                       sim_error *err);

#define TEXT_OF(T, k, member, fl, h)                                           \
  {                                                                            \
    .key = k, .type = SCN_STRING, .offset = offsetof(T, member), .flags = fl,  \
    .help = h                                                                  \
  }
#define TEXT(k, member, fl, h) TEXT_OF(gcode_bound, k, member, fl, h)

/* A class's condition and a limit differ only in whether a source is
 * required: every limit is cited. */
#define BOUND_FIELDS(source_flags)                                             \
  {.key = "metric",                                                            \
   .type = SCN_ENUM,                                                           \
   .offset = offsetof(gcode_bound, metric),                                    \
   .names = metric_names,                                                      \
   .flags = SCN_REQUIRED,                                                      \
   .help = "a grid-connection figure (docs/OUTPUT.md)"},                       \
      TEXT("min", min, 0, "the least allowed, in the metric's units"),         \
      TEXT("max", max, 0, "the most allowed, in the metric's units"),          \
      TEXT("source", source, source_flags,                                     \
           "the document and section the figure comes from"),                  \
      TEXT("note", note, 0, "a remark shown with the result")

static const scn_field cond_fields[] = {BOUND_FIELDS(0)};
static const scn_field limit_fields[] = {
    BOUND_FIELDS(SCN_REQUIRED | SCN_NONEMPTY)};

static const scn_schema cond_schema =
    SCN_SCHEMA("condition", gcode_bound, cond_fields, .check = check_bound);
static const scn_schema limit_schema =
    SCN_SCHEMA("limit", gcode_bound, limit_fields, .check = check_bound);

static const scn_field class_fields[] = {
    TEXT_OF(gcode_class, "name", name, SCN_REQUIRED | SCN_NONEMPTY,
            "the class's name"),
    TEXT_OF(gcode_class, "source", source, SCN_REQUIRED | SCN_NONEMPTY,
            "the document that defines the class"),
    {.key = "when",
     .type = SCN_LIST,
     .offset = offsetof(gcode_class, when),
     .sub = &cond_schema,
     .count_offset = offsetof(gcode_class, nwhen),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "conditions that all hold: [{metric, min, max}]"},
};

static const scn_schema class_schema =
    SCN_SCHEMA("grid-code class", gcode_class, class_fields, .check = NULL);

static const scn_field gcode_fields[] = {
    {.key = "name",
     .type = SCN_STRING,
     .offset = offsetof(gcode, name),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "the grid code's name, shown in the verdict"},
    {.key = "source",
     .type = SCN_STRING,
     .offset = offsetof(gcode, source),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "where the grid code comes from"},
    {.key = "classes",
     .type = SCN_LIST,
     .offset = offsetof(gcode, classes),
     .sub = &class_schema,
     .count_offset = offsetof(gcode, nclasses),
     .help = "the classes of load, the first that holds is the facility's"},
    {.key = "limits",
     .type = SCN_LIST,
     .offset = offsetof(gcode, limits),
     .sub = &limit_schema,
     .count_offset = offsetof(gcode, nlimits),
     .help = "the limits: [{metric, min, max, source, note}]"},
};

static int check_gcode(void *obj, const scn_loc *loc, void *user,
                       sim_error *err) {
  (void)user;
  const gcode *g = obj;
  for (size_t i = 0; i < g->nlimits; i++)
    for (size_t k = 0; k < i; k++)
      if (g->limits[k].metric == g->limits[i].metric) {
        char key[48];
        snprintf(key, sizeof key, "limits.%zu.metric", i);
        return scn_fail(loc, key, err,
                        "one limit per metric, with min and max both",
                        "%s is bounded twice (limits %zu and %zu)",
                        metrics[g->limits[i].metric].key, k, i);
      }
  return SIM_OK;
}

const scn_schema gcode_schema =
    SCN_SCHEMA("grid code", gcode, gcode_fields, .check = check_gcode);

/* One side of a bound, in the metric's units; NaN when absent. */
static int parse_side(const scn_loc *loc, const char *key, const char *text,
                      units_dim dim, double *out, sim_error *err) {
  units_problem prob;
  *out = NAN;
  if (text == NULL)
    return SIM_OK;
  if (units_parse(text, dim, out, &prob) != 0)
    return scn_fail(loc, key, err, units_list(dim), "%s", prob.msg);
  return SIM_OK;
}

static int check_bound(void *obj, const scn_loc *loc, void *user,
                       sim_error *err) {
  (void)user;
  gcode_bound *b = obj;
  units_dim dim = metrics[b->metric].dim;
  if (b->min == NULL && b->max == NULL)
    return scn_fail(loc, "metric", err, "min: or max:, in the metric's units",
                    "a bound on %s needs min or max", metrics[b->metric].key);
  int rc = parse_side(loc, "min", b->min, dim, &b->lo, err);
  if (rc == SIM_OK)
    rc = parse_side(loc, "max", b->max, dim, &b->hi, err);
  if (rc == SIM_OK && b->lo > b->hi)
    return scn_fail(loc, "min", err, NULL, "min is above max");
  return rc;
}

int gcode_load(gcode *g, const char *path, sim_error *err) {
  memset(g, 0, sizeof *g);
  sim_error e = {0};
  scn_doc *doc = scn_doc_read_file(path, &e);
  if (doc == NULL) /* the reader's code, even when err is NULL */
    return sim_error_set(err, e.code, "%s", e.msg);
  int rc = scn_bind(doc, &gcode_schema, g, NULL, err);
  scn_doc_destroy(doc);
  return rc;
}

void gcode_fini(gcode *g) { scn_release(&gcode_schema, g); }

/* ---- Class and verdict ----------------------------------------------------
 */

gcode_state gcode_check(const gcode_bound *b, const double *values) {
  double v = values[b->metric];
  if (isnan(v))
    return b->metric >= GCODE_NBASE ? GCODE_NA : GCODE_UNKNOWN;
  bool ok = !(v < b->lo) && !(v > b->hi); /* a NaN side holds */
  return ok ? GCODE_PASS : GCODE_FAIL;
}

const gcode_class *gcode_classify(const gcode *g, const double *values) {
  for (size_t c = 0; g != NULL && c < g->nclasses; c++) {
    size_t held = 0;
    for (size_t i = 0; i < g->classes[c].nwhen; i++)
      held += gcode_check(&g->classes[c].when[i], values) == GCODE_PASS;
    if (held == g->classes[c].nwhen)
      return &g->classes[c];
  }
  return NULL;
}

gcode_state gcode_verdict(const gcode *g, const double *values) {
  gcode_state v = GCODE_PASS;
  for (size_t i = 0; g != NULL && i < g->nlimits; i++) {
    gcode_state s = gcode_check(&g->limits[i], values);
    if (s == GCODE_FAIL)
      return GCODE_FAIL;
    if (s == GCODE_UNKNOWN)
      v = GCODE_UNKNOWN;
  }
  return v;
}

static const char *const state_names[] = {"PASS", "FAIL", "UNKNOWN", "N/A"};

/* A figure in its units, shares in percent: "34.2%", "2.6e+09 W". */
static void format_value(double v, size_t m, char *buf, size_t size) {
  if (strcmp(metrics[m].units, "1") == 0)
    snprintf(buf, size, "%.3g%%", 100 * v);
  else
    snprintf(buf, size, "%.4g %s", v, metrics[m].units);
}

/* The first failed limit as "; band_share 99.9% is above max 20%", or "". */
static void first_failure(const gcode *g, const double *values, char *buf,
                          size_t size) {
  buf[0] = '\0';
  for (size_t i = 0; i < g->nlimits; i++) {
    const gcode_bound *b = &g->limits[i];
    if (gcode_check(b, values) != GCODE_FAIL)
      continue;
    bool over = values[b->metric] > b->hi;
    char v[64];
    format_value(values[b->metric], (size_t)b->metric, v, sizeof v);
    snprintf(buf, size, "; %s %s is %s %s %s", metrics[b->metric].key, v,
             over ? "above" : "below", over ? "max" : "min",
             over ? b->max : b->min);
    return;
  }
}

void gcode_describe(const gcode *g, const double *values, char *buf,
                    size_t size) {
  size_t met = 0, apply = 0;
  for (size_t i = 0; i < g->nlimits; i++) {
    gcode_state st = gcode_check(&g->limits[i], values);
    met += st == GCODE_PASS;
    apply += st != GCODE_NA;
  }
  const gcode_class *c = gcode_classify(g, values);
  char why[256];
  first_failure(g, values, why, sizeof why);
  snprintf(buf, size, "%s: %s, %zu of %zu limits met; class %s%s", g->name,
           state_names[gcode_verdict(g, values)], met, apply,
           c != NULL ? c->name : "none", why);
}

/* ---- The group ------------------------------------------------------------
 */

/* The limit on metric m, or NULL: a file bounds each metric once. */
static const gcode_bound *limit_on(const gcode *g, size_t m) {
  for (size_t i = 0; g != NULL && i < g->nlimits; i++)
    if ((size_t)g->limits[i].metric == m)
      return &g->limits[i];
  return NULL;
}

/* The table's columns, a row per metric: text cells are static or
 * borrowed from g. */
typedef struct figure_rows {
  const char *key[GCODE_NMETRICS], *units[GCODE_NMETRICS];
  const char *long_name[GCODE_NMETRICS], *result[GCODE_NMETRICS];
  const char *source[GCODE_NMETRICS];
  double value[GCODE_NMETRICS], lo[GCODE_NMETRICS], hi[GCODE_NMETRICS];
} figure_rows;

static void fill_rows(const gcode *g, const double *values, figure_rows *r) {
  for (size_t m = 0; m < GCODE_NMETRICS; m++) {
    const gcode_bound *b = limit_on(g, m);
    r->key[m] = metrics[m].key;
    r->units[m] = metrics[m].units;
    r->long_name[m] = metrics[m].long_name;
    r->value[m] = values[m];
    r->lo[m] = b != NULL ? b->lo : NAN;
    r->hi[m] = b != NULL ? b->hi : NAN;
    r->result[m] = b != NULL ? state_names[gcode_check(b, values)] : "";
    r->source[m] = b != NULL ? b->source : "";
  }
}

/* The rows the table has: the disturbance figures' only when known. */
static size_t table_rows(const double *values) {
  for (size_t m = GCODE_NBASE; m < GCODE_NMETRICS; m++)
    if (!isnan(values[m]))
      return GCODE_NMETRICS;
  return GCODE_NBASE;
}

static int write_table(const gcode *g, const double *values, tel_sink *sink) {
  figure_rows r;
  fill_rows(g, values, &r);
  const tel_table_column cols[] = {
      {"metric", "", "the figure's key", NULL, r.key},
      {"value", "mixed",
       "the run's figure, in the row's units; NaN: the "
       "run cannot tell",
       r.value, NULL},
      {"units", "", "the figure's units", NULL, r.units},
      {"long_name", "", "what the figure is", NULL, r.long_name},
      {"limit_min", "mixed", "the grid code's least allowed; NaN: none", r.lo,
       NULL},
      {"limit_max", "mixed", "the grid code's most allowed; NaN: none", r.hi,
       NULL},
      {"result", "",
       "PASS, FAIL, UNKNOWN (the run cannot tell) or empty "
       "(no limit)",
       NULL, r.result},
      {"source", "", "where the limit comes from", NULL, r.source},
  };
  const tel_table t = {"grid_connection", cols, sizeof cols / sizeof cols[0],
                       table_rows(values), "figure"};
  return tel_put_table(sink, &t);
}

/* The grid code, the class and the verdict, as the summary's strings. */
static const tel_metric text_metrics[] = {
    {"grid_code", NULL, "Grid code", "Grid"},
    {"grid_class", NULL, "Grid-code class", "Grid"},
    {"grid_verdict", NULL, "Grid-code verdict", "Grid"},
};

const tel_metric *gcode_summary_metrics(size_t *n) {
  *n = sizeof text_metrics / sizeof text_metrics[0];
  return text_metrics;
}

static int write_texts(const gcode *g, const char *path, const double *values,
                       tel_sink *sink) {
  const gcode_class *c = gcode_classify(g, values);
  char code[1024];
  snprintf(code, sizeof code, "%s (%s)", g != NULL ? g->name : "none",
           path != NULL ? path : "no grid_code in the scenario");
  int rc = tel_put_summary_str(sink, &text_metrics[0], code);
  if (rc == SIM_OK)
    rc = tel_put_summary_str(sink, &text_metrics[1],
                             c != NULL ? c->name : "none");
  if (rc == SIM_OK)
    rc = tel_put_summary_str(sink, &text_metrics[2],
                             g != NULL ? state_names[gcode_verdict(g, values)]
                                       : "none");
  return rc;
}

int gcode_write(const gcode *g, const char *path, const double *values,
                tel_sink *sink, sim_error *err) {
  int rc = write_table(g, values, sink);
  if (rc == SIM_OK)
    rc = write_texts(g, path, values, sink);
  return rc == SIM_OK ? SIM_OK : sim_error_set(err, rc, "%s", tel_errmsg(sink));
}
