/* test_engine.c - unit tests of the discrete-event engine (sim/core/engine.c)
 * through the fake model of tests/helpers: creation and the registry,
 * argument checks, ordering, run(until), periodic events, handles and
 * allocation failures. Orders are checked against references computed
 * without the engine: the scheduled events sorted by (time, order of
 * scheduling). Stopping and cancelling are in test_engine_cancel.c, fluid
 * progress in test_engine_fluid.c. */
#include "test_engine_fixture.h"

/* ---- Creation and registry ------------------------------------------- */

static void test_create(void **state) {
  (void)state;
  sim_engine_destroy(NULL);
  sim_engine *e = sim_engine_create(NULL);
  assert_non_null(e);
  assert_int_equal(sim_engine_now(e), 0);
  assert_string_equal(sim_engine_errmsg(e), "");
  assert_int_equal(sim_engine_events_pending(e), 0);
  assert_int_equal(sim_engine_events_run(e), 0);
  assert_int_equal(sim_engine_run(e, 5 * SIM_SEC), SIM_OK);
  assert_int_equal(sim_engine_now(e), 5 * SIM_SEC);
  sim_engine_destroy(e);
}

static int noop(sim_engine *e, void *ctx, const sim_event *ev) {
  (void)e, (void)ctx, (void)ev;
  return SIM_OK;
}

static void test_register(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  assert_int_equal(f.m.kind, 0);
  for (uint32_t i = 1; i < 40; i++) { /* past the first growth */
    uint32_t kind = 999;
    assert_int_equal(sim_engine_register(f.e, "noop", noop, NULL, &kind),
                     SIM_OK);
    assert_int_equal(kind, i);
  }
  uint32_t kind = 999;
  assert_int_equal(sim_engine_register(f.e, "x", NULL, NULL, &kind),
                   SIM_EINVAL);
  assert_int_equal(kind, 999);
  assert_true(strlen(sim_engine_errmsg(f.e)) > 0);
  fx_fini(&f);
}

/* ---- Argument checks: table-driven ----------------------------------- */

typedef struct arg_case {
  const char *name;
  bool every;
  sim_time at;     /* now is 100 ns */
  sim_time period; /* for every */
  uint32_t kind;   /* 0 is the fake model's; 1 is unknown */
  int want;
} arg_case;

static const arg_case arg_cases[] = {
    {"schedule in the past", false, 99, 0, 0, SIM_EINVAL},
    {"schedule at now", false, 100, 0, 0, SIM_OK},
    {"schedule at the end of time", false, SIM_TIME_MAX, 0, 0, SIM_OK},
    {"schedule far in the past", false, INT64_MIN, 0, 0, SIM_EINVAL},
    {"schedule an unknown kind", false, 200, 0, 1, SIM_EINVAL},
    {"every from now", true, 100, 10, 0, SIM_OK},
    {"every first in the past", true, 99, 10, 0, SIM_EINVAL},
    {"every with period 0", true, 200, 0, 0, SIM_EINVAL},
    {"every with a negative period", true, 200, -5, 0, SIM_EINVAL},
    {"every of an unknown kind", true, 200, 10, 7, SIM_EINVAL},
};

static void test_args(void **state) {
  const arg_case *c = *state;
  fixture f;
  fx_init(&f);
  assert_int_equal(sim_engine_run(f.e, 100), SIM_OK);
  sim_handle h = {77, 88};
  int rc = c->every ? sim_engine_every(f.e, c->at, c->period, c->kind, 1, 2, &h)
                    : sim_engine_schedule(f.e, c->at, c->kind, 1, 2, &h);
  assert_int_equal(rc, c->want);
  if (rc == SIM_OK) {
    assert_true(sim_engine_pending(f.e, h));
    assert_int_equal(sim_engine_events_pending(f.e), 1);
  } else {
    assert_int_equal(h.slot, 77); /* untouched */
    assert_int_equal(h.gen, 88);
    assert_int_equal(sim_engine_events_pending(f.e), 0);
    assert_true(strlen(sim_engine_errmsg(f.e)) > 0);
  }
  assert_int_equal(sim_engine_run(f.e, 50), SIM_EINVAL); /* before now */
  assert_int_equal(sim_engine_now(f.e), 100);
  fx_fini(&f);
}

