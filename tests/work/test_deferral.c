/* test_deferral.c - grid-aware timing of flexible jobs: where the window
 * lands and when the threshold runs, pauses or is forced, on synthetic
 * signals; what every plan keeps (its work, its deadline, the signal's
 * data); arguments refused; the same input giving the same plan; and the
 * issue's figure: the CO2 that deferral saves a year of flexible jobs on
 * the real 2023 California and PJM carbon series, per flexibility tier. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deferral.h"

#define H 3600.0

static const sig_config no_signal = {
    .scale = 1, .value = NAN, .low = NAN, .high = NAN};

static sig_series signal_from(const sig_config *c) {
  sig_series s;
  sim_error err = {0};
  if (sig_init(&s, c, NULL, NULL, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  return s;
}

static sig_series constant_signal(double value) {
  sig_config c = no_signal;
  c.value = value;
  return signal_from(&c);
}

/* A daily schedule of steps, given as (hour, value) pairs. */
static sig_series daily_signal(const double (*steps)[2], size_t n) {
  sig_daily_step daily[8];
  assert_true(n <= N_OF(daily));
  for (size_t i = 0; i < n; i++)
    daily[i] = (sig_daily_step){steps[i][0] * H, steps[i][1]};
  sig_config c = no_signal;
  c.daily = daily;
  c.ndaily = n;
  return signal_from(&c);
}

/* Dear all day but a cheap block from 10 h to 14 h: one valley a day. */
static sig_series cheap_block_signal(void) {
  static const double steps[][2] = {{0, 400}, {10, 100}, {14, 400}};
  return daily_signal(steps, N_OF(steps));
}

/* Cheap until 2 h, dear from 2 h to 5 h, cheap again until midnight. */
static sig_series dear_block_signal(void) {
  static const double steps[][2] = {{0, 100}, {2, 500}, {5, 100}};
  return daily_signal(steps, N_OF(steps));
}

static defer_plan plan_of(const sig_series *s, defer_policy policy,
                          double threshold, double t0, double work,
                          double deadline, double step) {
  defer_plan p;
  sim_error err = {0};
  int rc = defer_plan_make(s, policy, threshold, t0, work, deadline, step, NULL,
                           &p, &err);
  if (rc != SIM_OK)
    fail_msg("policy %d, t0 %g s, work %g s, deadline %g s: %s", (int)policy,
             t0, work, deadline, err.msg);
  return p;
}

/* What every plan keeps: intervals in order, not touching, non-empty,
 * inside [t0, deadline], summing to the work. */
static void check_plan(const defer_plan *p, double t0, double work,
                       double deadline) {
  assert_true(p->n >= 1 && p->n <= p->cap);
  double sum = 0, last_end = -INFINITY;
  for (size_t i = 0; i < p->n; i++) {
    const defer_interval *r = &p->runs[i];
    if (!(r->start_s > last_end && r->end_s > r->start_s))
      fail_msg("run %zu [%.17g, %.17g) after %.17g", i, r->start_s, r->end_s,
               last_end);
    sum += r->end_s - r->start_s;
    last_end = r->end_s;
  }
  assert_true(p->runs[0].start_s >= t0);
  if (!(defer_plan_end(p) <= deadline))
    fail_msg("ends at %.17g s, after the deadline %.17g s", defer_plan_end(p),
             deadline);
  assert_close(sum, work, 1e-12, 0);
}

/* ------------------------------------------------------------------ */
/* Hand cases                                                          */
/* ------------------------------------------------------------------ */

/* On a flat signal nothing is gained by waiting, so the window starts at
 * once (ties to the earliest, despite the integrals' rounding at an odd
 * t0); a threshold at the value runs at once, one below it waits until
 * the slack is gone and ends on the deadline. All cost the same. */
