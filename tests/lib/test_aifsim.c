/* test_aifsim.c - libaifsim (include/aifsim.h) as a client sees it:
 * stepping by periods or events, the power and the cap read between
 * steps, a cap set between them held from the next tick on, power groups
 * and a load target set the same way, a stop flag, the books closed, and
 * misuse refused with a code and a message, never an exit. */
#include "test_util.h"

#include <aifsim.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define QUICKSTART AIFSIM_SOURCE_DIR "/scenarios/quickstart.yaml"

static const char *const short_run[] = {"duration=10min"};

/* Quickstart for 10 minutes, in memory. */
static aifsim *open_short(void) {
  aifsim *a = NULL;
  int rc = aifsim_open(QUICKSTART, short_run, 1, NULL, &a);
  if (rc != AIFSIM_OK)
    fail_msg("aifsim_open: %s", aifsim_errmsg(a));
  return a;
}

/* A step is a control period; the first tick has run at open. */
static void steps_by_periods(void **state) {
  (void)state;
  aifsim *a = open_short();
  assert_close(aifsim_time(a), 0, 0, 0);
  double period = aifsim_period(a);
  assert_int_equal(aifsim_step(a, 1), AIFSIM_OK);
  assert_close(aifsim_time(a), period, 0, 0);
  assert_int_equal(aifsim_step(a, 9), AIFSIM_OK);
  assert_close(aifsim_time(a), 10 * period, 0, 0);
  assert_int_equal(aifsim_run_to(a, 300.5), AIFSIM_OK);
  assert_close(aifsim_time(a), 300.5, 0, 0);
  assert_int_equal(aifsim_step(a, 1), AIFSIM_OK); /* to the next tick */
  assert_close(aifsim_time(a), 301, 0, 0);
  assert_int_equal(aifsim_step(a, 100000), AIFSIM_OK); /* what is left */
  assert_true(aifsim_at_end(a));
  assert_close(aifsim_time(a), aifsim_duration(a), 0, 0);
  assert_int_equal(aifsim_step(a, 1), AIFSIM_ERANGE);
  aifsim_close(a);
}

/* The groups' power adds up to the IT (quickstart has nothing outside
 * the racks), which is under the facility's, under the cap. */
static void power_adds_up(void **state) {
  (void)state;
  aifsim *a = open_short();
  assert_int_equal(aifsim_step(a, 5), AIFSIM_OK);
  aifsim_power p;
  assert_int_equal(aifsim_power_now(a, &p), AIFSIM_OK);
  size_t n = aifsim_ngroups(a);
  assert_true(n >= 1);
  assert_non_null(aifsim_group_name(a, 0));
  assert_null(aifsim_group_name(a, n));
  double w[16] = {0}, sum = 0;
  assert_true(n <= 16);
  assert_int_equal(aifsim_group_power(a, w, n), AIFSIM_OK);
  for (size_t g = 0; g < n; g++)
    sum += w[g];
  assert_close(sum, p.it_w, 1e-12, 0);
  assert_true(p.gpu_w > 0 && p.gpu_w < p.it_w);
  assert_close(p.it_w + p.loss_w + p.smoothing_w + p.cooling_w - p.battery_w,
               p.facility_w, 1e-12, 0);
  assert_true(p.it_w < p.facility_w && p.facility_w <= p.cap_w);
  assert_int_equal(aifsim_group_power(a, w, n + 1), AIFSIM_EINVAL);
  aifsim_grid g; /* quickstart: weather, no demand response */
  assert_int_equal(aifsim_grid_now(a, &g), AIFSIM_OK);
  assert_true(isfinite(g.outdoor_c));
  assert_close(g.dr_cap_w, p.cap_w, 0, 0);
  assert_int_equal(aifsim_grid_now(a, NULL), AIFSIM_EINVAL);
  aifsim_close(a);
}

/* A cap set between steps is the cap in force after the next one, and
 * the factory is held under it; NaN gives the scenario's back. */
