/* test_engine_source.c - event sources (sim_engine_source): a run whose
 * chains of events come from sources is the same as one whose chains are
 * scheduled. A random program (chains at equal and distinct times, each
 * event setting its successor, chains re-aimed and cancelled, other
 * events scheduled, moved and cancelled meanwhile) runs twice, its chains
 * once from sources and once scheduled, and the two runs must log the
 * same events in the same order and stop, end and count alike under each
 * way of driving the run: whole, in budgets of max_events, in steps of
 * until, stopped, watched, failed, renumbering often. Then the cases of
 * one event each, and evq_pop_before against evq_peek. */
#include <signal.h>

#include "queue.h"
#include "test_engine_fixture.h"

/* ---- The random program ---------------------------------------------- */

enum { NHANDLES = 16, MAXLOG = 4096, MAXTRACE = 8192, NCHAINS = 3 };

typedef struct prog {
  sim_engine *e;
  gsl_rng *r;
  uint32_t chain, other; /* the kinds: the chains' events, the rest */
  bool sources;          /* chains from sources, else scheduled */
  double p_zero;         /* a delay's chance of 0: a tie with now */
  uint32_t src[NCHAINS];      /* sources: each chain's */
  sim_handle chain_h[NCHAINS]; /* scheduled: each chain's pending event */
  sim_handle h[NHANDLES];
  uint64_t next_id, max_id;
  uint64_t offs; /* chains cancelled that had an event pending */
  uint64_t stop_at, watch_at, fail_at; /* counts of events run; 0: none */
  volatile sig_atomic_t flag;          /* the watched flag */
  fake_entry log[MAXLOG];
  size_t n;
} prog;

/* A delay of 0 (a tie with now) or up to most ns. */
static sim_time delay(prog *p, unsigned long most) {
  if (gsl_rng_uniform(p->r) < p->p_zero)
    return 0;
  return 1 + (sim_time)gsl_rng_uniform_int(p->r, most);
}

/* Chain c's next event at at, in place of any it has pending. */
static void chain_at(prog *p, uint32_t c, sim_time at) {
  uint64_t id = p->next_id++;
  int rc;
  if (p->sources) {
    rc = sim_engine_source_at(p->e, p->src[c], at, id, c);
  } else {
    sim_engine_cancel(p->e, &p->chain_h[c]);
    rc = sim_engine_schedule(p->e, at, p->chain, id, c, &p->chain_h[c]);
  }
  assert_int_equal(rc, SIM_OK);
}

/* Cancels chain c's pending event, if any. */
static void chain_off(prog *p, uint32_t c) {
  p->offs += p->sources ? sim_engine_source_off(p->e, p->src[c])
                        : sim_engine_cancel(p->e, &p->chain_h[c]);
}

/* Schedules, moves and cancels other events, and now and then re-aims or
 * cancels a chain, as a model's handler would between an arrival and the
 * next. */
static void meddle(prog *p) {
  sim_time now = sim_engine_now(p->e);
  if (gsl_rng_uniform(p->r) < 0.4 && p->next_id < p->max_id) {
    sim_handle *h = &p->h[gsl_rng_uniform_int(p->r, NHANDLES)];
    assert_int_equal(sim_engine_schedule(p->e, now + delay(p, 40), p->other,
                                         p->next_id++, 0, h),
                     SIM_OK);
  }
  double u = gsl_rng_uniform(p->r);
  sim_handle *h = &p->h[gsl_rng_uniform_int(p->r, NHANDLES)];
  uint32_t c = (uint32_t)gsl_rng_uniform_int(p->r, NCHAINS);
  if (u < 0.15)
    sim_engine_cancel(p->e, h);
  else if (u < 0.35 && sim_engine_pending(p->e, *h))
    assert_int_equal(sim_engine_move(p->e, *h, now + delay(p, 40)), SIM_OK);
  else if (u < 0.40 && p->next_id < p->max_id)
    chain_at(p, c, now + delay(p, 8));
  else if (u < 0.43)
    chain_off(p, c);
}

