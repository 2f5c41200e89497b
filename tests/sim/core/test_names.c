/* test_names.c - the index of names: added, found, a name twice refused
 * with the first one's number, full at the count it was made for, and its
 * allocations failing cleanly. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

#include "names.h"

typedef struct find_case {
  const char *name;
  const char *key;
  long want;
} find_case;

static const char *const fleet[] = {"nvl72", "hgx-h100", "a\"b",
                                    "",      "a b",      "nvl72-0"};

static const find_case finds[] = {
    {"first", "nvl72", 0},    {"second", "hgx-h100", 1},
    {"a quote", "a\"b", 2},   {"empty", "", 3},
    {"a space", "a b", 4},    {"a prefix is not it", "nvl7", -1},
    {"longer", "nvl72-0", 5}, {"absent", "h200", -1},
};

static void names_are_found(void **state) {
  const find_case *c = *state;
  sim_names *ix = sim_names_create(N_OF(fleet), NULL);
  assert_non_null(ix);
  for (size_t i = 0; i < N_OF(fleet); i++)
    assert_int_equal(sim_names_add(ix, fleet[i], i, NULL), SIM_OK);
  long got = sim_names_find(ix, c->key);
  if (got != c->want)
    fail_msg("'%s': got %ld, want %ld", c->key, got, c->want);
  sim_names_destroy(ix);
}

static void a_name_twice_keeps_the_first(void **state) {
  (void)state;
  sim_names *ix = sim_names_create(3, NULL);
  size_t earlier = 99;
  assert_int_equal(sim_names_add(ix, "a", 7, NULL), SIM_OK);
  assert_int_equal(sim_names_add(ix, "a", 8, &earlier), SIM_EINVAL);
  assert_int_equal(earlier, 7);
  assert_int_equal(sim_names_find(ix, "a"), 7);
  assert_int_equal(sim_names_add(ix, "b", 1, NULL), SIM_OK);
  assert_int_equal(sim_names_add(ix, "c", 2, NULL), SIM_OK);
  assert_int_equal(sim_names_add(ix, "d", 3, NULL), SIM_ERANGE);
  assert_int_equal(sim_names_find(ix, "d"), -1);
  sim_names_destroy(ix);
  sim_names_destroy(NULL);
}

/* Many names, as a scenario of 22,000 rack groups has: each found at its
 * number (linear probing past every collision). */
static void many_names(void **state) {
  (void)state;
  enum { N = 22000 };
  static char names[N][16];
  sim_names *ix = sim_names_create(N, NULL);
  for (size_t i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "g%zu", i);
    assert_int_equal(sim_names_add(ix, names[i], i, NULL), SIM_OK);
  }
  for (size_t i = 0; i < N; i++)
    assert_int_equal(sim_names_find(ix, names[i]), (long)i);
  assert_int_equal(sim_names_find(ix, "g22000"), -1);
  sim_names_destroy(ix);
}

static void *make(const sim_allocator *a, void *ctx, sim_error *err) {
  (void)ctx;
  sim_names *ix = sim_names_create(10, a);
  if (ix == NULL)
    sim_error_set(err, SIM_ENOMEM, "out of memory");
  return ix;
}

static void drop(void *obj) { sim_names_destroy(obj); }

static void create_fails_cleanly(void **state) {
  (void)state;
  assert_int_equal(test_alloc_failures("sim_names_create", make, drop, NULL),
                   2);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, names_are_found, finds);
  TEST_ADD(tests, n, a_name_twice_keeps_the_first);
  TEST_ADD(tests, n, many_names);
  TEST_ADD(tests, n, create_fails_cleanly);
  return _cmocka_run_group_tests("names", tests, n, NULL, NULL);
}
