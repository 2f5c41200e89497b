/* test_smooth.c - in-rack power smoothing: a square-wave training load
 * (an NVL72 rack between 30% and 100% of its power every 10 s) reaches
 * the feed with its full step when smoothing is off, and with at most the
 * configured ramp when it is on and the store is large enough; a store
 * too small breaks the limit and says so; the floor holds; the
 * hysteresis delays the ramp-down; the energy balances in every test. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "smooth.h"

#define RACK_W 132e3 /* GB200 NVL72, about 120-132 kW (NVIDIA) */
#define BALANCE_REL 1e-9

static smo_config make(const char *yaml) {
  smo_config c;
  sim_error err = {0};
  memset(&c, 0, sizeof c);
  if (scn_bind_string("smooth.yaml", yaml, &smo_schema, &c, NULL, &err) !=
      SIM_OK)
    fail_msg("%s", err.msg);
  return c;
}

/* Feed energy = load energy + burned + change in store, per rack. */
static void assert_balance(const smo_bank *b) {
  for (uint32_t i = 0; i < b->n; i++) {
    double rhs = b->load_j[i] + b->burned_j[i] + b->store_j[i] - b->cfg.store_j;
    assert_close(b->fed_j[i], rhs, BALANCE_REL, 0);
  }
}

static double square_wave(double t_s, double period_s) {
  return fmod(t_s, 2 * period_s) < period_s ? 0.3 * RACK_W : RACK_W;
}

/* The largest rise and fall of the feed between periods, W/s. */
typedef struct ramps {
  double up, down;
} ramps;

/* Runs a bank of one rack on the square wave for duration_s in steps of
 * dt_s; checks the store's bounds at every step. */
static ramps run_square(smo_bank *b, double duration_s, double dt_s) {
  ramps r = {0, 0};
  double prev = NAN;
  for (double t = 0; t < duration_s - dt_s / 2; t += dt_s) {
    double load = square_wave(t, 10);
    assert_int_equal(smo_bank_step(b, &load, t, dt_s, NULL, NULL), SIM_OK);
    double f = b->feed_w[0];
    if (!isnan(prev)) {
      r.up = fmax(r.up, (f - prev) / dt_s);
      r.down = fmax(r.down, (prev - f) / dt_s);
    }
    prev = f;
    assert_true(b->store_j[0] >= 0 && b->store_j[0] <= b->cfg.store_j);
  }
  return r;
}

typedef struct ramp_case {
  const char *name;
  const char *yaml;
  double dt_s;
  double up, down; /* the largest feed ramps expected, W/s */
  bool violated;   /* the ramp limit was broken (store ran dry) */
} ramp_case;

static const ramp_case ramp_cases[] = {
    {"off: the full step", "enabled: false\n", 1, 0.7 * RACK_W, 0.7 * RACK_W,
     false},
    {"off, 250 ms steps", "enabled: false\n", 0.25, 0.7 * RACK_W / 0.25,
     0.7 * RACK_W / 0.25, false},
    {"on, large store",
     "enabled: true\nstore: 1 MJ\nramp_up: 10 kW/s\nramp_down: 10 kW/s\n"
     "floor: 0%\nhysteresis: 0 s\n",
     1, 10e3, 10e3, false},
    {"on, 100 ms steps",
     "enabled: true\nstore: 1 MJ\nramp_up: 10 kW/s\nramp_down: 10 kW/s\n"
     "floor: 0%\nhysteresis: 0 s\n",
     0.1, 10e3, 10e3, false},
    {"on, asymmetric",
     "enabled: true\nstore: 20 MJ\nramp_up: 5 kW/s\nramp_down: 20 kW/s\n"
     "floor: 0%\nhysteresis: 0 s\n",
     1, 5e3, 20e3, false},
    {"on, NVIDIA defaults", "enabled: true\nstore: 10 MJ\n", 1, 1440, 0, false},
    {"on, store too small",
     "enabled: true\nstore: 100 kJ\nramp_up: 10 kW/s\nramp_down: 10 kW/s\n"
     "floor: 0%\nhysteresis: 0 s\n",
     1, NAN, 10e3, true},
};

