/* test_control_units_smooth.c - the policy's loads smoothed over control
 * periods (power.activity_smoothing; control_units_smooth.c): off (absent
 * or 0 s) every period's caps are those of a control made cold on that
 * period's loads, to the bit; on, a load that holds gives the caps of a
 * control without it, to the bit; a step in the load reaches 1 - 1/e of
 * its new value after one time constant, for any period; the budget a
 * predicted one hands the policy keeps the period's own loads (the racks'
 * other IT draws at them); and the key's bad values are refused at their
 * line and column. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"
#include "control.h"
#include "control_units.h"
#include "test_catalogs.h"

#define NGPUS 144 /* two racks of 72 */
#define PER 8     /* GPUs a slot */
#define NSLOTS 16 /* slots 0 .. 15 take GPUs 0 .. 127; the rest free */

typedef struct world {
  sim_engine *e;
  rack_fleet *fl;
  control *c;
  uint32_t slot[NGPUS];
  power_unit u[NGPUS]; /* the units and caps of the last allocation */
  uint32_t key[NGPUS];
  double cap[NGPUS];
  size_t n;
  double budget; /* what a client's split was handed (predict) */
} world;

static bool fits(void *ctx, const rack_fleet *f, const double *caps) {
  (void)ctx, (void)f;
  return caps[0] <= 700;
}
static void drive(void *ctx, sim_time now) { (void)ctx, (void)now; }
static int power(void *ctx, sim_time now, double *facility_w) {
  (void)ctx, (void)now;
  *facility_w = 0;
  return SIM_OK;
}
static const uint32_t *gpu_slots(void *ctx) { return ((world *)ctx)->slot; }
/* Whether the worlds made next have every slot's work worth the same:
 * units alike where their loads are. */
static bool same_worth;

static void slot_units(void *ctx, const uint32_t *key, size_t n,
                       power_unit *u) {
  (void)ctx;
  for (size_t j = 0; j < n; j++)
    if (key[j] != CONTROL_NO_SLOT) {
      u[j].cls = POWER_INFERENCE;
      u[j].weight = same_worth ? 1 : 1 + key[j] % 3;
      u[j].c = same_worth ? 0.5 : 0.25 + (key[j] % 4) / 8.0;
    }
}
static void request_counts(void *ctx, uint64_t *done, uint64_t *met) {
  (void)ctx;
  *done = *met = 0;
}
static void keep_split(void *ctx, const power_unit *units, const uint32_t *key,
                       size_t n, double *cap) {
  world *w = ctx;
  assert_true(n <= NGPUS);
  memcpy(w->u, units, n * sizeof *units);
  memcpy(w->key, key, n * sizeof *key);
  memcpy(w->cap, cap, n * sizeof *cap);
  w->n = n;
}
/* A client's split (predict): every unit at its floor, the budget kept. */
static int record_split(void *ctx, const power_unit *units, size_t n,
                        double budget_w, double *cap) {
  ((world *)ctx)->budget = budget_w;
  for (size_t k = 0; k < n; k++)
    cap[k] = units[k].lo;
  return SIM_OK;
}

static power_config config(double tau_s) {
  return (power_config){.cap_w = 1e6,
                        .policy = POWER_EFFICIENCY,
                        .budget = BUDGET_RESERVE,
                        .activity_smoothing_s = tau_s};
}

/* Two GB200 racks of 72, GPU k of slot k / PER; the units kept (a clamp
 * that lowers nothing). pc must outlive the world. */
static world *world_make_with(const power_config *pc, bool clamp) {
  const gpu_spec *gb = gpu_catalog_find(&cats.gpu, "GB200");
  assert_non_null(gb);
  rack_group_spec g = {.name = "nvl",
                       .gpu = gb,
                       .count = 2,
                       .gpus_per_rack = 72,
                       .limit_w = 132000,
                       .other_idle_w = 16800,
                       .other_max_w = 33600,
                       .r_th = NAN};
  sim_error err = {0};
  world *w = calloc(1, sizeof *w);
  assert_non_null(w);
  w->e = sim_engine_create(NULL);
  w->fl = rack_fleet_create(&g, 1, NULL, &err);
  assert_non_null(w->fl);
  for (uint32_t i = 0; i < NGPUS; i++)
    w->slot[i] = i / PER < NSLOTS ? i / PER : CONTROL_NO_SLOT;
  control_hooks h = {w,         fits,       drive,         power,
                     gpu_slots, slot_units, request_counts, NULL, NULL};
  w->c = control_create(pc, w->fl, w->e, &h, &err);
  assert_non_null(w->c);
  if (clamp)
    control_set_clamp(w->c, keep_split, w);
  return w;
}

static world *world_make(const power_config *pc) {
  return world_make_with(pc, true);
}

static void world_drop(world *w) {
  control_destroy(w->c);
  rack_fleet_destroy(w->fl);
  sim_engine_destroy(w->e);
  free(w);
}

/* Slot k's SM activity in period p: its own, moving period to period
 * where `moving` (a replica's noisy load), else held. */
