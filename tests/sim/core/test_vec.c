/* test_vec.c - the growable-array helper: doubling, keeping the items,
 * refusing overflow, and leaving the array as it was when the allocator
 * fails. */
#include "test_util.h"

#include <stdint.h>

#include "err.h"
#include "vec.h"

typedef struct grow_case {
  const char *name;
  size_t cap, need, want;
} grow_case;

static const grow_case grow_cases[] = {
    {"empty to one", 0, 1, SIM_VEC_MIN_CAP},
    {"empty to the minimum", 0, SIM_VEC_MIN_CAP, SIM_VEC_MIN_CAP},
    {"empty past the minimum", 0, 9, 16},
    {"empty to a lot", 0, 1000, 1024},
    {"full by one doubles", 16, 17, 32},
    {"odd capacity doubles", 3, 4, 6},
    {"a big jump doubles until it fits", 8, 100, 128},
    {"room enough keeps it", 32, 20, 32},
    {"nothing needed keeps it", 0, 0, 0},
};

static void grown_cap(void **state) {
  const grow_case *c = *state;
  size_t got = sim_vec_grown_cap(c->cap, c->need, sizeof(double));
  if (got != c->want)
    fail_msg("cap %zu need %zu: got %zu, want %zu", c->cap, c->need, got,
             c->want);
}

static void grown_cap_refuses_overflow(void **state) {
  (void)state;
  assert_int_equal(sim_vec_grown_cap(0, SIZE_MAX / 8 + 1, 8), 0);
  assert_int_equal(sim_vec_grown_cap(0, 1, 0), 0);
  /* Near the top the capacity stops at the largest that fits. */
  size_t max = SIZE_MAX / 16;
  assert_int_equal(sim_vec_grown_cap(max / 2 + 1, max, 16), max);
}

static void reserve_keeps_items(void **state) {
  (void)state;
  test_alloc t;
  test_alloc_init(&t, 0);
  int *v = NULL;
  size_t n = 0, cap = 0;
  for (int i = 0; i < 1000; i++) {
    assert_int_equal(sim_vec_reserve(&t.hook, &v, &cap, n + 1, sizeof *v),
                     SIM_OK);
    assert_true(cap >= n + 1);
    v[n++] = i;
  }
  assert_int_equal(cap, 1024);
  for (int i = 0; i < 1000; i++)
    assert_int_equal(v[i], i);
  /* 8, 16, ..., 1024: one allocation and seven resizes. */
  assert_int_equal(t.calls, 8);
  assert_int_equal(t.live, 1);
  /* Room enough: no call at all. */
  assert_int_equal(sim_vec_reserve(&t.hook, &v, &cap, 10, sizeof *v), SIM_OK);
  assert_int_equal(t.calls, 8);
  sim_free(&t.hook, v);
  assert_int_equal(t.live, 0);
}

static void reserve_failure_leaves_array(void **state) {
  (void)state;
  test_alloc t;
  test_alloc_init(&t, 1);
  double *v = NULL;
  size_t cap = 0;
  assert_int_equal(sim_vec_reserve(&t.hook, &v, &cap, 1, sizeof *v),
                   SIM_ENOMEM);
  assert_null(v);
  assert_int_equal(cap, 0);
  assert_int_equal(t.live, 0);

  /* The second call (the first resize) fails: the items stay. */
  test_alloc_init(&t, 2);
  assert_int_equal(sim_vec_reserve(&t.hook, &v, &cap, 8, sizeof *v), SIM_OK);
  for (int i = 0; i < 8; i++)
    v[i] = i;
  double *before = v;
  assert_int_equal(sim_vec_reserve(&t.hook, &v, &cap, 9, sizeof *v),
                   SIM_ENOMEM);
  assert_ptr_equal(v, before);
  assert_int_equal(cap, 8);
  for (int i = 0; i < 8; i++)
    assert_close(v[i], i, 0, 0);
  /* The next attempt succeeds. */
  assert_int_equal(sim_vec_reserve(&t.hook, &v, &cap, 9, sizeof *v), SIM_OK);
  assert_int_equal(cap, 16);
  assert_close(v[7], 7, 0, 0);
  sim_free(&t.hook, v);
  assert_int_equal(t.live, 0);
}

static void reserve_refuses_overflow(void **state) {
  (void)state;
  test_alloc t;
  test_alloc_init(&t, 0);
  double *v = NULL;
  size_t cap = 0;
  assert_int_equal(sim_vec_reserve(&t.hook, &v, &cap, SIZE_MAX / 4, sizeof *v),
                   SIM_ENOMEM);
  assert_null(v);
  assert_int_equal(cap, 0);
  assert_int_equal(t.calls, 0);
}

static void reserve_default_allocator(void **state) {
  (void)state;
  char *s = NULL;
  size_t cap = 0;
  assert_int_equal(sim_vec_reserve(NULL, &s, &cap, 100, 1), SIM_OK);
  assert_int_equal(cap, 128);
  sim_free(NULL, s);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, grown_cap, grow_cases);
  TEST_ADD(tests, n, grown_cap_refuses_overflow);
  TEST_ADD(tests, n, reserve_keeps_items);
  TEST_ADD(tests, n, reserve_failure_leaves_array);
  TEST_ADD(tests, n, reserve_refuses_overflow);
  TEST_ADD(tests, n, reserve_default_allocator);
  return _cmocka_run_group_tests("vec", tests, n, NULL, NULL);
}
