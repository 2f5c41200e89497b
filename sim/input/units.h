/* units.h - quantities written with their units ("20 MW", "250ms", "25%")
 * to doubles in the project's canonical units, and back.
 * Canonical units: W, J, s, fraction (1), degC, $/MWh, gCO2/kWh, Hz, bytes,
 * bytes/s, FLOP/s, W/s, K/W, $, $/kW. All are SI or SI-scaled except
 * temperature (degC, as operators read it) and price and carbon intensity (per
 * MWh and per kWh, as markets and grid operators publish them). */
#ifndef SIM_UNITS_H
#define SIM_UNITS_H

#include <stddef.h>
#include <stdint.h>

typedef enum units_dim {
  UNITS_NUMBER, /* a plain number: no unit allowed */
  UNITS_POWER,
  UNITS_ENERGY,
  UNITS_TIME,
  UNITS_FRACTION, /* "25%" or a plain number in the same scale (0.25) */
  UNITS_TEMPERATURE,
  UNITS_PRICE,
  UNITS_CARBON,
  UNITS_FREQUENCY,
  UNITS_DATA,
  UNITS_BANDWIDTH,
  UNITS_FLOPS,
  UNITS_RAMP,         /* power per time */
  UNITS_THERMAL_RES,  /* temperature rise per power, K/W */
  UNITS_MONEY,        /* an amount, $ */
  UNITS_DEMAND_PRICE, /* a demand charge, $ per kW of peak demand */
  UNITS_NDIMS
} units_dim;

/* Why a parse failed: a message and the 0-based offset in the text where
 * the problem starts (for a column in a diagnostic). */
typedef struct units_problem {
  char msg[256];
  size_t offset;
} units_problem;

/* Parses text as a quantity of dimension dim into canonical units.
 * Returns 0 and sets *out, or -1 and fills *problem (which may be NULL).
 * A missing unit, an unknown unit, a unit of another dimension, NaN or
 * infinity, and trailing garbage are each rejected with their own message. */
int units_parse(const char *text, units_dim dim, double *out,
                units_problem *problem);

/* Parses text as a whole count (a seed, an index, a number of tasks):
 * decimal digits only, no sign, space or unit, at most UINT64_MAX.
 * Returns 0 and sets *out, or -1. strtoull alone would take " 7" and
 * "+7", and wrap "-1" to UINT64_MAX, for the whole of its text. */
int units_parse_count(const char *text, uint64_t *out);

/* The name of a dimension ("power") and its canonical unit ("W"; "" for
 * numbers and fractions). */
const char *units_dim_name(units_dim dim);
const char *units_canonical(units_dim dim);

/* The largest magnitude of a quantity of dimension dim that scenarios
 * may give (100 GW for power, ...), in canonical units: the bound of every
 * field that sets none tighter. */
double units_ceiling(units_dim dim);

/* The units a user may write for dim, as "W, kW, MW, GW" (for hints). */
const char *units_list(units_dim dim);

/* Writes value (canonical units) as text that units_parse reads back to the
 * identical double: in a readable unit ("18 MW") when that is exact, else
 * in the canonical unit with 17 significant digits. Returns buf. */
char *units_format(double value, units_dim dim, char *buf, size_t size);

#endif