static double load_of(uint32_t k, int p, bool moving) {
  int q = moving ? p : 0;
  return 0.15 + 0.7 * (double)((k * 37 + (uint32_t)q * 53) % 100) / 100.0;
}

static void set_loads(world *w, int p, bool moving) {
  for (uint32_t i = 0; i < NGPUS; i++) {
    double a = w->slot[i] == CONTROL_NO_SLOT ? 0.05
                                             : load_of(w->slot[i], p, moving);
    rack_set_load(w->fl, i, (gpu_load){a, a / 2, fmin(1, a + 0.1)});
  }
}

/* Period p (at p dt_s seconds) on w, its loads set. */
static void period(world *w, int p, double dt_s, bool moving) {
  set_loads(w, p, moving);
  control_view v = {.cap_w = 1e6, .recap = p == 0};
  sim_time now = (sim_time)llround(p * dt_s * 1e9);
  assert_int_equal(control_period(w->c, &v, now), SIM_OK);
}

static void assert_same_caps(const world *a, const world *b, const char *what,
                             int p) {
  assert_int_equal(a->n, b->n);
  for (size_t j = 0; j < a->n; j++)
    if (!sim_same_bits(a->cap[j], b->cap[j]) ||
        !sim_same_bits(a->u[j].activity, b->u[j].activity))
      fail_msg("%s, period %d: unit %zu's cap %.17g W, %.17g W (activity "
               "%.17g, %.17g)",
               what, p, j, a->cap[j], b->cap[j], a->u[j].activity,
               b->u[j].activity);
}

/* Off (NaN: the key absent; 0 s), a warm control's caps are each
 * period's cold ones: nothing of a period before is kept. */
static void off_keeps_no_past(void **state) {
  (void)state;
  const double offs[] = {NAN, 0};
  for (int o = 0; o < 2; o++) {
    power_config pc = config(offs[o]);
    world *warm = world_make(&pc);
    for (int p = 0; p < 6; p++) {
      period(warm, p, 1, true);
      world *cold = world_make(&pc);
      period(cold, 0, 1, false);
      set_loads(cold, p, true); /* period p's loads, cold */
      control_view v = {.cap_w = 1e6};
      assert_int_equal(control_period(cold->c, &v, 1000000000), SIM_OK);
      assert_same_caps(warm, cold, o == 0 ? "absent" : "0 s", p);
      world_drop(cold);
    }
    world_drop(warm);
  }
}

/* On, a load that holds gives the caps of a control without it. */
static void held_load_gives_unsmoothed_caps(void **state) {
  (void)state;
  power_config off = config(NAN), on = config(60);
  world *a = world_make(&off), *b = world_make(&on);
  for (int p = 0; p < 8; p++) {
    period(a, p, 1, false);
    period(b, p, 1, false);
    assert_same_caps(a, b, "held load", p);
  }
  world_drop(a);
  world_drop(b);
}

/* A step's time constant and period: the step reaches 1 - 1/e of the
 * way after tau / dt periods (an exponential mean of weight
 * 1 - exp(-dt / tau) a period: (1 - k)^(tau / dt) = 1/e exactly). */
typedef struct step_case {
  const char *name;
  double tau_s, dt_s;
} step_case;

static const step_case step_cases[] = {
    {"1 min in 1 s periods", 60, 1},
    {"10 s in 2 s periods", 10, 2},
    {"5 min in 10 s periods", 300, 10},
    {"one period", 1, 1},
};

/* Every slot's GPUs at load_of(k, q, true), held. */
static void set_step_loads(world *w, int q) {
  for (uint32_t i = 0; i < NGPUS; i++) {
    double a = w->slot[i] == CONTROL_NO_SLOT ? 0.05
                                             : load_of(w->slot[i], q, true);
    rack_set_load(w->fl, i, (gpu_load){a, a / 2, fmin(1, a + 0.1)});
  }
}

/* From period 0's loads to period 1's at 1 .. tau / dt: every unit's
 * activity then 1 - 1/e of the way (the share is linear in the load). */
static void step_reaches_one_time_constant(void **state) {
  const step_case *sc = *state;
  power_config pc = config(sc->tau_s);
  world *w = world_make(&pc);
  const gpu_spec *g = w->fl->types[0];
  period(w, 0, sc->dt_s, true);
  for (int p = 1, n = (int)llround(sc->tau_s / sc->dt_s); p <= n; p++) {
    set_step_loads(w, 1);
    control_view v = {.cap_w = 1e6};
    sim_time now = (sim_time)llround(p * sc->dt_s * 1e9);
    assert_int_equal(control_period(w->c, &v, now), SIM_OK);
  }
  const double f = 1 - exp(-1);
  for (size_t j = 0; j < w->n; j++) {
    uint32_t k = w->key[j];
    if (k == CONTROL_NO_SLOT)
      continue;
    double a0 = load_of(k, 0, true), a1 = load_of(k, 1, true);
    double a = a0 + f * (a1 - a0);
    double want = gpu_load_share(g, (gpu_load){a, a / 2, fmin(1, a + 0.1)});
    assert_close(w->u[j].activity, want, 1e-12, 1e-15);
  }
  world_drop(w);
}

