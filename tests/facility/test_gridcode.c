/* test_gridcode.c - grid codes: the shipped files read and classify as
 * the documents they cite state, limits pass and fail at their bounds,
 * bad files are refused at FILE:LINE:COLUMN, and /grid_connection is
 * written. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "gridcode.h"
#include "tel.h"

static void load_shipped(gcode *g, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/data/grid_codes/%s", AIFSIM_SOURCE_DIR, name);
  sim_error err = {0};
  assert_int_equal(gcode_load(g, path, &err), SIM_OK);
}

static void figures(double *v, double peak_w, double share) {
  for (size_t m = 0; m < GCODE_NMETRICS; m++)
    v[m] = NAN;
  v[GCODE_PEAK_POWER] = peak_w;
  v[GCODE_COMPUTE_SHARE] = share;
}

/* ERCOT NPRR1308: 75 MW or more is a Large Load, and with half or more of
 * it computational a Large Electronic Load; NPRR1234: 25 MW or more
 * files modelling data. Bounds are inclusive. */
typedef struct class_case {
  const char *name;
  double peak_w, share;
  const char *want; /* NULL: no class */
} class_case;

static const class_case classes[] = {
    {"100 MW, 90% IT: LEL", 100e6, 0.9, "Large Electronic Load"},
    {"75 MW, 50% IT: LEL at both bounds", 75e6, 0.5, "Large Electronic Load"},
    {"100 MW, 40% IT: Large Load", 100e6, 0.4, "Large Load"},
    {"100 MW, share unknown: Large Load", 100e6, NAN, "Large Load"},
    {"74.9 MW: modelling data", 74.9e6, 0.9,
     "Load of 25 MW or more (modelling data required)"},
    {"10 MW: none", 10e6, 0.9, NULL},
};

static void ercot_classes(void **state) {
  const class_case *c = *state;
  gcode g;
  load_shipped(&g, "ercot_large_load.yaml");
  double v[GCODE_NMETRICS];
  figures(v, c->peak_w, c->share);
  const gcode_class *got = gcode_classify(&g, v);
  if (c->want == NULL)
    assert_null(got);
  else
    assert_string_equal(got->name, c->want);
  gcode_fini(&g);
}

/* The limits: arXiv:2508.14318's 20% of the swing in 0.1-20 Hz, ERCOT's
 * 2,600 MW; a figure the run cannot tell (NaN) is UNKNOWN. */
typedef struct limit_case {
  const char *name, *file;
  gcode_metric metric;
  double value;
  gcode_state want;
} limit_case;

static const limit_case limits[] = {
    {"band share at 20%", "stabilization_template.yaml", GCODE_BAND_SHARE, 0.20,
     GCODE_PASS},
    {"band share 21%", "stabilization_template.yaml", GCODE_BAND_SHARE, 0.21,
     GCODE_FAIL},
    {"band share unknown", "stabilization_template.yaml", GCODE_BAND_SHARE, NAN,
     GCODE_UNKNOWN},
    {"2.6 GW site", "ercot_large_load.yaml", GCODE_PEAK_POWER, 2.6e9,
     GCODE_PASS},
    {"3 GW site", "ercot_large_load.yaml", GCODE_PEAK_POWER, 3e9, GCODE_FAIL},
    /* NOGRR 282: every disturbance inside the curve ridden through; a
     * run without disturbances has nothing to judge, so the verdict is
     * the other limits' (PASS), not UNKNOWN */
    {"all ridden through", "ercot_large_load.yaml", GCODE_RIDE_THROUGH, 1,
     GCODE_PASS},
    {"one of six", "ercot_large_load.yaml", GCODE_RIDE_THROUGH, 1.0 / 6,
     GCODE_FAIL},
    {"no disturbance", "ercot_large_load.yaml", GCODE_RIDE_THROUGH, NAN,
     GCODE_PASS},
};

static void limit_verdicts(void **state) {
  const limit_case *c = *state;
  gcode g;
  load_shipped(&g, c->file);
  double v[GCODE_NMETRICS];
  figures(v, 1e6, 0.9);
  v[c->metric] = c->value;
  assert_int_equal(gcode_verdict(&g, v), c->want);
  char line[512];
  gcode_describe(&g, v, line, sizeof line);
  const char *words[] = {"PASS", "FAIL", "UNKNOWN"};
  assert_non_null(strstr(line, words[c->want]));
  assert_non_null(strstr(line, g.name));
  if (c->want == GCODE_FAIL)
    assert_non_null(strstr(line, gcode_metric_key(c->metric)));
  gcode_fini(&g);
}

/* The group: a row per figure, the limit and result on its row, and the
 * summary's strings; without a grid code, "none". */
