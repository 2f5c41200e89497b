/* grid.h - the grid feed: the contracted capacity cut by demand-response
 * events, and the signals it carries (carbon intensity, price, outdoor
 * temperature), with exact books of energy, cost and CO2 over
 * piecewise-constant power. */
#ifndef MODELS_GRID_H
#define MODELS_GRID_H

#include <stddef.h>

#include "err.h"
#include "scenario.h"
#include "sig.h"

/* A demand-response event: for duration from start, the cap is cut by a
 * fraction of the contracted capacity or to a level, announced notice
 * ahead (the power controller may use the notice; the cap itself changes
 * at start). */
typedef struct dr_event {
  double start_s, duration_s;
  double cut; /* fraction, or NaN when a level is given */
  double level_w;
  double notice_s;
} dr_event;

typedef struct grid_config {
  sig_config carbon, price, outdoor;
  dr_event *dr;
  size_t ndr;
} grid_config;

extern const scn_schema grid_schema;

typedef struct grid {
  double contracted_w;
  const dr_event *dr;
  size_t ndr;
  sig_series carbon, price, outdoor;
} grid;

/* Builds the feed: files are read relative to base_dir; every file must
 * cover [0, duration_s] unless it repeats. Errors as sig_init's (SIM_EIO
 * for a file that cannot be opened, SIM_EINPUT with FILE:LINE: for bad
 * content); SIM_ERANGE for a file that does not cover the run. *which
 * (may be NULL) names the signal that failed: "carbon", "price" or
 * "outdoor". The config is borrowed and must outlive the grid. Free with
 * grid_fini. */
int grid_init(grid *g, const grid_config *c, double contracted_w,
              const char *base_dir, double duration_s, const char **which,
              sim_error *err);

void grid_fini(grid *g);

/* The cap in force at t: the contracted capacity, or the lowest level of
 * the DR events active at t. */
double grid_cap_at(const grid *g, double t_s);

/* The first time after t at which the cap changes; INFINITY if none. */
double grid_next_change(const grid *g, double t_s);

/* Energy, cost and CO2 of drawing p_w from t0 to t1, exact for every
 * sig_series kind: cost in the price's currency, CO2 in kg. */
typedef struct grid_books {
  double energy_j, cost, co2_kg;
} grid_books;

void grid_account(const grid *g, double p_w, double t0, double t1,
                  grid_books *b);

#endif
