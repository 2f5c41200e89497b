/* test_grid_events.c - the grid's events in a whole factory, counted by
 * hand: a sag the UPS rides through costs nothing, a longer one takes
 * the facility's whole load off the grid for the stated time and brings
 * it back on the stated ramp, the UPS alone leaves the IT dark for the
 * rest; an operator's DR targets from a CSV give the alignment a small
 * series counts to; and bad target files fail at FILE:LINE:COL. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "factory.h"
#include "test_run.h"

/* One rack at a constant load, no cooling, a lossless chain: the
 * facility's power is its IT's, the same at every tick. */
#define RACK                                                                   \
  "racks:\n"                                                                   \
  "  - name: hgx\n    count: 1\n    gpu: H100-SXM\n    gpus_per_rack: 32\n"   \
  "    other_power_idle: 9.2 kW\n    other_power_max: 18.4 kW\n"               \
  "    load: {pattern: constant, level: 100%, noise: 0}\n"                     \
  "loops: []\nelectrical: {losses: false}\n"

static const char sag_base[] =
    "name: s\nseed: 1\nduration: 20 min\ncontrol_period: 1 s\n"
    "sample_period: 1 min\npower: {cap: 60 kW}\n" RACK;

static double facility_w(const test_run *r) {
  return r->sum.energy_j / r->sum.duration_s;
}

/* 75% for 0.3 s at 100 s: inside ITIC and the protection (ITIC): met,
 * no trip, nothing lost. */
static void short_sag_costs_nothing(void **state) {
  (void)state;
  const char *sets[] = {
      "grid.disturbances=[{kind: sag, start: 100 s, duration: 300 ms, "
      "voltage: 75%}]"};
  test_run r;
  test_run_file(&r, test_scenario_file("sag.yaml", sag_base), sets, 1);
  assert_int_equal(r.sum.dist_events, 1);
  assert_int_equal(r.sum.dist_trips, 0);
  assert_true(r.sum.ride_through_met == 1);
  assert_true(r.sum.dist_backup_j == 0 && r.sum.dist_off_s == 0);
  assert_true(r.sum.dist_lost_w == 0);
  test_run_free(&r);
}

/* 75% for 2 s at 100 s: the protection lets go at 100.5 s; back on the
 * grid 300 s after the sag ends (402 s), all back 300 s later (702 s).
 * The grid loses the whole facility at the trip; the backup carries
 * 301.5 s of it and half of the 300 s ramp: 451.5 s of its power. The
 * generator starts within the UPS's 5 min: the IT never goes dark. */
static void long_sag_trips_and_returns(void **state) {
  (void)state;
  const char *sets[] = {
      "grid.disturbances=[{kind: sag, start: 100 s, duration: 2 s, "
      "voltage: 75%}]"};
  test_run r;
  test_run_file(&r, test_scenario_file("sag.yaml", sag_base), sets, 1);
  double p = facility_w(&r);
  assert_int_equal(r.sum.dist_trips, 1);
  assert_true(isnan(r.sum.ride_through_met)); /* outside ITIC: not judged */
  assert_close(r.sum.dist_lost_w, p, 1e-12, 0);
  assert_close(r.sum.dist_off_s, 301.5, 0, 1e-9);
  assert_close(r.sum.dist_backup_j, 451.5 * p, 1e-9, 0);
  assert_true(r.sum.dist_dark_s == 0);
  size_t rows, w;
  const double *g = tel_memory_column(r.sink, "grid_draw", "power_w", &rows,
                                      &w);
  assert_non_null(g);
  assert_int_equal(rows, 20);
  assert_close(g[0], p, 1e-12, 0);     /* [0, 60 s): all on the grid */
  assert_true(g[2] == 0 && g[5] == 0); /* [120, 180), [300, 360): off */
  /* [540, 600): the ramp from 402 s, (540 - 402 + 30) / 300 = 0.56 of it */
  assert_close(g[9], p * (168.0 / 300), 1e-9, 0);
  assert_close(g[12], p, 1e-12, 0); /* [720, 780): all back */
  test_run_free(&r);
}

/* Without a generator the UPS carries 300 s of the 301.5 s off the grid:
 * the IT is dark from 400.5 s to 402 s, booked as a fault over every
 * rack. */
