/* test_water.c - the evaporative plant and the chiller's part load, held
 * to their sources: Stull's wet bulb against the psychrometric wet bulb
 * (ASHRAE Handbook of Fundamentals 2017, ch. 1, eqs. 6 and 33, at
 * 101.325 kPa) within the error Stull states, the tower's water by source
 * and its balances, a loop's water as the integral of its rejected heat,
 * the wet bulb an evaporative loop follows, ASHRAE 90.1's air-cooled
 * EIR-fPLR curve at its points and the IPLV it implies against 90.1's
 * own full-load and IPLV minima, and a year of an evaporative warm-water
 * plant against NREL's ESIF. */
#include "test_cooling_loop.h"

#include "water.h"

/* ------------------------------------------------------------------ */
/* Wet bulb                                                            */
/* ------------------------------------------------------------------ */

typedef struct wet_case {
  const char *name;
  double dry_c, rh_pct;
  double wet_c;  /* the reference */
  double lo, hi; /* Stull minus reference may be in [lo, hi] K */
} wet_case;

/* The references: Stull's own worked example (20 degC, 50%: 13.7 degC),
 * the rest solved from the psychrometric equations (Hyland-Wexler
 * saturation pressure, ASHRAE eq. 33 for the wet bulb above freezing) by
 * bisection to 0.01 K. Stull's stated error is -1 to +0.65 K; hot dry air
 * (40 degC, 30%) is outside it, at +0.83 K, and its row says so. */
static const wet_case wet_points[] = {
    {"Stull's example, 20 degC 50%", 20, 50, 13.7, -0.05, 0.05},
    {"10 degC 80%", 10, 80, 8.29, -1, 0.65},
    {"15 degC 60%", 15, 60, 10.82, -1, 0.65},
    {"25 degC 60%", 25, 60, 19.47, -1, 0.65},
    {"30 degC 40%", 30, 40, 20.06, -1, 0.65},
    {"35 degC 20%", 35, 20, 18.87, -1, 0.65},
    {"35 degC 60%", 35, 60, 28.17, -1, 0.65},
    {"45 degC 10%", 45, 10, 21.18, -1, 0.65},
    {"20 degC 95%", 20, 95, 19.44, -1, 0.65},
    {"40 degC 30%, beyond Stull's band", 40, 30, 25.09, -1, 0.9},
};

static void wet_bulb_at_its_points(void **state) {
  const wet_case *w = *state;
  double d = water_wet_bulb_c(w->dry_c, w->rh_pct) - w->wet_c;
  if (!(d >= w->lo && d <= w->hi))
    fail_msg("%s: Stull - reference = %+.3f K, outside [%g, %g]", w->name, d,
             w->lo, w->hi);
}

/* Never above the dry bulb; saturated air is at it; bad input is NaN. */
static void wet_bulb_bounds(void **state) {
  (void)state;
  for (double t = -20; t <= 50; t += 5)
    for (double rh = 0; rh <= 100; rh += 10)
      assert_true(water_wet_bulb_c(t, rh) <= t);
  assert_close(water_wet_bulb_c(25, 100), 25, 0, 0.7);
  assert_true(isnan(water_wet_bulb_c(NAN, 50)));
  assert_true(isnan(water_wet_bulb_c(20, INFINITY)));
}

/* ------------------------------------------------------------------ */
/* The tower's water                                                   */
/* ------------------------------------------------------------------ */

typedef struct tower_case {
  const char *name;
  double cycles, drift, range_k;
} tower_case;

static const tower_case towers[] = {
    {"defaults: 4 cycles, 0.001% drift, 5.6 K", 4, 1e-5, 5.6},
    {"2 cycles, 0.005% drift", 2, 5e-5, 5.6},
    {"8 cycles, no drift, 10 K range", 8, 0, 10},
    {"drift above the solids' need: no blowdown", 1.5, 0.01, 2},
};

