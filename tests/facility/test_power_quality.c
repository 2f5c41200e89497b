/* test_pq.c - power quality: ramps, and band-passed oscillation checked
 * against sine waves whose band power is known in closed form. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "power_quality.h"
#include "tel.h"

#define PI 3.14159265358979323846

static pq_config window(double length_s) {
  return (pq_config){.start_s = 0,
                     .length_s = length_s,
                     .rate_hz = 50,
                     .band_low_hz = 0.1,
                     .band_high_hz = 20};
}

/* Feeds mean + amp sin(2 pi f t) in steps of dt for run_s seconds. */
static pq_result run_sine(double f_hz, double amp, double dt, double run_s) {
  pq_config c = window(run_s);
  pq_window w;
  sim_error err = {0};
  assert_int_equal(pq_init(&w, &c, run_s, NULL, &err), SIM_OK);
  long steps = lround(run_s / dt);
  for (long k = 0; k < steps; k++) {
    double t = (double)k * dt;
    pq_step(&w, t, 5e6 + amp * sin(2 * PI * f_hz * (t + dt / 2)));
  }
  pq_result r;
  assert_int_equal(pq_finish(&w, run_s, &r, &err), SIM_OK);
  pq_fini(&w);
  return r;
}

/* A 1 Hz swing of 1 MW lies in the band: its RMS is 1 MW / sqrt(2) and
 * the integral of its magnitude 2/pi MW per second. */
static void in_band_sine(void **state) {
  (void)state;
  pq_result r = run_sine(1, 1e6, 0.001, 100);
  assert_close(r.oscillation_w_rms, 1e6 / sqrt(2), 0.01, 0);
  assert_close(r.oscillation_j, 2 / PI * 1e6 * 100, 0.01, 0);
  /* The steepest slope of the sine, 2 pi f A, as a difference over one
   * 20 ms sample interval; the samples fall on the 1 ms steps, so an
   * interval spans 19-21 ms of the sine: within 6%. */
  assert_close(r.max_ramp_w_per_s, 2 * PI * 1e6, 0.06, 0);
}

/* A 0.01 Hz swing (a 100 s period) is below the band: nearly nothing. */
static void below_band_sine(void **state) {
  (void)state;
  pq_result r = run_sine(0.01, 1e6, 0.01, 200);
  assert_true(r.oscillation_w_rms < 0.005 * 1e6);
}

static void constant_power_has_no_oscillation(void **state) {
  (void)state;
  pq_config c = window(60);
  pq_window w;
  sim_error err = {0};
  assert_int_equal(pq_init(&w, &c, 60, NULL, &err), SIM_OK);
  for (int k = 0; k < 60; k++)
    pq_step(&w, k, 3e6);
  pq_result r;
  assert_int_equal(pq_finish(&w, 60, &r, &err), SIM_OK);
  assert_close(r.oscillation_w_rms, 0, 0, 1e-6);
  assert_close(r.max_ramp_w_per_s, 0, 0, 0);
  pq_fini(&w);
}

/* A square wave of 1 s control ticks: the largest ramp is its step over
 * one sample interval (1/50 s: 70 kW x 50 /s), and its 0.1 Hz
 * fundamental is in the band. */
static void square_wave_ramp_and_band(void **state) {
  (void)state;
  pq_config c = window(120);
  pq_window w;
  sim_error err = {0};
  assert_int_equal(pq_init(&w, &c, 1e6, NULL, &err), SIM_OK);
  for (int k = 0; k < 120; k++)
    pq_step(&w, k, (k / 5) % 2 ? 100e3 : 30e3);
  pq_result r;
  assert_int_equal(pq_finish(&w, 120, &r, &err), SIM_OK);
  assert_close(r.max_ramp_w_per_s, 70e3 * 50, 1e-12, 0);
  /* A square wave of amplitude 35 kW has RMS 35 kW; its harmonics up to
   * 20 Hz keep nearly all of it (the fundamental alone: 31.5 kW). */
  assert_true(r.oscillation_w_rms > 0.9 * 35e3 &&
              r.oscillation_w_rms <= 35e3 * 1.0001);
  pq_fini(&w);
}

