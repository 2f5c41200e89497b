/* test_owner_sums.c - the books' per-GPU pass (work__owner_sums), the
 * same by the fleet's runs, and a slot's clock by runs: every
 * owner's sum the same bits as `sum[owner[i]] += power[i]` GPU by GPU,
 * the loop it replaced, on a table of layouts (runs, owners that come
 * back, one GPU, none) and on random fleets; by stretches of one owner
 * with runs alike added at once, on a table of such runs. */
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "bits.h"
#include "lanes.h"
#include "test_catalogs.h"
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

/* The same owners as runs (lengths 1 to 3): the sums by stretches of one
 * owner (work__owner_stretches, work__owner_sums_stretches) against the
 * packed sums, to the bit; each stretch one owner's, the next another's,
 * ending where the runs do. */
static void check_stretches(const uint32_t *owner, const double *power,
                            uint32_t n, uint32_t nowners) {
  double len[12], want[MAX_OWNERS + 1], got[MAX_OWNERS + 1];
  uint32_t own[12], end[12];
  for (uint32_t i = 0; i < n; i++)
    len[i] = 1 + i % 3;
  for (uint32_t o = 0; o <= nowners; o++)
    want[o] = got[o] = o == 0 ? 0 : 1.0 / (o + 2);
  work__owner_sums_packed(want, owner, len, power, n);
  uint32_t ns = work__owner_stretches(owner, n, own, end);
  work__owner_sums_stretches(got, own, end, ns, len, power);
  assert_memory_equal(want, got, (nowners + 1) * sizeof *want);
  assert_int_equal(ns > 0 ? end[ns - 1] : 0, n);
  for (uint32_t k = 0; k < ns; k++)
    for (uint32_t q = k > 0 ? end[k - 1] : 0; q < end[k]; q++)
      assert_int_equal(owner[q], own[k]);
  for (uint32_t k = 1; k < ns; k++)
    assert_true(own[k] != own[k - 1] && end[k] > end[k - 1]);
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
  check_stretches(c->owner, power, c->n, c->nowners);
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

/* A stretch's runs in segments: count runs of one owner, each of len
 * GPUs at power p (the owner of the segment before may come back). */
typedef struct segment {
  uint32_t owner, count;
  double len, p;
} segment;

typedef struct alike_case {
  const char *name;
  segment seg[6];
} alike_case;

/* Runs alike (the same length and power) in stretches long and short
 * of the sixteen the lanes add at once (workloads_owners.c's
 * lane_alike), against the packed sums run by run, to the bit. */
static const alike_case alike_cases[] = {
    {"700 alike, 1,200 alike",
     {{0, 700, 4, 700.0 / 3}, {1, 1200, 1, 200.3}, {0}}},
    {"15 alike, then unlike",
     {{0, 15, 8, 700.0 / 3}, {0, 3, 8, 701.0 / 3}, {1, 20, 1, 9.1}, {0}}},
    {"16 alike, the least at once", {{1, 16, 8, 1e3 / 7}, {0, 1, 8, 1.5}, {0}}},
    {"139 alike, then 125", {{2, 139, 8, 1e3 / 7}, {2, 125, 8, 999.0 / 7}, {0}}},
    {"unlike first, then alike",
     {{0, 1, 8, 5.5}, {0, 100, 8, 1e3 / 7}, {1, 40, 2, 0.1}, {0}}},
    {"the length unlike, the power alike",
     {{0, 30, 8, 1e3 / 7}, {0, 30, 4, 1e3 / 7}, {0}}},
    {"owners by turns, alike each",
     {{0, 600, 4, 300.1}, {1, 300, 1, 1e-3 / 3}, {0, 20, 4, 300.1},
      {3, 50, 8, 77.7}, {2, 17, 1, 1e3 / 3}, {0}}},
};

/* Case c's runs with the run at place `odd` (if below n) at another
 * power, summed by stretches both ways, lanes wide and narrow. */
static void check_alike(const alike_case *c, uint32_t odd) {
  static uint32_t owner[MAX_GPUS], own[MAX_GPUS], end[MAX_GPUS];
  static double len[MAX_GPUS], power[MAX_GPUS];
  uint32_t n = 0;
  for (const segment *g = c->seg; g->count > 0; g++)
    for (uint32_t k = 0; k < g->count; k++, n++) {
      owner[n] = g->owner;
      len[n] = g->len;
      power[n] = n == odd ? g->p * 1.5 : g->p;
    }
  double want[5], got[5];
  for (int wide = 0; wide < 2; wide++) {
    for (uint32_t o = 0; o < 5; o++)
      want[o] = got[o] = o == 0 ? 0 : 1.0 / (o + 2);
    work__owner_sums_packed(want, owner, len, power, n);
    uint32_t ns = work__owner_stretches(owner, n, own, end);
    sim_lanes_narrow = !wide;
    work__owner_sums_stretches(got, own, end, ns, len, power);
    sim_lanes_narrow = false;
    for (uint32_t o = 0; o < 5; o++)
      if (!sim_same_bits(got[o], want[o]))
        fail_msg("%s, run %u unlike, %s: owner %u's sum %.17g, run by run "
                 "%.17g", c->name, odd, wide ? "wide" : "narrow", o, got[o],
                 want[o]);
  }
}

/* Each case as it is, and with one run unlike at every place of the
 * first 40 (a difference in each lane of an eight's compare, and past
 * the sixteen). */
static void alike_stretches(void **state) {
  const alike_case *c = *state;
  check_alike(c, MAX_GPUS);
  for (uint32_t odd = 0; odd < 40; odd++)
    check_alike(c, odd);
}

/* One group of 8 racks of 72 GPUs of a type, with units. */
typedef struct unit_fleet {
  rack_group_spec g;
  rack_fleet *f;
} unit_fleet;

static rack_fleet *unit_fleet_make(unit_fleet *u, const char *gpu) {
  sim_error err = {0};
  u->g = (rack_group_spec){"r", gpu_catalog_find(&cats.gpu, gpu), 8, 72, 1e9, 0,
                           0,   NULL, 0, NAN, NULL, 0, false, 0};
  u->f = rack_fleet_create(&u->g, 1, NULL, &err);
  assert_non_null(u->f);
  assert_int_equal(rack_fleet_keep_units(u->f), SIM_OK);
  return u->f;
}

static void unit_fleet_free(unit_fleet *u) {
  rack_fleet_destroy(u->f);
}

/* Slots' GPUs in runs of random length, a rack's free ones now and then:
 * an owner per slot (nowners: the free GPUs'), a load per run. */
static void owned_runs(rack_fleet *f, uint32_t *owner, uint32_t nowners) {
  for (uint32_t i = 0; i < f->n;) {
    uint32_t sl = 1 + (uint32_t)(rand() % 500), run = 1 + (uint32_t)(rand() % 9);
    bool free_gpus = rand() % 4 == 0;
    gpu_load l = gpu_load_level((double)rand() / RAND_MAX);
    for (; run > 0 && i < f->n; run--, i++) {
      rack_set_unit_key(f, i, free_gpus ? 0 : sl);
      owner[i] = free_gpus ? nowners : sl % nowners;
      rack_set_load(f, i, l);
    }
  }
}

/* The sums run by run (work__owner_sums_runs) on a fleet with units:
 * slots' GPUs in runs, an owner per slot, the powers the fleet's update
 * gives; against the per-GPU reference within a relative 1e-13 (k p for
 * a run against p added k times: the last bits differ); and the same
 * from the runs' owners and lengths made once (work__owner_sums_packed),
 * to the bit, and by stretches of one owner (work__owner_sums_stretches),
 * to the bit. */
static void sums_by_runs(void **state) {
  (void)state;
  static uint32_t owner[MAX_GPUS], run_owner[MAX_GPUS], own[MAX_GPUS],
      end[MAX_GPUS];
  static double run_len[MAX_GPUS];
  unit_fleet u;
  rack_fleet *f = unit_fleet_make(&u, "GB200");
  srand(25);
  for (int round = 0; round < 50; round++) {
    uint32_t nowners = 1 + (uint32_t)(rand() % MAX_OWNERS);
    owned_runs(f, owner, nowners);
    rack_fleet_update(f, NULL);
    assert_true(rack_fleet_runs_fresh(f) && f->nruns < f->n);
    double want[MAX_OWNERS + 1] = {0}, got[MAX_OWNERS + 1] = {0};
    double packed[MAX_OWNERS + 1] = {0};
    reference(want, owner, rack_fleet_gpu_power(f), f->n);
    work__owner_sums_runs(got, owner, f);
    for (uint32_t o = 0; o <= nowners; o++)
      assert_close(got[o], want[o], 1e-13, 0);
    work__runs_owners(f, owner, run_owner, run_len);
    work__owner_sums_packed(packed, run_owner, run_len, f->run_power_w,
                            f->nruns);
    assert_memory_equal(packed, got, (nowners + 1) * sizeof *got);
    double stretched[MAX_OWNERS + 1] = {0};
    uint32_t ns = work__owner_stretches(run_owner, f->nruns, own, end);
    work__owner_sums_stretches(stretched, own, end, ns, run_len,
                               f->run_power_w);
    assert_memory_equal(stretched, got, (nowners + 1) * sizeof *got);
  }
  unit_fleet_free(&u);
}

/* Keys, loads and caps in runs of random length, and thermal caps. */
static void keyed_runs(rack_fleet *f, const gpu_spec *g) {
  for (uint32_t i = 0; i < f->n;) {
    uint32_t sl = 1 + (uint32_t)(rand() % 50), run = 1 + (uint32_t)(rand() % 9);
    gpu_load l = {(double)rand() / RAND_MAX, (double)rand() / RAND_MAX, 1};
    double cap = g->cap_min_w + (double)rand() / RAND_MAX *
                                    (g->cap_max_w - g->cap_min_w);
    for (; run > 0 && i < f->n; run--, i++) {
      rack_set_unit_key(f, i, sl);
      rack_set_load(f, i, l);
      f->cap_w[i] = cap;
    }
  }
  for (uint32_t r = 0; r < f->nracks; r++)
    f->thermal_cap_w[r] = rand() % 2 ? INFINITY : 700;
}

/* A slot of random GPUs (stretches, some shuffled in): its clock from
 * its runs against the slowest of its GPUs', to the bit. */
static void check_slot_clock(const rack_fleet *f, rack_phi_last *last) {
  static uint32_t list[MAX_GPUS], runs[MAX_GPUS];
  uint32_t n = 1 + (uint32_t)(rand() % 64);
  uint32_t at = (uint32_t)(rand() % (int)(f->n - n));
  for (uint32_t k = 0; k < n; k++)
    list[k] = rand() % 5 == 0 ? (uint32_t)(rand() % (int)f->n) : at + k;
  double want = 1;
  for (uint32_t k = 0; k < n; k++) {
    double p = rack_gpu_phi(f, list[k]);
    want = p < want || isnan(want) ? p : want;
  }
  uint32_t m = work__slot_runs(f, list, n, runs);
  double got = work__runs_phi(f, runs, m, last);
  assert_memory_equal(&got, &want, sizeof got);
}

/* A slot's clock from its runs (work__slot_runs, then work__runs_phi,
 * as the tick takes it) is the minimum over its GPUs of rack_gpu_phi, to
 * the bit: slots of random GPUs (runs of
 * them, in any order, across racks), caps and loads per key. */
static void slot_clocks_by_runs(void **state) {
  (void)state;
  unit_fleet u;
  rack_fleet *f = unit_fleet_make(&u, "B200");
  srand(26);
  rack_phi_last last = {.type = RACK_PHI_NONE}; /* kept across rounds too */
  for (int round = 0; round < 50; round++) {
    keyed_runs(f, u.g.gpu);
    rack_fleet_update(f, NULL);
    assert_true(rack_fleet_runs_fresh(f));
    for (int slot_k = 0; slot_k < 20; slot_k++)
      check_slot_clock(f, &last);
  }
  unit_fleet_free(&u);
}

int main(void) {
  struct CMUnitTest tests[24];
  size_t n = 0;
  TEST_ROWS(tests, n, a_layout, layouts);
  TEST_ADD(tests, n, random_fleets);
  TEST_ROWS(tests, n, alike_stretches, alike_cases);
  TEST_ADD(tests, n, sums_by_runs);
  TEST_ADD(tests, n, slot_clocks_by_runs);
  return _cmocka_run_group_tests("owner_sums", tests, n,
                                 test_catalogs_load_gpu, test_catalogs_release);
}
