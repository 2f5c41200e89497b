/* test_queue_decrease.c - the pending-event set's decrease-key
 * (evq_decrease, evq_untrack; sim/core/queue.c): random pushes, pops,
 * decreases and untracks against a linear-scan reference, tracked and
 * untracked entries sharing slots, pops leaving the root vacant; what it
 * refuses; a tracked push out of memory; and its refusal while the radix
 * heap holds the entries, until they are pushed again. The random rows
 * run with the walks down asking a level ahead (evq_prefetch) too: the
 * same pops as the reference's. */
#include <stdlib.h>

#include <gsl/gsl_rng.h>

#include "err.h"
#include "queue.h"
#include "queue_fixture.h"
#include "test_util.h"

/* One entry of the reference: the queue's entry and whether it is
 * tracked (then it alone of the tracked ones holds its slot). */
typedef struct ref_entry {
  evq_entry e;
  bool tracked;
} ref_entry;

enum { SLOTS = 64 }; /* slots 0 .. SLOTS - 1 */

typedef struct ref {
  evq *q;
  gsl_rng *r;
  ref_entry *v;
  size_t n;
  uint64_t seq;         /* the next push's */
  int64_t last;         /* the time of the last pop */
  bool busy[SLOTS];     /* a tracked entry holds the slot */
  int64_t range;        /* times up to last + range - 1 */
} ref;

/* The index of the smallest entry. */
static size_t ref_min(const ref *f) {
  size_t m = 0;
  for (size_t i = 1; i < f->n; i++)
    if (queue_entry_cmp(&f->v[i].e, &f->v[m].e) < 0)
      m = i;
  return m;
}

/* Pushes an entry, tracked when its random slot is free. */
static void ref_push(ref *f) {
  uint32_t slot = (uint32_t)gsl_rng_uniform_int(f->r, SLOTS);
  bool tracked = !f->busy[slot] && gsl_rng_uniform(f->r) < 0.7;
  int64_t t = f->last + (int64_t)gsl_rng_uniform_int(f->r, (unsigned long)f->range);
  evq_entry e = {t, f->seq++, slot};
  assert_int_equal(
      evq_push_at(f->q, e.time, e.seq, tracked ? slot | EVQ_TRACKED : slot),
      SIM_OK);
  f->busy[slot] |= tracked;
  f->v[f->n++] = (ref_entry){e, tracked};
}

static void ref_drop(ref *f, size_t i) {
  if (f->v[i].tracked)
    f->busy[f->v[i].e.slot] = false;
  f->v[i] = f->v[--f->n];
}

static void ref_pop(ref *f) {
  evq_entry got;
  if (f->n == 0) {
    assert_false(evq_pop(f->q, &got));
    return;
  }
  size_t m = ref_min(f);
  assert_true(evq_pop(f->q, &got));
  if (got.seq != f->v[m].e.seq || got.time != f->v[m].e.time ||
      got.slot != f->v[m].e.slot)
    fail_msg("pop (%lld, %llu, %u), want (%lld, %llu, %u)",
             (long long)got.time, (unsigned long long)got.seq, got.slot,
             (long long)f->v[m].e.time, (unsigned long long)f->v[m].e.seq,
             f->v[m].e.slot);
  f->last = got.time;
  ref_drop(f, m);
}

/* A random entry's key made (t, fresh seq) with t at or after the last
 * pop: taken in place iff it is tracked and the key decreases. */
static void ref_decrease(ref *f) {
  if (f->n == 0)
    return;
  ref_entry *x = &f->v[gsl_rng_uniform_int(f->r, f->n)];
  int64_t span = x->e.time - f->last + 1;
  int64_t t = f->last + (int64_t)gsl_rng_uniform_int(f->r, (unsigned long)span);
  bool want = x->tracked && t < x->e.time; /* equal: the fresh seq is larger */
  bool got = evq_decrease(f->q, x->e.slot, x->e.seq, t, f->seq);
  if (got != want)
    fail_msg("decrease of (%lld, %llu, %u%s) to %lld: %d", (long long)x->e.time,
             (unsigned long long)x->e.seq, x->e.slot,
             x->tracked ? ", tracked" : "", (long long)t, got);
  if (got)
    x->e = (evq_entry){t, f->seq++, x->e.slot};
}

/* A random tracked entry untracked: it stays, its slot free again. */
static void ref_untrack(ref *f) {
  if (f->n == 0)
    return;
  ref_entry *x = &f->v[gsl_rng_uniform_int(f->r, f->n)];
  evq_untrack(f->q, x->e.slot, x->e.seq);
  if (x->tracked)
    f->busy[x->e.slot] = false;
  x->tracked = false;
}

typedef struct decrease_case {
  const char *name;
  unsigned long seed;
  size_t ops;
  double push, pop, decrease; /* the rest: untracks */
  int64_t range;
  bool ask; /* evq_prefetch on: the walks down that ask a level ahead */
} decrease_case;

static const decrease_case decrease_cases[] = {
    {"balanced, wide times", 1, 20000, 0.35, 0.3, 0.3, 1000000, false},
    {"narrow times (ties)", 2, 20000, 0.35, 0.3, 0.3, 4, false},
    {"growing, many decreases", 3, 20000, 0.4, 0.15, 0.4, 100000, false},
    {"mostly pops (vacant roots)", 4, 20000, 0.3, 0.4, 0.25, 1000, false},
    {"balanced, asking ahead", 1, 20000, 0.35, 0.3, 0.3, 1000000, true},
    {"narrow times, asking ahead", 2, 20000, 0.35, 0.3, 0.3, 4, true},
    {"mostly pops, asking ahead", 4, 20000, 0.3, 0.4, 0.25, 1000, true},
};

