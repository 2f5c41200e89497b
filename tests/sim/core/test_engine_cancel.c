/* test_engine_cancel.c - the engine's errors and stopping, tombstones, and
 * a randomized schedule/cancel against a reference computed without the
 * engine: the scheduled events, cancelled ones removed, sorted by (time,
 * order of scheduling). */
#include "test_engine_fixture.h"

/* ---- Errors and stopping --------------------------------------------- */

typedef struct fail_case {
  const char *name;
  uint64_t fail_at;
  int code;
  bool silent;
  const char *want_msg;
} fail_case;

static const fail_case fail_cases[] = {
    {"fail at the first event", 1, SIM_EIO, false, "fake failure at event 1"},
    {"fail at the third event", 3, SIM_ERANGE, false,
     "fake failure at event 3"},
    {"fail at the last event", 5, SIM_EINPUT, false, "fake failure at event 5"},
    {"fail without a message", 2, SIM_ESTATE, true,
     "handler fake failed at 20 ns: operation not valid in this state"},
};

static void test_handler_error(void **state) {
  const fail_case *c = *state;
  fixture f;
  fx_init(&f);
  for (uint64_t i = 0; i < 5; i++)
    assert_int_equal(
        fake_model_schedule(&f.m, 10 * (sim_time)(i + 1), i, 0, NULL), SIM_OK);
  f.m.fail_at = c->fail_at;
  f.m.fail_code = c->code;
  f.m.fail_silently = c->silent;
  assert_int_equal(sim_engine_run(f.e, 1000), c->code);
  assert_string_equal(sim_engine_errmsg(f.e), c->want_msg);
  assert_int_equal(sim_engine_now(f.e), 10 * (sim_time)c->fail_at);
  assert_int_equal(sim_engine_events_run(f.e), c->fail_at);
  assert_int_equal(sim_engine_events_pending(f.e), 5 - c->fail_at);
  /* The run can go on after the failure. */
  f.m.fail_at = 0;
  assert_int_equal(sim_engine_run(f.e, 1000), SIM_OK);
  assert_int_equal(sim_engine_now(f.e), 1000);
  const uint64_t want[] = {0, 1, 2, 3, 4};
  assert_log_a(&f.m, want, 5);
  fx_fini(&f);
}

static void test_stop(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  for (uint64_t i = 0; i < 5; i++) /* two at 10, three at 20 */
    assert_int_equal(fake_model_schedule(&f.m, i < 2 ? 10 : 20, i, 0, NULL),
                     SIM_OK);
  fake_model_on(&f.m, (fake_action){.on_a = 2, .op = FAKE_STOP});
  assert_int_equal(sim_engine_run(f.e, 100), SIM_ECANCELED);
  assert_int_equal(sim_engine_now(f.e), 20);
  assert_int_equal(f.m.n, 3); /* returned after the current event */
  assert_int_equal(sim_engine_events_pending(f.e), 2);
  assert_true(strlen(sim_engine_errmsg(f.e)) > 0);
  /* Continue. */
  assert_int_equal(sim_engine_run(f.e, 100), SIM_OK);
  assert_int_equal(sim_engine_now(f.e), 100);
  const uint64_t want[] = {0, 1, 2, 3, 4};
  assert_log_a(&f.m, want, 5);
  /* A stop between runs stops the next one before its first event. */
  assert_int_equal(fake_model_schedule(&f.m, 150, 9, 0, NULL), SIM_OK);
  sim_engine_stop(f.e);
  assert_int_equal(sim_engine_run(f.e, 200), SIM_ECANCELED);
  assert_int_equal(f.m.n, 5);
  assert_int_equal(sim_engine_now(f.e), 100);
  assert_int_equal(sim_engine_run(f.e, 200), SIM_OK);
  assert_int_equal(f.m.n, 6);
  fx_fini(&f);
}

/* What a signal handler does: sets the flag the engine watches. */
static volatile sig_atomic_t watched;

