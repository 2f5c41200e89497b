/* test_control_units_caps.c - the policy's caps written back to a keyed
 * fleet's runs (control_units.c): a stretch of runs of successive units
 * at a time (a copy of 256 caps at most), each run's cap its unit's and a
 * dark rack's runs keeping theirs; and which racks control takes as
 * direct (their runs its units one to one, in order, so that a run's
 * load share reads its unit without run_unit), for every layout of a
 * table in every rack of three, next to every other. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>

#include "bits.h"
#include "control_units.h"
#include "test_catalogs.h"

#define BIG_RACKS 12
#define BIG_GPUS (BIG_RACKS * 72)

static void no_worth(void *ctx, const uint32_t *key, size_t n, power_unit *u) {
  (void)ctx, (void)key, (void)n, (void)u;
}

/* Twelve GB200 racks, every GPU its own slot and run (so each run is a
 * unit's, units and runs in one order: stretches longer than a copy, 256
 * caps), rack dark (none: BIG_RACKS), built and refreshed, the units'
 * caps set where control__units_caps_to says and written once a run. */
static void caps_by_stretch(rack_fleet *fl, uint32_t dark, uint32_t *slot) {
  control_units cu;
  assert_int_equal(control__units_init(&cu, fl, NULL), SIM_OK);
  for (uint32_t i = 0; i < BIG_GPUS; i++)
    fl->run_cap_w[fl->gpu_run[i]] = -1;     /* a dark rack's stay so */
  for (int again = 0; again < 2; again++) { /* built, then refreshed */
    assert_int_equal(control__units_build(&cu, fl, slot, NULL, no_worth, NULL),
                     SIM_OK);
    assert_int_equal(control__units_map_runs(&cu, fl), SIM_OK);
    double *to = control__units_caps_to(&cu, fl); /* runs': none dark first */
    assert_true(to == (dark >= BIG_RACKS - 1 ? fl->run_cap_w : cu.cap));
    for (size_t u = 0; u < cu.n; u++)
      to[u] = 500 + (double)u / 8 + again;
    control__units_write_caps(&cu, fl, to);
    assert_true(fl->caps_unfilled);
    for (uint32_t i = 0, u = 0; i < BIG_GPUS; i++) { /* a GPU a unit */
      double want = i / 72 == dark ? -1 : 500 + (double)u++ / 8 + again;
      if (!sim_same_bits(fl->run_cap_w[fl->gpu_run[i]], want))
        fail_msg("dark %u: GPU %u's run's cap %.17g W, its unit's %.17g W",
                 dark, i, fl->run_cap_w[fl->gpu_run[i]], want);
    }
  }
  control__units_fini(&cu);
}

/* The caps of a keyed fleet's runs, written a stretch of runs of
 * successive units at a time (a copy of 256 caps at most), are each
 * run's unit's, and a dark rack's runs keep theirs: with no rack dark
 * (one stretch of 864), the first, one inside and the last. */
static void caps_copied_a_stretch_at_a_time(void **state) {
  (void)state;
  const gpu_spec *gb = gpu_catalog_find(&cats.gpu, "GB200");
  assert_non_null(gb);
  rack_group_spec g = {.name = "nvl",
                       .gpu = gb,
                       .count = BIG_RACKS,
                       .gpus_per_rack = 72,
                       .limit_w = 132000,
                       .other_idle_w = 16800,
                       .other_max_w = 33600,
                       .r_th = NAN};
  static uint32_t slot[BIG_GPUS];
  const uint32_t darks[] = {BIG_RACKS, 0, 5, BIG_RACKS - 1};
  for (size_t d = 0; d < sizeof darks / sizeof *darks; d++) {
    sim_error err = {0};
    rack_fleet *fl = rack_fleet_create(&g, 1, NULL, &err);
    assert_non_null(fl);
    assert_int_equal(rack_fleet_keep_units(fl), SIM_OK);
    for (uint32_t i = 0; i < BIG_GPUS; i++) {
      slot[i] = i;
      rack_set_unit_key(fl, i, i + 1);
      rack_set_load(fl, i, (gpu_load){0.5, 0.25, 0.6});
    }
    for (uint32_t r = 0; r < BIG_RACKS; r++)
      fl->dark[r] = r == darks[d];
    rack_fleet_update(fl, NULL);
    assert_true(rack_fleet_runs_fresh(fl));
    assert_int_equal(fl->nruns, BIG_GPUS);
    caps_by_stretch(fl, darks[d], slot);
    rack_fleet_destroy(fl);
  }
}

