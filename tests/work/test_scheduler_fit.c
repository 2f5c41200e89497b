/* test_scheduler_fit.c - the buckets of domains by free GPUs
 * (models/work/scheduler_fit.c) against the scan they replaced: hand-made
 * cases, then random fleets whose counts move at random, every query
 * compared with a scan kept here. */
#include "test_util.h"

#include <string.h>

#include "scheduler_fit.h"

#define ALL SCHED_FIT_ALL
#define NONE UINT32_MAX

/* The scan the scheduler used: domains in number order, the first strict
 * minimum of the free counts that hold n, in class cls or any. */
static uint32_t scan_best(const uint32_t *cls, const uint32_t *free,
                          size_t ndom, uint32_t n, uint32_t want) {
  uint32_t best = UINT32_MAX, dom = NONE;
  for (uint32_t d = 0; d < ndom; d++)
    if ((want == ALL || cls[d] == want) && free[d] >= n && free[d] < best) {
      best = free[d];
      dom = d;
    }
  return dom;
}

static uint32_t fit_best(const sched_fit *f, uint32_t n, uint32_t want) {
  uint32_t dom = 12345;
  bool found = sched__fit_best(f, n, want, &dom);
  assert_true(found == (dom != 12345));
  return found ? dom : NONE;
}

/* ---- Cases ------------------------------------------------------------ */

typedef struct fit_case {
  const char *name;
  uint32_t cls[8], size[8], free[8];
  size_t ndom, nclass;
  uint32_t n, want, expect;
} fit_case;

static const fit_case cases[] = {
    {"fewest free that holds n",
     {0, 0, 0, 0}, {8, 8, 8, 8}, {8, 3, 5, 4}, 4, 1, 4, ALL, 3},
    {"ties to the lowest number",
     {0, 0, 0, 0}, {8, 8, 8, 8}, {6, 5, 7, 5}, 4, 1, 5, ALL, 1},
    {"exactly n", {0, 0, 0}, {8, 8, 8}, {2, 7, 3}, 3, 1, 3, ALL, 2},
    {"none holds n", {0, 0}, {8, 8}, {2, 3}, 2, 1, 4, ALL, NONE},
    {"n past every domain's size", {0, 0}, {8, 8}, {8, 8}, 2, 1, 9, ALL, NONE},
    {"one class only",
     {0, 1, 0, 1}, {8, 8, 8, 8}, {7, 4, 6, 5}, 4, 2, 4, 0, 2},
    {"the other class", {0, 1, 0, 1}, {8, 8, 8, 8}, {7, 4, 6, 5}, 4, 2, 4, 1, 1},
    {"any class: fewest free across them",
     {0, 1, 0, 1}, {8, 8, 8, 8}, {7, 6, 4, 5}, 4, 2, 4, ALL, 2},
    {"any class: ties across classes to the lowest number",
     {1, 0, 1, 0}, {72, 8, 72, 8}, {5, 5, 5, 5}, 4, 2, 5, ALL, 0},
    {"any class: a later class with fewer free wins",
     {0, 0, 1, 1}, {72, 72, 8, 8}, {70, 9, 8, 6}, 4, 2, 6, ALL, 3},
    {"a class with no domains", {0, 0}, {8, 8}, {3, 4}, 2, 3, 1, 2, NONE},
    {"a class past the classes", {0, 0}, {8, 8}, {3, 4}, 2, 1, 1, 5, NONE},
    {"domains of different sizes in a class",
     {0, 0, 0}, {4, 72, 8}, {4, 40, 8}, 3, 1, 5, ALL, 2},
    {"no domains", {0}, {0}, {0}, 0, 1, 1, ALL, NONE},
};

static void test_case(void **state) {
  const fit_case *c = *state;
  sched_fit *f = sched__fit_create(c->cls, c->size, c->free, c->ndom,
                                   c->nclass, NULL);
  assert_non_null(f);
  assert_int_equal(fit_best(f, c->n, c->want), c->expect);
  assert_int_equal(scan_best(c->cls, c->free, c->ndom, c->n, c->want),
                   c->expect);
  sched__fit_destroy(f);
}

