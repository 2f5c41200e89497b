/* test_engine_follow.c - followers (sim_engine_follow) and
 * sim_engine_run_before. A leader and one follower log into one trace:
 * a follower's event before a leader's event runs before it, one at the
 * same time or later after it, and one at a run's until before the run
 * returns; the leader's events see the follower at their own time. A
 * random program (the leader's events scheduling its own and the
 * follower's, the follower's chain scheduling itself) logs the same
 * trace and counts however its run is cut (budgets of max_events, steps
 * of until) and with the leader's events from the queue or from a
 * source. A follower's failure stops the leader with its code and
 * message, the leader's entry left unrun. */
#include <gsl/gsl_rng.h>
#include <string.h>

#include "engine.h"
#include "test_util.h"

enum { MAXREC = 8192 };

/* One logged event: whose (L leader, M member), when, its payload, and
 * the other engine's clock as the handler saw it. */
typedef struct rec {
  char who;
  sim_time t;
  uint64_t a;
  sim_time other_now;
} rec;

typedef struct world {
  sim_engine *lead, *mem;
  uint32_t lk, mk; /* the leader's and the member's kinds */
  uint32_t lsrc;   /* the leader's source, when used */
  gsl_rng *lr, *mr; /* each engine's own generator (the program) */
  bool program;     /* handlers schedule more (the random program) */
  uint64_t fail_a;  /* the member fails at the event with this a; 0 never */
  bool silent;      /* the hook fails without a message */
  rec log[MAXREC];
  size_t n;
  size_t calls;     /* hook calls */
  sim_time call_t[64];
  bool call_through[64];
  uint64_t next_id;
} world;

static void log_rec(world *w, char who, const sim_event *ev, sim_time other) {
  assert_true(w->n < MAXREC);
  w->log[w->n++] = (rec){who, ev->time, ev->a, other};
}

/* The random program's leader: schedules its own and now and then the
 * member's events (as a control tick re-prices a service). */
static void leader_program(world *w, sim_engine *e) {
  sim_time now = sim_engine_now(e);
  if (w->next_id > 600)
    return;
  double u = gsl_rng_uniform(w->lr);
  sim_time d = (sim_time)gsl_rng_uniform_int(w->lr, 12);
  if (u < 0.7)
    assert_int_equal(sim_engine_schedule(e, now + d, w->lk, w->next_id++, 0,
                                         NULL),
                     SIM_OK);
  if (u > 0.5)
    assert_int_equal(sim_engine_schedule(w->mem, now + d / 3, w->mk,
                                         w->next_id++, 0, NULL),
                     SIM_OK);
}

static int on_leader(sim_engine *e, void *ctx, const sim_event *ev) {
  world *w = ctx;
  log_rec(w, 'L', ev, sim_engine_now(w->mem));
  if (w->program)
    leader_program(w, e);
  return SIM_OK;
}

static int on_member(sim_engine *e, void *ctx, const sim_event *ev) {
  world *w = ctx;
  log_rec(w, 'M', ev, -1);
  if (w->fail_a != 0 && ev->a == w->fail_a)
    return sim_engine_fail(e, SIM_EIO, "member: boom at %lld",
                           (long long)ev->time);
  if (w->program && w->next_id < 600) {
    /* Its own chain: ties (0) and gaps, from its own generator. */
    sim_time d = (sim_time)gsl_rng_uniform_int(w->mr, 7);
    assert_int_equal(sim_engine_schedule(e, ev->time + d, w->mk,
                                         1000000 + w->next_id++, 0, NULL),
                     SIM_OK);
  }
  return SIM_OK;
}

/* The leader's hook: the member brought to t, as a crew does. */
static int follow_one(void *ctx, sim_time t, bool through, uint64_t *ran) {
  world *w = ctx;
  if (w->calls < 64) {
    w->call_t[w->calls] = t;
    w->call_through[w->calls] = through;
  }
  w->calls++;
  uint64_t before = sim_engine_events_run(w->mem);
  int rc = through ? sim_engine_run(w->mem, t)
                   : sim_engine_run_before(w->mem, t);
  *ran += sim_engine_events_run(w->mem) - before;
  if (rc != SIM_OK && !w->silent)
    return sim_engine_fail(w->lead, rc, "%s", sim_engine_errmsg(w->mem));
  return rc;
}

