/* test_power_memo.c - the efficiency policy from what it remembers
 * (power_memo): started from any remembered level (last period's, one
 * near, one far, the range's ends, none) and through periods of drift, by
 * Halley's steps near the last or from an end, it finds plain
 * bisection's level and caps, bit for bit; its fill remembered is the
 * fresh fill's, over runs and with pinned runs as over units; the arrays
 * its memo keeps carry over fleets of any size, and are ready
 * (power_memo_ready) for as many units as made them; its classes are
 * found as they outgrow the few slots of its class hash. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "power.h"
#include "power_fixture.h"
#include "power_policy.h"

/* ------------------------------------------------------------------ */
/* The efficiency policy from a memo: the bisection's level, any start */
/* ------------------------------------------------------------------ */

/* Starting from any remembered level (last period's, one nearby, one far
 * off, the range's ends, none) gives the bisection's level and the caps of
 * the split without a memo, bit for bit. */
static void remembered_level_is_the_bisections(void **state) {
  (void)state;
  uint64_t seed = 5;
  double last = NAN;
  for (int trial = 0; trial < 300; trial++) {
    power_unit u[MAXU];
    double budget, want_cap[MAXU], cap[MAXU];
    size_t n = classed_fleet(&seed, u, &budget);
    double level = efficiency_bisect(u, n, budget);
    power_split_efficiency(u, n, budget, want_cap);
    const double starts[] = {NAN,          last,         level,
                             level + 1e-9, level - 1e-9, level + 0.7,
                             level - 0.7,  level + 40,   level - 40,
                             -300,         300,          -299.5,
                             299.5,        INFINITY};
    for (size_t s = 0; s < N_OF(starts); s++) {
      power_memo memo = {.level = starts[s]};
      power_split_efficiency_from(u, n, budget, cap, &memo, NULL);
      power_memo_clear(&memo);
      if (memo.level != level || memcmp(cap, want_cap, n * sizeof *cap) != 0)
        fail_msg("trial %d, start %.17g: level %.17g, bisection %.17g", trial,
                 starts[s], memo.level, level);
    }
    last = level;
  }
}

/* 200 periods of drift: each unit's activity moved by up to 3% with
 * probability 0.3, the policy's remembered level then the bisection's. */
static void drift_periods(power_unit *u, size_t n, double budget, double *cap,
                          power_memo *memo, uint64_t *seed) {
  for (int period = 0; period < 200; period++) {
    for (size_t k = 0; k < n; k++)
      if (uniform(seed) < 0.3)
        u[k].activity = fmin(1, u[k].activity * (0.97 + 0.06 * uniform(seed)));
    power_split_efficiency_from(u, n, budget, cap, memo, NULL);
    assert_true(memo->level == efficiency_bisect(u, n, budget));
  }
}

/* A memo carried period to period while activities drift: every period's
 * level is the bisection's. */
static void remembered_level_follows_drift(void **state) {
  (void)state;
  uint64_t seed = 9;
  power_unit u[MAXU];
  double budget, cap[MAXU];
  size_t n = classed_fleet(&seed, u, &budget);
  power_memo memo = {.level = NAN};
  drift_periods(u, n, budget, cap, &memo, &seed);
  power_memo_clear(&memo);
}

/* The same drift under a budget half-way between the units' floors and
 * tops, the search's start near last period's level found by Halley's
 * steps (the error cubed a step), total_at's search from the start and
 * its neighbour (level_close: the runs are short): the level's sums,
 * class by class and unit by unit, 633 in 200 periods (734 with every
 * Halley step grouped_at's own; without the neighbour first 909,
 * Newton's steps 1031, 997 with Halley's stopping rule), and 2,522
 * classes' clocks worked out: Halley's steps after the first move the
 * first's clocks by exp (power_efficiency_near.c's near_at), each its
 * own two pow calls 3,001. */