static void constant_signal_runs_at_once(void **state) {
  (void)state;
  sig_series s = constant_signal(300);
  double t0 = 12345.678, work = 8 * H, deadline = t0 + 24 * H;
  defer_plan w = plan_of(&s, DEFER_WINDOW, NAN, t0, work, deadline, 900);
  defer_plan at = plan_of(&s, DEFER_THRESHOLD, 300, t0, work, deadline, 900);
  defer_plan late = plan_of(&s, DEFER_THRESHOLD, 299, t0, work, deadline, 900);
  assert_int_equal(w.n, 1);
  assert_true(w.runs[0].start_s == t0 && w.runs[0].end_s == t0 + work);
  assert_int_equal(at.n, 1);
  assert_true(at.runs[0].start_s == t0 && at.runs[0].end_s == t0 + work);
  assert_int_equal(late.n, 1);
  assert_close(late.runs[0].start_s, t0 + 16 * H, 1e-15, 0);
  assert_close(defer_plan_end(&late), deadline, 1e-15, 0);
  check_plan(&late, t0, work, deadline);
  assert_close(defer_plan_cost(&s, &w), 300 * work, 1e-12, 0);
  assert_close(defer_plan_cost(&s, &late), 300 * work, 1e-12, 0);
  defer_plan_fini(&w);
  defer_plan_fini(&at);
  defer_plan_fini(&late);
  sig_fini(&s);
}

typedef struct window_case {
  const char *name;
  double t0_h, work_h, deadline_h, step_h;
  double start_h; /* where the window must start */
  double cost_h;  /* its cost in value x hours */
} window_case;

/* On cheap_block_signal (400, but 100 from 10 h to 14 h). */
static const window_case window_cases[] = {
    {"window lands on the cheap block", 2, 4, 24, 1, 10, 4 * 100},
    {"window in the next day's block", 15, 4, 39, 1, 34, 4 * 100},
    /* Starts 9.5 h and 10.5 h cost the same: the earlier wins. */
    {"window off-grid t0, tie to earliest", 0.5, 4, 24, 1, 9.5,
     0.5 * 400 + 3.5 * 100},
    {"window with the deadline in the block", 2, 4, 12, 1, 8,
     2 * 400 + 2 * 100},
    {"window with half a step of slack", 2, 4, 6.5, 1, 2, 4 * 400},
    {"window flat before the block", 0, 2, 8, 1, 0, 2 * 400},
    {"window longer than the block", 0, 6, 24, 1, 8, 2 * 400 + 4 * 100},
    {"window on a 15 min grid", 7.25, 4, 24, 0.25, 10, 4 * 100},
};

/* The window starts where the table says, at the cost it says, and costs
 * no more than running at once or the threshold policy (this signal has
 * one valley a day, so the threshold's runs cannot beat a window). */
static void window_lands_on_the_cheapest(void **state) {
  const window_case *c = *state;
  sig_series s = cheap_block_signal();
  double t0 = c->t0_h * H, work = c->work_h * H, dl = c->deadline_h * H;
  double step = c->step_h * H;
  defer_plan w = plan_of(&s, DEFER_WINDOW, NAN, t0, work, dl, step);
  defer_plan now = plan_of(&s, DEFER_NONE, NAN, t0, work, dl, step);
  defer_plan th = plan_of(&s, DEFER_THRESHOLD, 250, t0, work, dl, step);
  assert_int_equal(w.n, 1);
  assert_close(w.runs[0].start_s, c->start_h * H, 0, 0);
  assert_close(defer_plan_cost(&s, &w), c->cost_h * H, 1e-12, 0);
  check_plan(&w, t0, work, dl);
  check_plan(&th, t0, work, dl);
  assert_true(defer_plan_cost(&s, &w) <= defer_plan_cost(&s, &now));
  assert_true(defer_plan_cost(&s, &w) <=
              defer_plan_cost(&s, &th) * (1 + 1e-12));
  defer_plan_fini(&w);
  defer_plan_fini(&now);
  defer_plan_fini(&th);
  sig_fini(&s);
}

typedef struct threshold_case {
  const char *name;
  double threshold, t0_h, work_h, deadline_h;
  size_t n;
  double runs_h[3][2]; /* the plan's intervals, in hours */
} threshold_case;

/* On dear_block_signal (100, but 500 from 2 h to 5 h), hourly steps. */
static const threshold_case threshold_cases[] = {
    {"threshold pauses through the dear block",
     300,
     0,
     4,
     8,
     2,
     {{0, 2}, {5, 7}}},
    {"threshold forced when the slack hits zero",
     300,
     0,
     4,
     5,
     2,
     {{0, 2}, {3, 5}}},
    {"threshold without slack runs at once", 300, 0, 4, 4, 1, {{0, 4}}},
    {"threshold cuts the last run", 300, 0, 2.5, 8, 2, {{0, 2}, {5, 5.5}}},
    {"threshold submitted dear waits", 300, 2, 2, 24, 1, {{5, 7}}},
    {"threshold slack of 1.5 steps pauses once", 300, 2, 1, 4.5, 1, {{3, 4}}},
    {"threshold at the dear value runs", 500, 0, 4, 8, 1, {{0, 4}}},
    /* Steps straddle the block's edges: [1.5, 2.5) and [4.5, 5.5) have a
     * mean of 300, at the threshold, so they run. */
    {"threshold off-grid steps use the mean",
     300,
     1.5,
     2,
     24,
     2,
     {{1.5, 2.5}, {4.5, 5.5}}},
};

