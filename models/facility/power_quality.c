/* power_quality.c - ramps and band-limited oscillation of facility power,
 * from a window sampled at its own rate and the run's control periods
 * (power_quality.h). */
#include "power_quality.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fft_halfcomplex.h>
#include <gsl/gsl_fft_real.h>

static int check_pq(void *obj, const scn_loc *loc, void *user, sim_error *err);

const pq_span pq_ramp_windows[PQ_NRAMPS] = {
    {"1s", 1, 0}, {"1min", 60, 0}, {"10min", 600, 0}};

const pq_span pq_sub_bands[PQ_NSUBBANDS] = {
    {"below_1hz", 0, 1}, {"1_2p5hz", 1, 2.5}, {"7_20hz", 7, 20}};

/* The series starts at this many entries and doubles when the entries of
 * the last 2 x 10 min fill it (1,200 at a 1 s control period). */
#define SERIES_START 256

#define PQ_FIELD(k, member, d, def, h)                                         \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(pq_config, member),     \
    .dim = d, .min = 0, .max = HUGE_VAL, .dflt = def, .help = h                \
  }

/* The 0.1-20 Hz band is where grid operators have asked large AI loads to
 * damp synchronous swings (the 0.1-20 Hz band of arXiv:2508.14318); 50 Hz sampling
 * resolves it with margin over Nyquist. */
static const scn_field pq_fields[] = {
    PQ_FIELD("window_start", start_s, UNITS_TIME, "0 s",
             "when the high-rate window starts"),
    PQ_FIELD("window", length_s, UNITS_TIME, "10 min",
             "its length; 0 s turns it off"),
    PQ_FIELD("rate", rate_hz, UNITS_FREQUENCY, "50 Hz",
             "sampling rate of the window"),
    PQ_FIELD("band_low", band_low_hz, UNITS_FREQUENCY, "0.1 Hz",
             "lower edge of the oscillation band"),
    PQ_FIELD("band_high", band_high_hz, UNITS_FREQUENCY, "20 Hz",
             "upper edge of the oscillation band"),
};

const scn_schema pq_schema =
    SCN_SCHEMA("power quality", pq_config, pq_fields, .check = check_pq);

static int check_pq(void *obj, const scn_loc *loc, void *user, sim_error *err) {
  (void)user;
  const pq_config *c = obj;
  if (!(c->band_low_hz < c->band_high_hz))
    return scn_fail(loc, "band_low", err, NULL,
                    "band_low must be below band_high");
  if (!(c->rate_hz > 2 * c->band_high_hz))
    return scn_fail(loc, "rate", err, "Nyquist: rate > 2 x band_high",
                    "the rate cannot resolve the band");
  /* 1e7 samples (about 240 MB with the FFT's copies) keeps the window well
   * inside docs/performance-log.md's 1 GB. */
  if (c->length_s * c->rate_hz > 1e7)
    return scn_fail(loc, "window", err, "shorten the window or the rate",
                    "the window would hold %.3g samples",
                    c->length_s * c->rate_hz);
  return SIM_OK;
}

/* The largest 2^a 3^b 5^c <= n: GSL's mixed-radix FFT is fast on those
 * lengths and O(n^2) on a large prime; the window loses under 1%. */
static size_t fft_size(size_t n) {
  size_t best = 1;
  for (size_t a = 1; a <= n; a *= 2)
    for (size_t b = a; b <= n; b *= 3)
      for (size_t c = b; c <= n; c *= 5)
        best = c > best ? c : best;
  return best;
}

static int init_series(pq_window *w, sim_error *err) {
  for (size_t k = 0; k < PQ_NRAMPS; k++)
    w->ramp_up[k] = w->ramp_down[k] = NAN;
  w->p_min = HUGE_VAL;
  w->p_max = -HUGE_VAL;
  w->ser_cap = SERIES_START;
  w->ser_t = sim_alloc(w->alloc, w->ser_cap * sizeof *w->ser_t);
  w->ser_e = sim_alloc(w->alloc, w->ser_cap * sizeof *w->ser_e);
  return w->ser_t != NULL && w->ser_e != NULL
             ? SIM_OK
             : sim_error_set(err, SIM_ENOMEM, "out of memory for the ramps");
}

