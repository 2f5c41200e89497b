/* test_load.c - synthetic utilisation: the patterns' shapes at known
 * times, the schema's checks, and the noise process's statistics
 * (Ornstein-Uhlenbeck: stationary variance sigma^2, lag-k correlation
 * rho^k). */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "load.h"
#include "rng.h"

static int bind(const char *text, load_config *c, sim_error *err) {
  memset(c, 0, sizeof *c);
  return scn_bind_string("load.yaml", text, &load_schema, c, NULL, err);
}

typedef struct level_case {
  const char *name;
  const char *yaml;
  double t_s;
  double level;
} level_case;

static const level_case levels[] = {
    {"constant", "pattern: constant\nlevel: 42%\n", 5000, 0.42},
    {"diurnal peak", "pattern: diurnal\nlow: 20%\nhigh: 80%\npeak_at: 15 h\n",
     15 * 3600.0, 0.8},
    {"diurnal trough", "pattern: diurnal\nlow: 20%\nhigh: 80%\npeak_at: 15 h\n",
     3 * 3600.0, 0.2},
    {"diurnal next day", "pattern: diurnal\nlow: 20%\nhigh: 80%\n", 39 * 3600.0,
     0.8},
    {"diurnal midway", "pattern: diurnal\nlow: 20%\nhigh: 80%\n", 9 * 3600.0,
     0.5},
    {"step before",
     "pattern: steps\nsteps: [{at: 0 s, level: 10%}, "
     "{at: 1 h, level: 90%}]\n",
     3599.999, 0.1},
    {"step at",
     "pattern: steps\nsteps: [{at: 0 s, level: 10%}, "
     "{at: 1 h, level: 90%}]\n",
     3600, 0.9},
    {"step last",
     "pattern: steps\nsteps: [{at: 0 s, level: 10%}, "
     "{at: 1 h, level: 90%}]\n",
     1e6, 0.9},
};

static void pattern_levels(void **state) {
  const level_case *c = *state;
  load_config lc;
  sim_error err = {0};
  if (bind(c->yaml, &lc, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_close(load_level(&lc, c->t_s), c->level, 1e-12, 1e-12);
  scn_release(&load_schema, &lc);
}

static const test_bad_yaml bad[] = {
    {"low above high", "pattern: diurnal\nlow: 90%\nhigh: 10%\n",
     "load.yaml:2:6: 'low' is above 'high'"},
    {"steps missing", "pattern: steps\n", "first at 0 s"},
    {"steps not at zero", "pattern: steps\nsteps: [{at: 1 h, level: 5%}]\n",
     "first at 0 s"},
    {"steps out of order",
     "pattern: steps\nsteps: [{at: 0 s, level: 5%}, {at: 0 s, level: 6%}]\n",
     "load.yaml:2:36: step 2 does not come after step 1"},
    {"level over 100%", "level: 120%\n", "between 0% and 100%"},
    {"noise time zero", "noise_time: 0 s\n", "greater than zero"},
    {"unknown pattern", "pattern: sinus\n", "cannot be 'sinus'"},
};

static void bad_load_is_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&load_schema, "load.yaml", b->yaml, b->message);
}

/* The exact OU update keeps the stationary variance sigma^2 and gives a
 * lag-one correlation rho = exp(-dt / tau), whatever the step. */
static void noise_is_ornstein_uhlenbeck(void **state) {
  (void)state;
  load_config lc;
  sim_error err = {0};
  assert_int_equal(bind("noise: 10%\nnoise_time: 10 min\n", &lc, &err), SIM_OK);
  load_noise n = load_noise_for(&lc, 60);
  double rho = exp(-60.0 / 600);
  assert_close(n.rho, rho, 1e-15, 0);
  gsl_rng *r = rng_stream_create(11, RNG_KIND_MODEL, 0, 0);
  enum { N = 400000 };
  double x = 0, prev, s2 = 0, lag = 0;
  for (int i = 0; i < 1000; i++) /* forget the start */
    x = load_noise_step(&n, x, r);
  for (int i = 0; i < N; i++) {
    prev = x;
    x = load_noise_step(&n, x, r);
    s2 += x * x;
    lag += x * prev;
  }
  double var = s2 / N, corr = lag / s2;
  /* Effective sample size N (1 - rho) / (1 + rho) ~ 19,000: a 5% band is
   * over six standard errors. */
  assert_close(var, 0.01, 0.05, 0);
  assert_close(corr, rho, 0, 0.01);
  load_noise none =
      load_noise_for(&(load_config){.noise = 0, .noise_time = 600}, 1);
  assert_close(load_noise_step(&none, 0.3, r), 0, 0, 0);
  rng_stream_destroy(r);
  scn_release(&load_schema, &lc);
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ROWS(tests, n, pattern_levels, levels);
  TEST_ROWS(tests, n, bad_load_is_rejected, bad);
  TEST_ADD(tests, n, noise_is_ornstein_uhlenbeck);
  return _cmocka_run_group_tests("load", tests, n, NULL, NULL);
}