static void test_decrease_random(void **state) {
  const decrease_case *c = *state;
  ref f = {.q = evq_create(NULL),
           .r = gsl_rng_alloc(gsl_rng_taus2),
           .v = malloc(c->ops * sizeof(ref_entry)),
           .range = c->range};
  assert_non_null(f.q);
  assert_non_null(f.r);
  assert_non_null(f.v);
  gsl_rng_set(f.r, c->seed);
  evq_prefetch(f.q, c->ask);
  for (size_t k = 0; k < c->ops; k++) {
    double u = gsl_rng_uniform(f.r);
    if (u < c->push)
      ref_push(&f);
    else if (u < c->push + c->pop)
      ref_pop(&f);
    else if (u < c->push + c->pop + c->decrease)
      ref_decrease(&f);
    else
      ref_untrack(&f);
    assert_int_equal(evq_size(f.q), f.n);
  }
  while (f.n > 0)
    ref_pop(&f);
  free(f.v);
  evq_destroy(f.q);
  gsl_rng_free(f.r);
}

/* What evq_decrease refuses, the queue unchanged: a key not smaller, a
 * seq not the entry's, a slot never tracked, an untracked entry. */
static void test_decrease_refused(void **state) {
  (void)state;
  evq *q = evq_create(NULL);
  assert_non_null(q);
  assert_int_equal(evq_push_at(q, 10, 0, 3 | EVQ_TRACKED), SIM_OK);
  assert_int_equal(evq_push_at(q, 20, 1, 4 | EVQ_TRACKED), SIM_OK);
  assert_int_equal(evq_push_at(q, 30, 2, 5), SIM_OK);
  assert_false(evq_decrease(q, 4, 1, 20, 3)); /* same time, larger seq */
  assert_false(evq_decrease(q, 4, 1, 25, 3)); /* later */
  assert_false(evq_decrease(q, 4, 0, 5, 3));  /* another entry's seq */
  assert_false(evq_decrease(q, 5, 2, 5, 3));  /* pushed untracked */
  assert_false(evq_decrease(q, 1000, 2, 5, 3)); /* beyond every place */
  evq_untrack(q, 3, 0);
  assert_false(evq_decrease(q, 3, 0, 5, 3));
  assert_true(evq_decrease(q, 4, 1, 5, 3));
  const evq_entry want[] = {{5, 3, 4}, {10, 0, 3}, {30, 2, 5}};
  queue_assert_pops(q, want, 3);
  evq_destroy(q);
}

/* A tracked push whose places cannot grow fails as any push does:
 * SIM_ENOMEM, the queue as it was; the next one, allowed, is tracked. */
static void test_tracked_push_enomem(void **state) {
  (void)state;
  test_alloc t;
  test_alloc_init(&t, 0);
  evq *q = evq_create(&t.hook);
  assert_non_null(q);
  assert_int_equal(evq_push_at(q, 10, 0, 1), SIM_OK); /* the heap's arrays */
  t.fail_at = t.calls + 1;
  assert_int_equal(evq_push_at(q, 20, 1, 2 | EVQ_TRACKED), SIM_ENOMEM);
  assert_int_equal(evq_size(q), 1);
  assert_int_equal(evq_push_at(q, 20, 1, 2 | EVQ_TRACKED), SIM_OK);
  assert_true(evq_decrease(q, 2, 1, 5, 2));
  const evq_entry want[] = {{5, 2, 2}, {10, 0, 1}};
  queue_assert_pops(q, want, 2);
  evq_destroy(q);
  assert_int_equal(t.live, 0);
}

/* sim/core/queue.c's switching point to the radix heap. */
enum { TO_RADIX = 1 << 14 };

/* The radix heap keeps no places: refused while it holds the entries and
 * for those that come back from it, taken again for an entry pushed
 * tracked after the return; the pops as the keys say. */
static void test_decrease_through_radix(void **state) {
  (void)state;
  enum { N = TO_RADIX + 100 };
  evq *q = evq_create(NULL);
  evq_entry *want = malloc(N * sizeof *want);
  assert_non_null(q);
  assert_non_null(want);
  for (uint32_t i = 0; i < N; i++)
    assert_int_equal(
        evq_push_at(q, 1000 + (int64_t)i, i, (i % SLOTS) | EVQ_TRACKED),
        SIM_OK);
  assert_false(evq_decrease(q, 7, 7, 0, N)); /* in the radix heap */
  evq_entry got;
  for (uint32_t i = 0; i < N - 10; i++) /* back to the heap on the way */
    assert_true(evq_pop(q, &got));
  uint32_t s = (N - 1) % SLOTS; /* the last entry's slot */
  assert_false(evq_decrease(q, s, N - 1, 0, N));
  assert_int_equal(evq_push_at(q, 5000000, N, 1000 | EVQ_TRACKED), SIM_OK);
  assert_true(evq_decrease(q, 1000, N, 0, N + 1));
  want[0] = (evq_entry){0, N + 1, 1000};
  for (uint32_t i = 0; i < 10; i++) {
    uint32_t k = N - 10 + i;
    want[i + 1] = (evq_entry){1000 + (int64_t)k, k, k % SLOTS};
  }
  queue_assert_pops(q, want, 11);
  free(want);
  evq_destroy(q);
}

int main(void) {
  struct CMUnitTest tests[10];
  size_t n = 0;
  TEST_ROWS(tests, n, test_decrease_random, decrease_cases);
  TEST_ADD(tests, n, test_decrease_refused);
  TEST_ADD(tests, n, test_tracked_push_enomem);
  TEST_ADD(tests, n, test_decrease_through_radix);
  return _cmocka_run_group_tests("queue_decrease", tests, n, NULL, NULL);
}