static void cap_holds_from_next_tick(void **state) {
  (void)state;
  aifsim *a = open_short();
  aifsim_power p;
  assert_int_equal(aifsim_step(a, 60), AIFSIM_OK);
  assert_int_equal(aifsim_power_now(a, &p), AIFSIM_OK);
  double contracted = p.cap_w, low = 0.9 * p.facility_w;
  assert_int_equal(aifsim_set_cap(a, low), AIFSIM_OK);
  assert_int_equal(aifsim_power_now(a, &p), AIFSIM_OK);
  assert_close(p.cap_w, contracted, 0, 0); /* not yet */
  assert_int_equal(aifsim_step(a, 1), AIFSIM_OK);
  assert_int_equal(aifsim_power_now(a, &p), AIFSIM_OK);
  assert_close(p.cap_w, low, 0, 0);
  assert_true(p.facility_w <= low);
  assert_int_equal(aifsim_set_cap(a, NAN), AIFSIM_OK);
  assert_int_equal(aifsim_step(a, 1), AIFSIM_OK);
  assert_int_equal(aifsim_power_now(a, &p), AIFSIM_OK);
  assert_close(p.cap_w, contracted, 0, 0);
  assert_int_equal(aifsim_finish(a), AIFSIM_OK);
  double v;
  assert_int_equal(aifsim_summary(a, "cap_violation_s", &v), AIFSIM_OK);
  assert_close(v, 0, 0, 0);
  assert_int_equal(aifsim_summary(a, "no_such_metric", &v), AIFSIM_ENOTFOUND);
  aifsim_close(a);
}

/* A cap below what the factory draws with every GPU at its minimum: kept,
 * the GPUs at their minimum, the violation in the books, which close. */
static void deep_cap_is_booked(void **state) {
  (void)state;
  aifsim *a = open_short();
  assert_int_equal(aifsim_set_cap(a, 1e3), AIFSIM_OK);
  assert_int_equal(aifsim_step(a, 10), AIFSIM_OK);
  aifsim_power p;
  assert_int_equal(aifsim_power_now(a, &p), AIFSIM_OK);
  assert_close(p.cap_w, 1e3, 0, 0);
  assert_true(p.facility_w > p.cap_w);
  assert_int_equal(aifsim_finish(a), AIFSIM_OK);
  double over_s;
  assert_int_equal(aifsim_summary(a, "cap_violation_s", &over_s), AIFSIM_OK);
  /* In force from the tick the first step ended on to the end. */
  assert_close(over_s, aifsim_duration(a) - aifsim_period(a), 0, 0);
  aifsim_close(a);
}

/* The whole of file path into a malloc'd buffer; its size in *n. */
static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  rewind(f);
  char *b = malloc(*n + 1);
  assert_non_null(b);
  assert_int_equal(fread(b, 1, *n, f), *n);
  fclose(f);
  return b;
}

/* A C client stepping a period at a time writes the file `aifsim run`
 * writes, byte for byte. */
static void stepped_file_is_the_runs(void **state) {
  (void)state;
  char dir[] = "/tmp/test_aifsim_XXXXXX", cmd[8192], ran[64], stepped[64];
  assert_non_null(mkdtemp(dir));
  snprintf(ran, sizeof ran, "%s/run.h5", dir);
  snprintf(stepped, sizeof stepped, "%s/stepped.h5", dir);
  snprintf(cmd, sizeof cmd,
           "'%s/aifsim' run '%s' -o '%s' --quiet --set duration=10min "
           ">/dev/null",
           AIFSIM_BINARY_DIR, QUICKSTART, ran);
  assert_int_equal(system(cmd), 0);
  aifsim *a = NULL;
  assert_int_equal(aifsim_open(QUICKSTART, short_run, 1, stepped, &a),
                   AIFSIM_OK);
  while (!aifsim_at_end(a))
    assert_int_equal(aifsim_step(a, 1), AIFSIM_OK);
  assert_int_equal(aifsim_finish(a), AIFSIM_OK);
  aifsim_close(a);
  size_t n1, n2;
  char *b1 = slurp(ran, &n1), *b2 = slurp(stepped, &n2);
  assert_int_equal(n1, n2);
  assert_true(memcmp(b1, b2, n1) == 0);
  free(b1);
  free(b2);
  unlink(ran);
  unlink(stepped);
  rmdir(dir);
}

