/* test_units.c - quantities with units: every accepted spelling converts
 * to the canonical unit exactly, every bad one fails with a message that
 * names the problem and points at it, and formatting reads back exactly. */
#include "test_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "rng.h"
#include "units.h"

typedef struct parse_case {
  const char *name;
  const char *text;
  units_dim dim;
  double value;      /* expected when ok */
  const char *error; /* substring of the message, or NULL when ok */
  size_t offset;     /* where the problem starts */
} parse_case;

static const parse_case cases[] = {
    {"MW", "20 MW", UNITS_POWER, 20e6, NULL, 0},
    {"kW", "132 kW", UNITS_POWER, 132e3, NULL, 0},
    {"W no space", "700W", UNITS_POWER, 700, NULL, 0},
    {"GW", "1.5 GW", UNITS_POWER, 1.5e9, NULL, 0},
    {"padded", "  7 kW  ", UNITS_POWER, 7000, NULL, 0},
    {"exponent", "1e3 W", UNITS_POWER, 1000, NULL, 0},
    {"Wh", "2 Wh", UNITS_ENERGY, 7200, NULL, 0},
    {"MWh", "2 MWh", UNITS_ENERGY, 7.2e9, NULL, 0},
    {"kJ", "5 kJ", UNITS_ENERGY, 5000, NULL, 0},
    {"ns", "15 ns", UNITS_TIME, 15e-9, NULL, 0},
    {"ms exact", "250ms", UNITS_TIME, 0.25, NULL, 0},
    {"us", "20 us", UNITS_TIME, 20e-6, NULL, 0},
    {"min", "10 min", UNITS_TIME, 600, NULL, 0},
    {"h", "3h", UNITS_TIME, 10800, NULL, 0},
    {"d", "1 d", UNITS_TIME, 86400, NULL, 0},
    {"percent exact", "25%", UNITS_FRACTION, 0.25, NULL, 0},
    {"percent spaced", "95 %", UNITS_FRACTION, 0.95, NULL, 0},
    {"plain fraction", "0.25", UNITS_FRACTION, 0.25, NULL, 0},
    {"degC", "35 degC", UNITS_TEMPERATURE, 35, NULL, 0},
    {"degree sign",
     "35 \xc2\xb0"
     "C",
     UNITS_TEMPERATURE, 35, NULL, 0},
    {"negative degC", "-5 degC", UNITS_TEMPERATURE, -5, NULL, 0},
    {"kelvin", "300 K", UNITS_TEMPERATURE, 300 - 273.15, NULL, 0},
    {"price", "50 $/MWh", UNITS_PRICE, 50, NULL, 0},
    {"price per kWh", "0.05 $/kWh", UNITS_PRICE, 50, NULL, 0},
    {"carbon", "400 gCO2/kWh", UNITS_CARBON, 400, NULL, 0},
    {"carbon kg/MWh", "900 kg/MWh", UNITS_CARBON, 900, NULL, 0},
    {"demand charge", "15 $/kW", UNITS_DEMAND_PRICE, 15, NULL, 0},
    {"demand charge per MW", "15000 $/MW", UNITS_DEMAND_PRICE, 15, NULL, 0},
    {"amount", "2000 $", UNITS_MONEY, 2000, NULL, 0},
    {"MHz", "1980 MHz", UNITS_FREQUENCY, 1980e6, NULL, 0},
    {"GB", "80 GB", UNITS_DATA, 80e9, NULL, 0},
    {"GiB", "1 GiB", UNITS_DATA, 1073741824.0, NULL, 0},
    {"TB/s", "3.35 TB/s", UNITS_BANDWIDTH, 3.35e12, NULL, 0},
    {"TFLOPS", "989 TFLOPS", UNITS_FLOPS, 989e12, NULL, 0},
    {"POPS", "4.5 POPS", UNITS_FLOPS, 4.5e15, NULL, 0},
    {"ramp", "5 MW/s", UNITS_RAMP, 5e6, NULL, 0},
    {"thermal resistance", "0.04 K/W", UNITS_THERMAL_RES, 0.04, NULL, 0},
    {"K per kW", "40 K/kW", UNITS_THERMAL_RES, 0.04, NULL, 0},
    {"number", "2.5", UNITS_NUMBER, 2.5, NULL, 0},
    {"empty", "", UNITS_POWER, 0, "is not a number", 0},
    {"unit only", "MW", UNITS_POWER, 0, "is not a number", 0},
    {"missing unit", "20", UNITS_POWER, 0, "missing unit", 2},
    {"missing unit spaced", "  20  ", UNITS_TIME, 0, "missing unit", 6},
    {"case typo", "20 Mw", UNITS_POWER, 0, "did you mean 'MW'", 3},
    {"wrong dimension", "3 MWh", UNITS_POWER, 0, "is a unit of energy", 2},
    {"wrong dimension time", "5 kW", UNITS_TIME, 0, "is a unit of power", 2},
    {"unknown unit", "20 horses", UNITS_POWER, 0, "unknown unit 'horses'", 3},
    {"trailing words", "20 MW please", UNITS_POWER, 0, "unknown unit", 3},
    {"nan", "nan W", UNITS_POWER, 0, "is not a number", 0},
    {"inf", "inf W", UNITS_POWER, 0, "is not a number", 0},
    {"hex", "0x10 W", UNITS_POWER, 0, "unknown unit", 1},
    {"overflow", "1e999 W", UNITS_POWER, 0, "out of range", 0},
    {"unit on a number", "5 W", UNITS_NUMBER, 0, "unexpected unit", 2},
    {"two dots", "1.2.3 W", UNITS_POWER, 0, "unknown unit", 3},
    {"overflow after scaling", "1e300 GW", UNITS_POWER, 0, "out of range", 6},
};

