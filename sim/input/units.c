/* units.c - the unit table and the quantity parser.
 *
 * A unit is (name, dimension, factor, divisor, offset): canonical value =
 * number * factor / divisor + offset. Submultiples divide rather than
 * multiply by 0.001, so "250 ms" is exactly 0.25 s and "25%" exactly 0.25
 * (a division by an exact power of ten is correctly rounded; a multiply by
 * an inexact 0.001 is not). */
#include "units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suggest.h"

typedef struct unit {
  const char *name;
  units_dim dim;
  double factor, divisor, offset;
} unit;

static const unit unit_table[] = {
    {"W", UNITS_POWER, 1, 1, 0},
    {"kW", UNITS_POWER, 1e3, 1, 0},
    {"MW", UNITS_POWER, 1e6, 1, 0},
    {"GW", UNITS_POWER, 1e9, 1, 0},
    {"J", UNITS_ENERGY, 1, 1, 0},
    {"kJ", UNITS_ENERGY, 1e3, 1, 0},
    {"MJ", UNITS_ENERGY, 1e6, 1, 0},
    {"GJ", UNITS_ENERGY, 1e9, 1, 0},
    {"Wh", UNITS_ENERGY, 3600, 1, 0},
    {"kWh", UNITS_ENERGY, 3.6e6, 1, 0},
    {"MWh", UNITS_ENERGY, 3.6e9, 1, 0},
    {"GWh", UNITS_ENERGY, 3.6e12, 1, 0},
    {"ns", UNITS_TIME, 1, 1e9, 0},
    {"us", UNITS_TIME, 1, 1e6, 0},
    {"ms", UNITS_TIME, 1, 1e3, 0},
    {"s", UNITS_TIME, 1, 1, 0},
    {"min", UNITS_TIME, 60, 1, 0},
    {"h", UNITS_TIME, 3600, 1, 0},
    {"d", UNITS_TIME, 86400, 1, 0},
    {"%", UNITS_FRACTION, 1, 100, 0},
    {"degC", UNITS_TEMPERATURE, 1, 1, 0},
    {"\xc2\xb0"
     "C",
     UNITS_TEMPERATURE, 1, 1, 0},
    {"K", UNITS_TEMPERATURE, 1, 1, -273.15},
    {"$/MWh", UNITS_PRICE, 1, 1, 0},
    {"USD/MWh", UNITS_PRICE, 1, 1, 0},
    {"$/kWh", UNITS_PRICE, 1e3, 1, 0},
    {"USD/kWh", UNITS_PRICE, 1e3, 1, 0},
    {"gCO2/kWh", UNITS_CARBON, 1, 1, 0},
    {"kgCO2/MWh", UNITS_CARBON, 1, 1, 0},
    {"g/kWh", UNITS_CARBON, 1, 1, 0},
    {"kg/MWh", UNITS_CARBON, 1, 1, 0},
    {"Hz", UNITS_FREQUENCY, 1, 1, 0},
    {"kHz", UNITS_FREQUENCY, 1e3, 1, 0},
    {"MHz", UNITS_FREQUENCY, 1e6, 1, 0},
    {"GHz", UNITS_FREQUENCY, 1e9, 1, 0},
    {"B", UNITS_DATA, 1, 1, 0},
    {"kB", UNITS_DATA, 1e3, 1, 0},
    {"MB", UNITS_DATA, 1e6, 1, 0},
    {"GB", UNITS_DATA, 1e9, 1, 0},
    {"TB", UNITS_DATA, 1e12, 1, 0},
    {"KiB", UNITS_DATA, 1024.0, 1, 0},
    {"MiB", UNITS_DATA, 1048576.0, 1, 0},
    {"GiB", UNITS_DATA, 1073741824.0, 1, 0},
    {"TiB", UNITS_DATA, 1099511627776.0, 1, 0},
    {"B/s", UNITS_BANDWIDTH, 1, 1, 0},
    {"MB/s", UNITS_BANDWIDTH, 1e6, 1, 0},
    {"GB/s", UNITS_BANDWIDTH, 1e9, 1, 0},
    {"TB/s", UNITS_BANDWIDTH, 1e12, 1, 0},
    {"FLOPS", UNITS_FLOPS, 1, 1, 0},
    {"GFLOPS", UNITS_FLOPS, 1e9, 1, 0},
    {"TFLOPS", UNITS_FLOPS, 1e12, 1, 0},
    {"PFLOPS", UNITS_FLOPS, 1e15, 1, 0},
    {"TOPS", UNITS_FLOPS, 1e12, 1, 0},
    {"POPS", UNITS_FLOPS, 1e15, 1, 0},
    {"W/s", UNITS_RAMP, 1, 1, 0},
    {"kW/s", UNITS_RAMP, 1e3, 1, 0},
    {"MW/s", UNITS_RAMP, 1e6, 1, 0},
    {"K/W", UNITS_THERMAL_RES, 1, 1, 0},
    {"K/kW", UNITS_THERMAL_RES, 1, 1e3, 0},
    {"$", UNITS_MONEY, 1, 1, 0},
    {"USD", UNITS_MONEY, 1, 1, 0},
    {"$/kW", UNITS_DEMAND_PRICE, 1, 1, 0},
    {"USD/kW", UNITS_DEMAND_PRICE, 1, 1, 0},
    {"$/MW", UNITS_DEMAND_PRICE, 1, 1e3, 0},
};
enum { NUNITS = sizeof unit_table / sizeof unit_table[0] };