static void remembered_level_near_by_halley(void **state) {
  (void)state;
  uint64_t seed = 9;
  power_unit u[MAXU];
  double budget, cap[MAXU];
  size_t n = classed_fleet(&seed, u, &budget);
  /* a budget half-way between every unit's floor and its top */
  budget = 0.5 * (efficiency_total(u, n, 300) + efficiency_total(u, n, -300));
  power_memo memo = {.level = NAN};
  power_split_efficiency_from(u, n, budget, cap, &memo, NULL);
  unsigned long before = power__level_evals(), clocks = power__clock_evals();
  drift_periods(u, n, budget, cap, &memo, &seed);
  power_memo_clear(&memo);
  unsigned long evals = power__level_evals() - before;
  clocks = power__clock_evals() - clocks;
  if (evals > 660 || clocks > 2600)
    fail_msg("%lu sums, %lu clocks in 200 periods", evals, clocks);
}

/* A budget for classed_fleet's units from the drawn one to everything at
 * its top and beyond, where most classes run at full clock at most of
 * the levels a search tries (the kept full clocks of class_from_raw). */
static double budget_to_the_top(uint64_t *seed, const power_unit *u, size_t n,
                                double drawn) {
  double top = efficiency_total(u, n, -300), r = uniform(seed);
  if (r < 0.3)
    return top * (1 - 1e-3 * uniform(seed));
  if (r < 0.5)
    return top * (1 - 1e-9 * uniform(seed));
  return r < 0.7 ? top * (1 + 1e-12) : drawn;
}

/* A memo whose level is at an end of the range (the last budget fitted
 * every unit at its top, or none at its floor), with any inner level to
 * start from (none, the answer, nearby, far off), and one memo carried
 * from fleet to fleet, its budget fitting everything now and then: the
 * bisection's level and a fresh split's caps, bit for bit. */
static void level_from_an_end_is_the_bisections(void **state) {
  (void)state;
  uint64_t seed = 17;
  power_memo carried = {.level = NAN};
  for (int trial = 0; trial < 300; trial++) {
    power_unit u[MAXU];
    double budget, want_cap[MAXU], cap[MAXU];
    size_t n = classed_fleet(&seed, u, &budget);
    budget = budget_to_the_top(&seed, u, n, budget);
    double level = efficiency_bisect(u, n, budget);
    power_split_efficiency(u, n, budget, want_cap);
    const double inner[] = {0, NAN, level, level + 0.5, level - 3, 250, -250};
    for (size_t s = 0; s <= 2 * N_OF(inner); s++) {
      power_memo memo = {.level = s % 2 ? -300 : 300,
                         .inner = s < 2 * N_OF(inner) ? inner[s / 2] : 0};
      power_memo *m = s == 2 * N_OF(inner) ? &carried : &memo;
      power_split_efficiency_from(u, n, budget, cap, m, NULL);
      if (m->level != level || memcmp(cap, want_cap, n * sizeof *cap) != 0)
        fail_msg("trial %d, start %zu: level %.17g, bisection %.17g", trial,
                 s, m->level, level);
      power_memo_clear(&memo);
    }
  }
  power_memo_clear(&carried);
}

/* classed_fleet's units with some ranges moved (a rack's room, a higher
 * floor, another demand): units alike in their clocks but not in their
 * range, which the policy's classes must keep apart. */
static size_t ranged_fleet(uint64_t *seed, power_unit *u, double *budget) {
  size_t n = classed_fleet(seed, u, budget);
  for (size_t k = 0; k < n; k++) {
    double r = uniform(seed);
    if (r < 0.2)
      u[k].hi -= 50 * uniform(seed);
    else if (r < 0.3)
      u[k].lo += 20 * uniform(seed);
    else if (r < 0.4)
      u[k].demand *= 0.8 + 0.4 * uniform(seed);
  }
  *budget = drawn_budget(seed, u, n);
  return n;
}

/* One memo carried over fleets of every size, larger and smaller in turn
 * (its arrays grown, then reused with the hash slots of earlier calls
 * left in them), with units alike in their clocks but not their ranges:
 * every split is plain bisection's level (a sum written apart from the
 * policy, unit by unit) and a fresh split's caps, bit for bit. */