/* A 0.5 s step of 40 kW inside every 1 s tick (zero-mean wave) on a 1 MW
 * mean: the samples carry it, so the ramp is 40 kW x 50 /s and the
 * 1 Hz square wave's RMS 20 kW, though every tick's mean is the same. */
static double half_tick(void *ctx, double period_s, double x) {
  (void)ctx;
  (void)period_s;
  return x < 0.5 ? 20e3 : -20e3;
}

static pq_result waved(bool smoothed, double climb_w) {
  pq_config c = window(60);
  pq_window w;
  sim_error err = {0};
  assert_int_equal(pq_init(&w, &c, 60, NULL, &err), SIM_OK);
  pq_set_wave(&w, half_tick, NULL, 1, smoothed);
  for (int k = 0; k < 60; k++)
    pq_step(&w, k, 1e6 + climb_w * k);
  pq_result r;
  assert_int_equal(pq_finish(&w, 60, &r, &err), SIM_OK);
  pq_fini(&w);
  return r;
}

static void wave_inside_the_tick(void **state) {
  (void)state;
  pq_result r = waved(false, 0);
  assert_close(r.max_ramp_w_per_s, 40e3 * 50, 1e-9, 0);
  assert_true(r.oscillation_w_rms > 0.95 * 20e3 &&
              r.oscillation_w_rms <= 20e3 * 1.0001);
  /* Smoothed: the stores absorb the wave, nothing is left in the band,
   * and a feed that climbs 1 kW a tick does so in a line: 1 kW/s. */
  r = waved(true, 0);
  assert_close(r.max_ramp_w_per_s, 0, 0, 1e-9);
  assert_close(r.oscillation_w_rms, 0, 0, 1e-6);
  r = waved(true, 1e3);
  assert_close(r.max_ramp_w_per_s, 1e3, 1e-9, 0);
}

static void window_clipped_to_the_run(void **state) {
  (void)state;
  pq_config c = window(600);
  pq_window w;
  sim_error err = {0};
  assert_int_equal(pq_init(&w, &c, 100, NULL, &err), SIM_OK);
  assert_int_equal(w.n, 5000);
  pq_fini(&w);
  c.length_s = 0;
  assert_int_equal(pq_init(&w, &c, 100, NULL, &err), SIM_OK);
  assert_int_equal(w.n, 0);
  pq_result r;
  pq_step(&w, 0, 1);
  pq_step(&w, 1, 3);
  assert_int_equal(pq_finish(&w, 2, &r, &err), SIM_OK);
  assert_close(r.max_ramp_w_per_s, 2, 0, 0);
  assert_close(r.oscillation_j, 0, 0, 0);
  pq_fini(&w);
}

/* The samples in the output: one row per 1/rate at the end of the
 * interval it holds, so the largest step between rows times the rate is
 * the summary's largest ramp; the window's figures as attributes. */