typedef struct dim_info {
  const char *name, *canonical, *list, *example;
} dim_info;

static const dim_info dims[UNITS_NDIMS] = {
    [UNITS_NUMBER] = {"number", "", "no unit", "2.5"},
    [UNITS_POWER] = {"power", "W", "W, kW, MW, GW", "20 MW"},
    [UNITS_ENERGY] = {"energy", "J", "J, kJ, MJ, GJ, Wh, kWh, MWh, GWh",
                      "3 MWh"},
    [UNITS_TIME] = {"time", "s", "ns, us, ms, s, min, h, d", "3 h"},
    [UNITS_FRACTION] = {"fraction", "", "% or a plain fraction (0.25)", "25%"},
    [UNITS_TEMPERATURE] = {"temperature", "degC", "degC, K", "35 degC"},
    [UNITS_PRICE] = {"price", "$/MWh", "$/MWh, USD/MWh, $/kWh", "50 $/MWh"},
    [UNITS_CARBON] = {"carbon intensity", "gCO2/kWh",
                      "gCO2/kWh, kgCO2/MWh, g/kWh, kg/MWh", "400 gCO2/kWh"},
    [UNITS_FREQUENCY] = {"frequency", "Hz", "Hz, kHz, MHz, GHz", "1980 MHz"},
    [UNITS_DATA] = {"data size", "B", "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB",
                    "80 GB"},
    [UNITS_BANDWIDTH] = {"bandwidth", "B/s", "B/s, MB/s, GB/s, TB/s",
                         "3.35 TB/s"},
    [UNITS_FLOPS] = {"throughput", "FLOPS",
                     "FLOPS, GFLOPS, TFLOPS, PFLOPS, TOPS, POPS", "989 TFLOPS"},
    [UNITS_RAMP] = {"power ramp", "W/s", "W/s, kW/s, MW/s", "5 MW/s"},
    [UNITS_THERMAL_RES] = {"thermal resistance", "K/W", "K/W, K/kW",
                           "0.05 K/W"},
    [UNITS_MONEY] = {"amount", "$", "$, USD", "2000 $"},
    [UNITS_DEMAND_PRICE] = {"demand charge", "$/kW", "$/kW, USD/kW, $/MW",
                            "15 $/kW"},
};

/* The largest magnitude of each kind of quantity a scenario may give,
 * where a field sets no tighter bound of its own: a typo's exponent
 * ("1e304 W") is refused when the scenario is read, instead of running a
 * day to fail at its end on an infinite sum. Each is far above anything
 * real, so no bound a field needs is cut: */
