/* test_queue.c - unit tests of the pending-event set (sim/core/queue.c).
 * Pop order is checked against references computed without a heap: a
 * sorted copy, or a linear scan for the smallest entry. */
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "err.h"
#include "queue.h"
#include "queue_fixture.h"
#include "test_util.h"

/* ---- Helpers --------------------------------------------------------- */

/* Pushes n entries, sorts a copy, and checks the pop order. */
static void check_order(const evq_entry *in, size_t n) {
  test_alloc t;
  test_alloc_init(&t, 0);
  evq *q = evq_create(&t.hook);
  assert_non_null(q);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(evq_push(q, in[i]), SIM_OK);
  assert_int_equal(evq_size(q), n);
  evq_entry *want = malloc((n + 1) * sizeof *want);
  assert_non_null(want);
  memcpy(want, in, n * sizeof *want);
  qsort(want, n, sizeof *want, queue_entry_cmp);
  queue_assert_pops(q, want, n);
  free(want);
  evq_destroy(q);
  assert_int_equal(t.live, 0);
}

/* ---- Basics ---------------------------------------------------------- */

static void test_empty(void **state) {
  (void)state;
  evq_destroy(NULL);
  evq *q = evq_create(NULL);
  assert_non_null(q);
  evq_entry e = {1, 2, 3};
  assert_false(evq_peek(q, &e));
  assert_false(evq_pop(q, &e));
  assert_int_equal(evq_size(q), 0);
  assert_int_equal(e.time, 1); /* untouched */
  evq_destroy(q);
}

static void test_peek(void **state) {
  (void)state;
  evq *q = evq_create(NULL);
  assert_non_null(q);
  assert_int_equal(evq_push(q, (evq_entry){50, 0, 7}), SIM_OK);
  assert_int_equal(evq_push(q, (evq_entry){20, 1, 8}), SIM_OK);
  evq_entry e;
  assert_true(evq_peek(q, &e));
  assert_int_equal(e.time, 20);
  assert_int_equal(e.slot, 8);
  assert_int_equal(evq_size(q), 2); /* peek removes nothing */
  evq_destroy(q);
}

/* Pushes at exactly the time just popped, as a handler scheduling "now"
 * does: they come after the entries already waiting at that time, in the
 * order pushed, and before every later time. */
static void test_push_at_last_pop(void **state) {
  (void)state;
  static const int64_t times[] = {INT64_MIN, -7, 0, 1000, INT64_MAX};
  for (size_t k = 0; k < sizeof times / sizeof times[0]; k++) {
    int64_t t = times[k];
    evq *q = evq_create(NULL);
    assert_non_null(q);
    uint64_t seq = 0;
    for (uint32_t i = 0; i < 3; i++) /* three waiting at t */
      assert_int_equal(evq_push(q, (evq_entry){t, seq++, i}), SIM_OK);
    if (t < INT64_MAX)
      assert_int_equal(evq_push(q, (evq_entry){t + 1, seq++, 99}), SIM_OK);
    evq_entry e;
    uint32_t want = 0;
    for (uint32_t pushed = 3; pushed < 40; pushed++) {
      assert_true(evq_pop(q, &e));
      assert_int_equal(e.time, t);
      assert_int_equal(e.slot, want++);
      assert_int_equal(evq_push(q, (evq_entry){t, seq++, pushed}), SIM_OK);
    }
    for (; want < 40; want++) {
      assert_true(evq_pop(q, &e));
      assert_int_equal(e.time, t);
      assert_int_equal(e.slot, want);
    }
    if (t < INT64_MAX) {
      assert_true(evq_pop(q, &e));
      assert_int_equal(e.slot, 99);
    }
    assert_false(evq_pop(q, &e));
    evq_destroy(q);
  }
}

/* ---- Ordering: table-driven ------------------------------------------ */

typedef struct order_case {
  const char *name;
  size_t n;
  /* Time of entry i (seq = i, slot = 1000 + i). */
  int64_t (*time_of)(size_t i, size_t n);
} order_case;