static void samples_written(void **state) {
  (void)state;
  pq_config c = window(120);
  c.start_s = 30;
  pq_window w;
  sim_error err = {0};
  assert_int_equal(pq_init(&w, &c, 1e6, NULL, &err), SIM_OK);
  for (int k = 0; k < 200; k++)
    pq_step(&w, k, (k / 5) % 2 ? 100e3 : 30e3);
  pq_result r;
  assert_int_equal(pq_finish(&w, 200, &r, &err), SIM_OK);
  tel_sink *s = tel_memory_create();
  assert_int_equal(pq_write(&w, s, &err), SIM_OK);
  size_t rows, width, trows;
  const double *p =
      tel_memory_column(s, "power_quality", "power_w", &rows, &width);
  const double *t = tel_memory_times(s, "power_quality", &trows);
  assert_non_null(p);
  assert_int_equal(rows, w.n);
  assert_int_equal(trows, w.n);
  assert_int_equal(width, 1);
  assert_close(t[0], 30 + 1.0 / 50, 1e-12, 0);
  assert_close(t[rows - 1], 30 + (double)rows / 50, 1e-12, 0);
  double step = 0;
  for (size_t i = 1; i < rows; i++)
    step = fmax(step, fabs(p[i] - p[i - 1]));
  assert_close(step * 50, r.max_ramp_w_per_s, 1e-12, 0);
  double v;
  assert_int_equal(tel_memory_group_attr(s, "power_quality", "rate_hz", &v),
                   SIM_OK);
  assert_close(v, 50, 0, 0);
  assert_int_equal(
      tel_memory_group_attr(s, "power_quality", "window_start_s", &v), SIM_OK);
  assert_close(v, 30, 0, 0);
  tel_destroy(s);
  pq_fini(&w);
}

/* A window of no samples writes no group. */
static void an_empty_window_writes_nothing(void **state) {
  (void)state;
  pq_config c = window(120);
  c.start_s = 30;
  c.length_s = 0;
  pq_window w;
  sim_error err = {0};
  size_t trows;
  assert_int_equal(pq_init(&w, &c, 100, NULL, &err), SIM_OK);
  tel_sink *s = tel_memory_create();
  assert_int_equal(pq_write(&w, s, &err), SIM_OK);
  assert_null(tel_memory_times(s, "power_quality", &trows));
  tel_destroy(s);
  pq_fini(&w);
}

/* ---- Windowed ramps, shares and range ----------------------------------- */

/* A step of d_w at step_s in a run of 1,500 s of periods of dt_s: the mean
 * of two adjacent windows of T differs by at most d_w, when they straddle
 * the step, so the ramp over every window is d_w / T, at any rate and
 * period, whether the step lies in the high-rate window or not. */
typedef struct step_case {
  const char *name;
  double dt_s, rate_hz, window_start_s, window_s, step_s, d_w;
} step_case;

static const step_case steps[] = {
    {"up step outside the window, 1 s periods", 1, 50, 0, 600, 700, 2e6},
    {"up step in the window at 100 Hz", 1, 100, 400, 600, 700, 2e6},
    {"down step in the window at 200 Hz", 1, 200, 400, 600, 700, -3e6},
    {"down step, 0.1 s periods (the series grows)", 0.1, 50, 0, 60, 700.5,
     -1e6},
    {"up step, 5 s periods and no window", 5, 50, 0, 0, 700, 5e5},
};

static void windowed_ramps_of_a_step(void **state) {
  const step_case *sc = *state;
  pq_config c = window(sc->window_s);
  c.start_s = sc->window_start_s;
  c.rate_hz = sc->rate_hz;
  pq_window w;
  sim_error err = {0};
  assert_int_equal(pq_init(&w, &c, 1500, NULL, &err), SIM_OK);
  long n = lround(1500 / sc->dt_s);
  for (long k = 0; k < n; k++) {
    double t = (double)k * sc->dt_s;
    pq_step(&w, t, 5e6 + (t >= sc->step_s ? sc->d_w : 0));
  }
  pq_result r;
  assert_int_equal(pq_finish(&w, 1500, &r, &err), SIM_OK);
  const double *up = sc->d_w > 0 ? r.ramp_up_w_per_s : r.ramp_down_w_per_s;
  const double *down = sc->d_w > 0 ? r.ramp_down_w_per_s : r.ramp_up_w_per_s;
  for (size_t k = 0; k < PQ_NRAMPS; k++) {
    assert_close(up[k], fabs(sc->d_w) / pq_ramp_windows[k].lo, 1e-6, 0);
    assert_close(down[k], 0, 0, 1e-6 * fabs(sc->d_w));
  }
  assert_close(r.dynamic_range_w, fabs(sc->d_w), 1e-12, 0);
  assert_close(r.dynamic_range_share, fabs(sc->d_w) / (5e6 + fmax(0, sc->d_w)),
               1e-12, 0);
  pq_fini(&w);
}