static void threshold_runs_cheap_steps(void **state) {
  const threshold_case *c = *state;
  sig_series s = dear_block_signal();
  double t0 = c->t0_h * H, work = c->work_h * H, dl = c->deadline_h * H;
  defer_plan p = plan_of(&s, DEFER_THRESHOLD, c->threshold, t0, work, dl, H);
  if (p.n != c->n)
    fail_msg("%zu runs, want %zu; the first [%g h, %g h)", p.n, c->n,
             p.runs[0].start_s / H, p.runs[0].end_s / H);
  for (size_t i = 0; i < c->n; i++) {
    assert_close(p.runs[i].start_s, c->runs_h[i][0] * H, 0, 0);
    assert_close(p.runs[i].end_s, c->runs_h[i][1] * H, 0, 0);
  }
  check_plan(&p, t0, work, dl);
  defer_plan_fini(&p);
  sig_fini(&s);
}

/* The window is contiguous, the threshold's runs need not be: with two
 * cheap blocks around a dear hour the threshold skips the dear hour and
 * beats every window, which must pay for it. */
static void threshold_can_beat_the_window(void **state) {
  (void)state;
  static const double steps[][2] = {{0, 100}, {2, 500}, {3, 100}, {5, 500}};
  sig_series s = daily_signal(steps, N_OF(steps));
  defer_plan w = plan_of(&s, DEFER_WINDOW, NAN, 0, 4 * H, 5 * H, H);
  defer_plan th = plan_of(&s, DEFER_THRESHOLD, 300, 0, 4 * H, 5 * H, H);
  assert_close(defer_plan_cost(&s, &th), 400 * H, 1e-12, 0);
  assert_close(defer_plan_cost(&s, &w), 800 * H, 1e-12, 0);
  assert_close(w.runs[0].start_s, 0, 0, 0);
  defer_plan_fini(&w);
  defer_plan_fini(&th);
  sig_fini(&s);
}

/* A file without repeat ends at 4 h: past it the forecast knows nothing,
 * so plans stay inside it whatever the deadline, unless the job cannot
 * finish inside it even at once. */
static void plans_stay_inside_the_data(void **state) {
  (void)state;
  const char *path = test_out_path("deferral.csv");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("time,v\n2023-01-01 00:00,400\n2023-01-01 01:00,400\n"
        "2023-01-01 02:00,100\n2023-01-01 03:00,400\n",
        f);
  fclose(f);
  sig_config c = no_signal;
  c.file = (char *)path;
  c.time_column = "#1";
  c.value_column = "#2";
  c.max_gap_s = 2 * H;
  sig_series s = signal_from(&c);
  assert_close(sig_end(&s), 4 * H, 0, 0);
  defer_plan w = plan_of(&s, DEFER_WINDOW, NAN, 0, H, 100 * H, 900);
  defer_plan th = plan_of(&s, DEFER_THRESHOLD, 0, 0, H, 100 * H, 900);
  defer_plan over = plan_of(&s, DEFER_WINDOW, NAN, 3.5 * H, H, 100 * H, 900);
  assert_close(w.runs[0].start_s, 2 * H, 0, 0);
  assert_close(th.runs[0].start_s, 3 * H, 0, 0); /* never cheap: forced */
  check_plan(&th, 0, H, 4 * H);
  assert_close(over.runs[0].start_s, 3.5 * H, 0, 0);
  defer_plan_fini(&w);
  defer_plan_fini(&th);
  defer_plan_fini(&over);
  sig_fini(&s);
}

typedef struct bad_args {
  const char *name;
  defer_policy policy;
  double threshold, t0, work, deadline, step;
  int rc;
} bad_args;

