/* test_steering.c - power groups and the load target in a run
 * (models/control/steer.c through models/factory/rows_steer.c): the
 * groups' own budgets against the split computed by hand, a busy group
 * borrowing what an idle one leaves and held to its own budget without
 * borrowing, a group cap, the facility held under a target below its
 * load and untouched by one above its cap, the books closing, scenarios
 * without either unchanged, bad input with FILE:LINE:COLUMN, and
 * allocation failures. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "factory.h"
#include "factory_alloc.h"
#include "test_run.h"

/* Two rack groups of two racks of 8 H100s (700 W TDP), 2 kW of other IT
 * a rack at full load, no cooling, a lossless chain: facility power is
 * IT power. Under the 20 kW cap the static split leaves the 32 GPUs
 * 20 - 4 x 2 = 12 kW, 375 W each: 6 kW a group. Group a runs at 90%,
 * group b at 20%. */
static const char scenario[] =
    "name: s\nseed: 4\nduration: 1 h\nsample_period: 5 min\n"
    "power: {cap: 20 kW, policy: priority}\n"
    "racks:\n"
    "  - {name: a, count: 2, gpu: H100-SXM, gpus_per_rack: 8,\n"
    "     other_power_idle: 1 kW, other_power_max: 2 kW,\n"
    "     load: {level: 90%}}\n"
    "  - {name: b, count: 2, gpu: H100-SXM, gpus_per_rack: 8,\n"
    "     other_power_idle: 1 kW, other_power_max: 2 kW,\n"
    "     load: {level: 20%}}\n"
    "loops: []\nelectrical: {losses: false}\n";

#define GROUPS                                                                 \
  "power.groups=[{name: busy, racks: [a]}, {name: idle, racks: [b]}]"

static const char *path(void) {
  return test_scenario_file("steering.yaml", scenario);
}

static double metric(const tel_sink *sink, const char *key) {
  double v;
  return tel_memory_summary(sink, key, &v) == SIM_OK ? v : NAN;
}

/* The per-group columns of a run with groups, [sample][group]. */
typedef struct groups_seen {
  const double *own, *budget, *want, *gpu;
  size_t rows;
} groups_seen;

static groups_seen seen(const test_run *r) {
  size_t rows, w;
  groups_seen g = {
      .own = test_column(r, "power_groups", "own_w", &rows, &w),
      .budget = test_column(r, "power_groups", "budget_w", &rows, &w),
      .want = test_column(r, "power_groups", "want_w", &rows, &w),
      .gpu = test_column(r, "power_groups", "gpu_power_w", &rows, &w),
      .rows = rows};
  assert_int_equal(w, 2);
  return g;
}

/* Borrowing on (the default): each group's own budget is its 6 kW share;
 * the busy group takes what the idle one leaves, which keeps its want;
 * no group's GPUs ever draw above its budget. */
static void busy_borrows_from_idle(void **state) {
  (void)state;
  test_run r;
  const char *sets[] = {GROUPS};
  test_run_file(&r, path(), sets, 1);
  groups_seen g = seen(&r);
  for (size_t i = 0; i < g.rows; i++) {
    assert_close(g.own[2 * i], 6000, 1e-9, 0);
    assert_close(g.own[2 * i + 1], 6000, 1e-9, 0);
    assert_true(g.want[2 * i] > 6000 && g.want[2 * i + 1] < 6000);
    assert_close(g.budget[2 * i + 1], g.want[2 * i + 1], 1e-9, 0);
    assert_close(g.budget[2 * i], 12000 - g.want[2 * i + 1], 1e-9, 0);
    for (size_t p = 0; p < 2; p++)
      assert_true(g.gpu[2 * i + p] <= g.budget[2 * i + p] * (1 + 1e-12));
  }
  assert_true(metric(r.sink, "power_group_borrowed_mwh") > 0);
  assert_true(isnan(metric(r.sink, "load_target_s")));
  test_run_free(&r);
}

/* Without borrowing the busy group stays within its 6 kW; with a 4 kW
 * cap, within 4 kW, and the idle group's own budget takes the 2 kW the
 * cap holds back (8 kW). */
static void held_without_borrowing(void **state) {
  (void)state;
  static const struct {
    const char *set;
    double own_busy, own_idle;
  } cases[] = {
      {"power.groups.0.borrow=false", 6000, 6000},
      {"power.groups.0={name: busy, racks: [a], cap: 4 kW, borrow: false}",
       4000, 8000},
  };
  for (size_t k = 0; k < N_OF(cases); k++) {
    test_run r;
    const char *sets[] = {GROUPS, cases[k].set};
    test_run_file(&r, path(), sets, 2);
    groups_seen g = seen(&r);
    for (size_t i = 0; i < g.rows; i++) {
      assert_close(g.own[2 * i], cases[k].own_busy, 1e-9, 0);
      assert_close(g.own[2 * i + 1], cases[k].own_idle, 1e-9, 0);
      assert_close(g.budget[2 * i], cases[k].own_busy, 1e-9, 0);
      assert_true(g.gpu[2 * i] <= cases[k].own_busy * (1 + 1e-12));
    }
    assert_close(metric(r.sink, "power_group_borrowed_mwh"), 0, 0, 0);
    test_run_free(&r);
  }
}

