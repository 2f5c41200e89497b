/* test_engine_inline.c - sim_engine_reserve, sim_engine_schedule_reserved
 * and sim_engine_run_inline: a chain of events (an arrival process: each
 * event draws the next) run inline whenever the next is the engine's next
 * event must give the events, their order (ties included), the count and
 * the runs' ends of the same chain scheduled one event at a time. The
 * contract's cases one by one, then random chains among other events that
 * are scheduled, cancelled, moved and stop the run, in chunks of random
 * budget and until, both ways against each other. */
#include <string.h>

#include <gsl/gsl_rng.h>

#include "engine.h"
#include "test_util.h"

enum { MAXCHAIN = 64, MAXLOG = 512, NHANDLES = 8 };

typedef struct logged {
  sim_time time;
  uint64_t tag; /* CHAIN_TAG + its index, or the other event's payload */
} logged;

#define CHAIN_TAG ((uint64_t)1 << 32)

/* The chain (kind chain) and the other events (kind other, movable). */
typedef struct model {
  sim_engine *e;
  uint32_t chain, other;
  bool inl;              /* run the chain inline, else schedule it */
  sim_time at[MAXCHAIN]; /* the chain's times (clamped to now) */
  size_t n, next;
  sim_time next_at; /* the drawn next; -1: none */
  sim_turn turn;
  logged log[MAXLOG];
  size_t nlog;
  gsl_rng *r; /* the side effects' draws; NULL: none */
  sim_handle h[NHANDLES];
  uint64_t ids;
  bool stop_inside; /* stop the run from the chain's next event */
  bool tie_inside;  /* the chain's events schedule an other at now */
  uint64_t inlined; /* events run inline */
} model;

static void note(model *m, uint64_t tag) {
  assert_true(m->nlog < MAXLOG);
  m->log[m->nlog++] = (logged){sim_engine_now(m->e), tag};
}

/* Draws the chain's next event: schedules it (reference) or reserves it. */
static void draw(model *m) {
  m->next_at = -1;
  if (m->next == m->n)
    return;
  sim_time now = sim_engine_now(m->e), t = m->at[m->next++];
  m->next_at = t < now ? now : t;
  if (m->inl)
    m->turn = sim_engine_reserve(m->e);
  else
    assert_int_equal(
        sim_engine_schedule(m->e, m->next_at, m->chain, 0, 0, NULL), SIM_OK);
}

/* One random side effect: schedule, cancel or move an other event. */
static void side_effect(model *m) {
  sim_engine *e = m->e;
  sim_handle *h = &m->h[gsl_rng_uniform_int(m->r, NHANDLES)];
  sim_time t = sim_engine_now(e) + 10 * (sim_time)gsl_rng_uniform_int(m->r, 4);
  switch (gsl_rng_uniform_int(m->r, 3)) {
  case 0:
    assert_int_equal(sim_engine_schedule(e, t, m->other, m->ids++, 0, h),
                     SIM_OK);
    break;
  case 1:
    sim_engine_cancel(e, h);
    break;
  default:
    if (sim_engine_pending(e, *h))
      assert_int_equal(sim_engine_move(e, *h, t), SIM_OK);
  }
}

static void chain_body(model *m) {
  note(m, CHAIN_TAG + m->next - 1); /* the event drawn last */
  draw(m);
  if (m->tie_inside) /* after the reserved turn */
    assert_int_equal(sim_engine_schedule(m->e, sim_engine_now(m->e), m->other,
                                         m->ids++, 0, NULL),
                     SIM_OK);
  unsigned k = m->r != NULL ? (unsigned)gsl_rng_uniform_int(m->r, 4) : 0;
  for (unsigned i = 0; i < k; i++)
    side_effect(m);
}

static int on_chain(sim_engine *e, void *ctx, const sim_event *ev) {
  (void)ev;
  model *m = ctx;
  if (m->stop_inside)
    sim_engine_stop(e);
  m->stop_inside = false;
  chain_body(m);
  while (m->inl && m->next_at >= 0 &&
         sim_engine_run_inline(e, m->next_at, m->turn)) {
    m->inlined++;
    chain_body(m);
  }
  if (m->inl && m->next_at >= 0)
    return sim_engine_schedule_reserved(e, m->next_at, m->turn, m->chain, 0, 0,
                                        NULL);
  return SIM_OK;
}

static int on_other(sim_engine *e, void *ctx, const sim_event *ev) {
  model *m = ctx;
  note(m, ev->a);
  if (m->r != NULL && gsl_rng_uniform_int(m->r, 40) == 0)
    sim_engine_stop(e); /* the same stops both ways */
  return SIM_OK;
}

