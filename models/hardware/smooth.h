/* smooth.h - in-rack power smoothing (docs/MODELS.md, Racks): a per-rack energy
 * store between the feed and the rack's IT load, with the knobs NVIDIA's
 * GB200/GB300 power smoothing exposes (NVML nvmlPowerSmoothing*: a floor
 * as a percentage of the module's power, ramp-up and ramp-down rates in
 * W/s, a ramp-down hysteresis), so synchronous training swings do not
 * reach the grid. Here they apply to the whole rack's feed draw.
 *
 * Each control period [t, t + dt) the rack's load L (its GPUs and other
 * IT, constant over the period) is given; the feed draw F is constant
 * over the period too, and moves from the previous period's F0 by:
 *
 *   target  T = max(L, floor x TDP)
 *   T >= F0:  F = min(T, F0 + ramp_up dt)            (and no hold)
 *   T <  F0:  the first such period arms a hold until t + hysteresis;
 *             while t < hold: F = F0; after: F = max(T, F0 - ramp_down dt)
 *
 * The store S takes the difference, S' = S + (F - L) dt, kept in [0, C]:
 *   S' > C   the excess (S' - C) is burned (counted: NVIDIA's GPUs burn
 *            power to hold the floor) and S' = C;
 *   S' < 0   the store is empty: F rises to L - S / dt, beyond the ramp
 *            limit, S' = 0, and the period counts as dt seconds of
 *            ramp-limit violation.
 * So F never drops below the floor, and per rack, exactly (to rounding):
 *
 *   feed energy = load energy + burned + (S_now - S_start).
 *
 * With smoothing off, F = L and the store is idle. The first period of a
 * run has no previous F: F = T there (the rack was already running
 * steadily), and the store starts full, as it charges while a rack idles.
 *
 * Why F is constant per period, not a ramp inside it: every book in the
 * simulator (grid energy, cost, CO2) integrates piecewise-constant power
 * exactly; a staircase with steps of ramp x dt has the configured ramp
 * as its largest (F_k - F_k-1) / dt, which is how a feed meter sampling at
 * the control period sees it. A linear ramp within the period would need
 * trapezoids in every consumer for a difference of ramp dt / 2. */
#ifndef MODELS_SMOOTH_H
#define MODELS_SMOOTH_H

#include <stdbool.h>
#include <stdint.h>

#include "alloc.h"
#include "err.h"
#include "scenario.h"

/* Plain data, as the scenario gives it (smo_schema). One config for a
 * bank of racks; per-rack TDP comes with smo_bank_create. */
typedef struct smo_config {
  bool enabled;
  double store_j;       /* store capacity per rack */
  double ramp_up_w_s;   /* most the feed may rise, W/s */
  double ramp_down_w_s; /* most the feed may fall, W/s */
  double floor;         /* feed floor, share of the rack's TDP */
  double hysteresis_s;  /* hold after the load drops, before ramping down */
} smo_config;

extern const scn_schema smo_schema;

/* The racks' smoothing state, structure of arrays (n entries each).
 * Visible on purpose: the control tick and telemetry read feed_w and
 * store_j for every rack, as rack_fleet's arrays are read. Only
 * smo_bank_step writes them. */
typedef struct smo_bank {
  smo_config cfg; /* copied at create */
  uint32_t n;
  double *tdp_w;        /* per rack, as given */
  double *feed_w;       /* feed draw over the last period; NaN before */
  double *store_j;      /* energy in the store, in [0, store capacity] */
  double *hold_until_s; /* end of the ramp-down hold; NaN: none armed */
  /* Running books since create; the store started at cfg.store_j. */
  double *fed_j;       /* from the feed */
  double *load_j;      /* to the load */
  double *burned_j;    /* burned to hold the feed (store full) */
  double *violation_s; /* periods the feed broke its ramp limit */
  const sim_allocator *a;
} smo_bank;

/* A bank of n racks (n > 0) with the given TDPs (W, >= 0, copied), every
 * store full. c is copied. a (NULL: the C library) allocates. Returns
 * NULL with err set: SIM_EINVAL for n == 0 or a bad TDP, SIM_ENOMEM.
 * Free with smo_bank_destroy. */
smo_bank *smo_bank_create(const smo_config *c, uint32_t n, const double *tdp_w,
                          const sim_allocator *a, sim_error *err);

/* Frees the bank. NULL does nothing. */
void smo_bank_destroy(smo_bank *b);

/* One control period [t_s, t_s + dt_s) for every rack: sets feed_w from
 * load_w (n entries, W) by the rules at the top of this file and updates
 * stores, holds and books. *total_feed_w (may be NULL) gets the sum of
 * feed_w. SIM_OK, or SIM_EINVAL (message in err, nothing changed) for a
 * non-positive or non-finite dt, or a negative or non-finite load. */
int smo_bank_step(smo_bank *b,          /* the racks */
                  const double *load_w, /* each rack's IT load, W */
                  double t_s,           /* start of the period, s */
                  double dt_s,          /* its length, s */
                  double *total_feed_w, /* sum of feed_w, or NULL */
                  sim_error *err);      /* why it failed, or NULL */

#endif