static int raise_flag(fake_model *m, const sim_event *ev) {
  (void)m;
  if (ev->time == 30)
    watched = 1;
  return SIM_OK;
}

/* A watched flag stops the run before the next event, as a stop does, and
 * keeps stopping runs while it is set (issue 28: a signal was seen only
 * between 1/200 slices of a run). */
static void test_watched_flag_stops(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  watched = 0;
  sim_engine_watch(f.e, &watched);
  f.m.hook = raise_flag;
  for (sim_time t = 10; t <= 50; t += 10)
    assert_int_equal(fake_model_schedule(&f.m, t, 0, 0, NULL), SIM_OK);
  assert_int_equal(sim_engine_run(f.e, 100), SIM_ECANCELED);
  assert_int_equal(f.m.n, 3); /* 10, 20 and 30, which raised it */
  assert_int_equal(sim_engine_now(f.e), 30);
  assert_int_equal(sim_engine_run(f.e, 100), SIM_ECANCELED);
  assert_int_equal(f.m.n, 3);
  watched = 0;
  assert_int_equal(sim_engine_run(f.e, 100), SIM_OK);
  assert_int_equal(f.m.n, 5);
  sim_engine_watch(f.e, NULL);
  fx_fini(&f);
}

static int run_inside(fake_model *m, const sim_event *ev) {
  return sim_engine_run(m->engine, ev->time + 10);
}

static void test_run_reentrant(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  f.m.hook = run_inside;
  assert_int_equal(fake_model_schedule(&f.m, 10, 0, 0, NULL), SIM_OK);
  assert_int_equal(sim_engine_run(f.e, 100), SIM_ESTATE);
  assert_non_null(strstr(sim_engine_errmsg(f.e), "handler"));
  fx_fini(&f);
}

/* ---- Tombstones ------------------------------------------------------ */
/* Cancel 90% of 100k events, then run: the queue is compacted on the way
 * (so 90k new events fit without growing it) and the order holds. */
static void test_compaction(void **state) {
  (void)state;
  enum { N = 100000 };
  fixture f;
  fx_init(&f);
  gsl_rng *r = rng_new(99);
  sim_handle *h = malloc(N * sizeof *h);
  ref_event *ref = malloc(2 * N * sizeof *ref);
  assert_non_null(h);
  assert_non_null(ref);
  for (uint64_t i = 0; i < N; i++) {
    sim_time t = (sim_time)gsl_rng_uniform_int(r, 1000000);
    assert_int_equal(fake_model_schedule(&f.m, t, i, 0, &h[i]), SIM_OK);
    ref[i] = (ref_event){t, i, i};
  }
  size_t n = 0;
  for (uint64_t i = 0; i < N; i++) {
    bool cancel = gsl_rng_uniform(r) < 0.9;
    if (cancel)
      assert_true(sim_engine_cancel(f.e, &h[i]));
    else
      ref[n++] = ref[i];
  }
  assert_int_equal(sim_engine_events_pending(f.e), n);
  long calls = f.t.calls;
  for (uint64_t i = 0; i < N - n; i++) {
    sim_time t = (sim_time)gsl_rng_uniform_int(r, 1000000);
    assert_int_equal(fake_model_schedule(&f.m, t, N + i, 0, NULL), SIM_OK);
    ref[n + i] = (ref_event){t, N + i, N + i};
  }
  assert_int_equal(f.t.calls, calls); /* room left by the compaction */
  n = N;
  assert_int_equal(sim_engine_run(f.e, SIM_SEC), SIM_OK);
  assert_log_ref(&f.m, ref, n);
  assert_int_equal(sim_engine_events_pending(f.e), 0);
  free(ref);
  free(h);
  gsl_rng_free(r);
  fx_fini(&f);
}

/* ---- Randomized schedule/cancel against a reference ------------------ */

