/* cmd_calibrate.h - what cmd_calibrate.c (the fit and the overlay) and
 * cmd_measured.c (the meter's series, a run binned to it, the error
 * metrics) share. */
#ifndef AIFSIM_CMD_CALIBRATE_H
#define AIFSIM_CMD_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/* What a measured column reads in the run: the facility at the grid, its
 * IT, its GPUs, its cooling, or one rack group's IT. */
enum { MS_FACILITY, MS_IT, MS_GPU, MS_COOLING, MS_GROUP };

/* A measured series (docs/CALIBRATION.md): row k is the mean power over
 * [t[k], t[k] + len[k]), seconds from the run's start, W. Rows that fall
 * outside the run are dropped; rows [0, nfit) are fitted, [nfit, n) held
 * out. */
typedef struct ms_series {
  char column[128];
  int scope;      /* MS_* */
  char group[96]; /* MS_GROUP: the rack group's name */
  double start_utc;
  double *t, *len, *w;
  size_t n, nfit;
  size_t dropped; /* rows outside the run */
} ms_series;

/* Reads path: `timestamp` and one power column (column, or the only one
 * when NULL) named SCOPE_UNIT (facility_kW, rack:hgx-h100_W). Times carry
 * their zone; start_utc (NaN: the first row's time) is the run's start;
 * duration_s its length. SIM_OK, or SIM_EINPUT / SIM_EIO with err set
 * (FILE:LINE:COLUMN), also when no row falls within the run. */
int ms_read(const char *path, const char *column, double start_utc,
            double duration_s, ms_series *s, sim_error *err);
void ms_free(ms_series *s);

/* Runs the scenario at path with sets and puts the run's power, as s's
 * column reads it, averaged over each row's interval, into sim[0..s->n).
 * SIM_OK, or the code with err set; *bad_input says whether the input is
 * at fault. */
int ms_simulate(const char *path, const char *const *sets, size_t nsets,
                const ms_series *s, double *sim, bool *bad_input,
                sim_error *err);

/* ASHRAE Guideline 14 over rows [a, b) of m (measured) and p (simulated),
 * p = 1 parameter in the denominators: CV(RMSE) = sqrt(sum (m-p)^2 / (n-1))
 * / mean m, NMBE = sum (m-p) / ((n-1) mean m), MAPE = mean |m-p|/|m|,
 * fractions; NaN with fewer than 2 rows. hourly: first averaged into the
 * clock hours (UTC) the rows cover whole. */
typedef struct ms_metrics {
  double cv_rmse, nmbe, mape;
  size_t n;
} ms_metrics;
ms_metrics ms_metrics_of(const ms_series *s, const double *p, size_t a,
                         size_t b, bool hourly);

#endif
