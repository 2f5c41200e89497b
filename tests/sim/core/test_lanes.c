/* test_lanes.c - the sixteen-byte lanes (lanes.h): the pick's four lane
 * choices, the zero test to the bit (one bit off in any lane is not
 * zero, nor is -0 against 0), loads and stores at an address no lane
 * type is aligned to, and a pair's add the two scalar adds' bits; the
 * wide paths' switch and their four-lane loads and masks. */
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lanes.h"

/* SIM_D2_PICK(a, i, b, j): lane i of a, lane j of b. The macro takes
 * constants, so each choice is written out. */
typedef struct pick_row {
  const char *name;
  int i, j;
} pick_row;

static const pick_row pick_rows[] = {
    {"pick a0 b0", 0, 0},
    {"pick a0 b1", 0, 1},
    {"pick a1 b0", 1, 0},
    {"pick a1 b1", 1, 1},
};

static sim_d2 pick(sim_d2 a, int i, sim_d2 b, int j) {
  if (i == 0)
    return j == 0 ? SIM_D2_PICK(a, 0, b, 0) : SIM_D2_PICK(a, 0, b, 1);
  return j == 0 ? SIM_D2_PICK(a, 1, b, 0) : SIM_D2_PICK(a, 1, b, 1);
}

static void pick_takes_its_lanes(void **state) {
  const pick_row *row = *state;
  const double av[2] = {1.5, -0.0}, bv[2] = {0x1p-1070, -3.25};
  sim_d2 a = sim_d2_at(av), b = sim_d2_at(bv);
  sim_d2 got = pick(a, row->i, b, row->j);
  double want[2] = {av[row->i], bv[row->j]}, out[2];
  sim_d2_put(out, got);
  assert_memory_equal(out, want, sizeof want);
}

/* x xor y zero exactly when x and y are the same sixteen bytes: every
 * single bit flipped, in each lane of either view, is seen. */
