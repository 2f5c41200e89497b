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

/* The next slice: the pace of the last one, at most 4x longer. */
typedef struct slice_case {
  const char *name;
  int64_t last;
  double wall_s, target_s;
  int64_t want;
} slice_case;

static const slice_case slices[] = {
    {"keeps a pace on target", 1000, 0.1, 0.1, 1000},
    {"shrinks at once", 1000000, 1.0, 0.1, 100000},
    {"shrinks a thousandfold", 1000000000, 100.0, 0.1, 1000000},
    {"grows at most 4x", 1000, 0.001, 0.1, 4000},
    {"grows 4x when no time passed", 1000, 0.0, 0.1, 4000},
    {"grows 4x on a NaN wall", 1000, 0.0 / 0.0, 0.1, 4000},
    {"grows 4x on a negative wall", 1000, -1.0, 0.1, 4000},
    {"never below 1", 10, 1e6, 0.1, 1},
    {"a zero slice counts as 1", 0, 0.0, 0.1, 4},
    {"saturates far below overflow", 3000000000000000000, 1e-9, 0.1,
     4000000000000000000},
};

static void sizes_the_next_slice(void **state) {
  const slice_case *c = *state;
  int64_t got = progress_next_slice(c->last, c->wall_s, c->target_s);
  if (got != c->want)
    fail_msg("%lld after %lld in %g s: want %lld", (long long)got,
             (long long)c->last, c->wall_s, (long long)c->want);
}

/* Slices count events, and an event's cost varies within a run only by
 * its mix (a control tick of many GPUs against a request's few
 * operations). Here the cost per event swings between 1 and 8 us from
 * one slice to the next, and the first slice is far too short: after
 * the first few, every slice ends within a second, as the progress line
 * needs (issue 27), and none is wastefully short. */
static void within_a_second_while_costs_swing(void **state) {
  (void)state;
  static const double factor[] = {1, 8, 2, 5, 1, 1, 8, 8, 3, 1, 6, 2};
  int64_t slice = 1000;
  for (int k = 0; k < 240; k++) {
    double cost = 1e-6 * factor[k % (sizeof factor / sizeof *factor)];
    double wall = (double)slice * cost;
    if (k >= 8 && !(wall < 1.0))
      fail_msg("slice %d took %g s", k, wall);
    if (k >= 8 && !(wall > 0.01))
      fail_msg("slice %d took only %g s", k, wall);
    slice = progress_next_slice(slice, wall, 0.1);
  }
}

static void quiet_stays_quiet(void **state) {
  (void)state;
  progress p;
  progress_init(&p, stderr, true);
  assert_false(p.enabled);
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ROWS(tests, n, formats_hours_minutes_seconds, hms);
  TEST_ADD(tests, n, silent_when_not_a_terminal);
  TEST_ROWS(tests, n, sizes_the_next_slice, slices);
  TEST_ADD(tests, n, within_a_second_while_costs_swing);
  TEST_ADD(tests, n, draws_throttles_and_wipes);
  TEST_ADD(tests, n, quiet_stays_quiet);
  return _cmocka_run_group_tests("progress", tests, n, NULL, NULL);
}