static int step(sim_engine *e, void *ctx, const sim_event *ev) {
  prog *p = ctx;
  assert_int_equal(sim_engine_now(e), ev->time);
  assert_true(p->n < MAXLOG);
  p->log[p->n++] = (fake_entry){ev->time, ev->kind, ev->a, ev->b};
  if (p->n == p->stop_at)
    sim_engine_stop(e);
  if (p->n == p->watch_at)
    p->flag = 1;
  if (ev->kind == p->chain && p->next_id < p->max_id)
    chain_at(p, (uint32_t)ev->b, sim_engine_now(e) + delay(p, 4));
  meddle(p);
  return p->n == p->fail_at ? SIM_EIO : SIM_OK;
}

/* ---- Driving it ------------------------------------------------------ */

typedef enum drive { WHOLE, BUDGET, STEPS } drive;

typedef struct prog_case {
  const char *name;
  unsigned long seed;
  double p_zero;
  drive how;
  uint64_t budget;    /* BUDGET: max_events a call */
  sim_time step, end; /* STEPS: until grows by step; all: to end */
  uint64_t stop_at, watch_at, fail_at;
  uint64_t renumber; /* sim_engine_renumber_at's count; 0: the default */
} prog_case;

/* What the driver saw after each call of a run. */
typedef struct run_mark {
  int rc;
  bool done;
  sim_time now;
  uint64_t nrun;
  size_t pending;
} run_mark;

typedef struct trace {
  run_mark m[MAXTRACE];
  size_t n;
} trace;

/* One call of a run, as c drives it up to until. */
static int run_once(const prog_case *c, prog *p, sim_time until, bool *done) {
  uint64_t before = sim_engine_events_run(p->e);
  int rc = c->how == BUDGET
               ? sim_engine_run_some(p->e, until, c->budget, done)
               : sim_engine_run_some(p->e, until, UINT64_MAX, done);
  if (c->how == BUDGET)
    assert_true(sim_engine_events_run(p->e) - before <= c->budget);
  return rc;
}

/* Runs the program to c->end as c says, marking each call in *t; a stop
 * or a watch is cleared and the run continued, a failure ends it. */
static void drive_prog(const prog_case *c, prog *p, trace *t) {
  sim_time until = c->how == STEPS ? c->step : c->end;
  for (;;) {
    bool done = false;
    int rc = run_once(c, p, until, &done);
    assert_true(t->n < MAXTRACE);
    t->m[t->n++] = (run_mark){rc, done, sim_engine_now(p->e),
                              sim_engine_events_run(p->e),
                              sim_engine_events_pending(p->e)};
    if (rc == SIM_ECANCELED) {
      p->flag = 0;
      continue;
    }
    if (rc != SIM_OK || (done && until == c->end))
      return;
    if (done)
      until = until + c->step < c->end ? until + c->step : c->end;
  }
}

/* Runs c's program, its chains from sources or scheduled; *p holds the
 * log. */
static void run_prog(const prog_case *c, bool sources, prog *p, trace *t) {
  *p = (prog){.sources = sources, .p_zero = c->p_zero, .max_id = 3000,
              .stop_at = c->stop_at, .watch_at = c->watch_at,
              .fail_at = c->fail_at};
  t->n = 0;
  p->e = sim_engine_create(NULL);
  p->r = rng_new(c->seed);
  if (c->renumber != 0)
    sim_engine_renumber_at(p->e, c->renumber);
  assert_int_equal(sim_engine_register(p->e, "chain", step, p, &p->chain),
                   SIM_OK);
  assert_int_equal(sim_engine_register(p->e, "other", step, p, &p->other),
                   SIM_OK);
  assert_int_equal(sim_engine_movable(p->e, p->other), SIM_OK);
  sim_engine_watch(p->e, &p->flag);
  p->next_id = 1;
  for (uint32_t i = 0; i < NCHAINS; i++) {
    if (sources)
      assert_int_equal(sim_engine_source(p->e, p->chain, &p->src[i]), SIM_OK);
    chain_at(p, i, 1 + i % 2); /* two chains tie */
  }
  drive_prog(c, p, t);
}