static void memo_arrays_carry_over(void **state) {
  (void)state;
  uint64_t seed = 13;
  power_memo memo = {.level = NAN};
  for (int trial = 0; trial < 400; trial++) {
    power_unit u[MAXU];
    double budget, cap[MAXU], want_cap[MAXU];
    size_t n = ranged_fleet(&seed, u, &budget);
    power_split_efficiency(u, n, budget, want_cap);
    power_split_efficiency_from(u, n, budget, cap, &memo, NULL);
    double level = efficiency_bisect(u, n, budget);
    if (memo.level != level || memcmp(cap, want_cap, n * sizeof *cap) != 0)
      fail_msg("trial %d (%zu units): level %.17g, bisection %.17g", trial, n,
               memo.level, level);
  }
  assert_non_null(memo.work);
  power_memo_clear(&memo);
  assert_null(memo.work);
  power_memo_clear(&memo); /* nothing left: does nothing */
}

/* A water-filling's inputs as the efficiency policy hands them: units
 * without measured work weighted by their demand up to what they want,
 * the others at weight 0 up to their cap; budgets from below the floor
 * (every lambda too much: the answer is 0), through a hair above it
 * (where the sum is flat but for rounding) to above every top. */
static size_t fill_inputs(uint64_t *seed, power_unit *u, double *w,
                          double *top, double *budget) {
  size_t n = classed_fleet(seed, u, budget);
  double floor = 0;
  for (size_t k = 0; k < n; k++) {
    bool rest = uniform(seed) < 0.6;
    w[k] = rest ? u[k].demand : 0;
    top[k] = rest ? fmin(fmax(u[k].demand, u[k].lo), u[k].hi)
                  : u[k].lo + uniform(seed) * (u[k].hi - u[k].lo);
    floor += u[k].n * u[k].lo;
  }
  double r = uniform(seed);
  if (r < 0.15)
    *budget = floor * (1 - 1e-15);
  else if (r < 0.3)
    *budget = floor * (1 + 1e-13 * uniform(seed));
  return n;
}

/* The fill searched from a remembered lambda (last call's, the answer,
 * a few doubles off it, far off, the range's ends, none) gives the caps
 * of the fill from nothing, bit for bit, and remembers the same lambda
 * whatever it started from (an answer of 0 perhaps as the lambda before
 * it, negated: a start for the next fill). */
static void remembered_fill_is_the_fresh_fill(void **state) {
  (void)state;
  uint64_t seed = 21;
  double last = 0;
  for (int trial = 0; trial < 400; trial++) {
    power_unit u[MAXU];
    double w[MAXU], top[MAXU], budget, want[MAXU], cap[MAXU];
    size_t n = fill_inputs(&seed, u, w, top, &budget);
    power_fill(u, n, w, top, budget, want);
    double answer = 0;
    power_fill_from(u, n, w, top, budget, cap, &answer);
    const double starts[] = {0,
                             NAN,
                             last,
                             answer,
                             nextafter(answer, 0),
                             nextafter(answer, 2),
                             answer * (1 + 1e-14),
                             answer * (1 - 1e-14),
                             answer * 0.5,
                             answer * 1.5 + 1e-3,
                             1e-300,
                             0.999,
                             1e3,
                             -1,
                             -answer,
                             -(answer * 0.5 + 1e-3),
                             INFINITY};
    for (size_t s = 0; s < N_OF(starts); s++) {
      double memo = starts[s];
      power_fill_from(u, n, w, top, budget, cap, &memo);
      /* An answer of 0 is remembered as 0 or as an earlier lambda negated */
      if ((memo < 0 ? 0 : memo) != answer ||
          memcmp(cap, want, n * sizeof *cap) != 0)
        fail_msg("trial %d, start %.17g: lambda %.17g, fresh %.17g", trial,
                 starts[s], memo, answer);
    }
    last = answer;
  }
}

/* One memo carried while demands drift period to period (the units'
 * inputs change, some by an ulp): every fill is the fresh fill's. */
static void remembered_fill_follows_drift(void **state) {
  (void)state;
  uint64_t seed = 23;
  power_unit u[MAXU];
  double w[MAXU], top[MAXU], budget, want[MAXU], cap[MAXU], memo = 0;
  size_t n = fill_inputs(&seed, u, w, top, &budget);
  for (int period = 0; period < 300; period++) {
    for (size_t k = 0; k < n; k++) {
      double r = uniform(&seed);
      if (w[k] > 0 && r < 0.3)
        w[k] *= 0.97 + 0.06 * uniform(&seed);
      else if (w[k] > 0 && r < 0.4)
        w[k] = nextafter(w[k], 0);
    }
    power_fill(u, n, w, top, budget, want);
    power_fill_from(u, n, w, top, budget, cap, &memo);
    assert_memory_equal(cap, want, n * sizeof *cap);
  }
}

