/* gridcode.h - a grid code: the limits a utility states for a large load
 * at its point of interconnection, read from a file, and the facility's
 * class and pass/fail against them (prefix gcode_).
 *
 * A grid-code file is data, each figure cited in it (data/grid_codes/,
 * docs/SCENARIOS.md):
 *   name: ERCOT large loads
 *   source: the document the classes and limits come from
 *   classes:               # the first whose conditions all hold
 *     - name: Large Load
 *       source: ERCOT NPRR1308 ...
 *       when: [{metric: peak_power_w, min: 75 MW}]
 *   limits:
 *     - {metric: band_share, max: 20%, source: arXiv:2508.14318 ...}
 * Metrics are the grid-connection figures GCODE_METRIC_MAP lists, each
 * limited at most once, each bound written in the metric's units ("75 MW",
 * "20%", "5 MW/s"). The factory fills the figures after a run (one double per
 * metric, NaN where the run cannot say); this module classifies, checks and
 * writes the group /grid_connection. */
#ifndef MODELS_GRIDCODE_H
#define MODELS_GRIDCODE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "scenario.h"
#include "tel.h"

/* The figures: ID, key (as in /summary where it appears there), the
 * dimension bounds are written in, units, long name. */
#define GCODE_METRIC_MAP(XX)                                                   \
  XX(PEAK_POWER, "peak_power_w", UNITS_POWER, "W",                             \
     "peak facility power (control-period mean)")                              \
  XX(COMPUTE_SHARE, "computational_share", UNITS_FRACTION, "1",                \
     "IT (computational) share of the facility's energy")                      \
  XX(RAMP_1S, "max_ramp_1s_w_per_s", UNITS_RAMP, "W/s",                        \
     "largest ramp over 1 s windows, up or down")                              \
  XX(RAMP_1MIN, "max_ramp_1min_w_per_s", UNITS_RAMP, "W/s",                    \
     "largest ramp over 1 min windows, up or down")                            \
  XX(RAMP_10MIN, "max_ramp_10min_w_per_s", UNITS_RAMP, "W/s",                  \
     "largest ramp over 10 min windows, up or down")                           \
  XX(RAMP_UP_1S, "ramp_up_1s_w_per_s", UNITS_RAMP, "W/s",                      \
     "largest ramp up over 1 s windows")                                       \
  XX(RAMP_DOWN_1S, "ramp_down_1s_w_per_s", UNITS_RAMP, "W/s",                  \
     "largest ramp down over 1 s windows")                                     \
  XX(RAMP_UP_1MIN, "ramp_up_1min_w_per_s", UNITS_RAMP, "W/s",                  \
     "largest ramp up over 1 min windows")                                     \
  XX(RAMP_DOWN_1MIN, "ramp_down_1min_w_per_s", UNITS_RAMP, "W/s",              \
     "largest ramp down over 1 min windows")                                   \
  XX(RAMP_UP_10MIN, "ramp_up_10min_w_per_s", UNITS_RAMP, "W/s",                \
     "largest ramp up over 10 min windows")                                    \
  XX(RAMP_DOWN_10MIN, "ramp_down_10min_w_per_s", UNITS_RAMP, "W/s",            \
     "largest ramp down over 10 min windows")                                  \
  XX(BAND_SHARE, "band_share", UNITS_FRACTION, "1",                            \
     "share of the swing's energy in the band (0.1-20 Hz by default)")         \
  XX(SHARE_BELOW_1HZ, "share_below_1hz", UNITS_FRACTION, "1",                  \
     "share of the swing's energy below 1 Hz")                                 \
  XX(SHARE_1_2P5HZ, "share_1_2p5hz", UNITS_FRACTION, "1",                      \
     "share of the swing's energy in 1-2.5 Hz")                                \
  XX(SHARE_7_20HZ, "share_7_20hz", UNITS_FRACTION, "1",                        \
     "share of the swing's energy in 7-20 Hz")                                 \
  XX(DYNAMIC_RANGE, "dynamic_range_w", UNITS_POWER, "W",                       \
     "highest less lowest facility power")                                     \
  XX(DYNAMIC_RANGE_SHARE, "dynamic_range_share", UNITS_FRACTION, "1",          \
     "dynamic range over the highest facility power")                         \
  XX(RIDE_THROUGH, "ride_through_met", UNITS_FRACTION, "1",                    \
     "share of the disturbances inside the ride-through curve ridden "         \
     "through")                                                                \
  XX(GRID_LOST, "grid_lost_w", UNITS_POWER, "W",                               \
     "largest load the grid lost at a trip")                                   \
  XX(GRID_OFF, "grid_off_s", UNITS_TIME, "s",                                  \
     "time the facility was off the grid after disturbances")

