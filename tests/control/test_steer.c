/* test_steer.c - power groups (models/control/steer.c) against splits
 * computed by hand: borrowing on and off, a group at its cap, a cap
 * below the floor, priorities (who borrows first, never from a higher
 * group), a short pool shared in proportion, lending off; a group's
 * budget spread over its rack groups; the load target's steps; the
 * budgets never above the shares on random groups; allocation failures. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "steer.h"

#define MAXG 4

/* A group with a share, floor, want and cap (NaN: none), priority,
 * borrowing and lending. */
#define G(share, floor, want, cap, prio, borrow, lend)                         \
  { share, floor, want, cap, prio, borrow, lend }

typedef struct share_case {
  const char *name;
  size_t n;
  steer_need need[MAXG];
  double budget[MAXG], own[MAXG];
} share_case;

static const share_case shares[] = {
    /* A wants 200 more than its 600; B leaves 300 of its 400 unused. */
    {"borrowing_off",
     2,
     {G(600, 100, 800, NAN, 0, false, false),
      G(400, 100, 100, NAN, 0, false, false)},
     {600, 400},
     {600, 400}},
    {"borrowing_on",
     2,
     {G(600, 100, 800, NAN, 0, true, true),
      G(400, 100, 100, NAN, 0, true, true)},
     {800, 200},
     {600, 400}},
    /* A capped at 500: its 100 go to B's own (500); B leaves 400 and A
     * borrows the 300 it wants back. */
    {"at_cap_borrows",
     2,
     {G(600, 100, 800, 500, 0, true, true),
      G(400, 100, 100, NAN, 0, true, true)},
     {800, 200},
     {500, 500}},
    /* The same without borrowing: A stays at its cap. */
    {"at_cap_no_borrow",
     2,
     {G(600, 100, 800, 500, 0, false, true),
      G(400, 100, 100, NAN, 0, true, true)},
     {500, 500},
     {500, 500}},
    /* B keeps what it does not lend. */
    {"at_cap_no_lender",
     2,
     {G(600, 100, 800, 500, 0, true, true),
      G(400, 100, 100, NAN, 0, true, false)},
     {500, 500},
     {500, 500}},
    /* A's cap is below its floor: its GPUs at their minimum caps (400);
     * B takes the 200 left: 600. */
    {"cap_below_floor",
     2,
     {G(600, 400, 600, 300, 0, false, true),
      G(400, 100, 100, NAN, 0, false, true)},
     {400, 600},
     {400, 600}},
    /* Every group capped: 200 of the shares left unused. */
    {"all_capped",
     2,
     {G(600, 100, 800, 500, 0, true, true),
      G(400, 100, 800, 300, 0, true, true)},
     {500, 300},
     {500, 300}},
    /* The highest priority first: A (2) takes 200 of C's 250 spare, B
     * (1) the 50 left. */
    {"priority_first",
     3,
     {G(300, 100, 500, NAN, 2, true, true),
      G(300, 100, 500, NAN, 1, true, true),
      G(400, 100, 150, NAN, 0, true, true)},
     {500, 350, 150},
     {300, 300, 400}},
    /* B (1) may not borrow from A (2), a higher group. */
    {"never_from_higher",
     2,
     {G(500, 100, 200, NAN, 2, true, true),
      G(500, 100, 700, NAN, 1, true, true)},
     {500, 500},
     {500, 500}},
    /* A short pool at one level: C's 90 spare, 2:1 as A and B ask. */
    {"short_pool_shared",
     3,
     {G(300, 100, 500, NAN, 0, true, true),
      G(300, 100, 400, NAN, 0, true, true),
      G(400, 100, 310, NAN, 0, true, true)},
     {360, 330, 310},
     {300, 300, 400}},
    /* Lenders give from the lowest priority up: A (2) wants 150; C (0)
     * gives its 100 first, B (1) the other 50. */
    {"lowest_lender_first",
     3,
     {G(300, 100, 450, NAN, 2, true, true),
      G(300, 100, 200, NAN, 1, true, true),
      G(400, 100, 300, NAN, 0, true, true)},
     {450, 250, 300},
     {300, 300, 400}},
    /* Caps hold back 300 of A's share, spread over B and C by their
     * shares (1:3): B 400 + 75 = 475 is over its cap 450, so B holds
     * 450 and C takes the other 250: 1,450. */
    {"held_back_water_filled",
     3,
     {G(900, 100, 600, 600, 0, false, false),
      G(400, 100, 400, 450, 0, false, false),
      G(1200, 100, 900, NAN, 0, false, false)},
     {600, 450, 1450},
     {600, 450, 1450}},
};