/* A model on a new engine with the chain at[0..n), its first scheduled. */
static void model_init(model *m, bool inl, const sim_time *at, size_t n,
                       unsigned long seed) {
  *m = (model){.inl = inl, .n = n};
  memcpy(m->at, at, n * sizeof *at);
  m->e = sim_engine_create(NULL);
  assert_non_null(m->e);
  assert_int_equal(sim_engine_register(m->e, "chain", on_chain, m, &m->chain),
                   SIM_OK);
  assert_int_equal(sim_engine_register(m->e, "other", on_other, m, &m->other),
                   SIM_OK);
  assert_int_equal(sim_engine_movable(m->e, m->other), SIM_OK);
  if (seed != 0) {
    m->r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(m->r, seed);
  }
  draw(m);
  if (inl && m->next_at >= 0)
    assert_int_equal(sim_engine_schedule_reserved(m->e, m->next_at, m->turn,
                                                  m->chain, 0, 0, NULL),
                     SIM_OK);
}

static void model_fini(model *m) {
  if (m->r != NULL)
    gsl_rng_free(m->r);
  sim_engine_destroy(m->e);
}

/* Both ways end a run alike. */
typedef struct run_end {
  int rc;
  bool done;
  sim_time now;
  uint64_t run;
  size_t pending, nlog;
} run_end;

static run_end run_chunk(model *m, sim_time until, uint64_t budget) {
  run_end r = {0};
  r.rc = sim_engine_run_some(m->e, until, budget, &r.done);
  r.now = sim_engine_now(m->e);
  r.run = sim_engine_events_run(m->e);
  r.pending = sim_engine_events_pending(m->e);
  r.nlog = m->nlog;
  return r;
}

static void assert_same_end(run_end a, run_end b) {
  assert_int_equal(a.rc, b.rc);
  assert_int_equal(a.done, b.done);
  assert_int_equal(a.now, b.now);
  assert_int_equal(a.run, b.run);
  assert_int_equal(a.pending, b.pending);
  assert_int_equal(a.nlog, b.nlog);
}

static void assert_same_log(const model *a, const model *b) {
  assert_int_equal(a->nlog, b->nlog);
  for (size_t i = 0; i < a->nlog; i++)
    if (a->log[i].time != b->log[i].time || a->log[i].tag != b->log[i].tag)
      fail_msg("log[%zu]: (%lld, %llx) inline, (%lld, %llx) scheduled", i,
               (long long)a->log[i].time, (unsigned long long)a->log[i].tag,
               (long long)b->log[i].time, (unsigned long long)b->log[i].tag);
}

/* ---- The contract, case by case -------------------------------------- */

typedef struct inline_case {
  const char *name;
  sim_time chain[4]; /* the chain's times */
  size_t n;
  sim_time other[2]; /* other events (payload i) scheduled first; -1 none */
  int cancel, move;  /* other[i] cancelled, moved to move_to; -1 none */
  sim_time move_to, until;
  uint64_t budget;
  bool stop, tie;   /* model's stop_inside, tie_inside */
  uint64_t want[6]; /* tags in the order run */
  size_t nwant;
  uint64_t want_inline; /* events the chain ran inline */
} inline_case;

#define C(i) (CHAIN_TAG + (i))

static const inline_case cases[] = {
    {"a chain alone runs inline",
     {10, 20, 30},
     3,
     {-1, -1},
     -1,
     -1,
     0,
     100,
     100,
     false,
     false,
     {C(0), C(1), C(2)},
     3,
     2},
    {"an event before the next: scheduled",
     {10, 30},
     2,
     {20, -1},
     -1,
     -1,
     0,
     100,
     100,
     false,
     false,
     {C(0), 0, C(1)},
     3,
     0},
    {"a tie queued before the turn runs first",
     {20, 20},
     2,
     {20, -1},
     -1,
     -1,
     0,
     100,
     100,
     false,
     false,
     {C(0), 0, C(1)},
     3,
     0},
    {"a tie queued after the turn runs after",
     {20, 20},
     2,
     {-1, -1},
     -1,
     -1,
     0,
     100,
     100,
     false,
     true,
     {C(0), C(1), 2, 3},
     4,
     1},
    {"a cancelled event (tombstone) is passed",
     {10, 30},
     2,
     {20, -1},
     0,
     -1,
     0,
     100,
     100,
     false,
     false,
     {C(0), C(1)},
     2,
     1},
    {"an event moved past the next is requeued",
     {10, 30},
     2,
     {20, -1},
     -1,
     0,
     40,
     100,
     100,
     false,
     false,
     {C(0), C(1), 0},
     3,
     1},
    {"moved, but still before the next",
     {10, 40},
     2,
     {20, -1},
     -1,
     0,
     30,
     100,
     100,
     false,
     false,
     {C(0), 0, C(1)},
     3,
     0},
    {"past until: scheduled, runs in the next run",
     {10, 30},
     2,
     {-1, -1},
     -1,
     -1,
     0,
     20,
     100,
     false,
     false,
     {C(0), C(1)},
     2,
     0},
    {"the budget ends the run",
     {10, 20, 30},
     3,
     {-1, -1},
     -1,
     -1,
     0,
     100,
     2,
     false,
     false,
     {C(0), C(1), C(2)},
     3,
     1},
    {"a stop: scheduled",
     {10, 20},
     2,
     {-1, -1},
     -1,
     -1,
     0,
     100,
     100,
     true,
     false,
     {C(0), C(1)},
     2,
     0},
};

