/* test_battery.c - the on-site battery: SoC bounds over long random runs,
 * losses of a full cycle equal to 1 - RTE, peak shaving under the cap
 * with the shortfall reported, DR ride-through discharging only in DR,
 * the books' balance in every test, and the schema's checks. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "battery.h"
#include "rng.h"

#define MWH 3.6e9
#define BALANCE_REL 1e-9

static int bind(const char *text, bat_config *c, sim_error *err) {
  memset(c, 0, sizeof *c);
  return scn_bind_string("battery.yaml", text, &bat_schema, c, NULL, err);
}

static bat_config make(const char *yaml) {
  bat_config c;
  sim_error err = {0};
  if (bind(yaml, &c, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  return c;
}

/* What enters equals what leaves plus what is stored plus losses. */
static void assert_balance(const bat_state *s, double start_j) {
  double in = s->charged_j, out = s->discharged_j + s->loss_j;
  double stored = s->stored_j - start_j;
  double scale = fmax(fmax(in, out), fabs(stored));
  assert_close(in - out, stored, 0, BALANCE_REL * fmax(scale, 1));
}

static void assert_in_bounds(const bat_config *c, const bat_state *s) {
  double lo = c->soc_min * c->capacity_j, hi = c->soc_max * c->capacity_j;
  if (!(s->stored_j >= lo && s->stored_j <= hi))
    fail_msg("stored %.17g J outside [%.17g, %.17g]", s->stored_j, lo, hi);
}

static void defaults_and_computed_defaults(void **state) {
  (void)state;
  bat_config c = make("capacity: 40 MWh\n");
  assert_close(c.capacity_j, 40 * MWH, 0, 0);
  assert_close(c.charge_max_w, 10e6, 1e-15, 0); /* capacity / 4 h */
  assert_close(c.discharge_max_w, 10e6, 1e-15, 0);
  assert_close(c.rte, 0.85, 0, 0);
  assert_close(c.soc_min, 0.1, 0, 0);
  assert_close(c.soc_max, 0.9, 0, 0);
  assert_close(c.soc_initial, 0.9, 0, 0); /* starts at soc_max */
  assert_int_equal(c.mode, BAT_PEAK_SHAVING);
  assert_close(c.threshold, 1, 0, 0);
  assert_true(isnan(c.threshold_w));
  bat_state s;
  bat_state_init(&s, &c);
  assert_close(bat_soc(&c, &s), 0.9, 1e-15, 0);
}

/* Every mode over long random sequences of load, cap, DR and interval:
 * the stored energy never leaves its bounds, the books balance. */
static void soc_stays_in_bounds(void **state) {
  (void)state;
  static const char *const modes[] = {"none", "peak_shaving",
                                      "dr_ride_through"};
  for (size_t m = 0; m < N_OF(modes); m++) {
    char yaml[256];
    snprintf(yaml, sizeof yaml,
             "capacity: 2 MWh\ncharge_power: 3 MW\ndischarge_power: 4 MW\n"
             "round_trip_efficiency: 88%%\nsoc_min: 15%%\nsoc_max: 95%%\n"
             "soc_initial: 50%%\nmode: %s\nthreshold: 90%%\n",
             modes[m]);
    bat_config c = make(yaml);
    bat_state s;
    bat_state_init(&s, &c);
    double start = s.stored_j;
    gsl_rng *r = rng_stream_create(7, RNG_KIND_MODEL, m, 0);
    for (int i = 0; i < 200000; i++) {
      double cap = 10e6 * (0.7 + 0.3 * gsl_rng_uniform(r));
      double load = 12e6 * gsl_rng_uniform(r);
      bool dr = gsl_rng_uniform(r) < 0.2;
      double dt = 0.1 + 600 * gsl_rng_uniform(r);
      bat_step(&c, &s, load, cap, dr, dt, NULL);
      assert_in_bounds(&c, &s);
    }
    rng_stream_destroy(r);
    assert_balance(&s, start);
    if (c.mode == BAT_NONE)
      assert_close(s.charged_j + s.discharged_j, 0, 0, 0);
    else
      assert_true(s.charged_j > 0 && s.discharged_j > 0);
  }
}

/* Full: shave until empty, recharge until full again. Back at the start,
 * losses are (1 - RTE) of what was charged, whatever the RTE. */
typedef struct cycle_case {
  const char *name;
  const char *rte;
  double dt_s;
} cycle_case;

static const cycle_case cycles[] = {
    {"RTE 85%, 1 s", "85%", 1},
    {"RTE 92%, 7 s", "92%", 7},
    {"RTE 60%, 60 s", "60%", 60},
    {"RTE 100%, 13 s", "100%", 13},
};