/* The fill over runs (lengths 1 to 12: sums a run at once, its slope a
 * run's part at once) gives every unit the cap of plain bisection's
 * lambda on the units one by one, bit for bit. */
static void fill_over_runs_is_plain_bisection(void **state) {
  (void)state;
  uint64_t seed = 29;
  static power_unit fleet[12 * MAXU];
  static double aw[12 * MAXU], atop[12 * MAXU];
  for (int trial = 0; trial < 200; trial++) {
    power_unit u[MAXU];
    double w[MAXU], top[MAXU], budget, cap[MAXU], memo = 0;
    size_t n = fill_inputs(&seed, u, w, top, &budget), first[MAXU], len[MAXU];
    size_t units = 0;
    for (size_t r = 0; r < n; r++) {
      first[r] = units, len[r] = 1 + (r + (size_t)trial) % 12;
      for (size_t i = 0; i < len[r]; i++, units++)
        fleet[units] = u[r], aw[units] = w[r], atop[units] = top[r];
    }
    budget *= units / (double)n; /* about the same share of the units */
    power_runs runs = {n, first, len};
    power_fill_runs(fleet, &runs, w, top, budget, cap, &memo);
    double lambda = plain_fill_lambda(fleet, units, aw, atop, budget);
    assert_fill_caps("trial", trial, u, n, w, top, cap, lambda);
  }
}

/* Run kinds for pinned_runs_fill_as_units: pinned at lo (weight 0) with
 * n lo the same bits across kinds (a, b), another (c), lo 0 (z), lo over
 * top (t); or filled (f, a demand of its own). */
typedef struct run_kind {
  char name;
  double n, lo, w, top;
} run_kind;

static const run_kind kinds[] = {{'a', 2, 150, 0, 400}, {'b', 4, 75, 0, 300},
                                 {'c', 2, 160, 0, 400}, {'z', 2, 0, 0, 400},
                                 {'t', 2, 150, 0, 120}, {'f', 2, 100, 1, 600}};

static const run_kind *kind_of(char c) {
  size_t k = 0;
  while (kinds[k].name != c && kinds[k].name != 'f')
    k++;
  return &kinds[k];
}

/* The fill over runs laid out as pattern (lengths 1 to 12 by turns, the
 * filled runs' demands drawn), budget at share of the way from the
 * floor to the tops; each run's cap is plain bisection's over the units,
 * bit for bit. */
static void check_pinned_fill(const char *pattern, double share,
                              uint64_t *seed) {
  static power_unit fleet[12 * MAXU];
  static double aw[12 * MAXU], atop[12 * MAXU];
  power_unit u[MAXU];
  double w[MAXU] = {0}, top[MAXU] = {0}, cap[MAXU], memo = 0, floor = 0;
  double full = 0;
  size_t n = strlen(pattern), first[MAXU], len[MAXU], units = 0;
  for (size_t r = 0; r < n; r++) {
    const run_kind *k = kind_of(pattern[r]);
    u[r] = (power_unit){.n = (uint32_t)k->n, .lo = k->lo, .hi = 700};
    w[r] = k->w > 0 ? 50 + 500 * uniform(seed) : 0;
    top[r] = k->top;
    first[r] = units, len[r] = 1 + r % 12;
    for (size_t i = 0; i < len[r]; i++, units++) {
      fleet[units] = u[r], aw[units] = w[r], atop[units] = top[r];
      floor += k->n * k->lo, full += k->n * fmax(k->lo, k->top);
    }
  }
  double budget = floor + share * (full - floor);
  power_runs runs = {n, first, len};
  power_fill_runs(fleet, &runs, w, top, budget, cap, &memo);
  double lambda = plain_fill_lambda(fleet, units, aw, atop, budget);
  assert_fill_caps(pattern, share, u, n, w, top, cap, lambda);
}