static void world_init(world *w, bool source) {
  memset(w, 0, sizeof *w);
  w->lead = sim_engine_create(NULL);
  w->mem = sim_engine_create(NULL);
  assert_non_null(w->lead);
  assert_non_null(w->mem);
  assert_int_equal(sim_engine_register(w->lead, "leader", on_leader, w, &w->lk),
                   SIM_OK);
  assert_int_equal(sim_engine_register(w->mem, "member", on_member, w, &w->mk),
                   SIM_OK);
  if (source)
    assert_int_equal(sim_engine_source(w->lead, w->lk, &w->lsrc), SIM_OK);
  sim_engine_follow(w->lead, follow_one, w);
}

static void world_fini(world *w) {
  sim_engine_destroy(w->lead);
  sim_engine_destroy(w->mem);
  if (w->lr != NULL)
    gsl_rng_free(w->lr);
  if (w->mr != NULL)
    gsl_rng_free(w->mr);
}

/* A leader's event at at: from its source, or scheduled. */
static void leader_at(world *w, bool source, sim_time at, uint64_t a) {
  if (source)
    assert_int_equal(sim_engine_source_at(w->lead, w->lsrc, at, a, 0), SIM_OK);
  else
    assert_int_equal(sim_engine_schedule(w->lead, at, w->lk, a, 0, NULL),
                     SIM_OK);
}

static void member_at(world *w, sim_time at, uint64_t a) {
  assert_int_equal(sim_engine_schedule(w->mem, at, w->mk, a, 0, NULL), SIM_OK);
}

/* The trace as a string of who's (e.g. "ML"). */
static void trace_whos(const world *w, char *out) {
  for (size_t i = 0; i < w->n; i++)
    out[i] = w->log[i].who;
  out[w->n] = '\0';
}

/* ---- One leader event, one member event ------------------------------ */

typedef struct order_case {
  const char *name;
  bool source;        /* the leader's event from a source */
  sim_time leader_t;  /* -1: none */
  sim_time member_t;
  sim_time until;
  const char *want;   /* the trace's who's */
  size_t want_calls;  /* hook calls */
  int leader_n;       /* leader events at leader_t (at least 1) */
} order_case;

static const order_case order_cases[] = {
    {"member 1 ns before", false, 100, 99, 1000, "ML", 2, 1},
    {"member at the same time", false, 100, 100, 1000, "LM", 2, 1},
    {"member 1 ns after", false, 100, 101, 1000, "LM", 2, 1},
    {"source, member 1 ns before", true, 100, 99, 1000, "ML", 2, 1},
    {"source, member at the same time", true, 100, 100, 1000, "LM", 2, 1},
    {"source, member 1 ns after", true, 100, 101, 1000, "LM", 2, 1},
    {"member at until runs", false, 100, 1000, 1000, "LM", 2, 1},
    {"member after until waits", false, 100, 1001, 1000, "L", 2, 1},
    {"no leader event, member through until", false, -1, 1000, 1000, "M", 1, 1},
    {"leader and member at 0", false, 0, 0, 10, "LM", 2, 1},
    {"leader at until, member 1 ns before", true, 50, 49, 50, "ML", 2, 1},
    {"two leader events at one time, one call", false, 100, 100, 1000, "LLM",
     2, 2},
    {"three at one time, member before", false, 100, 60, 1000, "MLLL", 2, 3},
};

static void test_order_case(void **state) {
  const order_case *c = *state;
  world w;
  world_init(&w, c->source);
  if (c->leader_t >= 0)
    for (int k = 0; k < c->leader_n; k++)
      leader_at(&w, c->source && k == 0, c->leader_t, 1 + (uint64_t)k);
  member_at(&w, c->member_t, 2);
  assert_int_equal(sim_engine_run(w.lead, c->until), SIM_OK);
  char got[16];
  trace_whos(&w, got);
  assert_string_equal(got, c->want);
  assert_int_equal(w.calls, c->want_calls);
  /* The last call brings the member through until, the others before. */
  assert_int_equal(w.call_t[w.calls - 1], c->until);
  assert_true(w.call_through[w.calls - 1]);
  if (c->want_calls == 2) {
    assert_int_equal(w.call_t[0], c->leader_t);
    assert_false(w.call_through[0]);
  }
  /* The leader's event saw the member's clock at its own time. */
  for (size_t i = 0; i < w.n; i++)
    if (w.log[i].who == 'L')
      assert_int_equal(w.log[i].other_now, w.log[i].t);
  assert_int_equal(sim_engine_now(w.mem), c->until);
  assert_int_equal(sim_engine_now(w.lead), c->until);
  /* The member's events count as the leader's. */
  assert_int_equal(sim_engine_events_run(w.lead), strlen(c->want));
  world_fini(&w);
}

/* ---- The random program, cut in different ways ----------------------- */