/* ---- Ordering -------------------------------------------------------- */

/* Equal times run in scheduling order, and an event scheduled at the
 * current time runs after those already due then. */
static void test_fifo(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  uint64_t want[1001];
  for (uint64_t i = 0; i < 1000; i++) {
    assert_int_equal(fake_model_schedule(&f.m, 5 * SIM_MS, i, 0, NULL), SIM_OK);
    want[i] = i;
  }
  want[1000] = 5000;
  fake_model_on(
      &f.m,
      (fake_action){.on_a = 1, .op = FAKE_SCHEDULE, .delay = 0, .a = 5000});
  assert_int_equal(sim_engine_run(f.e, SIM_SEC), SIM_OK);
  assert_log_a(&f.m, want, 1001);
  for (size_t i = 0; i < f.m.n; i++)
    assert_int_equal(f.m.log[i].time, 5 * SIM_MS);
  fx_fini(&f);
}

/* A hook that appends the payload of every event to one shared order. */
typedef struct order_log {
  uint64_t a[64];
  size_t n;
} order_log;

static int log_order(fake_model *m, const sim_event *ev) {
  order_log *o = m->hook_ctx;
  if (o->n < N_OF(o->a))
    o->a[o->n++] = ev->a;
  return SIM_OK;
}

/* The same FIFO order seen through one log across two kinds. */
static void test_fifo_across_kinds(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  fake_model m2;
  assert_int_equal(fake_model_init(&m2, f.e, "other"), SIM_OK);
  order_log o = {.n = 0};
  f.m.hook = m2.hook = log_order;
  f.m.hook_ctx = m2.hook_ctx = &o;
  uint64_t want[40];
  for (uint64_t i = 0; i < 40; i++) {
    sim_time t = (sim_time)(i % 4) * SIM_US; /* 4 times, 10 each */
    assert_int_equal(fake_model_schedule(i % 2 ? &f.m : &m2, t, i, 0, NULL),
                     SIM_OK);
  }
  for (uint64_t i = 0; i < 40; i++)
    want[i] = (i % 10) * 4 + i / 10; /* by time, then scheduling order */
  assert_int_equal(sim_engine_run(f.e, SIM_SEC), SIM_OK);
  assert_int_equal(o.n, 40);
  assert_memory_equal(o.a, want, sizeof want);
  fake_model_fini(&m2);
  fx_fini(&f);
}

/* ---- run(until): table-driven ---------------------------------------- */

typedef struct until_case {
  const char *name;
  sim_time times[4];
  size_t n;
  sim_time until;
  size_t want_run;
} until_case;

static const until_case until_cases[] = {
    {"until exactly an event", {10, 20, 30}, 3, 20, 2},
    {"until between events", {10, 20, 30}, 3, 25, 2},
    {"until before all", {10, 20, 30}, 3, 5, 0},
    {"until zero, event at zero", {0, 0, 1}, 3, 0, 2},
    {"nothing pending", {0}, 0, 1000, 0},
    {"until the end of time", {SIM_TIME_MAX, 5}, 2, SIM_TIME_MAX, 2},
};

static void test_until(void **state) {
  const until_case *c = *state;
  fixture f;
  fx_init(&f);
  for (size_t i = 0; i < c->n; i++)
    assert_int_equal(fake_model_schedule(&f.m, c->times[i], i, 0, NULL),
                     SIM_OK);
  assert_int_equal(sim_engine_run(f.e, c->until), SIM_OK);
  assert_int_equal(sim_engine_now(f.e), c->until);
  assert_int_equal(f.m.n, c->want_run);
  assert_int_equal(sim_engine_events_run(f.e), c->want_run);
  assert_int_equal(sim_engine_events_pending(f.e), c->n - c->want_run);
  for (size_t i = 0; i < f.m.n; i++)
    assert_true(f.m.log[i].time <= c->until);
  /* The same until again runs nothing more. */
  assert_int_equal(sim_engine_run(f.e, c->until), SIM_OK);
  assert_int_equal(f.m.n, c->want_run);
  fx_fini(&f);
}

/* ---- Periodic events ------------------------------------------------- */

/* Checks, from inside the handler, that the periodic handle names the
 * next tick while this one runs. */