/* Runs pinned at lo taken as one term where successive ones add the same
 * n lo (fill_pack): the fill is still the units' own, bit for bit, with
 * such runs next to each other, apart, of other products, of lo 0 or
 * over top, and budgets from a hair under the floor to over the tops. */
static void pinned_runs_fill_as_units(void **state) {
  (void)state;
  static const char *patterns[] = {
      "aaaaf",   "abababf",  "faaaaaaaaaaaaf", "acacfacca",    "azazazf",
      "atatatf", "ffaaffbb", "aaaaaaaaaaaaaa", "fabcztfabcztf"};
  static const double shares[] = {-1e-15, 1e-13, 0.01, 0.3, 0.7, 0.999, 2};
  uint64_t seed = 31;
  for (size_t p = 0; p < sizeof patterns / sizeof *patterns; p++)
    for (size_t b = 0; b < sizeof shares / sizeof *shares; b++)
      check_pinned_fill(patterns[p], shares[b], &seed);
}

/* power_memo_ready: a memo's work arrays made by a split of n units hold
 * every split of as many or fewer (the next makes nothing), not of more;
 * none before the first split or after power_memo_clear. */
static void memo_ready_for_as_many(void **state) {
  (void)state;
  static const struct {
    size_t split, ask; /* split: 0 for none */
    bool ready;
  } rows[] = {{0, 1, false}, {0, 0, false}, {8, 8, true},  {8, 1, true},
              {8, 9, false}, {5, 5, true},  {5, 4, true},  {5, 6, false},
              {1, 1, true},  {1, 2, false}};
  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
    power_memo memo = {.level = NAN};
    power_unit u[9];
    double cap[9];
    for (size_t j = 0; j < 9; j++)
      u[j] = unit(8, 0.5 + 0.05 * (double)j, POWER_INFERENCE, 0.5);
    if (rows[k].split > 0)
      power_split_efficiency_from(u, rows[k].split, 8 * 400.0 * 9, cap, &memo,
                                  NULL);
    if (power_memo_ready(&memo, rows[k].ask) != rows[k].ready)
      fail_msg("split of %zu, asked for %zu: ready %d", rows[k].split,
               rows[k].ask, !rows[k].ready);
    power_memo_clear(&memo);
    assert_false(power_memo_ready(&memo, 1));
  }
}

/* Units of k classes by turns (unit j of class j % k: no two units of a
 * class side by side, so each unit after the first k is found through
 * the class hash), each class its own activity. */
static void classes_by_turns(power_unit *u, size_t n, size_t k) {
  for (size_t j = 0; j < n; j++)
    u[j] = unit(8, 0.2 + 0.7 * (double)(j % k) / (double)k, POWER_INFERENCE,
                0.5);
}

/* A memo's splits of k classes by turns, k rising past the few slots'
 * room within a split and falling back (the classes put in the memo's
 * slots again as they outgrow the few: power_classes.c): each split
 * finds its k classes, no more, and the caps of a split without a memo,
 * bit for bit. */
static void classes_found_as_they_outgrow_the_few_slots(void **state) {
  (void)state;
  static const size_t ks[] = {3,  12, 16, 40, 2,  33, 1,  31, 32,
                              17, 16, 64, 5,  100, 15, 48, 7, 200};
  enum { N = 400 };
  power_memo memo = {.level = NAN};
  static power_unit u[N];
  static double cap[N], want_cap[N];
  for (size_t t = 0; t < sizeof ks / sizeof *ks; t++) {
    classes_by_turns(u, N, ks[t]);
    double budget = 8 * 450.0 * N;
    power_split_efficiency(u, N, budget, want_cap);
    power_split_efficiency_from(u, N, budget, cap, &memo, NULL);
    if (power__memo_classes(&memo) != ks[t])
      fail_msg("split %zu: %zu classes found for %zu", t,
               power__memo_classes(&memo), ks[t]);
    if (memcmp(cap, want_cap, sizeof cap) != 0)
      fail_msg("split %zu (%zu classes): caps not the memo-less split's", t,
               ks[t]);
  }
  power_memo_clear(&memo);
}