/* Out of range, out of order and NULL: a code and a message. */
static void misuse_is_refused(void **state) {
  (void)state;
  aifsim *a = open_short();
  assert_int_equal(aifsim_step(a, 0), AIFSIM_EINVAL);
  assert_int_equal(aifsim_set_cap(a, 0), AIFSIM_ERANGE);
  assert_int_equal(aifsim_set_cap(a, -1), AIFSIM_ERANGE);
  assert_int_equal(aifsim_set_cap(a, 1e30), AIFSIM_ERANGE);
  assert_non_null(strstr(aifsim_errmsg(a), "contracted"));
  assert_int_equal(aifsim_run_to(a, -1), AIFSIM_ERANGE);
  assert_int_equal(aifsim_run_to(a, 1e9), AIFSIM_ERANGE);
  double v;
  assert_int_equal(aifsim_summary(a, "energy_mwh", &v), AIFSIM_EINVAL);
  assert_int_equal(aifsim_finish(a), AIFSIM_OK);
  assert_int_equal(aifsim_step(a, 1), AIFSIM_EINVAL);
  assert_non_null(strstr(aifsim_errmsg(a), "finished"));
  assert_int_equal(aifsim_finish(a), AIFSIM_EINVAL);
  assert_int_equal(aifsim_set_cap(a, 1), AIFSIM_EINVAL);
  aifsim_close(a);
  assert_int_equal(aifsim_step(NULL, 1), AIFSIM_EINVAL);
  assert_int_equal(aifsim_power_now(NULL, NULL), AIFSIM_EINVAL);
  assert_int_equal(aifsim_open(QUICKSTART, NULL, 0, NULL, NULL),
                   AIFSIM_EINVAL);
  aifsim_close(NULL);
}

/* A scenario that is not there, or wrong: the loader's code and message
 * on a handle that only closes. */
static void bad_scenarios(void **state) {
  (void)state;
  aifsim *a = NULL;
  assert_int_equal(aifsim_open("/nonexistent.yaml", NULL, 0, NULL, &a),
                   AIFSIM_EIO);
  assert_non_null(strstr(aifsim_errmsg(a), "nonexistent"));
  assert_int_equal(aifsim_step(a, 1), AIFSIM_EINVAL);
  aifsim_close(a);
  const char *const bad[] = {"power.cap=-5 kW"};
  assert_int_equal(aifsim_open(QUICKSTART, bad, 1, NULL, &a), AIFSIM_EINPUT);
  assert_non_null(strstr(aifsim_errmsg(a), "power.cap"));
  aifsim_close(a);
}

/* Slices of events run the same run as periods do: the same events to
 * the same end, the same summary. */
static void steps_by_events(void **state) {
  (void)state;
  aifsim *a = open_short(), *b = open_short();
  assert_int_equal(aifsim_step_events(a, 0), AIFSIM_EINVAL);
  unsigned long long before = aifsim_events(a);
  assert_int_equal(aifsim_step_events(a, 7), AIFSIM_OK);
  assert_true(aifsim_events(a) <= before + 7);
  while (!aifsim_at_end(a))
    assert_int_equal(aifsim_step_events(a, 1000), AIFSIM_OK);
  assert_int_equal(aifsim_step_events(a, 1), AIFSIM_ERANGE);
  assert_int_equal(aifsim_step(b, 100000), AIFSIM_OK);
  assert_int_equal(aifsim_events(a), aifsim_events(b));
  assert_int_equal(aifsim_finish(a), AIFSIM_OK);
  assert_int_equal(aifsim_finish(b), AIFSIM_OK);
  double va, vb;
  assert_int_equal(aifsim_summary(a, "energy_mwh", &va), AIFSIM_OK);
  assert_int_equal(aifsim_summary(b, "energy_mwh", &vb), AIFSIM_OK);
  assert_true(va == vb);
  assert_int_equal(aifsim_events(NULL), 0);
  aifsim_close(a);
  aifsim_close(b);
}