/* Per kWh rejected: evaporation is 0.00085 x 1.8 / c_p (the range
 * cancels), 1.316 L. The solids that come in with the make-up leave in
 * blowdown and drift at N times the make-up's concentration; make-up is
 * the sum of the sources. */
static void tower_water_balances(void **state) {
  const tower_case *t = *state;
  water_rates r = water_tower_rates(t->cycles, t->drift, t->range_k);
  assert_close(r.evaporation * 3.6e6, 0.00085 * 1.8 / 4186 * 3.6e6, 1e-12, 0);
  assert_close(r.evaporation * 3.6e6, 1.316, 0, 5e-4);
  assert_close(r.drift, t->drift / (4186 * t->range_k), 1e-12, 0);
  assert_close(r.total, r.evaporation + r.blowdown + r.drift, 1e-15, 0);
  assert_true(r.blowdown >= 0);
  if (r.blowdown > 0) /* solids in = solids out */
    assert_close(r.total, t->cycles * (r.blowdown + r.drift), 1e-12, 0);
  else
    assert_true(r.drift >= r.evaporation / (t->cycles - 1));
}

#define EVAP_LIQUID LIQUID "heat_rejection: evaporative\n"

/* A step's water is the make-up rate times all the heat the tower
 * rejected: what the loop removed and the plant's own power. A dry loop
 * uses none. */
static void loop_water_is_rejected_heat(void **state) {
  (void)state;
  cool_loop_config c, d;
  bind_ok(EVAP_LIQUID, &c);
  bind_ok(LIQUID, &d);
  cool_loop *l = make_loop(&c), *m = make_loop(&d);
  cool_step s, t;
  sim_error err = {0};
  assert_int_equal(cool_loop_step_wet(l, 0.7e6, 33, 22, 3600, &s, &err),
                   SIM_OK);
  assert_int_equal(cool_loop_step_wet(m, 0.7e6, 33, 22, 3600, &t, &err),
                   SIM_OK);
  water_rates r = water_tower_rates(c.cycles, c.drift_share, c.range_k);
  assert_close(s.water_kg, r.total * (s.removed_j + s.energy_j), 1e-12, 0);
  assert_true(s.water_kg > 0);
  assert_true(t.water_kg == 0);
  cool_loop_destroy(l);
  cool_loop_destroy(m);
  scn_release(&cool_loop_schema, &c);
  scn_release(&cool_loop_schema, &d);
}

/* An evaporative plant rejects to the wet bulb with its own approaches
 * (5 K economizer, 12 K condenser); a dry one ignores the wet bulb. */
static void evaporative_follows_wet_bulb(void **state) {
  (void)state;
  cool_loop_config c, d;
  bind_ok(AIR "heat_rejection: evaporative\n", &c);
  bind_ok(AIR, &d);
  assert_close(c.econ_approach_k, 5, 0, 0);
  assert_close(c.chiller_approach_k, 12, 0, 0);
  assert_close(d.econ_approach_k, 10, 0, 0);
  assert_close(d.chiller_approach_k, 16.7, 0, 0);
  cool_power e = cool_power_wet(&c, 1, 30, 35, 24);
  assert_close(e.cop, cool_cop(&c, 24), 0, 0);
  cool_power sat = cool_power_wet(&c, 1, 30, 35, 35);
  assert_true(e.total_w < sat.total_w); /* drier air, less power */
  cool_power f = cool_power_wet(&d, 1, 30, 35, 24);
  cool_power g = cool_power_at(&d, 30, 35);
  assert_close(f.total_w, g.total_w, 0, 0);
  assert_true(f.water_kg_s == 0);
  scn_release(&cool_loop_schema, &c);
  scn_release(&cool_loop_schema, &d);
}

/* ------------------------------------------------------------------ */
/* The chiller at part load                                            */
/* ------------------------------------------------------------------ */

typedef struct plr_case {
  const char *name;
  double plr;
  double eir; /* 0.141 + 0.655 x + 0.203 x^2, by hand */
} plr_case;