typedef struct random_case {
  const char *name;
  unsigned long seed;
  size_t initial;     /* events scheduled before the run */
  size_t total;       /* events scheduled in all */
  double p_cancel;    /* per action: cancel a random event, else schedule */
  double p_now;       /* a schedule is at the current time */
  sim_time max_delay; /* else uniform in [1, max_delay] ns */
  sim_time chunk;     /* run in steps of this length */
  uint64_t budget;    /* and of at most this many events (0: no limit) */
  size_t between;     /* schedules by the test after each step, at its
                         end or later (before the next entry put back) */
} random_case;

static const random_case random_cases[] = {
    {"balanced", 11, 1000, 20000, 0.3, 0.1, 1000, 5000, 0, 0},
    {"cancel heavy", 12, 5000, 30000, 0.6, 0.05, 100000, 1000000, 0, 0},
    {"many ties", 13, 2000, 20000, 0.3, 0.5, 3, 7, 0, 0},
    {"one at a time", 14, 1, 5000, 0.1, 0.2, 50, 1000000000, 0, 0},
    {"big pool, long run", 15, 20000, 60000, 0.4, 0.02, 1000000, 123456789, 0, 0},
    /* Stopping after a number of events (the command's slices) splits
     * runs between events of one time and beside tombstones: the order
     * must be the one of an unsliced run. */
    {"one event a call", 16, 1000, 20000, 0.3, 0.5, 3, 1000000000, 1, 0},
    {"budgets amid ties", 17, 2000, 20000, 0.3, 0.5, 3, 7, 97, 0},
    {"budgets, cancel heavy", 18, 5000, 30000, 0.6, 0.05, 100000, 1000000000,
     1000, 0},
    /* A step ends by taking the first entry past its end and putting it
     * back; pushes below it must still come first: in the heap and in
     * the radix heap (past 2^14 pending), at the end's time and later. */
    {"schedules between steps", 19, 2000, 20000, 0.3, 0.3, 1000, 500, 0, 3},
    {"schedules between steps, radix", 20, 20000, 60000, 0.4, 0.3, 1000000,
     50000, 0, 3},
    {"schedules between budgeted steps", 21, 2000, 20000, 0.3, 0.3, 1000, 500,
     7, 2},
};

/* Runs to t in calls of at most c->budget events, checking what each
 * says: done only once nothing due by t is left, now = t then, and else
 * now is the last event's time. */
static void run_budgeted(sim_engine *e, const random_case *c, sim_time t,
                         const fake_model *m) {
  bool done = false;
  while (!done) {
    uint64_t before = sim_engine_events_run(e);
    assert_int_equal(sim_engine_run_some(e, t, c->budget, &done), SIM_OK);
    uint64_t ran = sim_engine_events_run(e) - before;
    assert_true(ran <= c->budget);
    if (done) {
      assert_int_equal(sim_engine_now(e), t);
    } else {
      assert_int_equal(ran, c->budget);
      assert_int_equal(sim_engine_now(e), m->log[m->n - 1].time);
    }
  }
}

/* What the test knows of every event it scheduled. */
typedef struct rec {
  sim_time time;
  sim_handle h;
  bool cancelled, ran;
} rec;

typedef struct rnd {
  const random_case *c;
  gsl_rng *r;
  rec *recs; /* by scheduling order; the payload a is the index */
  size_t n;
  size_t live;
} rnd;

static void rnd_schedule(rnd *x, sim_engine *e, uint32_t kind, sim_time now) {
  if (x->n == x->c->total)
    return;
  sim_time t = now;
  if (gsl_rng_uniform(x->r) >= x->c->p_now)
    t +=
        1 + (sim_time)gsl_rng_uniform_int(x->r, (unsigned long)x->c->max_delay);
  rec *q = &x->recs[x->n];
  *q = (rec){.time = t};
  assert_int_equal(sim_engine_schedule(e, t, kind, x->n, 0, &q->h), SIM_OK);
  x->n++;
  x->live++;
}

/* Cancels a random event, pending or not; the engine must agree with the
 * test on whether it was still pending. */
