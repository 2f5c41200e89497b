/* test_engine_move.c - sim_engine_move: an event moved earlier or later
 * runs once, at its last time, in the place engine.h gives it among
 * events of the same time; its handle stays; errors; and random moves of
 * many events against a reference (distinct times, so only the times
 * decide the order). */
#include "test_engine_fixture.h"

/* The shared fixture, its fake model's events made movable. */
static void fx_init_movable(fixture *f) {
  fx_init(f);
  assert_int_equal(sim_engine_movable(f->e, f->m.kind), SIM_OK);
}

enum { MAXEV = 4, MAXMOVES = 3 };

typedef struct move { /* event ev to time at, after a run up to `after` */
  int ev;
  sim_time at, after;
} move;

typedef struct move_case {
  const char *name;
  sim_time at[MAXEV]; /* event i (payload a = i) scheduled at at[i] */
  int nev;
  move mv[MAXMOVES];
  int nmv;
  uint64_t want[MAXEV]; /* payloads in the order they run */
  sim_time want_t[MAXEV];
} move_case;

static const move_case cases[] = {
    {"later: past another", {10, 20}, 2, {{0, 30, 0}}, 1, {1, 0}, {20, 30}},
    {"earlier: before another", {30, 10}, 2, {{0, 5, 0}}, 1, {0, 1}, {5, 10}},
    {"later, then earlier than queued",
     {20, 15}, 2, {{0, 40, 0}, {0, 10, 0}}, 2, {0, 1}, {10, 15}},
    {"later and back: keeps its entry",
     {20, 20}, 2, {{0, 40, 0}, {0, 20, 0}}, 2, {0, 1}, {20, 20}},
    {"later to a tie: after those queued before its entry came up",
     {10, 20}, 2, {{0, 20, 0}}, 1, {1, 0}, {20, 20}},
    {"earlier to a tie: queued anew, after those there",
     {30, 20}, 2, {{0, 20, 0}}, 1, {1, 0}, {20, 20}},
    {"to its own time: nothing changes", {10, 10}, 2, {{0, 10, 0}}, 1,
     {0, 1}, {10, 10}},
    {"moved between two runs", {10, 20, 30}, 3, {{2, 15, 12}}, 1, {0, 2, 1},
     {10, 15, 20}},
    {"moved later twice, past two", {10, 20, 30}, 3,
     {{0, 25, 0}, {0, 35, 0}}, 2, {1, 2, 0}, {20, 30, 35}},
};

static void test_move_case(void **state) {
  const move_case *c = *state;
  fixture f;
  fx_init_movable(&f);
  sim_handle h[MAXEV];
  for (int i = 0; i < c->nev; i++)
    assert_int_equal(fake_model_schedule(&f.m, c->at[i], (uint64_t)i, 0, &h[i]),
                     SIM_OK);
  for (int j = 0; j < c->nmv; j++) {
    assert_int_equal(sim_engine_run(f.e, c->mv[j].after), SIM_OK);
    assert_int_equal(sim_engine_move(f.e, h[c->mv[j].ev], c->mv[j].at),
                     SIM_OK);
    assert_true(sim_engine_pending(f.e, h[c->mv[j].ev]));
  }
  assert_int_equal(sim_engine_run(f.e, 1000), SIM_OK);
  assert_log_a(&f.m, c->want, (size_t)c->nev);
  for (int i = 0; i < c->nev; i++)
    assert_int_equal(f.m.log[i].time, c->want_t[i]);
  assert_int_equal(sim_engine_events_run(f.e), (uint64_t)c->nev);
  assert_int_equal(sim_engine_events_pending(f.e), 0);
  fx_fini(&f);
}

/* A moved event's handle still cancels it; what cannot be moved is
 * refused with a message. */
