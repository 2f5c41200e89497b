/* test_roofline_ep.c - the table of the busiest GPU's experts
 * (roofline.h, rl_ep_table): an expert-parallel replica pricing its decode
 * steps through the table gets every figure of the step bit for bit as
 * one that sums each time, whatever order the batches come in, for whole
 * batches (tabulated), fractional ones and ones past the table (summed),
 * at full clock and below; a table that cannot grow is not used. */
#include "test_catalogs.h"
#include "test_replica.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "roofline.h"

typedef struct ep_row {
  const char *name;
  const char *gpu, *model, *precision;
  int ep;
} ep_row;

static const ep_row rows[] = {
    {"Maverick fp8 ep8 H100", "H100-SXM", "Llama-4-Maverick", "fp8", 8},
    {"Qwen3-235B fp8 ep8 H100", "H100-SXM", "Qwen3-235B-A22B", "fp8", 8},
    {"Qwen3-235B fp8 ep4 B200", "B200", "Qwen3-235B-A22B", "fp8", 4},
};

/* The step of `tab` (through its table) equals that of `sum`, bit for bit. */
static void assert_same_step(const rl_replica *sum, const rl_replica *tab,
                             double batch, double phi) {
  rl_step a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  rl_decode_step(sum, batch, 700, phi, &a);
  rl_decode_step(tab, batch, 700, phi, &b);
  if (memcmp(&a, &b, sizeof a) != 0)
    fail_msg("batch %g phi %g: step %.17g s through the table, %.17g summed",
             batch, phi, b.t, a.t);
}

static void table_matches_the_sum(void **state) {
  const ep_row *row = *state;
  rl_replica sum = test_replica(row->gpu, row->model, row->precision, row->ep);
  sum.ep = row->ep;
  assert_int_equal(rl_check(&sum, NULL), SIM_OK);
  test_alloc t;
  test_alloc_init(&t, 0);
  rl_ep_table table = {.alloc = &t.hook};
  rl_replica tab = sum;
  tab.ep_table = &table;
  /* Batches in a scrambled order, each twice (filled, then read). */
  for (int pass = 0; pass < 2; pass++)
    for (unsigned i = 0; i < 600; i++) {
      double batch = (double)((i * 337u) % 600u);
      assert_same_step(&sum, &tab, batch, 1);
      assert_same_step(&sum, &tab, batch, 0.6);
    }
  assert_true(table.n >= 600);
  static const double odd[] = {0.25, 1.5, 63.75, 1e5, 3e6};
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
    assert_same_step(&sum, &tab, odd[i], 1);
  assert_true(table.n < 65536); /* past the table: summed, not stored */
  rl_ep_table_free(&table);
  assert_int_equal(t.live, 0);
}

/* Out of memory the table stays as it was and that step is summed; the
 * next whole batch grows it. */
static void a_table_that_cannot_grow_is_not_used(void **state) {
  (void)state;
  rl_replica sum = test_replica("H100-SXM", "Llama-4-Maverick", "fp8", 8);
  sum.ep = 8;
  test_alloc t;
  test_alloc_init(&t, 1);
  rl_ep_table table = {.alloc = &t.hook};
  rl_replica tab = sum;
  tab.ep_table = &table;
  assert_same_step(&sum, &tab, 7, 1); /* its growth fails */
  assert_int_equal(table.n, 0);
  assert_null(table.v);
  for (double batch = 0; batch < 40; batch++)
    assert_same_step(&sum, &tab, batch, 1);
  assert_true(table.n >= 40);
  rl_ep_table_free(&table);
  rl_ep_table_free(NULL);
  assert_int_equal(t.live, 0);
}

int main(void) {
  struct CMUnitTest tests[8];
  size_t n = 0;
  TEST_ROWS(tests, n, table_matches_the_sum, rows);
  TEST_ADD(tests, n, a_table_that_cannot_grow_is_not_used);
  return _cmocka_run_group_tests("roofline_ep", tests, n, test_catalogs_load,
                                 test_catalogs_release);
}