static void share_by_hand(void **state) {
  const share_case *c = *state;
  double budget[MAXG], own[MAXG];
  steer_share(c->need, c->n, budget, own);
  double total = 0, shares_total = 0;
  for (size_t p = 0; p < c->n; p++) {
    assert_close(budget[p], c->budget[p], 1e-12, 1e-9);
    assert_close(own[p], c->own[p], 1e-12, 1e-9);
    total += budget[p];
    shares_total += c->need[p].share;
  }
  assert_true(total <= shares_total * (1 + 1e-15));
}

/* A small LCG: the same groups on every machine. */
static double uniform(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0;
}

/* Random groups: the budgets add up to the shares at most, never below
 * a floor, a lender never below its want, nobody who does not borrow
 * above its own budget. */
static void random_groups_keep_the_books(void **state) {
  (void)state;
  uint64_t seed = 7;
  for (int trial = 0; trial < 2000; trial++) {
    steer_need need[8];
    double budget[8], own[8], shares_total = 0, total = 0;
    size_t n = 1 + (size_t)(uniform(&seed) * 8);
    for (size_t p = 0; p < n; p++) {
      double share = 1000 * uniform(&seed), floor = share * uniform(&seed);
      double cap = uniform(&seed) < 0.5 ? NAN : 1200 * uniform(&seed) + 1;
      need[p] = (steer_need){share,
                             floor,
                             floor + 1000 * uniform(&seed),
                             cap,
                             (int64_t)(3 * uniform(&seed)),
                             uniform(&seed) < 0.7,
                             uniform(&seed) < 0.7};
      shares_total += share;
    }
    steer_share(need, n, budget, own);
    for (size_t p = 0; p < n; p++) {
      total += budget[p];
      assert_true(budget[p] >= need[p].floor * (1 - 1e-12));
      if (!need[p].borrow)
        assert_true(budget[p] <= own[p] * (1 + 1e-12));
      if (budget[p] < own[p])
        assert_true(need[p].lend && budget[p] >= need[p].want * (1 - 1e-12));
    }
    assert_true(total <= shares_total * (1 + 1e-12));
  }
}

/* A group's 1,000 W over two rack groups: under their wants, in
 * proportion to want above floor; over, the rest by room to the top. */
static void spread_by_hand(void **state) {
  (void)state;
  const double f[] = {100, 200}, w[] = {400, 500}, h[] = {800, 600};
  const double s[] = {500, 500};
  double out[2];
  /* Wants 900 > 700: 100 + 400 x 300/600, 200 + 400 x 300/600. */
  steer_spread(700, f, w, h, s, 2, out);
  assert_close(out[0], 300, 1e-12, 0);
  assert_close(out[1], 400, 1e-12, 0);
  /* 1,000 >= 900: rooms 400 and 100 share the 100 left, 4:1. */
  steer_spread(1000, f, w, h, s, 2, out);
  assert_close(out[0], 480, 1e-12, 0);
  assert_close(out[1], 520, 1e-12, 0);
  /* No room left: by shares. */
  const double full[] = {400, 500};
  steer_spread(1100, f, w, full, s, 2, out);
  assert_close(out[0], 500, 1e-12, 0);
  assert_close(out[1], 600, 1e-12, 0);
}

/* A fleet of two rack groups for steer_create: only their names count. */
static rack_group_spec specs[3] = {{.name = "a"}, {.name = "b"}, {.name = "c"}};

