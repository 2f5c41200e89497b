/* power_quality.c - largest ramp and band-limited oscillation of facility
 * power, from a window sampled at its own rate (power_quality.h). */
#include "power_quality.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fft_halfcomplex.h>
#include <gsl/gsl_fft_real.h>

static int check_pq(void *obj, const scn_loc *loc, void *user, sim_error *err);

#define PQ_FIELD(k, member, d, def, h)                                         \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(pq_config, member),     \
    .dim = d, .min = 0, .max = HUGE_VAL, .dflt = def, .help = h                \
  }

/* The 0.1-20 Hz band is where grid operators have asked large AI loads to
 * damp synchronous swings (the band DESIGN 4.4 names); 50 Hz sampling
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
   * inside DESIGN 11's 1 GB. */
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

int pq_init(pq_window *w, const pq_config *c, double run_s,
            const sim_allocator *alloc, sim_error *err) {
  memset(w, 0, sizeof *w);
  w->alloc = alloc;
  w->cfg = *c;
  double end = fmin(c->start_s + c->length_s, run_s);
  w->cfg.length_s = fmax(0, end - c->start_s);
  w->n = (size_t)floor(w->cfg.length_s * c->rate_hz);
  if (w->n == 0)
    return SIM_OK;
  w->n = fft_size(w->n);
  w->cfg.length_s = (double)w->n / c->rate_hz;
  w->samples = sim_calloc(alloc, w->n, sizeof *w->samples);
  return w->samples != NULL
             ? SIM_OK
             : sim_error_set(err, SIM_ENOMEM, "out of memory for %zu samples",
                             w->n);
}

void pq_fini(pq_window *w) {
  sim_free(w->alloc, w->samples);
  w->samples = NULL;
  w->n = 0;
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
  }
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

static int band_limited(pq_window *w, double *x, sim_error *err) {
  size_t n = w->n;
  memcpy(x, w->samples, n * sizeof *x);
  gsl_fft_real_wavetable *rt = gsl_fft_real_wavetable_alloc(n);
  gsl_fft_halfcomplex_wavetable *ht = gsl_fft_halfcomplex_wavetable_alloc(n);
  gsl_fft_real_workspace *ws = gsl_fft_real_workspace_alloc(n);
  int rc =
      !rt || !ht || !ws ? GSL_ENOMEM : gsl_fft_real_transform(x, 1, n, rt, ws);
  if (rc == GSL_SUCCESS) {
    band_pass(x, n, &w->cfg);
    rc = gsl_fft_halfcomplex_inverse(x, 1, n, ht, ws);
  }
  gsl_fft_real_wavetable_free(rt);
  gsl_fft_halfcomplex_wavetable_free(ht);
  gsl_fft_real_workspace_free(ws);
  return rc == GSL_SUCCESS
             ? SIM_OK
             : sim_error_set(err, SIM_ENOMEM, "FFT of %zu samples: %s", n,
                             gsl_strerror(rc));
}

int pq_finish(pq_window *w, double end_s, pq_result *out, sim_error *err) {
  if (w->started && w->n > 0)
    hold(w, end_s, w->last_p);
  *out = (pq_result){.max_ramp_w_per_s = w->max_ramp};
  if (w->n < 2)
    return SIM_OK;
  double ramp = 0;
  for (size_t i = 1; i < w->n; i++)
    ramp = fmax(ramp, fabs(w->samples[i] - w->samples[i - 1]));
  out->max_ramp_w_per_s = ramp * w->cfg.rate_hz;

  double *x = sim_alloc(w->alloc, w->n * sizeof *x);
  if (x == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  int rc = band_limited(w, x, err);
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
