/* test_tel.c - the telemetry wrappers (tel.c) and the memory sink
 * (tel_memory.c): declarations checked once for every sink, rows read back
 * as they went in, summary, texts, commit and the errors of each call. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "tel.h"

static const tel_column facility_cols[] = {
    {"power_w", "W", "facility power drawn from the feed"},
    {"pue", "1", "power usage effectiveness"},
};
static const tel_group facility = {"facility", facility_cols, 2, 1, NULL, NULL};

static const tel_column rack_cols[] = {
    {"power_w", "W", "rack power"},
    {"inlet_c", "degC", "rack inlet temperature"},
};
static const char *const rack_labels[] = {"r0", "r1", "r2"};
static const tel_group racks = {"racks", rack_cols, 2, 3, "rack", rack_labels};

static const tel_column chat_cols[] = {
    {"tokens_per_s", "1/s", "tokens served per second"},
};
static const tel_group chat = {"services/chat", chat_cols, 1, 1, NULL, NULL};

/* A fresh memory sink per test, destroyed by the teardown. */
static int setup(void **state) {
  *state = tel_memory_create();
  return *state == NULL ? -1 : 0;
}

static int teardown(void **state) {
  tel_destroy(*state);
  return 0;
}

/* Metrics as models declare them, and declarations the wrappers refuse. */
static const tel_metric m_k = {"k", "1", "k", "Run"};
static const tel_metric m_energy = {"energy_mwh", "MWh", "Facility energy",
                                    "Energy"};
static const tel_metric m_pue = {"mean_pue", "1", "PUE", "Energy"};
static const tel_metric m_basis = {"carbon_basis", NULL, "Carbon basis",
                                   "Grid"};
static const tel_metric bad_metrics[] = {
    {NULL, "1", "no key", "Run"},
    {"", "1", "empty key", "Run"},
    {"a/b", "1", "a path", "Run"},
    {"units", "1", "the sink's own key", "Run"},
    {"long_names", "1", "the sink's own key", "Run"},
    {"groups", "1", "the sink's own key", "Run"},
    {"k", NULL, "a number without units", "Run"},
    {"k", "1", NULL, "Run"},
    {"k", "1", "no group", NULL},
};

static void assert_errmsg_has(const tel_sink *s, const char *part) {
  const char *msg = tel_errmsg(s);
  if (strstr(msg, part) == NULL)
    fail_msg("message \"%s\" lacks \"%s\"", msg, part);
}

/* ---- Wrappers ---------------------------------------------------------- */

static void test_null_sink(void **state) {
  (void)state;
  double v = 0;
  size_t id;
  tel_destroy(NULL);
  assert_non_null(tel_errmsg(NULL));
  assert_int_equal(tel_open_group(NULL, &facility, &id), SIM_EINVAL);
  assert_int_equal(tel_append(NULL, 0, 0.0, &v), SIM_EINVAL);
  assert_int_equal(tel_put_summary(NULL, &m_k, 1.0), SIM_EINVAL);
  assert_int_equal(tel_put_meta_str(NULL, "k", "v"), SIM_EINVAL);
  assert_int_equal(tel_put_meta_int(NULL, "k", 1), SIM_EINVAL);
  assert_int_equal(tel_put_text(NULL, "k", "v"), SIM_EINVAL);
  assert_int_equal(tel_commit(NULL), SIM_EINVAL);
  assert_null(tel_memory_column(NULL, "facility", "pue", NULL, NULL));
  assert_int_equal(tel_memory_committed(NULL), 0);
}

/* A sink that records what reached its ops, to check the wrappers pass
 * their arguments through and stop bad ones before the sink. */
typedef struct spy_sink {
  tel_sink base;
  int calls;
  size_t id;
  double time_s, value;
  int64_t inum;
  const char *key, *str;
  int destroyed;
} spy_sink;

static int spy_open(tel_sink *s, const tel_group *g, size_t *id) {
  spy_sink *p = (spy_sink *)s;
  p->calls++;
  p->key = g->name;
  *id = 7;
  return SIM_OK;
}

static int spy_append(tel_sink *s, size_t id, double t, const double *v) {
  spy_sink *p = (spy_sink *)s;
  p->calls++;
  p->id = id;
  p->time_s = t;
  p->value = v[0];
  return SIM_OK;
}