static rack_fleet fleet_of(void) {
  return (rack_fleet){.groups = specs, .ngroups = 3};
}

static char *racks_a[] = {"a", "c"};
static const power_group_config groups[] = {
    {.name = "one",
     .racks = racks_a,
     .nracks = 2,
     .cap_w = NAN,
     .borrow = true,
     .lend = true},
};
static const power_target_step steps[] = {{0, 1e6}, {3600, NAN}, {7200, 5e5}};

static void targets_and_membership(void **state) {
  (void)state;
  rack_fleet fl = fleet_of();
  sim_error err = {0};
  steer *s = steer_create(groups, 1, steps, 3, &fl, NULL, &err);
  assert_non_null(s);
  assert_int_equal(steer_group_of(s, 0), 0);
  assert_int_equal(steer_group_of(s, 1), -1);
  assert_int_equal(steer_group_of(s, 2), 0);
  assert_close(steer_target(s, 0), 1e6, 0, 0);
  assert_close(steer_target(s, 3599), 1e6, 0, 0);
  assert_true(isnan(steer_target(s, 3600)));
  assert_close(steer_target(s, 1e5), 5e5, 0, 0);
  steer_set_target(s, 7e5); /* a client's, in place of the steps */
  assert_close(steer_target(s, 0), 7e5, 0, 0);
  steer_set_target(s, INFINITY);
  assert_true(isnan(steer_target(s, 0)));
  steer_set_target(s, NAN);
  assert_close(steer_target(s, 7200), 5e5, 0, 0);
  steer_destroy(s);
}

/* The budgets of rack groups a and c pooled as group one; b untouched. */
static void budgets_through_units(void **state) {
  (void)state;
  rack_fleet fl = fleet_of();
  sim_error err = {0};
  steer *s = steer_create(groups, 1, NULL, 0, &fl, NULL, &err);
  power_unit u[3] = {
      {.n = 2, .lo = 100, .hi = 500, .demand = 450}, /* a: wants 900 */
      {.n = 1, .lo = 100, .hi = 500, .demand = 50},  /* b: wants 100 */
      {.n = 2, .lo = 100, .hi = 500, .demand = 150}, /* c: wants 300 */
  };
  size_t first[] = {0, 1, 2, 3};
  double budget[] = {600, 300, 800}; /* a 600 + c 800 = 1,400 */
  steer_budgets(s, u, first, budget);
  /* Wants 1,200 <= 1,400: rooms 100 (a) and 700 (c) share 200, 1:7. */
  assert_close(budget[0], 925, 1e-12, 0);
  assert_close(budget[1], 300, 0, 0);
  assert_close(budget[2], 475, 1e-12, 0);
  steer_group_now g;
  steer_group_state(s, 0, &g);
  assert_close(g.budget_w, 1400, 1e-12, 0);
  assert_close(g.want_w, 1200, 1e-12, 0);
  assert_true(isnan(g.cap_w));
  steer_set_cap(s, 0, 1000); /* a client's cap; no one to borrow from */
  budget[0] = 600, budget[2] = 800;
  steer_budgets(s, u, first, budget);
  assert_close(budget[0] + budget[2], 1000, 1e-12, 0);
  steer_destroy(s);
}

static void *make(const sim_allocator *a, void *ctx, sim_error *err) {
  (void)ctx;
  rack_fleet fl = fleet_of();
  return steer_create(groups, 1, steps, 3, &fl, a, err);
}

static void drop(void *obj) { steer_destroy(obj); }

static void alloc_failures(void **state) {
  (void)state;
  test_alloc_failures("steer_create", make, drop, NULL);
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ROWS(tests, n, share_by_hand, shares);
  TEST_ADD(tests, n, random_groups_keep_the_books);
  TEST_ADD(tests, n, spread_by_hand);
  TEST_ADD(tests, n, targets_and_membership);
  TEST_ADD(tests, n, budgets_through_units);
  TEST_ADD(tests, n, alloc_failures);
  return _cmocka_run_group_tests("steer", tests, n, NULL, NULL);
}
