/* test_power.c - the allocation policies: every policy keeps the budget
 * and the ranges on random fleets; static is equal, proportional follows
 * demand, priority serves inference first, efficiency equalises the
 * marginal work per watt and does at least the useful work of static;
 * uniform_floor raises every unit evenly from its minimum; headroom a
 * unit leaves goes to the others; the boundary search finds the bit
 * bisection finds, in fewer evaluations; units whose clocks differ in
 * one field are classes apart. (The efficiency policy from
 * what it remembers: test_power_memo.c.) */
#include "test_util.h"

#include <math.h>

#include "bits.h"
#include "power.h"
#include "power_fixture.h"
#include "power_policy.h"

/* Every policy of the registry (power_policy.h). */
static const power_policy_ops *all[POWER_NPOLICIES];

static void load_registry(void) {
  for (int p = 0; p < POWER_NPOLICIES; p++)
    all[p] = power_policy_by_index(p);
}

/* The budget and the ranges hold for every policy on 2,000 fleets. */
static void every_policy_keeps_budget_and_ranges(void **state) {
  (void)state;
  uint64_t seed = 42;
  power_unit u[MAXU];
  double cap[MAXU];
  for (int trial = 0; trial < 2000; trial++) {
    double budget;
    size_t n = random_fleet(&seed, u, &budget);
    for (size_t p = 0; p < N_OF(all); p++) {
      all[p]->split(u, n, budget, cap);
      double total = power_total(u, n, cap);
      if (total > budget * (1 + 1e-12))
        fail_msg("%s: %.17g W over a budget of %.17g W", all[p]->name, total,
                 budget);
      for (size_t k = 0; k < n; k++)
        assert_true(cap[k] >= u[k].lo && cap[k] <= u[k].hi);
    }
  }
}

/* With enough budget for every demand, no dynamic policy holds a unit
 * below its demand. */
static void enough_budget_throttles_nobody(void **state) {
  (void)state;
  uint64_t seed = 7;
  power_unit u[MAXU];
  double cap[MAXU];
  for (int trial = 0; trial < 500; trial++) {
    double budget;
    size_t n = random_fleet(&seed, u, &budget);
    budget = 0;
    for (size_t k = 0; k < n; k++)
      budget += u[k].n * fmin(u[k].hi, fmax(u[k].lo, u[k].demand));
    for (size_t p = 1; p < N_OF(all); p++) {
      all[p]->split(u, n, budget * (1 + 1e-9), cap);
      for (size_t k = 0; k < n; k++)
        if (cap[k] < fmin(u[k].hi, u[k].demand) * (1 - 1e-9))
          fail_msg("%s: unit %zu at %.6g W below its demand %.6g W",
                   all[p]->name, k, cap[k], u[k].demand);
    }
  }
}

static void static_is_equal(void **state) {
  (void)state;
  power_unit u[3] = {unit(8, 1, POWER_INFERENCE, 0.2),
                     unit(16, 0.5, POWER_TRAINING, 1),
                     unit(4, 0, POWER_OTHER, 0)};
  double cap[3];
  power_split_static(u, 3, 28 * 450.0, cap);
  for (size_t k = 0; k < 3; k++)
    assert_close(cap[k], 450, 1e-9, 0);
}

/* Short of demand, proportional gives each unit the same share of it. */
static void proportional_follows_demand(void **state) {
  (void)state;
  power_unit u[2] = {unit(10, 1, POWER_TRAINING, 1),
                     unit(10, 0.6, POWER_TRAINING, 1)};
  double cap[2];
  double demand = 10 * (u[0].demand + u[1].demand);
  power_split_proportional(u, 2, 0.8 * demand, cap);
  assert_close(cap[0] / u[0].demand, 0.8, 1e-9, 0);
  assert_close(cap[1] / u[1].demand, 0.8, 1e-9, 0);
}

/* Priority: inference at its demand, training shares the rest, the
 * others keep their minimum; short even for inference, training and the
 * others keep their minimum. */