static int spy_summary(tel_sink *s, const char *key, double value) {
  spy_sink *p = (spy_sink *)s;
  p->calls++;
  p->key = key;
  p->value = value;
  return SIM_OK;
}

static int spy_meta_str(tel_sink *s, const char *key, const char *value) {
  spy_sink *p = (spy_sink *)s;
  p->calls++;
  p->key = key;
  p->str = value;
  return SIM_OK;
}

static int spy_meta_int(tel_sink *s, const char *key, int64_t value) {
  spy_sink *p = (spy_sink *)s;
  p->calls++;
  p->key = key;
  p->inum = value;
  return SIM_OK;
}

static int spy_text(tel_sink *s, const char *name, const char *text) {
  return spy_meta_str(s, name, text);
}

static int spy_table(tel_sink *s, const tel_table *t) {
  return spy_meta_str(s, t->name, t->name);
}

static int spy_group_attr(tel_sink *s, const char *group, const char *key,
                          double value) {
  (void)group;
  return spy_summary(s, key, value);
}

static int spy_commit(tel_sink *s) {
  ((spy_sink *)s)->calls++;
  return SIM_ESTATE;
}

static void spy_destroy(tel_sink *s) { ((spy_sink *)s)->destroyed = 1; }

static const tel_sink_ops spy_ops = {
    .open_group = spy_open,
    .append = spy_append,
    .put_summary = spy_summary,
    .put_meta_str = spy_meta_str,
    .put_meta_int = spy_meta_int,
    .put_text = spy_text,
    .put_group_attr = spy_group_attr,
    .put_table = spy_table,
    .commit = spy_commit,
    .destroy = spy_destroy,
};

static void test_wrappers_forward(void **state) {
  (void)state;
  spy_sink spy = {.base = {.ops = &spy_ops}};
  tel_sink *s = &spy.base;
  size_t id = 0;
  double v = 2.5;
  assert_int_equal(tel_open_group(s, &facility, &id), SIM_OK);
  assert_int_equal(id, 7);
  assert_string_equal(spy.key, "facility");
  assert_int_equal(tel_append(s, 3, 1.5, &v), SIM_OK);
  assert_int_equal(spy.id, 3);
  assert_close(spy.time_s, 1.5, 0, 0);
  assert_close(spy.value, 2.5, 0, 0);
  assert_int_equal(tel_put_summary(s, &m_energy, 4.0), SIM_OK);
  assert_string_equal(spy.key, "energy_mwh");
  assert_int_equal(tel_put_meta_str(s, "scenario_name", "q"), SIM_OK);
  assert_string_equal(spy.str, "q");
  assert_int_equal(tel_put_meta_int(s, "seed", -42), SIM_OK);
  assert_int_equal(spy.inum, -42);
  assert_int_equal(tel_put_text(s, "scenario", "a: 1\n"), SIM_OK);
  assert_string_equal(spy.str, "a: 1\n");
  assert_int_equal(tel_commit(s), SIM_ESTATE); /* the sink's code */
  assert_int_equal(spy.calls, 7);
  /* A memory read-back on another kind of sink finds nothing. */
  assert_null(tel_memory_times(s, "facility", NULL));
  double out;
  assert_int_equal(tel_memory_summary(s, "energy_mwh", &out), SIM_EINVAL);
  tel_destroy(s);
  assert_true(spy.destroyed);
}

/* Bad arguments stop in the wrapper: the sink is never called. */
static void test_wrappers_reject(void **state) {
  (void)state;
  spy_sink spy = {.base = {.ops = &spy_ops}};
  tel_sink *s = &spy.base;
  size_t id;
  assert_int_equal(tel_open_group(s, NULL, &id), SIM_EINVAL);
  assert_int_equal(tel_open_group(s, &facility, NULL), SIM_EINVAL);
  assert_int_equal(tel_append(s, 0, 0.0, NULL), SIM_EINVAL);
  assert_int_equal(tel_put_summary(s, NULL, 1.0), SIM_EINVAL);
  for (size_t i = 0; i < sizeof bad_metrics / sizeof bad_metrics[0]; i++)
    assert_int_equal(tel_put_summary(s, &bad_metrics[i], 1.0), SIM_EINVAL);
  assert_int_equal(tel_put_summary_str(s, &m_energy, "x"), SIM_EINVAL);
  assert_int_equal(tel_put_summary_str(s, &m_basis, NULL), SIM_EINVAL);
  assert_int_equal(tel_put_meta_str(s, "k", NULL), SIM_EINVAL);
  assert_int_equal(tel_put_meta_str(s, "complete", "yes"), SIM_EINVAL);
  assert_errmsg_has(s, "complete");
  assert_int_equal(tel_put_meta_int(s, "complete", 1), SIM_EINVAL);
  assert_int_equal(tel_put_text(s, "a/b", "x"), SIM_EINVAL);
  assert_int_equal(tel_put_text(s, "scenario", NULL), SIM_EINVAL);
  assert_int_equal(spy.calls, 0);
}