typedef struct tick_check {
  sim_handle h;
  size_t pending_seen;
  size_t cancel_at; /* cancel h at this tick (1-based); 0 never */
} tick_check;

static int check_tick(fake_model *m, const sim_event *ev) {
  (void)ev;
  tick_check *c = m->hook_ctx;
  c->pending_seen += sim_engine_pending(m->engine, c->h);
  if (m->n == c->cancel_at)
    assert_true(sim_engine_cancel(m->engine, &c->h));
  return SIM_OK;
}

static void assert_ticks(const fake_model *m, sim_time first, sim_time period,
                         size_t n) {
  assert_int_equal(m->n, n);
  for (size_t k = 0; k < n; k++)
    if (m->log[k].time != first + (sim_time)k * period)
      fail_msg("tick %zu at %lld ns, want %lld", k, (long long)m->log[k].time,
               (long long)(first + (sim_time)k * period));
}

static void test_every(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  tick_check c = {.h = {0, 0}};
  f.m.hook = check_tick;
  f.m.hook_ctx = &c;
  assert_int_equal(
      sim_engine_every(f.e, 5 * SIM_MS, 10 * SIM_MS, f.m.kind, 3, 4, &c.h),
      SIM_OK);
  sim_handle first = c.h;
  assert_int_equal(sim_engine_run(f.e, SIM_SEC), SIM_OK);
  assert_ticks(&f.m, 5 * SIM_MS, 10 * SIM_MS, 100);
  assert_int_equal(f.m.log[99].a, 3);
  assert_int_equal(f.m.log[99].b, 4);
  assert_int_equal(c.pending_seen, 100);
  assert_memory_equal(&c.h, &first, sizeof first); /* same handle */
  assert_true(sim_engine_pending(f.e, c.h));
  assert_int_equal(sim_engine_events_pending(f.e), 1);
  assert_true(sim_engine_cancel(f.e, &c.h));
  assert_int_equal(sim_engine_events_pending(f.e), 0);
  assert_int_equal(sim_engine_run(f.e, 2 * SIM_SEC), SIM_OK);
  assert_int_equal(f.m.n, 100);
  fx_fini(&f);
}

/* A period that is no round number, run in uneven chunks: tick k is at
 * first + k * period exactly, however the run is cut. */
static void test_every_no_drift(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  const sim_time first = 7, period = SIM_SEC / 3; /* 333333333 ns */
  sim_handle h;
  assert_int_equal(sim_engine_every(f.e, first, period, f.m.kind, 0, 0, &h),
                   SIM_OK);
  sim_time t = 0;
  while (t < 3 * SIM_HOUR) {
    t += 17 * SIM_SEC + 123457;
    assert_int_equal(sim_engine_run(f.e, t), SIM_OK);
  }
  size_t n = (size_t)((t - first) / period) + 1;
  assert_ticks(&f.m, first, period, n);
  assert_true(sim_engine_pending(f.e, h));
  fx_fini(&f);
}

/* A periodic event that cancels itself from its own handler. */
static void test_every_cancel_inside(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  tick_check c = {.cancel_at = 3};
  f.m.hook = check_tick;
  f.m.hook_ctx = &c;
  assert_int_equal(sim_engine_every(f.e, 0, SIM_MS, f.m.kind, 0, 0, &c.h),
                   SIM_OK);
  assert_int_equal(sim_engine_run(f.e, SIM_SEC), SIM_OK);
  assert_ticks(&f.m, 0, SIM_MS, 3);
  assert_int_equal(c.h.slot, 0); /* cleared by the cancel */
  assert_int_equal(sim_engine_events_pending(f.e), 0);
  fx_fini(&f);
}

/* A periodic event whose next tick would pass the end of time stops. */
static void test_every_end_of_time(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  sim_handle h;
  assert_int_equal(
      sim_engine_every(f.e, SIM_TIME_MAX - 25, 10, f.m.kind, 0, 0, &h), SIM_OK);
  assert_int_equal(sim_engine_run(f.e, SIM_TIME_MAX), SIM_OK);
  assert_ticks(&f.m, SIM_TIME_MAX - 25, 10, 3);
  assert_false(sim_engine_pending(f.e, h));
  assert_int_equal(sim_engine_events_pending(f.e), 0);
  fx_fini(&f);
}