/* A rack layout for racks_direct_as_their_runs: each GPU's slot and load
 * by its place i in the rack. */
typedef struct rack_layout {
  const char *what;
  uint32_t (*slot)(uint32_t i);
  double (*load)(uint32_t i);
  bool dark, direct; /* the rack dark; its runs its units one to one */
} rack_layout;

static uint32_t own_slot(uint32_t i) { return i; }
static uint32_t two_slots(uint32_t i) { return i % 2; }
static uint32_t blocks_of_8(uint32_t i) { return i / 8; }
static uint32_t half_free(uint32_t i) {
  return i < 36 ? 0 : CONTROL_UNITS_FREE;
}
static double one_load(uint32_t i) { return 0.5 + 0 * i; }
static double two_loads(uint32_t i) { return i % 8 < 4 ? 0.5 : 0.25; }

static const rack_layout layouts[] = {
    {"a GPU a slot", own_slot, one_load, false, true},
    {"two slots by turns", two_slots, one_load, false, false},
    {"blocks of 8", blocks_of_8, one_load, false, true},
    {"blocks of 8, two loads each", blocks_of_8, two_loads, false, false},
    {"a slot and the free GPUs", half_free, one_load, false, true},
    {"a GPU a slot, dark", own_slot, one_load, true, false},
};

/* Three GB200 racks laid out as l[0], l[1], l[2] (a slot + 1 its key; a
 * rack's slots its own), built and mapped: each rack's rack_direct, and
 * rack_joins where it and the rack before are direct. */
static void check_direct(const rack_layout *const l[3]) {
  const gpu_spec *gb = gpu_catalog_find(&cats.gpu, "GB200");
  rack_group_spec g = {.name = "nvl",
                       .gpu = gb,
                       .count = 3,
                       .gpus_per_rack = 72,
                       .limit_w = 132000,
                       .other_idle_w = 16800,
                       .other_max_w = 33600,
                       .r_th = NAN};
  static uint32_t slot[3 * 72];
  sim_error err = {0};
  rack_fleet *fl = rack_fleet_create(&g, 1, NULL, &err);
  assert_non_null(fl);
  assert_int_equal(rack_fleet_keep_units(fl), SIM_OK);
  for (uint32_t i = 0; i < 3 * 72; i++) {
    uint32_t s = l[i / 72]->slot(i % 72);
    slot[i] = s == CONTROL_UNITS_FREE ? s : s + 100 * (i / 72);
    rack_set_unit_key(fl, i, s == CONTROL_UNITS_FREE ? 0 : slot[i] + 1);
    double a = l[i / 72]->load(i % 72);
    rack_set_load(fl, i, (gpu_load){a, a / 2, a});
  }
  for (uint32_t r = 0; r < 3; r++)
    fl->dark[r] = l[r]->dark;
  rack_fleet_update(fl, NULL);
  control_units cu;
  assert_int_equal(control__units_init(&cu, fl, NULL), SIM_OK);
  assert_int_equal(control__units_build(&cu, fl, slot, NULL, no_worth, NULL),
                   SIM_OK);
  assert_int_equal(control__units_map_runs(&cu, fl), SIM_OK);
  for (uint32_t r = 0; r < 3; r++) {
    if (cu.rack_direct[r] != l[r]->direct)
      fail_msg("%s in rack %u: direct %d", l[r]->what, r, cu.rack_direct[r]);
    bool joins = r > 0 && l[r - 1]->direct && l[r]->direct; /* one type */
    if ((cu.rack_joins[r] != 0) != joins)
      fail_msg("%s in rack %u: joins %d", l[r]->what, r, cu.rack_joins[r]);
  }
  control__units_fini(&cu);
  rack_fleet_destroy(fl);
}

/* Whether a rack's runs are its units one to one, in order (control's
 * load shares then read a run's unit without run_unit), for every
 * layout in every rack of three, next to every other. */
static void racks_direct_as_their_runs(void **state) {
  (void)state;
  size_t n = sizeof layouts / sizeof *layouts;
  for (size_t a = 0; a < n; a++)
    for (size_t b = 0; b < n; b++) {
      const rack_layout *l[3] = {&layouts[a], &layouts[b], &layouts[a]};
      check_direct(l);
    }
}

int main(void) {
  struct CMUnitTest tests[2];
  size_t n = 0;
  TEST_ADD(tests, n, caps_copied_a_stretch_at_a_time);
  TEST_ADD(tests, n, racks_direct_as_their_runs);
  return _cmocka_run_group_tests("control_units_caps", tests, n,
                                 test_catalogs_load_gpu, test_catalogs_release);
}
