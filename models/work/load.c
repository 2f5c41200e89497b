/* load.c - synthetic utilisation patterns and their schema. */
#include "load.h"

#include <math.h>

#include <gsl/gsl_randist.h>

#define DAY_S 86400.0
#define PI 3.14159265358979323846

static const char *const pattern_names[] = {"constant", "diurnal", "steps",
                                            NULL};

static const scn_field step_fields[] = {
    {.key = "at",
     .type = SCN_QUANTITY,
     .offset = offsetof(load_step, at_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = 366 * 86400.0,
     .flags = SCN_REQUIRED,
     .help = "when the step starts, e.g. 6 h"},
    {.key = "level",
     .type = SCN_QUANTITY,
     .offset = offsetof(load_step, level),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .flags = SCN_REQUIRED,
     .help = "activity from then on, 0-100%"},
};

static const scn_schema step_schema =
    SCN_SCHEMA("load step", load_step, step_fields, .check = NULL);

static int check_load(void *obj, const scn_loc *loc, void *user,
                      sim_error *err);

#define FRACTION(k, field, def, h)                                             \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(load_config, field),    \
    .dim = UNITS_FRACTION, .min = 0, .max = 1, .dflt = def, .help = h          \
  }

/* The defaults below shape an illustrative synthetic load, not a measured
 * one: a scenario that matters gives its own (and workloads replace this
 * model). The noise's correlation time of 10 min keeps rack swings slower
 * than a control period and faster than the day. */
static const scn_field load_fields[] = {
    {.key = "pattern",
     .type = SCN_ENUM,
     .offset = offsetof(load_config, pattern),
     .names = pattern_names,
     .dflt = "constant",
     .help = "constant, diurnal or steps"},
    FRACTION("level", level, "70%", "constant activity, 0-100%"),
    FRACTION("low", low, "30%", "diurnal: activity at the trough"),
    FRACTION("high", high, "90%", "diurnal: activity at the peak"),
    {.key = "peak_at",
     .type = SCN_QUANTITY,
     .offset = offsetof(load_config, peak_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = DAY_S,
     .dflt = "15 h",
     .help = "diurnal: time of day of the peak"},
    {.key = "steps",
     .type = SCN_LIST,
     .offset = offsetof(load_config, steps),
     .sub = &step_schema,
     .count_offset = offsetof(load_config, nsteps),
     .help = "steps: a list of {at: TIME, level: %}, the first at 0 s"},
    FRACTION("noise", noise, "5%", "standard deviation of per-rack noise"),
    {.key = "noise_time",
     .type = SCN_QUANTITY,
     .offset = offsetof(load_config, noise_time),
     .dim = UNITS_TIME,
     .flags = SCN_POSITIVE,
     .dflt = "10 min",
     .help = "correlation time of the noise"},
};

const scn_schema load_schema =
    SCN_SCHEMA("load", load_config, load_fields, .check = check_load);

static int check_load(void *obj, const scn_loc *loc, void *user,
                      sim_error *err) {
  (void)user;
  const load_config *c = obj;
  if (c->pattern == LOAD_DIURNAL && c->low > c->high)
    return scn_fail(loc, "low", err, NULL, "'low' is above 'high'");
  if (c->pattern != LOAD_STEPS)
    return SIM_OK;
  if (c->nsteps == 0 || c->steps[0].at_s != 0)
    return scn_fail(loc, "steps", err, "e.g. steps: [{at: 0 s, level: 50%}]",
                    "the steps pattern needs steps, the first at 0 s");
  for (size_t i = 1; i < c->nsteps; i++) {
    char where[64];
    snprintf(where, sizeof where, "steps.%zu.at", i);
    if (!(c->steps[i].at_s > c->steps[i - 1].at_s))
      return scn_fail(loc, where, err, "steps are listed in time order",
                      "step %zu does not come after step %zu", i + 1, i);
  }
  return SIM_OK;
}

static double step_level(const load_config *c, double t_s) {
  size_t i = 0;
  while (i + 1 < c->nsteps && c->steps[i + 1].at_s <= t_s)
    i++;
  return c->steps[i].level;
}

double load_level(const load_config *c, double t_s) {
  switch (c->pattern) {
  case LOAD_DIURNAL: {
    double phase = 2 * PI * (t_s - c->peak_s) / DAY_S;
    return c->low + (c->high - c->low) * 0.5 * (1 + cos(phase));
  }
  case LOAD_STEPS:
    return step_level(c, t_s);
  default:
    return c->level;
  }
}

load_noise load_noise_for(const load_config *c, double dt_s) {
  double rho = exp(-dt_s / c->noise_time);
  return (load_noise){rho, c->noise * sqrt(1 - rho * rho)};
}

double load_noise_step(const load_noise *n, double x, gsl_rng *r) {
  if (n->kick == 0)
    return 0;
  return x * n->rho + n->kick * gsl_ran_gaussian_ziggurat(r, 1);
}