/* n units, each its own class: c, activity (0, no measured work, for
 * a share idle of them) and room drawn, one to eight GPUs. */
static void many_classes(power_unit *u, size_t n, double idle,
                         uint64_t *seed) {
  for (size_t k = 0; k < n; k++) {
    double c = 0.05 + 0.9 * uniform(seed);
    double a = idle > 0 && uniform(seed) < idle ? 0 : 0.05 + 0.9 * uniform(seed);
    u[k] = unit(1 + (uint32_t)(uniform(seed) * 8), a, POWER_INFERENCE, c);
    u[k].hi = 300 + 400 * uniform(seed);
  }
}

/* Half the units' activities moved by up to 10% (an idle one stays 0). */
static void drift_activities(power_unit *u, size_t n, uint64_t *seed) {
  for (size_t k = 0; k < n; k++)
    if (uniform(seed) < 0.5)
      u[k].activity = fmin(1, u[k].activity * (0.9 + 0.2 * uniform(seed)));
}

/* A group of many classes (each unit its own: activity, c and room
 * drawn) through periods of drift, its memo carried: the caps put back
 * from the search's last fit (power__caps_put_back) are the caps worked
 * out again at the answer (POWER_PLAIN_CAPS_KEPT), bit for bit, and the
 * level is the bisection's. Budgets from near the floor to near the
 * top, so the live classes, the full and the settled low all occur. */
static void kept_caps_are_the_caps_worked_out_again(void **state) {
  (void)state;
  enum { N = 700 };
  static power_unit u[N];
  static double cap[N], want_cap[N];
  uint64_t seed = 31;
  power_memo memo = {.level = NAN}, plain = {.level = NAN};
  many_classes(u, N, 0, &seed);
  unsigned long put_back = power__caps_put_back();
  for (int period = 0; period < 300; period++) {
    drift_activities(u, N, &seed);
    double lo = efficiency_total(u, N, 300), hi = efficiency_total(u, N, -300);
    double budget = lo + (0.02 + 0.96 * uniform(&seed)) * (hi - lo);
    power__plain = POWER_PLAIN_CAPS_KEPT;
    power_split_efficiency_from(u, N, budget, want_cap, &plain, NULL);
    power__plain = 0;
    if (period % 3 == 2) /* a start far off: the search's steps leave the
                            live list's range, made again after a fit */
      memo.level += 4 * (uniform(&seed) - 0.5);
    power_split_efficiency_from(u, N, budget, cap, &memo, NULL);
    if (memo.level != efficiency_bisect(u, N, budget) ||
        memcmp(cap, want_cap, sizeof cap) != 0)
      fail_msg("period %d: caps or level not the plain split's", period);
  }
  put_back = power__caps_put_back() - put_back;
  if (put_back < 100) /* the path is taken */
    fail_msg("%lu of 300 splits put their caps back", put_back);
  power_memo_clear(&memo);
  power_memo_clear(&plain);
}

/* A fill held at its floor over many runs (lengths 1 to 4), as the
 * efficiency policy hands it at the request level: the valued runs
 * pinned at lo, the others' weights drifting, the budget at the floor
 * or a hair above or below it (some periods well above: no kept sums;
 * below, nothing fits: 0), the memo carried. Its brackets closed by the finish (power_fill.c's
 * fill_finish: the one term that differs between a bracket's ends) give
 * the plain search's lambda and caps, bit for bit, the finish left off
 * (power__fill_finish_off). It fails (seen) with the finish's lambda a
 * double past its bisection's, and with its sum's tail ended where it
 * meets the kept sum a term early. */