/* ---- Declarations: table of bad groups --------------------------------- */

static const tel_column one_col[] = {{"x", "1", "x"}};
static const tel_column dup_cols[] = {{"x", "1", "x"}, {"x", "W", "again"}};
static const tel_column time_col[] = {{"time", "s", "clashes with time"}};
static const tel_column axis_col[] = {{"rack", "1", "clashes with axis"}};
static const tel_column slash_col[] = {{"a/b", "1", "slash"}};
static const tel_column no_units[] = {{"x", NULL, "x"}};
static const tel_column no_long[] = {{"x", "1", NULL}};
static const char *const two_labels[] = {"a", "b"};
static const char *const null_label[] = {"a", NULL};

typedef struct bad_group_case {
  const char *name;
  tel_group group;
} bad_group_case;

static const bad_group_case bad_groups[] = {
    {"null name", {NULL, one_col, 1, 1, NULL, NULL}},
    {"empty name", {"", one_col, 1, 1, NULL, NULL}},
    {"leading slash", {"/facility", one_col, 1, 1, NULL, NULL}},
    {"trailing slash", {"facility/", one_col, 1, 1, NULL, NULL}},
    {"double slash", {"services//chat", one_col, 1, 1, NULL, NULL}},
    {"dot component", {"services/./chat", one_col, 1, 1, NULL, NULL}},
    {"dotdot", {"..", one_col, 1, 1, NULL, NULL}},
    {"no columns", {"g", one_col, 0, 1, NULL, NULL}},
    {"null columns", {"g", NULL, 1, 1, NULL, NULL}},
    {"width 0", {"g", one_col, 1, 0, NULL, NULL}},
    {"huge width", {"g", one_col, 1, (size_t)-1 / 4, "r", two_labels}},
    {"no axis name", {"g", one_col, 1, 2, NULL, two_labels}},
    {"axis named time", {"g", one_col, 1, 2, "time", two_labels}},
    {"no axis labels", {"g", one_col, 1, 2, "rack", NULL}},
    {"null axis label", {"g", one_col, 1, 2, "rack", null_label}},
    {"duplicate column", {"g", dup_cols, 2, 1, NULL, NULL}},
    {"column named time", {"g", time_col, 1, 1, NULL, NULL}},
    {"column named as axis", {"g", axis_col, 1, 2, "rack", two_labels}},
    {"column with slash", {"g", slash_col, 1, 1, NULL, NULL}},
    {"column without units", {"g", no_units, 1, 1, NULL, NULL}},
    {"column without long name", {"g", no_long, 1, 1, NULL, NULL}},
};

static void test_bad_group(void **state) {
  const bad_group_case *c = *state;
  tel_sink *s = tel_memory_create();
  assert_non_null(s);
  size_t id = 99;
  double v[4] = {0};
  int rc = tel_open_group(s, &c->group, &id);
  if (rc != SIM_EINVAL)
    fail_msg("%s: got %s", c->name, sim_err_name(rc));
  assert_int_equal(id, 99);
  assert_true(strlen(tel_errmsg(s)) > 0);
  /* Nothing was declared. */
  assert_int_equal(tel_append(s, 0, 0.0, v), SIM_EINVAL);
  tel_destroy(s);
}

/* ---- Memory sink ------------------------------------------------------- */