/* AirCooled_Chiller_AllCapacities_2004_2010_EIRFPLR (openstudio-standards,
 * ashrae_90_1.curves.json), at AHRI 550/590's IPLV points and two more. */
static const plr_case plr_points[] = {
    {"EIR-fPLR at 10%", 0.10, 0.141 + 0.0655 + 0.00203},
    {"EIR-fPLR at 25%", 0.25, 0.141 + 0.16375 + 0.0126875},
    {"EIR-fPLR at 50%", 0.50, 0.141 + 0.3275 + 0.05075},
    {"EIR-fPLR at 75%", 0.75, 0.141 + 0.49125 + 0.1141875},
    {"EIR-fPLR at 100%", 1.00, 0.999},
    {"EIR-fPLR at 110%", 1.10, 0.141 + 0.7205 + 0.24563},
};

static void eir_plr_at_its_points(void **state) {
  const plr_case *p = *state;
  cool_loop_config c;
  bind_ok(AIR, &c);
  assert_close(cool_eir_plr(&c, p->plr), p->eir / 0.999, 1e-12, 0);
  /* The chiller's power at that load: the curve's share of full load. */
  double cop = 3;
  if (p->plr >= 0.2)
    assert_close(cool_chiller_w(&c, p->plr * c.capacity_w, cop),
                 c.capacity_w / cop * p->eir / 0.999, 1e-12, 0);
  char fig[64];
  snprintf(fig, sizeof fig, "chiller power share at %.0f%% load (EIR-fPLR)",
           100 * p->plr);
  validate_row(VALIDATE_KIND_IDENTITY, "a formula the model implements",
               VALIDATE_FACILITY, fig,
               "ASHRAE 90.1 air-cooled chiller curve "
               "(AirCooled_Chiller_AllCapacities_2004_2010_EIRFPLR)",
               "full-load power = 1", "share", p->eir / 0.999,
               cool_eir_plr(&c, p->plr), p->eir / 0.999 * (1 - 1e-12),
               p->eir / 0.999 * (1 + 1e-12), "exact (1e-12)");
  scn_release(&cool_loop_schema, &c);
}

/* EnergyPlus's Chiller:Electric:EIR below its minimum unloading ratio
 * (20%): false-loaded at that ratio's power down to the minimum part-load
 * ratio (10%), then cycling, its power falling in proportion to 0 at no
 * load. Continuous at both ends. */
static void chiller_false_loads_then_cycles(void **state) {
  (void)state;
  cool_loop_config c;
  bind_ok(AIR, &c);
  assert_close(c.unload_min, 0.2, 0, 0);
  double cap = c.capacity_w, cop = 3;
  double at_unl = cap / cop * (0.141 + 0.655 * 0.2 + 0.203 * 0.04) / 0.999;
  assert_close(cool_chiller_w(&c, 0.2 * cap, cop), at_unl, 1e-12, 0);
  assert_close(cool_chiller_w(&c, 0.15 * cap, cop), at_unl, 1e-12, 0);
  assert_close(cool_chiller_w(&c, 0.1 * cap, cop), at_unl, 1e-12, 0);
  assert_close(cool_chiller_w(&c, 0.05 * cap, cop), at_unl / 2, 1e-12, 0);
  assert_true(cool_chiller_w(&c, 0, cop) == 0);
  double below = cool_chiller_w(&c, nextafter(0.2, 0) * cap, cop);
  assert_close(below, at_unl, 1e-12, 0);
  scn_release(&cool_loop_schema, &c);
  /* A higher minimum part-load ratio lifts the default unloading limit
   * with it; an unloading limit below it is refused at its key. */
  bind_ok(AIR "chiller_min_plr: 30%\n", &c);
  assert_close(c.unload_min, 0.3, 0, 0);
  scn_release(&cool_loop_schema, &c);
  test_schema_rejects(&cool_loop_schema, "loop.yaml",
                      AIR "chiller_min_plr: 30%\nchiller_min_unloading: 25%\n",
                      "loop.yaml:5:");
}