static const double ceilings[UNITS_NDIMS] = {
    [UNITS_NUMBER] = 1e12,     /* counts and ratios given as numbers */
    [UNITS_POWER] = 1e11,      /* 100 GW: 20x the largest sites planned */
    [UNITS_ENERGY] = 1e16,     /* 2.8 TWh: 1000x the largest battery */
    [UNITS_TIME] = 1e10,       /* 317 years (times in ns stop at 292) */
    [UNITS_FRACTION] = 1e6,    /* 100,000,000% */
    [UNITS_TEMPERATURE] = 1e4, /* degC */
    [UNITS_PRICE] = 1e7,       /* $/MWh: 1000x the highest market caps */
    [UNITS_CARBON] = 1e7,      /* gCO2/kWh; signals check 0..2000 */
    [UNITS_FREQUENCY] = 1e12,  /* 1 THz */
    [UNITS_DATA] = 1e18,       /* 1 EB */
    [UNITS_BANDWIDTH] = 1e16,  /* 10 PB/s */
    [UNITS_FLOPS] = 1e21,      /* 1 zettaFLOPS */
    [UNITS_RAMP] = 1e12,       /* W/s */
    [UNITS_THERMAL_RES] = 1e6, /* K/W */
    [UNITS_MONEY] = 1e15,      /* $ */
    [UNITS_DEMAND_PRICE] = 1e7 /* $/kW */
};

double units_ceiling(units_dim dim) {
  return dim < UNITS_NDIMS ? ceilings[dim] : 0;
}

const char *units_dim_name(units_dim dim) {
  return dim < UNITS_NDIMS ? dims[dim].name : "?";
}
const char *units_canonical(units_dim dim) {
  return dim < UNITS_NDIMS ? dims[dim].canonical : "?";
}
const char *units_list(units_dim dim) {
  return dim < UNITS_NDIMS ? dims[dim].list : "?";
}

static int fail(units_problem *p, size_t offset, const char *fmt, const char *a,
                const char *b, const char *c) {
  if (p != NULL) {
    snprintf(p->msg, sizeof p->msg, fmt, a, b, c);
    p->offset = offset;
  }
  return -1;
}

static const unit *find_unit(const char *name) {
  for (int i = 0; i < NUNITS; i++)
    if (strcmp(name, unit_table[i].name) == 0)
      return &unit_table[i];
  return NULL;
}

/* Accepts decimal numbers only: strtod would also take "inf", "nan" and
 * hex floats, none of which belong in a scenario. */
static size_t number_length(const char *s) {
  size_t i = 0, digits = 0, dots = 0;
  if (s[i] == '+' || s[i] == '-')
    i++;
  for (; isdigit((unsigned char)s[i]) || (s[i] == '.' && dots == 0); i++) {
    digits += isdigit((unsigned char)s[i]) != 0;
    dots += s[i] == '.';
  }
  if (digits == 0)
    return 0;
  if (s[i] == 'e' || s[i] == 'E') {
    size_t j = i + 1;
    if (s[j] == '+' || s[j] == '-')
      j++;
    if (isdigit((unsigned char)s[j])) {
      while (isdigit((unsigned char)s[j]))
        j++;
      i = j;
    }
  }
  return i;
}

static int unit_problem(const char *u, size_t at, units_dim dim,
                        units_problem *p) {
  const unit *exact = find_unit(u);
  if (exact != NULL)
    return fail(p, at, "'%s' is a unit of %s; expected %s", u,
                units_dim_name(exact->dim), units_dim_name(dim));
  /* The closest unit of the dimension wanted (units.h: case ignored). */
  sim_suggest near;
  sim_suggest_init(&near, u);
  for (int i = 0; i < NUNITS; i++)
    if (unit_table[i].dim == dim)
      sim_suggest_add(&near, unit_table[i].name);
  if (sim_suggest_best(&near) != NULL)
    return fail(p, at, "unknown unit '%s'; did you mean '%s'?", u,
                sim_suggest_best(&near), NULL);
  return fail(p, at, "unknown unit '%s' for %s (use %s)", u,
              units_dim_name(dim), units_list(dim));
}