typedef struct cut_case {
  const char *name;
  bool source;         /* the leader's first event from a source */
  uint64_t max_events; /* 0: whole runs */
  sim_time step;       /* run to until in steps of this; 0: one until */
} cut_case;

static const cut_case cut_cases[] = {
    {"budget 1", false, 1, 0},     {"budget 2", false, 2, 0},
    {"budget 7", false, 7, 0},     {"steps of 1 ns", false, 0, 1},
    {"steps of 5 ns", false, 0, 5}, {"steps of 64 ns", false, 0, 64},
    {"source, budget 1", true, 1, 0}, {"source, budget 3", true, 3, 0},
    {"source, steps of 3 ns", true, 0, 3},
};

enum { PROG_UNTIL = 2000 };

/* The random program from seed: leader events from 0, a member chain. */
static void program_start(world *w, bool source, unsigned long seed) {
  w->program = true;
  w->lr = gsl_rng_alloc(gsl_rng_taus2);
  w->mr = gsl_rng_alloc(gsl_rng_taus2);
  gsl_rng_set(w->lr, seed);
  gsl_rng_set(w->mr, seed + 1);
  w->next_id = 1;
  leader_at(w, source, 0, w->next_id++);
  leader_at(w, false, 3, w->next_id++);
  member_at(w, 0, w->next_id++);
  member_at(w, 3, w->next_id++);
}

/* Runs to until as c says; returns the leader's last status. */
static void program_run(world *w, const cut_case *c, sim_time until) {
  if (c->max_events > 0) {
    bool done = false;
    for (int guard = 0; !done; guard++) {
      assert_true(guard < 100000);
      assert_int_equal(
          sim_engine_run_some(w->lead, until, c->max_events, &done), SIM_OK);
    }
  } else {
    for (sim_time t = 0; t < until; t += c->step)
      assert_int_equal(sim_engine_run(w->lead, t), SIM_OK);
    assert_int_equal(sim_engine_run(w->lead, until), SIM_OK);
  }
}

static void test_cut_case(void **state) {
  const cut_case *c = *state;
  for (unsigned long seed = 1; seed <= 3; seed++) {
    static world whole, cut;
    world_init(&whole, c->source);
    program_start(&whole, c->source, seed);
    assert_int_equal(sim_engine_run(whole.lead, PROG_UNTIL), SIM_OK);
    world_init(&cut, c->source);
    program_start(&cut, c->source, seed);
    program_run(&cut, c, PROG_UNTIL);
    assert_true(whole.n > 200);
    assert_int_equal(cut.n, whole.n);
    for (size_t i = 0; i < whole.n; i++)
      if (memcmp(&cut.log[i], &whole.log[i], sizeof whole.log[i]) != 0)
        fail_msg("seed %lu: event %zu differs: %c %lld %llu", seed, i,
                 cut.log[i].who, (long long)cut.log[i].t,
                 (unsigned long long)cut.log[i].a);
    assert_int_equal(sim_engine_events_run(cut.lead),
                     sim_engine_events_run(whole.lead));
    assert_int_equal(sim_engine_events_run(whole.lead), whole.n);
    world_fini(&whole);
    world_fini(&cut);
  }
}

/* ---- Counts and budgets ---------------------------------------------- */

/* A budget of 1 runs the member's events before the leader's first one
 * and that one: the count passes the budget, and the run is not done. */
static void test_budget_counts_members(void **state) {
  (void)state;
  world w;
  world_init(&w, false);
  member_at(&w, 1, 1);
  member_at(&w, 2, 2);
  member_at(&w, 3, 3);
  leader_at(&w, false, 10, 4);
  leader_at(&w, false, 20, 5);
  bool done;
  assert_int_equal(sim_engine_run_some(w.lead, 100, 1, &done), SIM_OK);
  assert_false(done);
  assert_int_equal(sim_engine_events_run(w.lead), 4);
  assert_int_equal(sim_engine_now(w.lead), 10);
  assert_int_equal(sim_engine_now(w.mem), 10);
  /* The next call runs the leader's last event and, none due left,
   * is done: the member brought through until. */
  assert_int_equal(sim_engine_run_some(w.lead, 100, 1, &done), SIM_OK);
  assert_true(done);
  assert_int_equal(sim_engine_events_run(w.lead), 5);
  assert_int_equal(w.calls, 3);
  assert_true(w.call_through[2]);
  assert_int_equal(sim_engine_now(w.mem), 100);
  world_fini(&w);
}

