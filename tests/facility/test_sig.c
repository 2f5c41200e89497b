/* test_sig.c - grid signals: time parsing, CSV files (step, linear,
 * repeat, start, offset) with exact integrals, every kind of bad file
 * with FILE:LINE: and the column, the real Electricity Maps series, and
 * the synthetic kinds' closed-form integrals. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"
#include "sig.h"

typedef struct time_case {
  const char *name;
  const char *text;
  double utc_s; /* NAN: must fail */
} time_case;

/* 2023-01-01 00:00:00 UTC is 1672531200 s after the epoch. */
static const time_case times[] = {
    {"seconds", "2023-01-01 00:00:00", 1672531200},
    {"minutes", "2023-01-01 01:30", 1672531200 + 5400},
    {"T and Z", "2023-01-01T00:00:00Z", 1672531200},
    {"negative offset", "2023-01-01 00:00:00-06:00", 1672531200 + 21600},
    {"positive offset", "2023-01-01 01:00:00+01:00", 1672531200},
    {"fraction", "2023-11-16 18:15:46.5000000", 1700158546.5},
    {"leap day", "2024-02-29 00:00", 1709164800},
    {"new year eve", "2022-12-31 23:00", 1672527600},
    {"bad month", "2023-13-01 00:00", NAN},
    {"slashes", "2023/01/01 00:00", NAN},
    {"date only", "2023-01-01", NAN},
    {"bad hour", "2023-01-01 25:00", NAN},
    {"no such day", "2023-02-29 00:00", NAN},
    {"april 31", "2023-04-31 00:00", NAN},
    {"trailing", "2023-01-01 00:00 x", NAN},
    {"empty", "", NAN},
};

static void parses_times(void **state) {
  const time_case *c = *state;
  double t = -1;
  size_t bad = 0;
  int rc = sig_parse_time(c->text, &t, &bad);
  if (isnan(c->utc_s)) {
    assert_int_equal(rc, -1);
    return;
  }
  assert_int_equal(rc, 0);
  assert_close(t, c->utc_s, 0, 0);
}

static const char *write_csv(const char *name, const char *text) {
  static char path[4096];
  snprintf(path, sizeof path, "%s", test_out_path(name));
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
  return path;
}

static sig_config file_config(const char *path) {
  return (sig_config){.file = (char *)path,
                      .time_column = "#1",
                      .value_column = "#2",
                      .max_gap_s = 7200,
                      .scale = 1,
                      .value = NAN,
                      .low = NAN,
                      .high = NAN};
}

static const char hourly[] = "time,v\n"
                             "2023-01-01 00:00,10\n"
                             "2023-01-01 01:00,20\n"
                             "2023-01-01 02:00,40\n"
                             "2023-01-01 03:00,0\n";