static void group_written(void **state) {
  (void)state;
  gcode g;
  load_shipped(&g, "stabilization_template.yaml");
  double v[GCODE_NMETRICS];
  figures(v, 1e6, 0.9);
  v[GCODE_BAND_SHARE] = 0.5;
  tel_sink *s = tel_memory_create();
  sim_error err = {0};
  assert_int_equal(gcode_write(&g, "x.yaml", v, s, &err), SIM_OK);
  size_t rows;
  const double *hi =
      tel_memory_table_column(s, "grid_connection", "limit_max", &rows);
  assert_int_equal(rows, GCODE_NBASE); /* no disturbance figures */
  assert_close(hi[GCODE_BAND_SHARE], 0.2, 0, 1e-15);
  assert_true(isnan(hi[GCODE_PEAK_POWER]));
  assert_string_equal(
      tel_memory_table_text(s, "grid_connection", "result", GCODE_BAND_SHARE),
      "FAIL");
  assert_string_equal(
      tel_memory_table_text(s, "grid_connection", "metric", GCODE_RAMP_1S),
      "max_ramp_1s_w_per_s");
  assert_string_equal(tel_memory_summary_str(s, "grid_verdict"), "FAIL");
  assert_string_equal(tel_memory_summary_str(s, "grid_class"), "none");
  tel_destroy(s);
  s = tel_memory_create();
  assert_int_equal(gcode_write(NULL, NULL, v, s, &err), SIM_OK);
  assert_string_equal(tel_memory_summary_str(s, "grid_verdict"), "none");
  assert_string_equal(
      tel_memory_table_text(s, "grid_connection", "result", GCODE_BAND_SHARE),
      "");
  tel_destroy(s);
  gcode_fini(&g);
}

/* With disturbances their rows follow; ERCOT's NOGRR 282 limit applies
 * then, and without them the verdict and count leave it out. */
static void disturbance_rows(void **state) {
  (void)state;
  gcode g;
  load_shipped(&g, "ercot_large_load.yaml");
  double v[GCODE_NMETRICS];
  figures(v, 1e9, 0.9);
  char line[512];
  gcode_describe(&g, v, line, sizeof line);
  assert_non_null(strstr(line, "PASS, 1 of 1 limits met"));
  v[GCODE_RIDE_THROUGH] = 0;
  v[GCODE_GRID_LOST] = 1e9;
  v[GCODE_GRID_OFF] = 3600;
  gcode_describe(&g, v, line, sizeof line);
  assert_non_null(strstr(line, "FAIL, 1 of 2 limits met"));
  assert_non_null(strstr(line, "ride_through_met 0% is below min 100%"));
  tel_sink *s = tel_memory_create();
  sim_error err = {0};
  assert_int_equal(gcode_write(&g, "x.yaml", v, s, &err), SIM_OK);
  size_t rows;
  tel_memory_table_column(s, "grid_connection", "value", &rows);
  assert_int_equal(rows, GCODE_NMETRICS);
  assert_string_equal(
      tel_memory_table_text(s, "grid_connection", "result", GCODE_RIDE_THROUGH),
      "FAIL");
  tel_destroy(s);
  gcode_fini(&g);
}

static void missing_file(void **state) {
  (void)state;
  gcode g;
  sim_error err = {0};
  assert_int_equal(gcode_load(&g, "/nonexistent/grid.yaml", &err), SIM_EIO);
  gcode_fini(&g);
}

#define HEAD "name: x\nsource: y\n"

static const test_bad_yaml bad[] = {
    {"unknown metric", HEAD "limits:\n  - {metric: ramp, max: 1, source: z}\n",
     "gc.yaml:4:14: 'metric' cannot be 'ramp'"},
    {"no bound", HEAD "limits:\n  - {metric: band_share, source: z}\n",
     "needs min or max"},
    {"wrong unit",
     HEAD "limits:\n  - {metric: band_share, max: 5 MW, "
          "source: z}\n",
     "gc.yaml:4:31: 'MW' is a unit of power; expected fraction"},
    {"ramp in power",
     HEAD "limits:\n  - {metric: max_ramp_1s_w_per_s, "
          "max: 5 MW, source: z}\n",
     "gc.yaml:4:40: 'MW' is a unit of power; expected power ramp"},
    {"uncited limit", HEAD "limits:\n  - {metric: band_share, max: 20%}\n",
     "source"},
    {"min above max",
     HEAD "limits:\n  - {metric: band_share, min: 30%, "
          "max: 20%, source: z}\n",
     "min is above max"},
    {"twice",
     HEAD "limits:\n  - {metric: band_share, max: 20%, source: z}\n"
          "  - {metric: band_share, max: 30%, source: z}\n",
     "bounded twice"},
    {"class without conditions", HEAD "classes:\n  - {name: a, source: b}\n",
     "when"},
    {"no name", "source: y\n", "name"},
};

static void bad_file(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&gcode_schema, "gc.yaml", b->yaml, b->message);
}

int main(void) {
  struct CMUnitTest tests[40];
  size_t n = 0;
  TEST_ROWS(tests, n, ercot_classes, classes);
  TEST_ROWS(tests, n, limit_verdicts, limits);
  TEST_ADD(tests, n, group_written);
  TEST_ADD(tests, n, disturbance_rows);
  TEST_ADD(tests, n, missing_file);
  TEST_ROWS(tests, n, bad_file, bad);
  return _cmocka_run_group_tests("gridcode", tests, n, NULL, NULL);
}
