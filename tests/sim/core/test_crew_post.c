/* test_crew_post.c - a job posted beside the members' (crew.h,
 * sim_crew_post): refused without workers; run once by a worker and
 * settled; withdrawn when settled before a worker takes it, and never run
 * after; stopped when a member job wants its worker and taken up again;
 * and, as the services' arrivals are drawn ahead, members whose events
 * take values a posted job drew ahead into their own buffers give the
 * same bits on 1, 2 and 3 threads as members that draw on demand (run
 * under ThreadSanitizer too: the crew keeps the job and the members
 * apart). No test reads the clock: a wait is a count of crew jobs. */
#include <gsl/gsl_rng.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "crew.h"
#include "test_util.h"

enum { NM = 4, MAXLOG = 4000, UNTIL = 3000, TICK = 11, STOCK = 48 };

/* Crew jobs run while waiting for a worker to take a posted job: each
 * wakes a sleeping worker, which looks for the job before it waits
 * again, so one takes it long before this many. */
enum { TRIES = 1000000 };

typedef struct mrec {
  sim_time t;
  double v;
} mrec;

/* A member: its engine, generator, values drawn ahead and log. */
typedef struct member {
  sim_engine *e;
  uint32_t kind;
  gsl_rng *r;
  double stock[STOCK]; /* drawn ahead: from head, held of them */
  size_t head, held;
  mrec log[MAXLOG];
  size_t n;
} member;

typedef struct world {
  sim_engine *lead;
  sim_crew *crew;
  uint32_t tick_kind;
  member m[NM];
  bool post; /* the tick posts draw_ahead */
  unsigned posted;
} world;

/* The member's next value: drawn ahead first, else now (the same
 * stream either way). */
static double take(member *m) {
  if (m->held == 0)
    return gsl_rng_uniform(m->r);
  double v = m->stock[m->head];
  m->head = (m->head + 1) % STOCK;
  m->held--;
  return v;
}

static int on_member(sim_engine *e, void *ctx, const sim_event *ev) {
  member *m = ctx;
  double v = take(m);
  if (m->n < MAXLOG)
    m->log[m->n++] = (mrec){ev->time, v};
  sim_time next = ev->time + 1 + (sim_time)(v * 5);
  return next <= UNTIL ? sim_engine_schedule(e, next, m->kind, 0, 0, NULL)
                       : SIM_OK;
}

/* The posted job: every member's stock filled, a look at whether the
 * worker is wanted every few draws. */
static bool draw_ahead(void *ctx) {
  world *w = ctx;
  for (size_t i = 0; i < NM; i++) {
    member *m = &w->m[i];
    while (m->held < STOCK) {
      m->stock[(m->head + m->held) % STOCK] = gsl_rng_uniform(m->r);
      m->held++;
      if (m->held % 4 == 0 && sim_crew_wanted(w->crew))
        return false;
    }
  }
  return true;
}

static int noop_each(void *ctx, size_t i) {
  (void)ctx;
  (void)i;
  return SIM_OK;
}

static int on_tick(sim_engine *e, void *ctx, const sim_event *ev) {
  (void)e;
  (void)ev;
  world *w = ctx;
  if (w->post)
    w->posted += sim_crew_post(w->crew, draw_ahead, w);
  return sim_crew_each(w->crew, noop_each, w); /* beside the job */
}