/* AHRI 550/590's IPLV for an air-cooled chiller: 0.01 A + 0.42 B + 0.45 C +
 * 0.12 D, the efficiencies at 100, 75, 50 and 25% load with entering air
 * at 35, 26.7, 18.3 and 12.8 degC (95, 80, 65, 55 F), 6.7 degC (44 F)
 * leaving water. The model's ratio of IPLV to full-load efficiency comes
 * from its Carnot-fraction COP at each air temperature (the fraction
 * cancels) and the part-load curve. ASHRAE 90.1-2010, Table 6.8.1C, path
 * A: 1.255 kW/ton full load, 0.941 kW/ton IPLV (as ComStock's reference
 * documentation tabulates it), a ratio of 1.334; 90.1-2013: 1.188 and
 * 0.857-0.876, 1.356-1.386. Nothing in the model was set to them (the
 * Carnot fraction was set to 90.1's full-load figure, which cancels), but
 * the curve is 90.1's own, from the same committee's data, so the row is
 * the curve's consistency with the standard's part-load rating. */
static double efficiency_at(const cool_loop_config *c, double plr,
                            double air_c) {
  return plr * c->capacity_w /
         cool_chiller_w(c, plr * c->capacity_w, cool_cop(c, air_c));
}

static void iplv_against_ashrae_90_1(void **state) {
  (void)state;
  cool_loop_config c;
  bind_ok("name: ch\nkind: air\ncapacity: 1 MW\nsupply: 21.67 degC\n", &c);
  static const double plr[] = {1, 0.75, 0.5, 0.25};
  static const double air[] = {35, 26.67, 18.33, 12.78};
  static const double weight[] = {0.01, 0.42, 0.45, 0.12};
  double full = efficiency_at(&c, 1, 35), iplv = 0;
  for (int k = 0; k < 4; k++)
    iplv += weight[k] * efficiency_at(&c, plr[k], air[k]);
  double ratio = iplv / full;
  print_message("IPLV / full-load efficiency: model %.3f, 90.1-2010 %.3f\n",
                ratio, 1.255 / 0.941);
  validate_row(VALIDATE_KIND_VALIDATION,
               "nothing set to it (the Carnot fraction cancels); the curve is "
               "90.1's own",
               VALIDATE_FACILITY,
               "air-cooled chiller IPLV over full-load efficiency",
               "ASHRAE 90.1-2010 Table 6.8.1C path A: 1.255 / 0.941 kW/ton",
               "AHRI 550/590 IPLV points, 6.7 degC leaving water", "ratio",
               1.255 / 0.941, ratio, 1.255 / 0.941 * 0.9, 1.255 / 0.941 * 1.1,
               "+-10%");
  assert_true(ratio > 1); /* part load at cooler air is more efficient */
  scn_release(&cool_loop_schema, &c);
}

/* ------------------------------------------------------------------ */
/* A year of an evaporative warm-water plant                           */
/* ------------------------------------------------------------------ */

enum { HOURS = 8760 };

static double dry[HOURS], rh[HOURS];

static void load_weather(const char *file) {
  char rel[256];
  snprintf(rel, sizeof rel, "weather/%s", file);
  FILE *f = test_data_open(rel);
  char line[256];
  size_t n = 0;
  while (fgets(line, sizeof line, f) != NULL && n < HOURS)
    if (sscanf(line, "%*[^,],%*[^,],%lf,%lf", &dry[n], &rh[n]) == 2)
      n++;
  fclose(f);
  if (n != HOURS)
    fail_msg("%s: %zu hours read", file, n);
}

typedef struct year {
  double pue_cooling; /* (IT + cooling) / IT */
  double wue;         /* L per IT kWh */
} year;

/* A liquid loop at 90% of its capacity all year, its tower following the
 * hourly wet bulb. */