/* The stop flag stops the run at its next event: ECANCELED, a failed
 * handle, and no output but the partial file kept with keep_partial. */
static void stop_flag_and_keep_partial(void **state) {
  (void)state;
  char dir[] = "/tmp/test_aifsim_XXXXXX", out[64], partial[80];
  assert_non_null(mkdtemp(dir));
  snprintf(out, sizeof out, "%s/run.h5", dir);
  snprintf(partial, sizeof partial, "%s.partial", out);
  volatile sig_atomic_t stop = 0;
  aifsim_options o = {.keep_partial = 1, .stop = &stop, .sweep_point = 3};
  aifsim *a = NULL;
  assert_int_equal(aifsim_open_opts(QUICKSTART, short_run, 1, out, &o, &a),
                   AIFSIM_OK);
  assert_int_equal(aifsim_step(a, 2), AIFSIM_OK);
  stop = 1;
  assert_int_equal(aifsim_step(a, 2), AIFSIM_ECANCELED);
  assert_false(aifsim_bad_input(a));
  assert_int_equal(aifsim_finish(a), AIFSIM_EINVAL);
  aifsim_close(a);
  assert_int_equal(access(out, F_OK), -1);
  assert_int_equal(access(partial, F_OK), 0);
  o.keep_partial = 0;
  stop = 0;
  assert_int_equal(aifsim_open_opts(QUICKSTART, short_run, 1, out, &o, &a),
                   AIFSIM_OK);
  aifsim_close(a); /* not finished: nothing left */
  assert_int_equal(access(out, F_OK), -1);
  assert_int_equal(access(partial, F_OK), -1);
  rmdir(dir);
}

/* The input's failures (exit 2 for the command) apart from the run's. */
static void bad_input_is_said(void **state) {
  (void)state;
  aifsim *a = NULL;
  aifsim_open("/nonexistent.yaml", NULL, 0, NULL, &a);
  assert_true(aifsim_bad_input(a));
  aifsim_close(a);
  const char *const bad[] = {"power.cap=-5 kW"};
  aifsim_open(QUICKSTART, bad, 1, NULL, &a);
  assert_true(aifsim_bad_input(a));
  aifsim_close(a);
  assert_int_equal(
      aifsim_open(QUICKSTART, short_run, 1, "/nonexistent/dir/x.h5", &a),
      AIFSIM_EIO);
  assert_false(aifsim_bad_input(a));
  assert_non_null(strstr(aifsim_errmsg(a), "cannot write the output"));
  aifsim_close(a);
  assert_false(aifsim_bad_input(NULL));
}

/* Quickstart for 10 minutes with two power groups. */
static aifsim *open_groups(void) {
  const char *const sets[] = {
      "duration=10min", "power.policy=priority",
      ("power.groups=[{name: liquid, racks: [nvl72], priority: 1}, "
       "{name: air, racks: [hgx-h100]}]")};
  aifsim *a = NULL;
  if (aifsim_open(QUICKSTART, sets, 3, NULL, &a) != AIFSIM_OK)
    fail_msg("aifsim_open: %s", aifsim_errmsg(a));
  return a;
}

/* Power groups from the API: read between steps, a group's cap and
 * lending set, held from the next tick on; NaN gives the scenario's
 * back. */