static void fill_finish_is_the_search(void **state) {
  (void)state;
  enum { RUNS = 700, UNITS = 4 * RUNS, PERIODS = 80 };
  power_unit *u = calloc(UNITS, sizeof *u);
  double *w = calloc(4 * RUNS, sizeof *w), *top = w + RUNS, *cap = w + 2 * RUNS;
  double *plain = w + 3 * RUNS;
  size_t *first = calloc(2 * RUNS, sizeof *first), *len = first + RUNS;
  assert_true(u != NULL && w != NULL && first != NULL);
  uint64_t seed = 97;
  size_t units = 0;
  for (size_t r = 0; r < RUNS; r++) {
    power_unit p = unit(1 + (uint32_t)(r % 4), 0.5, POWER_INFERENCE, 0.5);
    p.lo = 100 + (double)(r % 7) + (r % 11 == 0 ? 0.3 : 0);
    first[r] = units;
    len[r] = 1 + (r % 3 == 0 ? r % 4 : 0);
    for (size_t i = 0; i < len[r]; i++)
      u[units++] = p;
    bool pinned = uniform(&seed) < 0.6;
    w[r] = pinned ? 0 : 300 + 600 * uniform(&seed);
    top[r] = pinned ? p.lo : 250 + 500 * uniform(&seed);
  }
  power_runs runs = {RUNS, first, len};
  static const double above[] = {0,    0x1p-50, 1e-12, -1e-15,
                                 1e-9, 1e-7,    1e-3,  -1e-12};
  double memo = 0, memo_plain = 0;
  unsigned long finishes = power__fill_finishes();
  for (int s = 0; s < PERIODS; s++) {
    for (size_t r = 0; r < RUNS; r++)
      if (w[r] > 0 && uniform(&seed) < 0.3)
        w[r] *= 0.99 + 0.02 * uniform(&seed);
    double floor = 0;
    for (size_t r = 0; r < RUNS; r++)
      floor += (double)len[r] * u[first[r]].n * u[first[r]].lo;
    double budget = floor * (1 + above[s % 8]);
    power__fill_finish_off = true;
    power_fill_runs(u, &runs, w, top, budget, plain, &memo_plain);
    power__fill_finish_off = false;
    power_fill_runs(u, &runs, w, top, budget, cap, &memo);
    if (!(memo == memo_plain) || memcmp(cap, plain, RUNS * sizeof *cap) != 0)
      fail_msg("period %d: lambda %.17g, the search's %.17g", s, memo,
               memo_plain);
  }
  unsigned long closed = power__fill_finishes() - finishes;
  if (closed < PERIODS / 3)
    fail_msg("%lu brackets closed by the finish in %d fills", closed,
             PERIODS);
  free(u);
  free(w);
  free(first);
}

/* A group as the request level's: most units their own class (busy,
 * activity and c drawn), the rest idle (activity 0: no measured work)
 * with one of three lo's, in no order and moving between busy and idle
 * from period to period, in runs of one to three alike units (the
 * caller's marks), the memo carried and asked for its lines
 * (power_memo_ask) before each split. The idle units are found in the
 * last idle class a split met where their lo is its (power_classes.c's
 * idle_class_of): the classes and caps are those of the hash alone
 * (POWER_PLAIN_IDLE_CLASS), bit for bit. It fails (seen) with an idle
 * unit put in the last idle class whatever its lo. */
static void idle_units_find_their_class_as_the_hash(void **state) {
  (void)state;
  enum { N = 900, PERIODS = 60 };
  static const double los[] = {200, 150, 200.5};
  static power_unit u[N];
  static double cap[N], want_cap[N];
  static uint8_t alike[N];
  uint64_t seed = 71;
  power_memo memo = {.level = NAN}, plain = {.level = NAN};
  power_memo_ask(&memo); /* no work arrays yet: nothing */
  for (int period = 0; period < PERIODS; period++) {
    for (size_t k = 0; k < N;) {
      bool idle = uniform(&seed) < 0.35;
      power_unit p = unit(1 + (uint32_t)(uniform(&seed) * 4),
                          idle ? 0 : 0.05 + 0.9 * uniform(&seed),
                          POWER_INFERENCE, 0.05 + 0.9 * uniform(&seed));
      p.lo = los[(size_t)(uniform(&seed) * 3)];
      p.demand = idle ? p.lo + 300 * uniform(&seed) : p.demand;
      size_t len = 1 + (size_t)(uniform(&seed) * 3);
      for (size_t j = 0; j < len && k < N; j++, k++) {
        u[k] = p;
        alike[k] = j > 0;
      }
    }
    double lo = efficiency_total(u, N, 300), hi = efficiency_total(u, N, -300);
    double budget = lo + (0.02 + 0.96 * uniform(&seed)) * (hi - lo);
    power__plain = POWER_PLAIN_IDLE_CLASS;
    power_split_efficiency_from(u, N, budget, want_cap, &plain, alike);
    size_t want_classes = power__memo_classes(&plain);
    power__plain = 0;
    power_memo_ask(&memo);
    power_split_efficiency_from(u, N, budget, cap, &memo, alike);
    if (power__memo_classes(&memo) != want_classes ||
        memcmp(cap, want_cap, sizeof cap) != 0 || !(memo.level == plain.level))
      fail_msg("period %d: %zu classes for the hash's %zu, or caps not its",
               period, power__memo_classes(&memo), want_classes);
  }
  power_memo_clear(&memo);
  power_memo_clear(&plain);
}