/* The windowed ramps by brute force: every entry (t, E) of the run kept,
 * D(x) / T at every point a step can put one (each entry's time, each
 * plus T or 2 T), E interpolated as the series does, the extremes by
 * fmax. The same terms as the series' own, so the same bits. */
typedef struct ramp_ref {
  double t[4096], e[4096];
  size_t n;
} ramp_ref;

static double ref_energy(const ramp_ref *r, double x) {
  size_t i = 0;
  while (i + 1 < r->n && r->t[i + 1] <= x)
    i++;
  if (x <= r->t[i] || i + 1 == r->n)
    return r->e[i];
  double f = (x - r->t[i]) / (r->t[i + 1] - r->t[i]);
  return r->e[i] + f * (r->e[i + 1] - r->e[i]);
}

static void ref_ramps(const ramp_ref *r, size_t k, double *up, double *down) {
  double len = pq_ramp_windows[k].lo;
  *up = *down = NAN;
  for (size_t j = 0; j < r->n; j++)
    for (int shift = 0; shift <= 2; shift++) {
      double x = r->t[j] + shift * len;
      if (x <= r->t[0] || x > r->t[r->n - 1] || x - 2 * len < r->t[0] - 1e-9)
        continue;
      double e0 = ref_energy(r, x - 2 * len), e1 = ref_energy(r, x - len);
      double d = ((ref_energy(r, x) - e1) - (e1 - e0)) / (len * len);
      *up = fmax(*up, d);
      *down = fmax(*down, -d);
    }
}

/* Steps at uneven times (runs of many a second, whole seconds, gaps of
 * several: the series' searches start where the last one ended, and the
 * series drops its old entries as it goes) give the brute force's
 * ramps, to the bit. */
static void ramps_at_uneven_steps(void **state) {
  (void)state;
  static ramp_ref ref;
  pq_config c = window(0);
  pq_window w;
  sim_error err = {0};
  const double run = 2500;
  assert_int_equal(pq_init(&w, &c, run, NULL, &err), SIM_OK);
  unsigned seed = 11;
  double t = 0, p = 5e6, held = 0;
  ref.n = 0;
  while (t < run) {
    pq_step(&w, t, p);
    ref.e[ref.n] =
        ref.n == 0 ? 0 : ref.e[ref.n - 1] + held * (t - ref.t[ref.n - 1]);
    ref.t[ref.n++] = t;
    held = p;
    unsigned u = (unsigned)rand_r(&seed);
    t += u % 5 == 0 ? 0.25 : u % 7 == 0 ? 3 + u % 4 : 1;
    p = 5e6 + 1e6 * ((double)(rand_r(&seed) % 1000) / 1000 - 0.5);
  }
  ref.e[ref.n] = ref.e[ref.n - 1] + held * (run - ref.t[ref.n - 1]);
  ref.t[ref.n++] = run; /* pq_finish's entry at the run's end */
  pq_result r;
  assert_int_equal(pq_finish(&w, run, &r, &err), SIM_OK);
  assert_true(ref.n < 4096);
  for (size_t k = 0; k < PQ_NRAMPS; k++) {
    double up, down;
    ref_ramps(&ref, k, &up, &down);
    up = isnan(up) ? NAN : fmax(0, up);
    down = isnan(down) ? NAN : fmax(0, down);
    assert_memory_equal(&r.ramp_up_w_per_s[k], &up, sizeof up);
    assert_memory_equal(&r.ramp_down_w_per_s[k], &down, sizeof down);
  }
  pq_fini(&w);
}