static const bad_args bad_args_cases[] = {
    {"no work", DEFER_WINDOW, 0, 0, 0, 10, 1, SIM_EINVAL},
    {"negative work", DEFER_NONE, 0, 0, -1, 10, 1, SIM_EINVAL},
    {"NaN work", DEFER_WINDOW, 0, 0, NAN, 10, 1, SIM_EINVAL},
    {"infinite work", DEFER_NONE, 0, 0, INFINITY, INFINITY, 1, SIM_EINVAL},
    {"zero step", DEFER_THRESHOLD, 0, 0, 1, 10, 0, SIM_EINVAL},
    {"negative step", DEFER_WINDOW, 0, 0, 1, 10, -1, SIM_EINVAL},
    {"NaN t0", DEFER_WINDOW, 0, NAN, 1, 10, 1, SIM_EINVAL},
    {"infinite deadline", DEFER_WINDOW, 0, 0, 1, INFINITY, 1, SIM_EINVAL},
    {"window past its deadline", DEFER_WINDOW, 0, 5, 6, 10, 1, SIM_EINVAL},
    {"threshold past its deadline", DEFER_THRESHOLD, 0, 5, 6, 10, 1,
     SIM_EINVAL},
    {"NaN threshold", DEFER_THRESHOLD, NAN, 0, 1, 10, 1, SIM_EINVAL},
    {"unknown policy", (defer_policy)7, 0, 0, 1, 10, 1, SIM_EINVAL},
    /* The fall-back for a job that cannot make it: at once, late. */
    {"none past its deadline runs", DEFER_NONE, 0, 5, 6, 10, 1, SIM_OK},
    {"window ignores a NaN threshold", DEFER_WINDOW, NAN, 0, 1, 10, 1, SIM_OK},
};

static void bad_arguments_refused(void **state) {
  const bad_args *c = *state;
  sig_series s = constant_signal(1);
  defer_plan p = {.n = 99};
  sim_error err = {0};
  int rc = defer_plan_make(&s, c->policy, c->threshold, c->t0, c->work,
                           c->deadline, c->step, NULL, &p, &err);
  if (rc != c->rc)
    fail_msg("got %s (%s), want %s", sim_err_name(rc), err.msg,
             sim_err_name(c->rc));
  if (rc == SIM_OK) {
    assert_int_equal(p.n, 1);
    assert_close(p.runs[0].start_s, c->t0, 0, 0);
  } else {
    assert_true(p.n == 0 && p.cap == 0 && p.runs == NULL);
    assert_true(strncmp(err.msg, "deferral: ", 10) == 0);
  }
  defer_plan_fini(&p);
  defer_plan_fini(NULL);
  assert_true(isnan(defer_plan_end(&p)));
  sig_fini(&s);
}

/* Every plan on smooth signals (a diurnal cosine, a solar generation mix)
 * for many submissions, lengths, slacks and steps keeps its work and its
 * deadline, and the window never costs more than running at once. */
static void plans_keep_work_and_deadline(void **state) {
  (void)state;
  sig_config diurnal = no_signal, mix = no_signal;
  diurnal.low = 100, diurnal.high = 500, diurnal.peak_s = 19 * H;
  diurnal.diurnal = true;
  mix.has_mix = true;
  mix.mix = (sig_mix){.coal = 0.1,
                      .gas = 0.4,
                      .nuclear = 0.2,
                      .wind = 0.2,
                      .solar = 0.1,
                      .sunrise_s = 6 * H,
                      .sunset_s = 18 * H};
  sig_series sigs[] = {signal_from(&diurnal), signal_from(&mix)};
  static const double works_h[] = {0.3, 1, 3.5, 8}, slacks[] = {0, 0.1, 2};
  static const double steps_s[] = {600, 3600, 5000};
  for (size_t k = 0; k < N_OF(sigs); k++)
    for (double t0 = 0; t0 < 48 * H; t0 += 5.3 * H)
      for (size_t a = 0; a < N_OF(works_h); a++)
        for (size_t b = 0; b < N_OF(slacks); b++)
          for (size_t c = 0; c < N_OF(steps_s); c++) {
            double work = works_h[a] * H, dl = t0 + work * (1 + slacks[b]);
            defer_plan p[3];
            for (int pol = DEFER_NONE; pol <= DEFER_WINDOW; pol++) {
              p[pol] = plan_of(&sigs[k], pol, 300, t0, work, dl, steps_s[c]);
              check_plan(&p[pol], t0, work, dl);
            }
            assert_true(defer_plan_cost(&sigs[k], &p[DEFER_WINDOW]) <=
                        defer_plan_cost(&sigs[k], &p[DEFER_NONE]));
            for (int pol = DEFER_NONE; pol <= DEFER_WINDOW; pol++)
              defer_plan_fini(&p[pol]);
          }
  sig_fini(&sigs[0]);
  sig_fini(&sigs[1]);
}