static void priority_serves_inference_first(void **state) {
  (void)state;
  power_unit u[3] = {unit(8, 1, POWER_INFERENCE, 0.2),
                     unit(8, 1, POWER_TRAINING, 1), unit(8, 1, POWER_OTHER, 0)};
  double cap[3];
  power_split_priority(u, 3, 8 * (700 + 450 + 200.0), cap);
  assert_close(cap[0], 700, 1e-9, 0);
  assert_close(cap[1], 450, 1e-9, 0);
  assert_close(cap[2], 200, 1e-9, 0);
  power_split_priority(u, 3, 8 * (500 + 200 + 200.0), cap);
  assert_close(cap[0], 500, 1e-9, 0);
  assert_close(cap[1], 200, 1e-9, 0);
  assert_close(cap[2], 200, 1e-9, 0);
}

/* Within a class, higher priority is served first: the budget covers the
 * priority-1 service's demand and leaves the priority-0 one its
 * minimum. */
static void priority_orders_within_a_class(void **state) {
  (void)state;
  power_unit u[2] = {unit(8, 1, POWER_INFERENCE, 0.2),
                     unit(8, 1, POWER_INFERENCE, 0.2)};
  u[1].priority = 1;
  double cap[2];
  power_split_priority(u, 2, 8 * (200 + 700.0), cap);
  assert_close(cap[1], 700, 1e-9, 0);
  assert_close(cap[0], 200, 1e-9, 0);
}

/* uniform_floor: every unit its minimum, then the same watts per GPU
 * for all, a unit that wants less keeping only its demand; with more
 * budget than anyone wants, the rest goes over the room up to hi. */
static void uniform_floor_raises_evenly(void **state) {
  (void)state;
  power_unit u[3] = {unit(8, 0, POWER_OTHER, 0), unit(8, 1, POWER_TRAINING, 1),
                     unit(8, 1, POWER_INFERENCE, 0.2)};
  u[0].demand = 300; /* wants 100 W above its minimum */
  double cap[3];
  power_split_uniform_floor(u, 3, 8 * (300 + 450 + 450.0), cap);
  assert_close(cap[0], 300, 1e-9, 0);
  assert_close(cap[1], 450, 1e-9, 0);
  assert_close(cap[2], 450, 1e-9, 0);
  assert_true(power_total(u, 3, cap) <= 8 * 1200.0);
  power_split_uniform_floor(u, 3, 8 * 3 * 200.0, cap);
  for (size_t k = 0; k < 3; k++)
    assert_close(cap[k], 200, 1e-9, 0);
}

/* The marginal work per watt of an interior unit at its cap. */
static double marginal(const power_unit *u, double cap) {
  double phi = pow((cap - u->idle) / (u->span * u->activity), 1 / u->gamma);
  return u->weight * u->c * pow(phi, u->c - 1) /
         (u->span * u->activity * u->gamma * pow(phi, u->gamma - 1));
}

static double useful_work(const power_unit *u, size_t n, const double *cap) {
  double sum = 0;
  for (size_t k = 0; k < n; k++) {
    double dyn =
        (fmin(cap[k], u[k].demand) - u[k].idle) / (u[k].span * u[k].activity);
    double phi = fmax(u[k].phi_min, fmin(1, pow(dyn, 1 / u[k].gamma)));
    sum += u[k].n * u[k].weight * pow(phi, u[k].c);
  }
  return sum;
}

/* Efficiency equalises the marginals of the units it does not clamp,
 * gives memory-bound decode less than compute-bound training, and does
 * at least the useful work of the other policies on the same budget. */
static void efficiency_equalises_marginals(void **state) {
  (void)state;
  power_unit u[4] = {
      unit(8, 0.9, POWER_TRAINING, 1), unit(8, 0.6, POWER_TRAINING, 0.9),
      unit(8, 0.7, POWER_INFERENCE, 0.5), unit(8, 0.7, POWER_INFERENCE, 0.05)};
  double cap[4];
  double budget = 8 * 4 * 380.0;
  power_split_efficiency(u, 4, budget, cap);
  assert_close(power_total(u, 4, cap), budget, 1e-9, 0);
  double m0 = marginal(&u[0], cap[0]);
  for (size_t k = 1; k < 3; k++)
    if (cap[k] > u[k].lo && cap[k] < u[k].demand)
      assert_close(marginal(&u[k], cap[k]), m0, 1e-6, 0);
  assert_true(cap[3] < cap[2] && cap[2] < cap[0]);
  double best = useful_work(u, 4, cap);
  for (size_t p = 0; p < 3; p++) {
    double other[4];
    all[p]->split(u, 4, budget, other);
    print_message("useful work: efficiency %.4f, %s %.4f\n", best, all[p]->name,
                  useful_work(u, 4, other));
    assert_true(best >= useful_work(u, 4, other) * (1 - 1e-9));
  }
}

