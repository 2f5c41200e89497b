/* test_alloc.c - the allocator hook: the default allocator, the helpers,
 * and a custom hook seeing every call. */
#include "test_util.h"

#include <stdint.h>
#include <string.h>

#include "alloc.h"

static void default_allocator_round_trip(void **state) {
  (void)state;
  assert_non_null(sim_allocator_default());
  char *p = sim_alloc(NULL, 16);
  assert_non_null(p);
  memset(p, 'x', 16);
  p = sim_resize(NULL, p, 4096);
  assert_non_null(p);
  assert_int_equal(p[15], 'x');
  sim_free(NULL, p);
  sim_free(NULL, NULL);
  /* A zero size still gives a pointer that can be freed. */
  p = sim_alloc(NULL, 0);
  assert_non_null(p);
  sim_free(NULL, p);
}

static void calloc_zeroes_and_refuses_overflow(void **state) {
  (void)state;
  unsigned char *p = sim_calloc(NULL, 100, 8);
  assert_non_null(p);
  for (int i = 0; i < 800; i++)
    assert_int_equal(p[i], 0);
  sim_free(NULL, p);
  assert_null(sim_calloc(NULL, SIZE_MAX / 2, 4));
}

static void hook_sees_every_call_and_can_fail(void **state) {
  (void)state;
  test_alloc t;
  test_alloc_init(&t, 3);
  void *a = sim_alloc(&t.hook, 10);
  void *b = sim_calloc(&t.hook, 2, 10);
  void *c = sim_alloc(&t.hook, 10); /* the third call fails */
  assert_non_null(a);
  assert_non_null(b);
  assert_null(c);
  assert_int_equal(t.calls, 3);
  assert_int_equal(t.live, 2);
  sim_free(&t.hook, a);
  sim_free(&t.hook, b);
  assert_int_equal(t.live, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(default_allocator_round_trip),
      cmocka_unit_test(calloc_zeroes_and_refuses_overflow),
      cmocka_unit_test(hook_sees_every_call_and_can_fail),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