static void cycle_losses_are_one_minus_rte(void **state) {
  const cycle_case *k = *state;
  char yaml[256];
  snprintf(yaml, sizeof yaml,
           "capacity: 1 MWh\ncharge_power: 700 kW\ndischarge_power: 900 kW\n"
           "round_trip_efficiency: %s\n",
           k->rte);
  bat_config c = make(yaml);
  bat_state s;
  bat_state_init(&s, &c);
  double start = s.stored_j;
  int steps = 0;
  while (s.stored_j > c.soc_min * c.capacity_j && ++steps < 100000)
    bat_step(&c, &s, 10.5e6, 10e6, false, k->dt_s, NULL); /* shave */
  while (s.stored_j < c.soc_max * c.capacity_j && ++steps < 200000)
    bat_step(&c, &s, 8e6, 10e6, false, k->dt_s, NULL); /* recharge */
  assert_true(steps < 200000);
  assert_close(s.stored_j, start, 0, 0); /* exactly back */
  assert_close(s.loss_j / s.charged_j, 1 - c.rte, 1e-9, 1e-15);
  assert_close(s.discharged_j / s.charged_j, c.rte, 1e-9, 0);
  assert_balance(&s, start);
}

/* Whenever the battery has the power and the energy, the grid draw stays
 * at or under the target; otherwise it is at a limit and the excess is
 * reported as the shortfall. */
static void peak_shaving_holds_the_cap(void **state) {
  (void)state;
  bat_config c = make("capacity: 500 kWh\ndischarge_power: 2 MW\n"
                      "charge_power: 1 MW\nsoc_min: 0%\nsoc_max: 100%\n"
                      "mode: peak_shaving\n");
  bat_state s;
  bat_state_init(&s, &c);
  double start = s.stored_j, eta = sqrt(c.rte), dt = 10, short_j = 0;
  gsl_rng *r = rng_stream_create(3, RNG_KIND_MODEL, 0, 1);
  int held = 0, short_of = 0;
  for (int i = 0; i < 20000; i++) {
    double cap = i % 500 < 50 ? 7.5e6 : 10e6; /* DR cuts now and then */
    double load = 7e6 + 5e6 * gsl_rng_uniform(r);
    double room_w = (s.stored_j - c.soc_min * c.capacity_j) * eta / dt;
    bool can = load - cap <= fmin(c.discharge_max_w, room_w);
    bat_result out;
    bat_step(&c, &s, load, cap, cap < 10e6, dt, &out);
    assert_close(out.grid_w, load - out.power_w, 1e-15, 0);
    assert_close(out.target_w, cap, 0, 0);
    if (can) {
      held += load > cap;
      assert_true(out.grid_w <= cap * (1 + 1e-12));
      assert_close(out.shortfall_w, 0, 0, 1e-6);
    } else {
      short_of++;
      assert_close(out.shortfall_w, out.grid_w - cap, 1e-12, 0);
      assert_true(out.shortfall_w > 0);
      assert_true(out.power_w == c.discharge_max_w ||
                  fabs(out.power_w - room_w) <= 1e-9 * room_w);
    }
    short_j += out.shortfall_w * dt;
  }
  rng_stream_destroy(r);
  assert_true(held > 1000 && short_of > 100); /* both cases seen */
  assert_close(s.shortfall_j, short_j, 1e-12, 0);
  assert_balance(&s, start);
}

/* Recharging never lifts the draw above threshold - margin, and takes at
 * most the spare power. */
static void recharge_uses_only_the_spare(void **state) {
  (void)state;
  bat_config c = make("capacity: 100 MWh\ncharge_power: 50 MW\n"
                      "soc_initial: 10%\nthreshold_power: 18 MW\n"
                      "recharge_margin: 5%\n");
  bat_state s;
  bat_state_init(&s, &c);
  double start = s.stored_j;
  static const double loads[] = {5e6, 15e6, 16.9e6, 17e6, 17.5e6, 19e6};
  for (size_t i = 0; i < N_OF(loads); i++) {
    bat_result out;
    bat_step(&c, &s, loads[i], 20e6, false, 60, &out);
    double ceiling = 18e6 - 0.05 * 20e6; /* 17 MW */
    if (loads[i] < ceiling)
      assert_close(out.grid_w, ceiling, 1e-15, 0);
    else if (loads[i] <= 18e6)
      assert_close(out.power_w, 0, 0, 0);
    else
      assert_close(out.grid_w, 18e6, 1e-15, 0);
  }
  /* Under a DR cap the threshold falls with it. */
  bat_result out;
  bat_step(&c, &s, 15e6, 15e6, true, 60, &out);
  assert_close(out.target_w, 15e6, 0, 0);
  assert_close(out.power_w, 0, 0, 0);
  assert_balance(&s, start);
}

