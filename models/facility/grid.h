/* grid.h - the grid feed: the contracted capacity cut by demand-response
 * events, and the signals it carries (carbon intensity, price, outdoor
 * temperature), with exact books of energy, cost and CO2 over
 * piecewise-constant power. */
#ifndef MODELS_GRID_H
#define MODELS_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "disturb.h"
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

/* What the operator pays beyond the energy price (grid.price): a demand
 * charge on the highest interval-average power of each billing period, a
 * fixed fee per billing period and an adder per MWh (grid fees). Periods
 * and intervals are fixed lengths from t = 0, not calendar months. */
typedef struct grid_tariff {
  double demand_charge;     /* $/kW of each period's peak */
  double demand_interval_s; /* the window power is averaged over */
  double billing_period_s;  /* a whole number of intervals */
  double fixed_fee;         /* $ per billing period */
  double energy_adder;      /* $/MWh on top of the price */
} grid_tariff;

typedef struct grid_config {
  sig_config carbon, price, outdoor;
  sig_config humidity; /* outdoor relative humidity, %: wet bulb */
  grid_tariff tariff;
  dr_event *dr;
  size_t ndr;
  dist_event *dist; /* disturbances at the point of interconnection */
  size_t ndist;
  char *dr_file;      /* DR targets as a series (grid_read_targets); NULL */
  double dr_window_s; /* the response window alignment allows; NaN */
} grid_config;

extern const scn_schema grid_schema;

typedef struct grid {
  double contracted_w;
  const grid_tariff *tariff;
  int carbon_basis; /* sig_basis of the carbon signal */
  const dr_event *dr;
  size_t ndr;
  dr_event *dr_own; /* dr when a target series was read: owned */
  sig_series carbon, price, outdoor;
  sig_series humidity; /* SIG_NONE when not given */
} grid;

/* Builds the feed: files are read relative to base_dir; every file must
 * cover [0, duration_s] unless it repeats. Errors as sig_init's (SIM_EIO
 * for a file that cannot be opened, SIM_EINPUT with FILE:LINE: for bad
 * content); SIM_ERANGE for a file that does not cover the run. *which
 * (may be NULL) names the signal that failed: "carbon", "price",
 * "outdoor" or "humidity". The config is borrowed and must outlive the grid. Free with
 * grid_fini. */
int grid_init(grid *g, const grid_config *c, double contracted_w,
              const char *base_dir, double duration_s, const char **which,
              sim_error *err);

void grid_fini(grid *g);

/* Reads an operator's DR targets (grid.dr_file) and adds them to g's
 * events, after the scenario's dr_events. The CSV's header names time_s
 * and target_mw (the facility held at or under it) or cut (the share of
 * the contracted capacity taken away, 0-1); each row holds from its time
 * to the next row's (the last to the end of the run), and an empty
 * target is no event. Times rise, lie in [0, duration_s) and are whole
 * multiples of grain_s (the sample period: DR events' rule). SIM_OK;
 * SIM_EIO when the file cannot be read; SIM_EINPUT with
 * FILE:LINE:COL: column 'NAME': for bad content; SIM_ENOMEM. */
int grid_read_targets(grid *g, const char *path, double grain_s,
                      double duration_s, sim_error *err);

/* The cap in force at t: the contracted capacity, or the lowest level of
 * the DR events active at t. */
double grid_cap_at(const grid *g, double t_s);

/* The first time after t at which the cap changes; INFINITY if none. */
double grid_next_change(const grid *g, double t_s);

/* Energy, cost and CO2 of drawing p_w from t0 to t1, exact for every
 * sig_series kind: cost in the price's currency, CO2 in kg. Start from
 * zeroed books and account intervals in time order, without gaps.
 *
 * Demand: the energy of the open demand interval (index dem_k) is summed
 * as power comes; when the interval closes, its mean power raises the
 * billing period's peak, and when a period closes its charge is booked.
 * So the peak is exact for piecewise-constant power and costs O(1) per
 * call plus O(1) per interval boundary crossed, with no allocation. */
typedef struct grid_books {
  double energy_j, cost, co2_kg;
  int64_t dem_k;        /* the open demand interval */
  double dem_j;         /* its energy so far */
  double period_peak_w; /* the open billing period's peak */
  double demand_cost;   /* of the periods closed so far */
  double billed_peak_w; /* the highest peak of any period */
  /* The price's and the carbon's integrals at the last interval's end
   * (sig_integral_next): books are one grid's. */
  sig_run price_run, carbon_run;
} grid_books;

void grid_account(const grid *g, double p_w, double t0, double t1,
                  grid_books *b);

/* The bill of a run of duration_s, split as an operator reads it. */
typedef struct grid_bill {
  double energy; /* the price's integral plus the adder per MWh */
  double demand; /* the demand charges; a last, partial period prorated */
  double fees;   /* the fixed fee, prorated over the run */
  double total;
  double peak_w; /* the billed peak: the highest period's */
} grid_bill;

/* Closes the books at duration_s (the last interval and period may be
 * partial: a partial interval averages over the time it covers, a
 * partial period pays its share of the period's charge and fee) and
 * fills *bill. The books are closed after; account nothing more. */
void grid_close(const grid *g, double duration_s, grid_books *b,
                grid_bill *bill);

/* Whether the scenario gave a tariff (any charge, fee or adder). */
bool grid_has_tariff(const grid *g);

/* The carbon signal's basis as /summary writes it: "lifecycle",
 * "direct", or "none" when there is no carbon signal. */
const char *grid_carbon_basis(const grid *g);

#endif
