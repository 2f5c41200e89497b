/* test_disturb.c - disturbances and the facility's answer, by hand: the
 * ITIC staircase, a sag the protection tolerates (nothing lost), a longer
 * one that trips and returns on the stated ramp, the UPS alone running
 * out, a second sag while off, a re-trip during the ramp, frequency
 * excursions, and the schemas' refusals. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "disturb.h"

/* The defaults as the schema gives them (ITIC, 47-63 Hz, 5 min UPS, a
 * 10 s generator, 5 min to reconnect, a 5 min ramp). */
static dist_config make(const char *yaml) {
  dist_config c;
  sim_error err = {0};
  memset(&c, 0, sizeof c);
  if (scn_bind_string("rt.yaml", yaml, &dist_schema, &c, NULL, &err) !=
      SIM_OK)
    fail_msg("%s", err.msg);
  return c;
}

static dist_event sag(double start, double dur, double v) {
  return (dist_event){DIST_SAG, start, dur, v, NAN};
}

static dist_event freq(double start, double dur, double hz) {
  return (dist_event){DIST_FREQUENCY, start, dur, NAN, hz};
}

typedef struct itic_row {
  const char *name;
  double v, want_s;
} itic_row;

static const itic_row itic_rows[] = {
    {"loss of voltage: 20 ms", 0.0, 0.02}, {"50%: 20 ms", 0.5, 0.02},
    {"70%: 0.5 s", 0.70, 0.5},             {"75%: 0.5 s", 0.75, 0.5},
    {"80%: 10 s", 0.80, 10},               {"89%: 10 s", 0.89, 10},
    {"90%: for good", 0.90, INFINITY},
};

static void itic_staircase(void **state) {
  const itic_row *r = *state;
  assert_true(dist_tolerated_s(dist_itic, dist_nitic, r->v) == r->want_s);
}

/* 75% for 0.3 s: ITIC tolerates 0.5 s. Met, no trip, the grid carries
 * everything at every time. */
static void short_sag_loses_nothing(void **state) {
  (void)state;
  dist_config c = make("{}");
  dist_event e = sag(100, 0.3, 0.75);
  dist_response r;
  dist_respond(&c, &e, 1, &r);
  assert_true(r.must && r.connected && !r.tripped && r.met);
  assert_true(isnan(r.trip_s) && isnan(r.dark_start_s));
  assert_true(dist_share(&r, 1, 100.1) == 1);
  assert_true(dist_share_mean(&r, 1, 0, 1000) == 1);
  scn_release(&dist_schema, &c);
}

/* 75% for 2 s at t = 100: the protection (ITIC) lets go at 100.5. The
 * sag ends at 102; reconnection 300 s later, at 402; the ramp takes 300 s,
 * so half is back at 552 and all at 702. Outside the curve (2 s > 0.5
 * s): not a ride-through failure. The generator (10 s <= 5 min) carries
 * the IT: never dark. */
static void long_sag_trips_and_ramps_back(void **state) {
  (void)state;
  dist_config c = make("{}");
  dist_event e = sag(100, 2, 0.75);
  dist_response r;
  dist_respond(&c, &e, 1, &r);
  assert_true(!r.must && r.connected && r.tripped && !r.met);
  assert_close(r.trip_s, 100.5, 0, 1e-12);
  assert_close(r.reconnect_s, 402, 0, 1e-12);
  assert_close(r.back_s, 702, 0, 1e-12);
  assert_true(isnan(r.dark_start_s));
  assert_true(dist_share(&r, 1, 100.4) == 1);
  assert_true(dist_share(&r, 1, 100.5) == 0);
  assert_true(dist_share(&r, 1, 401) == 0);
  assert_close(dist_share(&r, 1, 552), 0.5, 0, 1e-12);
  assert_true(dist_share(&r, 1, 702) == 1);
  /* over the ramp the mean is a half; over [0, 1000] the deficit is
   * 301.5 s off plus 150 s of ramp */
  assert_close(dist_share_mean(&r, 1, 402, 702), 0.5, 0, 1e-12);
  assert_close(dist_share_mean(&r, 1, 0, 1000), 1 - 451.5 / 1000, 0, 1e-12);
  scn_release(&dist_schema, &c);
}

/* Without a generator the UPS carries 300 s: off from 100.5 to 402 is
 * 301.5 s, so the IT is dark from 400.5 to 402. */