/* No hook (set, then taken away): the member is left alone. */
static void test_no_hook(void **state) {
  (void)state;
  world w;
  world_init(&w, false);
  sim_engine_follow(w.lead, NULL, NULL);
  member_at(&w, 1, 1);
  leader_at(&w, false, 10, 2);
  assert_int_equal(sim_engine_run(w.lead, 100), SIM_OK);
  assert_int_equal(w.calls, 0);
  assert_int_equal(w.n, 1);
  assert_int_equal(sim_engine_now(w.mem), 0);
  assert_int_equal(sim_engine_events_run(w.lead), 1);
  world_fini(&w);
}

/* ---- Failures -------------------------------------------------------- */

typedef struct fail_case {
  const char *name;
  bool source;
  bool silent;         /* the hook fails without a message */
  sim_time member_t;   /* the failing member event */
  const char *want_msg; /* a part of the leader's message */
  bool sources;         /* a source registered (its run loop), unused */
} fail_case;

static const fail_case fail_cases[] = {
    {"before a leader event", false, false, 50, "member: boom at 50", false},
    {"before a source's event", true, false, 50, "member: boom at 50", false},
    {"at until", false, false, 1000, "member: boom at 1000", false},
    {"a hook without a message", false, true, 50, "followers failed at 100", false},
    {"before a queued event, sources' loop", false, false, 50,
     "member: boom at 50", true},
};

static void test_fail_case(void **state) {
  const fail_case *c = *state;
  world w;
  world_init(&w, c->source || c->sources);
  w.silent = c->silent;
  w.fail_a = 9;
  leader_at(&w, c->source, 100, 1);
  member_at(&w, c->member_t, 9);
  sim_time want_now = c->member_t < 100 ? 0 : 100;
  assert_int_equal(sim_engine_run(w.lead, 1000), SIM_EIO);
  assert_non_null(strstr(sim_engine_errmsg(w.lead), c->want_msg));
  assert_int_equal(sim_engine_now(w.lead), want_now);
  /* The leader's event at 100 stays pending, unrun, when the member
   * failed before it. */
  size_t want_leader = c->member_t < 100 ? 0 : 1;
  size_t leaders = 0;
  for (size_t i = 0; i < w.n; i++)
    leaders += w.log[i].who == 'L';
  assert_int_equal(leaders, want_leader);
  assert_int_equal(sim_engine_events_pending(w.lead), 1 - want_leader);
  /* Run again, the member mended: the leader's event, put back, runs. */
  w.fail_a = 0;
  assert_int_equal(sim_engine_run(w.lead, 1000), SIM_OK);
  leaders = 0;
  for (size_t i = 0; i < w.n; i++)
    leaders += w.log[i].who == 'L';
  assert_int_equal(leaders, 1);
  world_fini(&w);
}

/* ---- run_before ------------------------------------------------------ */

typedef struct before_case {
  const char *name;
  sim_time now;      /* run to this first */
  sim_time t;
  int want_rc;
  size_t want_ran;   /* of the events at 5, 9, 10, 11 */
  sim_time want_now;
} before_case;

static const before_case before_cases[] = {
    {"the events before t", 0, 10, SIM_OK, 2, 10},
    {"t 1 ns after an event", 0, 11, SIM_OK, 3, 11},
    {"t at now: nothing", 4, 4, SIM_OK, 0, 4},
    {"t before now", 6, 5, SIM_EINVAL, 0, 6},
    {"t after them all", 0, 100, SIM_OK, 4, 100},
};

static void test_before_case(void **state) {
  const before_case *c = *state;
  world w;
  world_init(&w, false);
  member_at(&w, 5, 1);
  member_at(&w, 9, 2);
  member_at(&w, 10, 3);
  member_at(&w, 11, 4);
  assert_int_equal(sim_engine_run(w.mem, c->now), SIM_OK);
  uint64_t before = sim_engine_events_run(w.mem);
  assert_int_equal(sim_engine_run_before(w.mem, c->t), c->want_rc);
  assert_int_equal(sim_engine_events_run(w.mem) - before, c->want_ran);
  assert_int_equal(sim_engine_now(w.mem), c->want_now);
  world_fini(&w);
}

int main(void) {
  struct CMUnitTest tests[48];
  size_t n = 0;
  TEST_ROWS(tests, n, test_order_case, order_cases);
  TEST_ROWS(tests, n, test_cut_case, cut_cases);
  TEST_ADD(tests, n, test_budget_counts_members);
  TEST_ADD(tests, n, test_no_hook);
  TEST_ROWS(tests, n, test_fail_case, fail_cases);
  TEST_ROWS(tests, n, test_before_case, before_cases);
  return _cmocka_run_group_tests("engine_follow", tests, n, NULL, NULL);
}
