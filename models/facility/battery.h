/* battery.h - the on-site battery behind the grid feed (docs/MODELS.md, Storage): a
 * store of energy with charge and discharge power limits, a round-trip
 * efficiency and state-of-charge bounds, dispatched by a rule each
 * control interval. The facility draws grid = load - P from the feed,
 * where P is the battery's power: positive when it discharges (delivers
 * to the facility), negative when it charges (draws from the feed).
 *
 * The store. E is the energy held (J), kept in [soc_min C, soc_max C]
 * for capacity C. The round-trip efficiency RTE is split evenly, eta =
 * sqrt(RTE) each way:
 *
 *   charging at |P| for dt:     E += eta |P| dt,  loss (1 - eta) |P| dt
 *   discharging at P for dt:    E -= P dt / eta,  loss (1/eta - 1) P dt
 *
 * so charged - discharged - loss = change in E, and over any cycle that
 * returns E to where it began the losses are exactly (1 - RTE) of what
 * was charged. Why the even split: datasheets and NREL's ATB give only
 * the round trip, and inverter and cell losses are roughly symmetric;
 * putting it all on one side (eta_c = RTE, eta_d = 1, which makes E the
 * deliverable energy) would make charging look costlier than it is and
 * shift when the SoC bounds are met. The round trip is the same either
 * way.
 *
 * Feasibility. P is constant over the interval, so it is held to the
 * power limits and to what takes E exactly to a bound at the interval's
 * end at most: P <= (E - E_min) eta / dt, |P| <= (E_max - E) / (eta dt).
 * A bound once reached is stored exactly, so E never leaves the bounds.
 *
 * Dispatch (bat_step). The target T is the threshold in force: the
 * threshold's share of the cap (or its power, when given), never above
 * the cap; the recharge ceiling is T - margin (margin = recharge_margin x
 * cap).
 *   none             P = 0.
 *   peak_shaving     load > T: discharge load - T (as far as feasible),
 *                    at any time, DR or not; load < T - margin: charge
 *                    with the spare T - margin - load; else idle.
 *   dr_ride_through  during a DR event: discharge load - T so the
 *                    facility rides through the lowered cap, never
 *                    charge; outside DR: never discharge (the energy is
 *                    kept for DR), charge as peak_shaving does.
 * Whenever the mode aims at T (peak_shaving always, dr_ride_through in
 * DR) and grid > T remains, the excess is the shortfall, reported and
 * integrated, never hidden. */
#ifndef MODELS_BATTERY_H
#define MODELS_BATTERY_H

#include <stdbool.h>

#include "scenario.h"

typedef enum bat_mode {
  BAT_NONE,
  BAT_PEAK_SHAVING,
  BAT_DR_RIDE_THROUGH
} bat_mode;

/* Plain data, as the scenario gives it (bat_schema). A capacity of 0 is
 * no battery. */
typedef struct bat_config {
  double capacity_j;
  double charge_max_w;    /* from the feed; default capacity / 4 h */
  double discharge_max_w; /* to the facility; default capacity / 4 h */
  double rte;             /* round-trip efficiency, (0, 1] */
  double soc_min, soc_max, soc_initial; /* fractions of capacity */
  int mode;                             /* bat_mode */
  double threshold;       /* shave above this share of the cap ... */
  double threshold_w;     /* ... or above this power (NaN: not given) */
  double recharge_margin; /* charge only below T - this share of cap */
} bat_config;

extern const scn_schema bat_schema;

/* The battery's state and its books, all in J. Invariant:
 * charged_j - discharged_j - loss_j = stored_j - stored at init (to
 * rounding), and soc_min C <= stored_j <= soc_max C. */
typedef struct bat_state {
  double stored_j;
  double charged_j;    /* drawn from the feed to charge */
  double discharged_j; /* delivered to the facility */
  double loss_j;       /* conversion losses, both ways */
  double shortfall_j;  /* grid energy above the target that was aimed at */
} bat_state;

/* What one interval came to; all powers constant over it. */
typedef struct bat_result {
  double power_w;     /* the battery: > 0 discharge, < 0 charge */
  double grid_w;      /* load - power */
  double target_w;    /* what the mode aimed at; INFINITY if nothing */
  double shortfall_w; /* max(grid - target, 0) */
} bat_result;

/* Starts the state at soc_initial with empty books. Cannot fail. */
void bat_state_init(bat_state *s, const bat_config *c);

/* The state of charge, stored / capacity; 0 for no battery. */
double bat_soc(const bat_config *c, const bat_state *s);

/* One control interval: decides the battery power by the mode (see the
 * top of this file), holds it to what is feasible for the whole interval,
 * updates the state and books, and fills *out (may be NULL). Returns the
 * battery power (W, > 0 discharge). Pure: the result depends only on the
 * arguments. Cannot fail; a non-positive dt or a negative load is a
 * programmer error (assert). */
double bat_step(const bat_config *c, /* the battery */
                bat_state *s,        /* its state, updated */
                double load_w,       /* facility load over the interval */
                double cap_w,        /* the cap in force, DR included */
                bool dr_active,      /* a DR event is in force */
                double dt_s,         /* the interval, s (> 0) */
                bat_result *out);    /* what happened, or NULL */

#endif
