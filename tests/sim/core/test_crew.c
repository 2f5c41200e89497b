/* test_crew.c - a crew of member engines following a leader (crew.h).
 * Members whose handlers draw from their own generators and schedule
 * their own events, a leader whose periodic tick reads every member and
 * schedules into them and runs work on each (sim_crew_each): every
 * member's trace and the leader's are the same bits for 1, 2, 3 and 4
 * threads and however the leader's run is cut. Each member runs on one
 * thread, the members spread by weight; a member's failure stops the
 * leader with the first failing member's message; the crew's refusals. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "crew.h"
#include "test_util.h"

enum { NMEMBERS = 5, MAXLOG = 6000, UNTIL = 4000, TICK = 7 };

typedef struct mrec {
  sim_time t;
  uint64_t a;
  double draw;
} mrec;

/* A member: its engine, generator and log, touched by its handler only
 * (and by the leader's events, which run while no member does). */
typedef struct member {
  sim_engine *e;
  uint32_t kind;
  gsl_rng *r;
  mrec log[MAXLOG];
  size_t n;
  uint64_t fail_a;   /* fail at the event with this a; 0 never */
  pthread_t ran_on;  /* the thread its last event ran on */
  pthread_t each_on; /* the thread sim_crew_each last ran it on */
  unsigned eaches;   /* sim_crew_each's calls for it */
  sim_time each_now; /* its clock in the last such call */
} member;

typedef struct lrec {
  sim_time t;
  uint64_t total; /* the members' events as the tick saw them */
  double sum;     /* their draws' sum */
} lrec;

typedef struct world {
  sim_engine *lead;
  sim_crew *crew;
  uint32_t tick_kind;
  member m[NMEMBERS];
  size_t nm;
  lrec log[MAXLOG];
  size_t n;
  uint64_t ticks;
  bool each_in_tick; /* the tick runs sim_crew_each */
  bool each_slow;    /* each_note holds member 0 (hold) */
} world;

/* A fixed amount of work (some 20 us on this project's Xeon): a count of
 * steps, not a time read from the clock, so that the test never paces
 * itself by the clock; a slower machine only holds longer. */
enum { HOLD_STEPS = 80000 };

static void hold(void) {
  for (volatile unsigned k = 0; k < HOLD_STEPS; k++)
    ;
}

static int on_member(sim_engine *e, void *ctx, const sim_event *ev) {
  member *m = ctx;
  m->ran_on = pthread_self();
  if (m->fail_a != 0 && ev->a == m->fail_a)
    return sim_engine_fail(e, SIM_EIO, "member a=%llu failed",
                           (unsigned long long)ev->a);
  double draw = gsl_rng_uniform(m->r);
  if (m->n < MAXLOG)
    m->log[m->n++] = (mrec){ev->time, ev->a, draw};
  /* Its chain: ties (0) and gaps up to 4 ns, from its own draws. */
  sim_time d = (sim_time)(draw * 5);
  if (ev->b == 0 && ev->time + d <= UNTIL)
    return sim_engine_schedule(e, ev->time + d, m->kind, ev->a + 1, 0, NULL);
  return SIM_OK;
}

/* sim_crew_each's work: notes the thread and the member's clock. */
static int each_note(void *ctx, size_t i) {
  world *w = ctx;
  member *m = &w->m[i];
  m->each_on = pthread_self();
  m->eaches++;
  m->each_now = sim_engine_now(m->e);
  /* Keeps the caller on its own share a while, so that a running worker
   * claims its share before the caller would take it (crew.c). */
  if (w->each_slow && i == 0)
    hold();
  return SIM_OK;
}

/* The leader's tick: reads every member, schedules into one (as a
 * control tick re-prices a service), runs work on each. */
