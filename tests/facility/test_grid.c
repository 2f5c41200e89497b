/* test_grid.c - the feed: DR events on the cap, exact books, the seed's
 * CO2 figure, and coverage of the run by sig_series files. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "grid.h"
#include "validate_row.h"

static int bind_grid(const char *yaml, grid_config *c, sim_error *err) {
  memset(c, 0, sizeof *c);
  return scn_bind_string("grid.yaml", yaml, &grid_schema, c, NULL, err);
}

static void make_grid(const char *yaml, grid_config *c, grid *g,
                      double contracted_w, double duration_s) {
  sim_error err = {0};
  if (bind_grid(yaml, c, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  if (grid_init(g, c, contracted_w, NULL, duration_s, NULL, &err) != SIM_OK)
    fail_msg("%s", err.msg);
}

static void drop(grid_config *c, grid *g) {
  grid_fini(g);
  scn_release(&grid_schema, c);
}

/* The seed: 10 MW for a year at 900 kg/MWh is 78,840 t of CO2. */
static void a_coal_year(void **state) {
  (void)state;
  grid_config c;
  grid g;
  make_grid("carbon: {value: 900 kg/MWh}\nprice: {value: 50 $/MWh}\n", &c, &g,
            20e6, 8760 * 3600.0);
  grid_books b = {0};
  grid_account(&g, 10e6, 0, 8760 * 3600.0, &b);
  validate_row(VALIDATE_KIND_IDENTITY, "arithmetic: energy x intensity",
               VALIDATE_GRID, "CO2 of a 10 MW year on coal",
               "seed table: 10 MW x 8,760 h x 0.9 t/MWh = 78,840 t",
               "grid_account, 900 kg/MWh flat", "t CO2", 78840, b.co2_kg / 1000,
               78840 * (1 - 1e-12), 78840 * (1 + 1e-12), "exact (1e-12)");
  assert_close(b.co2_kg / 1000, 78840, 1e-12, 0);
  assert_close(b.energy_j / 3.6e9, 87600, 1e-12, 0);
  assert_close(b.cost, 87600 * 50.0, 1e-12, 0);
  drop(&c, &g);
}

/* Books split at any points add up to the books of the whole. */
static void books_are_additive(void **state) {
  (void)state;
  grid_config c;
  grid g;
  make_grid("carbon: {mix: {coal: 20%, gas: 50%, solar: 20%, wind: 10%}}\n"
            "price: {daily: [{from: 0 h, value: 40 $/MWh}, "
            "{from: 17 h, value: 150 $/MWh}]}\n",
            &c, &g, 1e6, 86400);
  grid_books whole = {0}, parts = {0};
  grid_account(&g, 5e5, 0, 86400, &whole);
  double t = 0;
  for (int i = 1; i <= 97; i++) {
    double next = 86400.0 * i / 97;
    grid_account(&g, 5e5, t, next, &parts);
    t = next;
  }
  assert_close(parts.cost, whole.cost, 1e-12, 0);
  assert_close(parts.co2_kg, whole.co2_kg, 1e-12, 0);
  assert_close(whole.cost, 0.5 * (17 * 40 + 7 * 150.0), 1e-12, 0);
  drop(&c, &g);
}

static void dr_events_cut_the_cap(void **state) {
  (void)state;
  grid_config c;
  grid g;
  make_grid("dr_events:\n"
            "  - {start: 14 h, duration: 3 h, cut: 25%, notice: 30 min}\n"
            "  - {start: 16 h, duration: 2 h, level: 12 MW}\n",
            &c, &g, 20e6, 86400);
  assert_close(grid_cap_at(&g, 13 * 3600.0), 20e6, 0, 0);
  assert_close(grid_cap_at(&g, 14 * 3600.0), 15e6, 0, 0);
  assert_close(grid_cap_at(&g, 16.5 * 3600), 12e6, 0, 0);
  assert_close(grid_cap_at(&g, 17.5 * 3600), 12e6, 0, 0);
  assert_close(grid_cap_at(&g, 18 * 3600.0), 20e6, 0, 0);
  assert_close(grid_next_change(&g, 0), 14 * 3600.0, 0, 0);
  assert_close(grid_next_change(&g, 14 * 3600.0), 16 * 3600.0, 0, 0);
  assert_close(grid_next_change(&g, 16 * 3600.0), 17 * 3600.0, 0, 0);
  assert_true(isinf(grid_next_change(&g, 18 * 3600.0)));
  assert_close(c.dr[0].notice_s, 1800, 0, 0);
  drop(&c, &g);
}