/* Units alike but for one field of their clock (weight, c, idle, span,
 * activity, gamma or phi_min, each in turn) are of two classes: four
 * units a, then four of b (a with that field moved), split as a and b's
 * copy b' whose lo is an ulp less (of its own class whatever the clock's
 * compare says, and the same caps, none at lo: phi_min 0.7 keeps every
 * clock's power over it), over budgets from the floor to the top. */
static void clock_fields_part_classes(void **state) {
  (void)state;
  power_unit a = unit(2, 0.9, POWER_INFERENCE, 0.6);
  a.phi_min = 0.7;
  for (int f = 0; f < 7; f++) {
    power_unit b = a;
    double *field[] = {&b.weight,   &b.c,     &b.idle,   &b.span,
                       &b.activity, &b.gamma, &b.phi_min};
    static const double by[] = {2, 0.5, 1.1, 0.9, 0.8, 0.88, 1.07};
    *field[f] *= by[f];
    power_unit u[8], apart[8];
    for (size_t k = 0; k < 8; k++)
      u[k] = apart[k] = k < 4 ? a : b;
    for (size_t k = 4; k < 8; k++)
      apart[k].lo = nextafter(b.lo, 0);
    for (int j = 0; j <= 20; j++) {
      double budget = 8 * 2 * (300 + j * 20.0), cap[8], want[8];
      power_split_efficiency(u, 8, budget, cap);
      power_split_efficiency(apart, 8, budget, want);
      for (size_t k = 0; k < 8; k++)
        if (!sim_same_bits(cap[k], want[k]) || !(want[k] > apart[k].lo))
          fail_msg("field %d, budget %g W: unit %zu's cap %.17g, apart %.17g",
                   f, budget, k, cap[k], want[k]);
    }
  }
}

/* A unit that wants little gives its headroom to one that wants more:
 * stranded power returns to the pool. */
static void headroom_returns_to_the_pool(void **state) {
  (void)state;
  for (size_t p = 1; p < N_OF(all); p++) {
    power_unit u[2] = {unit(8, 0.1, POWER_TRAINING, 1),
                       unit(8, 1, POWER_TRAINING, 1)};
    double cap[2];
    all[p]->split(u, 2, 8 * 2 * 450.0, cap);
    assert_true(cap[0] <= fmax(u[0].lo, u[0].demand) * (1 + 1e-9));
    assert_true(cap[1] > 450);
  }
}

/* ------------------------------------------------------------------ */
/* power_boundary(_from): the bit bisection finds, in fewer evaluations */
/* ------------------------------------------------------------------ */

/* A monotone test function: kind picks its shape, evals counts calls. */
typedef struct shape {
  int kind;
  long evals;
} shape;

static double shaped(const void *ctx, double x, double *slope) {
  shape *s = (shape *)ctx;
  s->evals++;
  switch (s->kind) {
  case 0: /* linear */
    *slope = 3;
    return 3 * x;
  case 1: /* flat, then rising from a kink at 2 */
    *slope = x > 2 ? 5 : 0;
    return x > 2 ? 5 * (x - 2) : 0;
  case 2: /* convex and steep, falling: a sum of power laws */
    *slope = -2.5 * 4e5 * exp(-2.5 * x) - 1e5 * exp(-x);
    return 4e5 * exp(-2.5 * x) + 1e5 * exp(-x);
  default: { /* a staircase of many clamped units, as the policies sum */
    double sum = 0;
    *slope = 0;
    for (int u = 1; u <= 200; u++) {
      double v = x * u * 0.37;
      if (v > 10 && v < 700)
        *slope += u * 0.37;
      sum += v < 10 ? 10 : v > 700 ? 700 : v;
    }
    return sum;
  }
  }
}

/* The end on good's side of the bracket, by bisection to the bit. */
static double bisect(shape *s, double target, double good, double bad) {
  double slope;
  if (shaped(s, good, &slope) > target)
    return good;
  for (;;) {
    double mid = 0.5 * (good + bad);
    if (mid == good || mid == bad)
      return good;
    if (shaped(s, mid, &slope) <= target)
      good = mid;
    else
      bad = mid;
  }
}

/* power_boundary_from, started at share u of the way from good to bad,
 * finds bisection's answer want wherever the crossing is inside the
 * bracket (at its ends the caller checks: power.h). */
