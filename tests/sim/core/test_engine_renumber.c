/* test_engine_renumber.c - the engine's renumbering of its queue's seqs
 * (engine.c, renumber; sim_engine_renumber_at): a random run of events
 * at few distinct times (ties everywhere), which schedule, cancel and move
 * each other, beside a periodic event, run in slices, logs the same
 * events in the same order whether the engine renumbers every few
 * hundred pushes or never; with the queue a binary heap and with its
 * radix heap. */
#include "test_engine_fixture.h"

typedef struct renumber_case {
  const char *name;
  size_t initial;  /* events scheduled before the run */
  size_t total;    /* events scheduled in all */
  sim_time spread; /* an event's delay: 0 .. spread-1 ns */
  uint64_t seqs;   /* the renumbering's count (sim_engine_renumber_at) */
} renumber_case;

static const renumber_case cases[] = {
    {"heap", 300, 30000, 40, 700},
    {"heap, renumbered at every push", 50, 3000, 10, 1},
    {"radix heap", 20000, 150000, 400, 50000},
};

/* A periodic event's payload; the others' are their index. */
#define PERIODIC UINT64_MAX

/* The run's random workload, the same draws in both runs as long as the
 * events come in the same order. */
typedef struct work {
  const renumber_case *c;
  gsl_rng *r;
  sim_handle *h; /* of event a */
  size_t n;      /* events scheduled */
} work;

static void work_schedule(work *w, fake_model *m, sim_time now) {
  if (w->n == w->c->total)
    return;
  sim_time at =
      now + (sim_time)gsl_rng_uniform_int(w->r, (unsigned long)w->c->spread);
  assert_int_equal(fake_model_schedule(m, at, w->n, 0, &w->h[w->n]), SIM_OK);
  w->n++;
}

/* A random earlier event: cancelled, moved earlier or later, or left. */
static void work_touch(work *w, fake_model *m, sim_time now) {
  sim_handle *h = &w->h[gsl_rng_uniform_int(w->r, (unsigned long)w->n)];
  double u = gsl_rng_uniform(w->r);
  sim_time at =
      now + (sim_time)gsl_rng_uniform_int(w->r, (unsigned long)w->c->spread);
  if (!sim_engine_pending(m->engine, *h))
    return;
  if (u < 0.2)
    sim_engine_cancel(m->engine, h);
  else if (u < 0.7)
    assert_int_equal(sim_engine_move(m->engine, *h, at), SIM_OK);
}

static int work_hook(fake_model *m, const sim_event *ev) {
  work *w = m->hook_ctx;
  /* a successor, and one more while fewer than at the start are pending */
  work_schedule(w, m, ev->time);
  if (sim_engine_events_pending(m->engine) <= w->c->initial)
    work_schedule(w, m, ev->time);
  work_touch(w, m, ev->time);
  return SIM_OK;
}

/* Runs the case's workload, renumbering at seqs, into f's log. */
static void run_work(fixture *f, const renumber_case *c, uint64_t seqs) {
  fx_init(f);
  assert_int_equal(sim_engine_movable(f->e, f->m.kind), SIM_OK);
  sim_engine_renumber_at(f->e, seqs);
  work w = {.c = c, .r = rng_new(7), .h = malloc(c->total * sizeof *w.h)};
  assert_non_null(w.h);
  f->m.hook = work_hook;
  f->m.hook_ctx = &w;
  assert_int_equal(sim_engine_every(f->e, 0, c->spread / 3 + 1, f->m.kind,
                                    PERIODIC, 0, NULL),
                   SIM_OK);
  for (size_t i = 0; i < c->initial; i++)
    work_schedule(&w, &f->m, 0);
  sim_time end = (sim_time)c->total * c->spread, slice = c->spread / 2 + 1;
  for (sim_time t = slice; t < end && w.n < c->total; t += slice)
    assert_int_equal(sim_engine_run(f->e, t), SIM_OK);
  assert_int_equal(sim_engine_run(f->e, end), SIM_OK);
  free(w.h);
  gsl_rng_free(w.r);
}

static void test_renumber(void **state) {
  const renumber_case *c = *state;
  fixture never, often;
  run_work(&never, c, UINT64_MAX);
  run_work(&often, c, c->seqs);
  assert_true(never.m.n > c->total / 2);
  assert_int_equal(often.m.n, never.m.n);
  for (size_t i = 0; i < never.m.n; i++) {
    const fake_entry *x = &never.m.log[i], *y = &often.m.log[i];
    if (x->time != y->time || x->a != y->a)
      fail_msg("event %zu: (%lld, a=%llu) renumbered, (%lld, a=%llu) not", i,
               (long long)y->time, (unsigned long long)y->a, (long long)x->time,
               (unsigned long long)x->a);
  }
  fx_fini(&never);
  fx_fini(&often);
}

int main(void) {
  struct CMUnitTest tests[8];
  size_t n = 0;
  TEST_ROWS(tests, n, test_renumber, cases);
  return _cmocka_run_group_tests("engine_renumber", tests, n, NULL, NULL);
}