/* A periodic event started by a handler, from the current time. */
static void test_every_from_handler(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  sim_handle h = {0, 0};
  fake_model_on(&f.m, (fake_action){.on_a = 0,
                                    .op = FAKE_EVERY,
                                    .handle = &h,
                                    .delay = 0,
                                    .period = 5,
                                    .a = 50});
  assert_int_equal(fake_model_schedule(&f.m, 10, 0, 0, NULL), SIM_OK);
  assert_int_equal(sim_engine_run(f.e, 30), SIM_OK);
  assert_int_equal(f.m.n, 6);
  assert_int_equal(f.m.log[0].a, 0);
  for (size_t k = 1; k < 6; k++) {
    assert_int_equal(f.m.log[k].a, 50);
    assert_int_equal(f.m.log[k].time, 10 + 5 * (sim_time)(k - 1));
  }
  assert_true(sim_engine_cancel(f.e, &h));
  fx_fini(&f);
}

/* ---- Handles --------------------------------------------------------- */

static void test_stale_handles(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  sim_handle h, copy, zero = {0, 0};
  assert_false(sim_engine_cancel(f.e, NULL));
  assert_false(sim_engine_cancel(f.e, &zero));
  assert_false(sim_engine_pending(f.e, zero));
  sim_handle wild = {12345, 0};
  assert_false(sim_engine_pending(f.e, wild));
  assert_false(sim_engine_cancel(f.e, &wild));
  /* Cancel twice. */
  assert_int_equal(fake_model_schedule(&f.m, 10, 1, 0, &h), SIM_OK);
  copy = h;
  assert_true(sim_engine_cancel(f.e, &h));
  assert_int_equal(h.slot, 0);
  assert_false(sim_engine_cancel(f.e, &h));
  assert_false(sim_engine_pending(f.e, copy));
  /* The slot is reused by the next event; the old handle stays stale. */
  sim_handle h2;
  assert_int_equal(fake_model_schedule(&f.m, 10, 2, 0, &h2), SIM_OK);
  assert_int_equal(h2.slot, copy.slot);
  assert_int_not_equal(h2.gen, copy.gen);
  sim_handle old = copy;
  assert_false(sim_engine_cancel(f.e, &old));
  assert_true(sim_engine_pending(f.e, h2));
  /* Cancel after the event ran. */
  sim_handle h3;
  assert_int_equal(fake_model_schedule(&f.m, 20, 3, 0, &h3), SIM_OK);
  assert_int_equal(sim_engine_run(f.e, 100), SIM_OK);
  assert_false(sim_engine_pending(f.e, h2));
  assert_false(sim_engine_cancel(f.e, &h2));
  assert_false(sim_engine_cancel(f.e, &h3));
  assert_int_equal(f.m.n, 2);
  assert_int_equal(f.m.log[0].a, 2);
  assert_int_equal(f.m.log[1].a, 3);
  fx_fini(&f);
}

/* Cancels from inside a handler: of a later event, of an event at the
 * same time, and of the running one (a no-op). */
static void test_cancel_inside(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  sim_handle h[4];
  for (uint64_t i = 0; i < 4; i++)
    assert_int_equal(fake_model_schedule(&f.m, i < 2 ? 10 : 20, i, 0, &h[i]),
                     SIM_OK);
  fake_action *same = fake_model_on(
      &f.m, (fake_action){.on_a = 0, .op = FAKE_CANCEL, .handle = &h[1]});
  fake_action *later = fake_model_on(
      &f.m, (fake_action){.on_a = 0, .op = FAKE_CANCEL, .handle = &h[3]});
  fake_action *self = fake_model_on(
      &f.m, (fake_action){.on_a = 2, .op = FAKE_CANCEL, .handle = &h[2]});
  assert_int_equal(sim_engine_events_pending(f.e), 4);
  assert_int_equal(sim_engine_run(f.e, 100), SIM_OK);
  assert_int_equal(same->result, 1);
  assert_int_equal(later->result, 1);
  assert_int_equal(self->result, 0);
  const uint64_t want[] = {0, 2};
  assert_log_a(&f.m, want, 2);
  assert_int_equal(sim_engine_events_pending(f.e), 0);
  fx_fini(&f);
}

