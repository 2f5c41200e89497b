/* power_quality.h - power quality at the feed, as utilities now ask of AI
 * sites (prefix pq_): the largest ramp of facility power and the
 * oscillation in a frequency band (0.1-20 Hz by default) over a window
 * sampled at a high rate.
 *
 * The factory sets facility power once per control period, from the
 * period's mean; inside the period the training jobs' phases (compute,
 * bubbles, all-reduce) swing it, often below a second. So the window
 * holds one sample per 1/rate of the waveform: the period's mean plus a
 * wave (pq_wave_fn, the jobs' deviation from their mean at each instant,
 * training.h train_wave_w), which leaves the energy as it is. The
 * metrics come from these samples, at the window's own time scale and not
 * the control period's:
 *   - the largest ramp is the largest |x[i] - x[i-1]| x rate, a finite
 *     difference over one sample interval (a step in power is a ramp of
 *     step x rate: defined, and the same whatever the control period);
 *   - the band oscillation is the band-passed FFT of the same samples.
 * With in-rack smoothing on (smooth.h) the racks' stores absorb the swings
 * inside a period and the feed moves at its ramp limit: the samples then
 * run linearly from one period's power to the next and carry no wave.
 * Without a window (length 0) the largest ramp falls back to the steps
 * between periods over the time between them.
 *
 * That largest ramp grows with the rate (a step is step x rate), so grid
 * operators state ramps over a window instead (MW per second over 1 s, MW
 * per minute): here the change between the mean power of two adjacent
 * windows of length T, over T, the largest over the run, up and down
 * apart. A step of D is then a ramp of D / T at any rate. It is taken on
 * the window's samples and, over the whole run, on the control periods'
 * means (exact for windows the periods tile, and the periods' waveform
 * has their mean), and the larger kept. The rate only limits which
 * frequencies the band shares see: the share of the swing's energy (the
 * samples less their mean) in the band and in the sub-bands pq_sub_bands
 * lists, from the same FFT. */
#ifndef MODELS_POWER_QUALITY_H
#define MODELS_POWER_QUALITY_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc.h"
#include "err.h"
#include "scenario.h"
#include "tel.h"

/* A named span: a ramp window (lo = its length, s) or a frequency band
 * [lo, hi) Hz. */
typedef struct pq_span {
  const char *name;
  double lo, hi;
} pq_span;

/* The ramp windows: 1 s, 1 min and 10 min (the windows NERC's and ERCOT's
 * large-load work and utilities' AI-load specifications state ramps
 * over; docs/MODELS.md). */
#define PQ_NRAMPS 3
extern const pq_span pq_ramp_windows[PQ_NRAMPS];

/* The sub-bands of the swing reported beside the band: below 1 Hz, 1-2.5
 * Hz (where synchronous training's swings sit, arXiv:2508.14318) and 7-20
 * Hz. */
#define PQ_NSUBBANDS 3
extern const pq_span pq_sub_bands[PQ_NSUBBANDS];

typedef struct pq_config {
  double start_s, length_s; /* the window; length 0 turns it off */
  double rate_hz;           /* sampling rate, above twice band_high */
  double band_low_hz, band_high_hz;
} pq_config;

extern const scn_schema pq_schema;

/* The deviation of facility power at start + offset_s from its mean over
 * [start, start + period_s), W, evaluated when that period's power is set
 * (pq_step at start). */
typedef double (*pq_wave_fn)(void *ctx, double period_s, double offset_s);

/* A window's searches of the series a step: its three points at the
 * step, the two shifts' first entries, the two shifts' points. */
#define PQ_SER_HINTS 11

