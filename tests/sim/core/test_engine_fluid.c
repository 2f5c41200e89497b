/* test_engine_fluid.c - the engine's fluid progress, table-driven. */
#include "test_engine_fixture.h"

/* ---- Fluid progress: table-driven ------------------------------------ */

typedef struct rate_step {
  sim_time at;
  double rate;
} rate_step;

typedef struct fluid_case {
  const char *name;
  double work;
  rate_step steps[4];
  size_t n;
  sim_time want_done; /* -1: never */
} fluid_case;

static const fluid_case fluid_cases[] = {
    {"constant rate", 10, {{0, 2}}, 1, 5 * SIM_SEC},
    {"rate change midway", 10, {{0, 2}, {SIM_SEC, 4}}, 2, 3 * SIM_SEC},
    {"rounds up to the ns", 1, {{0, 3}}, 1, 333333334},
    /* 1.1 / 10 * 1e9 = 110000000.00000001 in doubles. */
    {"exact ns not rounded past", 1.1, {{0, 10}}, 1, 110000000},
    /* 9.9 - 6.6 * 1.5 = 1.8e-15 in doubles. */
    {"no crumbs left at completion", 9.9, {{0, 6.6}}, 1, 1500000000},
    {"rate change at a fraction",
     100,
     {{0, 1}, {SIM_SEC, 3}, {2 * SIM_SEC, 1}, {3 * SIM_SEC, 3}},
     4,
     3 * SIM_SEC + 31666666667},
    {"rate 0 holds", 5, {{0, 1}, {2 * SIM_SEC, 0}}, 2, -1},
    {"rate 0 then resume",
     5,
     {{0, 1}, {2 * SIM_SEC, 0}, {10 * SIM_SEC, 1}},
     3,
     13 * SIM_SEC},
    {"rate 0 from the start", 5, {{0, 0}}, 1, -1},
    {"no work", 0, {{SIM_MS, 1}}, 1, SIM_MS},
    {"tiny rate waits at the end of time", 1, {{0, 1e-300}}, 1, SIM_TIME_MAX},
};

static void test_fluid(void **state) {
  const fluid_case *c = *state;
  fixture f;
  fx_init(&f);
  sim_fluid fl = {0};
  sim_fluid_start(f.e, &fl, c->work);
  assert_int_equal(fl.done.slot, 0);
  for (size_t i = 0; i < c->n; i++) {
    assert_int_equal(sim_engine_run(f.e, c->steps[i].at), SIM_OK);
    assert_int_equal(f.m.n, 0); /* not done before the last change */
    assert_int_equal(
        sim_fluid_set_rate(f.e, &fl, c->steps[i].rate, f.m.kind, 7, 8), SIM_OK);
    assert_int_equal(sim_engine_pending(f.e, fl.done), c->steps[i].rate > 0);
  }
  assert_int_equal(sim_engine_run(f.e, SIM_TIME_MAX), SIM_OK);
  if (c->want_done < 0) {
    assert_int_equal(f.m.n, 0);
    double left = sim_fluid_remaining(&fl, sim_engine_now(f.e));
    assert_close(left, fl.remaining, 0, 0); /* held */
    assert_true(left > 0);
  } else {
    assert_int_equal(f.m.n, 1);
    assert_int_equal(f.m.log[0].time, c->want_done);
    assert_int_equal(f.m.log[0].a, 7);
    assert_int_equal(f.m.log[0].b, 8);
    /* Exactly none left at the completion time (unless capped at the end
     * of time), and never below 0. */
    if (c->want_done < SIM_TIME_MAX) {
      assert_true(sim_fluid_remaining(&fl, c->want_done) == 0.0);
      assert_true(sim_fluid_remaining(&fl, SIM_TIME_MAX) == 0.0);
    }
  }
  fx_fini(&f);
}

/* Starting new work cancels the completion of the old. */
static void test_fluid_restart_cancels(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  sim_fluid fl = {0};
  sim_fluid_start(f.e, &fl, 10);
  assert_int_equal(sim_fluid_set_rate(f.e, &fl, 1, f.m.kind, 0, 0), SIM_OK);
  assert_int_equal(sim_engine_events_pending(f.e), 1);
  sim_fluid_start(f.e, &fl, 3);
  assert_int_equal(sim_engine_events_pending(f.e), 0);
  assert_close(sim_fluid_remaining(&fl, 0), 3, 0, 0);
  fx_fini(&f);
}

/* The work left as time passes, and stopping. */
static void test_fluid_remaining(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  sim_fluid fl = {0};
  sim_fluid_start(f.e, &fl, 10);
  assert_int_equal(sim_fluid_set_rate(f.e, &fl, 2, f.m.kind, 0, 0), SIM_OK);
  assert_close(sim_fluid_remaining(&fl, SIM_SEC), 8, 1e-15, 0);
  assert_close(sim_fluid_remaining(&fl, 2500 * SIM_MS), 5, 1e-15, 0);
  assert_true(sim_fluid_remaining(&fl, 6 * SIM_SEC) == 0.0); /* not -2 */
  assert_int_equal(sim_engine_run(f.e, SIM_SEC + SIM_SEC / 2), SIM_OK);
  sim_fluid_stop(f.e, &fl);
  assert_close(fl.remaining, 7, 1e-15, 0);
  assert_int_equal(fl.rate, 0);
  assert_false(sim_engine_pending(f.e, fl.done));
  assert_int_equal(sim_engine_events_pending(f.e), 0);
  assert_close(sim_fluid_remaining(&fl, 100 * SIM_SEC), 7, 1e-15, 0);
  /* Bad rates change nothing. */
  const double bad[] = {-1, -1e-300, NAN, INFINITY};
  for (size_t i = 0; i < N_OF(bad); i++) {
    assert_int_equal(sim_fluid_set_rate(f.e, &fl, bad[i], f.m.kind, 0, 0),
                     SIM_EINVAL);
    assert_int_equal(fl.rate, 0);
  }
  assert_int_equal(sim_engine_run(f.e, 100 * SIM_SEC), SIM_OK);
  assert_int_equal(f.m.n, 0);
  fx_fini(&f);
}

int main(void) {
  struct CMUnitTest tests[128];
  size_t n = 0;
  TEST_ROWS(tests, n, test_fluid, fluid_cases);
  TEST_ADD(tests, n, test_fluid_remaining);
  TEST_ADD(tests, n, test_fluid_restart_cancels);
  return _cmocka_run_group_tests("engine_fluid", tests, n, NULL, NULL);
}
