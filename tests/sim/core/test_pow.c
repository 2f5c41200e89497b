/* test_pow.c - sim_pow against the C library's pow, bit for bit: the
 * fast path's exact cases (0.25^2.5 = 2^-5), powers of two, its range's
 * ends and what is outside it (pow itself), other exponents, and spans
 * of the clocks the GPU model's cap solve and the efficiency policy ask. */
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pow.h"

static double draw(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0;
}

/* sim_pow against pow at y: the points pts, then n x drawn in [lo, hi]. */
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
    double want = pow(x, row->y), got = sim_pow(x, row->y);
    if (memcmp(&want, &got, sizeof got) != 0)
      fail_msg("pow(%a, %g): %a, pow %a", x, row->y, got, want);
  }
}

int main(void) {
  struct CMUnitTest tests[8];
  size_t n = 0;
  TEST_ROWS(tests, n, pow_is_glibcs, pow_rows);
  return _cmocka_run_group_tests("pow", tests, n, NULL, NULL);
}