static int64_t t_ascending(size_t i, size_t n) {
  (void)n;
  return (int64_t)i;
}
static int64_t t_descending(size_t i, size_t n) { return (int64_t)(n - i); }
static int64_t t_equal(size_t i, size_t n) {
  (void)i, (void)n;
  return 42;
}
static int64_t t_few(size_t i, size_t n) {
  (void)n;
  return (int64_t)((i * 7919) % 5); /* many ties: FIFO within each time */
}
static int64_t t_negative(size_t i, size_t n) {
  (void)n;
  return (int64_t)((i * 2654435761u) % 1001) - 500;
}
static int64_t t_extreme(size_t i, size_t n) {
  (void)n;
  static const int64_t v[] = {INT64_MAX, INT64_MIN, 0, -1, 1, INT64_MAX - 1};
  return v[i % 6];
}
static int64_t t_hashed(size_t i, size_t n) {
  (void)n;
  uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ULL;
  x ^= x >> 29;
  return (int64_t)(x % 1000000007);
}
static int64_t t_sawtooth(size_t i, size_t n) {
  (void)n;
  return (int64_t)(i % 37) * 1000 - (int64_t)(i / 37);
}

static const order_case order_cases[] = {
    {"one", 1, t_ascending},
    {"five (partial children)", 5, t_descending},
    {"ascending", 1000, t_ascending},
    {"descending", 1000, t_descending},
    {"all equal (FIFO)", 1000, t_equal},
    {"few distinct times", 2000, t_few},
    {"negative times", 2000, t_negative},
    {"extreme times", 600, t_extreme},
    {"sawtooth", 5000, t_sawtooth},
    /* Past 2^14 entries the queue switches to its radix heap. */
    {"all equal, past the switch (FIFO)", 40000, t_equal},
    {"few distinct times, past the switch", 40000, t_few},
    /* Past 2^17 entries pop takes its prefetching path. */
    {"large, pseudo-random", 300000, t_hashed},
};

static void test_order(void **state) {
  const order_case *c = *state;
  evq_entry *in = malloc(c->n * sizeof *in);
  assert_non_null(in);
  for (size_t i = 0; i < c->n; i++)
    in[i] = (evq_entry){c->time_of(i, c->n), i, (uint32_t)(1000 + i)};
  check_order(in, c->n);
  free(in);
}

/* evq_push_at is evq_push of its parts: pushes through the two, taken
 * in turn, come out as one sorted run, in the heap and past the switch
 * to the radix heap (negative and extreme times included). */
static void test_push_at(void **state) {
  (void)state;
  static const size_t sizes[] = {100, 20000};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    size_t n = sizes[k];
    evq *q = evq_create(NULL);
    evq_entry *want = malloc(n * sizeof *want);
    assert_non_null(q);
    assert_non_null(want);
    for (size_t i = 0; i < n; i++) {
      evq_entry e = {i % 7 == 0 ? t_extreme(i / 7, n) : t_negative(i, n), i,
                     (uint32_t)(5 * i)};
      want[i] = e;
      assert_int_equal(i % 2 ? evq_push_at(q, e.time, e.seq, e.slot)
                             : evq_push(q, e),
                       SIM_OK);
    }
    qsort(want, n, sizeof *want, queue_entry_cmp);
    queue_assert_pops(q, want, n);
    free(want);
    evq_destroy(q);
  }
}

/* Every heap shape up to 70 entries (a binary heap's last parent with one
 * child or two, each level partly filled), each in three orders: every
 * entry must come out where a sort puts it. */
static void test_every_small_size(void **state) {
  (void)state;
  int64_t (*const time_of[])(size_t, size_t) = {t_ascending, t_descending,
                                                 t_hashed, t_few};
  evq_entry in[70];
  for (size_t f = 0; f < sizeof time_of / sizeof *time_of; f++)
    for (size_t n = 1; n <= 70; n++) {
      for (size_t i = 0; i < n; i++)
        in[i] = (evq_entry){time_of[f](i, n), i, (uint32_t)(1000 + i)};
      check_order(in, n);
    }
}

/* ---- Randomized against a linear-scan reference ---------------------- */

typedef struct random_case {
  const char *name;
  unsigned long seed;
  size_t ops;
  double push_prob; /* else pop */
  int64_t time_range;
  int64_t base; /* 0: times from 0; else as the engine: from the last pop,
                   which starts at base */
} random_case;