static void world_init(world *w, unsigned threads, bool post, bool lead) {
  memset(w, 0, sizeof *w);
  w->post = post;
  w->lead = sim_engine_create(NULL);
  w->crew = sim_crew_create(NULL, threads);
  assert_non_null(w->lead);
  assert_non_null(w->crew);
  assert_int_equal(
      sim_engine_register(w->lead, "tick", on_tick, w, &w->tick_kind), SIM_OK);
  assert_int_equal(
      sim_engine_every(w->lead, 0, TICK, w->tick_kind, 0, 0, NULL), SIM_OK);
  for (size_t i = 0; i < NM; i++) {
    member *m = &w->m[i];
    m->e = sim_engine_create(NULL);
    m->r = gsl_rng_alloc(gsl_rng_taus2);
    assert_non_null(m->e);
    assert_non_null(m->r);
    gsl_rng_set(m->r, 40 + i);
    assert_int_equal(sim_engine_register(m->e, "m", on_member, m, &m->kind),
                     SIM_OK);
    assert_int_equal(
        sim_engine_schedule(m->e, (sim_time)i, m->kind, 0, 0, NULL), SIM_OK);
    assert_int_equal(sim_crew_add(w->crew, m->e, 1.0 + (double)i), SIM_OK);
  }
  if (lead)
    assert_int_equal(sim_crew_lead(w->crew, w->lead), SIM_OK);
}

static void world_fini(world *w) {
  sim_crew_destroy(w->crew);
  sim_engine_destroy(w->lead);
  for (size_t i = 0; i < NM; i++) {
    sim_engine_destroy(w->m[i].e);
    gsl_rng_free(w->m[i].r);
  }
}

/* ---- Posting, running, settling ------------------------------------- */

/* What a counting job saw. */
typedef struct count_job {
  sim_crew *crew;
  atomic_uint calls, done, units;
  atomic_bool off_leader; /* ran on a thread other than the leader's */
  pthread_t leader;
  bool until_wanted; /* work until the worker is wanted, never done */
} count_job;

static bool count_fn(void *ctx) {
  count_job *j = ctx;
  atomic_fetch_add(&j->calls, 1);
  if (!pthread_equal(pthread_self(), j->leader))
    atomic_store(&j->off_leader, true);
  if (j->until_wanted) {
    while (!sim_crew_wanted(j->crew))
      atomic_fetch_add(&j->units, 1);
    return false;
  }
  atomic_fetch_add(&j->done, 1);
  return true;
}

static void count_init(count_job *j, sim_crew *c, bool until_wanted) {
  memset(j, 0, sizeof *j);
  j->crew = c;
  j->leader = pthread_self();
  j->until_wanted = until_wanted;
}

/* Crew jobs until the posted one was called (a sleeping worker is woken
 * by each). */
static void until_called(world *w, count_job *j) {
  for (long k = 0; k < TRIES && atomic_load(&j->calls) == 0; k++)
    assert_int_equal(sim_crew_each(w->crew, noop_each, w), SIM_OK);
  assert_true(atomic_load(&j->calls) > 0);
}

/* One thread, or before sim_crew_lead: nothing to post to. */
static void post_refused(void **state) {
  (void)state;
  static const struct {
    unsigned threads;
    bool lead;
  } cases[] = {{1, true}, {1, false}, {2, false}, {3, false}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    world w;
    world_init(&w, cases[k].threads, false, cases[k].lead);
    count_job j;
    count_init(&j, w.crew, false);
    assert_false(sim_crew_post(w.crew, count_fn, &j));
    assert_false(sim_crew_settle(w.crew));
    assert_int_equal(atomic_load(&j.calls), 0);
    world_fini(&w);
  }
}

/* Taken by a worker, run once, settled done; never again after. */
static void runs_once(void **state) {
  (void)state;
  for (unsigned threads = 2; threads <= 3; threads++) {
    world w;
    world_init(&w, threads, false, true);
    for (int round = 0; round < 50; round++) {
      count_job j;
      count_init(&j, w.crew, false);
      assert_true(sim_crew_post(w.crew, count_fn, &j));
      until_called(&w, &j);
      assert_true(sim_crew_settle(w.crew));
      for (int k = 0; k < 20; k++)
        assert_int_equal(sim_crew_each(w.crew, noop_each, &w), SIM_OK);
      assert_int_equal(atomic_load(&j.calls), 1);
      assert_int_equal(atomic_load(&j.done), 1);
      assert_true(atomic_load(&j.off_leader));
    }
    world_fini(&w);
  }
}

/* Settled at once: done if a worker ran it, else withdrawn (not run);
 * either way never run after. */
