/* power_quality.h - power quality at the feed, as utilities now ask of AI
 * sites (prefix pq_): the largest ramp of facility power and the
 * oscillation in a frequency band (0.1-20 Hz by default) over a window
 * sampled at a high rate.
 *
 * Facility power is piecewise constant between events and known exactly,
 * so any window can be sampled at any rate without loss: the window holds
 * one sample per 1/rate, filled from the steps as they happen. */
#ifndef MODELS_POWER_QUALITY_H
#define MODELS_POWER_QUALITY_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc.h"
#include "err.h"
#include "scenario.h"

typedef struct pq_config {
  double start_s, length_s; /* the window; length 0 turns it off */
  double rate_hz;           /* sampling rate, above twice band_high */
  double band_low_hz, band_high_hz;
} pq_config;

extern const scn_schema pq_schema;

typedef struct pq_window {
  const sim_allocator *alloc; /* what samples live on; NULL: the C library */
  pq_config cfg;              /* the window clipped to the run */
  double *samples;
  size_t n;
  double last_t, last_p, max_ramp;
  bool started;
} pq_window;

/* Prepares the window, clipped to [0, run_s], allocating on alloc (NULL
 * means the C library), which must outlive it. SIM_OK or SIM_ENOMEM. */
int pq_init(pq_window *w, const pq_config *c, double run_s,
            const sim_allocator *alloc, sim_error *err);

void pq_fini(pq_window *w);

/* Facility power changes to p_w at t_s (call at every change, in time
 * order): tracks the largest ramp |dP| / dt between changes and fills the
 * window's samples with the power held since the last change. */
void pq_step(pq_window *w, double t_s, double p_w);

typedef struct pq_result {
  double max_ramp_w_per_s;
  double oscillation_j; /* integral of |band-passed power| over the window */
  double oscillation_w_rms; /* RMS of the band-passed power */
} pq_result;

/* Closes the window at end_s (the last power held until then) and
 * band-passes it with GSL's real FFT. SIM_OK or SIM_ENOMEM. */
int pq_finish(pq_window *w, double end_s, pq_result *out, sim_error *err);

#endif