static int on_tick(sim_engine *e, void *ctx, const sim_event *ev) {
  world *w = ctx;
  lrec r = {ev->time, 0, 0};
  for (size_t i = 0; i < w->nm; i++) {
    /* The members' events at the tick's time run after it. */
    if (w->m[i].n > 0)
      assert_true(w->m[i].log[w->m[i].n - 1].t < ev->time);
    r.total += w->m[i].n;
    for (size_t k = 0; k < w->m[i].n; k++)
      r.sum += w->m[i].log[k].draw;
  }
  if (w->n < MAXLOG)
    w->log[w->n++] = r;
  member *m = &w->m[w->ticks++ % w->nm];
  assert_int_equal(sim_engine_now(m->e), ev->time);
  int rc = sim_engine_schedule(m->e, ev->time + (sim_time)(w->ticks % 3),
                               m->kind, 900000 + w->ticks, 1, NULL);
  if (rc == SIM_OK && w->each_in_tick)
    rc = sim_crew_each(w->crew, each_note, w);
  (void)e;
  return rc;
}

static void world_init(world *w, unsigned threads, size_t nm) {
  memset(w, 0, sizeof *w);
  w->nm = nm;
  w->lead = sim_engine_create(NULL);
  assert_non_null(w->lead);
  w->crew = sim_crew_create(NULL, threads);
  assert_non_null(w->crew);
  assert_int_equal(
      sim_engine_register(w->lead, "tick", on_tick, w, &w->tick_kind), SIM_OK);
  assert_int_equal(
      sim_engine_every(w->lead, 0, TICK, w->tick_kind, 0, 0, NULL), SIM_OK);
  for (size_t i = 0; i < nm; i++) {
    member *m = &w->m[i];
    m->e = sim_engine_create(NULL);
    assert_non_null(m->e);
    m->r = gsl_rng_alloc(gsl_rng_taus2);
    assert_non_null(m->r);
    gsl_rng_set(m->r, 100 + i);
    assert_int_equal(sim_engine_register(m->e, "member", on_member, m, &m->kind),
                     SIM_OK);
    assert_int_equal(sim_engine_schedule(m->e, (sim_time)i, m->kind,
                                         1000 * (i + 1), 0, NULL),
                     SIM_OK);
    /* Weights 5, 4, 3, ...: uneven shares. */
    assert_int_equal(sim_crew_add(w->crew, m->e, (double)(nm - i)), SIM_OK);
  }
  assert_int_equal(sim_crew_lead(w->crew, w->lead), SIM_OK);
}

static void world_fini(world *w) {
  sim_crew_destroy(w->crew);
  sim_engine_destroy(w->lead);
  for (size_t i = 0; i < w->nm; i++) {
    sim_engine_destroy(w->m[i].e);
    gsl_rng_free(w->m[i].r);
  }
}

/* ---- The same bits on any number of threads, however cut ------------- */

typedef struct same_case {
  const char *name;
  unsigned threads;
  uint64_t max_events; /* 0: runs to untils */
  sim_time step;       /* 0: one run to UNTIL */
  bool each;           /* the tick runs sim_crew_each */
} same_case;

static const same_case same_cases[] = {
    {"1 thread, one run", 1, 0, 0, true},
    {"2 threads, one run", 2, 0, 0, true},
    {"3 threads, one run", 3, 0, 0, false},
    {"4 threads, one run", 4, 0, 0, true},
    {"8 threads (5 members), one run", 8, 0, 0, false},
    {"2 threads, budget 1", 2, 1, 0, false},
    {"3 threads, budget 13", 3, 13, 0, true},
    {"4 threads, steps of 1 ns", 4, 0, 1, false},
    {"2 threads, steps of 10 ns", 2, 0, 10, true},
    {"1 thread, steps of 3 ns", 1, 0, 3, false},
};

static void run_as(world *w, const same_case *c) {
  if (c->max_events > 0) {
    bool done = false;
    while (!done)
      assert_int_equal(
          sim_engine_run_some(w->lead, UNTIL, c->max_events, &done), SIM_OK);
  } else if (c->step > 0) {
    for (sim_time t = 0; t < UNTIL; t += c->step)
      assert_int_equal(sim_engine_run(w->lead, t), SIM_OK);
  }
  assert_int_equal(sim_engine_run(w->lead, UNTIL), SIM_OK);
}