static void square_wave_ramps(void **state) {
  const ramp_case *k = *state;
  smo_config c = make(k->yaml);
  double tdp = RACK_W;
  smo_bank *b = smo_bank_create(&c, 1, &tdp, NULL, NULL);
  assert_non_null(b);
  ramps r = run_square(b, 200, k->dt_s);
  if (isnan(k->up))
    assert_true(r.up > c.ramp_up_w_s * 2);
  else
    assert_close(r.up, k->up, 1e-9, 0);
  assert_close(r.down, k->down, 1e-9, 0);
  if (k->violated)
    assert_true(b->violation_s[0] >= k->dt_s);
  else
    assert_close(b->violation_s[0], 0, 0, 0);
  assert_balance(b);
  smo_bank_destroy(b);
}

/* The feed never falls below floor x TDP; what the store cannot take is
 * burned, and counted. */
static void floor_holds(void **state) {
  (void)state;
  smo_config c = make("enabled: true\nstore: 50 kJ\nfloor: 60%\n"
                      "ramp_up: 20 kW/s\nramp_down: 20 kW/s\n");
  double tdp[3] = {RACK_W, 0.5 * RACK_W, 2 * RACK_W};
  smo_bank *b = smo_bank_create(&c, 3, tdp, NULL, NULL);
  for (double t = 0; t < 300; t += 1) {
    double l = square_wave(t, 10), load[3] = {l, 0.5 * l, 0};
    double total;
    assert_int_equal(smo_bank_step(b, load, t, 1, &total, NULL), SIM_OK);
    assert_close(total, b->feed_w[0] + b->feed_w[1] + b->feed_w[2], 1e-15, 0);
    for (int i = 0; i < 3; i++)
      assert_true(b->feed_w[i] >= c.floor * tdp[i]);
  }
  /* The idle rack sits at its floor and burns all of it once full. */
  assert_close(b->feed_w[2], c.floor * tdp[2], 0, 0);
  assert_close(b->burned_j[2], b->fed_j[2], 1e-12, 0);
  assert_true(b->burned_j[0] > 0);
  assert_balance(b);
  smo_bank_destroy(b);
}

/* After the load drops at 10 s the feed holds for the hysteresis, then
 * falls at the ramp-down limit; with half-second steps. */
static void hysteresis_delays_ramp_down(void **state) {
  (void)state;
  smo_config c = make("enabled: true\nstore: 5 MJ\nfloor: 0%\n"
                      "ramp_up: 10 kW/s\nramp_down: 4 kW/s\n"
                      "hysteresis: 5 s\n");
  double tdp = RACK_W, dt = 0.5;
  smo_bank *b = smo_bank_create(&c, 1, &tdp, NULL, NULL);
  for (int k = 0; k < 60; k++) {
    double t = k * dt, load = t < 10 ? RACK_W : 0.3 * RACK_W;
    smo_bank_step(b, &load, t, dt, NULL, NULL);
    if (t < 15) /* held: the drop at 10 s, plus 5 s */
      assert_close(b->feed_w[0], RACK_W, 0, 0);
    else
      assert_close(b->feed_w[0], RACK_W - 4e3 * (t - 15 + dt), 1e-12, 0);
    if (t >= 15 && t < 15 + dt)
      assert_close(b->hold_until_s[0], 15, 0, 0);
  }
  /* A rise clears the hold. */
  double up = RACK_W;
  smo_bank_step(b, &up, 30, dt, NULL, NULL);
  assert_true(isnan(b->hold_until_s[0]));
  assert_close(b->violation_s[0], 0, 0, 0);
  assert_balance(b);
  smo_bank_destroy(b);
}

/* The first period starts at the target, without a ramp; off means the
 * feed is the load and the store is idle. */
static void first_period_and_off(void **state) {
  (void)state;
  smo_config on = make("enabled: true\nfloor: 50%\n");
  smo_config off = make("floor: 50%\n");
  double tdp = RACK_W, load = 0.2 * RACK_W;
  smo_bank *a = smo_bank_create(&on, 1, &tdp, NULL, NULL);
  smo_bank *b = smo_bank_create(&off, 1, &tdp, NULL, NULL);
  smo_bank_step(a, &load, 0, 1, NULL, NULL);
  smo_bank_step(b, &load, 0, 1, NULL, NULL);
  assert_close(a->feed_w[0], 0.5 * RACK_W, 0, 0);
  assert_close(b->feed_w[0], load, 0, 0);
  assert_close(b->store_j[0], off.store_j, 0, 0);
  assert_close(b->burned_j[0], 0, 0, 0);
  assert_balance(a);
  assert_balance(b);
  smo_bank_destroy(a);
  smo_bank_destroy(b);
}

