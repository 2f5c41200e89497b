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

static void refuses_binary_and_large_files(void **state) {
  (void)state;
  csv_reader r;
  sim_error err = {0};
  const char *path = write_text("nul.csv", "a,b\n1\0,2\n", 9);
  assert_int_equal(csv_open(&r, path, 1000, &err), SIM_EINPUT);
  assert_non_null(strstr(err.msg, "NUL byte"));
  path = write_text("big.csv", "a,b\n1,2\n", 8);
  assert_int_equal(csv_open(&r, path, 4, &err), SIM_EINPUT);
  assert_int_equal(csv_open(&r, "/nonexistent.csv", 4, &err), SIM_EIO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lines_fields_and_columns),
      cmocka_unit_test(refuses_binary_and_large_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