static void setup_case(model *m, const inline_case *c, bool inl) {
  model_init(m, inl, c->chain, c->n, 0);
  m->stop_inside = c->stop;
  m->tie_inside = c->tie;
  sim_handle h[2] = {{0, 0}, {0, 0}};
  for (uint64_t i = 0; i < 2; i++)
    if (c->other[i] >= 0)
      assert_int_equal(
          sim_engine_schedule(m->e, c->other[i], m->other, i, 0, &h[i]),
          SIM_OK);
  m->ids = 2;
  if (c->cancel >= 0)
    assert_true(sim_engine_cancel(m->e, &h[c->cancel]));
  if (c->move >= 0)
    assert_int_equal(sim_engine_move(m->e, h[c->move], c->move_to), SIM_OK);
}

/* Each case both ways: the same runs, and the events engine.h promises. */
static void test_inline_case(void **state) {
  const inline_case *c = *state;
  model m, ref;
  setup_case(&m, c, true);
  setup_case(&ref, c, false);
  run_end a = run_chunk(&m, c->until, c->budget);
  assert_same_end(a, run_chunk(&ref, c->until, c->budget));
  assert_int_equal(a.rc, c->stop ? SIM_ECANCELED : SIM_OK);
  assert_int_equal(m.inlined, c->want_inline);
  assert_same_end(run_chunk(&m, 1000, 100), run_chunk(&ref, 1000, 100));
  assert_same_log(&m, &ref);
  assert_int_equal(m.nlog, c->nwant);
  for (size_t i = 0; i < c->nwant; i++)
    assert_int_equal(m.log[i].tag, c->want[i]);
  assert_int_equal(sim_engine_events_pending(m.e), 0);
  model_fini(&m);
  model_fini(&ref);
}

/* Outside a run nothing runs inline; an unreserved turn is refused. */
static void test_inline_outside_run(void **state) {
  (void)state;
  model m;
  const sim_time at[] = {10};
  model_init(&m, true, at, 1, 0);
  sim_turn t = sim_engine_reserve(m.e);
  assert_false(sim_engine_run_inline(m.e, 5, t));
  assert_int_equal(sim_engine_events_run(m.e), 0);
  sim_turn later = {t.seq + 1};
  assert_int_equal(
      sim_engine_schedule_reserved(m.e, 5, later, m.chain, 0, 0, NULL),
      SIM_EINVAL);
  assert_int_equal(sim_engine_schedule_reserved(m.e, 5, t, 99, 0, 0, NULL),
                   SIM_EINVAL);
  model_fini(&m);
}

/* ---- Random chains among other events, both ways ---------------------- */

/* A chain of n times, multiples of 10 up to 400, some repeated (ties). */
static size_t random_chain(gsl_rng *r, sim_time *at) {
  size_t n = 1 + gsl_rng_uniform_int(r, MAXCHAIN);
  sim_time t = 0;
  for (size_t i = 0; i < n; i++) {
    t += 10 * (sim_time)gsl_rng_uniform_int(r, 3);
    at[i] = t;
  }
  return n;
}

/* Returns the events run inline and, in *n, the chain's length. */
static uint64_t random_trial(unsigned long seed, size_t *nchain) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  gsl_rng_set(r, seed);
  sim_time at[MAXCHAIN];
  size_t n = random_chain(r, at);
  *nchain = n;
  model m, ref;
  model_init(&m, true, at, n, seed + 1);
  model_init(&ref, false, at, n, seed + 1);
  sim_time until = 0;
  for (int k = 0; k < 40; k++) {
    until += 10 * (sim_time)gsl_rng_uniform_int(r, 5);
    uint64_t budget = 1 + gsl_rng_uniform_int(r, 6);
    assert_same_end(run_chunk(&m, until, budget),
                    run_chunk(&ref, until, budget));
  }
  assert_same_end(run_chunk(&m, 2000, UINT64_MAX),
                  run_chunk(&ref, 2000, UINT64_MAX));
  assert_same_log(&m, &ref);
  uint64_t inlined = m.inlined;
  model_fini(&m);
  model_fini(&ref);
  gsl_rng_free(r);
  return inlined;
}

static void test_inline_random(void **state) {
  (void)state;
  uint64_t inlined = 0, chained = 0;
  for (unsigned long seed = 1; seed <= 300; seed++) {
    size_t n;
    inlined += random_trial(seed, &n);
    chained += n;
  }
  /* Both answers were given often. */
  assert_true(inlined > chained / 10 && inlined < chained * 9 / 10);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, test_inline_case, cases);
  TEST_ADD(tests, n, test_inline_outside_run);
  TEST_ADD(tests, n, test_inline_random);
  return _cmocka_run_group_tests("engine_inline", tests, n, NULL, NULL);
}