static void test_events_pending(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  sim_handle h[10], p;
  for (uint64_t i = 0; i < 10; i++)
    assert_int_equal(fake_model_schedule(&f.m, (sim_time)i * 10, i, 0, &h[i]),
                     SIM_OK);
  assert_int_equal(sim_engine_every(f.e, 5, 100, f.m.kind, 99, 0, &p), SIM_OK);
  assert_int_equal(sim_engine_events_pending(f.e), 11);
  for (int i = 0; i < 10; i += 3)
    assert_true(sim_engine_cancel(f.e, &h[i])); /* 0, 3, 6, 9 */
  assert_int_equal(sim_engine_events_pending(f.e), 7);
  assert_int_equal(sim_engine_run(f.e, 45), SIM_OK); /* 1, 2, 4, tick */
  assert_int_equal(sim_engine_events_run(f.e), 4);
  assert_int_equal(sim_engine_events_pending(f.e), 3 + 1);
  assert_true(sim_engine_cancel(f.e, &p));
  assert_int_equal(sim_engine_events_pending(f.e), 3);
  assert_int_equal(sim_engine_run(f.e, 1000), SIM_OK);
  assert_int_equal(sim_engine_events_pending(f.e), 0);
  assert_int_equal(sim_engine_events_run(f.e), 7);
  fx_fini(&f);
}

/* ---- Allocation failures: table-driven ------------------------------- */

typedef enum alloc_path {
  PATH_CREATE,
  PATH_REGISTER,
  PATH_SCHEDULE,
  PATH_EVERY,
  PATH_IN_RUN,
  PATH_FLUID,
} alloc_path;

typedef struct alloc_case {
  const char *name;
  alloc_path path;
} alloc_case;

static const alloc_case alloc_cases[] = {
    {"create", PATH_CREATE},
    {"register", PATH_REGISTER},
    {"schedule", PATH_SCHEDULE},
    {"every", PATH_EVERY},
    {"schedule in a handler", PATH_IN_RUN},
    {"fluid", PATH_FLUID},
};

/* Registers handlers until the armed allocation fails. Returns whether it
 * did. */
static bool try_register(fixture *f) {
  uint32_t n = 1; /* the fake model's */
  for (int i = 0; i < 100; i++) {
    uint32_t kind;
    int rc = sim_engine_register(f->e, "noop", noop, NULL, &kind);
    if (rc != SIM_OK) {
      assert_int_equal(rc, SIM_ENOMEM);
      /* Those registered still work. */
      assert_int_equal(sim_engine_schedule(f->e, 0, n - 1, 0, 0, NULL), SIM_OK);
      assert_int_equal(sim_engine_run(f->e, 0), SIM_OK);
      return true;
    }
    assert_int_equal(kind, n++);
  }
  return false;
}

/* Schedules 5000 events (or periodic ones) until the armed allocation
 * fails, then checks that the rest still runs in order. */
static bool try_schedule(fixture *f, bool every) {
  ref_event ref[5000];
  size_t n = 0;
  bool failed = false;
  for (uint64_t i = 0; i < N_OF(ref); i++) {
    sim_time t = (sim_time)((i * 7919) % 1000);
    sim_handle h = {5, 5};
    int rc = every ? sim_engine_every(f->e, t, SIM_SEC, f->m.kind, i, 0, &h)
                   : fake_model_schedule(&f->m, t, i, 0, &h);
    if (rc != SIM_OK) {
      assert_int_equal(rc, SIM_ENOMEM);
      assert_int_equal(h.slot, 5); /* untouched */
      failed = true;
      continue;
    }
    ref[n++] = (ref_event){t, i, i};
  }
  assert_int_equal(sim_engine_events_pending(f->e), n);
  assert_int_equal(sim_engine_run(f->e, SIM_SEC - 1), SIM_OK);
  assert_log_ref(&f->m, ref, n);
  return failed;
}

/* Each event of depth a > 0 schedules two of depth a - 1, so the pool and
 * the queue grow inside the run, where the armed allocation fails. */
static int fork2(fake_model *m, const sim_event *ev) {
  int rc = SIM_OK;
  for (int i = 0; i < 2 && ev->a > 0 && rc == SIM_OK; i++)
    rc = fake_model_schedule(m, ev->time + 1, ev->a - 1, 0, NULL);
  return rc;
}