static void groups_from_the_api(void **state) {
  (void)state;
  aifsim *a = open_groups();
  assert_int_equal(aifsim_npower_groups(a), 2);
  assert_string_equal(aifsim_power_group_name(a, 0), "liquid");
  assert_null(aifsim_power_group_name(a, 2));
  assert_int_equal(aifsim_step(a, 60), AIFSIM_OK);
  aifsim_power_group g[2];
  for (size_t p = 0; p < 2; p++) {
    assert_int_equal(aifsim_power_group_now(a, p, &g[p]), AIFSIM_OK);
    assert_true(isnan(g[p].cap_w));
    assert_true(g[p].gpu_w <= g[p].budget_w * (1 + 1e-12));
  }
  assert_true(g[0].budget_w + g[1].budget_w <=
              (g[0].own_w + g[1].own_w) * (1 + 1e-12));
  double cap = 0.5 * g[0].own_w;
  assert_int_equal(aifsim_set_group_cap(a, 0, cap), AIFSIM_OK);
  assert_int_equal(aifsim_set_group_lending(a, 0, 0, 1), AIFSIM_OK);
  assert_int_equal(aifsim_step(a, 1), AIFSIM_OK);
  assert_int_equal(aifsim_power_group_now(a, 0, &g[0]), AIFSIM_OK);
  assert_close(g[0].cap_w, cap, 0, 0);
  assert_close(g[0].budget_w, cap, 1e-12, 0);
  assert_true(g[0].gpu_w <= cap * (1 + 1e-12));
  assert_int_equal(aifsim_set_group_cap(a, 0, NAN), AIFSIM_OK);
  assert_int_equal(aifsim_step(a, 1), AIFSIM_OK);
  assert_int_equal(aifsim_power_group_now(a, 0, &g[0]), AIFSIM_OK);
  assert_true(isnan(g[0].cap_w));
  assert_int_equal(aifsim_finish(a), AIFSIM_OK);
  aifsim_close(a);
}

/* A group out of range, a cap not above 0, NULL, a finished run. */
static void groups_misuse_is_refused(void **state) {
  (void)state;
  aifsim *a = open_groups();
  aifsim_power_group g[1];
  assert_int_equal(aifsim_set_group_cap(a, 2, 1e3), AIFSIM_EINVAL);
  assert_non_null(strstr(aifsim_errmsg(a), "no power group 2"));
  assert_int_equal(aifsim_set_group_cap(a, 0, 0), AIFSIM_ERANGE);
  assert_int_equal(aifsim_set_group_cap(a, 0, -1), AIFSIM_ERANGE);
  assert_int_equal(aifsim_set_group_lending(a, 5, 1, 1), AIFSIM_EINVAL);
  assert_int_equal(aifsim_power_group_now(a, 2, &g[0]), AIFSIM_EINVAL);
  assert_int_equal(aifsim_power_group_now(a, 0, NULL), AIFSIM_EINVAL);
  assert_int_equal(aifsim_finish(a), AIFSIM_OK);
  assert_int_equal(aifsim_set_group_cap(a, 0, 1e3), AIFSIM_EINVAL);
  aifsim_close(a);
  assert_int_equal(aifsim_npower_groups(NULL), 0);
}

/* A load target set between steps holds the facility under it from the
 * next tick on, booked apart from the cap; INFINITY ends it. */
static void load_target_from_the_api(void **state) {
  (void)state;
  aifsim *a = open_short();
  assert_true(isnan(aifsim_load_target(a)));
  assert_int_equal(aifsim_step(a, 60), AIFSIM_OK);
  aifsim_power p;
  assert_int_equal(aifsim_power_now(a, &p), AIFSIM_OK);
  double target = 0.9 * p.facility_w, cap = p.cap_w;
  assert_int_equal(aifsim_set_load_target(a, target), AIFSIM_OK);
  assert_true(isnan(aifsim_load_target(a))); /* not yet */
  assert_int_equal(aifsim_step(a, 1), AIFSIM_OK);
  assert_close(aifsim_load_target(a), target, 0, 0);
  assert_int_equal(aifsim_power_now(a, &p), AIFSIM_OK);
  assert_true(p.facility_w <= target);
  assert_close(p.cap_w, cap, 0, 0); /* the cap stays the cap */
  assert_int_equal(aifsim_set_load_target(a, INFINITY), AIFSIM_OK);
  assert_int_equal(aifsim_step(a, 1), AIFSIM_OK);
  assert_true(isnan(aifsim_load_target(a)));
  assert_int_equal(aifsim_set_load_target(a, 0), AIFSIM_ERANGE);
  assert_int_equal(aifsim_set_load_target(a, -5), AIFSIM_ERANGE);
  assert_int_equal(aifsim_finish(a), AIFSIM_OK);
  double v;
  assert_int_equal(aifsim_summary(a, "load_target_s", &v), AIFSIM_OK);
  assert_close(v, aifsim_period(a), 0, 0);
  assert_int_equal(aifsim_summary(a, "cap_violation_s", &v), AIFSIM_OK);
  assert_close(v, 0, 0, 0);
  assert_int_equal(aifsim_set_load_target(a, 1e6), AIFSIM_EINVAL);
  aifsim_close(a);
  assert_true(isnan(aifsim_load_target(NULL)));
}

