/* test_control.c - power control: the allocation-failure tests of
 * control_create and of a control period whose policy builds more units
 * than the unit arrays hold, on an engine and a fleet on a failing
 * allocator; the static split's budgets against the GPUs' caps; the
 * clocks of a period ending taken under its caps, before a new split. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"
#include "control.h"
#include "test_catalogs.h"

#define NGPUS (3 * 72)

/* The factory's side: everything fits, every GPU is its own workload
 * slot, so an allocation builds one unit per GPU. */
static uint32_t slots[NGPUS];

static bool fits(void *ctx, const rack_fleet *f, const double *caps) {
  (void)ctx;
  (void)f;
  (void)caps;
  return true;
}
static void drive(void *ctx, sim_time now) {
  (void)ctx;
  (void)now;
}
static int power(void *ctx, sim_time now, double *facility_w) {
  (void)ctx;
  (void)now;
  *facility_w = 0;
  return SIM_OK;
}
static const uint32_t *gpu_slots(void *ctx) {
  (void)ctx;
  return slots;
}
static void slot_units(void *ctx, const uint32_t *key, size_t n,
                       power_unit *u) {
  (void)ctx;
  for (size_t j = 0; j < n; j++) {
    if (key[j] == CONTROL_NO_SLOT)
      continue;
    u[j].cls = POWER_INFERENCE;
    u[j].priority = 0;
    u[j].weight = 1 + key[j] % 3;
    u[j].c = 0.5;
  }
}
static void request_counts(void *ctx, uint64_t *done, uint64_t *met) {
  (void)ctx;
  *done = *met = 0;
}

static const control_hooks hooks = {NULL,      fits,      drive,
                                    power,     gpu_slots, slot_units,
                                    request_counts, NULL,      NULL};

static const power_config cfg = {.cap_w = 1e6,
                                 .policy = POWER_PROPORTIONAL,
                                 .allocation_period_s = 0,
                                 .budget = BUDGET_RESERVE};

typedef struct control_rig {
  const sim_allocator *a;
  sim_engine *e;
  rack_fleet *fl;
  control *c;
} control_rig;

static void drop_rig(void *obj) {
  control_rig *r = obj;
  if (r == NULL)
    return;
  control_destroy(r->c);
  rack_fleet_destroy(r->fl);
  sim_engine_destroy(r->e);
  sim_free(r->a, r);
}

