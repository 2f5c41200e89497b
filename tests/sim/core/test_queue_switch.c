/* test_queue_switch.c - the pending-event set (sim/core/queue.c) as it
 * switches between its binary heap and its radix heap: pops of
 * engine-like pushes never go down and give each entry once while the
 * size swings across both switching points, a compaction on either side,
 * and a failed allocation at the switch leaving the queue as it was. */
#include <stdlib.h>

#include <gsl/gsl_rng.h>

#include "err.h"
#include "queue.h"
#include "queue_fixture.h"
#include "test_util.h"

/* ---- Switching between the heap and the radix heap ------------------- */

/* sim/core/queue.c's switching points: a push from TO_RADIX entries on moves
 * them to the radix heap, a pop from TO_HEAP down back to the heap. */
enum { TO_RADIX = 1 << 14, TO_HEAP = 1 << 12 };

/* Checks pops of engine-like pushes: each push comes after the last pop in
 * (time, seq) order, so the pops must never go down, and each entry must
 * come out once. */
typedef struct mono {
  evq *q;
  gsl_rng *r;
  unsigned char *seen; /* by seq */
  uint64_t seq;        /* the next push's */
  int64_t t;           /* the time of the last pop */
  uint64_t last_seq;   /* the seq of the last pop; UINT64_MAX before */
  int64_t range;       /* pushes go up to range - 1 ns after t */
} mono;

static void mono_push(mono *m) {
  int64_t t =
      m->t + (int64_t)gsl_rng_uniform_int(m->r, (unsigned long)m->range);
  evq_entry e = {t, m->seq, (uint32_t)(m->seq * 7)};
  m->seq++;
  assert_int_equal(evq_push(m->q, e), SIM_OK);
}

static void mono_pop(mono *m) {
  evq_entry peeked, got;
  assert_true(evq_peek(m->q, &peeked));
  assert_true(evq_pop(m->q, &got));
  assert_int_equal(got.seq, peeked.seq);
  assert_int_equal(got.slot, (uint32_t)(got.seq * 7));
  if (m->last_seq != UINT64_MAX &&
      (got.time < m->t || (got.time == m->t && got.seq < m->last_seq)))
    fail_msg("pop (%lld, %llu) after (%lld, %llu)", (long long)got.time,
             (unsigned long long)got.seq, (long long)m->t,
             (unsigned long long)m->last_seq);
  assert_int_equal(m->seen[got.seq], 0);
  m->seen[got.seq] = 1;
  m->t = got.time;
  m->last_seq = got.seq;
}

/* The size swings across both switching points, with hold steps (a pop
 * and a push) at each plateau; narrow ranges make many ties. */
static void test_switch(void **state) {
  (void)state;
  static const size_t sizes[] = {
      TO_RADIX + 3000, TO_HEAP - 1,  2 * TO_RADIX, 100,
      TO_RADIX,        TO_RADIX + 1, TO_HEAP,      0};
  static const int64_t ranges[] = {50, 1000000, 3};
  for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
    mono m = {.q = evq_create(NULL),
              .r = gsl_rng_alloc(gsl_rng_taus2),
              .seen = calloc(1 << 20, 1),
              .t = -1000,
              .last_seq = UINT64_MAX,
              .range = ranges[k]};
    assert_non_null(m.q);
    assert_non_null(m.r);
    assert_non_null(m.seen);
    gsl_rng_set(m.r, 31 + k);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      while (evq_size(m.q) < sizes[i])
        mono_push(&m);
      while (evq_size(m.q) > sizes[i])
        mono_pop(&m);
      for (size_t j = 0; j < 3000 && sizes[i] > 0; j++) {
        mono_pop(&m);
        mono_push(&m);
      }
    }
    assert_true(m.seq < 1 << 20);
    for (uint64_t i = 0; i < m.seq; i++)
      assert_int_equal(m.seen[i], 1);
    evq_destroy(m.q);
    gsl_rng_free(m.r);
    free(m.seen);
  }
}

/* evq_compact's filter: every tenth seq stays. */
static bool keep_tenth(void *ctx, const evq_entry *e) {
  (void)ctx;
  return e->seq % 10 == 0;
}

/* Compacting the radix heap, then dropping below the switching point: the
 * entries left come out in order. */
static void test_switch_compact(void **state) {
  (void)state;
  evq *q = evq_create(NULL);
  assert_non_null(q);
  const size_t n = 3 * TO_RADIX;
  evq_entry *want = malloc(n * sizeof *want);
  assert_non_null(want);
  size_t nw = 0;
  for (size_t i = 0; i < n; i++) {
    evq_entry e = {(int64_t)((i * 2654435761u) % 5000), i, (uint32_t)i};
    assert_int_equal(evq_push(q, e), SIM_OK);
    if (i % 10 == 0)
      want[nw++] = e;
  }
  evq_compact(q, keep_tenth, NULL);
  assert_int_equal(evq_size(q), nw);
  qsort(want, nw, sizeof *want, queue_entry_cmp);
  queue_assert_pops(q, want, nw);
  free(want);
  evq_destroy(q);
}

/* A push at the switching point whose radix heap cannot be allocated stays
 * in the heap; the next one switches. */
static void test_switch_enomem(void **state) {
  (void)state;
  test_alloc t;
  test_alloc_init(&t, 0);
  evq *q = evq_create(&t.hook);
  assert_non_null(q);
  for (size_t i = 0; i < TO_RADIX; i++)
    assert_int_equal(evq_push(q, (evq_entry){(int64_t)(i % 97), i, 0}), SIM_OK);
  long calls = t.calls;
  evq_destroy(q);
  test_alloc_init(&t, calls + 1); /* the radix heap's first allocation */
  q = evq_create(&t.hook);
  assert_non_null(q);
  const size_t n = TO_RADIX + 2;
  for (size_t i = 0; i < n; i++)
    assert_int_equal(evq_push(q, (evq_entry){(int64_t)(i % 97), i, 0}), SIM_OK);
  assert_int_equal(evq_size(q), n);
  evq_entry e, prev = {INT64_MIN, 0, 0};
  for (size_t i = 0; i < n; i++) {
    assert_true(evq_pop(q, &e));
    assert_true(queue_entry_cmp(&prev, &e) < 0);
    prev = e;
  }
  assert_false(evq_pop(q, &e));
  evq_destroy(q);
  assert_int_equal(t.live, 0);
}

int main(void) {
  struct CMUnitTest tests[3];
  size_t n = 0;
  TEST_ADD(tests, n, test_switch);
  TEST_ADD(tests, n, test_switch_compact);
  TEST_ADD(tests, n, test_switch_enomem);
  return _cmocka_run_group_tests("queue_switch", tests, n, NULL, NULL);
}