/* Counts moved after creation: the buckets follow them. */
static void test_moves(void **state) {
  (void)state;
  uint32_t cls[3] = {0, 0, 0}, size[3] = {8, 8, 8}, free[3] = {8, 8, 8};
  sched_fit *f = sched__fit_create(cls, size, free, 3, 1, NULL);
  assert_non_null(f);
  assert_int_equal(fit_best(f, 2, ALL), 0);
  sched__fit_move(f, 1, 8, 3);
  assert_int_equal(fit_best(f, 2, ALL), 1);
  sched__fit_move(f, 2, 8, 2);
  assert_int_equal(fit_best(f, 2, ALL), 2);
  assert_int_equal(fit_best(f, 3, ALL), 1);
  sched__fit_move(f, 1, 3, 0);
  sched__fit_move(f, 2, 2, 0);
  sched__fit_move(f, 0, 8, 0);
  assert_int_equal(fit_best(f, 1, ALL), NONE);
  sched__fit_move(f, 2, 0, 8);
  assert_int_equal(fit_best(f, 8, 0), 2);
  sched__fit_destroy(f);
}

/* ---- Random fleets ----------------------------------------------------- */

/* Numerical Recipes' 64-bit LCG; the high bits are the good ones. */
static uint32_t lcg(uint64_t *x) {
  *x = *x * 6364136223846793005u + 1442695040888963407u;
  return (uint32_t)(*x >> 33);
}

typedef struct random_fit {
  const char *name;
  uint32_t ndom, nclass;
  uint64_t seed;
} random_fit;

/* Past 4,096 domains a class's summary needs a second word. */
static const random_fit randoms[] = {
    {"one class, 50 domains", 50, 1, 1},
    {"three classes, 300 domains", 300, 3, 2},
    {"two classes, 9000 domains", 9000, 2, 3},
    {"five classes, 20000 domains", 20000, 5, 4},
};

enum { MOST = 20000 };

static void test_random(void **state) {
  const random_fit *c = *state;
  static uint32_t cls[MOST], size[MOST], free[MOST];
  static const uint32_t sizes[] = {4, 8, 36, 72};
  uint64_t x = c->seed;
  for (uint32_t d = 0; d < c->ndom; d++) {
    cls[d] = lcg(&x) % c->nclass;
    size[d] = sizes[lcg(&x) % N_OF(sizes)];
    free[d] = lcg(&x) % (size[d] + 1);
  }
  sched_fit *f = sched__fit_create(cls, size, free, c->ndom, c->nclass, NULL);
  assert_non_null(f);
  for (int step = 0; step < 4000; step++) {
    /* Mostly small moves, as placements and releases make them. */
    for (int k = 0; k < 5; k++) {
      uint32_t d = lcg(&x) % c->ndom, to = lcg(&x) % (size[d] + 1);
      if (lcg(&x) % 4 != 0)
        to = free[d] == 0 ? 1 : free[d] - 1;
      sched__fit_move(f, d, free[d], to);
      free[d] = to;
    }
    uint32_t n = 1 + lcg(&x) % 80;
    uint32_t want = lcg(&x) % (c->nclass + 1);
    want = want == c->nclass ? ALL : want;
    uint32_t expect = scan_best(cls, free, c->ndom, n, want);
    if (fit_best(f, n, want) != expect)
      fail_msg("step %d: n %u class %u: buckets %u, scan %u", step, n, want,
               fit_best(f, n, want), expect);
  }
  sched__fit_destroy(f);
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ROWS(tests, n, test_case, cases);
  TEST_ADD(tests, n, test_moves);
  TEST_ROWS(tests, n, test_random, randoms);
  return _cmocka_run_group_tests("scheduler_fit", tests, n, NULL, NULL);
}
