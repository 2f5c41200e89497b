/* test_engine.c - unit tests of the discrete-event engine (sim/core/engine.c)
 * through the fake model of tests/helpers. Orders are checked against
 * references computed without the engine: the scheduled events, cancelled
 * ones removed, sorted by (time, order of scheduling). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "engine.h"
#include "fake_model.h"
#include "test_util.h"

/* ---- Fixture --------------------------------------------------------- */

/* An engine on a counting allocator with one fake model. */
typedef struct fixture {
  test_alloc t;
  sim_engine *e;
  fake_model m;
} fixture;

static void fx_init(fixture *f) {
  test_alloc_init(&f->t, 0);
  f->e = sim_engine_create(&f->t.hook);
  assert_non_null(f->e);
  assert_int_equal(fake_model_init(&f->m, f->e, "fake"), SIM_OK);
}

/* Frees everything and checks that nothing leaked. */
static void fx_fini(fixture *f) {
  fake_model_fini(&f->m);
  sim_engine_destroy(f->e);
  assert_int_equal(f->t.live, 0);
}

static gsl_rng *rng_new(unsigned long seed) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  assert_non_null(r);
  gsl_rng_set(r, seed);
  return r;
}

/* Checks that the log holds events with payload a = want[0..n) in order. */
static void assert_log_a(const fake_model *m, const uint64_t *want, size_t n) {
  assert_int_equal(m->n, n);
  for (size_t i = 0; i < n; i++)
    if (m->log[i].a != want[i])
      fail_msg("log[%zu].a = %llu, want %llu", i,
               (unsigned long long)m->log[i].a, (unsigned long long)want[i]);
}

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

typedef struct ref_event {
  sim_time time;
  uint64_t order; /* scheduling order */
  uint64_t a;
} ref_event;

static int ref_cmp(const void *x, const void *y) {
  const ref_event *p = x, *q = y;
  if (p->time != q->time)
    return p->time < q->time ? -1 : 1;
  return p->order < q->order ? -1 : p->order > q->order;
}

/* Checks the log against ref[0..n) sorted by (time, order). */
static void assert_log_ref(const fake_model *m, ref_event *ref, size_t n) {
  qsort(ref, n, sizeof *ref, ref_cmp);
  assert_int_equal(m->n, n);
  for (size_t i = 0; i < n; i++)
    if (m->log[i].a != ref[i].a || m->log[i].time != ref[i].time)
      fail_msg("log[%zu] = (%lld, a=%llu), want (%lld, a=%llu)", i,
               (long long)m->log[i].time, (unsigned long long)m->log[i].a,
               (long long)ref[i].time, (unsigned long long)ref[i].a);
}

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
} random_case;

static const random_case random_cases[] = {
    {"balanced", 11, 1000, 20000, 0.3, 0.1, 1000, 5000, 0},
    {"cancel heavy", 12, 5000, 30000, 0.6, 0.05, 100000, 1000000, 0},
    {"many ties", 13, 2000, 20000, 0.3, 0.5, 3, 7, 0},
    {"one at a time", 14, 1, 5000, 0.1, 0.2, 50, 1000000000, 0},
    {"big pool, long run", 15, 20000, 60000, 0.4, 0.02, 1000000, 123456789, 0},
    /* Stopping after a number of events (the command's slices) splits
     * runs between events of one time and beside tombstones: the order
     * must be the one of an unsliced run. */
    {"one event a call", 16, 1000, 20000, 0.3, 0.5, 3, 1000000000, 1},
    {"budgets amid ties", 17, 2000, 20000, 0.3, 0.5, 3, 7, 97},
    {"budgets, cancel heavy", 18, 5000, 30000, 0.6, 0.05, 100000, 1000000000,
     1000},
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
  TEST_ROWS(tests, n, test_handler_error, fail_cases);
  TEST_ADD(tests, n, test_stop);
  TEST_ADD(tests, n, test_run_reentrant);
  TEST_ADD(tests, n, test_watched_flag_stops);
  TEST_ADD(tests, n, test_compaction);
  TEST_ROWS(tests, n, test_random, random_cases);
  TEST_ROWS(tests, n, test_fluid, fluid_cases);
  TEST_ADD(tests, n, test_fluid_remaining);
  TEST_ADD(tests, n, test_fluid_restart_cancels);
  TEST_ROWS(tests, n, test_alloc_fail, alloc_cases);
  return _cmocka_run_group_tests("engine", tests, n, NULL, NULL);
}
