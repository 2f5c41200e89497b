/* test_queue_renumber.c - the pending-event set's renumbering
 * (evq_renumber; sim/core/queue.c): entries with many equal times and
 * seqs up to the last the queue takes are given 0 .. n-1 in their
 * (time, seq) order, each slot told its new seq once; the pops after it
 * come in the same order, pushes after it under the next seqs come after
 * their ties; a tracked entry's place is kept through it (evq_decrease
 * walks it up); in the heap, under a vacant root, and in the radix heap
 * (whose entries come back to the heap untracked); and out of memory
 * there, nothing changed. */
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "err.h"
#include "queue.h"
#include "queue_fixture.h"
#include "test_util.h"

typedef struct renumber_case {
  const char *name;
  size_t n;      /* entries pushed, slots 0 .. n-1 */
  size_t popped; /* of them popped before the renumbering */
  int64_t times; /* times drawn from 0 .. times-1: ties */
  bool tracked;  /* pushed with EVQ_TRACKED */
  bool radix;    /* n past the switch: the radix heap holds them */
} renumber_case;

static const renumber_case cases[] = {
    {"heap, ties, tracked", 1000, 0, 20, true, false},
    {"heap under a vacant root", 1000, 37, 20, true, false},
    {"heap, distinct times, untracked", 500, 3, 1 << 30, false, false},
    {"one entry", 1, 0, 1, true, false},
    {"radix heap, ties", 20000, 11, 300, false, true},
    {"radix heap, tracked pushes", 20000, 0, 300, true, true},
};

/* What the renumbering told, by slot. */
typedef struct told {
  uint64_t *seq; /* UINT64_MAX: not told */
  size_t n;      /* calls */
} told;

static void tell(void *ctx, uint32_t slot, uint64_t seq) {
  told *t = ctx;
  if (t->seq[slot] != UINT64_MAX)
    fail_msg("slot %u told twice", slot);
  t->seq[slot] = seq;
  t->n++;
}

/* Pushes the case's entries, seqs ending at EVQ_SEQS - 1, into q and
 * ref; pops the first ones off both. The live entries are ref[0..*left),
 * sorted. */
static evq_entry *fill(evq *q, const renumber_case *c, size_t *left) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  assert_non_null(r);
  gsl_rng_set(r, 42);
  evq_entry *ref = malloc((c->n + c->n) * sizeof *ref);
  assert_non_null(ref);
  uint64_t seq = EVQ_SEQS - c->n;
  for (size_t i = 0; i < c->n; i++) {
    int64_t t = (int64_t)gsl_rng_uniform_int(r, (unsigned long)c->times);
    ref[i] = (evq_entry){t, seq++, (uint32_t)i};
    uint32_t slot = c->tracked ? (uint32_t)i | EVQ_TRACKED : (uint32_t)i;
    assert_int_equal(evq_push_at(q, t, ref[i].seq, slot), SIM_OK);
  }
  gsl_rng_free(r);
  qsort(ref, c->n, sizeof *ref, queue_entry_cmp);
  evq_entry got;
  for (size_t i = 0; i < c->popped; i++) {
    assert_true(evq_pop(q, &got));
    assert_int_equal(got.seq, ref[i].seq);
  }
  *left = c->n - c->popped;
  memmove(ref, ref + c->popped, *left * sizeof *ref);
  return ref;
}

/* Each live entry's new seq is its rank; the reference takes them. */
static void check_told(const told *t, evq_entry *ref, size_t n) {
  assert_int_equal(t->n, n);
  for (size_t i = 0; i < n; i++) {
    if (t->seq[ref[i].slot] != i)
      fail_msg("entry %zu (slot %u): told seq %llu", i, ref[i].slot,
               (unsigned long long)t->seq[ref[i].slot]);
    ref[i].seq = i;
  }
}

static void test_renumber(void **state) {
  const renumber_case *c = *state;
  evq *q = evq_create(NULL);
  assert_non_null(q);
  size_t n;
  evq_entry *ref = fill(q, c, &n);
  told t = {.seq = malloc(c->n * sizeof *t.seq)};
  assert_non_null(t.seq);
  for (size_t i = 0; i < c->n; i++)
    t.seq[i] = UINT64_MAX;
  assert_int_equal(evq_renumber(q, tell, &t), SIM_OK);
  check_told(&t, ref, n);
  /* The last entry moved to the first's time under the next seq: in the
   * heap it is found where the renumbering put it. */
  const evq_entry *last = &ref[n - 1];
  bool moved = evq_decrease(q, last->slot, last->seq, ref[0].time, n);
  assert_int_equal(moved, c->tracked && !c->radix && ref[0].time < last->time);
  if (moved) {
    evq_entry e = {ref[0].time, n, last->slot};
    memmove(ref + 1, ref, (n - 1) * sizeof *ref);
    ref[0] = e;
    qsort(ref, n, sizeof *ref, queue_entry_cmp);
  }
  /* Pushes after it, at the times already there, come after their ties. */
  uint64_t seq = n + 1;
  for (size_t i = 0; i < n; i += 7) {
    evq_entry e = {ref[i].time, seq++, (uint32_t)(c->n + i)};
    assert_int_equal(evq_push(q, e), SIM_OK);
    ref[n + i / 7] = e;
  }
  size_t all = n + (n + 6) / 7;
  qsort(ref, all, sizeof *ref, queue_entry_cmp);
  queue_assert_pops(q, ref, all);
  free(t.seq);
  free(ref);
  evq_destroy(q);
}

/* The radix heap's entries need the heap's array grown past what it held
 * at the switch: refused, the entries and their seqs as they were. */
static void test_renumber_out_of_memory(void **state) {
  (void)state;
  test_alloc a;
  test_alloc_init(&a, 0);
  evq *q = evq_create(&a.hook);
  assert_non_null(q);
  const renumber_case *c = &cases[4];
  assert_true(c->radix);
  size_t n;
  evq_entry *ref = fill(q, c, &n);
  told t = {.seq = malloc(c->n * sizeof *t.seq)};
  assert_non_null(t.seq);
  a.fail_at = a.calls + 1;
  assert_int_equal(evq_renumber(q, tell, &t), SIM_ENOMEM);
  assert_int_equal(t.n, 0);
  queue_assert_pops(q, ref, n);
  free(t.seq);
  free(ref);
  evq_destroy(q);
  assert_int_equal(a.live, 0);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, test_renumber, cases);
  TEST_ADD(tests, n, test_renumber_out_of_memory);
  return _cmocka_run_group_tests("queue_renumber", tests, n, NULL, NULL);
}