static bool try_in_run(fixture *f) {
  long k = f->t.fail_at - f->t.calls;
  f->t.fail_at = 0;
  f->m.hook = fork2;
  assert_int_equal(fake_model_schedule(&f->m, 0, 14, 0, NULL), SIM_OK);
  f->t.fail_at = f->t.calls + k; /* armed for the run only */
  int rc = sim_engine_run(f->e, SIM_SEC);
  if (rc == SIM_OK)
    return false;
  assert_int_equal(rc, SIM_ENOMEM);
  assert_non_null(strstr(sim_engine_errmsg(f->e), "out of memory"));
  return true;
}

static bool try_fluid(fixture *f) {
  sim_fluid fl[200] = {0};
  bool failed = false;
  for (size_t i = 0; i < N_OF(fl); i++) {
    sim_fluid_start(f->e, &fl[i], 1);
    int rc = sim_fluid_set_rate(f->e, &fl[i], 1, f->m.kind, i, 0);
    if (rc != SIM_OK) {
      assert_int_equal(rc, SIM_ENOMEM);
      assert_int_equal(fl[i].rate, 0);
      assert_false(sim_engine_pending(f->e, fl[i].done));
      failed = true;
    }
  }
  return failed;
}

/* Creates an engine whose k-th allocation fails. Returns whether
 * creation failed. */
static bool try_create(long k) {
  test_alloc t;
  test_alloc_init(&t, k);
  sim_engine *e = sim_engine_create(&t.hook);
  bool failed = e == NULL;
  t.fail_at = 0;
  if (!failed) { /* a usable engine */
    assert_int_equal(sim_engine_register(e, "noop", noop, NULL, &(uint32_t){0}),
                     SIM_OK);
    assert_int_equal(sim_engine_schedule(e, 1, 0, 0, 0, NULL), SIM_OK);
    assert_int_equal(sim_engine_run(e, 1), SIM_OK);
  }
  sim_engine_destroy(e);
  assert_int_equal(t.live, 0);
  return failed;
}

/* Fails the k-th allocation of a path of a fresh engine. Returns whether
 * the path allocated k times. */
static bool try_path(alloc_path path, long k) {
  if (path == PATH_CREATE)
    return try_create(k);
  fixture f;
  fx_init(&f);
  f.t.fail_at = f.t.calls + k; /* armed after the set-up */
  bool failed = path == PATH_REGISTER   ? try_register(&f)
                : path == PATH_SCHEDULE ? try_schedule(&f, false)
                : path == PATH_EVERY    ? try_schedule(&f, true)
                : path == PATH_IN_RUN   ? try_in_run(&f)
                                        : try_fluid(&f);
  fx_fini(&f);
  return failed;
}

/* Fails the k-th allocation for k = 1, 2, ... until the path no longer
 * allocates k times; each time, nothing may leak (fx_fini checks). */
static void test_alloc_fail(void **state) {
  const alloc_case *c = *state;
  long k = 1;
  while (try_path(c->path, k))
    k++;
  assert_true(k > 1); /* the path allocated at all */
}

/* ---- Registration ---------------------------------------------------- */

int main(void) {
  struct CMUnitTest tests[128];
  size_t n = 0;
  TEST_ADD(tests, n, test_create);
  TEST_ADD(tests, n, test_register);
  TEST_ROWS(tests, n, test_args, arg_cases);
  TEST_ADD(tests, n, test_fifo);
  TEST_ADD(tests, n, test_fifo_across_kinds);
  TEST_ROWS(tests, n, test_until, until_cases);
  TEST_ADD(tests, n, test_every);
  TEST_ADD(tests, n, test_every_no_drift);
  TEST_ADD(tests, n, test_every_cancel_inside);
  TEST_ADD(tests, n, test_every_end_of_time);
  TEST_ADD(tests, n, test_every_from_handler);
  TEST_ADD(tests, n, test_stale_handles);
  TEST_ADD(tests, n, test_cancel_inside);
  TEST_ADD(tests, n, test_events_pending);
  TEST_ROWS(tests, n, test_alloc_fail, alloc_cases);
  return _cmocka_run_group_tests("engine", tests, n, NULL, NULL);
}