static void test_memory_1d(void **state) {
  tel_sink *s = *state;
  size_t id, rows = 99, width = 99;
  assert_int_equal(tel_open_group(s, &facility, &id), SIM_OK);
  /* Declared and empty: storage exists, no rows. */
  assert_non_null(tel_memory_column(s, "facility", "pue", &rows, &width));
  assert_int_equal(rows, 0);
  assert_int_equal(width, 1);
  for (int i = 0; i < 5; i++) {
    double v[2] = {1e6 * i, 1.1 + 0.01 * i};
    assert_int_equal(tel_append(s, id, 10.0 * (i + 1), v), SIM_OK);
  }
  const double *t = tel_memory_times(s, "facility", &rows);
  assert_int_equal(rows, 5);
  const double *p = tel_memory_column(s, "facility", "power_w", &rows, &width);
  const double *pue = tel_memory_column(s, "facility", "pue", NULL, NULL);
  assert_int_equal(rows, 5);
  assert_int_equal(width, 1);
  for (int i = 0; i < 5; i++) {
    assert_close(t[i], 10.0 * (i + 1), 0, 0);
    assert_close(p[i], 1e6 * i, 0, 0);
    assert_close(pue[i], 1.1 + 0.01 * i, 0, 0);
  }
}

static void test_memory_2d(void **state) {
  tel_sink *s = *state;
  size_t id, rows, width;
  assert_int_equal(tel_open_group(s, &racks, &id), SIM_OK);
  for (int i = 0; i < 4; i++) {
    double v[6]; /* v[c * width + j]: column c at rack j */
    for (int c = 0; c < 2; c++)
      for (int j = 0; j < 3; j++)
        v[c * 3 + j] = 100.0 * c + 10.0 * j + i;
    assert_int_equal(tel_append(s, id, i, v), SIM_OK);
  }
  for (int c = 0; c < 2; c++) {
    const double *col =
        tel_memory_column(s, "racks", rack_cols[c].name, &rows, &width);
    assert_non_null(col);
    assert_int_equal(rows, 4);
    assert_int_equal(width, 3);
    for (int i = 0; i < 4; i++) /* [rows][width] */
      for (int j = 0; j < 3; j++)
        assert_close(col[i * 3 + j], 100.0 * c + 10.0 * j + i, 0, 0);
  }
}

/* Many rows, over several growths, in two groups at once. */
static void test_memory_many_rows(void **state) {
  tel_sink *s = *state;
  size_t a, b, rows;
  assert_int_equal(tel_open_group(s, &facility, &a), SIM_OK);
  assert_int_equal(tel_open_group(s, &chat, &b), SIM_OK);
  assert_int_not_equal(a, b);
  for (int i = 0; i < 10000; i++) {
    double v[2] = {i, -i};
    assert_int_equal(tel_append(s, a, i, v), SIM_OK);
    if (i % 3 == 0)
      assert_int_equal(tel_append(s, b, i, v), SIM_OK);
  }
  const double *p = tel_memory_column(s, "facility", "pue", &rows, NULL);
  assert_int_equal(rows, 10000);
  assert_close(p[9999], -9999, 0, 0);
  const double *c =
      tel_memory_column(s, "services/chat", "tokens_per_s", &rows, NULL);
  assert_int_equal(rows, 3334);
  assert_close(c[3333], 9999, 0, 0);
}

static void test_memory_unknown_names(void **state) {
  tel_sink *s = *state;
  size_t id, rows = 5, width = 5;
  assert_int_equal(tel_open_group(s, &facility, &id), SIM_OK);
  assert_null(tel_memory_column(s, "nope", "pue", &rows, &width));
  assert_int_equal(rows, 0);
  assert_int_equal(width, 0);
  assert_null(tel_memory_column(s, "facility", "nope", &rows, &width));
  assert_null(tel_memory_column(s, NULL, "pue", NULL, NULL));
  assert_null(tel_memory_column(s, "facility", NULL, NULL, NULL));
  assert_null(tel_memory_times(s, "nope", &rows));
  assert_int_equal(rows, 0);
  assert_null(tel_memory_text(s, "nope"));
  double v = 7;
  assert_int_equal(tel_memory_summary(s, "nope", &v), SIM_ENOTFOUND);
  assert_close(v, 7, 0, 0);
}

static void test_memory_unknown_id(void **state) {
  tel_sink *s = *state;
  size_t id;
  double v[2] = {1, 2};
  assert_int_equal(tel_append(s, 0, 0.0, v), SIM_EINVAL);
  assert_int_equal(tel_open_group(s, &facility, &id), SIM_OK);
  assert_int_equal(tel_append(s, id + 1, 0.0, v), SIM_EINVAL);
  assert_errmsg_has(s, "unknown group id 1");
  assert_int_equal(tel_append(s, id, 0.0, v), SIM_OK); /* still usable */
}