/* A run shorter than two windows has no ramp over them. */
static void short_run_has_no_long_ramps(void **state) {
  (void)state;
  pq_config c = window(100);
  pq_window w;
  sim_error err = {0};
  assert_int_equal(pq_init(&w, &c, 100, NULL, &err), SIM_OK);
  for (int k = 0; k < 100; k++)
    pq_step(&w, k, k < 50 ? 1e6 : 2e6);
  pq_result r;
  assert_int_equal(pq_finish(&w, 100, &r, &err), SIM_OK);
  assert_close(r.ramp_up_w_per_s[0], 1e6, 1e-9, 0);
  assert_true(isnan(r.ramp_up_w_per_s[1]) && isnan(r.ramp_down_w_per_s[1]));
  assert_true(isnan(r.ramp_up_w_per_s[2]));
  pq_fini(&w);
}

/* A square wave of +-A and a 1.4 s period (a synchronous training job's
 * iteration, as in docs/MODELS.md) over a flat mean: two adjacent 1 s
 * windows hold at most 0.7 s and at least 0.3 s of the high half, so
 * their means differ by at most (0.7 - 0.3) x 2A = 0.8 A, at any rate
 * that samples the edges; the step over one sample grows as the rate. */
static double square_1p4(void *ctx, double period_s, double x) {
  (void)period_s;
  double t = *(const double *)ctx + x;
  return fmod(t + 1e-9, 1.4) < 0.7 ? 1e5 : -1e5;
}

typedef struct rate_case {
  const char *name;
  double rate_hz;
} rate_case;

static const rate_case rates[] = {
    {"50 Hz", 50}, {"100 Hz", 100}, {"200 Hz", 200}};

static void one_second_ramp_independent_of_rate(void **state) {
  const rate_case *rc = *state;
  pq_config c = window(120);
  c.rate_hz = rc->rate_hz;
  pq_window w;
  sim_error err = {0};
  double now = 0;
  assert_int_equal(pq_init(&w, &c, 120, NULL, &err), SIM_OK);
  pq_set_wave(&w, square_1p4, &now, 1, false);
  for (int k = 0; k < 120; k++) {
    now = k;
    pq_step(&w, now, 5e6);
  }
  pq_result r;
  assert_int_equal(pq_finish(&w, 120, &r, &err), SIM_OK);
  assert_close(r.ramp_up_w_per_s[0], 0.8e5, 1e-9, 0);
  assert_close(r.ramp_down_w_per_s[0], 0.8e5, 1e-9, 0);
  assert_close(r.max_ramp_w_per_s, 2e5 * rc->rate_hz, 1e-9, 0);
  assert_close(r.dynamic_range_w, 2e5, 1e-12, 0);
  assert_close(r.dynamic_range_share, 2e5 / 5.1e6, 1e-12, 0);
  pq_fini(&w);
}

/* A sine's swing lies wholly in the band and sub-band holding its
 * frequency: those shares are 1 and the others 0 (sub-bands below 1 Hz,
 * 1-2.5 Hz, 7-20 Hz; -1: not that sub-band). */
typedef struct share_case {
  const char *name;
  double f_hz, run_s, band;
  int sub; /* the sub-band holding f, or -1 */
} share_case;

static const share_case share_rows[] = {
    {"0.5 Hz: band, below 1 Hz", 0.5, 100, 1, 0},
    {"1.5 Hz: band, 1-2.5 Hz", 1.5, 100, 1, 1},
    {"4 Hz: band only", 4, 100, 1, -1},
    {"10 Hz: band, 7-20 Hz", 10, 100, 1, 2},
    {"0.01 Hz: below the band, below 1 Hz", 0.01, 200, 0, 0},
};

static void swing_shares(void **state) {
  const share_case *sc = *state;
  pq_result r = run_sine(sc->f_hz, 1e6, 0.001, sc->run_s);
  assert_close(r.band_share, sc->band, 0, 0.01);
  for (int b = 0; b < PQ_NSUBBANDS; b++)
    assert_close(r.sub_share[b], b == sc->sub ? 1 : 0, 0, 0.01);
}