static void assert_same(const world *a, const world *b) {
  assert_int_equal(a->n, b->n);
  assert_memory_equal(a->log, b->log, a->n * sizeof a->log[0]);
  for (size_t i = 0; i < a->nm; i++) {
    assert_int_equal(a->m[i].n, b->m[i].n);
    assert_memory_equal(a->m[i].log, b->m[i].log,
                        a->m[i].n * sizeof a->m[i].log[0]);
    assert_int_equal(sim_engine_now(a->m[i].e), sim_engine_now(b->m[i].e));
  }
  assert_int_equal(sim_engine_events_run(a->lead),
                   sim_engine_events_run(b->lead));
}

static void test_same_case(void **state) {
  const same_case *c = *state;
  static world ref, got;
  const same_case one = {"ref", 1, 0, 0, c->each};
  world_init(&ref, 1, NMEMBERS);
  ref.each_in_tick = c->each;
  run_as(&ref, &one);
  world_init(&got, c->threads, NMEMBERS);
  got.each_in_tick = c->each;
  run_as(&got, c);
  assert_true(ref.m[0].n > 500);
  assert_same(&ref, &got);
  uint64_t total = 0;
  for (size_t i = 0; i < NMEMBERS; i++)
    total += ref.m[i].n;
  assert_int_equal(sim_engine_events_run(got.lead), total + ref.ticks);
  for (size_t i = 0; i < NMEMBERS; i++)
    assert_int_equal(sim_engine_now(got.m[i].e), UNTIL);
  world_fini(&ref);
  world_fini(&got);
}

/* ---- Threads and the partition --------------------------------------- */

/* Weights 5, 4, 3, 2, 1 on 2 threads: 5 | 4, then 3 to the 4, then 2
 * and 1 to the 5 (8 against 7): members 0, 3 and 4 on the caller's
 * thread, 1 and 2 on the worker's. A share moves whole, and only to the
 * caller when the worker is late (crew.c): so 0, 3 and 4 always run on
 * the caller's thread, 1 and 2 together, and on another thread at least
 * once. How soon the worker first runs its share is the machine's (on
 * busy cores the caller ran every one of 200 shares, seen under ctest
 * -j2), so the calls go on past 200 until it has, at most MAX_CALLS: a
 * worker that never claims a share in those fails. Each member's each
 * runs once a call, at the leader's clock. */
static void test_partition_and_threads(void **state) {
  (void)state;
  static world w;
  world_init(&w, 2, NMEMBERS);
  assert_int_equal(sim_crew_threads(w.crew), 2);
  pthread_t self = pthread_self();
  enum { MIN_CALLS = 200, MAX_CALLS = 50000 };
  unsigned apart = 0;
  w.each_slow = true;
  for (unsigned k = 1; k <= MIN_CALLS || (apart == 0 && k <= MAX_CALLS);
       k++) {
    assert_int_equal(sim_engine_run(w.lead, 10 * (sim_time)k), SIM_OK);
    assert_int_equal(sim_crew_each(w.crew, each_note, &w), SIM_OK);
    for (size_t i = 0; i < NMEMBERS; i++) {
      assert_int_equal(w.m[i].eaches, k);
      assert_int_equal(w.m[i].each_now, 10 * (sim_time)k);
    }
    const size_t mine[] = {0, 3, 4};
    for (size_t j = 0; j < 3; j++) {
      assert_true(pthread_equal(w.m[mine[j]].each_on, self));
      assert_true(pthread_equal(w.m[mine[j]].ran_on, self));
    }
    assert_true(pthread_equal(w.m[1].each_on, w.m[2].each_on));
    apart += !pthread_equal(w.m[1].each_on, self);
  }
  assert_true(apart > 0);
  world_fini(&w);
}

typedef struct count_case {
  const char *name;
  unsigned threads;
  size_t members;
  unsigned want;
} count_case;