/* Client policies: every unit at its minimum (counting its calls), one
 * that fails, one out of range. */
static int at_minimum(void *ctx, const aifsim_unit *u, size_t n,
                      double budget_w, double *cap) {
  double total = 0;
  for (size_t k = 0; k < n; k++)
    total += u[k].n * (cap[k] = u[k].lo);
  assert_true(total <= budget_w);
  ++*(int *)ctx;
  return 0;
}

static int refuses(void *ctx, const aifsim_unit *u, size_t n, double budget_w,
                   double *cap) {
  (void)ctx, (void)u, (void)n, (void)budget_w, (void)cap;
  return 7;
}

static int over_range(void *ctx, const aifsim_unit *u, size_t n,
                      double budget_w, double *cap) {
  (void)ctx, (void)budget_w;
  for (size_t k = 0; k < n; k++)
    cap[k] = u[k].hi + 1;
  return 0;
}

/* A policy set between steps shares the budget from the next tick on;
 * what it does wrong stops the run with a code and a message. */
static void policy_from_the_client(void **state) {
  (void)state;
  aifsim *a = open_short();
  aifsim_power before, after;
  assert_int_equal(aifsim_step(a, 30), AIFSIM_OK);
  assert_int_equal(aifsim_power_now(a, &before), AIFSIM_OK);
  int calls = 0;
  assert_int_equal(aifsim_set_policy(a, at_minimum, &calls), AIFSIM_OK);
  assert_int_equal(aifsim_step(a, 2), AIFSIM_OK);
  assert_true(calls >= 2); /* a call per rack group and tick */
  assert_int_equal(aifsim_power_now(a, &after), AIFSIM_OK);
  assert_true(after.gpu_w < before.gpu_w);
  assert_int_equal(aifsim_set_policy(a, NULL, NULL), AIFSIM_OK);
  int seen = calls;
  assert_int_equal(aifsim_step(a, 2), AIFSIM_OK);
  assert_int_equal(calls, seen);
  assert_int_equal(aifsim_finish(a), AIFSIM_OK);
  assert_int_equal(aifsim_set_policy(a, at_minimum, &calls), AIFSIM_EINVAL);
  aifsim_close(a);
  static const struct {
    aifsim_policy_fn fn;
    int code;
    const char *msg;
  } bad[] = {{refuses, AIFSIM_ECANCELED, "returned 7"},
             {over_range, AIFSIM_ERANGE, "outside its range"}};
  for (size_t i = 0; i < N_OF(bad); i++) {
    a = open_short();
    assert_int_equal(aifsim_set_policy(a, bad[i].fn, NULL), AIFSIM_OK);
    assert_int_equal(aifsim_step(a, 1), bad[i].code);
    assert_non_null(strstr(aifsim_errmsg(a), bad[i].msg));
    assert_int_equal(aifsim_step(a, 1), AIFSIM_EINVAL);
    aifsim_close(a);
  }
  assert_int_equal(aifsim_set_policy(NULL, NULL, NULL), AIFSIM_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(steps_by_periods),
      cmocka_unit_test(power_adds_up),
      cmocka_unit_test(cap_holds_from_next_tick),
      cmocka_unit_test(deep_cap_is_booked),
      cmocka_unit_test(stepped_file_is_the_runs),
      cmocka_unit_test(misuse_is_refused),
      cmocka_unit_test(bad_scenarios),
      cmocka_unit_test(steps_by_events),
      cmocka_unit_test(stop_flag_and_keep_partial),
      cmocka_unit_test(bad_input_is_said),
      cmocka_unit_test(groups_from_the_api),
      cmocka_unit_test(groups_misuse_is_refused),
      cmocka_unit_test(load_target_from_the_api),
      cmocka_unit_test(policy_from_the_client),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