static void test_move_errors(void **state) {
  (void)state;
  fixture f;
  fx_init_movable(&f);
  sim_handle a, b, p;
  assert_int_equal(fake_model_schedule(&f.m, 10, 0, 0, &a), SIM_OK);
  assert_int_equal(fake_model_schedule(&f.m, 20, 1, 0, &b), SIM_OK);
  assert_int_equal(sim_engine_every(f.e, 5, 100, f.m.kind, 2, 0, &p), SIM_OK);
  assert_int_equal(sim_engine_move(f.e, a, 50), SIM_OK);
  assert_true(sim_engine_cancel(f.e, &a));
  sim_handle stale = {1, 0};
  assert_int_equal(sim_engine_move(f.e, a, 60), SIM_EINVAL);
  assert_int_equal(sim_engine_move(f.e, stale, 60), SIM_EINVAL);
  assert_int_equal(sim_engine_move(f.e, p, 60), SIM_EINVAL);
  assert_true(strstr(sim_engine_errmsg(f.e), "one-shot") != NULL);
  assert_int_equal(sim_engine_run(f.e, 15), SIM_OK);
  assert_int_equal(sim_engine_move(f.e, b, 14), SIM_EINVAL);
  assert_true(strstr(sim_engine_errmsg(f.e), "before now") != NULL);
  assert_true(sim_engine_cancel(f.e, &p));
  assert_int_equal(sim_engine_run(f.e, 1000), SIM_OK);
  const uint64_t want[] = {2, 1};
  assert_log_a(&f.m, want, 2);
  fx_fini(&f);
}

/* Only events of a kind made movable before they were scheduled can be
 * moved: the others do not keep their queued time. */
static void test_move_not_movable(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  sim_handle a, b;
  assert_int_equal(fake_model_schedule(&f.m, 10, 0, 0, &a), SIM_OK);
  assert_int_equal(sim_engine_move(f.e, a, 50), SIM_EINVAL);
  assert_true(strstr(sim_engine_errmsg(f.e), "not movable") != NULL);
  assert_int_equal(sim_engine_movable(f.e, f.m.kind + 1), SIM_EINVAL);
  assert_int_equal(sim_engine_movable(f.e, f.m.kind), SIM_OK);
  assert_int_equal(sim_engine_move(f.e, a, 50), SIM_EINVAL);
  assert_int_equal(fake_model_schedule(&f.m, 20, 1, 0, &b), SIM_OK);
  assert_int_equal(sim_engine_move(f.e, b, 5), SIM_OK);
  assert_int_equal(sim_engine_run(f.e, 1000), SIM_OK);
  const uint64_t want[] = {1, 0};
  assert_log_a(&f.m, want, 2);
  fx_fini(&f);
}

/* Many events moved at random, between slices of the run, some many
 * times, with enough earlier moves to compact the tombstones: each runs
 * once, at its last time, in time order. Times are distinct, so the
 * order needs no tie rule. n events: 3000 keep the queue a binary heap,
 * where a move earlier walks its entry up in place (evq_decrease);
 * 20000 put it in the radix heap, which leaves a tombstone instead. */
static void move_random(uint64_t n, int rounds) {
  fixture f;
  fx_init_movable(&f);
  gsl_rng *r = rng_new(24);
  sim_handle *h = malloc(n * sizeof *h);
  ref_event *ref = malloc(n * sizeof *ref);
  assert_non_null(h);
  assert_non_null(ref);
  /* Time = slot * n + event, so no two events ever share one. */
  for (uint64_t i = 0; i < n; i++) {
    ref[i] = (ref_event){(sim_time)((gsl_rng_uniform_int(r, 1000) + 1) * n + i),
                         i, i};
    assert_int_equal(fake_model_schedule(&f.m, ref[i].time, i, 0, &h[i]),
                     SIM_OK);
  }
  for (int round = 0; round < rounds; round++) {
    sim_time now = (sim_time)(round * 10 * n);
    assert_int_equal(sim_engine_run(f.e, now), SIM_OK);
    for (uint64_t i = 0; i < n; i++) {
      if (ref[i].time <= now || gsl_rng_uniform(r) < 0.5)
        continue;
      sim_time slot = now / (sim_time)n + 1 + (sim_time)gsl_rng_uniform_int(r, 1000);
      ref[i].time = slot * (sim_time)n + (sim_time)i;
      assert_int_equal(sim_engine_move(f.e, h[i], ref[i].time), SIM_OK);
    }
  }
  assert_int_equal(sim_engine_run(f.e, INT64_MAX / 2), SIM_OK);
  assert_log_ref(&f.m, ref, n);
  assert_int_equal(sim_engine_events_run(f.e), n);
  free(h);
  free(ref);
  gsl_rng_free(r);
  fx_fini(&f);
}

static void test_move_random(void **state) {
  (void)state;
  move_random(3000, 40);
}

static void test_move_random_radix(void **state) {
  (void)state;
  move_random(20000, 6);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, test_move_case, cases);
  TEST_ADD(tests, n, test_move_errors);
  TEST_ADD(tests, n, test_move_not_movable);
  TEST_ADD(tests, n, test_move_random);
  TEST_ADD(tests, n, test_move_random_radix);
  return _cmocka_run_group_tests("engine_move", tests, n, NULL, NULL);
}