static void check_from(int kind, double t, double good, double bad,
                       double want, double u) {
  shape a = {kind, 0};
  double x = good + u * (bad - good);
  if (want == good || nextafter(want, bad) == bad)
    return;
  double got = power_boundary_from(shaped, &a, t, good, bad, x);
  if (got != want)
    fail_msg("from %.17g, target %.17g: %.17g, bisection %.17g", x, t, got,
             want);
}

/* power_boundary_warm, power_boundary_near and power_boundary_newton,
 * started at share u of the way from good_end to bad_end, find
 * bisection's answer want, or bad_end where even it fits. */
static void check_warm(int kind, double t, double good, double bad,
                       double want, double u) {
  double x = good + u * (bad - good), slope;
  shape e = {kind, 0};
  if (!(x != good && x != bad))
    return;
  if (shaped(&e, bad, &slope) <= t)
    want = bad;
  static const char *names[] = {"warm", "near", "newton"};
  for (int way = 0; way < 3; way++) {
    shape a = {kind, 0};
    double got =
        way == 2   ? power_boundary_newton(shaped, &a, t, good, bad, x)
        : way == 1 ? power_boundary_near(shaped, &a, t, good, bad, x)
                   : power_boundary_warm(shaped, &a, t, good, bad, x);
    if (got != want)
      fail_msg("%s from %.17g, target %.17g: %.17g, bisection %.17g",
               names[way], x, t, got, want);
  }
}

static void boundary_is_bisection_to_the_bit(void **state) {
  (void)state;
  static const struct {
    int kind;
    double good, bad, lo_target, hi_target;
  } cases[] = {
      {0, -100, 100, -250, 250},      /* rising: good below */
      {1, 0, 50, -1, 200},            /* a kink, and targets below it */
      {2, 300, -300, 1e3, 1e9},       /* falling: good above */
      {3, 0, 10, 2500, 140000},       /* clamps on both sides */
      {3, 0, 1e-3, 2000, 2000.00001}, /* target at the floor's rounding */
  };
  uint64_t seed = 11;
  long fast = 0, slow = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int k = 0; k < 200; k++) {
      double t = cases[c].lo_target +
                 (cases[c].hi_target - cases[c].lo_target) * uniform(&seed);
      shape a = {cases[c].kind, 0}, b = {cases[c].kind, 0};
      double got = power_boundary(shaped, &a, t, cases[c].good, cases[c].bad);
      double want = bisect(&b, t, cases[c].good, cases[c].bad);
      if (got != want)
        fail_msg("case %zu, target %.17g: %.17g, bisection %.17g", c, t, got,
                 want);
      check_from(cases[c].kind, t, cases[c].good, cases[c].bad, want,
                 uniform(&seed));
      check_warm(cases[c].kind, t, cases[c].good, cases[c].bad, want,
                 uniform(&seed));
      fast += a.evals;
      slow += b.evals;
    }
  /* The point of it: a fraction of bisection's evaluations. */
  assert_true(2 * fast < slow);
}

static void policies_by_name(void **state) {
  (void)state;
  for (int i = 0; power_policy_names[i] != NULL; i++)
    assert_string_equal(power_policy_by_index(i)->name, power_policy_names[i]);
  assert_null(power_policy_by_index(POWER_NPOLICIES));
  assert_null(power_policy_by_index(-1));
}

int main(void) {
  load_registry();
  struct CMUnitTest tests[12];
  size_t n = 0;
  TEST_ADD(tests, n, every_policy_keeps_budget_and_ranges);
  TEST_ADD(tests, n, enough_budget_throttles_nobody);
  TEST_ADD(tests, n, static_is_equal);
  TEST_ADD(tests, n, proportional_follows_demand);
  TEST_ADD(tests, n, priority_serves_inference_first);
  TEST_ADD(tests, n, priority_orders_within_a_class);
  TEST_ADD(tests, n, uniform_floor_raises_evenly);
  TEST_ADD(tests, n, efficiency_equalises_marginals);
  TEST_ADD(tests, n, clock_fields_part_classes);
  TEST_ADD(tests, n, headroom_returns_to_the_pool);
  TEST_ADD(tests, n, policies_by_name);
  TEST_ADD(tests, n, boundary_is_bisection_to_the_bit);
  return _cmocka_run_group_tests("power", tests, n, NULL, NULL);
}
