/* test_control_each.c - the policy's split of each rack group run through
 * a caller's "for each" (control_set_each) that runs the groups on two
 * pthreads at once: over periods of drifting loads and worth, the caps on
 * every GPU, each group's level (the memo's) and the policy's test counts
 * are those of the plain loop, bit for bit, for every policy and 2 to 4
 * groups. Two groups' splits that shared a count or a scratch array would
 * race (TSan reports it: the test is built once with -fsanitize=thread)
 * or give other caps. (The world, each_world.h, and the two threads,
 * each_pair.h, are those the benchmark of what the splits gain on two
 * threads, tests/bench/bench_control_each.c, runs too.) */
#include "test_util.h"

#include <string.h>

#include "bits.h"
#include "control.h"
#include "each_pair.h"
#include "each_world.h"
#include "test_catalogs.h"

/* ------------------------------------------------------------------ */
/* A factory around one control                                        */
/* ------------------------------------------------------------------ */

/* A scenario: its world's shape (each_world.h) and periods of drift. */
typedef struct scenario {
  const char *name;
  each_world_spec w;
  int periods;
} scenario;

static each_world *world_make(const scenario *s) {
  sim_error err = {0};
  each_world *w = each_world_make(&s->w, &cats.gpu, &err);
  if (w == NULL)
    fail_msg("%s: %s", s->name, err.msg);
  return w;
}

static void world_period(each_world *w, int p) {
  const char *why = each_world_period(w, p);
  if (why != NULL)
    fail_msg("%s", why);
}

/* The policy's test counts (power.h). */
typedef struct counts {
  unsigned long level, clock, put_back, finishes;
} counts;

static counts counts_now(void) {
  return (counts){power__level_evals(), power__clock_evals(),
                  power__caps_put_back(), power__fill_finishes()};
}

static counts counts_since(counts a) {
  counts b = counts_now();
  return (counts){b.level - a.level, b.clock - a.clock, b.put_back - a.put_back,
                  b.finishes - a.finishes};
}

static void assert_same(each_world *a, each_world *b, counts ka, counts kb,
                        const char *what, int p) {
  rack_fleet_gpu_caps(a->fl);
  rack_fleet_gpu_caps(b->fl);
  for (uint32_t i = 0; i < a->ngpus; i++)
    if (!sim_same_bits(a->fl->cap_w[i], b->fl->cap_w[i]))
      fail_msg("%s, period %d: GPU %u's cap %.17g W plain, %.17g W on two "
               "threads",
               what, p, i, a->fl->cap_w[i], b->fl->cap_w[i]);
  for (size_t g = 0; g < a->fl->ngroups; g++)
    if (!sim_same_bits(control__group_level(a->c, g),
                       control__group_level(b->c, g)))
      fail_msg("%s, period %d: group %zu's level %.17g plain, %.17g on two "
               "threads",
               what, p, g, control__group_level(a->c, g),
               control__group_level(b->c, g));
  if (memcmp(&ka, &kb, sizeof ka) != 0)
    fail_msg("%s, period %d: counts (level %lu, clock %lu, put back %lu, "
             "finishes %lu) plain, (%lu, %lu, %lu, %lu) on two threads",
             what, p, ka.level, ka.clock, ka.put_back, ka.finishes, kb.level,
             kb.clock, kb.put_back, kb.finishes);
}

/* Each row: {policy, groups, racks a group, GPUs a slot, runs kept,
 * predicted, classes}, periods. */
static const scenario scenarios[] = {
    {"efficiency, 2 groups",
     {POWER_EFFICIENCY, 2, {4, 4}, 4, false, false, 40},
     12},
    {"efficiency, 2 groups, runs",
     {POWER_EFFICIENCY, 2, {5, 3}, 4, true, false, 200},
     12},
    {"efficiency, 3 groups of few classes",
     {POWER_EFFICIENCY, 3, {3, 2, 2}, 8, true, false, 4},
     10},
    {"efficiency, 4 groups, predicted",
     {POWER_EFFICIENCY, 4, {3, 2, 2, 2}, 4, true, true, 100},
     10},
    {"efficiency, 2 large groups",
     {POWER_EFFICIENCY, 2, {20, 20}, 4, true, false, 500},
     8},
    {"proportional, 3 groups",
     {POWER_PROPORTIONAL, 3, {2, 3, 2}, 4, false, false, 50},
     6},
    {"priority, 4 groups",
     {POWER_PRIORITY, 4, {2, 2, 1, 1}, 4, true, false, 50},
     6},
    {"uniform floor, 2 groups",
     {POWER_UNIFORM_FLOOR, 2, {2, 3}, 8, false, false, 50},
     6},
    {"static, predicted, 3 groups",
     {POWER_STATIC, 3, {2, 2, 2}, 4, false, true, 50},
     6},
};

/* A scenario's periods, plain and on two threads, side by side. */
static void groups_on_two_threads(void **state) {
  const scenario *s = *state;
  static each_pair p; /* static: its EACH_PAIR_MAX index codes */
  assert_int_equal(each_pair_start(&p, NULL), SIM_OK);
  each_world *plain = world_make(s), *two = world_make(s);
  control_set_each(two->c, each_pair_each, &p);
  for (int q = 0; q < s->periods; q++) {
    counts k0 = counts_now();
    world_period(plain, q);
    counts ka = counts_since(k0);
    k0 = counts_now();
    world_period(two, q);
    counts kb = counts_since(k0);
    assert_same(plain, two, ka, kb, s->name, q);
  }
  each_world_drop(plain);
  each_world_drop(two);
  each_pair_stop(&p);
}

/* A failing index's code is the each's, the first in index order; a
 * call of more indices than the pair holds runs none. */
static int fail_odd(void *ctx, size_t i) {
  (void)ctx;
  return i % 2 == 1 ? (int)(SIM_ERANGE + i) : SIM_OK;
}

static void pair_returns_first_failure(void **state) {
  (void)state;
  static each_pair p;
  assert_int_equal(each_pair_start(&p, NULL), SIM_OK);
  assert_int_equal(each_pair_each(&p, 4, fail_odd, NULL), SIM_ERANGE + 1);
  assert_int_equal(each_pair_each(&p, 1, fail_odd, NULL), SIM_OK);
  assert_int_equal(each_pair_each(&p, EACH_PAIR_MAX + 1, fail_odd, NULL),
                   SIM_ERANGE);
  each_pair_stop(&p);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ADD(tests, n, pair_returns_first_failure);
  TEST_ROWS(tests, n, groups_on_two_threads, scenarios);
  return _cmocka_run_group_tests("control_each", tests, n,
                                 test_catalogs_load_gpu, test_catalogs_release);
}