/* A group of many classes (each unit its own: activity, c and room
 * drawn; a tenth idle) through periods of drift, its memo carried, the
 * budget near the floor (the group held there: held_below_floor's
 * classes) in a third of them and anywhere between floor and top in the
 * rest: the classes' clocks worked out in chunks (power_efficiency.c's
 * chunk_at) give the caps and level of the same splits one class at a
 * time (POWER_PLAIN_CLOCK_CHUNKS), bit for bit. It fails (seen) with a
 * class's raw clock taken from the class before it in its chunk, and
 * with each chunk's last class left as it was. */
static void clocks_in_chunks_are_one_at_a_time(void **state) {
  (void)state;
  enum { N = 800, PERIODS = 120 };
  unsigned long evals = power__clock_evals();
  power_memo memo = {.level = NAN}, plain = {.level = NAN};
  static power_unit u[N];
  uint64_t seed = 53;
  many_classes(u, N, 0.1, &seed);
  static double cap[N], want_cap[N];
  for (int period = 0; period < PERIODS; period++) {
    drift_activities(u, N, &seed);
    double lo = efficiency_total(u, N, 300), hi = efficiency_total(u, N, -300);
    double budget = period % 3 == 0
                        ? lo * (1 + 1e-9 * uniform(&seed))
                        : lo + (0.02 + 0.96 * uniform(&seed)) * (hi - lo);
    power__plain = POWER_PLAIN_CLOCK_CHUNKS;
    power_split_efficiency_from(u, N, budget, want_cap, &plain, NULL);
    power__plain = 0;
    power_split_efficiency_from(u, N, budget, cap, &memo, NULL);
    if (!(memo.level == plain.level) || memcmp(cap, want_cap, sizeof cap) != 0)
      fail_msg("period %d: level %.17g, one at a time %.17g, or caps not theirs",
               period, memo.level, plain.level);
  }
  if (power__clock_evals() - evals < 100000) /* the clocks are worked out */
    fail_msg("%lu clocks worked out", power__clock_evals() - evals);
  power_memo_clear(&memo);
  power_memo_clear(&plain);
}

int main(void) {
  struct CMUnitTest tests[15];
  size_t n = 0;
  TEST_ADD(tests, n, remembered_level_is_the_bisections);
  TEST_ADD(tests, n, remembered_level_follows_drift);
  TEST_ADD(tests, n, remembered_level_near_by_halley);
  TEST_ADD(tests, n, level_from_an_end_is_the_bisections);
  TEST_ADD(tests, n, remembered_fill_is_the_fresh_fill);
  TEST_ADD(tests, n, remembered_fill_follows_drift);
  TEST_ADD(tests, n, fill_over_runs_is_plain_bisection);
  TEST_ADD(tests, n, pinned_runs_fill_as_units);
  TEST_ADD(tests, n, memo_arrays_carry_over);
  TEST_ADD(tests, n, memo_ready_for_as_many);
  TEST_ADD(tests, n, classes_found_as_they_outgrow_the_few_slots);
  TEST_ADD(tests, n, kept_caps_are_the_caps_worked_out_again);
  TEST_ADD(tests, n, fill_finish_is_the_search);
  TEST_ADD(tests, n, idle_units_find_their_class_as_the_hash);
  TEST_ADD(tests, n, clocks_in_chunks_are_one_at_a_time);
  return _cmocka_run_group_tests("power_memo", tests, n, NULL, NULL);
}
