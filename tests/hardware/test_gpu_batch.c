/* test_gpu_batch.c - the cap's clocks a batch at a time
 * (gpu_load_clocks_under_caps: the type's view taken once; Newton's
 * solves four a time in AVX2 lanes where the CPU has them) against
 * gpu_load_clock_under_cap one by one on the scalar path
 * (sim_lanes_narrow), bit for bit, and against the definition (gpu_ref.h)
 * (caps across the span, NaN caps and loads, batches of sizes from 1 to
 * past 128). The lanes' paths are all met: jobs above the knee by
 * gpu_newton4.c's close4 (seen failing with its r and r - 1 swapped,
 * and with r + 2 for r + 1), the others and close4's leftovers by
 * group4 from below_close's start. */
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpu.h"
#include "gpu_ref.h"
#include "lanes.h"
#include "test_catalogs.h"


static void same_bits_or_fail(const char *what, size_t k, double got,
                              double want) {
  if (memcmp(&got, &want, sizeof got) != 0)
    fail_msg("%s %zu: %a, one by one %a", what, k, got, want);
}

/* Batches of caps from lo to hi of the load's [P(phi_min), P(1)] (below
 * 0 or above 1: outside it), every nan_every-th cap NaN (0: none) and
 * every nan_every-th load's sm NaN, 7 from it. */
typedef struct batch_row {
  const char *name;
  double lo, hi;
  unsigned nan_every;
  bool zero_min; /* the type's lowest clock 0 */
} batch_row;

static const batch_row batch_rows[] = {
    {"batch: caps near phi_min", 1e-6, 0.05, 0, false},
    {"batch: caps across the span", 0, 1, 0, false},
    {"batch: caps near the knee and above", 0.6, 1, 0, false},
    {"batch: caps above the knee, near p_1", 0.9, 1, 0, false},
    {"batch: caps past both ends", -0.2, 1.2, 0, false},
    {"batch: NaN caps and loads among them", 0, 1, 5, false},
    {"batch: phi_min 0", 0, 1, 0, true},
};

/* Calls of these sizes in turn: one, a few, and past 64 and 128. */
static const size_t batch_sizes[] = {1, 2,  3,  4,  5,  7,  8,
                                     9, 31, 63, 64, 65, 130};

static void batch_once(const gpu_spec *g, const batch_row *row, uint64_t *s,
                       size_t n, bool ref) {
  double cap[130] = {0}, phi[130];
  gpu_load l[130] = {{0}};
  for (size_t k = 0; k < n; k++) {
    l[k] = draw_load(s);
    double lo = gpu_load_power(g, gpu_phi_min(g), l[k]);
    double span = gpu_load_power(g, 1, l[k]) - lo;
    cap[k] = lo + span * (row->lo + (row->hi - row->lo) * draw(s));
    if (row->nan_every != 0 && k % row->nan_every == 0)
      cap[k] = NAN;
    if (row->nan_every != 0 && k % row->nan_every == 7 % row->nan_every)
      l[k].sm = NAN;
  }
  gpu_load_clocks_under_caps(g, n, cap, l, phi);
  sim_lanes_narrow = true; /* one by one, the scalar Newton */
  for (size_t k = 0; k < n; k++)
    same_bits_or_fail(g->name, k, phi[k],
                      gpu_load_clock_under_cap(g, cap[k], l[k]));
  sim_lanes_narrow = false;
  for (size_t k = 0; ref && k < n; k++)
    same_bits_or_fail(g->name, k, phi[k],
                      ref_clock_under_cap(g, cap[k], l[k]));
}

static void batch_is_one_by_one(void **state) {
  const batch_row *row = *state;
  uint64_t s = 31;
  for (size_t t = 0; t < cats.gpu.n; t++) {
    gpu_spec h = cats.gpu.gpus[t];
    if (row->zero_min)
      h.clock_min_hz = 0;
    for (int rep = 0; rep < 40; rep++)
      for (size_t i = 0; i < sizeof batch_sizes / sizeof *batch_sizes; i++)
        batch_once(&h, row, &s, batch_sizes[i], rep < 4);
  }
}

int main(void) {
  struct CMUnitTest tests[24];
  size_t n = 0;
  TEST_ROWS(tests, n, batch_is_one_by_one, batch_rows);
  return _cmocka_run_group_tests("gpu_batch", tests, n, test_catalogs_load_gpu,
                                 test_catalogs_release);
}
