/* test_rack_phi.c - the fleet's cache of clocks (rack_phi.c): runs'
 * clocks taken a stretch at a time (rack__runs_phi_remember, the cache's
 * misses solved together, the Brent solves four at a time) are
 * gpu_load_clock_under_cap's for each run's held cap and load, to the
 * bit, and leave last and the cache as one by one would: last the
 * stretch's last run's, every entry an exact answer. */
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpu.h"
#include "lanes.h"
#include "rack.h"
#include "rack_fixture.h"

/* Runs of two GPUs, each at a drawn load and a cap from lo to hi of the
 * type's [idle, TDP]; every nan_every-th run's cap NaN and the next
 * one's sm NaN (0: none); every repeat-th run the inputs of the run
 * three before (0: none: a key asked twice in one stretch); the odd
 * racks' thermal caps at thermal (INFINITY: none). */
typedef struct phi_row {
  const char *name;
  double lo, hi, thermal;
  unsigned nan_every, repeat;
} phi_row;

static const phi_row phi_rows[] = {
    {"runs' clocks: caps across the span", 0, 1, INFINITY, 0, 0},
    {"runs' clocks: caps under the lowest clock's and over TDP", -0.3, 1.3,
     INFINITY, 0, 0},
    {"runs' clocks: thermal caps under some caps", 0, 1, 900, 0, 0},
    {"runs' clocks: NaN caps and loads", 0, 1, INFINITY, 5, 0},
    {"runs' clocks: keys again in a stretch", 0, 1, INFINITY, 0, 4},
};

/* The fleet's runs given the row's inputs (draws from seed). */
static void runs_drawn(rack_fleet *f, const phi_row *row, unsigned *seed) {
  const gpu_spec *g = f->types[f->type[0]];
  gpu_load l[512];
  double cap[512];
  for (uint32_t k = 0; 2 * k < f->n; k++) {
    double u = rack_fixture_uniform(seed);
    l[k] = (gpu_load){rack_fixture_uniform(seed), rack_fixture_uniform(seed),
                      rack_fixture_uniform(seed)};
    cap[k] = g->idle_w +
             (g->tdp_w - g->idle_w) * (row->lo + (row->hi - row->lo) * u);
    if (row->nan_every != 0 && k % row->nan_every == 0)
      cap[k] = NAN;
    if (row->nan_every != 0 && k % row->nan_every == 1)
      l[k].sm = NAN;
    if (row->repeat != 0 && k >= 3 && k % row->repeat == 0)
      l[k] = l[k - 3], cap[k] = cap[k - 3];
    for (uint32_t i = 2 * k; i < 2 * k + 2 && i < f->n; i++) {
      rack_set_load(f, i, l[k]);
      f->cap_w[i] = cap[k];
    }
  }
  for (uint32_t r = 0; r < f->nracks; r++)
    f->thermal_cap_w[r] = r % 2 ? row->thermal : INFINITY;
  rack_fleet_caps_written(f);
  rack_fleet_update(f, NULL);
  assert_true(rack_fleet_runs_fresh(f));
}

/* Runs q .. q + n - 1 a stretch: each clock the solve's, last the last's. */
static void stretch_is_the_solves(const rack_fleet *f, uint32_t q, uint32_t n) {
  double phi[RACK_RUNS_BATCH];
  rack_phi_last last = {.type = RACK_PHI_NONE};
  rack__runs_phi_remember(f, q, f->run_rack + q, n, phi, &last);
  for (uint32_t j = 0; j < n; j++) {
    uint16_t t = f->run_type[q + j];
    double cap = rack_run_cap_w(f, q + j, f->run_rack[q + j]);
    double want =
        gpu_load_clock_under_cap(f->types[t], cap, rack_run_load(f, q + j));
    if (memcmp(&phi[j], &want, sizeof want) != 0)
      fail_msg("run %u: %a, the solve %a", q + j, phi[j], want);
    double kept = rack__phi_at(f, t, cap, rack_run_load(f, q + j));
    assert_memory_equal(&kept, &want, sizeof want); /* the cache's entry */
  }
  rack_phi_last one = {.type = RACK_PHI_NONE};
  rack__run_phi_remember(f, q + n - 1, f->run_rack[q + n - 1], &one);
  assert_memory_equal(&last, &one, sizeof last);
}

static void runs_clocks_are_the_solves(void **state) {
  const phi_row *row = *state;
  static const uint32_t sizes[] = {1, 2, 3, 4, 5, 8, 9, 17, 31, 32};
  rack_fleet *f = rack_fixture_two("GB200", 36, true);
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_unit_key(f, i, 1 + i / 2);
  unsigned seed = 41;
  for (int narrow = 0; narrow < 2; narrow++)
    for (int round = 0; round < 20; round++) {
      runs_drawn(f, row, &seed);
      sim_lanes_narrow = narrow;
      for (uint32_t q = 0, s = 0; q < f->nruns; s++) {
        uint32_t n = sizes[s % (sizeof sizes / sizeof *sizes)];
        n = f->nruns - q < n ? f->nruns - q : n;
        stretch_is_the_solves(f, q, n);
        q += n;
      }
      sim_lanes_narrow = false;
    }
  assert_true(f->nruns > 100);
  rack_fleet_destroy(f);
}

int main(void) {
  struct CMUnitTest tests[8];
  size_t n = 0;
  TEST_ROWS(tests, n, runs_clocks_are_the_solves, phi_rows);
  return _cmocka_run_group_tests(
      "rack_phi", tests, n, test_catalogs_load_hardware, test_catalogs_release);
}
