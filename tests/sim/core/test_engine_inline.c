/* test_engine_inline.c - inline steps (sim/core/engine.c: sim_engine_horizon,
 * sim_engine_advance, sim_engine_place): a handler that takes its next
 * times itself must leave the run exactly as an event per time does.
 * Chains of actions at random times (ties frequent) that schedule other
 * events at random are run both ways, whole and in slices (max_events,
 * until), and their logs compared action by action; then the argument
 * checks. */
#include "test_util.h"

#include <string.h>

#include "engine.h"

/* Numerical Recipes' 64-bit LCG; the high bits are the good ones. */
static uint32_t lcg(uint64_t *x) {
  *x = *x * 6364136223846793005u + 1442695040888963407u;
  return (uint32_t)(*x >> 33);
}

enum { CHAINS = 3, STEPS = 400, LOG_MAX = 8000 };

typedef struct world {
  bool inline_steps;
  uint32_t chain_kind, other_kind;
  uint64_t chain_x[CHAINS]; /* each chain's own times */
  uint64_t x;               /* what actions do, drawn in the order they run */
  int left[CHAINS];
  size_t steps; /* inline steps taken */
  struct {
    sim_time t;
    uint64_t what;
  } log[LOG_MAX];
  size_t n;
} world;

static void note(world *w, sim_time t, uint64_t what) {
  assert_true(w->n < LOG_MAX);
  w->log[w->n].t = t;
  w->log[w->n++].what = what;
}

/* Something happens: logged, and now and then another event 0-3 ns on
 * (ties with the chains' times are frequent). */
static void act(sim_engine *e, world *w, uint64_t what) {
  note(w, sim_engine_now(e), what);
  if (lcg(&w->x) % 3 == 0) {
    uint64_t id = 1000 + lcg(&w->x) % 1000;
    assert_int_equal(sim_engine_schedule(e, sim_engine_now(e) + lcg(&w->x) % 4,
                                         w->other_kind, id, 0, NULL),
                     SIM_OK);
  }
}

static int on_other(sim_engine *e, void *ctx, const sim_event *ev) {
  world *w = ctx;
  act(e, w, ev->a);
  return SIM_OK;
}

/* Chain c's next time, 0-2 ns after now, or -1 when it has ended. */
static sim_time next_time(sim_engine *e, world *w, size_t c) {
  if (--w->left[c] <= 0)
    return -1;
  return sim_engine_now(e) + lcg(&w->chain_x[c]) % 3;
}

static int on_chain(sim_engine *e, void *ctx, const sim_event *ev) {
  world *w = ctx;
  size_t c = ev->a;
  if (!w->inline_steps) { /* an event per action, scheduled first */
    sim_time t = next_time(e, w, c);
    if (t >= 0)
      assert_int_equal(sim_engine_schedule(e, t, w->chain_kind, c, 0, NULL),
                       SIM_OK);
    act(e, w, c);
    return SIM_OK;
  }
  for (;;) {
    uint64_t place = sim_engine_place(e);
    sim_time t = next_time(e, w, c);
    act(e, w, c);
    if (t < 0)
      return SIM_OK;
    if (t >= sim_engine_horizon(e))
      return sim_engine_schedule_at_place(e, place, t, w->chain_kind, c, 0,
                                          NULL);
    assert_int_equal(sim_engine_advance(e, t), SIM_OK);
    w->steps++;
  }
}

typedef struct inline_case {
  const char *name;
  uint64_t seed;
  uint64_t max_events; /* per call of run_some; 0: one run */
  sim_time slice;      /* until advances by this; 0: one run */
} inline_case;

static const inline_case inline_cases[] = {
    {"one run", 1, 0, 0},
    {"one run, another seed", 2, 0, 0},
    {"slices of 7 events", 3, 7, 0},
    {"slices of 1 event", 4, 1, 0},
    {"runs to every 5 ns", 5, 0, 5},
    {"runs to every ns", 6, 0, 1},
};

static void run_world(world *w, const inline_case *c, bool inline_steps) {
  memset(w, 0, sizeof *w);
  w->inline_steps = inline_steps;
  w->x = c->seed;
  sim_engine *e = sim_engine_create(NULL);
  assert_non_null(e);
  assert_int_equal(sim_engine_register(e, "chain", on_chain, w, &w->chain_kind),
                   SIM_OK);
  assert_int_equal(sim_engine_register(e, "other", on_other, w, &w->other_kind),
                   SIM_OK);
  for (size_t k = 0; k < CHAINS; k++) {
    w->chain_x[k] = c->seed * 31 + k;
    w->left[k] = STEPS;
    assert_int_equal(sim_engine_schedule(e, (sim_time)k, w->chain_kind, k, 0,
                                         NULL),
                     SIM_OK);
  }
  sim_time end = 100000;
  bool done = false;
  for (sim_time until = 0; !done;) {
    until = c->slice > 0 ? until + c->slice : end;
    uint64_t most = c->max_events > 0 ? c->max_events : UINT64_MAX;
    assert_int_equal(sim_engine_run_some(e, until < end ? until : end, most,
                                         &done),
                     SIM_OK);
    done = done && until >= end;
  }
  assert_int_equal(sim_engine_events_pending(e), 0);
  /* A step counts as the event it stands for. */
  assert_int_equal(sim_engine_events_run(e), w->n);
  sim_engine_destroy(e);
}