static void ups_alone_runs_out(void **state) {
  (void)state;
  dist_config c = make("{generator: false}");
  dist_event e = sag(100, 2, 0.75);
  dist_response r;
  dist_respond(&c, &e, 1, &r);
  assert_close(r.dark_start_s, 400.5, 0, 1e-12);
  assert_close(r.dark_end_s, 402, 0, 1e-12);
  /* a generator too slow for the UPS is no generator */
  dist_config slow = make("{generator_start: 6 min}");
  dist_respond(&slow, &e, 1, &r);
  assert_close(r.dark_start_s, 400.5, 0, 1e-12);
  scn_release(&dist_schema, &c);
  scn_release(&dist_schema, &slow);
}

/* A protection stricter than ITIC (any sag below 90%) trips on a sag
 * ITIC says to ride through; the second sag, while off, moves the
 * reconnection to its end + 300 s and is not met either. */
static void sag_while_off_waits_longer(void **state) {
  (void)state;
  dist_config c = make("{trip: [{voltage: 0%, duration: 0 s}, "
                       "{voltage: 90%, duration: 366 d}]}");
  dist_event e[2] = {sag(600, 0.083, 0.75), sag(616, 0.083, 0.75)};
  dist_response r[2];
  dist_respond(&c, e, 2, r);
  assert_true(r[0].must && r[0].tripped && !r[0].met);
  assert_close(r[0].trip_s, 600, 0, 1e-12);
  assert_true(r[1].must && !r[1].connected && !r[1].tripped && !r[1].met);
  assert_close(r[0].reconnect_s, 916.083, 0, 1e-9);
  assert_close(r[0].back_s, 1216.083, 0, 1e-9);
  scn_release(&dist_schema, &c);
}

/* A sag during the return ramp trips the facility again and cuts the
 * first return short at the new trip. */
static void retrip_during_ramp(void **state) {
  (void)state;
  dist_config c = make("{}");
  dist_event e[2] = {sag(100, 2, 0.75), sag(500, 2, 0.75)};
  dist_response r[2];
  dist_respond(&c, e, 2, r);
  assert_true(r[1].connected && r[1].tripped);
  assert_close(r[0].back_s, 500.5, 0, 1e-12);
  assert_close(dist_share(r, 2, 500), (500 - 402) / 300.0, 0, 1e-12);
  assert_true(dist_share(r, 2, 501) == 0);
  scn_release(&dist_schema, &c);
}

/* 59 Hz is inside 47-63 Hz: no trip; inside a ride band of 58.5-61.5 it
 * is met. 58 Hz under frequency_low 58.5 Hz trips at once. */
static void frequency_excursions(void **state) {
  (void)state;
  dist_config c = make("{frequency_low: 58.5 Hz, ride_low: 58.5 Hz, "
                       "ride_high: 61.5 Hz}");
  dist_event e[2] = {freq(10, 5, 59), freq(1000, 5, 58)};
  dist_response r[2];
  dist_respond(&c, e, 2, r);
  assert_true(r[0].must && !r[0].tripped && r[0].met);
  assert_true(!r[1].must && r[1].tripped);
  assert_close(r[1].trip_s, 1000, 0, 0);
  scn_release(&dist_schema, &c);
}

static const test_bad_yaml bad[] = {
    {"sag without voltage", "{kind: sag, start: 1 s, duration: 1 s}",
     "a sag needs voltage"},
    {"frequency with voltage",
     "{kind: frequency, start: 1 s, duration: 1 s, voltage: 50%}",
     "a frequency excursion needs frequency"},
    {"unknown kind", "{kind: swell, start: 1 s, duration: 1 s}",
     "cannot be 'swell'"},
};

static void bad_event_is_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&dist_event_schema, "d.yaml", b->yaml, b->message);
}

static const test_bad_yaml bad_config[] = {
    {"curve not ascending",
     "curve: [{voltage: 80%, duration: 1 s}, {voltage: 70%, duration: 2 s}]",
     "d.yaml:1:"},
    {"one side of the band", "ride_low: 59 Hz", "give ride_low and ride_high"},
    {"band upside down", "frequency_low: 61 Hz\nfrequency_high: 59 Hz",
     "frequency_low must be below frequency_high"},
};

static void bad_config_is_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&dist_schema, "d.yaml", b->yaml, b->message);
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ROWS(tests, n, itic_staircase, itic_rows);
  TEST_ADD(tests, n, short_sag_loses_nothing);
  TEST_ADD(tests, n, long_sag_trips_and_ramps_back);
  TEST_ADD(tests, n, ups_alone_runs_out);
  TEST_ADD(tests, n, sag_while_off_waits_longer);
  TEST_ADD(tests, n, retrip_during_ramp);
  TEST_ADD(tests, n, frequency_excursions);
  TEST_ROWS(tests, n, bad_event_is_rejected, bad);
  TEST_ROWS(tests, n, bad_config_is_rejected, bad_config);
  return _cmocka_run_group_tests("disturb", tests, n, NULL, NULL);
}