static year run_year(const cool_loop_config *c) {
  double it = 0.9 * c->capacity_w, cool = 0, water = 0;
  for (int h = 0; h < HOURS; h++) {
    cool_power p = cool_steady_wet(c, 1, it, dry[h],
                                   water_wet_bulb_c(dry[h], rh[h]));
    cool += p.total_w;
    water += p.water_kg_s * 3600;
  }
  return (year){(it * HOURS + cool) / (it * HOURS),
                water / (it * HOURS / 1e3)};
}

/* NREL's ESIF (Golden, Colorado; semi-arid, annual mean about 10 degC):
 * warm-water liquid cooling rejected by evaporative towers, no chillers,
 * about 1 MW of IT on average; the towers used about 2-2.5 million gallons
 * a year (NREL, "High-Performance Computing Data Center Water Usage
 * Efficiency", and "Data Center Water-Savings Win Wins", 2018): 7,570-
 * 9,460 m3 over 8,760 MWh, a WUE of 0.86-1.08 L/kWh. Frankfurt's 2023
 * weather (annual mean 11.6 degC, more humid) is the nearest the
 * repository has. Nothing was set to it.
 *
 * Why it fails (1.81 against 0.86-1.08): not the climate, nor the cycles.
 * The model's tower evaporates 1.316 L per kWh it rejects whatever the
 * weather (the 0.00085-per-degree-F rule, water.h), and at 4 cycles its
 * blowdown adds a third: 1.755 L per kWh rejected, and it rejects the IT
 * heat and the plant's own 3%: 1.81 per IT kWh. With no blowdown at all
 * (infinite cycles) it would still be 1.36, above the band, so no cycles
 * setting and no year of weather reaches ESIF. What differs is how much
 * of the heat goes through a tower: ESIF reuses its racks' heat to heat
 * its building, and the document cited for its water is about the dry
 * (thermosyphon) cooler put ahead of its towers to save water; this
 * plant sends every joule to the tower. The rule also holds the tower's
 * evaporated share fixed where cold, dry air (Golden's winters) carries
 * more of the heat away as sensible heat. Golden's weather is not in
 * data/weather. */
static void evaporative_year_against_esif(void **state) {
  (void)state;
  load_weather("DE-LU_2023_weather.csv");
  cool_loop_config c;
  bind_ok(EVAP_LIQUID, &c);
  year y = run_year(&c);
  print_message("evaporative liquid plant, Frankfurt 2023, 90%% load: "
                "cooling PUE %.3f, WUE %.2f L/kWh\n",
                y.pue_cooling, y.wue);
  validate_row(VALIDATE_KIND_VALIDATION, "nothing set to it",
               VALIDATE_FACILITY,
               "annual WUE, evaporative warm-water liquid plant",
               "NREL ESIF (Golden, CO): 2-2.5 M gal/yr at ~1 MW IT, 0.86-1.08 "
               "L/kWh",
               "Frankfurt 2023 weather, 90% load, 4 cycles, cooling only",
               "L/kWh", 0.97, y.wue, 0.86, 1.08, "0.86-1.08");
  assert_true(y.wue > 0);
  scn_release(&cool_loop_schema, &c);
}

int main(void) {
  gsl_set_error_handler_off();
  struct CMUnitTest tests[48];
  size_t n = 0;
  TEST_ROWS(tests, n, wet_bulb_at_its_points, wet_points);
  TEST_ADD(tests, n, wet_bulb_bounds);
  TEST_ROWS(tests, n, tower_water_balances, towers);
  TEST_ADD(tests, n, loop_water_is_rejected_heat);
  TEST_ADD(tests, n, evaporative_follows_wet_bulb);
  TEST_ROWS(tests, n, eir_plr_at_its_points, plr_points);
  TEST_ADD(tests, n, chiller_false_loads_then_cycles);
  TEST_ADD(tests, n, iplv_against_ashrae_90_1);
  TEST_ADD(tests, n, evaporative_year_against_esif);
  return _cmocka_run_group_tests("water", tests, n, NULL, NULL);
}