static void bad_events(void **state) {
  (void)state;
  grid_config c;
  sim_error err = {0};
  assert_int_equal(
      bind_grid("dr_events: [{start: 1 h, duration: 1 h}]\n", &c, &err),
      SIM_EINPUT);
  assert_non_null(strstr(err.msg, "grid.yaml:1:"));
  assert_non_null(strstr(err.msg, "a cut or a level"));
  assert_int_equal(bind_grid("dr_events: [{start: 1 h, duration: 0 s, "
                             "cut: 10%}]\n",
                             &c, &err),
                   SIM_EINPUT);
  assert_non_null(strstr(err.msg, "greater than zero"));
}

/* A file that ends before the run does is refused, unless it repeats. */
static void files_must_cover_the_run(void **state) {
  (void)state;
  const char *path = test_out_path("price.csv");
  FILE *f = fopen(path, "w");
  fputs("t,p\n2023-01-01 00:00,10\n2023-01-01 01:00,20\n", f);
  fclose(f);
  char yaml[4600];
  snprintf(yaml, sizeof yaml, "price: {file: '%s'}\n", path);
  grid_config c;
  grid g;
  sim_error err = {0};
  const char *which = NULL;
  assert_int_equal(bind_grid(yaml, &c, &err), SIM_OK);
  assert_int_equal(grid_init(&g, &c, 1e6, NULL, 3 * 3600.0, &which, &err),
                   SIM_ERANGE);
  assert_string_equal(which, "price");
  assert_non_null(strstr(err.msg, "covers 2 h from the start, the run 3 h"));
  assert_int_equal(grid_init(&g, &c, 1e6, NULL, 2 * 3600.0, NULL, &err),
                   SIM_OK);
  grid_fini(&g);
  c.price.repeat = true;
  assert_int_equal(grid_init(&g, &c, 1e6, NULL, 3 * 3600.0, NULL, &err),
                   SIM_OK);
  grid_fini(&g);
  scn_release(&grid_schema, &c);
}

/* A power step: p_w from t0 to t1. */
typedef struct step {
  double t0, t1, p_w;
} step;

/* A tariff on a known profile and the bill it comes to, worked by hand
 * in the comments. */
typedef struct bill_case {
  const char *name;
  const char *yaml;
  double duration_s;
  step steps[4];
  size_t nsteps;
  double energy, demand, fees, peak_kw;
} bill_case;

#define HOURLY "billing_period: 1 h, demand_interval: 15 min"

static const bill_case bill_cases[] = {
    /* Interval 0 averages (600 x 1 + 300 x 5) / 900 = 2.3333 MW. */
    {"a spike is averaged over its interval",
     "tariff: {demand_charge: 12 $/kW, " HOURLY "}\n",
     3600,
     {{0, 600, 1e6}, {600, 900, 5e6}, {900, 3600, 1e6}},
     3,
     0,
     12 * 7000.0 / 3,
     0,
     7000.0 / 3},
    /* 5 MW from 800 s to 1000 s: (800 + 5 x 100) / 900 in both. */
    {"a spike straddling two intervals",
     "tariff: {demand_charge: 9 $/kW, " HOURLY "}\n",
     3600,
     {{0, 800, 1e6}, {800, 1000, 5e6}, {1000, 3600, 1e6}},
     3,
     0,
     9 * 13000.0 / 9,
     0,
     13000.0 / 9},
    /* Each hour pays on its own peak: 2 MW, then 4 MW. */
    {"two billing periods, each on its own peak",
     "tariff: {demand_charge: 10 $/kW, " HOURLY "}\n",
     7200,
     {{0, 3600, 2e6}, {3600, 4500, 4e6}, {4500, 7200, 1e6}},
     3,
     0,
     10 * (2000.0 + 4000),
     0,
     4000},
    /* Half a 2-hour period at 3 MW pays half the charge. */
    {"a partial last period is prorated",
     "tariff: {demand_charge: 10 $/kW, billing_period: 2 h}\n",
     3600,
     {{0, 3600, 3e6}},
     1,
     0,
     10 * 3000 * 0.5,
     0,
     3000},
    /* The last 100 s at 2 MW average over the 100 s they cover. */
    {"a partial last interval averages what it covers",
     "tariff: {demand_charge: 10 $/kW, " HOURLY "}\n",
     1000,
     {{0, 900, 1e6}, {900, 1000, 2e6}},
     2,
     0,
     10 * 2000 * 1000.0 / 3600,
     0,
     2000},
    /* A week at 1 MW: 168 MWh x (50 + 20) $/MWh; 7/30 of 3000 $. */
    {"fees prorated, adders on the energy",
     "price: {value: 50 $/MWh}\n"
     "tariff: {fixed_fee: 3000 $, energy_adder: 20 $/MWh}\n",
     7 * 86400.0,
     {{0, 7 * 86400.0, 1e6}},
     1,
     168 * 70.0,
     0,
     700,
     1000},
};