static void parses(void **state) {
  const parse_case *c = *state;
  double v = -1;
  units_problem p = {{0}, 999};
  int rc = units_parse(c->text, c->dim, &v, &p);
  if (c->error == NULL) {
    if (rc != 0)
      fail_msg("'%s' failed: %s", c->text, p.msg);
    assert_true(v == c->value);
    return;
  }
  assert_int_equal(rc, -1);
  if (strstr(p.msg, c->error) == NULL)
    fail_msg("'%s': message '%s' lacks '%s'", c->text, p.msg, c->error);
  assert_int_equal(p.offset, c->offset);
}

/* Whole counts (seeds, shard indices, task counts): digits only, the
 * whole text, no wrap past 64 bits. */
typedef struct count_case {
  const char *name;
  const char *text;
  bool ok;
  uint64_t value;
} count_case;

static const count_case counts[] = {
    {"count zero", "0", true, 0},
    {"count seven", "7", true, 7},
    {"count leading zeros", "007", true, 7},
    {"count the largest", "18446744073709551615", true, UINT64_MAX},
    {"count one past the largest", "18446744073709551616", false, 0},
    {"count far past the largest", "99999999999999999999", false, 0},
    {"count empty", "", false, 0},
    {"count leading space", " 7", false, 0},
    {"count trailing space", "7 ", false, 0},
    {"count plus sign", "+7", false, 0},
    {"count minus one", "-1", false, 0},
    {"count space then minus", " -1", false, 0},
    {"count with a unit", "7x", false, 0},
    {"count hexadecimal", "0x10", false, 0},
    {"count exponent", "1e3", false, 0},
    {"count decimal point", "7.0", false, 0},
};

static void parses_counts(void **state) {
  const count_case *c = *state;
  uint64_t v = 12345;
  int rc = units_parse_count(c->text, &v);
  if (!c->ok) {
    assert_int_equal(rc, -1);
    assert_true(v == 12345); /* untouched on failure */
    return;
  }
  assert_int_equal(rc, 0);
  assert_true(v == c->value);
}

/* Any value written by units_format reads back to the identical double,
 * in every dimension, for round and for arbitrary values. */
static void format_reads_back_exactly(void **state) {
  (void)state;
  gsl_rng *r = rng_stream_create(5, 300, 0, 0);
  char buf[64];
  for (int d = 0; d < UNITS_NDIMS; d++) {
    for (int i = 0; i < 2000; i++) {
      double mag = pow(10, gsl_rng_uniform(r) * 24 - 9);
      double v = i % 2 ? mag : round(gsl_rng_uniform(r) * 1000) * 1e3;
      if (d == UNITS_TEMPERATURE && i % 3 == 0)
        v = -v;
      double back;
      units_format(v, (units_dim)d, buf, sizeof buf);
      if (units_parse(buf, (units_dim)d, &back, NULL) != 0 || back != v)
        fail_msg("%s: %.17g written as '%s' reads back as %.17g",
                 units_dim_name((units_dim)d), v, buf, back);
    }
  }
  rng_stream_destroy(r);
}

typedef struct format_case {
  const char *name;
  double value;
  units_dim dim;
  const char *text;
} format_case;

/* Round values come out in the unit a person would write. */
static const format_case formats[] = {
    {"MW", 18e6, UNITS_POWER, "18 MW"},
    {"kW", 132e3, UNITS_POWER, "132 kW"},
    {"day", 86400, UNITS_TIME, "1 d"},
    {"hours", 10800, UNITS_TIME, "3 h"},
    {"ms", 0.25, UNITS_TIME, "250 ms"},
    {"percent", 0.25, UNITS_FRACTION, "25%"},
    {"GB", 80e9, UNITS_DATA, "80 GB"},
    {"degC", 35, UNITS_TEMPERATURE, "35 degC"},
};

static void formats_readably(void **state) {
  const format_case *c = *state;
  char buf[64];
  assert_string_equal(units_format(c->value, c->dim, buf, sizeof buf), c->text);
}

static void names_and_lists(void **state) {
  (void)state;
  assert_string_equal(units_dim_name(UNITS_POWER), "power");
  assert_string_equal(units_canonical(UNITS_ENERGY), "J");
  assert_non_null(strstr(units_list(UNITS_TIME), "min"));
  assert_string_equal(units_dim_name(UNITS_NDIMS), "?");
}

int main(void) {
  enum { NC = sizeof cases / sizeof cases[0] };
  enum { NF = sizeof formats / sizeof formats[0] };
  enum { NN = sizeof counts / sizeof counts[0] };
  struct CMUnitTest tests[NC + NF + NN + 2];
  size_t n = 0;
  TEST_ROWS(tests, n, parses, cases);
  TEST_ROWS(tests, n, formats_readably, formats);
  TEST_ROWS(tests, n, parses_counts, counts);
  TEST_ADD(tests, n, format_reads_back_exactly);
  TEST_ADD(tests, n, names_and_lists);
  return _cmocka_run_group_tests("units", tests, n, NULL, NULL);
}