static const prog_case prog_cases[] = {
    {"whole run, distinct times", 1, 0.0, WHOLE, 0, 0, 1 << 20, 0, 0, 0, 0},
    {"whole run, many ties", 2, 0.5, WHOLE, 0, 0, 1 << 20, 0, 0, 0, 0},
    {"whole run, all ties but few", 3, 0.9, WHOLE, 0, 0, 1 << 20, 0, 0, 0, 0},
    {"budget of 1 a call", 4, 0.4, BUDGET, 1, 0, 1 << 20, 0, 0, 0, 0},
    {"budget of 7 a call", 5, 0.4, BUDGET, 7, 0, 1 << 20, 0, 0, 0, 0},
    {"until in steps of 3 ns", 6, 0.4, STEPS, 0, 3, 12000, 0, 0, 0, 0},
    {"until in steps of 1 ns", 7, 0.6, STEPS, 0, 1, 4000, 0, 0, 0, 0},
    {"until before the program's end", 8, 0.4, STEPS, 0, 50, 400, 0, 0, 0,
     0},
    {"stopped by a chain event", 9, 0.4, WHOLE, 0, 0, 1 << 20, 40, 0, 0, 0},
    {"stopped by a tie", 10, 0.9, WHOLE, 0, 0, 1 << 20, 100, 0, 0, 0},
    {"watched flag set", 11, 0.4, WHOLE, 0, 0, 1 << 20, 0, 60, 0, 0},
    {"watched, in budgets", 12, 0.4, BUDGET, 5, 0, 1 << 20, 0, 60, 0, 0},
    {"a handler fails", 13, 0.4, WHOLE, 0, 0, 1 << 20, 0, 0, 200, 0},
    {"renumbered every 40 seqs", 14, 0.5, WHOLE, 0, 0, 1 << 20, 0, 0, 0, 40},
    {"renumbered at every seq", 15, 0.5, WHOLE, 0, 0, 1 << 20, 0, 0, 0, 1},
    {"renumbered, in budgets of 3", 16, 0.4, BUDGET, 3, 0, 1 << 20, 0, 0, 0,
     25},
};

/* The two runs' logs and the marks of their calls are the same. */
static void assert_same_runs(const prog *got, const prog *ref,
                             const trace *tgot, const trace *tref) {
  assert_int_equal(got->n, ref->n);
  for (size_t i = 0; i < ref->n; i++)
    if (memcmp(&got->log[i], &ref->log[i], sizeof ref->log[i]) != 0)
      fail_msg("log[%zu] = (%lld, a=%llu), want (%lld, a=%llu)", i,
               (long long)got->log[i].time, (unsigned long long)got->log[i].a,
               (long long)ref->log[i].time, (unsigned long long)ref->log[i].a);
  assert_int_equal(tgot->n, tref->n);
  for (size_t i = 0; i < tref->n; i++) {
    const run_mark *x = &tgot->m[i], *y = &tref->m[i];
    if (x->rc != y->rc || x->done != y->done || x->now != y->now ||
        x->nrun != y->nrun || x->pending != y->pending)
      fail_msg("call %zu: rc %d done %d now %lld run %llu pending %zu; "
               "want %d %d %lld %llu %zu",
               i, x->rc, x->done, (long long)x->now,
               (unsigned long long)x->nrun, x->pending, y->rc, y->done,
               (long long)y->now, (unsigned long long)y->nrun, y->pending);
  }
  assert_int_equal(got->offs, ref->offs);
}

