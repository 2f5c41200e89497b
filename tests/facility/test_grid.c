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
  validate_row(VALIDATE_GRID, "CO2 of a 10 MW year on coal",
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

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ADD(tests, n, a_coal_year);
  TEST_ADD(tests, n, books_are_additive);
  TEST_ADD(tests, n, dr_events_cut_the_cap);
  TEST_ADD(tests, n, bad_events);
  TEST_ADD(tests, n, files_must_cover_the_run);
  return _cmocka_run_group_tests("grid", tests, n, NULL, NULL);
}