static void zero_is_every_bit(void **state) {
  (void)state;
  const sim_u2 x = {0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  assert_true(sim_u2_zero(x ^ x));
  assert_true(sim_u4_zero((sim_u4)x ^ (sim_u4)x));
  for (int bit = 0; bit < 128; bit++) {
    sim_u2 y = x;
    y[bit / 64] ^= 1ULL << (bit % 64);
    assert_false(sim_u2_zero(x ^ y));
    sim_u4 z = (sim_u4)x;
    z[bit / 32] ^= 1U << (bit % 32);
    assert_false(sim_u4_zero((sim_u4)x ^ z));
  }
  const double zeros[2] = {0.0, 0.0};
  for (int lane = 0; lane < 2; lane++) { /* -0 == 0, but not its bits */
    double neg[2] = {0.0, 0.0};
    neg[lane] = -0.0;
    assert_false(sim_u2_zero(sim_u2_at(zeros) ^ sim_u2_at(neg)));
  }
}

/* Each type stored at an odd address and loaded back: the same bytes,
 * and the bytes around untouched. */
static void at_put_anywhere(void **state) {
  (void)state;
  unsigned char buf[48], was[48];
  for (size_t k = 0; k < sizeof buf; k++)
    buf[k] = was[k] = (unsigned char)(0xa5 ^ k);
  unsigned char *x = buf + 3;
  const sim_d2 d = {-0.0, 0x1.fffffffffffffp1023};
  const sim_u2 u = {0x8000000000000001ULL, 42};
  const sim_u4 v = {1, 0x80000000U, 7, 0xffffffffU};
  sim_d2_put(x, d);
  sim_d2 d2 = sim_d2_at(x);
  assert_memory_equal(&d2, &d, sizeof d);
  sim_u2_put(x + 16, u);
  sim_u2 u2 = sim_u2_at(x + 16);
  assert_memory_equal(&u2, &u, sizeof u);
  assert_memory_equal(x, &d, sizeof d); /* the one before kept */
  sim_u4_put(x + 5, v);
  sim_u4 v2 = sim_u4_at(x + 5);
  assert_memory_equal(&v2, &v, sizeof v);
  assert_memory_equal(buf, was, 3);
  assert_memory_equal(buf + 35, was + 35, sizeof buf - 35);
}

/* Two chains added as a pair: each lane the scalar add's bits, rounding,
 * signed zeros and infinities included. */
static void pair_add_is_two_adds(void **state) {
  (void)state;
  static const double a[][2] = {{0.1, 1e16},
                                {-0.0, 0.0},
                                {0x1p-1074, -0x1p-1074},
                                {0x1.fffffffffffffp1023, 1.0 / 3}};
  static const double b[][2] = {{0.2, 1.0},
                                {-0.0, -0.0},
                                {0x1p-1074, 0x1p-1074},
                                {0x1.fffffffffffffp1023, 2.0 / 3}};
  for (size_t k = 0; k < sizeof a / sizeof *a; k++) {
    double got[2];
    sim_d2_put(got, sim_d2_at(a[k]) + sim_d2_at(b[k]));
    volatile double w0 = a[k][0] + b[k][0], w1 = a[k][1] + b[k][1];
    double want[2] = {w0, w1};
    assert_memory_equal(got, want, sizeof want);
  }
}

/* The wide paths' switch: narrow set, never wide; wide only where the
 * CPU says it has AVX2. */
static void narrow_turns_wide_off(void **state) {
  (void)state;
  sim_lanes_narrow = true;
  assert_false(sim_lanes_wide());
  sim_lanes_narrow = false;
#ifdef SIM_LANES_AVX2
  assert_int_equal(sim_lanes_wide(), __builtin_cpu_supports("avx2") != 0);
#else
  assert_false(sim_lanes_wide());
#endif
}

/* The 512 tier: off under either switch, otherwise as the CPU says. */
static void switches_turn_512_off(void **state) {
  (void)state;
  sim_lanes_narrow = true;
  assert_false(sim_lanes_512());
  sim_lanes_narrow = false;
  sim_lanes_no512 = true;
  assert_false(sim_lanes_512());
  sim_lanes_no512 = false;
#ifdef SIM_LANES_AVX2
  bool has = __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512dq");
  assert_int_equal(sim_lanes_512(), has);
#else
  assert_false(sim_lanes_512());
#endif
}

#ifdef SIM_LANES_AVX2
/* sim_x4_first(n) masks the first n lanes; sim_x4_xor_masked reads
 * those lanes alone (0 xor e in the rest, read from nowhere: the last
 * word of a page-end array would not fault); sim_x4_xor all four, from
 * an address no lane type is aligned to. */
__attribute__((target("avx2"))) static void x4_checks(void) {
  uint64_t w[9], got[4];
  for (unsigned i = 0; i < 9; i++)
    w[i] = 0x0101010101010101ULL * (i + 1);
  const __m256i e = _mm256_set1_epi64x(0x0f0f);
  for (unsigned n = 0; n <= 4; n++) {
    int64_t m[4];
    _mm256_storeu_si256((__m256i *)m, sim_x4_first(n));
    for (unsigned i = 0; i < 4; i++)
      assert_int_equal(m[i], i < n ? -1 : 0);
    _mm256_storeu_si256((__m256i *)got,
                        sim_x4_xor_masked(w + 1, e, sim_x4_first(n)));
    for (unsigned i = 0; i < 4; i++)
      assert_true(got[i] == ((i < n ? w[1 + i] : 0) ^ 0x0f0f));
  }
  char buf[40];
  memcpy(buf + 3, w, 32);
  _mm256_storeu_si256((__m256i *)got, sim_x4_xor(buf + 3, e));
  for (unsigned i = 0; i < 4; i++)
    assert_true(got[i] == (w[i] ^ 0x0f0f));
}
#endif

#ifdef SIM_LANES_AVX2
/* checks, where the CPU has AVX2 (this build has the wide paths). */
static void on_avx2(void (*checks)(void)) {
  if (__builtin_cpu_supports("avx2"))
    checks();
}
#endif

static void x4_loads_and_masks(void **state) {
  (void)state;
#ifdef SIM_LANES_AVX2
  on_avx2(x4_checks);
#endif
}

#ifdef SIM_LANES_AVX2
/* The four-double lanes (sim_d4): loads and stores anywhere, the
 * transpose of four registers to the bit (signed zeros, a NaN's payload,
 * the least subnormal, infinities) with the bytes around it untouched,
 * and a lane's multiply, divide and add the scalar's bits. */
__attribute__((target("avx2"))) static void d4_checks(void) {
  const double m[4][4] = {{1.5, -0.0, 0x1p-1074, -INFINITY},
                          {0.1, 1e300, -3.25, 0x1.fffffffffffffp1023},
                          {2.0 / 3, -0x1p-1022, 7.0, 0.0},
                          {-1.0, 1.0 / 3, 1e-300, 42.0}};
  double nan;
  uint64_t bits = 0x7ff8000000000123ULL;
  memcpy(&nan, &bits, sizeof nan);
  unsigned char buf[8 * 16 + 16], was[sizeof buf];
  for (size_t k = 0; k < sizeof buf; k++)
    buf[k] = was[k] = (unsigned char)(0x5a ^ k);
  double rows[4][4];
  memcpy(rows, m, sizeof rows);
  rows[2][1] = nan;
  sim_d4 a = sim_d4_at(rows[0]), b = sim_d4_at(rows[1]);
  sim_d4 c = sim_d4_at(rows[2]), d = sim_d4_at(rows[3]);
  double *to = (double *)(void *)(buf + 5); /* memcpy'd: any address */
  sim_d4_transpose_put(to, a, b, c, d);
  for (int i = 0; i < 4; i++)
    for (int r = 0; r < 4; r++)
      assert_memory_equal(buf + 5 + 8 * (4 * i + r), &rows[r][i], 8);
  assert_memory_equal(buf, was, 5);
  assert_memory_equal(buf + 5 + 128, was + 5 + 128, sizeof buf - 133);
  sim_d4 p = SIM_D4_PICK(a, b, 3, 4, 1, 6), all = sim_d4_all(-0.0);
  const double want_p[4] = {rows[0][3], rows[1][0], rows[0][1], rows[1][2]};
  double got[4];
  sim_d4_put(got, p);
  assert_memory_equal(got, want_p, sizeof got);
  sim_d4_put(got, all);
  for (int i = 0; i < 4; i++)
    assert_true(signbit(got[i]) && got[i] == 0);
  sim_d4_put(got, (a * b + c) / d);
  for (int i = 0; i < 4; i++) {
    volatile double x = rows[0][i] * rows[1][i];
    volatile double y = x + rows[2][i];
    volatile double want = y / rows[3][i];
    assert_memory_equal(&got[i], (const void *)&want, 8);
  }
}
#endif

static void d4_lanes_are_scalars(void **state) {
  (void)state;
#ifdef SIM_LANES_AVX2
  on_avx2(d4_checks);
#endif
}

int main(void) {
  struct CMUnitTest tests[11];
  size_t n = 0;
  TEST_ROWS(tests, n, pick_takes_its_lanes, pick_rows);
  TEST_ADD(tests, n, zero_is_every_bit);
  TEST_ADD(tests, n, at_put_anywhere);
  TEST_ADD(tests, n, pair_add_is_two_adds);
  TEST_ADD(tests, n, narrow_turns_wide_off);
  TEST_ADD(tests, n, switches_turn_512_off);
  TEST_ADD(tests, n, x4_loads_and_masks);
  TEST_ADD(tests, n, d4_lanes_are_scalars);
  return _cmocka_run_group_tests("lanes", tests, n, NULL, NULL);
}