static void defaults(void **state) {
  (void)state;
  smo_config c = make("{}\n");
  assert_false(c.enabled);
  assert_close(c.store_j, 65e3, 0, 0);
  assert_close(c.ramp_up_w_s, 72 * 20.0, 0, 0);
  assert_close(c.ramp_down_w_s, 72 * 20.0, 0, 0);
  assert_close(c.floor, 0.9, 0, 0);
  assert_close(c.hysteresis_s, 10, 0, 0);
}

static void bad_steps_change_nothing(void **state) {
  (void)state;
  smo_config c = make("enabled: true\n");
  double tdp[2] = {RACK_W, RACK_W}, load[2] = {1e5, -1};
  sim_error err = {0};
  smo_bank *b = smo_bank_create(&c, 2, tdp, NULL, NULL);
  assert_int_equal(smo_bank_step(b, load, 0, 1, NULL, &err), SIM_EINVAL);
  assert_non_null(strstr(err.msg, "rack 1"));
  load[1] = 1e5;
  assert_int_equal(smo_bank_step(b, load, 0, 0, NULL, &err), SIM_EINVAL);
  assert_int_equal(smo_bank_step(b, load, 0, NAN, NULL, &err), SIM_EINVAL);
  assert_true(isnan(b->feed_w[0]) && isnan(b->feed_w[1]));
  assert_close(b->fed_j[0] + b->load_j[1], 0, 0, 0);
  smo_bank_destroy(b);
  double bad_tdp = -5;
  assert_null(smo_bank_create(&c, 1, &bad_tdp, NULL, &err));
  assert_int_equal(err.code, SIM_EINVAL);
  assert_null(smo_bank_create(&c, 0, tdp, NULL, &err));
  smo_bank_destroy(NULL);
}

/* Every allocation of the constructor may fail; nothing is left behind. */
static void create_cleans_up(void **state) {
  (void)state;
  smo_config c = make("enabled: true\n");
  double tdp[4] = {1, 2, 3, 4};
  for (long k = 1; k <= 2; k++) {
    test_alloc t;
    test_alloc_init(&t, k);
    sim_error err = {0};
    assert_null(smo_bank_create(&c, 4, tdp, &t.hook, &err));
    assert_int_equal(err.code, SIM_ENOMEM);
    assert_int_equal(t.live, 0);
  }
  test_alloc t;
  test_alloc_init(&t, 0);
  smo_bank *b = smo_bank_create(&c, 4, tdp, &t.hook, NULL);
  assert_non_null(b);
  smo_bank_destroy(b);
  assert_int_equal(t.live, 0);
}

static const test_bad_yaml bad[] = {
    {"ramp up zero", "enabled: true\nramp_up: 0 W/s\n",
     "smooth.yaml:2:10: 'ramp_up' must be greater than zero"},
    {"ramp down negative", "ramp_down: -3 kW/s\n",
     "smooth.yaml:1:12: 'ramp_down'"},
    {"ramp in watts", "ramp_up: 5 kW\n",
     "smooth.yaml:1:12: 'ramp_up': 'kW' is a unit of power; expected power "
     "ramp"},
    {"floor above 100%", "floor: 120%\n",
     "smooth.yaml:1:8: 'floor' is 120%; it must be between 0% and 100%"},
    {"negative store", "store: -1 kJ\n",
     "smooth.yaml:1:8: 'store' is -1 kJ; it must be at least"},
    {"negative hysteresis", "hysteresis: -2 s\n",
     "smooth.yaml:1:13: 'hysteresis' is -2 s; it must be at least"},
    {"enabled not a bool", "enabled: maybe\n", "smooth.yaml:1:10:"},
};

static void bad_smoothing_is_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&smo_schema, "smooth.yaml", b->yaml, b->message);
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ROWS(tests, n, square_wave_ramps, ramp_cases);
  TEST_ADD(tests, n, floor_holds);
  TEST_ADD(tests, n, hysteresis_delays_ramp_down);
  TEST_ADD(tests, n, first_period_and_off);
  TEST_ADD(tests, n, defaults);
  TEST_ADD(tests, n, bad_steps_change_nothing);
  TEST_ADD(tests, n, create_cleans_up);
  TEST_ROWS(tests, n, bad_smoothing_is_rejected, bad);
  return _cmocka_run_group_tests("smooth", tests, n, NULL, NULL);
}