static void test_memory_duplicate_group(void **state) {
  tel_sink *s = *state;
  size_t id;
  assert_int_equal(tel_open_group(s, &facility, &id), SIM_OK);
  assert_int_equal(tel_open_group(s, &facility, &id), SIM_EINVAL);
  assert_errmsg_has(s, "facility");
}

typedef struct time_case {
  const char *name;
  double first, second;
  int rc;
} time_case;

static const time_case time_cases[] = {
    {"increasing", 1.0, 2.0, SIM_OK},        {"equal", 1.0, 1.0, SIM_OK},
    {"backwards", 2.0, 1.0, SIM_EINVAL},     {"nan", 1.0, NAN, SIM_EINVAL},
    {"infinite", 1.0, INFINITY, SIM_EINVAL},
};

static void test_memory_time_order(void **state) {
  const time_case *c = *state;
  tel_sink *s = tel_memory_create();
  size_t id, rows;
  double v[2] = {0, 0};
  assert_int_equal(tel_open_group(s, &facility, &id), SIM_OK);
  assert_int_equal(tel_append(s, id, c->first, v), SIM_OK);
  int rc = tel_append(s, id, c->second, v);
  if (rc != c->rc)
    fail_msg("%s: got %s", c->name, sim_err_name(rc));
  tel_memory_times(s, "facility", &rows);
  assert_int_equal(rows, c->rc == SIM_OK ? 2 : 1);
  tel_destroy(s);
}

static void test_memory_summary(void **state) {
  tel_sink *s = *state;
  double v = 0;
  assert_int_equal(tel_put_summary(s, &m_energy, 12.5), SIM_OK);
  assert_int_equal(tel_put_summary(s, &m_pue, 1.2), SIM_OK);
  assert_int_equal(tel_memory_summary(s, "energy_mwh", &v), SIM_OK);
  assert_close(v, 12.5, 0, 0);
  assert_int_equal(tel_put_summary(s, &m_energy, 13.0), SIM_OK);
  assert_int_equal(tel_memory_summary(s, "energy_mwh", &v), SIM_OK);
  assert_close(v, 13.0, 0, 0); /* the last put wins */
  assert_int_equal(tel_memory_summary(s, "mean_pue", &v), SIM_OK);
  assert_close(v, 1.2, 0, 0);
  assert_int_equal(tel_memory_summary(s, "energy_mwh", NULL), SIM_EINVAL);
  /* Text metrics sit beside the numbers. */
  assert_int_equal(tel_put_summary_str(s, &m_basis, "direct"), SIM_OK);
  assert_int_equal(tel_put_summary_str(s, &m_basis, "lifecycle"), SIM_OK);
  assert_string_equal(tel_memory_summary_str(s, "carbon_basis"), "lifecycle");
  assert_null(tel_memory_summary_str(s, "energy_mwh"));
  assert_int_equal(tel_put_summary_str(s, &m_basis, NULL), SIM_EINVAL);
}

/* The declarations reach the file at commit, as JSON in the order they
 * came: a NaN metric is declared without a value, a key put again keeps
 * its place with the new declaration, a text has no units, and a long
 * name is escaped as JSON wants. */
static void test_memory_metrics(void **state) {
  tel_sink *s = *state;
  static const tel_metric quoted = {"mean_pue", "1", "the \"PUE\"\\ratio",
                                    "Energy"};
  double v = 0;
  assert_int_equal(tel_put_summary(s, &m_energy, 1.5), SIM_OK);
  assert_int_equal(tel_put_summary(s, &m_pue, NAN), SIM_OK);
  assert_int_equal(tel_memory_summary(s, "mean_pue", &v), SIM_ENOTFOUND);
  assert_int_equal(tel_put_summary_str(s, &m_basis, "direct"), SIM_OK);
  assert_int_equal(tel_put_summary(s, &quoted, 1.25), SIM_OK);
  size_t n;
  const tel_metric *m = tel_metrics(s, &n);
  assert_int_equal(n, 3);
  assert_string_equal(m[1].long_name, quoted.long_name);
  assert_null(tel_memory_summary_str(s, "units"));
  assert_int_equal(tel_commit(s), SIM_OK);
  assert_string_equal(tel_memory_summary_str(s, "units"),
                      "{\"energy_mwh\": \"MWh\", \"mean_pue\": \"1\"}");
  assert_string_equal(tel_memory_summary_str(s, "long_names"),
                      "{\"energy_mwh\": \"Facility energy\", \"mean_pue\": "
                      "\"the \\\"PUE\\\"\\\\ratio\", \"carbon_basis\": "
                      "\"Carbon basis\"}");
  assert_string_equal(tel_memory_summary_str(s, "groups"),
                      "{\"energy_mwh\": \"Energy\", \"mean_pue\": "
                      "\"Energy\", \"carbon_basis\": \"Grid\"}");
}

