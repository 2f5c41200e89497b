/* test_gpu_pow.c - gpu_power.c's shortcuts against what they stand for,
 * bit for bit: the cap's solve from the ends kept in a type's memo
 * against a copy of the type without one (test_gpu's brent_is_gsls holds
 * that against GSL's solver; tests/sim/core/test_pow.c, sim_pow); the
 * solve built for fma with x^2.5 in line against GSL's. */
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpu.h"
#include "gpu_internal.h"
#include "gpu_ref.h"
#include "test_catalogs.h"


/* The cap's solve keeps phi_min's and the knee's powers in the type's
 * memo (cap_ends): a copy of a type with another gamma, knee or lowest
 * clock shares the memo, and each still gets the clock a copy without a
 * memo solves (its ends made afresh), asked in turn so the memo's ends
 * are made again each time. */
typedef struct ends_row {
  const char *name;
  double dgamma, knee_k, clock_min_k;
} ends_row;

static const ends_row ends_rows[] = {
    {"cap ends: another gamma", 0.25, 1, 1},
    {"cap ends: another knee", 0, 0.8, 1},
    {"cap ends: another lowest clock", 0, 1, 2},
};

static void cap_ends_follow_the_type(void **state) {
  const ends_row *row = *state;
  uint64_t s = 19;
  for (size_t t = 0; t < cats.gpu.n; t++) {
    gpu_spec other = cats.gpu.gpus[t];
    other.gamma += row->dgamma;
    other.knee *= row->knee_k;
    other.clock_min_hz *= row->clock_min_k;
    for (int i = 0; i < 4000; i++) {
      const gpu_spec *h = i % 2 ? &other : &cats.gpu.gpus[t];
      gpu_spec bare = *h;
      bare.pow_memo = NULL;
      gpu_load l = draw_load(&s);
      double cap = h->idle_w + (h->tdp_w - h->idle_w) * draw(&s);
      double want = gpu_load_clock_under_cap(&bare, cap, l);
      double got = gpu_load_clock_under_cap(h, cap, l);
      if (memcmp(&want, &got, sizeof got) != 0)
        fail_msg("%s cap %a: %a, without the memo %a", h->name, cap, got, want);
    }
  }
}

/* Caps strictly inside the load's [P(phi_min), P(knee)], from lo to hi
 * of that span: every one a Brent solve, on the solve built for fma
 * (x^2.5 in line, sim_pow25_fma) for the catalog's power laws of gamma 2.5
 * where the CPU has it; each the GSL solve's bits (gpu_ref.h), and all
 * but a few strictly inside (phi_min, knee). */
typedef struct knee_row {
  const char *name;
  double lo, hi;
  bool zero_min; /* the type's lowest clock 0: phi_min 0, so the solve's
                    bracket starts at 0 (its interval test's general
                    case, the ends not both above 0) */
} knee_row;

static const knee_row knee_rows[] = {
    {"fma solve: caps near phi_min", 1e-6, 0.05, false},
    {"fma solve: caps mid span", 0.05, 0.95, false},
    {"fma solve: caps near the knee", 0.95, 1 - 1e-6, false},
    {"fma solve: phi_min 0, caps near it", 1e-6, 0.05, true},
    {"fma solve: phi_min 0, caps mid span", 0.05, 0.95, true},
};

static void fma_solve_is_gsls(void **state) {
  const knee_row *row = *state;
  gsl_error_handler_t *was = gsl_set_error_handler_off(); /* as main's */
  uint64_t s = 23;
  for (size_t t = 0; t < cats.gpu.n; t++) {
    gpu_spec h = cats.gpu.gpus[t];
    if (row->zero_min)
      h.clock_min_hz = 0;
    const gpu_spec *g = &h;
    double phi_min = gpu_phi_min(g), knee = fmax(phi_min, fmin(1, g->knee));
    int inside = 0;
    for (int i = 0; i < 20000; i++) {
      gpu_load l = draw_load(&s);
      double lo = gpu_load_power(g, phi_min, l);
      double span = gpu_load_power(g, knee, l) - lo;
      double cap = lo + span * (row->lo + (row->hi - row->lo) * draw(&s));
      double want = ref_clock_under_cap(g, cap, l);
      double got = gpu_load_clock_under_cap(g, cap, l);
      if (memcmp(&want, &got, sizeof got) != 0)
        fail_msg("%s cap %a: %a, GSL %a", g->name, cap, got, want);
      inside += got > phi_min && got < knee;
    }
    if (knee > phi_min && inside < 19900)
      fail_msg("%s: %d of 20000 inside (phi_min, knee)", g->name, inside);
  }
  gsl_set_error_handler(was);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, cap_ends_follow_the_type, ends_rows);
  TEST_ROWS(tests, n, fma_solve_is_gsls, knee_rows);
  return _cmocka_run_group_tests("gpu_pow", tests, n, test_catalogs_load_gpu,
                                 test_catalogs_release);
}