static int parse_unit(const char *u, size_t at, units_dim dim, double x,
                      double *out, units_problem *p) {
  if (*u == '\0') {
    if (dim == UNITS_NUMBER || dim == UNITS_FRACTION) {
      *out = x;
      return 0;
    }
    return fail(p, at, "missing unit: %s needs one of %s", units_dim_name(dim),
                units_list(dim), NULL);
  }
  if (dim == UNITS_NUMBER)
    return fail(p, at, "unexpected unit '%s': a plain number is expected", u,
                NULL, NULL);
  const unit *un = find_unit(u);
  if (un == NULL || un->dim != dim)
    return unit_problem(u, at, dim, p);
  double v = x * un->factor / un->divisor + un->offset;
  if (!isfinite(v))
    return fail(p, at, "'%s' is out of range in %s", u, units_canonical(dim),
                NULL);
  *out = v;
  return 0;
}

int units_parse(const char *text, units_dim dim, double *out,
                units_problem *problem) {
  const char *s = text;
  while (isspace((unsigned char)*s))
    s++;
  size_t start = (size_t)(s - text);
  size_t n = number_length(s);
  if (n == 0)
    return fail(
        problem, start, "'%s' is not a number; expected %s such as '%s'", text,
        units_dim_name(dim), dim < UNITS_NDIMS ? dims[dim].example : "2.5");
  char num[64], unit_name[32];
  if (n >= sizeof num)
    return fail(problem, start, "number '%s' is too long", text, NULL, NULL);
  memcpy(num, s, n);
  num[n] = '\0';
  double x = strtod(num, NULL);
  if (!isfinite(x))
    return fail(problem, start, "number '%s' is out of range", num, NULL, NULL);
  const char *u = s + n;
  while (isspace((unsigned char)*u))
    u++;
  size_t ulen = strlen(u);
  while (ulen > 0 && isspace((unsigned char)u[ulen - 1]))
    ulen--;
  if (ulen >= sizeof unit_name)
    return fail(problem, (size_t)(u - text), "unknown unit '%s'", u, NULL,
                NULL);
  memcpy(unit_name, u, ulen);
  unit_name[ulen] = '\0';
  return parse_unit(unit_name, (size_t)(u - text), dim, x, out, problem);
}

static int reads_back(const char *text, units_dim dim, double value) {
  double back;
  return units_parse(text, dim, &back, NULL) == 0 && back == value;
}

/* The largest unit of dim in which |value| is at least 1 (the most readable
 * one), or NULL when dim has no unit that fits. */
static const unit *readable_unit(double value, units_dim dim) {
  const unit *best = NULL;
  for (int i = 0; i < NUNITS; i++) {
    const unit *u = &unit_table[i];
    /* Offsets (K) and binary prefixes (GiB) read worse than the rest. */
    if (u->dim != dim || u->offset != 0 || strstr(u->name, "iB") != NULL)
      continue;
    double scaled = fabs(value) * u->divisor / u->factor;
    if (scaled >= 1 &&
        (best == NULL || u->factor / u->divisor > best->factor / best->divisor))
      best = u;
  }
  return best;
}

char *units_format(double value, units_dim dim, char *buf, size_t size) {
  const char *canon = units_canonical(dim);
  const unit *u = readable_unit(value, dim);
  if (dim == UNITS_FRACTION) {
    snprintf(buf, size, "%.15g%%", value * 100);
    if (reads_back(buf, dim, value))
      return buf;
  }
  if (u != NULL) {
    snprintf(buf, size, "%.15g %s", value * u->divisor / u->factor, u->name);
    if (reads_back(buf, dim, value))
      return buf;
  }
  snprintf(buf, size, *canon ? "%.17g %s" : "%.17g", value, canon);
  return buf;
}

int units_parse_count(const char *text, uint64_t *out) {
  uint64_t v = 0;
  const char *p = text;
  if (*p < '0' || *p > '9')
    return -1;
  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned digit = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - digit) / 10)
      return -1;
    v = v * 10 + digit;
  }
  if (*p != '\0')
    return -1;
  *out = v;
  return 0;
}
