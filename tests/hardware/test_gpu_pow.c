/* test_gpu_pow.c - gpu_power.c's shortcuts against what they stand for,
 * bit for bit: gpu__pow against glibc's pow, and the cap's solve from
 * the ends kept in a type's memo against a copy of the type without one
 * (test_gpu's brent_is_gsls holds that against GSL's solver). */
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpu.h"
#include "gpu_internal.h"

static gpu_catalog catalog;

static int load_catalog(void **state) {
  (void)state;
  sim_error err = {0};
  if (gpu_catalog_load_builtin(&catalog, &err) != SIM_OK) {
    print_error("%s\n", err.msg);
    return -1;
  }
  return 0;
}

static int release_catalog(void **state) {
  (void)state;
  gpu_catalog_fini(&catalog);
  return 0;
}

static double draw(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0;
}

/* gpu__pow against pow, bit for bit, at y: the points pts, then n x
 * drawn in [lo, hi]. The fast path's exact cases (0.25^2.5 = 2^-5), powers
 * of two, its range's ends and what is outside it (pow itself), and
 * spans of the clocks the cap's solve asks. */
typedef struct pow_row {
  const char *name;
  double y, lo, hi;
  int n;
  const double *pts;
  size_t npts;
} pow_row;

static const double pow_edges[] = {
    0.25, 1,    0.0625, 0x1p-200, 0x1.fffffffffffffp-201, 0x1.0000000000001p+0,
    0,    -0.5, NAN,    INFINITY};

static const pow_row pow_rows[] = {
    {"pow: exact cases and the range's ends", 2.5, 0, 0, 0, pow_edges, 10},
    {"pow: another y is pow's", 2.25, 0, 0, 0, pow_edges, 10},
    {"pow: the cap solve's clocks", 2.5, 0.05, 1, 200000, NULL, 0},
    {"pow: the range's low end", 2.5, 0x1p-200, 0x1p-100, 20000, NULL, 0},
    {"pow: near 1", 2.5, 0.9, 1, 20000, NULL, 0},
    {"pow: another gamma", 2.75, 0.05, 1, 2000, NULL, 0},
    {"pow: above 1", 2.5, 1, 4, 2000, NULL, 0},
};

static void pow_is_glibcs(void **state) {
  const pow_row *row = *state;
  uint64_t s = 17;
  for (size_t i = 0; i < row->npts + (size_t)row->n; i++) {
    double u = draw(&s);
    double x = i < row->npts ? row->pts[i] : row->lo + (row->hi - row->lo) * u;
    double want = pow(x, row->y), got = gpu__pow(x, row->y);
    if (memcmp(&want, &got, sizeof got) != 0)
      fail_msg("pow(%a, %g): %a, pow %a", x, row->y, got, want);
  }
}

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
  for (size_t t = 0; t < catalog.n; t++) {
    gpu_spec other = catalog.gpus[t];
    other.gamma += row->dgamma;
    other.knee *= row->knee_k;
    other.clock_min_hz *= row->clock_min_k;
    for (int i = 0; i < 4000; i++) {
      const gpu_spec *h = i % 2 ? &other : &catalog.gpus[t];
      gpu_spec bare = *h;
      bare.pow_memo = NULL;
      gpu_load l = {draw(&s), draw(&s), draw(&s)};
      double cap = h->idle_w + (h->tdp_w - h->idle_w) * draw(&s);
      double want = gpu_load_clock_under_cap(&bare, cap, l);
      double got = gpu_load_clock_under_cap(h, cap, l);
      if (memcmp(&want, &got, sizeof got) != 0)
        fail_msg("%s cap %a: %a, without the memo %a", h->name, cap, got, want);
    }
  }
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, pow_is_glibcs, pow_rows);
  TEST_ROWS(tests, n, cap_ends_follow_the_type, ends_rows);
  return _cmocka_run_group_tests("gpu_pow", tests, n, load_catalog,
                                 release_catalog);
}