static const count_case count_cases[] = {
    {"1 of 1", 1, 3, 1}, {"2 for 3 members", 2, 3, 2},
    {"4 for 3 members: 3", 4, 3, 3}, {"3 for 1 member: 1", 3, 1, 1},
};

static void test_count_case(void **state) {
  const count_case *c = *state;
  static world w;
  world_init(&w, c->threads, c->members);
  assert_int_equal(sim_crew_threads(w.crew), c->want);
  assert_int_equal(sim_engine_run(w.lead, 50), SIM_OK);
  world_fini(&w);
}

/* ---- Failures and refusals ------------------------------------------- */

typedef struct fail_case {
  const char *name;
  unsigned threads;
  bool fails[NMEMBERS]; /* members whose event at 50 fails */
  const char *want_msg;
} fail_case;

/* The failing events all come in one follow (the tick at 56 brings the
 * members to 56), whichever thread runs them. */
static const fail_case fail_cases[] = {
    {"member 2 fails, 1 thread", 1, {0, 0, 1, 0, 0}, "a=7002 failed"},
    {"member 2 fails, 3 threads", 3, {0, 0, 1, 0, 0}, "a=7002 failed"},
    {"members 1 and 3 fail: 1 first, 1 thread", 1, {0, 1, 0, 1, 0},
     "a=7001 failed"},
    {"members 1 and 3 fail: 1 first, 2 threads", 2, {0, 1, 0, 1, 0},
     "a=7001 failed"},
    {"members 1 and 3 fail: 1 first, 4 threads", 4, {0, 1, 0, 1, 0},
     "a=7001 failed"},
    {"members 3 and 4 fail: 3 first, 2 threads", 2, {0, 0, 0, 1, 1},
     "a=7003 failed"},
};

static void test_fail_case(void **state) {
  const fail_case *c = *state;
  static world w;
  world_init(&w, c->threads, NMEMBERS);
  for (size_t i = 0; i < NMEMBERS; i++)
    if (c->fails[i]) {
      w.m[i].fail_a = 7000 + i;
      assert_int_equal(sim_engine_schedule(w.m[i].e, 50, w.m[i].kind,
                                           7000 + i, 1, NULL),
                       SIM_OK);
    }
  assert_int_equal(sim_engine_run(w.lead, UNTIL), SIM_EIO);
  assert_non_null(strstr(sim_engine_errmsg(w.lead), c->want_msg));
  /* The leader stopped before its tick at 56. */
  assert_int_equal(sim_engine_now(w.lead), 49);
  assert_int_equal(w.n, 8);
  world_fini(&w);
}

static int fail_odd(void *ctx, size_t i) {
  (void)ctx;
  return i % 2 == 1 ? (i == 1 ? SIM_EIO : SIM_ERANGE) : SIM_OK;
}

static void test_each_first_failure(void **state) {
  (void)state;
  static world w;
  for (unsigned threads = 1; threads <= 4; threads++) {
    world_init(&w, threads, NMEMBERS);
    assert_int_equal(sim_crew_each(w.crew, fail_odd, NULL), SIM_EIO);
    world_fini(&w);
  }
}

/* sim_crew_for's items: each notes its thread and count, and fails
 * where told (items 3 and 5: 3's code first, whatever ran first). */
typedef struct for_items {
  pthread_t on[7];
  unsigned runs[7];
} for_items;

static int for_note(void *ctx, size_t i) {
  for_items *f = ctx;
  f->on[i] = pthread_self();
  f->runs[i]++;
  return i == 3 ? SIM_EIO : i == 5 ? SIM_ERANGE : SIM_OK;
}

/* Seven items on 1-4 threads: each runs once a call; item i always on
 * the thread of items i mod T (the caller's for i mod T = 0 when no
 * worker is late); the first failure in item order; before the lead,
 * and for one item, all on the caller's thread. */
