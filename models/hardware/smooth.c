/* smooth.c - in-rack power smoothing: schema, bank and control step. */
#include "smooth.h"

#include <math.h>
#include <string.h>

/* Defaults. NVML exposes the knobs (nvmlPowerSmoothing: PERCENT_TMP_FLOOR,
 * RAMP_UP_RATE and RAMP_DOWN_RATE in W/s, RAMP_DOWN_HYSTERESIS in ms) but
 * NVIDIA publishes no default values. The figures below are preset
 * profile 0 as a Supermicro GB300 BMC reports it over Redfish, per GPU
 * (spyroot/redfish_ctl, tests/power/test_power_smoothing_dualmode.py):
 * ramp up and down 20 W/s, hysteresis 10 s, TMP floor 89.99%, feature
 * disabled. A rack of 72 GPUs ramps at 72 x 20 = 1440 W/s. The store
 * size is an assumption: enough for the default ramp to climb from the
 * default floor to TDP on a 132 kW NVL72 rack (0.5 x 13.2 kW x 9.2 s ~
 * 61 kJ); NVIDIA does not publish the GB300 PSU storage in joules. */
static const scn_field smo_fields[] = {
    {.key = "enabled",
     .type = SCN_BOOL,
     .offset = offsetof(smo_config, enabled),
     .dflt = "false",
     .help = "smooth each rack's feed draw with its store"},
    {.key = "store",
     .type = SCN_QUANTITY,
     .offset = offsetof(smo_config, store_j),
     .dim = UNITS_ENERGY,
     .min = 0,
     .max = HUGE_VAL,
     .dflt = "65 kJ",
     .help = "energy store per rack, e.g. 65 kJ"},
    {.key = "ramp_up",
     .type = SCN_QUANTITY,
     .offset = offsetof(smo_config, ramp_up_w_s),
     .dim = UNITS_RAMP,
     .min = 0,
     .max = HUGE_VAL,
     .flags = SCN_POSITIVE,
     .dflt = "1440 W/s",
     .help = "most a rack's feed draw may rise per second, e.g. 1440 W/s"},
    {.key = "ramp_down",
     .type = SCN_QUANTITY,
     .offset = offsetof(smo_config, ramp_down_w_s),
     .dim = UNITS_RAMP,
     .min = 0,
     .max = HUGE_VAL,
     .flags = SCN_POSITIVE,
     .dflt = "1440 W/s",
     .help = "most a rack's feed draw may fall per second, e.g. 1440 W/s"},
    {.key = "floor",
     .type = SCN_QUANTITY,
     .offset = offsetof(smo_config, floor),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .dflt = "90%",
     .help = "lowest feed draw, as a share of the rack's TDP"},
    {.key = "hysteresis",
     .type = SCN_QUANTITY,
     .offset = offsetof(smo_config, hysteresis_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = HUGE_VAL,
     .dflt = "10 s",
     .help = "how long the feed holds after the load drops, e.g. 10 s"},
};

const scn_schema smo_schema =
    SCN_SCHEMA("power smoothing", smo_config, smo_fields, .check = NULL);

/* The per-rack arrays, in the order they sit in the one block. */
enum { TDP, FEED, STORE, HOLD, FED, LOAD, BURNED, VIOLATION, NARRAYS };

static double **array_slot(smo_bank *b, int k) {
  double **slots[NARRAYS] = {&b->tdp_w,        &b->feed_w,     &b->store_j,
                             &b->hold_until_s, &b->fed_j,      &b->load_j,
                             &b->burned_j,     &b->violation_s};
  return slots[k];
}

static int check_tdp(uint32_t n, const double *tdp_w, sim_error *err) {
  if (n == 0)
    return sim_error_set(err, SIM_EINVAL, "a smoothing bank needs racks");
  for (uint32_t i = 0; i < n; i++)
    if (!(tdp_w[i] >= 0 && isfinite(tdp_w[i])))
      return sim_error_set(err, SIM_EINVAL, "rack %u: TDP %g W is not valid", i,
                           tdp_w[i]);
  return SIM_OK;
}

/* One allocation for every array: the tick walks them together, and a
 * failure has one block to free. */
smo_bank *smo_bank_create(const smo_config *c, uint32_t n, const double *tdp_w,
                          const sim_allocator *a, sim_error *err) {
  if (check_tdp(n, tdp_w, err) != SIM_OK)
    return NULL;
  smo_bank *b = sim_calloc(a, 1, sizeof *b);
  double *block = b ? sim_calloc(a, (size_t)n * NARRAYS, sizeof *block) : NULL;
  if (block == NULL) {
    sim_free(a, b);
    sim_error_set(err, SIM_ENOMEM, "out of memory for %u racks", n);
    return NULL;
  }
  b->cfg = *c;
  b->n = n;
  b->a = a;
  for (int k = 0; k < NARRAYS; k++)
    *array_slot(b, k) = block + (size_t)k * n;
  memcpy(b->tdp_w, tdp_w, n * sizeof *tdp_w);
  for (uint32_t i = 0; i < n; i++) {
    b->feed_w[i] = NAN;
    b->hold_until_s[i] = NAN;
    b->store_j[i] = c->store_j;
  }
  return b;
}

void smo_bank_destroy(smo_bank *b) {
  if (b == NULL)
    return;
  sim_free(b->a, b->tdp_w); /* the head of the one block */
  sim_free(b->a, b);
}

static int check_step(const smo_bank *b, const double *load_w, double dt_s,
                      sim_error *err) {
  if (!(dt_s > 0 && isfinite(dt_s)))
    return sim_error_set(err, SIM_EINVAL, "smoothing step of %g s", dt_s);
  for (uint32_t i = 0; i < b->n; i++)
    if (!(load_w[i] >= 0 && isfinite(load_w[i])))
      return sim_error_set(err, SIM_EINVAL, "rack %u: load %g W", i, load_w[i]);
  return SIM_OK;
}

/* The feed the ramp limits and the hold allow toward target, from f0. */
static double ramped(const smo_config *c, double f0, double target,
                     double *hold_until, double t_s, double dt_s) {
  if (target >= f0) {
    *hold_until = NAN;
    return fmin(target, f0 + c->ramp_up_w_s * dt_s);
  }
  if (isnan(*hold_until))
    *hold_until = t_s + c->hysteresis_s;
  if (t_s < *hold_until)
    return f0;
  return fmax(target, f0 - c->ramp_down_w_s * dt_s);
}

/* Rack i over one period: the feed, then the store takes the difference,
 * burning what does not fit and forcing the feed up when it runs dry. */
static void step_rack(smo_bank *b, uint32_t i, double load, double t_s,
                      double dt_s) {
  const smo_config *c = &b->cfg;
  double target = fmax(load, c->floor * b->tdp_w[i]);
  double f0 = b->feed_w[i];
  double f = isnan(f0) ? target
                       : ramped(c, f0, target, &b->hold_until_s[i], t_s, dt_s);
  double s0 = b->store_j[i], s = s0 + (f - load) * dt_s;
  if (s > c->store_j) {
    b->burned_j[i] += s - c->store_j;
    s = c->store_j;
  } else if (s < 0) {
    f = load - s0 / dt_s;
    s = 0;
    b->violation_s[i] += dt_s;
  }
  b->store_j[i] = s;
  b->feed_w[i] = f;
}

int smo_bank_step(smo_bank *b, const double *load_w, double t_s, double dt_s,
                  double *total_feed_w, sim_error *err) {
  int rc = check_step(b, load_w, dt_s, err);
  if (rc != SIM_OK)
    return rc;
  double total = 0;
  for (uint32_t i = 0; i < b->n; i++) {
    if (b->cfg.enabled)
      step_rack(b, i, load_w[i], t_s, dt_s);
    else
      b->feed_w[i] = load_w[i];
    b->fed_j[i] += b->feed_w[i] * dt_s;
    b->load_j[i] += load_w[i] * dt_s;
    total += b->feed_w[i];
  }
  if (total_feed_w != NULL)
    *total_feed_w = total;
  return SIM_OK;
}