static void withdrawn_or_done(void **state) {
  (void)state;
  world w;
  world_init(&w, 2, false, true);
  for (int round = 0; round < 200; round++) {
    count_job j;
    count_init(&j, w.crew, false);
    assert_true(sim_crew_post(w.crew, count_fn, &j));
    bool done = sim_crew_settle(w.crew);
    unsigned calls = atomic_load(&j.calls);
    assert_int_equal(calls, done ? 1 : 0);
    for (int k = 0; k < 5; k++)
      assert_int_equal(sim_crew_each(w.crew, noop_each, &w), SIM_OK);
    assert_int_equal(atomic_load(&j.calls), calls);
    /* A second post settles the first. */
    assert_true(sim_crew_post(w.crew, count_fn, &j));
    assert_true(sim_crew_post(w.crew, count_fn, &j));
    (void)sim_crew_settle(w.crew);
    assert_true(atomic_load(&j.calls) <= calls + 2);
  }
  world_fini(&w);
}

static int count_each(void *ctx, size_t i) {
  unsigned *n = ctx;
  n[i]++; /* member i's, on its one thread a call */
  return SIM_OK;
}

/* A job that works until its worker is wanted: the members' jobs still
 * run, every member once a call, and the job is taken up again after
 * them; settle stops it, not done. */
static void stops_when_wanted(void **state) {
  (void)state;
  for (unsigned threads = 2; threads <= 3; threads++) {
    world w;
    world_init(&w, threads, false, true);
    count_job j;
    count_init(&j, w.crew, true);
    assert_true(sim_crew_post(w.crew, count_fn, &j));
    until_called(&w, &j);
    unsigned n[NM] = {0};
    for (int k = 0; k < 30; k++)
      assert_int_equal(sim_crew_each(w.crew, count_each, n), SIM_OK);
    for (size_t i = 0; i < NM; i++)
      assert_int_equal(n[i], 30);
    assert_false(sim_crew_settle(w.crew));
    unsigned calls = atomic_load(&j.calls);
    assert_true(calls >= 1);
    assert_int_equal(atomic_load(&j.done), 0);
    for (int k = 0; k < 5; k++)
      assert_int_equal(sim_crew_each(w.crew, noop_each, &w), SIM_OK);
    assert_int_equal(atomic_load(&j.calls), calls);
    world_fini(&w);
  }
}

/* ---- Drawn ahead, the same bits --------------------------------------- */

/* Members taking values drawn ahead by a job the leader's tick posts:
 * their logs are those of members drawing on demand on one thread. */
static void same_bits_drawn_ahead(void **state) {
  (void)state;
  world *ref = malloc(sizeof *ref), *w = malloc(sizeof *w);
  assert_non_null(ref);
  assert_non_null(w);
  world_init(ref, 1, false, true);
  assert_int_equal(sim_engine_run(ref->lead, UNTIL), SIM_OK);
  static const struct {
    unsigned threads;
    bool post;
  } cases[] = {{1, true}, {2, true}, {3, true}, {2, false}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    world_init(w, cases[k].threads, cases[k].post, true);
    assert_int_equal(sim_engine_run(w->lead, UNTIL), SIM_OK);
    for (size_t i = 0; i < NM; i++) {
      assert_int_equal(w->m[i].n, ref->m[i].n);
      assert_memory_equal(w->m[i].log, ref->m[i].log,
                          w->m[i].n * sizeof w->m[i].log[0]);
    }
    /* Posted on threads only; one thread draws on demand. */
    assert_true(cases[k].post && cases[k].threads > 1 ? w->posted > 0
                                                       : w->posted == 0);
    world_fini(w);
  }
  world_fini(ref);
  free(ref);
  free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(post_refused),
      cmocka_unit_test(runs_once),
      cmocka_unit_test(withdrawn_or_done),
      cmocka_unit_test(stops_when_wanted),
      cmocka_unit_test(same_bits_drawn_ahead),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