/* DR ride-through: discharges during DR only, down to the DR cap; charges
 * only outside DR; shortfall counted only during DR. */
static void dr_ride_through_discharges_only_in_dr(void **state) {
  (void)state;
  bat_config c = make("capacity: 30 MWh\ncharge_power: 5 MW\n"
                      "discharge_power: 8 MW\nsoc_initial: 50%\n"
                      "mode: dr_ride_through\n");
  bat_state s;
  bat_state_init(&s, &c);
  double start = s.stored_j;
  gsl_rng *r = rng_stream_create(5, RNG_KIND_MODEL, 0, 2);
  int in_dr = 0;
  for (int i = 0; i < 2000; i++) {
    bool dr = i % 200 >= 150; /* 50 of every 200 minutes */
    double cap = dr ? 15e6 : 20e6;
    double load = 14e6 + 8e6 * gsl_rng_uniform(r);
    bat_result out;
    bat_step(&c, &s, load, cap, dr, 60, &out);
    if (dr) {
      in_dr += out.power_w > 0;
      assert_true(out.power_w >= 0);
      assert_true(out.grid_w <= cap * (1 + 1e-12) || out.shortfall_w > 0);
    } else {
      assert_true(out.power_w <= 0);
      assert_true(isinf(out.target_w));
      assert_close(out.shortfall_w, 0, 0, 0);
      /* Above 20 MW - 5%: the peak is not shaved outside DR. */
      if (load > 19e6)
        assert_close(out.power_w, 0, 0, 0);
    }
    assert_in_bounds(&c, &s);
  }
  rng_stream_destroy(r);
  assert_true(in_dr > 100);
  assert_balance(&s, start);
}

/* No battery or mode none: nothing moves. */
static void none_does_nothing(void **state) {
  (void)state;
  static const char *const yamls[] = {"mode: none\ncapacity: 1 MWh\n",
                                      "capacity: 0 J\n"};
  for (size_t i = 0; i < N_OF(yamls); i++) {
    bat_config c = make(yamls[i]);
    bat_state s;
    bat_state_init(&s, &c);
    bat_result out;
    assert_close(bat_step(&c, &s, 30e6, 20e6, true, 60, &out), 0, 0, 0);
    assert_close(out.grid_w, 30e6, 0, 0);
    assert_close(s.charged_j + s.discharged_j + s.loss_j, 0, 0, 0);
  }
}

static const test_bad_yaml bad[] = {
    {"soc min above max", "capacity: 1 MWh\nsoc_min: 80%\nsoc_max: 60%\n",
     "battery.yaml:2:10: 'soc_min' is above 'soc_max'"},
    {"rte above 100%", "capacity: 1 MWh\nround_trip_efficiency: 105%\n",
     "battery.yaml:2:24: 'round_trip_efficiency' is 105%; it must be "
     "between 0% and 100%"},
    {"rte zero", "round_trip_efficiency: 0%\n",
     "battery.yaml:1:24: 'round_trip_efficiency' must be greater than zero"},
    {"negative capacity", "mode: peak_shaving\ncapacity: -5 MWh\n",
     "battery.yaml:2:11: 'capacity' is -5 MWh; it must be at least"},
    {"negative power", "discharge_power: -1 MW\n",
     "battery.yaml:1:18: 'discharge_power' is -1 MW"},
    {"initial outside", "soc_min: 20%\nsoc_initial: 10%\n",
     "battery.yaml:2:14: 'soc_initial' is outside [soc_min, soc_max]"},
    {"both thresholds", "threshold: 90%\nthreshold_power: 18 MW\n",
     "battery.yaml:2:18: give 'threshold' or 'threshold_power', not both"},
    {"unknown mode", "mode: arbitrage\n", "cannot be 'arbitrage'"},
    {"wrong unit", "capacity: 5 MW\n",
     "battery.yaml:1:13: 'capacity': 'MW' is a unit of power; expected "
     "energy"},
};

static void bad_battery_is_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&bat_schema, "battery.yaml", b->yaml, b->message);
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ADD(tests, n, defaults_and_computed_defaults);
  TEST_ADD(tests, n, soc_stays_in_bounds);
  TEST_ROWS(tests, n, cycle_losses_are_one_minus_rte, cycles);
  TEST_ADD(tests, n, peak_shaving_holds_the_cap);
  TEST_ADD(tests, n, recharge_uses_only_the_spare);
  TEST_ADD(tests, n, dr_ride_through_discharges_only_in_dr);
  TEST_ADD(tests, n, none_does_nothing);
  TEST_ROWS(tests, n, bad_battery_is_rejected, bad);
  return _cmocka_run_group_tests("battery", tests, n, NULL, NULL);
}