typedef struct pq_window {
  const sim_allocator *alloc; /* what samples live on; NULL: the C library */
  pq_config cfg;              /* the window clipped to the run */
  double *samples;
  size_t n;
  size_t filled; /* samples [0, filled) are written */
  double last_t, last_p, max_ramp;
  bool started;
  pq_wave_fn wave; /* pq_set_wave; NULL: none */
  void *wave_ctx;
  double period_s; /* the control period the wave spans; 0: none */
  bool smoothed;   /* linear between periods, no wave */
  /* The run-long series for the windowed ramps: the times of the steps
   * and the energy drawn from the first step to each, entries [0, ser_n)
   * of ser_cap, reaching back at least 2 x the longest window. */
  double *ser_t, *ser_e;
  size_t ser_n, ser_cap;
  /* Per window, where each of its searches of the series ended last
   * (power_quality.c entry_near): entries, only ever a place to start. */
  size_t ser_hint[PQ_NRAMPS][PQ_SER_HINTS];
  double t0, ramp_up[PQ_NRAMPS], ramp_down[PQ_NRAMPS]; /* NaN: none yet */
  double p_min, p_max;                                 /* over the steps */
  bool oom; /* the series could not grow: pq_finish fails */
} pq_window;

/* Prepares the window, clipped to [0, run_s], and the run-long ramp
 * series, allocating on alloc (NULL
 * means the C library), which must outlive it. SIM_OK or SIM_ENOMEM. */
int pq_init(pq_window *w, const pq_config *c, double run_s,
            const sim_allocator *alloc, sim_error *err);

void pq_fini(pq_window *w);

/* From the next pq_step on, each step at t fills the samples of [t, t +
 * period_s) at once: p + wave(ctx, period_s, offset) (wave may be NULL:
 * p held), or, smoothed, the line from the last power to p across the
 * period. period_s > 0. Cannot fail. */
void pq_set_wave(pq_window *w, pq_wave_fn wave, void *ctx, double period_s,
                 bool smoothed);

/* Facility power changes to p_w at t_s (call at every change, in time
 * order): fills the window's samples with the power held since the last
 * change (or, after pq_set_wave, the samples of the coming period as it
 * says), tracks the largest ramp between changes for the fallback and
 * the windowed ramps of the periods' powers. Cannot fail: running out of
 * memory for the series is reported by pq_finish. */
void pq_step(pq_window *w, double t_s, double p_w);

typedef struct pq_result {
  double max_ramp_w_per_s;
  double oscillation_j; /* integral of |band-passed power| over the window */
  double oscillation_w_rms; /* RMS of the band-passed power */
  /* The largest ramp over each of pq_ramp_windows, up and down (both
   * positive), W/s; NaN where the run is shorter than two windows. */
  double ramp_up_w_per_s[PQ_NRAMPS], ramp_down_w_per_s[PQ_NRAMPS];
  /* Shares of the window's swing energy in the band and the sub-bands (of
   * what lies below the Nyquist frequency); NaN without a swing or when
   * the band lies above Nyquist. */
  double band_share, sub_share[PQ_NSUBBANDS];
  /* The highest less the lowest facility power, over the samples and the
   * steps, and that range over the highest. */
  double dynamic_range_w, dynamic_range_share;
} pq_result;

/* Closes the window at end_s (the last power held until then), takes the
 * largest ramp and the windowed ramps from its samples and the series,
 * and the band's shares and band-passed swing from GSL's real FFT.
 * SIM_OK or SIM_ENOMEM. */
int pq_finish(pq_window *w, double end_s, pq_result *out, sim_error *err);

/* The window's samples as the telemetry group "power_quality": column
 * power_w, one row per sample, each at the end of the 1/rate interval it
 * holds (as every group's time is the end of its sample interval), so
 * the largest ramp is the largest step between rows times the rate; the
 * group's attributes rate_hz, window_start_s, band_low_hz and
 * band_high_hz. What a plot of the swings reads. Nothing for a window of
 * no samples. Call after pq_finish. SIM_OK, or the sink's code with its
 * message in err. */
int pq_write(const pq_window *w, tel_sink *sink, sim_error *err);

#endif