static void test_same_as_events(void **state) {
  const inline_case *c = *state;
  static world plain, stepped;
  run_world(&plain, c, false);
  run_world(&stepped, c, true);
  assert_true(plain.n > CHAINS * STEPS);
  assert_int_equal(stepped.n, plain.n);
  /* Steps were taken, and events too; none when the run returns after
   * every event. */
  assert_true(c->max_events == 1 ? stepped.steps == 0 : stepped.steps > 0);
  assert_true(stepped.steps < CHAINS * STEPS);
  for (size_t i = 0; i < plain.n; i++)
    if (plain.log[i].t != stepped.log[i].t ||
        plain.log[i].what != stepped.log[i].what)
      fail_msg("action %zu: %llu at %lld ns, stepped %llu at %lld ns", i,
               (unsigned long long)plain.log[i].what,
               (long long)plain.log[i].t,
               (unsigned long long)stepped.log[i].what,
               (long long)stepped.log[i].t);
}

/* ---- Arguments --------------------------------------------------------- */

typedef struct probe {
  sim_time horizon;
  int advance_rc[4];
  sim_time now_after;
} probe;

/* At 10 ns, with an event pending at 20 ns and the run to 100 ns. */
static int on_probe(sim_engine *e, void *ctx, const sim_event *ev) {
  probe *p = ctx;
  if (ev->a != 1)
    return SIM_OK;
  p->horizon = sim_engine_horizon(e);
  p->advance_rc[0] = sim_engine_advance(e, 9);  /* before now */
  p->advance_rc[1] = sim_engine_advance(e, 20); /* at the horizon */
  p->advance_rc[2] = sim_engine_advance(e, 10); /* now itself */
  p->advance_rc[3] = sim_engine_advance(e, 19); /* just before it */
  p->now_after = sim_engine_now(e);
  return SIM_OK;
}

static void test_arguments(void **state) {
  (void)state;
  probe p = {0};
  sim_engine *e = sim_engine_create(NULL);
  assert_non_null(e);
  uint32_t kind;
  assert_int_equal(sim_engine_register(e, "probe", on_probe, &p, &kind),
                   SIM_OK);
  /* Outside a run: now. */
  assert_int_equal(sim_engine_horizon(e), 0);
  assert_int_equal(sim_engine_advance(e, 0), SIM_EINVAL);
  assert_int_equal(sim_engine_schedule(e, 10, kind, 1, 0, NULL), SIM_OK);
  assert_int_equal(sim_engine_schedule(e, 20, kind, 2, 0, NULL), SIM_OK);
  assert_int_equal(sim_engine_schedule_at_place(e, 1000, 30, kind, 0, 0, NULL),
                   SIM_EINVAL);
  uint64_t place = sim_engine_place(e);
  assert_int_equal(sim_engine_schedule_at_place(e, place, 30, 9, 0, 0, NULL),
                   SIM_EINVAL);
  assert_int_equal(sim_engine_run(e, 100), SIM_OK);
  assert_int_equal(p.horizon, 20);
  assert_int_equal(p.advance_rc[0], SIM_EINVAL);
  assert_int_equal(p.advance_rc[1], SIM_EINVAL);
  assert_int_equal(p.advance_rc[2], SIM_OK);
  assert_int_equal(p.advance_rc[3], SIM_OK);
  assert_int_equal(p.now_after, 19);
  /* Two events and two steps. */
  assert_int_equal(sim_engine_events_run(e), 4);
  sim_engine_destroy(e);
}

/* The end of the run bounds the horizon: a step never passes until. */
static int on_last(sim_engine *e, void *ctx, const sim_event *ev) {
  (void)ev;
  *(sim_time *)ctx = sim_engine_horizon(e);
  return SIM_OK;
}

static void test_until_bounds(void **state) {
  (void)state;
  sim_time horizon = -1;
  sim_engine *e = sim_engine_create(NULL);
  assert_non_null(e);
  uint32_t kind;
  assert_int_equal(sim_engine_register(e, "last", on_last, &horizon, &kind),
                   SIM_OK);
  assert_int_equal(sim_engine_schedule(e, 10, kind, 0, 0, NULL), SIM_OK);
  assert_int_equal(sim_engine_run(e, 50), SIM_OK);
  assert_int_equal(horizon, 51); /* steps up to and including 50 */
  assert_int_equal(sim_engine_schedule(e, 60, kind, 0, 0, NULL), SIM_OK);
  bool done;
  assert_int_equal(sim_engine_run_some(e, 100, 1, &done), SIM_OK);
  assert_int_equal(horizon, 60); /* its max_events reached: now */
  sim_engine_destroy(e);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, test_same_as_events, inline_cases);
  TEST_ADD(tests, n, test_arguments);
  TEST_ADD(tests, n, test_until_bounds);
  return _cmocka_run_group_tests("engine_inline", tests, n, NULL, NULL);
}