/* ------------------------------------------------------------------ */
/* The real 2023 series                                                */
/* ------------------------------------------------------------------ */

#define YEAR_S (8760 * H)

/* Electricity Maps' hourly direct carbon intensity of a zone for 2023,
 * from data/ (see data/SOURCES.md); fails the test if the file is absent. */
static sig_series carbon_2023(const char *zone) {
  char rel[256], path[4096];
  snprintf(rel, sizeof rel, "carbon/%s_2023_hourly.csv", zone);
  snprintf(path, sizeof path, "%s", test_data_path(rel));
  sig_config c = no_signal;
  c.file = path;
  c.time_column = "Datetime (UTC)";
  c.value_column = "Carbon Intensity gCO\xe2\x82\x82"
                   "eq/kWh (direct)";
  c.max_gap_s = 2 * H;
  sig_series s = signal_from(&c);
  assert_close(sig_end(&s), YEAR_S, 0, 0);
  return s;
}

/* One job submitted every 7 hours of the year (so the hour of day
 * varies), each needing 8 h of work at full speed; a checkpoint every
 * 15 min. The deadline is 24 h after submission at most, so every
 * tier's population is the same and inside the data. */
#define EVERY_S (7 * H)
#define WORK_S (8 * H)
#define STEP_S 900.0
#define LAST_SUBMIT_S (YEAR_S - 24 * H)

/* A population's summed cost (value x seconds) under each policy. */
typedef struct totals {
  double cost[3];
  size_t jobs;
} totals;

static totals plan_population(const sig_series *s, double tier,
                              double threshold) {
  totals t = {{0, 0, 0}, 0};
  for (double t0 = 0; t0 <= LAST_SUBMIT_S; t0 += EVERY_S, t.jobs++) {
    double dl = t0 + WORK_S * (1 + tier);
    for (int pol = DEFER_NONE; pol <= DEFER_WINDOW; pol++) {
      defer_plan p = plan_of(s, pol, threshold, t0, WORK_S, dl, STEP_S);
      check_plan(&p, t0, WORK_S, dl);
      t.cost[pol] += defer_plan_cost(s, &p);
      defer_plan_fini(&p);
    }
  }
  return t;
}

static double gain(const totals *t, defer_policy policy) {
  return 1 - t->cost[policy] / t->cost[DEFER_NONE];
}

typedef struct tier_case {
  const char *name;
  double tier; /* the slowdown tolerated: deadline = t0 + work (1 + tier) */
} tier_case;

static const tier_case tiers[] = {
    {"deferral CO2 gain at 10% flexibility", 0.10},
    {"deferral CO2 gain at 25% flexibility", 0.25},
    {"deferral CO2 gain at 50% flexibility", 0.50},
    {"deferral CO2 gain at 200% flexibility", 2.00},
};

/* The figure: the window (a perfect forecast) lowers a year of
 * flexible jobs' CO2 against running at once, more in California, whose
 * solar swings the intensity each day, than in PJM, whose daily swing is
 * small; a threshold at the year's mean intensity saves some too in
 * California, less than the window. Every job meets its deadline
 * (check_plan). The window figures were checked apart with numpy on the
 * same files (cumulative sums over quarter hours). */