static const random_case random_cases[] = {
    {"mostly push, wide times", 1, 20000, 0.7, 1000000000, 0},
    {"balanced, narrow times (ties)", 2, 20000, 0.5, 10, 0},
    {"mostly pop", 3, 20000, 0.4, 1000, 0},
    {"hold-like", 4, 20000, 0.55, 100000, 0},
    /* As the engine pushes: never before the last pop, often at it. */
    {"monotone, ties at the last pop", 5, 20000, 0.5, 3, -5},
    {"monotone, wide", 6, 20000, 0.55, 1000000000, -1000},
    {"monotone from INT64_MIN", 7, 5000, 0.5, 4, INT64_MIN},
    {"monotone up to INT64_MAX", 8, 5000, 0.5, 4, INT64_MAX - 16000},
};

/* The index of the smallest entry of ref[0..n). */
static size_t ref_min(const evq_entry *ref, size_t n) {
  size_t m = 0;
  for (size_t i = 1; i < n; i++)
    if (queue_entry_cmp(&ref[i], &ref[m]) < 0)
      m = i;
  return m;
}

/* Pops one entry and checks it against the reference; *last is the time
 * of the last pop. */
static void random_pop(evq *q, evq_entry *ref, size_t *n, int64_t *last) {
  evq_entry got, peeked;
  if (*n == 0) {
    assert_false(evq_peek(q, &peeked));
    assert_false(evq_pop(q, &got));
    return;
  }
  size_t m = ref_min(ref, *n);
  assert_true(evq_peek(q, &peeked));
  assert_int_equal(peeked.seq, ref[m].seq);
  assert_true(evq_pop(q, &got));
  *last = got.time;
  assert_int_equal(got.seq, ref[m].seq);
  assert_int_equal(got.time, ref[m].time);
  assert_int_equal(got.slot, ref[m].slot);
  ref[m] = ref[--*n];
}

static void test_random(void **state) {
  const random_case *c = *state;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  assert_non_null(r);
  gsl_rng_set(r, c->seed);
  evq *q = evq_create(NULL);
  evq_entry *ref = malloc(c->ops * sizeof *ref);
  assert_non_null(q);
  assert_non_null(ref);
  size_t n = 0;
  uint64_t seq = 0;
  int64_t last = c->base;
  for (size_t k = 0; k < c->ops; k++) {
    if (gsl_rng_uniform(r) < c->push_prob) {
      int64_t t = (int64_t)gsl_rng_uniform_int(r, (unsigned long)c->time_range);
      if (c->base != 0)
        t += last; /* base + 3 * ops stays below INT64_MAX */
      /* any slot below EVQ_TRACKED, untracked */
      evq_entry e = {t, seq++, (uint32_t)gsl_rng_get(r) & ~EVQ_TRACKED};
      assert_int_equal(evq_push(q, e), SIM_OK);
      ref[n++] = e;
    } else {
      random_pop(q, ref, &n, &last);
    }
    assert_int_equal(evq_size(q), n);
  }
  while (n > 0)
    random_pop(q, ref, &n, &last);
  free(ref);
  evq_destroy(q);
  gsl_rng_free(r);
}

/* ---- What follows a pop ---------------------------------------------- */

/* A heap pop leaves the root vacant for the next operation to fill (a
 * push puts its entry there and walks down). Each case follows every pop
 * by one operation and checks all against the linear scan. */
typedef enum after_op {
  AFTER_PUSH_FIRST, /* a push due before everything held */
  AFTER_PUSH_LAST,  /* a push due after everything held */
  AFTER_PUSH_ANY,   /* a push anywhere, ties included */
  AFTER_POP,        /* a second pop, no peek between */
  AFTER_COMPACT,    /* a compaction keeping odd seqs */
  AFTER_FIRST,      /* evq_first, which fills the root */
} after_op;

typedef struct after_case {
  const char *name;
  after_op op;
} after_case;

static const after_case after_cases[] = {
    {"push first", AFTER_PUSH_FIRST},  {"push last", AFTER_PUSH_LAST},
    {"push anywhere", AFTER_PUSH_ANY}, {"pop", AFTER_POP},
    {"compact", AFTER_COMPACT},        {"first", AFTER_FIRST},
};

static bool keep_odd(void *ctx, const evq_entry *e) {
  (void)ctx;
  return e->seq % 2 == 1;
}