static void rnd_cancel(rnd *x, sim_engine *e) {
  if (x->n == 0)
    return;
  rec *q = &x->recs[gsl_rng_uniform_int(x->r, x->n)];
  bool want = !q->ran && !q->cancelled;
  sim_handle h = q->h; /* a copy: the original stays to test staleness */
  assert_int_equal(sim_engine_cancel(e, &h), want);
  if (want) {
    q->cancelled = true;
    x->live--;
  }
}

/* Zero to three random actions. */
static void rnd_act(rnd *x, sim_engine *e, uint32_t kind, sim_time now) {
  unsigned k = (unsigned)gsl_rng_uniform_int(x->r, 4);
  for (unsigned i = 0; i < k; i++) {
    if (gsl_rng_uniform(x->r) < x->c->p_cancel)
      rnd_cancel(x, e);
    else
      rnd_schedule(x, e, kind, now);
  }
  /* Keep the run going until the budget is spent. */
  if (x->live == 0)
    rnd_schedule(x, e, kind, now);
}

static int rnd_hook(fake_model *m, const sim_event *ev) {
  rnd *x = m->hook_ctx;
  rec *q = &x->recs[ev->a];
  if (q->ran || q->cancelled || q->time != ev->time)
    fail_msg("event %llu ran at %lld ns: ran %d, cancelled %d, due %lld",
             (unsigned long long)ev->a, (long long)ev->time, q->ran,
             q->cancelled, (long long)q->time);
  q->ran = true;
  x->live--;
  rnd_act(x, m->engine, m->kind, ev->time);
  return SIM_OK;
}

static void test_random(void **state) {
  const random_case *c = *state;
  fixture f;
  fx_init(&f);
  rnd x = {.c = c, .r = rng_new(c->seed)};
  x.recs = calloc(c->total, sizeof *x.recs);
  assert_non_null(x.recs);
  f.m.hook = rnd_hook;
  f.m.hook_ctx = &x;
  for (size_t i = 0; i < c->initial; i++)
    rnd_schedule(&x, f.e, f.m.kind, 0);
  for (size_t i = 0; i < c->initial / 10; i++)
    rnd_cancel(&x, f.e);
  /* Every event is due at most max_delay after the one that scheduled it,
   * so the run must end by then. */
  sim_time end = (sim_time)c->total * c->max_delay + c->chunk;
  sim_time t = 0;
  while (sim_engine_events_pending(f.e) > 0) {
    assert_true(t <= end);
    t += c->chunk;
    if (c->budget > 0)
      run_budgeted(f.e, c, t, &f.m);
    else
      assert_int_equal(sim_engine_run(f.e, t), SIM_OK);
    assert_int_equal(sim_engine_now(f.e), t);
    assert_int_equal(sim_engine_events_pending(f.e), x.live);
    for (size_t i = 0; i < c->between; i++)
      rnd_schedule(&x, f.e, f.m.kind, t);
  }
  assert_int_equal(x.n, c->total);
  ref_event *ref = malloc(x.n * sizeof *ref);
  assert_non_null(ref);
  size_t n = 0;
  for (size_t i = 0; i < x.n; i++)
    if (!x.recs[i].cancelled)
      ref[n++] = (ref_event){x.recs[i].time, i, i};
  assert_log_ref(&f.m, ref, n);
  free(ref);
  free(x.recs);
  gsl_rng_free(x.r);
  fx_fini(&f);
}

int main(void) {
  struct CMUnitTest tests[128];
  size_t n = 0;
  TEST_ROWS(tests, n, test_handler_error, fail_cases);
  TEST_ADD(tests, n, test_stop);
  TEST_ADD(tests, n, test_run_reentrant);
  TEST_ADD(tests, n, test_watched_flag_stops);
  TEST_ADD(tests, n, test_compaction);
  TEST_ROWS(tests, n, test_random, random_cases);
  return _cmocka_run_group_tests("engine_cancel", tests, n, NULL, NULL);
}