static void step_file_values_and_integral(void **state) {
  (void)state;
  sig_config c = file_config(write_csv("s.csv", hourly));
  sig_series s;
  sim_error err = {0};
  if (sig_init(&s, &c, NULL, NULL, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_close(sig_at(&s, 0), 10, 0, 0);
  assert_close(sig_at(&s, 3599), 10, 0, 0);
  assert_close(sig_at(&s, 3600), 20, 0, 0);
  /* 0.5 h at 10, 1 h at 20, 0.25 h at 40. */
  assert_close(sig_integral(&s, 1800, 2 * 3600 + 900),
               1800 * 10 + 3600 * 20 + 900 * 40, 1e-15, 0);
  assert_true(sig_covers(&s, 0, 4 * 3600));
  assert_false(sig_covers(&s, 0, 4 * 3600 + 1));
  sig_fini(&s);
}

static void linear_file_integral_is_trapezoids(void **state) {
  (void)state;
  sig_config c = file_config(write_csv("l.csv", hourly));
  c.interpolation = 1;
  sig_series s;
  sim_error err = {0};
  assert_int_equal(sig_init(&s, &c, NULL, NULL, &err), SIM_OK);
  assert_close(sig_at(&s, 1800), 15, 1e-15, 0);
  assert_close(sig_at(&s, 2.5 * 3600), 20, 1e-15, 0);
  /* From 0.5 h to 2.5 h: 15->20 over 0.5 h, 20->40 over 1 h, 40->20. */
  double expect = 1800 * 17.5 + 3600 * 30 + 1800 * 30;
  assert_close(sig_integral(&s, 1800, 2.5 * 3600), expect, 1e-15, 0);
  assert_false(sig_covers(&s, 0, 3 * 3600 + 1));
  sig_fini(&s);
}

/* The exact maximum over an interval: ends and the rows between. */
static void maxima(void **state) {
  (void)state;
  sig_config c = file_config(write_csv("m.csv", hourly));
  sig_series s;
  sim_error err = {0};
  assert_int_equal(sig_init(&s, &c, NULL, NULL, &err), SIM_OK);
  assert_close(sig_max(&s, 1800, 5400), 20, 0, 0);
  assert_close(sig_max(&s, 0, 3 * 3600.0 + 1), 40, 0, 0);
  assert_close(sig_max(&s, 3 * 3600.0, 4 * 3600.0), 0, 0, 0);
  sig_fini(&s);
  c.repeat = true;
  assert_int_equal(sig_init(&s, &c, NULL, NULL, &err), SIM_OK);
  /* 3.5 h to 4.5 h wraps to the first row (10). */
  assert_close(sig_max(&s, 3.5 * 3600, 4.5 * 3600), 10, 0, 0);
  assert_close(sig_max(&s, 5 * 3600.0, 13 * 3600.0), 40, 0, 0);
  sig_fini(&s);
}

/* Start, offset and repeat: a local-time file shifted to UTC, started at
 * its second row, wrapping past its end. */
static void start_offset_and_repeat(void **state) {
  (void)state;
  sig_config c = file_config(write_csv("r.csv", hourly));
  c.time_offset_s = -3600;      /* the file is in UTC+1 */
  c.start = "2022-12-31 23:00"; /* = the first row in UTC */
  c.repeat = true;
  sig_series s;
  sim_error err = {0};
  if (sig_init(&s, &c, NULL, NULL, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_close(sig_at(&s, 0), 10, 0, 0);
  /* The period is 4 h: t = 4 h is the first row again. */
  assert_close(sig_at(&s, 4 * 3600), 10, 0, 0);
  assert_close(sig_at(&s, 6 * 3600 + 1), 40, 0, 0);
  double day = sig_integral(&s, 0, 4 * 3600);
  assert_close(day, 3600.0 * 70, 1e-15, 0);
  assert_close(sig_integral(&s, 0, 40 * 3600), 10 * day, 1e-14, 0);
  assert_true(sig_covers(&s, 0, 1e9));
  c.start = "2023-01-01 00:00";
  sig_fini(&s);
  assert_int_equal(sig_init(&s, &c, NULL, NULL, &err), SIM_OK);
  assert_close(sig_at(&s, 0), 20, 0, 0);
  sig_fini(&s);
  /* A start outside the file is the scenario's error: SIM_ERANGE, which
   * the loader reports at grid.<signal>.start. */
  c.start = "2024-01-01 00:00";
  assert_int_equal(sig_init(&s, &c, NULL, NULL, &err), SIM_ERANGE);
  assert_non_null(strstr(err.msg, "is outside the file's times"));
}

typedef struct bad_file {
  const char *name;
  const char *text;
  const char *value_column;
  const char *message; /* after the path: ":LINE: ..." */
} bad_file;

#define ROWS2 "time,v\n2023-01-01 00:00,1\n2023-01-01 01:00,"
#define CARBON &sig_carbon_range
#define PRICE &sig_price_range
#define TEMPERATURE &sig_temperature_range

static const bad_file bad_files[] = {
    {"missing column", "time,v\n2023-01-01 00:00,1\n", "price",
     ":1:1: column 'price': no such column"},
    {"bad time", "time,v\n2023-01-01 00:00,1\n2023-01-01 1:00,2\n", "#2",
     ":3:1: column 'time': not a time like 2023-06-01 00:00 (at character "
     "13)"},
    {"out of order",
     "time,v\n2023-01-01 02:00,1\n2023-01-01 01:00,2\n2023-01-01 03:00,2\n",
     "#2", ":3:1: column 'time': time 2023-01-01 01:00 is earlier than"},
    {"duplicate", "time,v\n2023-01-01 01:00,1\n2023-01-01 01:00,2\n", "#2",
     ":3:1: column 'time': time 2023-01-01 01:00 is the same as"},
    {"gap", "time,v\n2023-01-01 01:00,1\n2023-01-01 05:00,2\n", "#2",
     ":3:1: column 'time': a gap of 14400 s"},
    {"nan", "time,v\n2023-01-01 01:00,1\n2023-01-01 02:00,nan\n", "#2",
     ":3:18: column 'v': not a plain decimal number"},
    {"blank value", "time,v\n2023-01-01 01:00, \n", "#2",
     ":2:18: column 'v': not a plain decimal number"},
    {"empty value", "time,v\n2023-01-01 01:00,\n", "#2",
     ":2:18: column 'v': not a plain decimal number"},
    {"too few fields", "time,v\n2023-01-01 01:00\n", "#2", ":2:1: 1 fields"},
    {"one row", "time,v\n2023-01-01 01:00,1\n", "#2", "2 or more"},
    {"empty file", "", "#2", ":1:1: the file is empty"},
    {"only a byte-order mark", "\xEF\xBB\xBF", "#2", ":1:1: the file is empty"},
    /* Plain decimals only: strtod would take all of these. */
    {"hex", ROWS2 "0x10\n", "#2", ":3:18: column 'v': not a plain decimal"},
    {"inf", ROWS2 "inf\n", "#2", ":3:18: column 'v': not a plain decimal"},
    {"infinity", ROWS2 "-Infinity\n", "#2", ":3:18: column 'v': not a plain"},
    {"hex float", ROWS2 "0x1p3\n", "#2", ":3:18: column 'v': not a plain"},
    {"two numbers", ROWS2 "1 2\n", "#2", ":3:18: column 'v': not a plain"},
    {"bare exponent", ROWS2 "1e\n", "#2", ":3:18: column 'v': not a plain"},
    {"overflow", ROWS2 "1e400\n", "#2",
     ":3:18: column 'v': 1e400 is not a finite number"},
    /* A missing header is not a header. */
    {"no header", "2023-01-01 00:00,45.3\n2023-01-01 01:00,46\n", "#2",
     ":1:1: expected a header naming columns #1 (time) and #2 (value); "
     "found a time"},
    {"no header, numbers first", "1672531200,45.3\n1672534800,46\n", "#2",
     ":1:1: expected a header naming columns #1 (time) and #2 (value); "
     "found a number"},
    {"no header, carbon", "2023-01-01 00:00,DE,300\n", NULL,
     ":1:1: expected a header naming columns #1 (time) and one with '(LCA)' "
     "(value); found a time"},
};

static void bad_files_name_line_and_column(void **state) {
  const bad_file *b = *state;
  const char *path = write_csv("bad.csv", b->text);
  sig_config c = file_config(path);
  c.value_column = (char *)b->value_column;
  sig_series s;
  sim_error err = {0};
  assert_int_equal(sig_init(&s, &c, NULL, NULL, &err), SIM_EINPUT);
  char want[4400];
  snprintf(want, sizeof want, "%s%s", path, b->message);
  if (strncmp(err.msg, want, strlen(want)) != 0 &&
      strstr(err.msg, b->message) == NULL)
    fail_msg("got '%s', want '%s'", err.msg, want);
}

/* Values outside their physical range, with the column and the range
 * named; the scale applies before the check. */
typedef struct bad_value {
  const char *name;
  const char *text;
  const char *message; /* after the path */
  const csv_range *range;
  double scale;
} bad_value;

static const bad_value bad_values[] = {
    {"carbon 1e308", ROWS2 "1e308\n",
     ":3:18: column 'v': 1e308 g/kWh is outside 0..2000 g/kWh", CARBON, 1},
    {"carbon negative", ROWS2 "-1\n",
     ":3:18: column 'v': -1 g/kWh is outside 0..2000 g/kWh", CARBON, 1},
    {"carbon -5e6", ROWS2 "-5e6\n", ":3:18: column 'v': -5e6 g/kWh is outside",
     CARBON, 1},
    {"carbon above 2000", ROWS2 "2000.5\n",
     ":3:18: column 'v': 2000.5 g/kWh is outside", CARBON, 1},
    {"price above the bound", ROWS2 "20001\n",
     ":3:18: column 'v': 20001 $/MWh is outside -1000..20000 $/MWh", PRICE, 1},
    {"price below the floor", ROWS2 "-1000.01\n",
     ":3:18: column 'v': -1000.01 $/MWh is outside", PRICE, 1},
    {"price scaled out of range", ROWS2 "19000\n",
     ":3:18: column 'v': 19000 x scale 1.1 = 20900 $/MWh is outside", PRICE,
     1.1},
    {"temperature too hot", ROWS2 "61\n",
     ":3:18: column 'v': 61 degC is outside -90..60 degC", TEMPERATURE, 1},
    {"temperature too cold", ROWS2 "-100\n",
     ":3:18: column 'v': -100 degC is outside", TEMPERATURE, 1},
    {"temperature in kelvin", ROWS2 "293.15\n",
     ":3:18: column 'v': 293.15 degC is outside", TEMPERATURE, 1},
};

static void bad_values_name_the_range(void **state) {
  const bad_value *b = *state;
  const char *path = write_csv("bad.csv", b->text);
  sig_config c = file_config(path);
  c.range = b->range;
  c.scale = b->scale;
  sig_series s;
  sim_error err = {0};
  assert_int_equal(sig_init(&s, &c, NULL, NULL, &err), SIM_EINPUT);
  char want[4400];
  snprintf(want, sizeof want, "%s%s", path, b->message);
  if (strncmp(err.msg, want, strlen(want)) != 0)
    fail_msg("got '%s', want '%s'", err.msg, want);
}

typedef struct good_value {
  const char *name;
  const char *text; /* the second row's value */
  const csv_range *range;
  double value;
} good_value;

/* What the range and the decimal grammar accept, up to the bounds. */
static const good_value good_values[] = {
    {"carbon 0", "0", CARBON, 0},
    {"carbon minus zero", "-0", CARBON, 0},
    {"carbon 2000", "2000", CARBON, 2000},
    {"price floor", "-1000", PRICE, -1000},
    {"price bound", "2e4", PRICE, 20000},
    {"temperature record low", "-89.2", TEMPERATURE, -89.2},
    {"plus sign", "+5", PRICE, 5},
    {"spaces around", " 5 ", PRICE, 5},
    {"trailing point", "5.", PRICE, 5},
    {"leading point", ".5", PRICE, 0.5},
    {"exponent", "1.5E+2", PRICE, 150},
};

static void good_values_are_read(void **state) {
  const good_value *g = *state;
  char text[200];
  snprintf(text, sizeof text, ROWS2 "%s\n", g->text);
  sig_config c = file_config(write_csv("good.csv", text));
  c.range = g->range;
  sig_series s;
  sim_error err = {0};
  if (sig_init(&s, &c, NULL, NULL, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_close(sig_at(&s, 3600), g->value, 0, 0);
  sig_fini(&s);
}

/* A byte-order mark and CRLF line ends, as Excel writes them: the header
 * names match, and the values are the same as without them. */
static void bom_and_crlf_are_accepted(void **state) {
  (void)state;
  sig_config c = file_config(
      write_csv("bom.csv", "\xEF\xBB\xBFtime,v\r\n2023-01-01 00:00,10\r\n"
                           "2023-01-01 01:00,20\r\n"));
  c.time_column = "time";
  c.value_column = "v";
  c.range = &sig_price_range;
  sig_series s;
  sim_error err = {0};
  if (sig_init(&s, &c, NULL, NULL, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_close(sig_at(&s, 0), 10, 0, 0);
  assert_close(sig_at(&s, 3600), 20, 0, 0);
  sig_fini(&s);
}

/* The real Electricity Maps series for Germany, 2023: its time-mean over
 * the year equals the mean of its hourly column, computed here apart. */
static void real_carbon_series_mean(void **state) {
  (void)state;
  char path[4096];
  snprintf(path, sizeof path, "%s",
           test_data_path("carbon/DE-LU_2023_hourly.csv"));
  FILE *f = test_data_open("carbon/DE-LU_2023_hourly.csv");
  char line[1024];
  double sum = 0;
  int n = 0;
  fgets(line, sizeof line, f);
  while (fgets(line, sizeof line, f) != NULL) {
    char *p = line;
    for (int k = 0; k < 4; k++)
      p = strchr(p, ',') + 1;
    sum += strtod(p, NULL);
    n++;
  }
  fclose(f);
  assert_int_equal(n, 8760);
  sig_config c = file_config(path);
  c.value_column = "Carbon Intensity gCO\xe2\x82\x82"
                   "eq/kWh (direct)";
  sig_series s;
  sim_error err = {0};
  if (sig_init(&s, &c, NULL, NULL, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_int_equal(s.n, 8760);
  double year = 8760 * 3600.0;
  assert_close(sig_integral(&s, 0, year) / year, sum / n, 1e-12, 0);
  sig_fini(&s);
}

static sig_series bind_signal(const scn_schema *schema, const char *yaml) {
  sig_config c;
  memset(&c, 0, sizeof c);
  sim_error err = {0};
  if (scn_bind_string("sig.yaml", yaml, schema, &c, NULL, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  sig_series s;
  assert_int_equal(sig_init(&s, &c, NULL, NULL, &err), SIM_OK);
  scn_release(schema, &c);
  return s;
}

/* The carbon basis picks the column of the Electricity Maps file: the
 * Frankfurt week (2023-07-01 to 07-08 UTC, 168 hourly rows) has plain
 * means of 206.61 g/kWh direct and 260.57 g/kWh life-cycle, as the
 * file's columns 5 and 6 give them (averaged apart with Python's csv). */
typedef struct basis_case {
  const char *name;
  const char *keys; /* added to the file and start */
  double mean;      /* g/kWh over the week */
} basis_case;

#define DE_DIRECT 206.6125595238095
#define DE_LCA 260.5673214285715

static const basis_case basis_cases[] = {
    {"life-cycle by default", "", DE_LCA},
    {"life-cycle", "basis: lifecycle\n", DE_LCA},
    {"direct", "basis: direct\n", DE_DIRECT},
    {"a named column with its basis",
     "value_column: \"Carbon Intensity gCO\xe2\x82\x82"
     "eq/kWh (direct)\"\n"
     "basis: direct\n",
     DE_DIRECT},
};

static void basis_picks_the_column(void **state) {
  const basis_case *b = *state;
  char yaml[8192];
  snprintf(yaml, sizeof yaml, "file: %s\nstart: '2023-07-01 00:00'\n%s",
           test_data_path("carbon/DE-LU_2023_hourly.csv"), b->keys);
  sig_series s = bind_signal(&sig_carbon_schema, yaml);
  double week = 7 * 86400.0;
  assert_close(sig_integral(&s, 0, week) / week, b->mean, 1e-12, 0);
  sig_fini(&s);
}

/* A file without a column of the basis is refused at its header. */
static void basis_column_missing(void **state) {
  (void)state;
  const char *path = write_csv("nobasis.csv", "time,v\n2023-01-01 00:00,1\n"
                                              "2023-01-01 01:00,2\n");
  sig_config c = file_config(path);
  c.value_column = NULL;
  sig_series s;
  sim_error err = {0};
  assert_int_equal(sig_init(&s, &c, NULL, NULL, &err), SIM_EINPUT);
  assert_non_null(strstr(err.msg, ":1:1: no lifecycle column"));
}

/* sig_init into a heap copy, so test_alloc_failures can drive it. */
static void *make_signal(const sim_allocator *a, void *ctx, sim_error *err) {
  sig_series *s = malloc(sizeof *s);
  assert_non_null(s);
  if (sig_init(s, ctx, NULL, a, err) == SIM_OK)
    return s;
  free(s);
  return NULL;
}

static void drop_signal(void *s) {
  sig_fini(s);
  free(s);
}

/* A file of 40 rows (its arrays grow several times) and a daily signal
 * fail cleanly on every allocation. */
static void signals_fail_cleanly(void **state) {
  (void)state;
  char text[4096] = "time,v\n";
  for (int h = 0; h < 40; h++)
    snprintf(text + strlen(text), sizeof text - strlen(text),
             "2023-01-%02d %02d:00,%d\n", 1 + h / 24, h % 24, h);
  sig_config c = file_config(write_csv("grow.csv", text));
  c.repeat = true;
  assert_true(test_alloc_failures("file signal", make_signal, drop_signal, &c) >
              3);
  memset(&c, 0, sizeof c);
  sim_error err = {0};
  assert_int_equal(scn_bind_string("sig.yaml",
                                   "daily: [{from: 0 h, value: 40 $/MWh}, "
                                   "{from: 17 h, value: 150 $/MWh}]\n",
                                   &sig_price_schema, &c, NULL, &err),
                   SIM_OK);
  assert_int_equal(
      test_alloc_failures("daily signal", make_signal, drop_signal, &c), 2);
  scn_release(&sig_price_schema, &c);
}

static void constant_daily_and_diurnal(void **state) {
  (void)state;
  sig_series c = bind_signal(&sig_price_schema, "value: 50 $/MWh\n");
  assert_close(sig_integral(&c, 10, 110), 5000, 1e-15, 0);
  sig_series d =
      bind_signal(&sig_price_schema, "daily: [{from: 0 h, value: 40 $/MWh}, "
                                     "{from: 17 h, value: 150 $/MWh}, "
                                     "{from: 21 h, value: 60 $/MWh}]\n");
  assert_close(sig_at(&d, 18 * 3600.0), 150, 0, 0);
  assert_close(sig_at(&d, 24 * 3600.0 + 1), 40, 0, 0);
  double day = 3600.0 * (17 * 40 + 4 * 150 + 3 * 60);
  assert_close(sig_integral(&d, 0, 86400), day, 1e-15, 0);
  assert_close(
      sig_integral(&d, 86400 * 2 + 18 * 3600.0, 86400 * 5 + 18 * 3600.0),
      3 * day, 1e-14, 0);
  sig_series t = bind_signal(&sig_temperature_schema,
                             "low: 10 degC\nhigh: 20 degC\npeak_at: 15 h\n");
  assert_close(sig_at(&t, 15 * 3600.0), 20, 1e-12, 0);
  assert_close(sig_at(&t, 3 * 3600.0), 10, 1e-12, 0);
  assert_close(sig_integral(&t, 0, 86400) / 86400, 15, 1e-12, 0);
  assert_close(sig_max(&t, 14 * 3600.0, 16 * 3600.0), 20, 0, 0);
  assert_close(sig_max(&t, 1 * 3600.0, 2 * 3600.0), sig_at(&t, 1 * 3600.0), 0,
               0);
  double sum = 0; /* the midpoint rule, second by second */
  for (int i = 0; i < 3600; i++)
    sum += sig_at(&t, 3600 + i + 0.5);
  assert_close(sig_integral(&t, 3600, 7200), sum, 1e-9, 0);
  sig_fini(&c);
  sig_fini(&d);
  sig_fini(&t);
}

/* The mix: its daily mean is the shares times the factors, solar's swing
 * shows at noon and vanishes at night, and the integral is exact. */
static void generation_mix(void **state) {
  (void)state;
  sig_series m = bind_signal(&sig_carbon_schema,
                             "mix: {coal: 10%, gas: 40%, nuclear: 20%, "
                             "wind: 20%, solar: 10%}\n");
  const sig_factors *f = &sig_seed_factors;
  double mean = 0.1 * f->coal + 0.4 * f->gas + 0.2 * f->nuclear +
                0.2 * f->wind + 0.1 * f->solar;
  assert_close(sig_integral(&m, 0, 86400) / 86400, mean, 1e-12, 0);
  assert_close(sig_integral(&m, 0, 3 * 86400) / 3 / 86400, mean, 1e-12, 0);
  double night = sig_at(&m, 2 * 3600.0), noon = sig_at(&m, 12 * 3600.0);
  /* At night solar's share goes to gas: mean + 10% (gas - solar). */
  assert_close(night, mean + 0.1 * (f->gas - f->solar), 1e-12, 0);
  assert_true(noon < night);
  /* A numerical check of the closed-form integral over a part day. */
  double sum = 0;
  for (int i = 0; i < 36000; i++)
    sum += sig_at(&m, 5 * 3600.0 + (i + 0.5));
  assert_close(sig_integral(&m, 5 * 3600.0, 15 * 3600.0), sum, 1e-8, 0);
  sig_fini(&m);
}

/* sig_integral_next over a walk of intervals: mostly abutting (a run's
 * ticks, of several lengths), with gaps, a step back and an interval
 * from -0 where the last ended at +0 (the same number, other bits), each
 * to the bit sig_integral's; for each kind of signal. */
static const struct {
  const scn_schema *schema;
  const char *yaml;
} next_cases[] = {
    {&sig_price_schema, "value: 50 $/MWh\n"},
    {&sig_price_schema, "daily: [{from: 0 h, value: 40 $/MWh}, "
                        "{from: 17 h, value: 150 $/MWh}]\n"},
    {&sig_price_schema, "low: 25 $/MWh\nhigh: 90 $/MWh\npeak_at: 18 h\n"},
    {&sig_carbon_schema, "mix: {coal: 15%, gas: 40%, nuclear: 10%, "
                         "hydro: 2%, wind: 23%, solar: 10%}\n"},
};

static void integrals_that_follow(void **state) {
  (void)state;
  static const double steps[] = {1, 1, 0.1, 7, 3600, 1, 1e-3, 86400, 5};
  for (size_t c = 0; c < sizeof next_cases / sizeof *next_cases; c++) {
    sig_series s = bind_signal(next_cases[c].schema, next_cases[c].yaml);
    sig_run r = {0};
    double t0 = 0;
    for (int k = 0; k < 400; k++) {
      if (k % 37 == 36)
        t0 += 11; /* a gap: t0 is not the last end */
      if (k % 53 == 52)
        t0 -= 100; /* a step back */
      if (k == 200)
        r = (sig_run){.kept = true, .t = 0.0, .cum = 1e300}, t0 = -0.0;
      double t1 = t0 + steps[k % 9] * (1 + k / 9);
      double want = sig_integral(&s, t0, t1);
      double got = sig_integral_next(&s, &r, t0, t1);
      if (!sim_same_bits(got, want))
        fail_msg("case %zu, interval %d [%.17g, %.17g]: %.17g, not %.17g", c,
                 k, t0, t1, got, want);
      t0 = t1;
    }
    sig_fini(&s);
  }
}

static const test_bad_yaml bad_configs[] = {
    {"two ways", "value: 300 gCO2/kWh\nmix: {coal: 100%}\n",
     "more than one way"},
    {"mix not 100%", "mix: {coal: 50%, gas: 40%}\n", "adds up to 90%"},
    {"gas too small", "mix: {coal: 60%, gas: 5%, solar: 35%}\n",
     "more than the gas share"},
    {"diurnal half", "low: 10 gCO2/kWh\n", "needs 'low' and 'high'"},
    {"daily not at zero", "daily: [{from: 1 h, value: 5 gCO2/kWh}]\n",
     "must start at 0 h"},
    {"wrong unit", "value: 300 $/MWh\n", "unit of price"},
    {"named column without basis", "file: x.csv\nvalue_column: co2\n",
     "sig.yaml:2:15: a carbon column named by hand needs its basis"},
    {"mix on the direct basis", "mix: {coal: 100%}\nbasis: direct\n",
     "sig.yaml:2:8: the mix's emission factors are life-cycle ones"},
    {"unknown basis", "value: 300 g/kWh\nbasis: marginal\n", "marginal"},
    {"negative value", "value: -1 gCO2/kWh\n",
     "sig.yaml:1:8: -1 g/kWh is outside 0..2000 g/kWh"},
    {"daily value out of range",
     "daily: [{from: 0 h, value: 5 g/kWh}, {from: 1 h, value: 3000 g/kWh}]\n",
     "3000 g/kWh is outside 0..2000 g/kWh"},
    {"diurnal high out of range", "low: 10 g/kWh\nhigh: 1e6 g/kWh\n",
     "sig.yaml:2:7: 1e+06 g/kWh is outside"},
    {"malformed start", "file: x.csv\nstart: 2023-13-01 00:00\n",
     "sig.yaml:2:8: '2023-13-01 00:00' is not a time YYYY-MM-DD HH:MM"},
};

static void bad_configs_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&sig_carbon_schema, "sig.yaml", b->yaml, b->message);
}

int main(void) {
  struct CMUnitTest tests[128];
  size_t n = 0;
  TEST_ROWS(tests, n, parses_times, times);
  TEST_ADD(tests, n, step_file_values_and_integral);
  TEST_ADD(tests, n, linear_file_integral_is_trapezoids);
  TEST_ADD(tests, n, start_offset_and_repeat);
  TEST_ADD(tests, n, maxima);
  TEST_ROWS(tests, n, bad_files_name_line_and_column, bad_files);
  TEST_ROWS(tests, n, bad_values_name_the_range, bad_values);
  TEST_ROWS(tests, n, good_values_are_read, good_values);
  TEST_ADD(tests, n, bom_and_crlf_are_accepted);
  TEST_ADD(tests, n, real_carbon_series_mean);
  TEST_ROWS(tests, n, basis_picks_the_column, basis_cases);
  TEST_ADD(tests, n, basis_column_missing);
  TEST_ADD(tests, n, constant_daily_and_diurnal);
  TEST_ADD(tests, n, signals_fail_cleanly);
  TEST_ADD(tests, n, generation_mix);
  TEST_ADD(tests, n, integrals_that_follow);
  TEST_ROWS(tests, n, bad_configs_rejected, bad_configs);
  return _cmocka_run_group_tests("sig", tests, n, NULL, NULL);
}