/* Every slot at one load (held) after period 0's, unlike: the loads the
 * units are made from, smoothed, are alike only where they are the same
 * bits. A control that reads only each run's first unit (no clamp: the
 * units refreshed lazily, their marks of alike trusted) gives every GPU
 * the cap of one that reads them all. */
static void alike_where_smoothed_alike(void **state) {
  (void)state;
  power_config pc = config(20);
  same_worth = true;
  world *lazy = world_make_with(&pc, false), *full = world_make(&pc);
  same_worth = false;
  for (int p = 0; p < 5; p++) {
    world *w[2] = {lazy, full};
    for (int k = 0; k < 2; k++) {
      if (p == 0)
        set_loads(w[k], 0, true);
      else
        for (uint32_t i = 0; i < NGPUS; i++)
          rack_set_load(w[k]->fl, i, (gpu_load){0.5, 0.25, 0.6});
      control_view v = {.cap_w = 1e6, .recap = p == 0};
      assert_int_equal(
          control_period(w[k]->c, &v, (sim_time)p * 1000000000), SIM_OK);
    }
    for (uint32_t i = 0; i < NGPUS; i++)
      if (!sim_same_bits(lazy->fl->cap_w[i], full->fl->cap_w[i]))
        fail_msg("period %d: GPU %u's cap %.17g W lazy, %.17g W whole", p, i,
                 lazy->fl->cap_w[i], full->fl->cap_w[i]);
  }
  world_drop(lazy);
  world_drop(full);
}

/* A world with the fleet's runs (the request level's) whose predicted
 * budget a client's split records. */
static world *predict_world(const power_config *pc) {
  world *w = world_make(pc);
  assert_int_equal(rack_fleet_keep_units(w->fl), SIM_OK);
  control_set_split(w->c, record_split, w);
  return w;
}

/* Period p on a predict world: keyed by slot, statically split, the
 * runs made (control_units.c reads the units' loads from them). */
static void predict_period(world *w, int p) {
  rack_fleet *fl = w->fl;
  sim_error err = {0};
  set_loads(w, p, true);
  for (uint32_t i = 0; i < NGPUS; i++)
    rack_set_unit_key(fl, i,
                      w->slot[i] == CONTROL_NO_SLOT ? 0 : w->slot[i] + 1);
  if (rack_fleet_split(fl, fits, w, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  rack_fleet_gpu_caps(fl);
  rack_fleet_update(fl, NULL);
  assert_true(rack_fleet_runs_fresh(fl));
  control_view v = {.cap_w = 1e6,
                    .limit_w = 1e6,
                    .recap = true,
                    .facility_w = 3e5,
                    .it_w = 2.5e5,
                    .psu_loss_w = 1e4};
  assert_int_equal(control_period(w->c, &v, (sim_time)p * 1000000000),
                   SIM_OK);
}

/* The predicted budget subtracts the racks' other IT at the period's own
 * loads: smoothed or not, the same bits, while the loads move. */
static void predicted_budget_keeps_the_period_loads(void **state) {
  (void)state;
  power_config off = config(NAN), on = config(30);
  off.budget = on.budget = BUDGET_PREDICT;
  off.budget_margin = on.budget_margin = 0.05;
  world *a = predict_world(&off), *b = predict_world(&on);
  for (int p = 0; p < 6; p++) {
    predict_period(a, p);
    predict_period(b, p);
    if (!sim_same_bits(a->budget, b->budget))
      fail_msg("period %d: the budget %.17g W without smoothing, %.17g W "
               "with it",
               p, a->budget, b->budget);
  }
  world_drop(a);
  world_drop(b);
}

/* The key's bad values, at their line and column. */
#define POWER_HEAD "cap: 1 MW\npolicy: efficiency\n"

static const test_bad_yaml bad_cases[] = {
    {"negative", POWER_HEAD "activity_smoothing: -1 min\n",
     "power.yaml:3:21: 'activity_smoothing' is -1 min; it must be between 0 s"},
    {"not a duration", POWER_HEAD "activity_smoothing: 5 kW\n",
     "power.yaml:3:23: 'activity_smoothing': 'kW' is a unit of power"},
    {"no unit", POWER_HEAD "activity_smoothing: soon\n",
     "power.yaml:3:21: 'activity_smoothing'"},
    {"over a day", POWER_HEAD "activity_smoothing: 2 d\n",
     "power.yaml:3:21: 'activity_smoothing'"},
};

static void bad_key_is_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&control_power_schema, "power.yaml", b->yaml,
                      b->message);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ADD(tests, n, off_keeps_no_past);
  TEST_ADD(tests, n, held_load_gives_unsmoothed_caps);
  TEST_ROWS(tests, n, step_reaches_one_time_constant, step_cases);
  TEST_ADD(tests, n, alike_where_smoothed_alike);
  TEST_ADD(tests, n, predicted_budget_keeps_the_period_loads);
  TEST_ROWS(tests, n, bad_key_is_rejected, bad_cases);
  return _cmocka_run_group_tests("control_units_smooth", tests, n,
                                 test_catalogs_load, test_catalogs_release);
}