/* Each step is accounted in uneven pieces, so intervals close mid-call
 * and between calls alike. */
static void bill_from_a_profile(void **state) {
  const bill_case *k = *state;
  grid_config c;
  grid g;
  make_grid(k->yaml, &c, &g, 10e6, k->duration_s);
  grid_books b = {0};
  for (size_t i = 0; i < k->nsteps; i++) {
    const step *s = &k->steps[i];
    double t = s->t0;
    for (int j = 1; j <= 7; j++) {
      double next = s->t0 + (s->t1 - s->t0) * (j * j) / 49.0;
      grid_account(&g, s->p_w, t, next, &b);
      t = next;
    }
  }
  grid_bill bill;
  grid_close(&g, k->duration_s, &b, &bill);
  assert_close(bill.energy, k->energy, 1e-12, 1e-9);
  assert_close(bill.demand, k->demand, 1e-12, 1e-9);
  assert_close(bill.fees, k->fees, 1e-12, 1e-9);
  assert_close(bill.peak_w / 1e3, k->peak_kw, 1e-12, 0);
  assert_close(bill.total, k->energy + k->demand + k->fees, 1e-12, 1e-9);
  assert_true(grid_has_tariff(&g));
  drop(&c, &g);
}

static const test_bad_yaml bad_tariffs[] = {
    {"demand charge per MWh", "tariff: {demand_charge: 15 $/MWh}\n",
     "grid.yaml:1:28: 'demand_charge': '$/MWh' is a unit of price"},
    {"interval not dividing the period",
     "tariff:\n  demand_interval: 7 min\n  billing_period: 1 h\n",
     "grid.yaml:3:19: billing_period must be a whole number of"},
    {"misspelt key", "tariff: {demand_chrge: 1 $/kW}\n", "grid.yaml:1:10: "},
    {"negative fee", "tariff: {fixed_fee: -5 $}\n", "grid.yaml:1:21: "},
};

static void bad_tariff_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&grid_schema, "grid.yaml", b->yaml, b->message);
}

/* The basis /summary writes: the signal's, or none without carbon. */
static void carbon_basis_named(void **state) {
  (void)state;
  static const struct {
    const char *yaml, *basis;
  } rows[] = {
      {"price: {value: 1 $/MWh}\n", "none"},
      {"carbon: {value: 300 g/kWh}\n", "lifecycle"},
      {"carbon: {value: 300 g/kWh, basis: direct}\n", "direct"},
      {"carbon: {mix: {coal: 100%}}\n", "lifecycle"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    grid_config c;
    grid g;
    make_grid(rows[i].yaml, &c, &g, 1e6, 3600);
    assert_string_equal(grid_carbon_basis(&g), rows[i].basis);
    assert_false(grid_has_tariff(&g));
    drop(&c, &g);
  }
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ADD(tests, n, a_coal_year);
  TEST_ADD(tests, n, books_are_additive);
  TEST_ADD(tests, n, dr_events_cut_the_cap);
  TEST_ADD(tests, n, bad_events);
  TEST_ADD(tests, n, files_must_cover_the_run);
  TEST_ROWS(tests, n, bill_from_a_profile, bill_cases);
  TEST_ROWS(tests, n, bad_tariff_rejected, bad_tariffs);
  TEST_ADD(tests, n, carbon_basis_named);
  return _cmocka_run_group_tests("grid", tests, n, NULL, NULL);
}