/* A run that declares no metric writes none of the three attributes. */
static void test_memory_no_metrics(void **state) {
  tel_sink *s = *state;
  size_t n = 1;
  assert_null(tel_metrics(s, &n));
  assert_int_equal(n, 0);
  assert_int_equal(tel_commit(s), SIM_OK);
  assert_null(tel_memory_summary_str(s, "units"));
}

static void test_memory_text(void **state) {
  tel_sink *s = *state;
  char text[64];
  strcpy(text, "name: quick\nseed: 1\n");
  assert_int_equal(tel_put_text(s, "scenario", text), SIM_OK);
  text[0] = 'X'; /* the sink keeps its own copy */
  assert_string_equal(tel_memory_text(s, "scenario"), "name: quick\nseed: 1\n");
  assert_int_equal(tel_put_text(s, "scenario", "again"), SIM_EINVAL);
  assert_errmsg_has(s, "scenario");
  assert_int_equal(tel_put_text(s, "empty", ""), SIM_OK);
  assert_string_equal(tel_memory_text(s, "empty"), "");
}

static const double job_energy[] = {1.5e9, 2.5e9, 0};
static const char *const job_names[] = {"pretrain", "chat", "idle"};
static const tel_table_column job_cols[] = {
    {"energy_j", "J", "energy attributed", job_energy, NULL},
    {"name", NULL, "what ran", NULL, job_names},
};
static const tel_table jobs = {"jobs", job_cols, 2, 3, "job"};

/* A table keeps copies of its cells, numbers and text, and a name once. */
static void test_memory_table(void **state) {
  tel_sink *s = *state;
  assert_int_equal(tel_put_table(s, &jobs), SIM_OK);
  size_t rows = 0;
  const double *e = tel_memory_table_column(s, "jobs", "energy_j", &rows);
  assert_int_equal(rows, 3);
  assert_non_null(e);
  assert_true(e[1] == 2.5e9 && e[2] == 0);
  assert_string_equal(tel_memory_table_text(s, "jobs", "name", 2), "idle");
  assert_null(tel_memory_table_text(s, "jobs", "name", 3));
  assert_null(tel_memory_table_column(s, "jobs", "name", &rows));
  assert_null(tel_memory_table_column(s, "nope", "energy_j", &rows));
  assert_int_equal(tel_put_table(s, &jobs), SIM_EINVAL);
}

/* A group attribute names a declared group; the last put wins. */
static void test_memory_group_attr(void **state) {
  tel_sink *s = *state;
  size_t id;
  double v = 0;
  assert_int_equal(tel_put_group_attr(s, "facility", "n", 1), SIM_EINVAL);
  assert_int_equal(tel_open_group(s, &facility, &id), SIM_OK);
  assert_int_equal(tel_put_group_attr(s, "facility", "n", 1), SIM_OK);
  assert_int_equal(tel_put_group_attr(s, "facility", "n", 7), SIM_OK);
  assert_int_equal(tel_memory_group_attr(s, "facility", "n", &v), SIM_OK);
  assert_true(v == 7);
  assert_int_equal(tel_memory_group_attr(s, "facility", "m", &v),
                   SIM_ENOTFOUND);
  assert_int_equal(tel_put_group_attr(s, "facility", "a/b", 1), SIM_EINVAL);
}

/* A column with both or neither of numbers and text, a NULL cell, a
 * name twice or a row axis named as a column is the caller's bug, refused
 * before the sink sees it. */
static void test_memory_bad_table(void **state) {
  tel_sink *s = *state;
  const char *holes[] = {"a", NULL, "c"};
  tel_table_column bad[][2] = {
      {{"x", "J", "x", job_energy, job_names}, job_cols[1]},
      {{"x", "J", "x", NULL, NULL}, job_cols[1]},
      {{"x", NULL, "x", NULL, holes}, job_cols[0]},
      {job_cols[0], job_cols[0]},
  };
  for (size_t i = 0; i < N_OF(bad); i++) {
    tel_table t = {"jobs", bad[i], 2, 3, NULL};
    assert_int_equal(tel_put_table(s, &t), SIM_EINVAL);
  }
  /* The row axis is a leaf name that no column has. */
  static const char *const bad_axes[] = {"name", "a/b", "", ".."};
  for (size_t i = 0; i < N_OF(bad_axes); i++) {
    tel_table t = {"jobs", job_cols, 2, 3, bad_axes[i]};
    assert_int_equal(tel_put_table(s, &t), SIM_EINVAL);
  }
  assert_int_equal(tel_put_table(s, &jobs), SIM_OK);
}