/* Constant power has no swing: its shares are undefined, not 0. */
static void no_swing_no_share(void **state) {
  (void)state;
  pq_config c = window(60);
  pq_window w;
  sim_error err = {0};
  assert_int_equal(pq_init(&w, &c, 60, NULL, &err), SIM_OK);
  for (int k = 0; k < 60; k++)
    pq_step(&w, k, 3e6);
  pq_result r;
  assert_int_equal(pq_finish(&w, 60, &r, &err), SIM_OK);
  assert_true(isnan(r.band_share) && isnan(r.sub_share[1]));
  assert_close(r.ramp_up_w_per_s[0], 0, 0, 1e-9);
  assert_close(r.dynamic_range_w, 0, 0, 0);
  pq_fini(&w);
}

static const test_bad_yaml bad[] = {
    {"nyquist", "rate: 30 Hz\n", "pq.yaml:1:7: the rate cannot resolve"},
    {"band upside down", "band_low: 30 Hz\nband_high: 1 Hz\nrate: 100 Hz\n",
     "band_low must be below band_high"},
    {"huge window", "window: 3 d\nrate: 50 Hz\n", "samples"},
    {"unit", "window: 10 MW\n", "unit of power"},
};

static void bad_config(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&pq_schema, "pq.yaml", b->yaml, b->message);
}

/* The window's samples, the ramp series' two arrays, and pq_finish's
 * scratch fail cleanly. */
static void allocation_failures(void **state) {
  (void)state;
  pq_config c = window(60);
  pq_window w;
  test_alloc t;
  sim_error err = {0};
  for (int k = 1; k <= 3; k++) {
    test_alloc_init(&t, k);
    assert_int_equal(pq_init(&w, &c, 60, &t.hook, &err), SIM_ENOMEM);
    assert_int_equal(t.live, 0);
    pq_fini(&w);
  }
  test_alloc_init(&t, 4);
  assert_int_equal(pq_init(&w, &c, 60, &t.hook, &err), SIM_OK);
  for (int k = 0; k < 60; k++)
    pq_step(&w, k, 5e6 + 1e5 * (k % 2));
  pq_result r;
  err = (sim_error){0};
  assert_int_equal(pq_finish(&w, 60, &r, &err), SIM_ENOMEM);
  assert_int_equal(err.code, SIM_ENOMEM);
  assert_int_equal(t.live, 3);
  pq_fini(&w);
  assert_int_equal(t.live, 0);
}

int main(void) {
  struct CMUnitTest tests[40];
  size_t n = 0;
  TEST_ADD(tests, n, in_band_sine);
  TEST_ADD(tests, n, allocation_failures);
  TEST_ADD(tests, n, below_band_sine);
  TEST_ADD(tests, n, constant_power_has_no_oscillation);
  TEST_ADD(tests, n, square_wave_ramp_and_band);
  TEST_ADD(tests, n, window_clipped_to_the_run);
  TEST_ADD(tests, n, samples_written);
  TEST_ADD(tests, n, an_empty_window_writes_nothing);
  TEST_ADD(tests, n, wave_inside_the_tick);
  TEST_ROWS(tests, n, windowed_ramps_of_a_step, steps);
  TEST_ADD(tests, n, short_run_has_no_long_ramps);
  TEST_ADD(tests, n, ramps_at_uneven_steps);
  TEST_ROWS(tests, n, one_second_ramp_independent_of_rate, rates);
  TEST_ROWS(tests, n, swing_shares, share_rows);
  TEST_ADD(tests, n, no_swing_no_share);
  TEST_ROWS(tests, n, bad_config, bad);
  return _cmocka_run_group_tests("power_quality", tests, n, NULL, NULL);
}
