/* test_owner_sums.c - the books' per-GPU pass (work__owner_sums): every
 * owner's sum the same bits as `sum[owner[i]] += power[i]` GPU by GPU,
 * the loop it replaced, on a table of layouts (runs, owners that come
 * back, one GPU, none) and on random fleets. */
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workloads_internal.h"

enum { MAX_GPUS = 4096, MAX_OWNERS = 64 };

/* The loop the run-length one replaces, kept here as the reference. */
static void reference(double *sum, const uint32_t *owner, const double *power,
                      uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    sum[owner[i]] += power[i];
}

/* Both sums from the same start, compared to the bit. */
static void check(const uint32_t *owner, const double *power, uint32_t n,
                  uint32_t nowners) {
  double want[MAX_OWNERS + 1], got[MAX_OWNERS + 1];
  for (uint32_t o = 0; o <= nowners; o++)
    want[o] = got[o] = o == 0 ? 0 : 1.0 / (o + 2); /* rows need not start 0 */
  reference(want, owner, power, n);
  work__owner_sums(got, owner, power, n);
  assert_memory_equal(want, got, (nowners + 1) * sizeof *want);
}

typedef struct layout_case {
  const char *name;
  uint32_t n, nowners;
  uint32_t owner[12];
} layout_case;

static const layout_case layouts[] = {
    {"no GPUs", 0, 2, {0}},
    {"one GPU", 1, 2, {1}},
    {"one owner", 8, 1, {0, 0, 0, 0, 0, 0, 0, 0}},
    {"runs", 9, 3, {2, 2, 2, 0, 0, 1, 1, 1, 3}},
    {"owners come back", 10, 3, {1, 1, 3, 1, 1, 0, 3, 3, 1, 0}},
    {"every GPU its own", 6, 5, {5, 4, 3, 2, 1, 0}},
};

static void a_layout(void **state) {
  const layout_case *c = *state;
  double power[12];
  for (uint32_t i = 0; i < 12; i++) /* rounding in every sum */
    power[i] = 700.0 / (i + 3) + 1e-7 * i;
  check(c->owner, power, c->n, c->nowners);
}

/* Random fleets: owners in runs of random length (a replica's GPUs, a
 * rack's free ones) that come back later, powers of mixed magnitudes. */
static void random_fleets(void **state) {
  (void)state;
  static uint32_t owner[MAX_GPUS];
  static double power[MAX_GPUS];
  srand(24);
  for (int fleet = 0; fleet < 200; fleet++) {
    uint32_t n = (uint32_t)(rand() % MAX_GPUS);
    uint32_t nowners = 1 + (uint32_t)(rand() % MAX_OWNERS);
    for (uint32_t i = 0; i < n;) {
      uint32_t o = (uint32_t)(rand() % (int)(nowners + 1));
      uint32_t run = 1 + (uint32_t)(rand() % 72);
      for (; run > 0 && i < n; run--, i++) {
        owner[i] = o;
        power[i] = (double)rand() / RAND_MAX * (rand() % 2 ? 1200 : 1e-3);
      }
    }
    check(owner, power, n, nowners);
  }
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, a_layout, layouts);
  TEST_ADD(tests, n, random_fleets);
  return _cmocka_run_group_tests("owner_sums", tests, n, NULL, NULL);
}