/* Drops the reference's entries keep_odd drops. */
static void ref_keep_odd(evq_entry *ref, size_t *n) {
  size_t k = 0;
  for (size_t i = 0; i < *n; i++)
    if (keep_odd(NULL, &ref[i]))
      ref[k++] = ref[i];
  *n = k;
}

static void after_step(evq *q, after_op op, gsl_rng *r, evq_entry *ref,
                       size_t *n, uint64_t *seq) {
  int64_t last = 0;
  random_pop(q, ref, n, &last);
  int64_t t = last + (int64_t)gsl_rng_uniform_int(r, 50);
  t = op == AFTER_PUSH_FIRST ? last : op == AFTER_PUSH_LAST ? last + 1000 : t;
  if (op == AFTER_POP) {
    random_pop(q, ref, n, &last);
  } else if (op == AFTER_FIRST) {
    evq_entry got;
    assert_true(evq_first(q, &got) == (*n > 0));
    assert_true(*n == 0 || got.seq == ref[ref_min(ref, *n)].seq);
  } else if (op == AFTER_COMPACT) {
    evq_compact(q, keep_odd, NULL);
    ref_keep_odd(ref, n);
  } else {
    evq_entry e = {t, (*seq)++, (uint32_t)*n};
    assert_int_equal(evq_push(q, e), SIM_OK);
    ref[(*n)++] = e;
  }
  assert_int_equal(evq_size(q), *n);
}

static void test_after_a_pop(void **state) {
  const after_case *c = *state;
  static const size_t sizes[] = {1, 2, 8, 9, 10, 73, 600};
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  assert_non_null(r);
  gsl_rng_set(r, 41);
  evq_entry ref[1200];
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    evq *q = evq_create(NULL);
    assert_non_null(q);
    size_t n = 0;
    uint64_t seq = 0;
    for (; n < sizes[k]; n++) {
      ref[n] = (evq_entry){(int64_t)gsl_rng_uniform_int(r, 100), seq++, 7};
      assert_int_equal(evq_push(q, ref[n]), SIM_OK);
    }
    for (size_t j = 0; j < 400 && n > 0; j++)
      after_step(q, c->op, r, ref, &n, &seq);
    while (n > 0 || evq_size(q) > 0) {
      int64_t last;
      random_pop(q, ref, &n, &last);
    }
    evq_destroy(q);
  }
  gsl_rng_free(r);
}

/* ---- Compaction ------------------------------------------------------ */

typedef struct compact_case {
  const char *name;
  size_t n;
  unsigned keep_mod; /* keep entries whose seq % keep_mod == 0 */
} compact_case;

static const compact_case compact_cases[] = {
    {"keep all", 1000, 1},                /* nothing moves */
    {"keep none", 1000, 0},               /* empty afterwards */
    {"keep half", 1001, 2},               /* odd size */
    {"keep a tenth of 100k", 100000, 10}, /* as the engine's 90% cancels */
    {"keep one of three", 3, 3},          /* one partial node */
    {"empty", 0, 1},
};

static bool keep_slot(void *ctx, const evq_entry *e) {
  (void)ctx;
  return e->slot != 0;
}

static bool keep_mod(void *ctx, const evq_entry *e) {
  const compact_case *c = ctx;
  return c->keep_mod != 0 && e->seq % c->keep_mod == 0;
}

static void test_compact(void **state) {
  const compact_case *c = *state;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  assert_non_null(r);
  gsl_rng_set(r, 17);
  evq *q = evq_create(NULL);
  evq_entry *want = malloc((c->n + 1) * sizeof *want);
  assert_non_null(q);
  assert_non_null(want);
  size_t nw = 0;
  for (size_t i = 0; i < c->n; i++) {
    evq_entry e = {(int64_t)gsl_rng_uniform_int(r, 1000), i, (uint32_t)i};
    assert_int_equal(evq_push(q, e), SIM_OK);
    if (keep_mod((void *)c, &e))
      want[nw++] = e;
  }
  evq_compact(q, keep_mod, (void *)c);
  assert_int_equal(evq_size(q), nw);
  qsort(want, nw, sizeof *want, queue_entry_cmp);
  queue_assert_pops(q, want, nw);
  free(want);
  evq_destroy(q);
  gsl_rng_free(r);
}

/* Every size up to 300 and a random half kept: heapify must reach every
 * parent, the last one included. */