static void carbon_gain_per_tier(void **state) {
  const tier_case *c = *state;
  sig_series ca = carbon_2023("US-CAL-CISO"), pjm = carbon_2023("US-MIDA-PJM");
  double ca_mean = sig_integral(&ca, 0, YEAR_S) / YEAR_S;
  double pjm_mean = sig_integral(&pjm, 0, YEAR_S) / YEAR_S;
  totals tc = plan_population(&ca, c->tier, ca_mean);
  totals tp = plan_population(&pjm, c->tier, pjm_mean);
  double jobs_h = tc.jobs * WORK_S;
  print_message("flexibility %3.0f%%, %zu jobs of 8 h: window gain CA "
                "%.4f%% (%.2f -> %.2f g/kWh), PJM %.4f%% (%.2f -> %.2f); "
                "threshold at the mean gain CA %.4f%%, PJM %.4f%%\n",
                100 * c->tier, tc.jobs, 100 * gain(&tc, DEFER_WINDOW),
                tc.cost[DEFER_NONE] / jobs_h, tc.cost[DEFER_WINDOW] / jobs_h,
                100 * gain(&tp, DEFER_WINDOW), tp.cost[DEFER_NONE] / jobs_h,
                tp.cost[DEFER_WINDOW] / jobs_h,
                100 * gain(&tc, DEFER_THRESHOLD),
                100 * gain(&tp, DEFER_THRESHOLD));
  assert_true(gain(&tc, DEFER_WINDOW) > gain(&tp, DEFER_WINDOW));
  assert_true(gain(&tp, DEFER_WINDOW) >= 0);
  assert_true(gain(&tc, DEFER_THRESHOLD) >= 0);
  /* Not so job by job (threshold_can_beat_the_window), but over a year. */
  assert_true(gain(&tc, DEFER_WINDOW) >= gain(&tc, DEFER_THRESHOLD));
  assert_true(gain(&tp, DEFER_WINDOW) >= gain(&tp, DEFER_THRESHOLD));
  sig_fini(&ca);
  sig_fini(&pjm);
}

/* Pure functions: the same job on the same series plans the same, bit
 * for bit, however often it is asked. */
static void same_input_same_plan(void **state) {
  (void)state;
  sig_series s = carbon_2023("US-CAL-CISO");
  for (double t0 = 1000; t0 < 30 * 24 * H; t0 += 61 * H)
    for (int pol = DEFER_NONE; pol <= DEFER_WINDOW; pol++) {
      defer_plan a = plan_of(&s, pol, 200, t0, WORK_S, t0 + 24 * H, STEP_S);
      defer_plan b = plan_of(&s, pol, 200, t0, WORK_S, t0 + 24 * H, STEP_S);
      assert_int_equal(a.n, b.n);
      assert_memory_equal(a.runs, b.runs, a.n * sizeof *a.runs);
      double ca = defer_plan_cost(&s, &a), cb = defer_plan_cost(&s, &b);
      assert_memory_equal(&ca, &cb, sizeof ca);
      defer_plan_fini(&a);
      defer_plan_fini(&b);
    }
  sig_fini(&s);
}

/* A threshold plan of ten cheap blocks, so its array grows, fails cleanly
 * on every allocation. */
typedef struct plan_args {
  const sig_series *s;
  defer_policy policy;
} plan_args;

static void *make_plan(const sim_allocator *a, void *ctx, sim_error *err) {
  const plan_args *p = ctx;
  defer_plan *plan = malloc(sizeof *plan);
  assert_non_null(plan);
  if (defer_plan_make(p->s, p->policy, 250, 0, 40 * H, 20 * 24 * H, H, a, plan,
                      err) == SIM_OK) {
    assert_true(plan->n >= 1);
    return plan;
  }
  assert_null(plan->runs);
  assert_int_equal(plan->n, 0);
  free(plan);
  return NULL;
}

static void drop_plan(void *plan) {
  defer_plan_fini(plan);
  free(plan);
}

static void plans_fail_cleanly(void **state) {
  (void)state;
  sig_series s = cheap_block_signal();
  static const defer_policy policies[] = {DEFER_NONE, DEFER_THRESHOLD,
                                          DEFER_WINDOW};
  for (size_t i = 0; i < N_OF(policies); i++) {
    plan_args p = {&s, policies[i]};
    long calls =
        test_alloc_failures("defer_plan_make", make_plan, drop_plan, &p);
    assert_true(calls >= (policies[i] == DEFER_THRESHOLD ? 2 : 1));
  }
  sig_fini(&s);
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ADD(tests, n, constant_signal_runs_at_once);
  TEST_ADD(tests, n, plans_fail_cleanly);
  TEST_ROWS(tests, n, window_lands_on_the_cheapest, window_cases);
  TEST_ROWS(tests, n, threshold_runs_cheap_steps, threshold_cases);
  TEST_ADD(tests, n, threshold_can_beat_the_window);
  TEST_ADD(tests, n, plans_stay_inside_the_data);
  TEST_ROWS(tests, n, bad_arguments_refused, bad_args_cases);
  TEST_ADD(tests, n, plans_keep_work_and_deadline);
  TEST_ROWS(tests, n, carbon_gain_per_tier, tiers);
  TEST_ADD(tests, n, same_input_same_plan);
  return _cmocka_run_group_tests("deferral", tests, n, NULL, NULL);
}