static void *make_rig(const sim_allocator *a, void *ctx, sim_error *err) {
  (void)ctx;
  rack_group_spec g = {"nvl",      gpu_catalog_find(&cats.gpu, "GB200"),
                       NGPUS / 72, 72,
                       132000,     16800,
                       33600,      NULL,
                       0,          NAN,
                       NULL,       0,
                       false,      0};
  control_rig *r = sim_calloc(a, 1, sizeof *r);
  if (r == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  r->a = a;
  if ((r->e = sim_engine_create(a)) == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    drop_rig(r);
    return NULL;
  }
  if ((r->fl = rack_fleet_create(&g, 1, a, err)) == NULL ||
      (r->c = control_create(&cfg, r->fl, r->e, &hooks, err)) == NULL) {
    drop_rig(r);
    return NULL;
  }
  return r;
}

static void create_allocation_failures(void **state) {
  (void)state;
  assert_true(test_alloc_failures("control_create", make_rig, drop_rig, NULL) >
              3);
}

/* A period after the split: each allocation it makes (the unit arrays
 * growing from empty to one unit per GPU) refused in turn must fail the
 * period with SIM_ENOMEM and leave nothing behind. */
static void period_allocation_failures(void **state) {
  (void)state;
  for (uint32_t i = 0; i < NGPUS; i++)
    slots[i] = i;
  const control_view v = {.cap_w = cfg.cap_w, .recap = true};
  long refused = 0;
  for (long k = 1;; k++) {
    test_alloc t;
    test_alloc_init(&t, 0);
    sim_error err = {0};
    control_rig *r = make_rig(&t.hook, NULL, &err);
    if (r == NULL)
      fail_msg("%s", err.msg);
    if (control_split(r->c, &err) != SIM_OK)
      fail_msg("%s", err.msg);
    t.fail_at = t.calls + k;
    int rc = control_period(r->c, &v, 0);
    bool hit = t.calls >= t.fail_at;
    drop_rig(r);
    if (t.live != 0)
      fail_msg("allocation %ld of the period refused: %ld blocks left", k,
               t.live);
    if (!hit) {
      assert_int_equal(rc, SIM_OK);
      break;
    }
    if (rc != SIM_ENOMEM)
      fail_msg("allocation %ld of the period refused: %s, not SIM_ENOMEM", k,
               sim_err_name(rc));
    refused++;
  }
  print_message("%ld allocations in the period, each refused in turn\n",
                refused);
  assert_true(refused >= 3); /* the three unit arrays, at least */
}

/* The static split's budgets (control__group_budget) against each
 * group's caps added GPU by GPU, rack by rack, over its usable racks: with
 * the fleet's runs fresh (the split's cap a group written to the runs:
 * added at once, control.c's budgets_at_one_cap) and without them, at a
 * fit whose caps take every bit of a double (an add rounds), with a rack
 * in emergency or dark in either group. */
typedef struct budget_row {
  const char *name;
  bool runs;
  double fit_w;        /* the GPUs' caps in all */
  int emergency, dark; /* a rack's index, or -1 */
} budget_row;

static const budget_row budget_rows[] = {
    {"budgets: runs, every rack", true, 301234.567, -1, -1},
    {"budgets: runs, an emergency and a dark rack", true, 287654.321, 1, 3},
    {"budgets: runs, a group's only other rack dark", true, 293456.789, -1, 4},
    {"budgets: the GPUs', every rack", false, 301234.567, -1, -1},
    {"budgets: the GPUs', an emergency and a dark rack", false, 287654.321, 1,
     3},
};

static bool fits_total(void *ctx, const rack_fleet *f, const double *caps) {
  return rack_fleet_gpu_total(f, caps) <= *(const double *)ctx;
}

/* Three GB200 racks (group 0), then two H100 racks (group 1). */
static rack_fleet *budget_fleet(void) {
  const gpu_spec *gb = gpu_catalog_find(&cats.gpu, "GB200");
  const gpu_spec *h = gpu_catalog_find(&cats.gpu, "H100-SXM");
  assert_non_null(gb);
  assert_non_null(h);
  rack_group_spec g[2] = {{.name = "nvl",
                           .gpu = gb,
                           .count = 3,
                           .gpus_per_rack = 72,
                           .limit_w = 132000,
                           .other_idle_w = 16800,
                           .other_max_w = 33600,
                           .r_th = NAN}};
  g[1] = g[0];
  g[1].name = "h100";
  g[1].gpu = h;
  g[1].count = 2;
  sim_error err = {0};
  rack_fleet *fl = rack_fleet_create(g, 2, NULL, &err);
  if (fl == NULL)
    fail_msg("%s", err.msg);
  return fl;
}

static void budgets_are_the_gpus_caps(void **state) {
  const budget_row *row = *state;
  rack_fleet *fl = budget_fleet();
  sim_engine *e = sim_engine_create(NULL);
  assert_non_null(e);
  control_hooks h = hooks;
  h.ctx = (void *)&row->fit_w;
  h.fits = fits_total;
  sim_error err = {0};
  control *c = control_create(&cfg, fl, e, &h, &err);
  assert_non_null(c);
  if (row->runs) { /* keyed a run a 9 GPUs, loads alike within it */
    assert_int_equal(rack_fleet_keep_units(fl), SIM_OK);
    for (uint32_t i = 0; i < fl->n; i++) {
      double a = 0.2 + 0.1 * (i / 9 % 7);
      rack_set_unit_key(fl, i, 1 + i / 9);
      rack_set_load(fl, i, (gpu_load){a, a / 2, a});
    }
    rack_fleet_update(fl, NULL);
    assert_true(rack_fleet_runs_fresh(fl));
  }
  if (row->emergency >= 0)
    fl->emergency[row->emergency] = true;
  if (row->dark >= 0)
    fl->dark[row->dark] = true;
  if (control_split(c, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  assert_true(fl->caps_unfilled == row->runs);
  double got[2] = {control__group_budget(c, 0), control__group_budget(c, 1)};
  double want[2] = {0, 0};
  rack_fleet_gpu_caps(fl);
  for (uint32_t r = 0; r < fl->nracks; r++)
    for (uint32_t i = fl->first[r];
         rack_fleet_rack_usable(fl, r) && i < fl->first[r] + fl->count[r]; i++)
      want[fl->group[r]] += fl->cap_w[i];
  for (int g = 0; g < 2; g++)
    if (!sim_same_bits(got[g], want[g]))
      fail_msg("group %d: %.17g W, GPU by GPU %.17g W", g, got[g], want[g]);
  assert_true(want[0] != 72.0 * 3 * fl->cap_w[0] || row->emergency >= 0);
  control_destroy(c);
  rack_fleet_destroy(fl);
  sim_engine_destroy(e);
}

/* What a recap period's hooks see of GPU 1's cap (clocks_see_the_caps_in_force). */
typedef struct seen_caps {
  double fit_w; /* fits_total's budget */
  rack_fleet *fl;
  double at_clocks, at_drive;
  uint32_t slot[5 * 72]; /* budget_fleet's GPUs: each its own slot */
} seen_caps;

static const uint32_t *seen_slots(void *ctx) {
  return ((seen_caps *)ctx)->slot;
}

static double gpu1_cap(rack_fleet *fl) {
  rack_fleet_gpu_caps(fl);
  return fl->cap_w[1];
}
static void record_clocks(void *ctx) {
  seen_caps *s = ctx;
  s->at_clocks = gpu1_cap(s->fl);
}
static void record_drive(void *ctx, sim_time now) {
  (void)now;
  seen_caps *s = ctx;
  s->at_drive = gpu1_cap(s->fl);
}

/* A period whose cap changed splits again before the workloads' drive,
 * but the clocks of the period ending are the clocks under the caps that
 * were in force over it: the policy's last caps, not the new split's
 * (a GPU of weight 2 gets more than the split's even share under the
 * proportional policy, so the two differ). */
static void clocks_see_the_caps_in_force(void **state) {
  (void)state;
  rack_fleet *fl = budget_fleet();
  sim_engine *e = sim_engine_create(NULL);
  assert_non_null(e);
  seen_caps seen = {.fit_w = 500000, .fl = fl};
  assert_int_equal(fl->n, sizeof seen.slot / sizeof seen.slot[0]);
  for (uint32_t i = 0; i < fl->n; i++)
    seen.slot[i] = i;
  control_hooks h = hooks;
  h.ctx = &seen;
  h.fits = fits_total;
  h.gpu_slots = seen_slots;
  h.clocks = record_clocks;
  h.drive = record_drive;
  sim_error err = {0};
  control *c = control_create(&cfg, fl, e, &h, &err);
  assert_non_null(c);
  control_view v = {.cap_w = 1e6, .limit_w = 1e6, .recap = true,
                    .dr_window_s = NAN};
  assert_int_equal(control_period(c, &v, 0), SIM_OK);
  double in_force = gpu1_cap(fl);
  seen.fit_w = 400000; /* the cap falls: the split's caps move */
  assert_int_equal(control_period(c, &v, SIM_SEC), SIM_OK);
  assert_true(sim_same_bits(seen.at_clocks, in_force));
  assert_true(seen.at_drive != in_force);
  control_destroy(c);
  rack_fleet_destroy(fl);
  sim_engine_destroy(e);
}

int main(void) {
  struct CMUnitTest tests[12];
  size_t n = 0;
  TEST_ADD(tests, n, create_allocation_failures);
  TEST_ADD(tests, n, period_allocation_failures);
  TEST_ROWS(tests, n, budgets_are_the_gpus_caps, budget_rows);
  TEST_ADD(tests, n, clocks_see_the_caps_in_force);
  return _cmocka_run_group_tests("control", tests, n, test_catalogs_load_gpu,
                                 test_catalogs_release);
}