static void test_prog_case(void **state) {
  const prog_case *c = *state;
  static prog ref, got;
  static trace tref, tgot;
  run_prog(c, false, &ref, &tref);
  run_prog(c, true, &got, &tgot);
  assert_true(ref.n > 100);
  assert_same_runs(&got, &ref, &tgot, &tref);
  /* What the case is about happened. */
  const run_mark *last = &tref.m[tref.n - 1];
  assert_int_equal(last->rc, c->fail_at != 0 ? SIM_EIO : SIM_OK);
  assert_int_equal(tref.n > 1, c->how != WHOLE || c->stop_at || c->watch_at);
  assert_true(ref.offs > 0);
  for (prog *p = &ref; p != NULL; p = p == &ref ? &got : NULL) {
    sim_engine_destroy(p->e);
    gsl_rng_free(p->r);
  }
}

/* ---- One event at a time --------------------------------------------- */

/* A source's event (a = 1) and a scheduled one (a = 2), set in the order
 * the case says, then a run to until with a budget. */
typedef struct one_case {
  const char *name;
  sim_time src_at, other_at;
  bool source_first; /* the source's event set before the other */
  sim_time until;
  uint64_t budget;
  uint64_t want_a[2]; /* the first call's log (0: none) */
  bool want_done;
} one_case;

static const one_case one_cases[] = {
    {"source before", 5, 10, true, 100, 10, {1, 2}, true},
    {"source after", 15, 10, true, 100, 10, {2, 1}, true},
    {"a tie, the source's set first", 10, 10, true, 100, 10, {1, 2}, true},
    {"a tie, the other's set first", 10, 10, false, 100, 10, {2, 1}, true},
    {"source at until", 20, 10, true, 20, 10, {2, 1}, true},
    {"source after until", 21, 10, true, 20, 10, {2, 0}, true},
    {"budget of 1, source first", 5, 10, true, 100, 1, {1, 0}, false},
    {"budget of 1, source left", 15, 10, true, 100, 1, {2, 0}, false},
};

static void set_source(fixture *f, uint32_t src, sim_time at) {
  assert_int_equal(sim_engine_source_at(f->e, src, at, 1, 0), SIM_OK);
}

static void test_one_case(void **state) {
  const one_case *c = *state;
  fixture f;
  fx_init(&f);
  uint32_t src;
  assert_int_equal(sim_engine_source(f.e, f.m.kind, &src), SIM_OK);
  if (c->source_first)
    set_source(&f, src, c->src_at);
  assert_int_equal(fake_model_schedule(&f.m, c->other_at, 2, 0, NULL),
                   SIM_OK);
  if (!c->source_first)
    set_source(&f, src, c->src_at);
  assert_int_equal(sim_engine_events_pending(f.e), 2);
  bool done;
  assert_int_equal(sim_engine_run_some(f.e, c->until, c->budget, &done),
                   SIM_OK);
  size_t want_n = c->want_a[1] != 0 ? 2 : 1;
  assert_log_a(&f.m, c->want_a, want_n);
  assert_int_equal(done, c->want_done);
  assert_int_equal(sim_engine_now(f.e),
                   done ? c->until : f.m.log[want_n - 1].time);
  assert_int_equal(sim_engine_events_pending(f.e), 2 - want_n);
  /* The rest runs, the source's event at its time. */
  assert_int_equal(sim_engine_run(f.e, 1000), SIM_OK);
  assert_int_equal(sim_engine_events_run(f.e), 2);
  for (size_t i = 0; i < f.m.n; i++)
    if (f.m.log[i].a == 1)
      assert_int_equal(f.m.log[i].time, c->src_at);
  fx_fini(&f);
}

/* Set again, a source's event is replaced; cancelled, it does not run;
 * both as for a scheduled one in the pending count. */
static void test_replace_and_off(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  uint32_t src;
  assert_int_equal(sim_engine_source(f.e, f.m.kind, &src), SIM_OK);
  assert_false(sim_engine_source_off(f.e, src)); /* none pending */
  assert_int_equal(sim_engine_source_at(f.e, src, 50, 7, 0), SIM_OK);
  assert_int_equal(sim_engine_source_at(f.e, src, 30, 8, 0), SIM_OK);
  assert_int_equal(sim_engine_events_pending(f.e), 1);
  assert_int_equal(sim_engine_run(f.e, 100), SIM_OK);
  assert_log_a(&f.m, (uint64_t[]){8}, 1);
  assert_int_equal(f.m.log[0].time, 30);
  assert_int_equal(sim_engine_source_at(f.e, src, 150, 9, 0), SIM_OK);
  assert_true(sim_engine_source_off(f.e, src));
  assert_false(sim_engine_source_off(f.e, src));
  assert_int_equal(sim_engine_events_pending(f.e), 0);
  assert_int_equal(sim_engine_run(f.e, 1000), SIM_OK);
  assert_int_equal(sim_engine_events_run(f.e), 1);
  fx_fini(&f);
}