int pq_init(pq_window *w, const pq_config *c, double run_s,
            const sim_allocator *alloc, sim_error *err) {
  memset(w, 0, sizeof *w);
  w->alloc = alloc;
  w->cfg = *c;
  double end = fmin(c->start_s + c->length_s, run_s);
  w->cfg.length_s = fmax(0, end - c->start_s);
  w->n = (size_t)floor(w->cfg.length_s * c->rate_hz);
  if (w->n > 0) {
    w->n = fft_size(w->n);
    w->cfg.length_s = (double)w->n / c->rate_hz;
    w->samples = sim_calloc(alloc, w->n, sizeof *w->samples);
    if (w->samples == NULL) {
      int rc =
          sim_error_set(err, SIM_ENOMEM, "out of memory for %zu samples", w->n);
      pq_fini(w);
      return rc;
    }
  }
  int rc = init_series(w, err);
  if (rc != SIM_OK)
    pq_fini(w);
  return rc;
}

void pq_fini(pq_window *w) {
  sim_free(w->alloc, w->samples);
  sim_free(w->alloc, w->ser_t);
  sim_free(w->alloc, w->ser_e);
  w->samples = w->ser_t = w->ser_e = NULL;
  w->n = w->ser_n = w->ser_cap = 0;
}

/* ---- The windowed ramps over the run ------------------------------------
 * The series holds (t_k, E_k), E the energy drawn since the first step;
 * between steps the power is constant, so E is linear and the mean over
 * any span is a difference of interpolated E. D(x) = mean(x-T, x) -
 * mean(x-2T, x-T) is linear between the points where x, x-T or x-2T
 * crosses a step, so its extremes over the run are at those points: each
 * new step at t evaluates those that fall in (previous step, t]. */

