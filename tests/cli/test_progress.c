/* test_progress.c - the progress line: silent off a terminal or when
 * quiet, the time format, and throttled redraws. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

#include "progress.h"

typedef struct hms_case {
  const char *name;
  double seconds;
  const char *text;
} hms_case;

static const hms_case hms[] = {
    {"zero", 0, "00:00:00"},         {"minutes", 125, "00:02:05"},
    {"a day", 86400, "1d 00:00:00"}, {"day and more", 90061.9, "1d 01:01:01"},
    {"negative", -5, "00:00:00"},    {"not a number", 0.0 / 0.0, "00:00:00"},
};

static void formats_hours_minutes_seconds(void **state) {
  const hms_case *c = *state;
  char buf[32];
  assert_string_equal(progress_hms(c->seconds, buf, sizeof buf), c->text);
}

/* A file is not a terminal: nothing is ever written to it. */
static void silent_when_not_a_terminal(void **state) {
  (void)state;
  FILE *f = tmpfile();
  assert_non_null(f);
  progress p;
  progress_init(&p, f, false);
  assert_false(p.enabled);
  progress_update(&p, 10, 100, 1000, 1.0);
  progress_done(&p);
  assert_int_equal(ftell(f), 0);
  fclose(f);
}

/* Forced on (as on a terminal), it draws, throttles to ten redraws a
 * second, and wipes its line at the end. */
static void draws_throttles_and_wipes(void **state) {
  (void)state;
  FILE *f = tmpfile();
  progress p;
  progress_init(&p, f, false);
  p.enabled = true;
  progress_update(&p, 3600, 86400, 5000, 0.5);
  long after_first = ftell(f);
  assert_true(after_first > 0);
  progress_update(&p, 7200, 86400, 9000, 0.55); /* within 0.1 s: skipped */
  assert_int_equal(ftell(f), after_first);
  progress_update(&p, 7200, 86400, 9000, 0.7);
  assert_true(ftell(f) > after_first);
  progress_done(&p);
  char text[512] = {0};
  rewind(f);
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  assert_non_null(strstr(text, "sim 01:00:00"));
  assert_non_null(strstr(text, "4.2%"));
  assert_non_null(strstr(text, "ETA"));
  fclose(f);
}

static void quiet_stays_quiet(void **state) {
  (void)state;
  progress p;
  progress_init(&p, stderr, true);
  assert_false(p.enabled);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, formats_hours_minutes_seconds, hms);
  TEST_ADD(tests, n, silent_when_not_a_terminal);
  TEST_ADD(tests, n, draws_throttles_and_wipes);
  TEST_ADD(tests, n, quiet_stays_quiet);
  return _cmocka_run_group_tests("progress", tests, n, NULL, NULL);
}
