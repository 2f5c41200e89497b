/* test_control.c - power control: the allocation-failure tests of
 * control_create and of a control period whose policy builds more units
 * than the unit arrays hold, on an engine and a fleet on a failing
 * allocator. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
                                    request_counts, NULL};

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

int main(void) {
  struct CMUnitTest tests[4];
  size_t n = 0;
  TEST_ADD(tests, n, create_allocation_failures);
  TEST_ADD(tests, n, period_allocation_failures);
  return _cmocka_run_group_tests("control", tests, n, test_catalogs_load_gpu,
                                 test_catalogs_release);
}