/* A target below the load holds the facility under it at every sample,
 * as a cap does, and is booked apart from the cap; one above the cap
 * changes nothing the facility draws. */
static void load_target_followed(void **state) {
  (void)state;
  test_run none, low, high;
  const char *low_set[] = {"power.load_target=[{from: 0 s, target: 13 kW}]"};
  const char *high_set[] = {"power.load_target=[{from: 0 s, target: 25 kW}]"};
  test_run_file(&none, path(), NULL, 0);
  test_run_file(&low, path(), low_set, 1);
  test_run_file(&high, path(), high_set, 1);
  size_t n0, n1, n2, nt, w;
  const double *p0 = test_facility_column(&none, "power_w", &n0);
  const double *p1 = test_facility_column(&low, "power_w", &n1);
  const double *p2 = test_facility_column(&high, "power_w", &n2);
  const double *t1 = test_column(&low, "load_target", "target_w", &nt, &w);
  assert_int_equal(nt, n1);
  for (size_t i = 0; i < n1; i++) {
    assert_true(p0[i] > 13000);
    assert_true(p1[i] <= 13000);
    assert_close(t1[i], 13000, 0, 0);
    assert_true(p2[i] == p0[i]);
  }
  assert_close(metric(low.sink, "load_target_s"), 3600, 0, 0);
  assert_close(metric(low.sink, "load_target_over_s"), 0, 0, 0);
  assert_close(low.sum.cap_violation_s, 0, 0, 0);
  assert_close(metric(high.sink, "load_target_error_w"),
               25000 - none.sum.mean_power_w, 1e-9, 0);
  test_run_free(&none);
  test_run_free(&low);
  test_run_free(&high);
}

/* Without groups or a target: no group, no metric, nothing new in the
 * resolved scenario. */
static void absent_when_not_given(void **state) {
  (void)state;
  test_run r;
  size_t n, w;
  test_run_file(&r, path(), NULL, 0);
  assert_null(tel_memory_column(r.sink, "power_groups", "own_w", &n, &w));
  assert_null(tel_memory_column(r.sink, "load_target", "target_w", &n, &w));
  assert_true(isnan(metric(r.sink, "power_group_borrowed_mwh")));
  assert_null(strstr(r.sc.resolved, "groups"));
  assert_null(strstr(r.sc.resolved, "load_target"));
  test_run_free(&r);
}

/* Bad input in the file names its position. */
static void bad_input(void **state) {
  (void)state;
  static const struct {
    const char *power, *want;
  } cases[] = {
      {"{cap: 20 kW, groups: [{name: g, racks: [a, c]}]}",
       "no rack group is called 'c'"},
      {"{cap: 20 kW, groups: [{name: g, racks: [a]}, {name: h, racks: [a]}]}",
       "in power group 'g' already"},
      {"{cap: 20 kW, groups: [{name: g, racks: [a]}, {name: g, racks: [b]}]}",
       "two power groups are called 'g'"},
      {"{cap: 20 kW, groups: [{name: g, racks: [a], cap: -1 kW}]}", "cap"},
      {"{cap: 20 kW, groups: [{name: g, racks: []}]}", "no rack groups"},
      {"{cap: 20 kW, load_target: [{from: 1 h, target: 9 kW}, {from: 0 h}]}",
       "after the one before"},
      {"{cap: 20 kW, load_target: [{target: 9 kW}]}", "from"},
  };
  for (size_t i = 0; i < N_OF(cases); i++) {
    char text[2048];
    snprintf(text, sizeof text, "%s", scenario);
    char *p = strstr(text, "power: {cap: 20 kW, policy: priority}");
    char rest[2048];
    snprintf(rest, sizeof rest, "%s", strchr(p, '\n'));
    snprintf(p, sizeof text - (size_t)(p - text), "power: %s%s", cases[i].power,
             rest);
    const char *file = test_scenario_file("steering_bad.yaml", text);
    factory_scenario sc;
    sim_error err = {0};
    assert_int_equal(factory_scenario_load(file, NULL, 0, &sc, &err),
                     SIM_EINPUT);
    char where[512];
    snprintf(where, sizeof where, "%s:5:", file);
    if (strstr(err.msg, cases[i].want) == NULL ||
        strncmp(err.msg, where, strlen(where)) != 0)
      fail_msg("%s: %s", cases[i].power, err.msg);
  }
}

static void alloc_failures(void **state) {
  (void)state;
  const char *sets[] = {GROUPS,
                        "power.load_target=[{from: 0 s, target: 13 kW}]"};
  alloc_check_scenario(path(), sets, 2, 4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(busy_borrows_from_idle),
      cmocka_unit_test(held_without_borrowing),
      cmocka_unit_test(load_target_followed),
      cmocka_unit_test(absent_when_not_given),
      cmocka_unit_test(bad_input),
      cmocka_unit_test(alloc_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
