/* test_csv.c - the data-file reader: lines, fields, columns, messages. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

#include "csv.h"

static const char *write_text(const char *name, const char *text, size_t n) {
  const char *path = test_out_path(name);
  FILE *f = fopen(path, "wb");
  fwrite(text, 1, n, f);
  fclose(f);
  return path;
}

static void lines_fields_and_columns(void **state) {
  (void)state;
  static const char text[] = "time,a,b\r\n2023-01-01 00:00,1,2\n\nlast,x";
  const char *path = write_text("c.csv", text, sizeof text - 1);
  csv_reader r;
  sim_error err = {0};
  assert_int_equal(csv_open(&r, path, 1000, &err), SIM_OK);
  char *h[CSV_MAX_FIELDS], *f[CSV_MAX_FIELDS];
  size_t n = csv_split(csv_next_line(&r), h);
  assert_int_equal(n, 3);
  assert_string_equal(h[2], "b"); /* the \r is gone */
  assert_int_equal(csv_column(h, n, "a"), 1);
  assert_int_equal(csv_column(h, n, "#3"), 2);
  assert_int_equal(csv_column(h, n, "#4"), -1);
  assert_int_equal(csv_column(h, n, "c"), -1);
  assert_int_equal(csv_split(csv_next_line(&r), f), 3);
  assert_string_equal(csv_next_line(&r), "");
  assert_int_equal(csv_split(csv_next_line(&r), f), 2);
  assert_int_equal(r.line, 4);
  assert_null(csv_next_line(&r));
  assert_int_equal(csv_fail(&r, NULL, "a", "bad %d", 7), SIM_EINPUT);
  char want[4200];
  snprintf(want, sizeof want, "%s:4:1: column 'a': bad 7", path);
  assert_string_equal(err.msg, want);
  csv_close(&r);
}

/* Errors about the whole file still give FILE:LINE:COL: the NUL byte's
 * own place, 1:1 for the size. */
static void refuses_binary_and_large_files(void **state) {
  (void)state;
  csv_reader r;
  sim_error err = {0};
  char want[4200];
  const char *path = write_text("nul.csv", "a,b\n1\0,2\n", 9);
  assert_int_equal(csv_open(&r, path, 1000, &err), SIM_EINPUT);
  snprintf(want, sizeof want, "%s:2:2: NUL byte: not a text file", path);
  assert_string_equal(err.msg, want);
  path = write_text("big.csv", "a,b\n1,2\n", 8);
  assert_int_equal(csv_open(&r, path, 4, &err), SIM_EINPUT);
  snprintf(want, sizeof want, "%s:1:1: 8 bytes, more than the 4", path);
  assert_true(strncmp(err.msg, want, strlen(want)) == 0);
  assert_int_equal(csv_open(&r, "/nonexistent.csv", 4, &err), SIM_EIO);
}

/* A UTF-8 byte-order mark is skipped, so the first header names match
 * and columns count from after it. */
static void skips_a_byte_order_mark(void **state) {
  (void)state;
  const char *path = write_text("bom.csv", "\xEF\xBB\xBFtime,v\r\nx,1\r\n", 16);
  csv_reader r;
  sim_error err = {0};
  assert_int_equal(csv_open(&r, path, 1000, &err), SIM_OK);
  char *h[CSV_MAX_FIELDS];
  size_t n;
  assert_int_equal(csv_header(&r, h, &n, "time, v"), SIM_OK);
  assert_int_equal(csv_column(h, n, "time"), 0);
  assert_string_equal(h[1], "v");
  assert_int_equal(csv_fail(&r, h[1], "v", "x"), SIM_EINPUT);
  char want[4200];
  snprintf(want, sizeof want, "%s:1:6: column 'v': x", path);
  assert_string_equal(err.msg, want);
  csv_close(&r);
}

/* rc and err are the refusal of column 'c' on line 1 with message. */
static void refused_at_1_1(int rc, const sim_error *err, const char *path,
                           const char *message) {
  char want[4200];
  snprintf(want, sizeof want, "%s:1:1: column 'c': %s", path, message);
  assert_int_equal(rc, SIM_EINPUT);
  if (strncmp(err->msg, want, strlen(want)) != 0)
    fail_msg("got '%s', want '%s'", err->msg, want);
}

typedef struct number_case {
  const char *name;
  const char *text;
  double scale;
  double value;        /* when message is NULL */
  const char *message; /* after "FILE:1:1: column 'c': " */
} number_case;

static const csv_range range = {-10, 100, "u", "the range of a test"};

