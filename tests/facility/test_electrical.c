/* test_electrical.c - the power chain and the facility overhead it adds,
 * held to published figures: the loss arithmetic of WP113's model at the
 * curve's points (UPS efficiency in the 94-97% band current units are
 * quoted at from 25% to full load, transformer losses inside IEEE
 * 3001.5's 0.40-1.90% at full load), the chain's order, and the default
 * plants' PUE: higher at 10% IT load than at 90% (WP113, "Effect of
 * under-loading"), and an annual PUE on 2023 weather in the surveys'
 * bands for a GB200 NVL72 hall (liquid 1.05-1.20) and an H100 HGX hall
 * (air 1.25-1.6). */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "cooling.h"
#include "electrical.h"
#include "validate_row.h"
#include "water.h"

/* The defaults, as a scenario without an `electrical:` map gets them. */
static elec_config chain(double rating_w) {
  elec_config c;
  sim_error err = {0};
  memset(&c, 0, sizeof c);
  if (scn_bind_string("electrical.yaml", "losses: true\n", &elec_schema, &c,
                      NULL, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  c.rating_w = rating_w;
  return c;
}

/* ------------------------------------------------------------------ */
/* The loss arithmetic                                                 */
/* ------------------------------------------------------------------ */

typedef struct ups_case {
  const char *name;
  double load;     /* share of the rating */
  double eff;      /* a0 = 1%, a1 = 2%, a2 = 1%: x / (x + a0 + a1 x + a2 x^2) */
  double lo, hi;   /* the band current units are quoted in */
} ups_case;

static const ups_case ups_points[] = {
    {"UPS at 10% load", 0.10, 0.10 / 0.1121, 0.80, 0.94},
    {"UPS at 25% load", 0.25, 0.25 / 0.265625, 0.94, 0.97},
    {"UPS at 50% load", 0.50, 0.50 / 0.5225, 0.94, 0.97},
    {"UPS at 100% load", 1.00, 1.00 / 1.04, 0.94, 0.97},
};

static void ups_efficiency_at_its_points(void **state) {
  const ups_case *c = *state;
  elec_config e = chain(1e6);
  double out = c->load * 1e6;
  double eff = out / (out + elec_device_loss_w(&e.ups, 1e6, out));
  assert_close(eff, c->eff, 1e-12, 0);
  if (!(eff >= c->lo && eff <= c->hi))
    fail_msg("%s: %.4f outside %.2f-%.2f", c->name, eff, c->lo, c->hi);
}

/* A transformer's full-load losses: IEEE Std 3001.5-2013, Table 1 (after
 * Hickok, 1978), 0.40-1.90%. */
static void transformer_losses_in_ieee_band(void **state) {
  (void)state;
  elec_config e = chain(1e6);
  double full = elec_device_loss_w(&e.transformer, 1e6, 1e6) / 1e6;
  assert_close(full, 0.010, 1e-12, 0);
  assert_true(full >= 0.004 && full <= 0.019);
  /* No load: only the core, 0.2%. */
  assert_close(elec_device_loss_w(&e.transformer, 1e6, 0), 2e3, 1e-12, 0);
}

/* Each device carries what is below it: distribution, then the UPS, then
 * the transformer with the fixed load. */
static void chain_adds_up_in_order(void **state) {
  (void)state;
  elec_config e = chain(1e6);
  double load = 6e5;
  elec_losses l = elec_chain_losses(&e, load);
  double dist = 1e6 * (0.002 + 0.01 * 0.36);
  double ups_out = load + dist;
  double x = ups_out / 1e6;
  double ups = 1e6 * (0.01 + 0.02 * x + 0.01 * x * x);
  double fixed = 0.01 * 1e6;
  double y = (ups_out + ups + fixed) / 1e6;
  double tr = 1e6 * (0.002 + 0.008 * y * y);
  assert_close(l.distribution_w, dist, 1e-12, 0);
  assert_close(l.ups_w, ups, 1e-12, 0);
  assert_close(l.fixed_w, fixed, 1e-12, 0);
  assert_close(l.transformer_w, tr, 1e-12, 0);
  assert_close(l.total_w, dist + ups + fixed + tr, 1e-12, 0);
  assert_close(elec_overhead_w(&e, load), l.total_w, 0, 0);
  /* Off, or with no rating: nothing. */
  e.losses = false;
  assert_true(elec_overhead_w(&e, load) == 0);
  e.losses = true;
  e.rating_w = 0;
  assert_true(elec_overhead_w(&e, load) == 0);
}

/* ------------------------------------------------------------------ */
/* The default plants' PUE                                             */
/* ------------------------------------------------------------------ */

/* A hall as the factory builds its default: one rack group of racks with
 * total limit rated_w, a liquid loop for liquid_share of the heat and an
 * air loop for the rest, each sized 10% above its share. */
typedef struct hall {
  const char *name;
  double rated_w;
  double liquid_share;
  cool_loop_config liquid, air;
  elec_config chain;
} hall;

static void hall_init(hall *h, const char *name, double rated_w,
                      double liquid_share) {
  sim_error err = {0};
  memset(h, 0, sizeof *h);
  h->name = name;
  h->rated_w = rated_w;
  h->liquid_share = liquid_share;
  if (liquid_share > 0 &&
      cool_loop_default(&h->liquid, "liquid", COOL_LIQUID, "g",
                        1.1 * liquid_share * rated_w, liquid_share,
                        &err) != SIM_OK)
    fail_msg("%s", err.msg);
  if (cool_loop_default(&h->air, "air", COOL_AIR, "g",
                        1.1 * (1 - liquid_share) * rated_w, 1 - liquid_share,
                        &err) != SIM_OK)
    fail_msg("%s", err.msg);
  h->chain = chain(rated_w);
}

static void hall_fini(hall *h) {
  scn_release(&cool_loop_schema, &h->liquid);
  scn_release(&cool_loop_schema, &h->air);
}

/* Facility power in steady state at IT power it_w and outdoor_c. */
static double hall_power(const hall *h, double it_w, double outdoor_c) {
  double cool = cool_steady(&h->air, (1 - h->liquid_share) * it_w, outdoor_c)
                    .total_w;
  if (h->liquid_share > 0)
    cool += cool_steady(&h->liquid, h->liquid_share * it_w, outdoor_c).total_w;
  return it_w + elec_overhead_w(&h->chain, it_w) + cool;
}

static double hall_pue(const hall *h, double load, double outdoor_c) {
  double it = load * h->rated_w;
  return cool_pue(hall_power(h, it, outdoor_c), it);
}

/* 8 GB200 NVL72 racks at 132 kW; 13 H100 HGX racks at 40.8 kW (the
 * scenarios' racks). */
#define NVL72_HALL 8 * 132e3
#define HGX_HALL 13 * 40.8e3

/* Issue 22's bar on the shape: PUE at 10% IT load at least 0.05 above
 * PUE at 50%, and PUE at 100% at most 0.05 above it. Both hold on both
 * default plants. On the air plant at 15 degC the rise from 50% to 100%
 * is its pumps' and fans' cube law (+0.050: 1.65% of IT at 50%, 6.6% at
 * full), less the power chain's fixed losses spread wider (0.083 to
 * 0.074) with the chiller flat (0.210 to 0.209): +0.039. It was +0.054 while the model ran the dry economizer's fans
 * (2% of capacity) with the economizer idle (at 15 degC the air plant's
 * 7 degC water is out of a dry cooler's reach, so it takes no heat); a
 * real plant valves the dry cooler off and stops them (cooling.c). */
static void issue_bar_rows(const hall *h, const char *which,
                           const char *plant) {
  static const char basis[] = "issue 22's target on the curve's shape";
  static const char src[] = "issue 22: PUE(10%) >= PUE(50%) + 0.05, "
                            "PUE(100%) <= PUE(50%) + 0.05";
  double p10 = hall_pue(h, 0.1, 15), p50 = hall_pue(h, 0.5, 15),
         p100 = hall_pue(h, 1, 15);
  char fig[96], cond[96];
  snprintf(cond, sizeof cond, "%s and power chain, 15 degC", plant);
  snprintf(fig, sizeof fig, "PUE at 10%% minus PUE at 50%% load, %s", which);
  validate_row(VALIDATE_KIND_BAR, basis, VALIDATE_FACILITY, fig, src, cond,
               "PUE", NAN, p10 - p50, 0.05, INFINITY, ">= 0.05");
  snprintf(fig, sizeof fig, "PUE at 100%% minus PUE at 50%% load, %s", which);
  validate_row(VALIDATE_KIND_BAR, basis, VALIDATE_FACILITY, fig, src, cond,
               "PUE", NAN, p100 - p50, -INFINITY, 0.05, "<= 0.05");
  assert_true(p10 - p50 >= 0.05);
  assert_true(p100 - p50 <= 0.05);
}

/* The two halls' PUE from 10% to 100% load, printed; the 10% and 90%
 * figures returned as l10, l90 (liquid) and a10, a90 (air). */
static void print_pue(const hall *liquid, const hall *air, double *l10,
                      double *l90, double *a10, double *a90) {
  for (int k = 1; k <= 10; k++)
    print_message("load %3d%%: PUE liquid %.4f air %.4f\n", 10 * k,
                  hall_pue(liquid, 0.1 * k, 15), hall_pue(air, 0.1 * k, 15));
  *l10 = hall_pue(liquid, 0.1, 15);
  *l90 = hall_pue(liquid, 0.9, 15);
  *a10 = hall_pue(air, 0.1, 15);
  *a90 = hall_pue(air, 0.9, 15);
  print_message("PUE at 10%% / 90%% load, 15 degC: liquid %.3f / %.3f, air "
                "%.3f / %.3f\n",
                *l10, *l90, *a10, *a90);
}

/* WP113 ("Effect of under-loading", its figure of efficiency against IT
 * load) shows a data center's efficiency falling steeply below about 30%
 * load, because the fixed losses weigh more; measured sites agree. The
 * default plant must do the same: PUE at 10% load above PUE at 90%. */
static void pue_rises_at_part_load(void **state) {
  (void)state;
  hall liquid, air;
  hall_init(&liquid, "GB200 NVL72", NVL72_HALL, 0.85);
  hall_init(&air, "H100 HGX", HGX_HALL, 0);
  double l10, l90, a10, a90;
  print_pue(&liquid, &air, &l10, &l90, &a10, &a90);
  static const char basis[] =
      "the issue's target: PUE rises at part load (a direction)";
  static const char src[] =
      "Rasmussen, APC WP113: efficiency falls steeply below ~30% IT load";
  validate_row(VALIDATE_KIND_BAR, basis, VALIDATE_FACILITY,
               "PUE at 10% over PUE at 90% load, liquid",
               src, "default GB200 NVL72 plant and power chain, 15 degC",
               "ratio", NAN, l10 / l90, nextafter(1, INFINITY), INFINITY,
               "> 1");
  validate_row(VALIDATE_KIND_BAR, basis, VALIDATE_FACILITY,
               "PUE at 10% over PUE at 90% load, air", src,
               "default H100 HGX plant and power chain, 15 degC", "ratio",
               NAN, a10 / a90, nextafter(1, INFINITY), INFINITY, "> 1");
  assert_true(l10 > l90);
  assert_true(a10 > a90);
  issue_bar_rows(&liquid, "liquid", "default GB200 NVL72 plant");
  issue_bar_rows(&air, "air", "default H100 HGX plant");
  /* And below half load it rises all the way down to 10%. (Near full
   * load the curve is flat: the square-law losses and the pumps' and
   * fans' cube law grow faster than IT there.) */
  for (double x = 0.5; x > 0.1 + 1e-9; x -= 0.05)
    assert_true(hall_pue(&liquid, x - 0.05, 15) > hall_pue(&liquid, x, 15));
  /* The air hall's is not monotone everywhere: a warmer return at higher
   * load lets the economizer take a larger share at 15 degC. Its ends are
   * in the published order. */
  assert_true(a10 > hall_pue(&air, 0.5, 15));
  hall_fini(&liquid);
  hall_fini(&air);
}

/* ------------------------------------------------------------------ */
/* The curve's shape against WP113's typical data center               */
/* ------------------------------------------------------------------ */

/* Rasmussen, "Electrical Efficiency Modeling for Data Centers", APC/
 * Schneider Electric White Paper 113 (Rev 1 2006, Rev 2 2012): its
 * typical data center (dual power path, N+1 CRAC units, a chiller plant,
 * no economizer) as its three-parameter model computes it at part load.
 * Its points are in data/pue_curve/wp113_typical_dc.csv (see
 * data/SOURCES.md for how they were read). The plant the model can make
 * closest to it: the default air (chilled-water CRAH) plant of the H100
 * HGX hall with its fans at fixed speed (min_flow 100%, WP113's CRAC is a
 * no-load loss only), N+1 of them all running (pump_fan_redundancy 25%:
 * N = 4 is this model's assumption, WP113 gives the structure only) and
 * a 2N power path (each UPS carries at most half of the load: the chain
 * rated at twice the IT), at 15 degC. Its chiller false-loads below 20%
 * (EnergyPlus's default minimum unloading ratio). Not modelled: WP113's
 * humidifiers and a chiller plant sized beyond the plant's capacity.
 *
 * The bands, fixed before the model was run:
 * - PUE(10%) / PUE(100%): the span of the paper's two revisions (Rev 1
 *   10 / 1.96 = 5.10, Rev 2 6.0 / 1.8 = 3.33), widened by 10% each way
 *   for reading a figure: 3.0-5.6.
 * - PUE(30%) / PUE(100%): Rev 1 only, 3.33 / 1.96 = 1.70; +-20%, since
 *   the two revisions differ by that much about their mean at 10%:
 *   1.36-2.04.
 * Nothing was fitted to them. */

typedef struct wp113_point {
  int revision;
  double load, pue;
} wp113_point;

static size_t wp113_points(wp113_point *pt, size_t cap) {
  FILE *f = test_data_open("pue_curve/wp113_typical_dc.csv");
  char line[512];
  size_t n = 0;
  while (fgets(line, sizeof line, f) != NULL && n < cap)
    if (sscanf(line, "%d,%lf,%lf", &pt[n].revision, &pt[n].load,
               &pt[n].pue) == 3)
      n++;
  fclose(f);
  return n;
}

/* PUE at load share `load` over PUE at full load, revision `rev`; NAN
 * if the revision gives either point. */
static double wp113_ratio(const wp113_point *pt, size_t n, int rev,
                          double load) {
  double at = NAN, full = NAN;
  for (size_t k = 0; k < n; k++) {
    if (pt[k].revision != rev)
      continue;
    if (fabs(pt[k].load - load) < 1e-9)
      at = pt[k].pue;
    if (fabs(pt[k].load - 1) < 1e-9)
      full = pt[k].pue;
  }
  return at / full;
}

static void pue_curve_against_wp113(void **state) {
  (void)state;
  wp113_point pt[16];
  size_t n = wp113_points(pt, 16);
  assert_int_equal(n, 5);
  double r10_1 = wp113_ratio(pt, n, 1, 0.1), r10_2 = wp113_ratio(pt, n, 2, 0.1),
         r30 = wp113_ratio(pt, n, 1, 0.3);
  hall h;
  hall_init(&h, "WP113-like", HGX_HALL, 0);
  h.air.flow_min = 1;
  h.air.redundancy = 0.25;
  h.chain.rating_w = 2 * HGX_HALL;
  double m10 = hall_pue(&h, 0.1, 15) / hall_pue(&h, 1, 15);
  double m30 = hall_pue(&h, 0.3, 15) / hall_pue(&h, 1, 15);
  print_message("WP113 shape: PUE(10%%)/PUE(100%%) model %.3f, source "
                "%.2f (Rev 1) %.2f (Rev 2); PUE(30%%)/PUE(100%%) model %.3f, "
                "source %.2f; model PUE at 10/30/100%%: %.3f %.3f %.3f\n",
                m10, r10_1, r10_2, m30, r30, hall_pue(&h, 0.1, 15),
                hall_pue(&h, 0.3, 15), hall_pue(&h, 1, 15));
  static const char src[] =
      "Rasmussen, APC WP113 (Rev 1, 2): typical data center's part-load "
      "curve, data/pue_curve";
  static const char cond[] = "air plant, fixed-speed N+1 fans, 2N power "
                             "path, 15 degC";
  double lo = 0.9 * fmin(r10_1, r10_2), hi = 1.1 * fmax(r10_1, r10_2);
  validate_row(VALIDATE_KIND_VALIDATION, "nothing set to it",
               VALIDATE_FACILITY, "PUE at 10% over PUE at 100% load", src,
               cond, "ratio", r10_1, m10, lo, hi, "the two revisions +-10%");
  validate_row(VALIDATE_KIND_VALIDATION, "nothing set to it",
               VALIDATE_FACILITY, "PUE at 30% over PUE at 100% load", src,
               cond, "ratio", r30, m30, 0.8 * r30, 1.2 * r30, "+-20%");
  assert_true(m10 > m30 && m30 > 1);
  hall_fini(&h);
}

/* ------------------------------------------------------------------ */
/* Annual PUE of the default plants                                    */
/* ------------------------------------------------------------------ */

enum { HOURS = 8760 };

static double temps[HOURS], rhs[HOURS];

static void load_frankfurt(void) {
  FILE *f = test_data_open("weather/DE-LU_2023_weather.csv");
  char line[256];
  size_t n = 0;
  while (fgets(line, sizeof line, f) != NULL && n < HOURS)
    if (sscanf(line, "%*[^,],%*[^,],%lf,%lf", &temps[n], &rhs[n]) == 2)
      n++;
  fclose(f);
  if (n != HOURS)
    fail_msg("Frankfurt weather: %zu hours read", n);
}

/* The year at a constant IT load share: facility energy over IT energy. */
static double annual_pue(const hall *h, double load) {
  double fac = 0, it = load * h->rated_w;
  for (int k = 0; k < HOURS; k++)
    fac += hall_power(h, it, temps[k]);
  return fac / (it * HOURS);
}

/* The surveys' bands for an annual PUE: warm-water liquid 1.05-1.20 (NREL
 * ESIF 1.04 at the best; hyperscale 1.1-1.2), air 1.25-1.6 (Uptime
 * Institute's 2023 average 1.58). At 70% IT load, on Frankfurt's 2023
 * weather, with the default plant and power chain. */
static void default_plants_annual_pue_in_bands(void **state) {
  (void)state;
  load_frankfurt();
  hall liquid, air;
  hall_init(&liquid, "GB200 NVL72", NVL72_HALL, 0.85);
  hall_init(&air, "H100 HGX", HGX_HALL, 0);
  double l = annual_pue(&liquid, 0.7), a = annual_pue(&air, 0.7);
  static const char basis[] =
      "a survey band the issue set as the target, no measurement of this "
      "plant";
  print_message("annual PUE, default plants, 70%% load, Frankfurt 2023: "
                "liquid (GB200 NVL72) %.3f, air (H100 HGX) %.3f\n",
                l, a);
  validate_row(VALIDATE_KIND_BAR, basis, VALIDATE_FACILITY,
               "annual PUE, default plant, GB200 NVL72 (liquid 85%)",
               "surveys: warm-water liquid 1.05-1.20 (NREL ESIF 1.04)",
               "Frankfurt 2023, 70% IT load, default power chain", "PUE", 1.1,
               l, 1.05, 1.20, "1.05-1.20");
  validate_row(VALIDATE_KIND_BAR, basis, VALIDATE_FACILITY,
               "annual PUE, default plant, H100 HGX (air)",
               "surveys: air 1.25-1.6 (Uptime Institute 2023 average 1.58)",
               "Frankfurt 2023, 70% IT load, default power chain", "PUE", 1.58,
               a, 1.25, 1.6, "1.25-1.6");
  assert_true(l >= 1.05 && l <= 1.20);
  assert_true(a >= 1.25 && a <= 1.6);
  hall_fini(&liquid);
  hall_fini(&air);
}

/* A warm-water hall whose loops both reject heat through cooling towers,
 * following the hourly wet bulb: 85% of the heat to the liquid loop. */
static void evaporative_hall_init(hall *h, double rated_w) {
  char text[256];
  sim_error err = {0};
  memset(h, 0, sizeof *h);
  h->name = "evaporative";
  h->rated_w = rated_w;
  h->liquid_share = 0.85;
  snprintf(text, sizeof text,
           "name: l\nkind: liquid\ncapacity: %.17g W\nheat_share: 0.85\n"
           "heat_rejection: evaporative\n",
           1.1 * 0.85 * rated_w);
  if (scn_bind_string("l.yaml", text, &cool_loop_schema, &h->liquid, NULL,
                      &err) != SIM_OK)
    fail_msg("%s", err.msg);
  snprintf(text, sizeof text,
           "name: a\nkind: air\ncapacity: %.17g W\nheat_share: 0.15\n"
           "heat_rejection: evaporative\n",
           1.1 * 0.15 * rated_w);
  if (scn_bind_string("a.yaml", text, &cool_loop_schema, &h->air, NULL,
                      &err) != SIM_OK)
    fail_msg("%s", err.msg);
  h->chain = chain(rated_w);
}

/* NREL's ESIF (Golden, Colorado): warm-water liquid cooling, evaporative
 * towers and no chillers, an annual PUE of 1.04 with its whole site's
 * overhead (NREL/PR-2C00-70433, 2018). The model's evaporative GB200 NVL72
 * hall on Frankfurt's 2023 weather (the nearest climate the repository
 * has) at 70% load. Nothing was set to it (the liquid loop's 4% pumps and
 * fans were estimated from their flows and pressures; ESIF is cited there
 * only as a floor).
 *
 * Why it fails (1.110 against 1.04 +-5%): not the climate. The model's
 * cooling alone adds 0.035 (IT + cooling over IT: 1.035, ESIF's whole
 * figure); its default power chain adds 0.075 (UPS 0.042 at 70% of its
 * rating, fixed loads 0.014, distribution 0.010, transformer 0.009).
 * NREL describes ESIF's racks as fed at 480 V, fewer conversions than
 * this default chain (a double-conversion UPS in front of every watt);
 * the sources cited here do not say how much of its load is on a UPS.
 * Golden's weather is not in data/weather (only San Jose, Dallas and
 * Frankfurt are), and a cooler, drier year could only lower the 0.035. */
static void evaporative_annual_pue_against_esif(void **state) {
  (void)state;
  load_frankfurt();
  hall h;
  evaporative_hall_init(&h, NVL72_HALL);
  double elec = 0, cool = 0, it = 0.7 * h.rated_w;
  for (int k = 0; k < HOURS; k++) {
    double wet = water_wet_bulb_c(temps[k], rhs[k]);
    elec += elec_overhead_w(&h.chain, it);
    cool += cool_steady_wet(&h.liquid, 1, 0.85 * it, temps[k], wet).total_w +
            cool_steady_wet(&h.air, 1, 0.15 * it, temps[k], wet).total_w;
  }
  double pue = 1 + (elec + cool) / (it * HOURS);
  print_message("annual PUE, evaporative GB200 NVL72 hall, Frankfurt 2023, "
                "70%% load: %.3f (power chain %.3f, cooling %.3f)\n",
                pue, elec / (it * HOURS), cool / (it * HOURS));
  validate_row(VALIDATE_KIND_VALIDATION, "nothing set to it",
               VALIDATE_FACILITY,
               "annual PUE, evaporative warm-water hall (GB200 NVL72)",
               "NREL ESIF (Golden, CO), warm water, towers: 1.04 "
               "(NREL/PR-2C00-70433)",
               "Frankfurt 2023 weather, 70% IT load, default power chain",
               "PUE", 1.04, pue, 1.04 * 0.95, 1.04 * 1.05, "+-5%");
  assert_true(pue > 1);
  hall_fini(&h);
}

/* The schema: a bad share is refused with its place. */
static void bad_chain_is_rejected(void **state) {
  (void)state;
  elec_config c;
  sim_error err = {0};
  memset(&c, 0, sizeof c);
  assert_int_equal(scn_bind_string("e.yaml", "ups: {no_load: 80%}\n",
                                   &elec_schema, &c, NULL, &err),
                   SIM_EINPUT);
  assert_non_null(strstr(err.msg, "e.yaml:1:"));
}

int main(void) {
  gsl_set_error_handler_off();
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ROWS(tests, n, ups_efficiency_at_its_points, ups_points);
  TEST_ADD(tests, n, transformer_losses_in_ieee_band);
  TEST_ADD(tests, n, chain_adds_up_in_order);
  TEST_ADD(tests, n, pue_rises_at_part_load);
  TEST_ADD(tests, n, pue_curve_against_wp113);
  TEST_ADD(tests, n, default_plants_annual_pue_in_bands);
  TEST_ADD(tests, n, evaporative_annual_pue_against_esif);
  TEST_ADD(tests, n, bad_chain_is_rejected);
  return _cmocka_run_group_tests("electrical", tests, n, NULL, NULL);
}