static void ups_alone_leaves_it_dark(void **state) {
  (void)state;
  const char *sets[] = {
      "grid.disturbances=[{kind: sag, start: 100 s, duration: 2 s, "
      "voltage: 75%}]",
      "ride_through.generator=false"};
  test_run r;
  test_run_file(&r, test_scenario_file("sag.yaml", sag_base), sets, 2);
  assert_close(r.sum.dist_dark_s, 1.5, 0, 1e-9);
  assert_int_equal(r.sum.fault_events, 1);
  test_run_free(&r);
}

/* Alignment by hand: a 30 kW target from 600 s (the rack can be held
 * there) and 5 kW from 1200 s (below what it draws at its GPUs' minimum
 * caps) to 1800 s, with a 30 s window. Judged: the periods from 630 s
 * to 1200 s (570 s, all at or under the target) and from 1230 s to
 * 1800 s (570 s, none): alignment 570 / 1140 = 1/2. */
static void alignment_counted_by_hand(void **state) {
  (void)state;
  test_scenario_file("targets.csv",
                     "time_s,target_mw\n600,0.030\n1200,0.005\n1800,\n");
  const char *path = test_scenario_file(
      "dr.yaml", "name: d\nseed: 1\nduration: 40 min\ncontrol_period: 1 s\n"
                 "sample_period: 1 min\npower: {cap: 60 kW}\n"
                 "grid: {dr_file: targets.csv, dr_window: 30 s}\n" RACK);
  test_run r;
  test_run_file(&r, path, NULL, 0);
  assert_int_equal(r.sum.dr_events, 1);
  assert_close(r.sum.dr_s, 1200, 0, 1e-9);
  assert_close(r.sum.dr_alignment, 0.5, 0, 1e-12);
  test_run_free(&r);
}

typedef struct bad_file {
  const char *name, *csv, *want;
} bad_file;

static const bad_file bad_files[] = {
    {"no target column", "time_s,level\n600,0.3\n",
     "targets.csv:1:1: expected a header naming time_s and one of"},
    {"times fall", "time_s,cut\n600,0.3\n300,0.2\n",
     "targets.csv:3:1: column 'time_s': times must rise"},
    {"off the grain", "time_s,cut\n630,0.3\n",
     "targets.csv:2:1: column 'time_s': 630 s is not a whole multiple of "
     "sample_period 60 s"},
    {"cut above 1", "time_s,cut\n600,1.5\n", "targets.csv:2:5: column 'cut'"},
    {"no rows", "time_s,cut\n", "targets.csv:1:1: no targets"},
};

/* A shortened run of a DR scenario (--set duration=...) that ends before
 * the file's first target runs, with no event: the rows are there. */
static void targets_past_a_short_run_are_none(void **state) {
  (void)state;
  test_scenario_file("targets.csv", "time_s,cut\n3600,0.4\n7200,\n");
  const char *path = test_scenario_file(
      "dr.yaml", "name: d\nseed: 1\nduration: 1 h\nsample_period: 1 min\n"
                 "power: {cap: 60 kW}\ngrid: {dr_file: targets.csv}\n" RACK);
  test_run r;
  test_run_file(&r, path, NULL, 0);
  assert_int_equal(r.sum.dr_events, 0);
  test_run_free(&r);
}

static void bad_targets_fail_at_their_line(void **state) {
  const bad_file *b = *state;
  test_scenario_file("targets.csv", b->csv);
  const char *path = test_scenario_file(
      "dr.yaml", "name: d\nseed: 1\nduration: 40 min\n"
                 "sample_period: 1 min\npower: {cap: 60 kW}\n"
                 "grid: {dr_file: targets.csv}\n" RACK);
  factory_scenario sc;
  sim_error err = {0};
  assert_int_equal(factory_scenario_load(path, NULL, 0, &sc, &err),
                   SIM_EINPUT);
  if (strstr(err.msg, b->want) == NULL)
    fail_msg("'%s' does not contain '%s'", err.msg, b->want);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ADD(tests, n, short_sag_costs_nothing);
  TEST_ADD(tests, n, long_sag_trips_and_returns);
  TEST_ADD(tests, n, ups_alone_leaves_it_dark);
  TEST_ADD(tests, n, alignment_counted_by_hand);
  TEST_ADD(tests, n, targets_past_a_short_run_are_none);
  TEST_ROWS(tests, n, bad_targets_fail_at_their_line, bad_files);
  return _cmocka_run_group_tests("grid_events", tests, n, NULL, NULL);
}