static void test_memory_meta(void **state) {
  tel_sink *s = *state;
  assert_int_equal(tel_put_meta_str(s, "scenario_name", "a"), SIM_OK);
  assert_int_equal(tel_put_meta_str(s, "scenario_name", "b"), SIM_OK);
  assert_int_equal(tel_put_meta_int(s, "seed", INT64_MAX), SIM_OK);
  assert_int_equal(tel_put_meta_int(s, "scenario_name", 3), SIM_OK);
  assert_int_equal(tel_put_meta_str(s, "seed", "x"), SIM_OK);
}

/* After commit every call but destroy is SIM_ESTATE; data stay readable. */
static void test_memory_commit(void **state) {
  tel_sink *s = *state;
  size_t id, rows;
  double v[2] = {1, 2};
  assert_int_equal(tel_open_group(s, &facility, &id), SIM_OK);
  assert_int_equal(tel_append(s, id, 1.0, v), SIM_OK);
  assert_int_equal(tel_memory_committed(s), 0);
  assert_int_equal(tel_commit(s), SIM_OK);
  assert_int_equal(tel_memory_committed(s), 1);
  assert_int_equal(tel_append(s, id, 2.0, v), SIM_ESTATE);
  assert_errmsg_has(s, "after commit");
  assert_int_equal(tel_open_group(s, &racks, &id), SIM_ESTATE);
  assert_int_equal(tel_put_summary(s, &m_k, 1), SIM_ESTATE);
  assert_int_equal(tel_put_meta_str(s, "k", "v"), SIM_ESTATE);
  assert_int_equal(tel_put_meta_int(s, "k", 1), SIM_ESTATE);
  assert_int_equal(tel_put_text(s, "k", "v"), SIM_ESTATE);
  assert_int_equal(tel_commit(s), SIM_ESTATE);
  assert_non_null(tel_memory_times(s, "facility", &rows));
  assert_int_equal(rows, 1);
}

/* Only the declaration's pointers are kept: the sink copies nothing of it,
 * and a nested name is just a name. */
static void test_memory_nested_name(void **state) {
  tel_sink *s = *state;
  size_t id, rows;
  double v = 5;
  assert_int_equal(tel_open_group(s, &chat, &id), SIM_OK);
  assert_int_equal(tel_append(s, id, 0.5, &v), SIM_OK);
  const double *c =
      tel_memory_column(s, "services/chat", "tokens_per_s", &rows, NULL);
  assert_non_null(c);
  assert_close(c[0], 5, 0, 0);
  assert_null(tel_memory_column(s, "services", "tokens_per_s", NULL, NULL));
}

#define CASE(fn, table, i) cmocka_unit_test_prestate(fn, (void *)&table[i])

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ADD(tests, n, test_null_sink);
  TEST_ADD(tests, n, test_wrappers_forward);
  TEST_ADD(tests, n, test_wrappers_reject);
  for (size_t i = 0; i < sizeof bad_groups / sizeof *bad_groups; i++) {
    tests[n] = (struct CMUnitTest)CASE(test_bad_group, bad_groups, i);
    tests[n++].name = bad_groups[i].name;
  }
  for (size_t i = 0; i < sizeof time_cases / sizeof *time_cases; i++) {
    tests[n] = (struct CMUnitTest)CASE(test_memory_time_order, time_cases, i);
    tests[n++].name = time_cases[i].name;
  }
  const struct CMUnitTest fixed[] = {
      cmocka_unit_test_setup_teardown(test_memory_1d, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_2d, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_many_rows, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_unknown_names, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_memory_unknown_id, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_duplicate_group, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_memory_summary, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_metrics, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_no_metrics, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_text, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_meta, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_table, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_bad_table, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_group_attr, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_commit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_nested_name, setup, teardown),
  };
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
    tests[n++] = fixed[i];
  return _cmocka_run_group_tests("tel", tests, n, NULL, NULL);
}