static void test_for_items(void **state) {
  (void)state;
  static world w;
  pthread_t self = pthread_self();
  for (unsigned threads = 1; threads <= 4; threads++) {
    world_init(&w, threads, NMEMBERS);
    unsigned t = sim_crew_threads(w.crew);
    for_items f = {0};
    for (unsigned call = 1; call <= 50; call++) {
      assert_int_equal(sim_crew_for(w.crew, 7, for_note, &f), SIM_EIO);
      for (size_t i = 0; i < 7; i++) {
        assert_int_equal(f.runs[i], call);
        assert_true(pthread_equal(f.on[i], f.on[i % t]));
      }
      assert_true(pthread_equal(f.on[0], self));
    }
    assert_int_equal(sim_crew_for(w.crew, 1, for_note, &f), SIM_OK);
    assert_true(pthread_equal(f.on[0], self));
    assert_int_equal(sim_crew_for(w.crew, 0, for_note, &f), SIM_OK);
    world_fini(&w);
  }
  sim_crew *c = sim_crew_create(NULL, 2);
  for_items f = {0};
  assert_int_equal(sim_crew_for(c, 7, for_note, &f), SIM_EIO);
  for (size_t i = 0; i < 7; i++)
    assert_true(f.runs[i] == 1 && pthread_equal(f.on[i], self));
  sim_crew_destroy(c);
}

static void test_refusals(void **state) {
  (void)state;
  assert_null(sim_crew_create(NULL, 0));
  sim_crew *c = sim_crew_create(NULL, 3);
  assert_non_null(c);
  assert_int_equal(sim_crew_threads(c), 3);
  sim_engine *lead = sim_engine_create(NULL), *m = sim_engine_create(NULL);
  assert_int_equal(sim_crew_add(c, NULL, 1), SIM_EINVAL);
  assert_int_equal(sim_crew_add(c, m, 0), SIM_EINVAL);
  assert_int_equal(sim_crew_add(c, m, -1), SIM_EINVAL);
  assert_int_equal(sim_crew_add(c, m, INFINITY), SIM_EINVAL);
  assert_int_equal(sim_crew_add(c, m, 2), SIM_OK);
  /* Before the lead, each runs them all on the caller's thread. */
  static world w; /* each_note's world: only m[0] is used */
  memset(&w, 0, sizeof w);
  w.m[0].e = m;
  assert_int_equal(sim_crew_each(c, each_note, &w), SIM_OK);
  assert_int_equal(w.m[0].eaches, 1);
  assert_int_equal(sim_crew_lead(c, lead), SIM_OK);
  assert_int_equal(sim_crew_threads(c), 1);
  assert_int_equal(sim_crew_lead(c, lead), SIM_ESTATE);
  assert_int_equal(sim_crew_add(c, m, 1), SIM_ESTATE);
  sim_crew_destroy(c);
  sim_crew_destroy(NULL);
  sim_engine_destroy(lead);
  sim_engine_destroy(m);
}

/* A crew with no member leads and follows at no cost. */
static void test_no_members(void **state) {
  (void)state;
  sim_crew *c = sim_crew_create(NULL, 2);
  sim_engine *lead = sim_engine_create(NULL);
  assert_int_equal(sim_crew_lead(c, lead), SIM_OK);
  assert_int_equal(sim_crew_threads(c), 1);
  assert_int_equal(sim_engine_run(lead, 100), SIM_OK);
  assert_int_equal(sim_engine_events_run(lead), 0);
  sim_crew_destroy(c);
  sim_engine_destroy(lead);
}

int main(void) {
  struct CMUnitTest tests[40];
  size_t n = 0;
  TEST_ROWS(tests, n, test_same_case, same_cases);
  TEST_ADD(tests, n, test_partition_and_threads);
  TEST_ROWS(tests, n, test_count_case, count_cases);
  TEST_ROWS(tests, n, test_fail_case, fail_cases);
  TEST_ADD(tests, n, test_each_first_failure);
  TEST_ADD(tests, n, test_for_items);
  TEST_ADD(tests, n, test_refusals);
  TEST_ADD(tests, n, test_no_members);
  return _cmocka_run_group_tests("crew", tests, n, NULL, NULL);
}