/* The last entry at or before x (the first if none is), by bisection. */
static size_t entry_at_or_before(const pq_window *w, double x) {
  size_t lo = 0, hi = w->ser_n;
  while (hi - lo > 1) { /* ser_t[lo] <= x < ser_t[hi], bounds aside */
    size_t mid = lo + (hi - lo) / 2;
    if (w->ser_t[mid] <= x)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* entry_at_or_before's answer, looked for first at *hint and up to
 * HINT_WALK entries after it (where the last search for the same point
 * of the same window ended: a tick moves each point about one entry on),
 * bisection where that fails; *hint the answer. The times increase
 * strictly, so the last entry at or before x is the one whose next is
 * after it, wherever found (perf of bench-10k's fluid day: the
 * bisections, 33 a step, about 1% of the main thread). */
#define HINT_WALK 4
static size_t entry_near(const pq_window *w, double x, size_t *hint) {
  const double *t = w->ser_t;
  size_t h = *hint, n = w->ser_n;
  if (h < n && t[h] <= x) {
    for (int k = 0; k < HINT_WALK && h + 1 < n && t[h + 1] <= x; k++)
      h++;
    if (h + 1 == n || x < t[h + 1])
      return *hint = h;
  }
  return *hint = entry_at_or_before(w, x);
}

/* E at x, for x within the series' span (x <= the last entry's time),
 * its entry searched from *hint (entry_near). */
static double energy_at(const pq_window *w, double x, size_t *hint) {
  size_t i = entry_near(w, x, hint);
  if (x <= w->ser_t[i] || i + 1 == w->ser_n)
    return w->ser_e[i];
  double f = (x - w->ser_t[i]) / (w->ser_t[i + 1] - w->ser_t[i]);
  return w->ser_e[i] + f * (w->ser_e[i + 1] - w->ser_e[i]);
}

/* D(x) / T for window k, kept if the two windows lie in the run. The
 * nanosecond the engine rounds step times to is forgiven at the start.
 * hint: the three points' (energy_at). */
static void ramp_at(pq_window *w, size_t k, double x, size_t hint[3]) {
  double len = pq_ramp_windows[k].lo;
  if (x - 2 * len < w->t0 - 1e-9)
    return;
  double e0 = energy_at(w, x - 2 * len, &hint[0]);
  double e1 = energy_at(w, x - len, &hint[1]);
  double d = ((energy_at(w, x, &hint[2]) - e1) - (e1 - e0)) / (len * len);
  w->ramp_up[k] = fmax(w->ramp_up[k], d);
  w->ramp_down[k] = fmax(w->ramp_down[k], -d);
}

/* The points of window k in (from, to]: to itself, and each step time
 * plus len or 2 len that falls there (found by bisection, so a step
 * costs O(log n) however fine the periods; each search from its own
 * hint, w->ser_hint[k]: to's three, the two shifts' first entries, the
 * two shifts' points' three each). */
static void ramps_between(pq_window *w, size_t k, double from, double to) {
  double len = pq_ramp_windows[k].lo;
  size_t *hint = w->ser_hint[k];
  ramp_at(w, k, to, hint);
  for (int shift = 1; shift <= 2; shift++) {
    size_t i = entry_near(w, to - shift * len, &hint[2 + shift]) + 1;
    while (i-- > 0) {
      double x = w->ser_t[i] + shift * len;
      if (x <= from)
        break;
      if (x < to)
        ramp_at(w, k, x, &hint[2 + 3 * shift]);
    }
  }
}

/* Drops the entries older than 2 x the longest window before the last
 * (keeping one before, to interpolate from): the points a new step
 * evaluates reach no further back. If most are that recent, doubles the
 * room. */
static bool make_room(pq_window *w) {
  double keep = w->ser_t[w->ser_n - 1] - 2 * pq_ramp_windows[PQ_NRAMPS - 1].lo;
  size_t first = 0;
  while (first + 1 < w->ser_n && w->ser_t[first + 1] < keep)
    first++;
  memmove(w->ser_t, w->ser_t + first, (w->ser_n - first) * sizeof *w->ser_t);
  memmove(w->ser_e, w->ser_e + first, (w->ser_n - first) * sizeof *w->ser_e);
  w->ser_n -= first;
  if (w->ser_n < w->ser_cap / 2)
    return true;
  size_t cap = 2 * w->ser_cap;
  double *nt = sim_resize(w->alloc, w->ser_t, cap * sizeof *nt);
  if (nt != NULL)
    w->ser_t = nt;
  double *ne =
      nt == NULL ? NULL : sim_resize(w->alloc, w->ser_e, cap * sizeof *ne);
  if (ne == NULL)
    return false;
  w->ser_e = ne;
  w->ser_cap = cap;
  return true;
}

/* The power held since the last step runs to t: a new entry, and the
 * ramps whose points fall since the last step. */
static void series_to(pq_window *w, double t) {
  if (w->oom || (w->ser_n == w->ser_cap && !make_room(w))) {
    w->oom = true;
    return;
  }
  double e = w->ser_n == 0 ? 0
                           : w->ser_e[w->ser_n - 1] +
                                 w->last_p * (t - w->ser_t[w->ser_n - 1]);
  double from = w->ser_n == 0 ? t : w->ser_t[w->ser_n - 1];
  w->ser_t[w->ser_n] = t;
  w->ser_e[w->ser_n++] = e;
  for (size_t k = 0; k < PQ_NRAMPS && w->ser_n > 1; k++)
    ramps_between(w, k, from, t);
}

/* Sample i is taken at start + i / rate. */
static size_t first_sample_at_or_after(const pq_window *w, double t) {
  double x = ceil((t - w->cfg.start_s) * w->cfg.rate_hz);
  if (x <= 0)
    return 0;
  return x >= (double)w->n ? w->n : (size_t)x;
}

/* Samples [filled, up to t) hold p. */
static void hold(pq_window *w, double t, double p) {
  size_t end = first_sample_at_or_after(w, t);
  for (size_t i = w->filled; i < end; i++)
    w->samples[i] = p;
  if (end > w->filled)
    w->filled = end;
}

void pq_set_wave(pq_window *w, pq_wave_fn wave, void *ctx, double period_s,
                 bool smoothed) {
  w->wave = wave;
  w->wave_ctx = ctx;
  w->period_s = period_s;
  w->smoothed = smoothed;
}

/* The samples of [t, t + period) as pq_set_wave says, from = the power
 * before t, and half a sample beyond: the next step's time is rounded to
 * the engine's nanosecond, and a sample on the boundary must not fall in
 * a gap (held at the mean, it would be a false step). The next step
 * writes over what lies after it. */
static void shape(pq_window *w, double t, double from, double p) {
  size_t i = first_sample_at_or_after(w, t);
  size_t end =
      first_sample_at_or_after(w, t + w->period_s + 0.5 / w->cfg.rate_hz);
  for (; i < end; i++) {
    double x = w->cfg.start_s + (double)i / w->cfg.rate_hz - t;
    if (w->smoothed)
      w->samples[i] = from + (p - from) * fmin(1, x / w->period_s);
    else
      w->samples[i] =
          p + (w->wave != NULL ? w->wave(w->wave_ctx, w->period_s, x) : 0);
  }
  w->filled = end;
}

void pq_step(pq_window *w, double t, double p) {
  if (w->started) {
    double dt = t - w->last_t;
    if (dt > 0 && p != w->last_p)
      w->max_ramp = fmax(w->max_ramp, fabs(p - w->last_p) / dt);
    if (w->n > 0)
      hold(w, t, w->last_p);
  } else {
    w->t0 = t;
  }
  if (!w->started || t > w->last_t)
    series_to(w, t);
  w->p_min = fmin(w->p_min, p);
  w->p_max = fmax(w->p_max, p);
  if (w->n > 0 && w->period_s > 0) {
    size_t i = first_sample_at_or_after(w, t);
    w->filled = i < w->filled ? i : w->filled;
    shape(w, t, w->started ? w->last_p : p, p);
  }
  w->started = true;
  w->last_t = t;
  w->last_p = p;
}

/* Keeps the bins of the band in GSL's half-complex layout and zeroes the
 * rest: bin k (real at 2k-1, imaginary at 2k) is k rate / n Hz. */
static void band_pass(double *x, size_t n, const pq_config *c) {
  x[0] = 0;
  for (size_t k = 1; 2 * k - 1 < n; k++) {
    double f = (double)k * c->rate_hz / (double)n;
    if (f >= c->band_low_hz && f <= c->band_high_hz)
      continue;
    x[2 * k - 1] = 0;
    if (2 * k < n)
      x[2 * k] = 0;
  }
}

/* The energy of bin k of a half-complex spectrum of n points (the
 * negative frequency's half counted: twice, but the Nyquist bin once). */
static double bin_energy(const double *x, size_t n, size_t k) {
  double re = x[2 * k - 1], im = 2 * k < n ? x[2 * k] : 0;
  return (2 * k < n ? 2 : 1) * (re * re + im * im);
}

/* The share of the swing's energy in [lo, hi) Hz (hi included if
 * closed), from the spectrum before the band-pass; NaN with no swing or
 * a band wholly above Nyquist. */
static double band_share(const pq_window *w, const double *x, double lo,
                         double hi, bool closed) {
  double in = 0, all = 0, df = w->cfg.rate_hz / (double)w->n;
  for (size_t k = 1; 2 * k - 1 < w->n; k++) {
    double e = bin_energy(x, w->n, k), f = (double)k * df;
    all += e;
    if (f >= lo && (f < hi || (closed && f <= hi)))
      in += e;
  }
  return all > 0 && lo < w->cfg.rate_hz / 2 ? in / all : NAN;
}

static void shares(const pq_window *w, const double *x, pq_result *out) {
  out->band_share =
      band_share(w, x, w->cfg.band_low_hz, w->cfg.band_high_hz, true);
  for (size_t b = 0; b < PQ_NSUBBANDS; b++)
    out->sub_share[b] =
        band_share(w, x, pq_sub_bands[b].lo, pq_sub_bands[b].hi, false);
}

static int band_limited(pq_window *w, double *x, pq_result *out,
                        sim_error *err) {
  size_t n = w->n;
  memcpy(x, w->samples, n * sizeof *x);
  gsl_fft_real_wavetable *rt = gsl_fft_real_wavetable_alloc(n);
  gsl_fft_halfcomplex_wavetable *ht = gsl_fft_halfcomplex_wavetable_alloc(n);
  gsl_fft_real_workspace *ws = gsl_fft_real_workspace_alloc(n);
  int rc =
      !rt || !ht || !ws ? GSL_ENOMEM : gsl_fft_real_transform(x, 1, n, rt, ws);
  if (rc == GSL_SUCCESS) {
    shares(w, x, out);
    band_pass(x, n, &w->cfg);
    rc = gsl_fft_halfcomplex_inverse(x, 1, n, ht, ws);
  }
  gsl_fft_real_wavetable_free(rt);
  gsl_fft_halfcomplex_wavetable_free(ht);
  gsl_fft_real_workspace_free(ws);
  return rc == GSL_SUCCESS
             ? SIM_OK
             : sim_error_set(err, SIM_ENOMEM, "FFT of %zu samples: %s", n,
                             rc == GSL_ENOMEM ? sim_strerror(SIM_ENOMEM)
                                              : gsl_strerror(rc));
}

/* The windowed ramps on the samples, from their running sums s (n + 1 of
 * them): window k spans m samples, and the change of the mean between
 * adjacent spans, over m / rate, is its ramp at each sample. */
static void sample_ramps(pq_window *w, double *s) {
  s[0] = 0;
  for (size_t i = 0; i < w->n; i++)
    s[i + 1] = s[i] + w->samples[i];
  for (size_t k = 0; k < PQ_NRAMPS; k++) {
    size_t m = (size_t)lround(pq_ramp_windows[k].lo * w->cfg.rate_hz);
    double len = (double)m / w->cfg.rate_hz;
    for (size_t i = m; m > 0 && i + m <= w->n; i++) {
      double d = ((s[i + m] - s[i]) - (s[i] - s[i - m])) / (double)m / len;
      w->ramp_up[k] = fmax(w->ramp_up[k], d);
      w->ramp_down[k] = fmax(w->ramp_down[k], -d);
    }
  }
}

/* The samples' figures: the largest step, the windowed ramps, the range,
 * the band's shares and its band-passed swing. */
static int sample_figures(pq_window *w, pq_result *out, sim_error *err) {
  double ramp = 0;
  for (size_t i = 0; i < w->n; i++) {
    if (i > 0)
      ramp = fmax(ramp, fabs(w->samples[i] - w->samples[i - 1]));
    w->p_min = fmin(w->p_min, w->samples[i]);
    w->p_max = fmax(w->p_max, w->samples[i]);
  }
  out->max_ramp_w_per_s = ramp * w->cfg.rate_hz;
  double *x = sim_alloc(w->alloc, (w->n + 1) * sizeof *x);
  if (x == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  sample_ramps(w, x);
  int rc = band_limited(w, x, out, err);
  double abs_sum = 0, sq_sum = 0;
  for (size_t i = 0; rc == SIM_OK && i < w->n; i++) {
    abs_sum += fabs(x[i]);
    sq_sum += x[i] * x[i];
  }
  out->oscillation_j = abs_sum / w->cfg.rate_hz;
  out->oscillation_w_rms = sqrt(sq_sum / (double)w->n);
  sim_free(w->alloc, x);
  return rc;
}

int pq_finish(pq_window *w, double end_s, pq_result *out, sim_error *err) {
  if (w->started && w->n > 0)
    hold(w, end_s, w->last_p);
  if (w->started && end_s > w->last_t)
    series_to(w, end_s);
  *out = (pq_result){.max_ramp_w_per_s = w->max_ramp,
                     .band_share = NAN,
                     .sub_share = {NAN, NAN, NAN}};
  if (w->oom)
    return sim_error_set(err, SIM_ENOMEM, "out of memory for the ramps");
  int rc = w->n < 2 ? SIM_OK : sample_figures(w, out, err);
  /* A run that only climbs has a largest fall of 0, not of minus the
   * smallest climb. */
  for (size_t k = 0; k < PQ_NRAMPS; k++) {
    out->ramp_up_w_per_s[k] =
        isnan(w->ramp_up[k]) ? NAN : fmax(0, w->ramp_up[k]);
    out->ramp_down_w_per_s[k] =
        isnan(w->ramp_down[k]) ? NAN : fmax(0, w->ramp_down[k]);
  }
  out->dynamic_range_w = w->started ? w->p_max - w->p_min : NAN;
  out->dynamic_range_share =
      w->started && w->p_max > 0 ? out->dynamic_range_w / w->p_max : NAN;
  return rc;
}

/* ---- The samples in the output ------------------------------------------ */

static const tel_column pq_columns[] = {
    {"power_w", "W",
     "facility power at the feed in the power-quality window, one sample "
     "per 1/rate"},
};

/* The group's attributes: how to read its rows. */
static int put_window_attrs(const pq_window *w, tel_sink *sink) {
  const struct {
    const char *key;
    double v;
  } attrs[] = {{"rate_hz", w->cfg.rate_hz},
               {"window_start_s", w->cfg.start_s},
               {"band_low_hz", w->cfg.band_low_hz},
               {"band_high_hz", w->cfg.band_high_hz}};
  int rc = SIM_OK;
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0] && rc == SIM_OK; i++)
    rc = tel_put_group_attr(sink, "power_quality", attrs[i].key, attrs[i].v);
  return rc;
}

int pq_write(const pq_window *w, tel_sink *sink, sim_error *err) {
  if (w->n == 0)
    return SIM_OK;
  const tel_group g = {"power_quality", pq_columns, 1, 1, NULL, NULL};
  size_t id;
  int rc = tel_open_group(sink, &g, &id);
  for (size_t i = 0; i < w->n && rc == SIM_OK; i++)
    rc = tel_append(sink, id, w->cfg.start_s + (double)(i + 1) / w->cfg.rate_hz,
                    &w->samples[i]);
  if (rc == SIM_OK)
    rc = put_window_attrs(w, sink);
  return rc == SIM_OK ? SIM_OK : sim_error_set(err, rc, "%s", tel_errmsg(sink));
}