static void test_compact_small(void **state) {
  (void)state;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  assert_non_null(r);
  gsl_rng_set(r, 23);
  evq_entry want[300];
  for (size_t n = 1; n <= 300; n++) {
    evq *q = evq_create(NULL);
    assert_non_null(q);
    size_t nw = 0;
    for (size_t i = 0; i < n; i++) {
      evq_entry e = {(int64_t)gsl_rng_uniform_int(r, 100), i, (uint32_t)i};
      e.slot = gsl_rng_uniform(r) < 0.5; /* 1: keep */
      assert_int_equal(evq_push(q, e), SIM_OK);
      if (e.slot)
        want[nw++] = e;
    }
    evq_compact(q, keep_slot, NULL);
    qsort(want, nw, sizeof *want, queue_entry_cmp);
    queue_assert_pops(q, want, nw);
    evq_destroy(q);
  }
  gsl_rng_free(r);
}

/* ---- Memory ---------------------------------------------------------- */

/* Growth by doubling: few allocations, and none once grown. */
static void test_no_alloc_when_grown(void **state) {
  (void)state;
  test_alloc t;
  test_alloc_init(&t, 0);
  evq *q = evq_create(&t.hook);
  assert_non_null(q);
  const size_t n = 100000;
  for (size_t i = 0; i < n; i++)
    assert_int_equal(evq_push(q, (evq_entry){(int64_t)(i * 7 % 1000), i, 0}),
                     SIM_OK);
  /* The queue, then two arrays per doubling: 64 << 11 > 100000. */
  assert_true(t.calls <= 1 + 2 * 12);
  long calls = t.calls;
  evq_entry e;
  for (size_t i = 0; i < 10 * n; i++) {
    assert_true(evq_pop(q, &e));
    e.time += 1 + (int64_t)(i % 1000);
    e.seq = n + i;
    assert_int_equal(evq_push(q, e), SIM_OK);
  }
  assert_int_equal(t.calls, calls);
  evq_destroy(q);
  assert_int_equal(t.live, 0);
}

static void test_create_enomem(void **state) {
  (void)state;
  test_alloc t;
  test_alloc_init(&t, 1);
  assert_null(evq_create(&t.hook));
  assert_int_equal(t.live, 0);
}

/* A failed push (at every growth) leaves the queue as it was. */
static void test_push_enomem(void **state) {
  (void)state;
  for (long k = 2; k <= 8; k++) {
    test_alloc t;
    test_alloc_init(&t, k);
    evq *q = evq_create(&t.hook);
    assert_non_null(q);
    size_t n = 0;
    int rc;
    while ((rc = evq_push(q, (evq_entry){(int64_t)(n % 13), n, 0})) == SIM_OK)
      n++;
    assert_int_equal(rc, SIM_ENOMEM);
    assert_int_equal(evq_size(q), n);
    /* The next allocation succeeds, so the queue goes on. */
    assert_int_equal(evq_push(q, (evq_entry){-1, n, 0}), SIM_OK);
    evq_entry e;
    assert_true(evq_pop(q, &e));
    assert_int_equal(e.time, -1);
    int64_t last = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
      assert_true(evq_pop(q, &e));
      assert_true(e.time >= last);
      last = e.time;
    }
    evq_destroy(q);
    assert_int_equal(t.live, 0);
  }
}

/* ---- Registration ---------------------------------------------------- */

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ADD(tests, n, test_empty);
  TEST_ADD(tests, n, test_peek);
  TEST_ADD(tests, n, test_push_at);
  TEST_ADD(tests, n, test_push_at_last_pop);
  TEST_ROWS(tests, n, test_order, order_cases);
  TEST_ADD(tests, n, test_every_small_size);
  TEST_ROWS(tests, n, test_random, random_cases);
  TEST_ROWS(tests, n, test_after_a_pop, after_cases);
  TEST_ROWS(tests, n, test_compact, compact_cases);
  TEST_ADD(tests, n, test_compact_small);
  TEST_ADD(tests, n, test_no_alloc_when_grown);
  TEST_ADD(tests, n, test_create_enomem);
  TEST_ADD(tests, n, test_push_enomem);
  return _cmocka_run_group_tests("queue", tests, n, NULL, NULL);
}