static const number_case numbers[] = {
    {"integer", "42", 1, 42, NULL},
    {"negative", "-7.5", 1, -7.5, NULL},
    {"exponent", "1e2", 1, 100, NULL},
    {"spaces", "  3 ", 1, 3, NULL},
    {"scaled", "5", 2, 10, NULL},
    {"hex", "0x10", 1, 0, "not a plain decimal number"},
    {"nan", "nan", 1, 0, "not a plain decimal number"},
    {"inf", "inf", 1, 0, "not a plain decimal number"},
    {"empty", "", 1, 0, "not a plain decimal number"},
    {"just a sign", "-", 1, 0, "not a plain decimal number"},
    {"just a point", ".", 1, 0, "not a plain decimal number"},
    {"trailing text", "5 kW", 1, 0, "not a plain decimal number"},
    {"above", "100.5", 1, 0,
     "100.5 u is outside -10..100 u, the range of a test"},
    {"below", "-11", 1, 0, "-11 u is outside -10..100 u"},
    {"scaled above", "60", 2, 0, "60 x scale 2 = 120 u is outside"},
    {"overflow", "1e999", 1, 0, "1e999 u is outside"},
};

static void numbers_are_plain_and_in_range(void **state) {
  const number_case *c = *state;
  char text[100];
  snprintf(text, sizeof text, "%s\n", c->text);
  const char *path = write_text("n.csv", text, strlen(text));
  csv_reader r;
  sim_error err = {0};
  assert_int_equal(csv_open(&r, path, 1000, &err), SIM_OK);
  char *line = csv_next_line(&r);
  double v = -1;
  int rc = csv_number(&r, line, "c", &range, c->scale, &v);
  csv_close(&r);
  if (c->message == NULL) {
    if (rc != SIM_OK)
      fail_msg("%s", err.msg);
    assert_true(v == c->value);
    return;
  }
  refused_at_1_1(rc, &err, path, c->message);
}

typedef struct count_case {
  const char *name;
  const char *text;
  long long value;     /* when message is NULL */
  const char *message; /* after "FILE:1:1: column 'c': " */
} count_case;

static const count_case counts[] = {
    {"zero", "0", 0, NULL},
    {"the most", "1000", 1000, NULL},
    {"spaces", " 7 ", 7, NULL},
    {"above", "1001", 0, "1001 tokens is outside 0..1000 tokens"},
    {"2^32", "4294967296", 0, "4294967296 tokens is outside"},
    {"beyond int64", "99999999999999999999", 0, "99999999999999999999 tokens"},
    {"negative", "-1", 0, "not a whole number of tokens"},
    {"sign", "+1", 0, "not a whole number of tokens"},
    {"fraction", "1.5", 0, "not a whole number of tokens"},
    {"hex", "0x10", 0, "not a whole number of tokens"},
    {"empty", "", 0, "not a whole number of tokens"},
};

static void counts_are_digits_and_in_range(void **state) {
  const count_case *c = *state;
  char text[100];
  snprintf(text, sizeof text, "%s\n", c->text);
  const char *path = write_text("k.csv", text, strlen(text));
  csv_reader r;
  sim_error err = {0};
  assert_int_equal(csv_open(&r, path, 1000, &err), SIM_OK);
  char *line = csv_next_line(&r);
  int64_t v = -1;
  int rc = csv_count(&r, line, "c", 1000, "tokens", &v);
  csv_close(&r);
  if (c->message == NULL) {
    if (rc != SIM_OK)
      fail_msg("%s", err.msg);
    assert_int_equal(v, c->value);
    return;
  }
  refused_at_1_1(rc, &err, path, c->message);
}

typedef struct header_case {
  const char *name;
  const char *text;
  const char *message; /* NULL: a header; else after "FILE:" */
} header_case;

static const header_case headers[] = {
    {"names", "Datetime (UTC),Price (EUR/MWh)\n", NULL},
    {"empty fields", "time,,v,\n", NULL},
    {"digits inside names", "temperature_2m_C,pm2.5\n", NULL},
    {"empty file", "",
     "1:1: the file is empty; expected a header naming "
     "columns t, v"},
    {"a time", "2023-01-01 00:00,5\n",
     "1:1: expected a header naming columns t, v; found a time"},
    {"a number second", "time,5\n",
     "1:6: expected a header naming columns t, v; found a number"},
};

static void a_header_is_not_data(void **state) {
  const header_case *c = *state;
  const char *path = write_text("h.csv", c->text, strlen(c->text));
  csv_reader r;
  sim_error err = {0};
  assert_int_equal(csv_open(&r, path, 1000, &err), SIM_OK);
  char *h[CSV_MAX_FIELDS];
  size_t n;
  int rc = csv_header(&r, h, &n, "t, v");
  csv_close(&r);
  if (c->message == NULL) {
    if (rc != SIM_OK)
      fail_msg("%s", err.msg);
    return;
  }
  char want[4200];
  snprintf(want, sizeof want, "%s:%s", path, c->message);
  assert_int_equal(rc, SIM_EINPUT);
  assert_string_equal(err.msg, want);
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ADD(tests, n, lines_fields_and_columns);
  TEST_ADD(tests, n, refuses_binary_and_large_files);
  TEST_ADD(tests, n, skips_a_byte_order_mark);
  TEST_ROWS(tests, n, numbers_are_plain_and_in_range, numbers);
  TEST_ROWS(tests, n, counts_are_digits_and_in_range, counts);
  TEST_ROWS(tests, n, a_header_is_not_data, headers);
  return _cmocka_run_group_tests("csv", tests, n, NULL, NULL);
}