typedef enum gcode_metric {
#define GCODE_ENUM(id, key, dim, units, long_name) GCODE_##id,
  GCODE_METRIC_MAP(GCODE_ENUM)
#undef GCODE_ENUM
      GCODE_NMETRICS
} gcode_metric;

/* The figures from GCODE_RIDE_THROUGH on exist only for a run with
 * disturbances (disturb.h): without any, all are NaN, the table leaves
 * their rows out and a limit on one does not apply. */
enum { GCODE_NBASE = GCODE_RIDE_THROUGH };

const char *gcode_metric_key(gcode_metric m);
const char *gcode_metric_units(gcode_metric m);

/* A bound on one metric: min <= value <= max (NaN: no such side). */
typedef struct gcode_bound {
  int metric;          /* gcode_metric */
  char *min, *max;     /* as written, in the metric's units */
  double lo, hi;       /* parsed by the check; NaN: absent */
  char *source, *note; /* limits: the citation (required), a remark */
} gcode_bound;

typedef struct gcode_class {
  char *name, *source;
  gcode_bound *when; /* all hold */
  size_t nwhen;
} gcode_class;

typedef struct gcode {
  char *name, *source;
  gcode_class *classes;
  size_t nclasses;
  gcode_bound *limits;
  size_t nlimits;
} gcode;

extern const scn_schema gcode_schema;

/* Reads a grid-code file into g (zeroed first). SIM_OK; SIM_EINPUT with
 * FILE:LINE:COLUMN for a bad file; SIM_EIO if it cannot be read. On
 * failure g holds nothing. Free with gcode_fini. */
int gcode_load(gcode *g, const char *path, sim_error *err);

void gcode_fini(gcode *g); /* a zeroed g is fine */

typedef enum gcode_state {
  GCODE_PASS,
  GCODE_FAIL,
  GCODE_UNKNOWN,
  GCODE_NA /* a disturbance figure of a run without one */
} gcode_state;

/* Whether values[b->metric] lies within b; UNKNOWN for a NaN value, NA
 * for a NaN disturbance figure (from GCODE_NBASE on). */
gcode_state gcode_check(const gcode_bound *b, const double *values);

/* The first class whose conditions all hold, or NULL. Borrowed from g. */
const gcode_class *gcode_classify(const gcode *g, const double *values);

/* The verdict over all limits that apply: FAIL if one fails, else
 * UNKNOWN if one cannot be told, else PASS (also with no limits). */
gcode_state gcode_verdict(const gcode *g, const double *values);

/* One line for the run's printout: "ERCOT large loads: PASS, 1 of 1
 * limits met; class Large Load". Truncated to size. Cannot fail. */
void gcode_describe(const gcode *g, const double *values, char *buf,
                    size_t size);

/* Writes the table /grid_connection, a row per figure (axis "figure"; the
 * disturbance figures only when one of them is known):
 * metric, value, units, long_name, limit_min, limit_max, result, source
 * (the limit's, if the grid code bounds it); and the summary's strings
 * grid_code ("NAME (PATH)"), grid_class and grid_verdict (PASS, FAIL,
 * UNKNOWN). g may be NULL (no grid code named): no limits, and the three
 * strings "none...". SIM_OK or the sink's code with its message in err. */
int gcode_write(const gcode *g, const char *path, const double *values,
                tel_sink *sink, sim_error *err);

/* The summary's rows gcode_write puts (grid_code, grid_class,
 * grid_verdict): n of them, constant. */
const tel_metric *gcode_summary_metrics(size_t *n);

#endif