/* What a source refuses: no such kind or source, a time before now, a
 * source added during a run. */
static int add_source_hook(fake_model *m, const sim_event *ev) {
  (void)ev;
  uint32_t src;
  assert_int_equal(sim_engine_source(m->engine, m->kind, &src), SIM_ESTATE);
  return SIM_OK;
}

static void test_refused(void **state) {
  (void)state;
  fixture f;
  fx_init(&f);
  uint32_t src;
  assert_int_equal(sim_engine_source(f.e, 99, &src), SIM_EINVAL);
  assert_int_equal(sim_engine_source(f.e, f.m.kind, &src), SIM_OK);
  assert_int_equal(sim_engine_source_at(f.e, src + 1, 5, 0, 0), SIM_EINVAL);
  assert_false(sim_engine_source_off(f.e, src + 1));
  assert_int_equal(sim_engine_run(f.e, 10), SIM_OK);
  assert_int_equal(sim_engine_source_at(f.e, src, 9, 0, 0), SIM_EINVAL);
  assert_int_equal(sim_engine_events_pending(f.e), 0);
  f.m.hook = add_source_hook;
  assert_int_equal(sim_engine_source_at(f.e, src, 10, 0, 0), SIM_OK);
  assert_int_equal(sim_engine_run(f.e, 20), SIM_OK);
  assert_int_equal(f.m.n, 1);
  fx_fini(&f);
}

/* evq_pop_before pops exactly when the first entry comes before the key,
 * as evq_peek tells, in the heap, under a popped root and in the radix
 * heap (past 16384 entries). */
static void test_pop_before(void **state) {
  (void)state;
  evq *q = evq_create(NULL);
  gsl_rng *r = rng_new(5);
  assert_non_null(q);
  evq_entry got;
  assert_false(evq_pop_before(q, INT64_MAX, EVQ_SEQS - 1, &got));
  uint64_t seq = 0;
  for (size_t n = 0; n < 40000; n++) {
    int64_t t = 100 + (int64_t)gsl_rng_uniform_int(r, 500);
    assert_int_equal(evq_push(q, (evq_entry){t, seq++, (uint32_t)n}), SIM_OK);
    evq_entry e, top;
    if (n % 3 == 2)
      assert_true(evq_pop(q, &e));
    assert_true(evq_peek(q, &top));
    int64_t pt = top.time + (int64_t)gsl_rng_uniform_int(r, 3) - 1;
    uint64_t ps = top.seq + gsl_rng_uniform_int(r, 3);
    ps = ps > 0 ? ps - 1 : 0;
    bool want = top.time < pt || (top.time == pt && top.seq < ps);
    size_t size = evq_size(q);
    assert_int_equal(evq_pop_before(q, pt, ps, &got), want);
    assert_int_equal(evq_size(q), size - want);
    if (want)
      assert_true(got.time == top.time && got.seq == top.seq &&
                  got.slot == top.slot);
  }
  evq_destroy(q);
  gsl_rng_free(r);
}

int main(void) {
  struct CMUnitTest tests[40];
  size_t n = 0;
  TEST_ROWS(tests, n, test_prog_case, prog_cases);
  TEST_ROWS(tests, n, test_one_case, one_cases);
  TEST_ADD(tests, n, test_replace_and_off);
  TEST_ADD(tests, n, test_refused);
  TEST_ADD(tests, n, test_pop_before);
  return _cmocka_run_group_tests("engine_source", tests, n, NULL, NULL);
}
